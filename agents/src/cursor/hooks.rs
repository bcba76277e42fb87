//! Cursor's agent hooks (the IDE's agent and the `agent` CLI; payload
//! shapes of Cursor's hooks reference and captures of 2026), read as the
//! shared hook protocol.
//!
//! Every payload carries `conversation_id` (the session), `generation_id`,
//! `model`, `cursor_version`, `workspace_roots` (the first is the `cwd`)
//! and `hook_event_name`. memlog installs, and reads ([`to_common`]):
//!
//! | Cursor | read as | notes |
//! | --- | --- | --- |
//! | sessionStart | SessionStart | context is injected (`additional_context`) |
//! | beforeSubmitPrompt | UserPromptSubmit | `prompt`; Cursor takes no context here |
//! | postToolUse | PostToolUse | `tool_output` (a JSON string) as the response; the call id is left out: Cursor's transcripts have none, and a call's capture identity is then its tool and input |
//! | postToolUseFailure | PostToolUseFailure | `error_message` |
//! | afterAgentResponse | Stop | `text` is the answer; its output is ignored (record only) |
//! | sessionEnd | SessionEnd | `reason` |
//!
//! Cursor's own `stop` carries no answer and is not installed.

use serde_json::{Map, Value};

use crate::HookEvent;

/// The shared event a Cursor event is read as.
pub fn common_event(cursor: &str) -> Option<HookEvent> {
    Some(match cursor {
        "sessionStart" => HookEvent::SessionStart,
        "beforeSubmitPrompt" => HookEvent::UserPromptSubmit,
        "postToolUse" => HookEvent::PostToolUse,
        "postToolUseFailure" => HookEvent::PostToolUseFailure,
        "afterAgentResponse" => HookEvent::Stop,
        "preCompact" => HookEvent::PreCompact,
        "sessionEnd" => HookEvent::SessionEnd,
        _ => return None,
    })
}

/// The event name (as installed, else the payload's) and payload in the
/// shared shape.
pub fn to_common(event_name: &str, raw: Value) -> (String, Value) {
    let declared = raw
        .get("hook_event_name")
        .and_then(Value::as_str)
        .unwrap_or(event_name)
        .to_string();
    let Some(event) = common_event(&declared) else {
        return (declared, raw);
    };
    let Value::Object(mut map) = raw else {
        return (event.as_str().to_string(), raw);
    };
    if !map.contains_key("session_id")
        && let Some(id) = map.get("conversation_id").cloned()
    {
        map.insert("session_id".into(), id);
    }
    if !map.contains_key("cwd")
        && let Some(root) = map
            .get("workspace_roots")
            .and_then(Value::as_array)
            .and_then(|r| r.first())
            .cloned()
    {
        map.insert("cwd".into(), root);
    }
    match event {
        HookEvent::PostToolUse => {
            map.remove("tool_use_id");
            if let Some(output) = map.remove("tool_output") {
                map.insert("tool_response".into(), parsed(output));
            }
        }
        HookEvent::PostToolUseFailure => {
            map.remove("tool_use_id");
            if let Some(message) = map.remove("error_message") {
                map.insert("error".into(), message);
            }
        }
        HookEvent::Stop => {
            if let Some(text) = map.remove("text") {
                map.insert("last_assistant_message".into(), text);
            }
        }
        _ => {}
    }
    map.insert(
        "hook_event_name".into(),
        Value::String(event.as_str().into()),
    );
    (event.as_str().to_string(), Value::Object(map))
}

/// A JSON string parsed (`tool_output` is the tool's result as JSON text),
/// else kept.
fn parsed(value: Value) -> Value {
    match &value {
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(v @ Value::Object(_)) => v,
            _ => value,
        },
        _ => value,
    }
}

/// What Cursor reads back from sessionStart to add `context`.
pub fn session_start_output(context: &str) -> String {
    let mut out = Map::new();
    out.insert("additional_context".into(), Value::String(context.into()));
    Value::Object(out).to_string()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{Agent, CodeContext, HookOptions, drafts_at};

    fn read(event: &str, payload: &str) -> Vec<memlog_format::Draft> {
        let agent = &crate::cursor::Cursor;
        let payload = agent.read_payload(event, payload.as_bytes()).unwrap();
        let options = HookOptions {
            agent,
            ..HookOptions::new("p")
        };
        drafts_at(
            &payload,
            &CodeContext::default(),
            &options,
            "2026-11-26T11:00:00.000Z",
        )
    }

    #[test]
    fn captured_shapes_read_as_the_shared_protocol() {
        let d = read(
            "beforeSubmitPrompt",
            include_str!("../../../fixtures/cursor/hooks/before_submit_prompt.json"),
        );
        assert_eq!(d[0].kind.as_str(), "user_prompt");
        assert_eq!(d[0].session, "c0ffee00-1111-4222-8333-444455556666");
        assert_eq!(d[0].meta["client"], "cursor");
        assert_eq!(d[0].meta["cwd"], "/work/shop");
        let d = read(
            "postToolUse",
            include_str!("../../../fixtures/cursor/hooks/post_tool_use.json"),
        );
        assert_eq!(d[0].body["tool"], "Shell");
        assert_eq!(d[0].body["input"]["command"], "cat notes.txt");
        assert!(d[0].body.get("tool_use_id").is_none());
        assert!(
            d[0].body["output"]
                .as_str()
                .unwrap()
                .contains("freeze: Wednesday")
        );
        let d = read(
            "afterAgentResponse",
            include_str!("../../../fixtures/cursor/hooks/after_agent_response.json"),
        );
        assert_eq!(d[0].kind.as_str(), "agent_response");
        assert_eq!(d[0].body["text"], "The freeze is Wednesday.");
        let d = read(
            "sessionStart",
            include_str!("../../../fixtures/cursor/hooks/session_start.json"),
        );
        assert_eq!(d[0].kind.as_str(), "session_start");
    }

    #[test]
    fn context_only_at_session_start() {
        let agent = &crate::cursor::Cursor;
        assert!(agent.takes_context(HookEvent::SessionStart));
        assert!(!agent.takes_context(HookEvent::UserPromptSubmit));
        let out = agent
            .hook_output(HookEvent::SessionStart, Some("memo"))
            .unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&out).unwrap(),
            json!({"additional_context": "memo"})
        );
    }
}
