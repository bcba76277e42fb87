//! memlog's own tools among an agent's tool calls: its MCP tools, and a
//! shell command that runs memlog (`memlog note --personal …`,
//! `memlog show …`).
//!
//! What they read or wrote is memory already: an event of its own, under
//! forget and purge, personal when asked. A copy in the call's observation
//! would escape both (a purged session lived on in the `memory_get` that
//! read it) and carry a personal note into the shared session that saved
//! it. The observation keeps which tool ran and its outcome, not the words
//! ([`memlog_format::scope::withhold`]).

use std::path::Path;

use memlog_format::command::command_line;
use serde_json::{Map, Value};

use crate::tool::ToolCall;

/// memlog's MCP tools (`memlog mcp`), as agents name them after their
/// server (`mcp__memlog__memory_get`, `memlog__memory_get`, or bare).
const MCP_TOOLS: [&str; 11] = [
    "memory_search",
    "memory_get",
    "memory_timeline",
    "memory_remember",
    "memory_forget",
    "memory_reinforce",
    "memory_add_rule",
    "memory_tasks",
    "memory_task_add",
    "memory_task_update",
    "memory_stats",
];

/// Programs that run the command after them (a shell with `-c`, too).
const WRAPPERS: [&str; 10] = [
    "sudo", "exec", "time", "env", "nohup", "command", "xargs", "bash", "sh", "zsh",
];

/// The input an observation keeps of a call to memlog's own tools (none
/// for an MCP tool; `memlog <subcommand>` for a shell command, whatever
/// the agent names its command: [`command_line`]), or `None` for any
/// other call.
pub(crate) fn kept_input(tool: &str, input: Option<&Value>) -> Option<Map<String, Value>> {
    let name = tool.to_ascii_lowercase();
    let mcp = MCP_TOOLS
        .iter()
        .any(|t| name == *t || (name.contains("memlog") && name.ends_with(t)));
    if mcp {
        return Some(Map::new());
    }
    let command = command_line(input?)?;
    // a command on memlog's own files (`git --git-dir=.git/memlog/personal.git
    // log -p`, `cat .git/memlog/journal/…`) reads memory as directly
    let ran = memlog_run_by(&command).or_else(|| reads_store(&command).then(|| command.clone()))?;
    let mut kept = Map::new();
    kept.insert("command".into(), Value::String(ran));
    Some(kept)
}

/// Whether a shell command names memlog's folder in a git directory.
fn reads_store(command: &str) -> bool {
    command.contains(".git/memlog/") || command.contains(".git/memlog ")
}

/// Whether a shell command reads the personal store itself.
fn reads_personal_store(input: Option<&Value>) -> bool {
    input
        .and_then(command_line)
        .is_some_and(|c| c.contains("memlog/personal.git"))
}

/// Whether a call to memlog's own tools (the caller knows it is one,
/// [`kept_input`]) returned a personal event, in whatever the agent kept of
/// its result (the response in any shape, the text the model saw, a
/// failure's message): the agent has read it, and what it says next may
/// repeat it, so the rest of its session stays on this machine, as after a
/// personal memory injected.
pub(crate) fn read_personal(call: &ToolCall<'_>) -> bool {
    fn any_string(value: &Value, found: &dyn Fn(&str) -> bool) -> bool {
        match value {
            Value::String(s) => found(s),
            Value::Array(items) => items.iter().any(|v| any_string(v, found)),
            Value::Object(map) => map.values().any(|v| any_string(v, found)),
            _ => false,
        }
    }
    let shows = memlog_format::scope::shows_personal;
    reads_personal_store(call.input)
        || call.response.is_some_and(|r| any_string(r, &shows))
        || call.result_text.as_deref().is_some_and(shows)
        || call.failure.is_some_and(shows)
}

/// Whether `name` (a file name) is memlog's binary: `memlog`, `memlog.exe`,
/// or a release's or a copy's longer name (`memlog-x86_64-unknown-linux-gnu`).
pub(crate) fn is_memlog_program(name: &str) -> bool {
    name == "memlog" || name.starts_with("memlog.") || name.starts_with("memlog-")
}

