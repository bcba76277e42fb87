//! OpenCode sessions as `opencode export <session>` writes them (checked
//! against 1.18.33): `{"info": session, "messages": [{"info": message,
//! "parts": [part, …]}]}`, as memlog drafts. (OpenCode keeps its sessions
//! in a SQLite database, which only memlog's indexer would read: an export
//! is the file a user hands to `memlog import opencode`.)
//!
//! - `info`: the session's `id`, `directory` and `version`;
//! - a `user` message: its text parts (not OpenCode's `synthetic` ones)
//!   joined, a `user_prompt` at `info.time.created`;
//! - an `assistant` message: its text parts joined, an `agent_response`;
//!   each `tool` part whose `state.status` is `completed` or `error` a
//!   `tool_observation` (`tool`, `state.input`, `state.output` or
//!   `state.error`) with `tool_use_id` its `callID`, as the plugin's
//!   PostToolUse has it, at `state.time.end`; a completed `todowrite`
//!   call gives its list's task events instead, as the plugin's hook does
//!   (`todo.rs`).
//!
//! Times are milliseconds since the epoch; every draft's `meta.ref` is its
//! part's (or message's) `id`.

use std::path::Path;

use memlog_format::Kind;
use serde_json::{Map, Value};

use crate::sessions::{file_draft, read_text, text_body};
use crate::todo::observed_plan_events;
use crate::tool::{Observation, ToolCall, observe};
use crate::{HookOptions, Result, SessionFile};

/// Reads one export.
pub fn read(path: &Path, options: &HookOptions) -> Result<SessionFile> {
    let (text, stem) = read_text(path)?;
    Ok(parse(&text, &stem, options))
}

/// Converts an export's text; `fallback_session` names the session when
/// the export has no `info.id`.
pub fn parse(text: &str, fallback_session: &str, options: &HookOptions) -> SessionFile {
    let mut file = SessionFile {
        session_id: fallback_session.to_string(),
        skipped: Some(0),
        ..SessionFile::default()
    };
    let export: Value = match serde_json::from_str(text) {
        Ok(v @ Value::Object(_)) => v,
        _ => {
            file.malformed = 1;
            return file;
        }
    };
    let info = export.get("info").unwrap_or(&Value::Null);
    if let Some(id) = info.get("id").and_then(Value::as_str) {
        file.session_id = id.to_string();
    }
    file.cwd = info
        .get("directory")
        .and_then(Value::as_str)
        .map(str::to_string);
    let version = info.get("version").and_then(Value::as_str);
    let mut drafts = Vec::new();
    let mut skipped = 0;
    for message in export
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let info = message.get("info").unwrap_or(&Value::Null);
        let (Some(role), Some(id), Some(ts)) = (
            info.get("role").and_then(Value::as_str),
            info.get("id").and_then(Value::as_str),
            millis(info.pointer("/time/created")),
        ) else {
            skipped += 1;
            continue;
        };
        let parts: &[Value] = message
            .get("parts")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let text = parts
            .iter()
            .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
            .filter(|p| p.get("synthetic").and_then(Value::as_bool) != Some(true))
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n");
        let text = text.trim();
        let make = |ts: &str, kind: Kind, body: Map<String, Value>, reference: &str| {
            file_draft(&file, version, ts, kind, body, options, reference)
        };
        match role {
            "user" if !text.is_empty() => {
                drafts.push(make(&ts, Kind::UserPrompt, text_body(text), id));
            }
            "assistant" => {
                for part in parts {
                    let Some((call_ts, observation, part_id)) = tool_part(part, options) else {
                        continue;
                    };
                    let call_ts = call_ts.as_deref().unwrap_or(&ts);
                    // a `todowrite` call is its list's task events, as the
                    // plugin's hook records it
                    if let Some(tasks) = observed_plan_events(&observation.body, &options.project) {
                        for task in tasks {
                            let task_ref = task.reference(part_id);
                            drafts.push(make(call_ts, task.kind, task.body, &task_ref));
                        }
                        continue;
                    }
                    drafts.push(
                        observation
                            .draft(|body| make(call_ts, Kind::ToolObservation, body, part_id)),
                    );
                }
                if !text.is_empty() {
                    let end = millis(info.pointer("/time/completed")).unwrap_or(ts);
                    drafts.push(make(&end, Kind::AgentResponse, text_body(text), id));
                }
            }
            _ => {}
        }
    }
    file.drafts = SessionFile::numbered(drafts);
    file.skipped = Some(skipped);
    file
}

