//! memlog's hook commands in an agent's settings. The shape Claude Code's
//! `settings.json`, Codex CLI's `hooks.json` and Gemini CLI's
//! `settings.json` share (`hooks.<Event>[].hooks[]` of `{"type":
//! "command", "command", "timeout"}`, with a tool `matcher` for tool
//! events) is the default ([`edit_json`]); each agent says which events and
//! in what form ([`HookSettings`]). Agents whose files have another shape
//! build on [`parse_object`], [`command_line`] and [`apply_flat`] (a flat
//! list of entries per event, as Cursor's and Copilot CLI's `hooks.json`
//! have). Reading and writing the file is the caller's.

use std::path::Path;

use serde_json::{Map, Value, json};

use crate::{Error, Result};

/// What installing (or removing) memlog's hooks makes of a settings file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingsEdit {
    /// The file's new text; `None` when the file is to be removed (a file
    /// that was memlog's alone, as OpenCode's plugin).
    pub text: Option<String>,
    /// How many hook events memlog now listens to there.
    pub events: usize,
    /// How many earlier memlog hook commands were removed.
    pub removed: usize,
    /// The events left out because the agent's version here predates them
    /// ([`HookSettings::late_events`]), each said as a sentence.
    pub left_out: Vec<String>,
    /// What the edit does with the file's comments.
    pub comments: Comments,
}

/// What an edit does with the comments of a settings file that may have
/// them (Gemini CLI's `settings.json`, [`edit_jsonc`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Comments {
    /// The file has none, or is plain JSON.
    #[default]
    None,
    /// Kept: only the text of its `hooks` changed.
    Kept,
    /// Some were in what memlog rewrote, and are not in the new text: the
    /// caller keeps the file as it was beside it, and says so.
    Dropped,
}

/// memlog's hooks found in the text of a settings file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HooksInFile {
    /// How many hook events run memlog there.
    pub hooks: usize,
    /// The memlog programs they run.
    pub programs: Vec<String>,
    /// Whether installing again would write them otherwise (a plugin an
    /// earlier memlog wrote, which lacks this one's fixes).
    pub outdated: bool,
}

/// memlog's hooks in settings of the shared JSON shape; `None` when there
/// are none (or the text is not JSON).
pub fn hooks_in_json(text: &str) -> Option<HooksInFile> {
    let settings: Value = serde_json::from_str(text).ok()?;
    let hooks = memlog_commands(&settings);
    (hooks > 0).then(|| HooksInFile {
        hooks,
        programs: memlog_programs(&settings),
        outdated: false,
    })
}

/// The settings file `path`, whose text is `current` (`None`: no file yet),
/// as a JSON object; an empty file is an empty object.
pub fn parse_object(path: &Path, current: Option<&str>) -> Result<Map<String, Value>> {
    let text = json_text(current);
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(root)) => Ok(root),
        Ok(_) => Err(Error::BadSettings {
            path: path.to_path_buf(),
            why: "is not a JSON object".into(),
        }),
        Err(e) => Err(Error::BadSettings {
            path: path.to_path_buf(),
            why: format!("is not valid JSON ({e}); fix it first"),
        }),
    }
}

/// A settings file's text as JSON reads it: an editor's byte-order mark
/// is not JSON, but is no reason to refuse the file.
pub(crate) fn json_text(current: Option<&str>) -> &str {
    current.unwrap_or("").trim_start_matches('\u{feff}')
}

/// `parse_object`, and a `hooks` object of lists per event (the shape
/// every agent memlog writes this way reads): anything else is named
/// rather than replaced or skipped, and the file is left as it is.
fn parse_hooks_object(path: &Path, current: Option<&str>) -> Result<Map<String, Value>> {
    let root = parse_object(path, current)?;
    let bad = |why: String| Error::BadSettings {
        path: path.to_path_buf(),
        why: format!("{why}; fix it first"),
    };
    match root.get("hooks") {
        None => {}
        Some(Value::Object(events)) => {
            if let Some((event, _)) = events.iter().find(|(_, v)| !v.is_array()) {
                return Err(bad(format!(
                    "has `hooks.{event}` that is not a list of hooks"
                )));
            }
        }
        Some(_) => return Err(bad("has `hooks` that is not an object of events".into())),
    }
    Ok(root)
}

