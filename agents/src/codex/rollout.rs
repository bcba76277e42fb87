//! Codex CLI session files ("rollouts",
//! `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`, checked
//! against Codex CLI 0.169.0) as memlog drafts.
//!
//! One JSON object per line, `{"timestamp", "type", "payload"}`. The lines
//! memlog reads:
//!
//! - `session_meta`: the session's `id`, `cwd` and `cli_version` (the
//!   first line);
//! - `event_msg` with `payload.type = "item_completed"`, whose `item` is
//!   what the user and the agent saw: a `UserMessage` becomes a
//!   `user_prompt`, an `AgentMessage` an `agent_response`, a
//!   `CommandExecution` (the `exec_command` tool) a `tool_observation` of
//!   tool `Bash` — the name Codex gives that tool in its hook payloads —
//!   with `input.command`, the output the command printed and its exit
//!   code, and `tool_use_id` the call's id, as the PostToolUse hook has it.
//!
//! The model-facing `response_item` lines repeat the same things with the
//! harness's additions (environment context, injected hook context), so
//! they are not read. Every draft's `meta.ref` is the item's id (the line's
//! ordinal when it has none) and its `ts` the line's `timestamp`, so reading
//! the same file again gives the same drafts.

use std::path::Path;

use memlog_format::{Draft, Kind};
use serde_json::{Map, Value};

use crate::sessions::read_text;
use crate::tool::{ToolCall, observation_body};
use crate::{HookOptions, Result};

/// The client name memlog records in `meta.client` for Codex CLI.
pub const CLIENT: &str = "codex";

/// A rollout converted to drafts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rollout {
    /// The session: `session_meta.id`, else the file name.
    pub session_id: String,
    /// Where Codex ran (`session_meta.cwd`).
    pub cwd: Option<String>,
    /// The Codex CLI version that wrote it (`session_meta.cli_version`).
    pub cli_version: Option<String>,
    /// The drafts in file order.
    pub drafts: Vec<Draft>,
    /// Lines that are not JSON objects.
    pub malformed: usize,
}

/// The `session_meta` payload of a rollout's first line, if it is one.
pub fn session_meta(first_line: &str) -> Option<Map<String, Value>> {
    let value: Value = serde_json::from_str(first_line).ok()?;
    if value.get("type")?.as_str()? != "session_meta" {
        return None;
    }
    value.get("payload")?.as_object().cloned()
}

/// Reads one rollout file.
pub fn read(path: impl AsRef<Path>, options: &HookOptions) -> Result<Rollout> {
    let (text, fallback) = read_text(path.as_ref())?;
    Ok(parse(&text, &fallback, options))
}

/// Converts a rollout's text; `fallback_session` names the session when the
/// file has no `session_meta`.
pub fn parse(text: &str, fallback_session: &str, options: &HookOptions) -> Rollout {
    let mut rollout = Rollout {
        session_id: fallback_session.to_string(),
        ..Rollout::default()
    };
    let mut lines = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(map)) => lines.push(map),
            _ => rollout.malformed += 1,
        }
    }
    if let Some(meta) = lines
        .iter()
        .find(|l| l.get("type").and_then(Value::as_str) == Some("session_meta"))
        .and_then(|l| l.get("payload"))
    {
        let text = |key: &str| meta.get(key).and_then(Value::as_str).map(str::to_string);
        if let Some(id) = text("id").filter(|s| !s.is_empty()) {
            rollout.session_id = id;
        }
        rollout.cwd = text("cwd");
        rollout.cli_version = text("cli_version");
    }
    if rollout.session_id.is_empty() {
        rollout.session_id = format!("{CLIENT}-unknown");
    }
    for (ordinal, line) in lines.iter().enumerate() {
        let payload = line.get("payload");
        if line.get("type").and_then(Value::as_str) != Some("event_msg")
            || payload.and_then(|p| p.get("type")).and_then(Value::as_str) != Some("item_completed")
        {
            continue;
        }
        let Some(item) = payload.and_then(|p| p.get("item")) else {
            continue;
        };
        let ts = line
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(|t| memlog_format::time::normalize(t).ok());
        let Some(ts) = ts else {
            continue;
        };
        let reference = item
            .get("id")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| format!("line:{ordinal}"));
        let Some((kind, body)) = item_body(item, options) else {
            continue;
        };
        let mut draft = Draft::new(
            rollout.session_id.clone(),
            ts,
            kind,
            options.project.clone(),
            body,
        );
        let meta = &mut draft.meta;
        if let Some(cwd) = &rollout.cwd {
            meta.insert("cwd".into(), Value::String(cwd.clone()));
        }
        meta.insert("client".into(), Value::String(CLIENT.into()));
        if let Some(v) = rollout
            .cli_version
            .as_ref()
            .or(options.agent_version.as_ref())
        {
            meta.insert("agent_version".into(), Value::String(v.clone()));
        }
        meta.insert("ref".into(), Value::String(reference));
        rollout.drafts.push(draft);
    }
    rollout
}