/// A finished tool part's observation: (end time, observation, part id).
fn tool_part<'p>(
    part: &'p Value,
    options: &HookOptions,
) -> Option<(Option<String>, Observation, &'p str)> {
    if part.get("type").and_then(Value::as_str) != Some("tool") {
        return None;
    }
    let tool = part.get("tool").and_then(Value::as_str)?;
    let state = part.get("state")?;
    let failed = match state.get("status").and_then(Value::as_str)? {
        "completed" => false,
        "error" => true,
        _ => return None,
    };
    if options.excludes(tool) {
        return None;
    }
    let output = state
        .get(if failed { "error" } else { "output" })
        .and_then(Value::as_str)
        .map(str::to_string);
    let observation = observe(&ToolCall {
        tool,
        input: state.get("input"),
        result_text: output,
        tool_use_id: part.get("callID").and_then(Value::as_str),
        is_error: Some(failed),
        ..ToolCall::default()
    });
    let id = part.get("id").and_then(Value::as_str).unwrap_or(tool);
    Some((millis(state.pointer("/time/end")), observation, id))
}

/// Milliseconds since the epoch in memlog's time form.
fn millis(value: Option<&Value>) -> Option<String> {
    let ms = value?.as_i64()?;
    jiff::Timestamp::from_millisecond(ms)
        .ok()
        .map(memlog_format::time::format)
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXPORT: &str =
        include_str!("../../../fixtures/opencode/ses_5f2a9c1e7ffeQx3Lr0mB8kTz1d.json");

    /// Field test 12a: memlog's own call, read from the export as its
    /// plugin's hook records it (a failed one, here).
    #[test]
    fn memlogs_own_call_is_withheld_and_personal() {
        let options = HookOptions {
            agent: &crate::opencode::OpenCode,
            ..HookOptions::new("shop")
        };
        let export = EXPORT
            .replace("npm test", "memlog search cart")
            .replace("1 failing: cart total", "(personal) heliotrope");
        let f = parse(&export, "x", &options);
        crate::tool::assert_own_call_kept_private(f.drafts.iter().map(|(_, d)| d), "heliotrope");
    }

    #[test]
    fn prompts_calls_and_answers() {
        let options = HookOptions {
            agent: &crate::opencode::OpenCode,
            ..HookOptions::new("shop")
        };
        let f = parse(EXPORT, "x", &options);
        assert_eq!(f.session_id, "ses_5f2a9c1e7ffeQx3Lr0mB8kTz1d");
        assert_eq!(f.cwd.as_deref(), Some("/work/shop"));
        let kinds: Vec<&str> = f.drafts.iter().map(|(_, d)| d.kind.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "user_prompt",
                "tool_observation",
                "agent_response",
                "tool_observation",
                "agent_response"
            ]
        );
        let read = &f.drafts[1].1;
        assert_eq!(read.body["tool"], "read");
        assert_eq!(read.body["tool_use_id"], "toolu_oc01");
        assert!(
            read.body["output"]
                .as_str()
                .unwrap()
                .contains("freeze: Wednesday")
        );
        let failed = &f.drafts[3].1;
        assert_eq!(failed.body["success"], false);
        assert_eq!(f.drafts[0].1.ts, "2026-11-26T12:00:00.000Z");
        assert!(f.drafts.iter().all(|(_, d)| d.meta["client"] == "opencode"));
        assert_eq!(parse(EXPORT, "x", &options), f);
    }
}