/// A settings object as the file's text: pretty JSON and a final newline,
/// its keys in the order of `current` (the file as it was), new ones last.
pub fn pretty(root: Map<String, Value>, current: Option<&str>) -> String {
    let order = crate::settings_order::Order::of(json_text(current));
    let mut text = crate::settings_order::pretty_in(&Value::Object(root), &order);
    text.push('\n');
    text
}

/// memlog's hook commands in the shared shape (see the module docs) merged
/// into the settings file `path` whose text is `current`, or with
/// `install` false only removed from it.
pub fn edit_json(
    path: &Path,
    current: Option<&str>,
    exe: &Path,
    settings: &HookSettings,
    install: bool,
) -> Result<SettingsEdit> {
    let mut root = parse_hooks_object(path, current)?;
    let unknown = if install {
        installed_version(settings)
            .map(|version| unknown_to(settings, &version))
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    let skip: Vec<&str> = unknown.iter().map(|u| u.event).collect();
    let removed = apply(&mut root, exe, settings, install, &skip);
    Ok(SettingsEdit {
        text: kept(root, current, install),
        events: if install {
            settings.events.len() - skip.len()
        } else {
            0
        },
        removed,
        left_out: unknown.iter().map(Unknown::left_out).collect(),
        comments: Comments::None,
    })
}

/// [`edit_json`] for a file of JSON with comments (Gemini CLI's, which
/// strips them before parsing: [`crate::jsonc`]). A file with comments
/// keeps them: only its `hooks` member's text is written anew (and a file
/// left with nothing else is kept for them). Comments inside the old
/// `hooks`, or a file memlog cannot edit so, are dropped, as
/// [`SettingsEdit::comments`] says (field test 12a: install refused such a
/// file as "not valid JSON", which Gemini CLI reads).
pub fn edit_jsonc(
    path: &Path,
    current: Option<&str>,
    exe: &Path,
    settings: &HookSettings,
    install: bool,
) -> Result<SettingsEdit> {
    let text = json_text(current);
    let plain = crate::jsonc::without_comments(text);
    if plain == text {
        return edit_json(path, current, exe, settings, install);
    }
    let mut edit = edit_json(path, Some(&plain), exe, settings, install)?;
    let before = parse_object(path, Some(&plain))?;
    let after = match &edit.text {
        Some(new) => parse_object(path, Some(new))?,
        None => Map::new(),
    };
    let others = |root: &Map<String, Value>| {
        let mut rest = root.clone();
        rest.remove("hooks");
        rest
    };
    let hooks = after.get("hooks").map(|hooks| {
        let order = crate::settings_order::Order::of(&plain);
        crate::settings_order::pretty_in(hooks, order.of_key("hooks"))
    });
    let spliced = (others(&before) == others(&after))
        .then(|| crate::jsonc::with_member(text, "hooks", hooks.as_deref()))
        .flatten();
    match spliced {
        Some(spliced) => {
            edit.comments = if crate::jsonc::comments_in_member(text, "hooks", hooks.is_some()) {
                Comments::Dropped
            } else {
                Comments::Kept
            };
            let bom = if current.is_some_and(|c| c.starts_with('\u{feff}')) {
                "\u{feff}"
            } else {
                ""
            };
            edit.text = Some(format!("{bom}{spliced}"));
        }
        None => edit.comments = Comments::Dropped,
    }
    Ok(edit)
}

/// The settings file's text after an edit, or `None` to leave no file:
/// an uninstall creates none, and removes one left with nothing (or, for a
/// flat hook file, only its `version`).
pub fn kept(root: Map<String, Value>, current: Option<&str>, install: bool) -> Option<String> {
    let emptied = root.keys().all(|k| k == "version");
    if !install && (current.is_none() || emptied) {
        return None;
    }
    Some(pretty(root, current))
}

/// The shell command running `exe` with `args` (`hook --agent x Event`),
/// the program single-quoted when its path holds anything but letters,
/// digits and `/._-+` (a space, a quote, `$`).
pub fn command_line(exe: &Path, args: &str) -> String {
    let program = exe.display().to_string();
    let plain = !program.is_empty()
        && program
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c));
    if plain {
        format!("{program} {args}")
    } else {
        format!("'{}' {args}", program.replace('\'', r"'\''"))
    }
}