/// `memlog <subcommand>` when a simple command of the shell line `command`
/// (between `;`, `&&`, `|`, parentheses, substitutions) runs memlog.
fn memlog_run_by(command: &str) -> Option<String> {
    command
        .split([';', '&', '|', '(', ')', '`', '\n'])
        .find_map(|simple| {
            let mut words = simple
                .split_whitespace()
                .map(|w| w.trim_matches(['\'', '"', '$', '{', '}']))
                .skip_while(|w| w.contains('=') || WRAPPERS.contains(w) || w.starts_with('-'));
            let program = words.next()?;
            let name = Path::new(program).file_name()?.to_str()?;
            if !is_memlog_program(name) {
                return None;
            }
            Some(match words.find(|w| !w.starts_with('-')) {
                Some(sub) if sub.chars().all(|c| c.is_ascii_alphabetic() || c == '-') => {
                    format!("memlog {sub}")
                }
                _ => "memlog".to_string(),
            })
        })
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_personal_event_read_back_is_seen_in_any_shape() {
        use serde_json::json;
        fn call<'a>(input: Option<&'a Value>, response: Option<&'a Value>) -> ToolCall<'a> {
            ToolCall {
                tool: "Bash",
                input,
                response,
                ..ToolCall::default()
            }
        }
        let mcp = json!([{"type": "text",
            "text": "{\"hits\":[{\"id\":\"ab\",\"personal\":true,\"headline\":\"x\"}]}"}]);
        assert!(read_personal(&call(None, Some(&mcp))));
        let shell = json!({"stdout": "ab12  2026-11-27 06:39  note  s  0.8  (personal) salary"});
        let input = json!({"command": "memlog search salary"});
        assert!(read_personal(&call(Some(&input), Some(&shell))));
        let shared = json!({"stdout": "ab12  2026-11-27 06:39  note  s  0.8  staging host"});
        assert!(!read_personal(&call(Some(&input), Some(&shared))));
        // an importer's text the model saw, and a failure's message
        let as_text = ToolCall {
            result_text: Some("ab12  note  (personal) salary".into()),
            ..call(Some(&input), None)
        };
        assert!(read_personal(&as_text));
        let as_failure = ToolCall {
            failure: Some("Exit code 1\nab12  note  (personal) salary"),
            ..call(Some(&input), None)
        };
        assert!(read_personal(&as_failure));
        // another program's call is not memlog's own, whatever it printed
        let other = json!({"command": "cat notes.txt"});
        assert!(kept_input("Bash", Some(&other)).is_none());
        // git on the personal store reads it directly: kept out, and personal
        let git = json!({"command": "git --git-dir=.git/memlog/personal.git log -p"});
        assert!(kept_input("Bash", Some(&git)).is_some());
        assert!(read_personal(&call(Some(&git), Some(&shared))));
    }
    use serde_json::json;

    use super::*;

    fn shell(command: &str) -> Option<String> {
        kept_input("Bash", Some(&json!({ "command": command })))
            .and_then(|m| m.get("command").and_then(Value::as_str).map(str::to_string))
    }

    #[test]
    fn memlogs_own_tools_are_known_by_every_agents_names() {
        for tool in [
            "mcp__memlog__memory_get",
            "memlog__memory_remember",
            "memory_search",
            "memlog_memory_timeline",
        ] {
            assert_eq!(kept_input(tool, None), Some(Map::new()), "{tool}");
        }
        for tool in [
            "mcp__docs__search",
            "Read",
            "memory",
            "mcp__other__search_nodes",
        ] {
            assert_eq!(kept_input(tool, Some(&json!({"x": 1}))), None, "{tool}");
        }
        assert_eq!(
            shell("memlog note --personal 'my partner is Sam'").as_deref(),
            Some("memlog note")
        );
        assert_eq!(
            shell("cd /r && ./target/release/memlog show 5f40528d32aa").as_deref(),
            Some("memlog show")
        );
        assert_eq!(
            shell("MEMLOG_HOME=/x memlog-x86_64-unknown-linux-gnu search \"port\" | head")
                .as_deref(),
            Some("memlog search")
        );
        assert_eq!(
            kept_input(
                "shell",
                Some(&json!({"command": ["bash", "-lc", "memlog cat --session s1"]}))
            )
            .and_then(|m| m.get("command").cloned()),
            Some(json!("memlog cat"))
        );
        // every agent's name for its shell's command (field test 12a: agy's
        // `CommandLine` was not read, and its `memlog search` was shared)
        for (tool, input) in [
            (
                "run_command",
                json!({"CommandLine": "memlog search codeword", "Cwd": "/r"}),
            ),
            ("exec_command", json!({"cmd": "memlog search codeword"})),
            ("shell", json!({"command_line": "memlog search codeword"})),
            ("shell", json!({"commandLine": "memlog search codeword"})),
        ] {
            assert_eq!(
                kept_input(tool, Some(&input)).and_then(|m| m.get("command").cloned()),
                Some(json!("memlog search")),
                "{input}"
            );
        }
        let git = json!({"CommandLine": "git --git-dir=.git/memlog/personal.git log -p"});
        assert!(reads_personal_store(Some(&git)));
        for other in [
            "cargo test -p memlog-e2e",
            "cat .memlog.yaml",
            "git log -p memlog",
            "grep -r memlog src/",
        ] {
            assert_eq!(shell(other), None, "{other}");
        }
    }
}
