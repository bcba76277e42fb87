//! Whether Codex CLI runs the memlog hooks of a `hooks.json` (checked
//! against 0.169.0, where an untrusted hook is skipped without a word).
//!
//! Codex runs a hook only once the user trusted it (`/hooks` in Codex) and,
//! for a project's hooks, the project itself. Both are kept in
//! `$CODEX_HOME/config.toml`:
//!
//! - `[projects."<folder>"]` `trust_level = "trusted"`;
//! - `[hooks.state."<hooks.json>:<event>:<group>:<handler>"]`
//!   `trusted_hash = "sha256:<hex>"` (and `enabled`), where `<hooks.json>`
//!   is the file's absolute path, `<event>` the event in snake case, and
//!   the indexes place the handler in the event's groups; the hash is the
//!   SHA-256 of the hook's identity as compact JSON with sorted keys:
//!   `{"event_name", "hooks": [{"async", "command", "timeout", "type"}],
//!   "matcher"}` (no matcher for `user_prompt_submit` and `stop`). A hook
//!   whose definition changed no longer matches its hash: Codex asks again.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use memlog_format::canonical;
use serde_json::{Map, Value, json};

use crate::HookTrust;
use crate::settings::is_memlog_command;

/// What the user does to have Codex run the hooks.
const HOW: &str = "open Codex in the project and trust memlog's hooks in /hooks (Codex skips a new or changed hook, silently, until then); a script that vetted them may run `codex exec --dangerously-bypass-hook-trust`";

/// Whether Codex, whose configuration is `config` (`config.toml`), runs
/// the memlog hooks of `hooks_file`, a project's when `work_tree` holds it.
pub fn hook_trust(hooks_file: &Path, work_tree: Option<&Path>, config: &Path) -> Option<HookTrust> {
    let settings: Value = serde_json::from_str(&std::fs::read_to_string(hooks_file).ok()?).ok()?;
    let file = std::fs::canonicalize(hooks_file).unwrap_or_else(|_| hooks_file.to_path_buf());
    let entries = memlog_entries(&settings, &file);
    if entries.is_empty() {
        return None;
    }
    let tables = Tables::parse(&std::fs::read_to_string(config).unwrap_or_default());
    let mut untrusted = Vec::new();
    let project = work_tree.filter(|root| hooks_file.starts_with(root));
    if let Some(root) = project {
        let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        let trusted = [root.as_path(), project.unwrap_or(&root)].iter().any(|r| {
            tables.value(&["projects", &r.display().to_string()], "trust_level") == Some("trusted")
        });
        if !trusted {
            untrusted.push("project".to_string());
        }
    }
    for entry in &entries {
        let state = ["hooks", "state", entry.key.as_str()];
        let enabled = tables.value(&state, "enabled") != Some("false");
        if !enabled || tables.value(&state, "trusted_hash") != Some(entry.hash.as_str()) {
            untrusted.push(entry.event.clone());
        }
    }
    Some(HookTrust {
        hooks: entries.len(),
        untrusted,
        store: config.to_path_buf(),
        how: HOW.to_string(),
        entries: entries.into_iter().map(|e| (e.key, e.hash)).collect(),
    })
}

/// One memlog hook of a `hooks.json`: its event, trust key and hash.
struct Entry {
    event: String,
    key: String,
    hash: String,
}

/// The memlog hooks of a `hooks.json` (`file`, absolute).
fn memlog_entries(settings: &Value, file: &Path) -> Vec<Entry> {
    let mut entries = Vec::new();
    let Some(events) = settings.get("hooks").and_then(Value::as_object) else {
        return entries;
    };
    for (event, groups) in events {
        let label = snake_case(event);
        for (g, group) in groups.as_array().into_iter().flatten().enumerate() {
            let handlers = group.get("hooks").and_then(Value::as_array);
            for (h, handler) in handlers.into_iter().flatten().enumerate() {
                let command = handler.get("command").and_then(Value::as_str);
                if !command.is_some_and(is_memlog_command) {
                    continue;
                }
                entries.push(Entry {
                    event: event.clone(),
                    key: format!("{}:{label}:{g}:{h}", file.display()),
                    hash: identity_hash(&label, group, handler),
                });
            }
        }
    }
    entries
}

/// `UserPromptSubmit` → `user_prompt_submit`.
fn snake_case(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.extend(c.to_lowercase());
    }
    out
}