/// The first word of a shell command, unquoted (`'…'`, `"…"`, `\x`, and
/// their concatenation), and the rest of the command.
fn first_word(command: &str) -> (String, &str) {
    let command = command.trim_start();
    let mut word = String::new();
    let mut chars = command.char_indices();
    let mut quote: Option<char> = None;
    while let Some((i, c)) = chars.next() {
        match (quote, c) {
            (None, c) if c.is_whitespace() => return (word, &command[i..]),
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '\\') | (Some('"'), '\\') => {
                if let Some((_, next)) = chars.next() {
                    word.push(next);
                }
            }
            (_, c) => word.push(c),
        }
    }
    (word, "")
}

/// Replaces memlog's entries in a flat hook list per event
/// (`root.hooks.<event>: [entry, …]`, an entry being memlog's when one of
/// its string fields is a memlog hook command) by `entries`, one
/// `(event, entry)` each (with `install` false, only removes them), keeping
/// everything else; an emptied event or `hooks` object is removed. Returns
/// how many earlier memlog entries were removed.
pub fn apply_flat(
    root: &mut Map<String, Value>,
    entries: &[(&str, Value)],
    install: bool,
) -> usize {
    let mut removed = 0;
    if let Some(Value::Object(events)) = root.get_mut("hooks") {
        for list in events.values_mut() {
            if let Value::Array(list) = list {
                let before = list.len();
                list.retain(|entry| !is_memlog_entry(entry));
                removed += before - list.len();
            }
        }
        events.retain(|_, list| list.as_array().is_none_or(|l| !l.is_empty()));
    }
    if install {
        let hooks = root
            .entry("hooks")
            .or_insert_with(|| Value::Object(Map::new()));
        if !hooks.is_object() {
            *hooks = Value::Object(Map::new());
        }
        if let Value::Object(events) = hooks {
            for (event, entry) in entries {
                let list = events
                    .entry(*event)
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(list) = list {
                    list.push(entry.clone());
                }
            }
        }
    }
    if let Some(Value::Object(h)) = root.get("hooks")
        && h.is_empty()
    {
        root.remove("hooks");
    }
    removed
}

/// memlog's hooks in a `{"version": 1, "hooks": {"<event>": [entry]}}`
/// file (Cursor's, Copilot CLI's): one entry per event of `settings`,
/// made by `entry` from the command running it.
pub fn edit_flat(
    path: &Path,
    current: Option<&str>,
    exe: &Path,
    settings: &HookSettings,
    install: bool,
    entry: fn(String, &HookSettings) -> Value,
) -> Result<SettingsEdit> {
    let mut root = parse_hooks_object(path, current)?;
    let entries: Vec<(&str, Value)> = settings
        .events
        .iter()
        .map(|(event, _)| {
            let args = format!("hook {}{event}", settings.agent_flag);
            (*event, entry(command_line(exe, &args), settings))
        })
        .collect();
    let removed = apply_flat(&mut root, &entries, install);
    if install {
        root.insert("version".into(), json!(1));
    }
    Ok(SettingsEdit {
        text: kept(root, current, install),
        events: if install { entries.len() } else { 0 },
        removed,
        left_out: Vec::new(),
        comments: Comments::None,
    })
}

/// Whether a hook entry runs memlog: one of its string fields is a memlog
/// hook command.
fn is_memlog_entry(entry: &Value) -> bool {
    entry
        .as_object()
        .is_some_and(|e| e.values().filter_map(Value::as_str).any(is_memlog_command))
}

