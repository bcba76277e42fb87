//! Personal scope: events that never leave this machine.
//!
//! An event is personal when its `meta.scope` is `"personal"` (FORMAT.md
//! §9). The mark is part of the event, hence of its id: a personal event and
//! a shared one never collapse into one. Writers route personal events to a
//! ref of their own that no sync or push of the memlog ref carries; readers
//! search them like the rest.
//!
//! What makes an event personal is decided once, on the write path: the
//! writer's explicit mark (`memlog note --personal`, `record --personal`,
//! an MCP argument), or the rules of `.memlog.yaml` ([`PersonalConfig`]): a
//! session, an agent, or a `<personal>` tag in the event's text. A session
//! that recorded one personal event keeps the rest of its events personal:
//! what follows a private word (the answer, the tool calls) repeats it.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::config::PersonalConfig;
use crate::{Draft, Kind};

/// The `meta` key holding an event's scope.
pub const SCOPE_KEY: &str = "scope";
/// The scope of events that stay on this machine.
pub const PERSONAL: &str = "personal";
/// The tag that marks a text personal (case-insensitive).
pub const PERSONAL_TAG: &str = "<personal>";

/// Where an event is kept: the shared log, or this machine only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// The memlog ref, shared by sync and push.
    Shared,
    /// A ref of its own, never synced or pushed.
    Personal,
}

impl Scope {
    /// The scope event metadata gives.
    pub fn of(meta: &Map<String, Value>) -> Scope {
        if is_personal(meta) {
            Scope::Personal
        } else {
            Scope::Shared
        }
    }
}

/// Whether event metadata marks it personal.
pub fn is_personal(meta: &Map<String, Value>) -> bool {
    meta.get(SCOPE_KEY).and_then(Value::as_str) == Some(PERSONAL)
}

/// How memlog's text outputs (`memlog search`, `memlog show`, the
/// briefing) label a personal event, so that a hook reading that output
/// back from an agent's tool call knows the session has seen one.
pub const PERSONAL_LABEL: &str = "(personal)";

/// Whether `output`, printed by memlog (a command run in an agent's shell,
/// an MCP tool's answer), shows a personal event: its text label, or its
/// scope in JSON (`meta`, or an MCP hit's `personal`).
pub fn shows_personal(output: &str) -> bool {
    const MARKERS: [&str; 5] = [
        PERSONAL_LABEL,
        "\"scope\":\"personal\"",
        "\"scope\": \"personal\"",
        "\"personal\":true",
        "\"personal\": true",
    ];
    MARKERS.iter().any(|m| output.contains(m))
}

/// Marks metadata personal.
pub fn mark_personal(meta: &mut Map<String, Value>) {
    meta.insert(SCOPE_KEY.into(), Value::String(PERSONAL.into()));
}

/// Whether the configured rules make `draft` personal: its session is
/// listed (an entry ending in `*` matches a prefix), its agent
/// (`meta.client`) is listed, or, with `tag` on, its `body.text` holds a
/// `<personal>` tag.
pub fn rules_make_personal(draft: &Draft, rules: &PersonalConfig) -> bool {
    let listed = |patterns: &[String], value: &str| {
        patterns.iter().any(|p| match p.strip_suffix('*') {
            Some(prefix) => value.starts_with(prefix),
            None => p == value,
        })
    };
    if listed(&rules.sessions, &draft.session) {
        return true;
    }
    if let Some(client) = draft.meta.get("client").and_then(Value::as_str)
        && listed(&rules.agents, client)
    {
        return true;
    }
    rules.tag
        && draft
            .body
            .get("text")
            .and_then(Value::as_str)
            .is_some_and(has_tag)
}

/// Whether `text` holds the `<personal>` tag, in any case.
pub fn has_tag(text: &str) -> bool {
    text.as_bytes()
        .windows(PERSONAL_TAG.len())
        .any(|w| w.eq_ignore_ascii_case(PERSONAL_TAG.as_bytes()))
}

/// The input keys that name the file a tool call is on.
const PATH_KEYS: [&str; 3] = ["file_path", "path", "notebook_path"];