/// The hash Codex trusts a hook by (see the module docs).
fn identity_hash(label: &str, group: &Value, handler: &Value) -> String {
    let mut hook = Map::new();
    hook.insert(
        "async".into(),
        Value::Bool(
            handler
                .get("async")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        ),
    );
    hook.insert(
        "command".into(),
        handler.get("command").cloned().unwrap_or(Value::Null),
    );
    if let Some(message) = handler.get("statusMessage") {
        hook.insert("statusMessage".into(), message.clone());
    }
    let timeout = handler
        .get("timeout")
        .and_then(Value::as_u64)
        .unwrap_or(600);
    hook.insert("timeout".into(), Value::from(timeout.max(1)));
    hook.insert("type".into(), Value::String("command".into()));
    let mut identity = json!({ "event_name": label, "hooks": [hook] });
    if !matches!(label, "user_prompt_submit" | "stop")
        && let Some(matcher) = group.get("matcher").filter(|m| m.is_string())
    {
        identity["matcher"] = matcher.clone();
    }
    format!(
        "sha256:{}",
        crate::sha256::hex(canonical::to_string(&identity).as_bytes())
    )
}

/// The key-value pairs of a TOML file by table, read only as far as
/// Codex's trust needs: `[a."b c"]` headers, `key = value` lines (dotted
/// keys and one-line inline tables too), basic and literal strings.
#[derive(Default)]
struct Tables {
    /// Raw values (strings unquoted) by table path and key.
    values: HashMap<Vec<String>, HashMap<String, String>>,
}

impl Tables {
    fn parse(text: &str) -> Tables {
        let mut tables = Tables::default();
        let mut current: Vec<String> = Vec::new();
        for line in text.lines().map(str::trim) {
            if line.starts_with("[[") {
                current = vec!["[[array]]".into()];
            } else if let Some(header) = line.strip_prefix('[') {
                current = keys(header.trim_end().trim_end_matches(']'));
            } else if let Some((key, value)) = split_pair(line) {
                tables.insert(&current, keys(key), value);
            }
        }
        tables
    }

    fn insert(&mut self, table: &[String], mut path: Vec<String>, value: &str) {
        let mut full = table.to_vec();
        let Some(key) = path.pop() else {
            return;
        };
        full.extend(path);
        if let Some(inner) = value.strip_prefix('{').and_then(|v| v.strip_suffix('}')) {
            full.push(key);
            for pair in inner.split(',') {
                if let Some((k, v)) = split_pair(pair.trim()) {
                    self.insert(&full, keys(k), v);
                }
            }
            return;
        }
        self.values
            .entry(full)
            .or_default()
            .insert(key, unquote(value));
    }

    /// A value as written (strings unquoted).
    fn value(&self, table: &[&str], key: &str) -> Option<&str> {
        let table: Vec<String> = table.iter().map(|s| s.to_string()).collect();
        self.values.get(&table)?.get(key).map(String::as_str)
    }
}

/// `key = value` (the value without a trailing comment).
fn split_pair(line: &str) -> Option<(&str, &str)> {
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    // The `=` outside quotes.
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (Some('"'), '\\') if !escaped => {
                escaped = true;
                continue;
            }
            (Some(q), c) if c == q && !escaped => quote = None,
            (None, '"' | '\'') => quote = Some(c),
            (None, '=') => return Some((line[..i].trim(), line[i + 1..].trim())),
            _ => {}
        }
        escaped = false;
    }
    None
}

/// The parts of a dotted key: `hooks.state."a.b"` → `hooks`, `state`, `a.b`.
fn keys(dotted: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = dotted.trim();
    while !rest.is_empty() {
        let (part, after) = if let Some(quoted) = rest.strip_prefix('"') {
            let end = closing_quote(quoted).unwrap_or(quoted.len());
            (
                unescape(&quoted[..end]),
                quoted.get(end + 1..).unwrap_or(""),
            )
        } else if let Some(literal) = rest.strip_prefix('\'') {
            let end = literal.find('\'').unwrap_or(literal.len());
            (
                literal[..end].to_string(),
                literal.get(end + 1..).unwrap_or(""),
            )
        } else {
            let end = rest.find('.').unwrap_or(rest.len());
            (rest[..end].trim().to_string(), &rest[end..])
        };
        out.push(part);
        rest = after.trim_start().trim_start_matches('.').trim_start();
    }
    out
}

/// Where a basic string (after its opening quote) ends.
fn closing_quote(s: &str) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        match c {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => return Some(i),
            _ => escaped = false,
        }
    }
    None
}

/// A value: a string's content, else the text up to a comment.
fn unquote(value: &str) -> String {
    if let Some(basic) = value.strip_prefix('"') {
        let end = closing_quote(basic).unwrap_or(basic.len());
        return unescape(&basic[..end]);
    }
    if let Some(literal) = value.strip_prefix('\'') {
        return literal.split('\'').next().unwrap_or("").to_string();
    }
    value.split('#').next().unwrap_or("").trim().to_string()
}

/// A TOML basic string's escapes.
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                if let Some(c) = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    out.push(c);
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