/// The hook commands `memlog install <agent>` writes, and their form.
#[derive(Clone, Copy, Debug)]
pub struct HookSettings {
    /// The project's settings file, in its working tree.
    pub project_file: &'static str,
    /// The project's own settings file, not committed, if the agent has one.
    pub local_file: Option<&'static str>,
    /// The agent's events memlog listens to, each with whether it takes a
    /// tool matcher.
    pub events: &'static [(&'static str, bool)],
    /// Between `hook` and the event (`--agent codex `).
    pub agent_flag: &'static str,
    /// After the event (Gemini: a failing command must not block).
    pub suffix: &'static str,
    /// The `timeout` value, in the agent's unit.
    pub timeout: u64,
    /// Events the agent gives less time than `timeout`, with theirs
    /// (Codex CLI clamps SessionEnd to 3 s, and warns on every run when a
    /// hook asks for more).
    pub short_timeouts: &'static [(&'static str, u64)],
    /// The matcher for every tool.
    pub any_tool: &'static str,
    /// The agent's program, which says its version (`<program> --version`);
    /// empty when memlog has no reason to ask.
    pub program: &'static str,
    /// Events the agent learnt late, each with the first version that knows
    /// it. An older version rejects a settings file naming an event it does
    /// not know, and with it everything else in the file (Claude Code before
    /// 2.0.56 and `PostToolUseFailure`: no hook ran, and a team's `env` and
    /// `permissions` in the same committed file were dropped too).
    pub late_events: &'static [(&'static str, &'static str)],
}

/// An event of a settings file the agent's version here does not know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unknown {
    /// The event.
    pub event: &'static str,
    /// The first version that knows it.
    pub since: &'static str,
    /// The version here.
    pub version: String,
    /// The agent's program.
    pub program: &'static str,
}

impl Unknown {
    fn left_out(&self) -> String {
        format!(
            "{} left out: `{}` here is {}, which predates it ({}); upgrading it and installing again adds it",
            self.event, self.program, self.version, self.since
        )
    }
}

/// The version of the agent's program on `PATH` (the first `N.N.N` its
/// `--version` prints), when it learnt some events late; `None` when it
/// has none, or the program is not there or says no version.
pub fn installed_version(settings: &HookSettings) -> Option<String> {
    if settings.late_events.is_empty() || settings.program.is_empty() {
        return None;
    }
    // asked once a process: `doctor` reads up to three settings files of
    // the same agent, and each ask starts the agent's program
    static ASKED: std::sync::Mutex<Vec<(&str, Option<String>)>> = std::sync::Mutex::new(Vec::new());
    let mut asked = ASKED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, version)) = asked.iter().find(|(p, _)| *p == settings.program) {
        return version.clone();
    }
    let version = version_printed_by(settings.program);
    asked.push((settings.program, version.clone()));
    version
}

/// The first `N.N.N` that `program --version` prints.
fn version_printed_by(program: &str) -> Option<String> {
    let out = std::process::Command::new(program)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout)
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .find(|w| version_parts(w).is_some())
        .map(str::to_string)
}

/// `1.2.3` as numbers; `None` for anything else.
fn version_parts(version: &str) -> Option<Vec<u64>> {
    let parts: Vec<u64> = version
        .split('.')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    (parts.len() >= 2).then_some(parts)
}

/// The late events `version` does not know yet.
pub fn unknown_to(settings: &HookSettings, version: &str) -> Vec<Unknown> {
    let Some(have) = version_parts(version) else {
        return Vec::new();
    };
    settings
        .late_events
        .iter()
        .filter(|(_, since)| version_parts(since).is_some_and(|since| have < since))
        .map(|&(event, since)| Unknown {
            event,
            since,
            version: version.to_string(),
            program: settings.program,
        })
        .collect()
}

/// The events of the settings `text` (JSON with a `hooks` object) that
/// the agent's version on `PATH` does not know: it ignores the whole file.
/// The program is asked only when the file names a late event.
pub fn unknown_in(settings: &HookSettings, text: &str) -> Vec<Unknown> {
    let Ok(Value::Object(root)) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    let Some(Value::Object(events)) = root.get("hooks") else {
        return Vec::new();
    };
    if !settings
        .late_events
        .iter()
        .any(|(e, _)| events.contains_key(*e))
    {
        return Vec::new();
    }
    let Some(version) = installed_version(settings) else {
        return Vec::new();
    };
    unknown_to(settings, &version)
        .into_iter()
        .filter(|u| events.contains_key(u.event))
        .collect()
}

impl HookSettings {
    /// The `timeout` memlog's hook for `event` gets.
    pub fn timeout_of(&self, event: &str) -> u64 {
        self.short_timeouts
            .iter()
            .find(|(e, _)| *e == event)
            .map_or(self.timeout, |(_, t)| *t)
    }
}

