//! The command line of a shell tool call, under whatever name its agent
//! gives it.
//!
//! Agents name a shell call's command differently: `command` (Claude Code's
//! Bash, Gemini CLI's `run_shell_command`, Copilot CLI, OpenCode, Cursor,
//! Codex's `shell_command`), `cmd` (Codex's `exec_command`), `CommandLine`
//! (Antigravity's `run_command`), and older Codex versions give an argv
//! (`["bash", "-lc", "<script>"]`). Whatever reads a call's command (the
//! check for memlog's own calls, what a call is about, what the index keeps)
//! reads it here: a reader of `command` alone missed agy's
//! `memlog search` and shared the personal note it printed (field test 12a).

use serde_json::Value;

/// The input keys that hold a shell call's command, in the order looked up.
pub const COMMAND_KEYS: [&str; 5] = [
    "command",
    "cmd",
    "CommandLine",
    "command_line",
    "commandLine",
];

/// The command line a tool call's `input` runs: a string as written, the
/// script of a `<shell> -c <script>` argv (`-lc` too), else the argv's words
/// joined by spaces; `None` when the input names no command.
pub fn command_line(input: &Value) -> Option<String> {
    let Value::Object(map) = input else {
        return None;
    };
    COMMAND_KEYS
        .iter()
        .filter_map(|k| map.get(*k))
        .find_map(from_value)
}

fn from_value(value: &Value) -> Option<String> {
    match value {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Array(argv) => {
            let words: Vec<&str> = argv.iter().filter_map(Value::as_str).collect();
            match words.as_slice() {
                [] => None,
                [_shell, flag, script] if flag.starts_with('-') && flag.ends_with('c') => {
                    Some((*script).to_string())
                }
                _ => Some(words.join(" ")),
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_agents_name_for_the_command() {
        let line = |input: Value| command_line(&input);
        assert_eq!(line(json!({"command": "ls -a"})).as_deref(), Some("ls -a"));
        assert_eq!(
            line(json!({"cmd": "cargo test"})).as_deref(),
            Some("cargo test")
        );
        assert_eq!(
            line(json!({"CommandLine": "memlog search x", "Cwd": "/r"})).as_deref(),
            Some("memlog search x")
        );
        assert_eq!(
            line(json!({"command_line": "make"})).as_deref(),
            Some("make")
        );
        assert_eq!(
            line(json!({"commandLine": "make"})).as_deref(),
            Some("make")
        );
        assert_eq!(
            line(json!({"command": ["bash", "-lc", "memlog cat --session s1"]})).as_deref(),
            Some("memlog cat --session s1")
        );
        assert_eq!(
            line(json!({"command": ["/bin/zsh", "-c", "ls"]})).as_deref(),
            Some("ls")
        );
        assert_eq!(
            line(json!({"command": ["git", "status"]})).as_deref(),
            Some("git status")
        );
        // no command, an empty one, or not an object
        assert_eq!(line(json!({"file_path": "/a"})), None);
        assert_eq!(line(json!({"command": ""})), None);
        assert_eq!(
            line(json!({"command": [], "cmd": "ls"})).as_deref(),
            Some("ls")
        );
        assert_eq!(line(json!("ls")), None);
    }
}