/// Where Codex keeps what the user trusted: `config.toml` in its home.
pub fn config_file(codex_home: &Path) -> PathBuf {
    codex_home.join("config.toml")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_codex_trusts_a_hook_by() {
        // Computed as Codex 0.169.0 does; a run of the real CLI with this
        // hash in config.toml ran the hook (tests/tests/codex_cli.rs).
        let group = json!({"matcher": "*", "hooks": [{"type": "command", "command": "memlog hook --agent codex PostToolUse", "timeout": 10}]});
        let hash = identity_hash("post_tool_use", &group, &group["hooks"][0]);
        let text = r#"{"event_name":"post_tool_use","hooks":[{"async":false,"command":"memlog hook --agent codex PostToolUse","timeout":10,"type":"command"}],"matcher":"*"}"#;
        assert_eq!(
            hash,
            format!("sha256:{}", crate::sha256::hex(text.as_bytes()))
        );
        // No matcher for user_prompt_submit and stop.
        let stop =
            json!({"matcher": "*", "hooks": [{"type": "command", "command": "c", "timeout": 3}]});
        let text = r#"{"event_name":"stop","hooks":[{"async":false,"command":"c","timeout":3,"type":"command"}]}"#;
        assert_eq!(
            identity_hash("stop", &stop, &stop["hooks"][0]),
            format!("sha256:{}", crate::sha256::hex(text.as_bytes()))
        );
        assert_eq!(snake_case("UserPromptSubmit"), "user_prompt_submit");
    }

    #[test]
    fn toml_tables_as_codex_writes_them() {
        let t = Tables::parse(
            "model = \"x\"\n[projects.\"/home/a b\"]\ntrust_level = \"trusted\" # ok\n\n[hooks.state.\"/r/.codex/hooks.json:stop:0:0\"]\ntrusted_hash = \"sha256:ab\"\nenabled = false\n[hooks.state]\n\"/r/h.json:session_end:0:0\" = { trusted_hash = \"sha256:cd\", enabled = true }\n",
        );
        assert_eq!(
            t.value(&["projects", "/home/a b"], "trust_level"),
            Some("trusted")
        );
        assert_eq!(
            t.value(
                &["hooks", "state", "/r/.codex/hooks.json:stop:0:0"],
                "trusted_hash"
            ),
            Some("sha256:ab")
        );
        assert_eq!(
            t.value(
                &["hooks", "state", "/r/.codex/hooks.json:stop:0:0"],
                "enabled"
            ),
            Some("false")
        );
        assert_eq!(
            t.value(
                &["hooks", "state", "/r/h.json:session_end:0:0"],
                "trusted_hash"
            ),
            Some("sha256:cd")
        );
        assert_eq!(keys(r#"a."b.c"."d\"e""#), ["a", "b.c", "d\"e"]);
    }

    #[test]
    fn untrusted_until_the_project_and_each_hook_are() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let hooks = root.join(".codex/hooks.json");
        std::fs::create_dir_all(hooks.parent().unwrap()).unwrap();
        std::fs::write(
            &hooks,
            json!({"hooks": {
                "Stop": [{"hooks": [{"type": "command", "command": "/bin/memlog hook --agent codex Stop", "timeout": 10}]}],
                "SessionEnd": [{"hooks": [{"type": "command", "command": "other-tool", "timeout": 3}]},
                               {"hooks": [{"type": "command", "command": "/bin/memlog hook --agent codex SessionEnd", "timeout": 3}]}]
            }})
            .to_string(),
        )
        .unwrap();
        let config = root.join("config.toml");
        let t = hook_trust(&hooks, Some(&root), &config).unwrap();
        assert_eq!(t.hooks, 2);
        assert_eq!(t.untrusted, ["project", "SessionEnd", "Stop"]);
        assert!(
            t.entries[0]
                .0
                .ends_with(".codex/hooks.json:session_end:1:0"),
            "{:?}",
            t.entries
        );
        let mut text = format!(
            "[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
            root.display()
        );
        for (key, hash) in &t.entries {
            text.push_str(&format!(
                "[hooks.state.\"{key}\"]\ntrusted_hash = \"{hash}\"\n"
            ));
        }
        std::fs::write(&config, &text).unwrap();
        let t = hook_trust(&hooks, Some(&root), &config).unwrap();
        assert!(t.trusted(), "{:?}", t.untrusted);
        // A changed hook is no longer trusted.
        std::fs::write(
            &hooks,
            std::fs::read_to_string(&hooks).unwrap().replace("10", "11"),
        )
        .unwrap();
        assert_eq!(
            hook_trust(&hooks, Some(&root), &config).unwrap().untrusted,
            ["Stop"]
        );
    }
}