/// Whether a hook command is one of memlog's (`… memlog hook <Event>`).
pub fn is_memlog_command(command: &str) -> bool {
    let (program, rest) = first_word(command);
    let name = Path::new(&program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("");
    // installing again from any name of memlog's binary must find the
    // others' entries
    crate::own_calls::is_memlog_program(name) && rest.split_whitespace().next() == Some("hook")
}

/// How many of memlog's hook commands the settings object `settings`
/// holds.
pub fn memlog_commands(settings: &Value) -> usize {
    commands_of(settings).count()
}

/// The programs memlog's hook commands in `settings` run, each once:
/// `doctor` says when one is not on this machine (a settings file
/// committed from a teammate's).
pub fn memlog_programs(settings: &Value) -> Vec<String> {
    let mut programs: Vec<String> = commands_of(settings).map(|c| first_word(c).0).collect();
    programs.sort();
    programs.dedup();
    programs
}

fn commands_of(settings: &Value) -> impl Iterator<Item = &str> {
    settings
        .get("hooks")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|events| events.values())
        .filter_map(Value::as_array)
        .flatten()
        .filter_map(|group| group.get("hooks").and_then(Value::as_array))
        .flatten()
        .filter_map(|h| h.get("command").and_then(Value::as_str))
        .filter(|c| is_memlog_command(c))
}

/// Replaces memlog's hook commands in the settings object `root` by those
/// of `settings` but the events in `skip`, run as `exe` (with `install`
/// false, only removes them),
/// keeping everything else; an emptied `hooks` object is removed. Returns
/// how many earlier memlog commands were removed.
pub fn apply(
    root: &mut Map<String, Value>,
    exe: &Path,
    settings: &HookSettings,
    install: bool,
    skip: &[&str],
) -> usize {
    let removed = remove_memlog_hooks(root);
    if install {
        add_memlog_hooks(root, exe, settings, skip);
    }
    if let Some(Value::Object(h)) = root.get("hooks")
        && h.is_empty()
    {
        root.remove("hooks");
    }
    removed
}

/// Removes memlog's hook commands (and groups or events left empty);
/// returns how many were removed.
fn remove_memlog_hooks(root: &mut Map<String, Value>) -> usize {
    let Some(Value::Object(events)) = root.get_mut("hooks") else {
        return 0;
    };
    let mut removed = 0;
    for groups in events.values_mut() {
        let Value::Array(groups) = groups else {
            continue;
        };
        for group in groups.iter_mut() {
            if let Some(Value::Array(hooks)) = group.get_mut("hooks") {
                let before = hooks.len();
                hooks.retain(|h| {
                    !h.get("command")
                        .and_then(Value::as_str)
                        .is_some_and(is_memlog_command)
                });
                removed += before - hooks.len();
            }
        }
        groups.retain(|g| {
            g.get("hooks")
                .and_then(Value::as_array)
                .is_none_or(|h| !h.is_empty())
        });
    }
    events.retain(|_, groups| groups.as_array().is_none_or(|g| !g.is_empty()));
    removed
}