/// The kind and body of a completed item, if memlog records it.
fn item_body(item: &Value, options: &HookOptions) -> Option<(Kind, Map<String, Value>)> {
    let text_of_content = || {
        let parts: Vec<&str> = item
            .get("content")?
            .as_array()?
            .iter()
            .filter_map(|c| c.get("text").and_then(Value::as_str))
            .collect();
        let text = parts.join("\n");
        (!text.trim().is_empty()).then_some(text)
    };
    let mut body = Map::new();
    match item.get("type").and_then(Value::as_str)? {
        "UserMessage" => {
            body.insert("text".into(), Value::String(text_of_content()?));
            Some((Kind::UserPrompt, body))
        }
        "AgentMessage" => {
            body.insert("text".into(), Value::String(text_of_content()?));
            Some((Kind::AgentResponse, body))
        }
        "CommandExecution" => {
            if options.excludes("Bash") {
                return None;
            }
            let command = command_text(item)?;
            let input = serde_json::json!({ "command": command });
            let output = item
                .get("aggregated_output")
                .cloned()
                .unwrap_or(Value::String(String::new()));
            let failed = item
                .get("exit_code")
                .and_then(Value::as_i64)
                .is_some_and(|c| c != 0);
            let mut body = observation_body(&ToolCall {
                tool: "Bash",
                input: Some(&input),
                response: Some(&output),
                tool_use_id: item.get("id").and_then(Value::as_str),
                is_error: Some(failed),
                ..ToolCall::default()
            });
            if let Some(code) = item.get("exit_code").filter(|c| c.is_i64()) {
                let metadata = body
                    .entry("metadata")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(m) = metadata {
                    m.insert("exit_code".into(), code.clone());
                }
            }
            Some((Kind::ToolObservation, body))
        }
        _ => None,
    }
}

/// The command as the agent wrote it: the parsed command, else the last
/// word of `["/bin/bash", "-lc", "<command>"]`.
fn command_text(item: &Value) -> Option<String> {
    match item.get("command")? {
        Value::String(s) => Some(s.clone()),
        Value::Array(words) => words.last()?.as_str().map(str::to_string),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROLLOUT: &str = include_str!("../../../fixtures/codex/rollout.jsonl");

    #[test]
    fn prompts_commands_and_answers() {
        let r = parse(ROLLOUT, "x", &HookOptions::new("shop"));
        assert_eq!(r.session_id, "01a20e67-babc-7132-9f93-f028d80d9d92");
        assert_eq!(r.cli_version.as_deref(), Some("0.169.0"));
        let kinds: Vec<&str> = r.drafts.iter().map(|d| d.kind.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "user_prompt",
                "agent_response",
                "tool_observation",
                "agent_response"
            ]
        );
        let tool = &r.drafts[2];
        assert_eq!(tool.body["tool"], "Bash");
        assert_eq!(tool.body["input"]["command"], "cat notes.txt");
        assert_eq!(tool.body["output"], "freeze: Wednesday\n");
        assert_eq!(tool.body["tool_use_id"], "call_01");
        assert_eq!(tool.meta["client"], "codex");
        assert_eq!(tool.meta["agent_version"], "0.169.0");
        assert_eq!(r.drafts[0].body["text"], "When is the freeze?");
        // the same file, the same drafts
        assert_eq!(parse(ROLLOUT, "x", &HookOptions::new("shop")), r);
    }

    #[test]
    fn broken_lines_are_counted_not_fatal() {
        let r = parse(
            "not json\n{\"type\":\"event_msg\"}\n",
            "fallback",
            &HookOptions::new("p"),
        );
        assert_eq!(r.malformed, 1);
        assert_eq!(r.session_id, "fallback");
        assert!(r.drafts.is_empty());
    }
}
