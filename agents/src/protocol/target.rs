//! What a tool call is about to work on, read from a PreToolUse payload:
//! the file of a read or an edit, or a shell command (file-aware recall).

use memlog_format::command::command_line;
use serde_json::Value;

use super::payload::Payload;

/// What a tool call works on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolTarget {
    /// A file it reads or edits, as the payload names it (absolute or
    /// relative to the agent's `cwd`).
    File(String),
    /// A shell command, its words joined by single spaces.
    Command(String),
}

/// Claude Code's tools that read or edit one file.
const FILE_TOOLS: [&str; 5] = ["Read", "Edit", "Write", "MultiEdit", "NotebookEdit"];
/// Input keys naming the file of other agents' tools.
const FILE_KEYS: [&str; 5] = [
    "file_path",
    "notebook_path",
    "absolute_path",
    "path",
    "filePath",
];

/// Programs that only print a file, as agents run them to read one
/// (Codex CLI and Copilot CLI read files through their shell).
const READERS: [&str; 7] = ["cat", "sed", "head", "tail", "nl", "less", "bat"];

/// The file a shell command only prints (`sed -n '1,80p' src/a.rs`, `cat
/// src/a.rs`, `head -n 40 src/a.rs`): one simple command of [`READERS`]
/// (no pipe, redirection or substitution), its last operand.
pub fn file_printed_by(command: &str) -> Option<String> {
    if command.contains(['|', ';', '&', '>', '<', '$', '`', '\n']) {
        return None;
    }
    let words: Vec<&str> = command
        .split_whitespace()
        .map(|w| w.trim_matches(['\'', '"']))
        .collect();
    let (program, args) = words.split_first()?;
    let edits_in_place = *program == "sed" && args.iter().any(|a| a.starts_with("-i"));
    if !READERS.contains(program) || edits_in_place {
        return None;
    }
    let operands: Vec<&&str> = args
        .iter()
        .filter(|a| !a.is_empty() && !a.starts_with('-'))
        .collect();
    // sed's first operand is its script
    let least = if *program == "sed" { 2 } else { 1 };
    if operands.len() < least {
        return None;
    }
    operands
        .last()
        .filter(|f| !f.chars().all(|c| c.is_ascii_digit()))
        .map(|f| f.to_string())
}

/// The target of `payload`'s tool call (see [`crate::Agent::tool_target`]).
pub fn tool_target(payload: &Payload) -> Option<ToolTarget> {
    let tool = payload.tool_name.as_deref()?;
    let input = payload.tool_input.as_ref()?;
    let text = |k: &str| input.get(k).and_then(Value::as_str).map(str::to_string);
    if let Some(command) = command_line(input) {
        let words: Vec<&str> = command.split_whitespace().collect();
        if !words.is_empty() {
            return Some(ToolTarget::Command(words.join(" ")));
        }
    }
    let keys: &[&str] = if FILE_TOOLS.contains(&tool) {
        &FILE_KEYS[..2]
    } else {
        &FILE_KEYS
    };
    keys.iter()
        .find_map(|k| text(k))
        .filter(|p| !p.trim().is_empty())
        .map(ToolTarget::File)
}

/// [`tool_target`] for an agent that reads files through its shell too
/// (Copilot CLI, OpenCode): a `command` that only prints one file
/// ([`file_printed_by`]) is about that file.
pub fn tool_target_reading_through_shell(payload: &Payload) -> Option<ToolTarget> {
    let printed = payload
        .tool_input
        .as_ref()
        .and_then(command_line)
        .and_then(|command| file_printed_by(&command));
    match printed {
        Some(file) => Some(ToolTarget::File(file)),
        None => tool_target(payload),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn target(tool: &str, input: serde_json::Value) -> Option<ToolTarget> {
        let payload = crate::protocol::parse_payload(
            "PreToolUse",
            json!({"tool_name": tool, "tool_input": input})
                .to_string()
                .as_bytes(),
        )
        .unwrap();
        tool_target(&payload)
    }

    #[test]
    fn files_and_commands_of_each_agents_tools() {
        assert_eq!(
            target("Read", json!({"file_path": "/r/src/a.rs"})),
            Some(ToolTarget::File("/r/src/a.rs".into()))
        );
        assert_eq!(
            target("Bash", json!({"command": "cargo  test -p export"})),
            Some(ToolTarget::Command("cargo test -p export".into()))
        );
        assert_eq!(
            target("shell", json!({"command": ["bash", "-lc", "cargo test"]})),
            Some(ToolTarget::Command("cargo test".into()))
        );
        assert_eq!(
            target(
                "run_command",
                json!({"CommandLine": "npm  test", "Cwd": "/r"})
            ),
            Some(ToolTarget::Command("npm test".into()))
        );
        assert_eq!(
            target("read_file", json!({"absolute_path": "/r/b.rs"})),
            Some(ToolTarget::File("/r/b.rs".into()))
        );
        assert_eq!(target("Grep", json!({"pattern": "x"})), None);
    }
}