/// What a tool call on the user's own agent memory keeps of its words.
pub const WITHHELD: &str =
    "[withheld: the user's own agent memory, kept on this machine as personal notes]";

/// The tools that only write a file (Claude Code's, Gemini CLI's,
/// OpenCode's): their call on the agent's own memory puts there what the
/// session already said.
const WRITE_TOOLS: [&str; 8] = [
    "Write",
    "Edit",
    "MultiEdit",
    "NotebookEdit",
    "write_file",
    "replace",
    "write",
    "edit",
];

/// Cuts a tool call on a file under one of `dirs` (the agents' own memory
/// outside the work tree, such as Claude Code's auto memory, which it
/// writes with its Write and Edit tools) down to the tool, the file and
/// the outcome: the call sits in the agent's shared session, and the
/// file's words are the user's (memlog reads the file into personal
/// notes). A call names the file by a path input or in a command line
/// (`cat ~/.claude/projects/…/memory/notes.md`).
///
/// A call that read the file (anything but a write tool's) is marked
/// personal too: what the agent says next may repeat the user's notes, so
/// the rest of its session stays on this machine, as after a personal
/// memory read back through memlog. Returns whether it withheld the call.
pub fn withhold_own_memory(draft: &mut Draft, dirs: &[PathBuf]) -> bool {
    if draft.kind != Kind::ToolObservation || dirs.is_empty() {
        return false;
    }
    let Some(Value::Object(input)) = draft.body.get("input") else {
        return false;
    };
    let names_own_memory = |k: &str, v: &Value| {
        let Some(v) = v.as_str() else {
            return false;
        };
        if PATH_KEYS.contains(&k) {
            return dirs.iter().any(|d| Path::new(v).starts_with(d));
        }
        dirs.iter().any(|d| mentions_dir(v, d))
    };
    let kept: Map<String, Value> = input
        .iter()
        .filter(|(k, v)| names_own_memory(k, v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if kept.is_empty() {
        return false;
    }
    let wrote = draft
        .body
        .get("tool")
        .and_then(Value::as_str)
        .is_some_and(|t| WRITE_TOOLS.contains(&t));
    withhold(&mut draft.body, kept, WITHHELD);
    if !wrote {
        mark_personal(&mut draft.meta);
    }
    true
}

/// Whether a command line names `dir` or a file under it, as an absolute
/// path or from the home folder (`~/…`).
fn mentions_dir(command: &str, dir: &Path) -> bool {
    let absolute = dir.to_string_lossy();
    if command.contains(absolute.as_ref()) {
        return true;
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    home.and_then(|h| dir.strip_prefix(h).ok().map(Path::to_path_buf))
        .is_some_and(|rel| command.contains(&format!("~/{}", rel.to_string_lossy())))
}

/// What a call to memlog's own tools keeps of its words.
pub const WITHHELD_MEMLOG: &str = "[withheld: memlog's own memory, kept as events of its own]";

/// Cuts a `tool_observation` body down to the tool, its outcome, its call
/// id and `input`, with `output` saying why (`withheld`) and
/// `withheld: true`: for a call whose words must not be in the shared log
/// (the agents' own memory files, memlog's own tools).
pub fn withhold(body: &mut Map<String, Value>, input: Map<String, Value>, withheld: &str) {
    body.retain(|k, _| matches!(k.as_str(), "tool" | "success" | "tool_use_id"));
    body.insert("input".into(), Value::Object(input));
    body.insert("output".into(), Value::String(withheld.into()));
    body.insert("withheld".into(), Value::Bool(true));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draft(session: &str, client: Option<&str>, text: &str) -> Draft {
        let mut d = Draft::text(session, "2026-01-01T00:00:00.000Z", Kind::Note, "p", text);
        if let Some(c) = client {
            d.meta.insert("client".into(), Value::String(c.into()));
        }
        d
    }

    #[test]
    fn rules_mark_sessions_agents_and_tags() {
        let rules = PersonalConfig {
            sessions: vec!["diary".into(), "me-*".into()],
            agents: vec!["gemini-cli".into()],
            tag: true,
        };
        assert!(rules_make_personal(&draft("diary", None, "x"), &rules));
        assert!(rules_make_personal(&draft("me-42", None, "x"), &rules));
        assert!(!rules_make_personal(&draft("diary2", None, "x"), &rules));
        assert!(rules_make_personal(
            &draft("s", Some("gemini-cli"), "x"),
            &rules
        ));
        assert!(!rules_make_personal(
            &draft("s", Some("codex"), "x"),
            &rules
        ));
        assert!(rules_make_personal(
            &draft("s", None, "my salary <Personal> is 10"),
            &rules
        ));
        let off = PersonalConfig {
            tag: false,
            ..rules
        };
        assert!(!rules_make_personal(
            &draft("s", None, "<personal> x"),
            &off
        ));
    }

    #[test]
    fn the_mark_is_meta_scope() {
        let mut meta = Map::new();
        assert!(!is_personal(&meta));
        mark_personal(&mut meta);
        assert!(is_personal(&meta));
        assert_eq!(meta["scope"], "personal");
    }

    #[test]
    fn a_call_on_the_users_own_memory_keeps_the_file_not_its_words() {
        let body = |path: &str| {
            serde_json::json!({
                "tool": "Write",
                "input": {"file_path": path, "content": "my locker is 4411"},
                "output": "my locker is 4411",
                "success": true,
                "metadata": {"lines": 1},
            })
        };
        let dirs = [PathBuf::from("/home/u/.claude/projects/p/memory")];
        let call = |path: &str| {
            let Value::Object(b) = body(path) else {
                unreachable!()
            };
            Draft::new(
                "s",
                "2026-01-01T00:00:00.000Z",
                Kind::ToolObservation,
                "p",
                b,
            )
        };
        let mut own = call("/home/u/.claude/projects/p/memory/MEMORY.md");
        assert!(withhold_own_memory(&mut own, &dirs));
        let text = serde_json::to_string(&own.body).unwrap();
        assert!(!text.contains("4411"), "{text}");
        assert!(
            text.contains("MEMORY.md") && text.contains("\"success\":true"),
            "{text}"
        );
        let mut other = call("/repo/src/main.rs");
        assert!(!withhold_own_memory(&mut other, &dirs));
        assert!(serde_json::to_string(&other.body).unwrap().contains("4411"));
    }

    /// A shell command that prints the agent's own memory is withheld and
    /// personal like a Read of it (field test 12c); a write of it is
    /// withheld and stays shared: it holds what the session said.
    #[test]
    fn a_shell_read_of_the_agents_own_memory_is_withheld_and_personal() {
        let dirs = [PathBuf::from("/home/u/.claude/projects/p/memory")];
        let call = |tool: &str, input: Value| {
            let Value::Object(b) = serde_json::json!({"tool": tool, "input": input,
                "output": "NATP-7120 I plan to leave in March", "success": true})
            else {
                unreachable!()
            };
            Draft::new(
                "s",
                "2026-01-01T00:00:00.000Z",
                Kind::ToolObservation,
                "p",
                b,
            )
        };
        let mut cat = call(
            "Bash",
            serde_json::json!({"command": "cat /home/u/.claude/projects/p/memory/notes.md"}),
        );
        assert!(withhold_own_memory(&mut cat, &dirs));
        assert!(!serde_json::to_string(&cat.body).unwrap().contains("NATP"));
        assert!(is_personal(&cat.meta));
        let mut write = call(
            "Write",
            serde_json::json!({"file_path": "/home/u/.claude/projects/p/memory/notes.md", "content": "x"}),
        );
        assert!(withhold_own_memory(&mut write, &dirs));
        assert!(!is_personal(&write.meta), "a write stays shared");
        let mut elsewhere = call(
            "Bash",
            serde_json::json!({"command": "cat /home/u/notes.md"}),
        );
        assert!(!withhold_own_memory(&mut elsewhere, &dirs));
    }
}