/// Adds `<exe> hook <agent_flag><Event><suffix>` for each of the events
/// under `root.hooks`.
fn add_memlog_hooks(
    root: &mut Map<String, Value>,
    exe: &Path,
    settings: &HookSettings,
    skip: &[&str],
) {
    let events = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    if !events.is_object() {
        *events = Value::Object(Map::new());
    }
    let Value::Object(events) = events else {
        return;
    };
    for &(event, takes_matcher) in settings.events {
        if skip.contains(&event) {
            continue;
        }
        let mut group = Map::new();
        if takes_matcher {
            group.insert("matcher".into(), Value::String(settings.any_tool.into()));
        }
        group.insert(
            "hooks".into(),
            json!([{
                "type": "command",
                "command": command_line(exe, &format!("hook {}{event}{}", settings.agent_flag, settings.suffix)),
                "timeout": settings.timeout_of(event),
            }]),
        );
        let list = events
            .entry(event)
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(list) = list {
            list.push(Value::Object(group));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SETTINGS: HookSettings = HookSettings {
        project_file: ".codex/hooks.json",
        local_file: None,
        events: &[("SessionStart", false), ("PostToolUse", true)],
        agent_flag: "--agent codex ",
        suffix: "",
        timeout: 10,
        short_timeouts: &[],
        any_tool: "*",
        program: "",
        late_events: &[],
    };

    /// Field test 12a: Gemini CLI reads its settings with comments, and
    /// install refused them as "not valid JSON". They are read, and kept.
    #[test]
    fn settings_with_comments_keep_them() {
        let path = Path::new("settings.json");
        let exe = Path::new("/bin/memlog");
        let mine = "{\n  // my model\n  \"model\": {\"name\": \"x\"},\n  /* servers */\n  \"mcpServers\": {}\n}\n";
        let installed = edit_jsonc(path, Some(mine), exe, &SETTINGS, true).unwrap();
        assert_eq!(installed.comments, Comments::Kept);
        let text = installed.text.unwrap();
        assert!(
            text.starts_with(
                "{\n  // my model\n  \"model\": {\"name\": \"x\"},\n  /* servers */\n"
            ),
            "{text}"
        );
        let read: Value = serde_json::from_str(&crate::jsonc::without_comments(&text)).unwrap();
        assert_eq!(read["hooks"]["PostToolUse"][0]["matcher"], "*");
        // again: the same text
        let again = edit_jsonc(path, Some(&text), exe, &SETTINGS, true).unwrap();
        assert_eq!(again.text.as_deref(), Some(text.as_str()));
        // uninstalled: the file as it was
        let removed = edit_jsonc(path, Some(&text), exe, &SETTINGS, false).unwrap();
        assert_eq!(removed.text.as_deref(), Some(mine));
        assert_eq!(removed.removed, 2);
        // a file of comments and memlog's hooks alone stays, for its comments
        let alone = edit_jsonc(path, Some("{ // mine\n}"), exe, &SETTINGS, true).unwrap();
        let left = edit_jsonc(path, alone.text.as_deref(), exe, &SETTINGS, false).unwrap();
        assert!(left.text.unwrap().contains("// mine"));
        // comments inside memlog's part are dropped, and said to be
        let inside = "{\n  \"hooks\": {\n    // the linter\n    \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"./lint.sh\"}]}]\n  }\n}";
        let edit = edit_jsonc(path, Some(inside), exe, &SETTINGS, true).unwrap();
        assert_eq!(edit.comments, Comments::Dropped);
        assert!(edit.text.unwrap().contains("./lint.sh"));
        // plain JSON is edited as before; a trailing comma, which Gemini
        // CLI refuses too, still is an error
        let plain = edit_jsonc(path, Some("{}"), exe, &SETTINGS, true).unwrap();
        assert_eq!(plain.comments, Comments::None);
        assert!(edit_jsonc(path, Some("{\"a\": 1,}"), exe, &SETTINGS, true).is_err());
    }

    #[test]
    fn memlog_entries_are_replaced_and_others_kept() {
        let mut root = json!({"model": "x", "hooks": {"Stop": [{"hooks": [
            {"type": "command", "command": "other-tool"},
            {"type": "command", "command": "/old/memlog hook Stop"}]}]}});
        let Value::Object(root) = &mut root else {
            unreachable!()
        };
        assert_eq!(
            apply(root, Path::new("/bin/memlog"), &SETTINGS, true, &[]),
            1
        );
        assert_eq!(root["model"], "x");
        assert_eq!(
            root["hooks"]["Stop"][0]["hooks"][0]["command"],
            "other-tool"
        );
        assert_eq!(
            root["hooks"]["PostToolUse"][0]["hooks"][0]["command"],
            "/bin/memlog hook --agent codex PostToolUse"
        );
        assert_eq!(root["hooks"]["PostToolUse"][0]["matcher"], "*");
        assert_eq!(
            apply(root, Path::new("/bin/memlog"), &SETTINGS, false, &[]),
            2
        );
        assert_eq!(
            root["hooks"],
            json!({"Stop": [{"hooks": [{"type": "command", "command": "other-tool"}]}]})
        );
    }

    #[test]
    fn late_events_are_unknown_to_earlier_versions_only() {
        const LATE: HookSettings = HookSettings {
            program: "claude",
            late_events: &[("PostToolUseFailure", "2.0.56")],
            ..SETTINGS
        };
        let unknown =
            |v: &str| -> Vec<&str> { unknown_to(&LATE, v).iter().map(|u| u.event).collect() };
        assert_eq!(unknown("2.0.15"), ["PostToolUseFailure"]);
        assert_eq!(unknown("1.0.98"), ["PostToolUseFailure"]);
        assert_eq!(unknown("2.0.55"), ["PostToolUseFailure"]);
        // compared as numbers, not as text
        assert!(unknown("2.0.56").is_empty());
        assert!(unknown("2.0.100").is_empty());
        assert!(unknown("2.1.328").is_empty());
        // a version memlog cannot read leaves every event in
        assert!(unknown("nightly").is_empty());
        let text = r#"{"hooks": {"PostToolUseFailure": [], "Stop": []}}"#;
        // without the program on PATH nothing is judged
        const ABSENT: HookSettings = HookSettings {
            program: "memlog-test-no-such-agent",
            ..LATE
        };
        assert!(unknown_in(&ABSENT, text).is_empty());
    }

    #[test]
    fn memlog_commands_are_recognised() {
        assert!(is_memlog_command("\"/usr/bin/memlog\" hook Stop"));
        assert!(is_memlog_command(
            "memlog.exe hook --agent gemini AfterTool"
        ));
        assert!(!is_memlog_command("memlog search x"));
        assert!(!is_memlog_command(""));
        // a release's or a copy's name, and a path with spaces
        assert!(is_memlog_command(
            "/opt/memlog-x86_64-unknown-linux-gnu hook Stop"
        ));
        assert!(is_memlog_command("'/home/a b/bin/memlog' hook Stop"));
        assert!(!is_memlog_command("/usr/bin/memlogger hook Stop"));
        assert!(!is_memlog_command("./my-stop.sh"));
    }

    /// Whatever the binary's path holds, the command runs it, and
    /// installing again finds it.
    #[test]
    fn command_lines_quote_what_the_shell_would_read() {
        for path in [
            "/usr/local/bin/memlog",
            "/tmp/a b/memlog",
            "/tmp/it's/memlog",
            "/tmp/$HOME`x`/\"q\"/memlog",
        ] {
            let line = command_line(Path::new(path), "hook Stop");
            let (program, rest) = first_word(&line);
            assert_eq!(program, path, "{line}");
            assert_eq!(rest.trim(), "hook Stop", "{line}");
            assert!(is_memlog_command(&line), "{line}");
            let shell = std::process::Command::new("sh")
                .args([
                    "-c",
                    &format!("printf %s {}", line.trim_end_matches(" hook Stop")),
                ])
                .output();
            if let Ok(out) = shell {
                assert_eq!(String::from_utf8_lossy(&out.stdout), path, "{line}");
            }
        }
        assert_eq!(
            command_line(Path::new("/usr/bin/memlog"), "hook Stop"),
            "/usr/bin/memlog hook Stop"
        );
    }

    #[test]
    fn uninstalling_creates_no_file_and_removes_an_emptied_one() {
        let path = Path::new(".claude/settings.json");
        let exe = Path::new("/usr/bin/memlog");
        let nothing = edit_json(path, None, exe, &SETTINGS, false).unwrap();
        assert_eq!(nothing.text, None);
        let installed = edit_json(path, None, exe, &SETTINGS, true).unwrap();
        let text = installed.text.unwrap();
        let emptied = edit_json(path, Some(&text), exe, &SETTINGS, false).unwrap();
        assert_eq!(emptied.text, None);
        for broken in [
            r#"{"hooks": {"Stop": {"command": "./my-stop.sh"}}}"#,
            r#"{"hooks": {"PostToolUse": "oops"}}"#,
            r#"{"hooks": []}"#,
        ] {
            let e = edit_json(path, Some(broken), exe, &SETTINGS, true).unwrap_err();
            assert!(e.to_string().contains("fix it first"), "{broken}: {e}");
        }
        let bom = "\u{feff}{\"model\": \"x\"}";
        let installed = edit_json(path, Some(bom), exe, &SETTINGS, true).unwrap();
        assert!(installed.text.unwrap().contains("\"model\": \"x\""));
        let mine = "{\"model\": \"x\"}";
        let kept = edit_json(path, Some(mine), exe, &SETTINGS, false).unwrap();
        assert_eq!(kept.text.as_deref(), Some("{\n  \"model\": \"x\"\n}\n"));
    }
}
