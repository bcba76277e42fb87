//! Antigravity CLI's hooks (`agy`, shapes of payloads captured from
//! 1.0.x–1.1.x), read as the shared hook protocol.
//!
//! agy's payloads are camelCase and carry little: a `conversationId` (the
//! session), `workspacePaths`, `transcriptPath`, and per event an
//! `invocationNum`, a `toolCall` or a `stepIdx`. No payload carries the
//! user's prompt or the agent's answer, and PostToolUse carries only a step
//! number (and an `error`): those come from the transcript, which agy
//! writes after Stop, by `memlog import antigravity`. So memlog installs
//! two events ([`to_common`]):
//!
//! | agy | read as | notes |
//! | --- | --- | --- |
//! | PreInvocation, `invocationNum` 0 (a turn's first model call) | SessionStart | `source`: `startup` for the conversation's first turn (`initialNumSteps` ≤ 1: the prompt is step 0), else `resume`; `model` from `modelName`; the context is injected |
//! | PreInvocation, later calls | nothing | read as a PreToolUse, which hooks do not record |
//! | Stop | Stop | no answer (the transcript is not written yet) |
//!
//! There is no SessionStart or UserPromptSubmit: the briefing is injected
//! at each turn's first invocation as an ephemeral message
//! (`{"injectSteps":[{"ephemeralMessage": …}]}`), seen by that invocation
//! only.

use serde_json::{Map, Value, json};

use crate::HookEvent;

/// The event name (as installed) and payload in the shared shape.
pub fn to_common(event_name: &str, raw: Value) -> (String, Value) {
    let Value::Object(mut map) = raw else {
        return (event_name.to_string(), raw);
    };
    let event = match event_name {
        "PreInvocation" => {
            let invocation = map.get("invocationNum").and_then(Value::as_u64);
            if invocation.unwrap_or(0) == 0 {
                let steps = map.get("initialNumSteps").and_then(Value::as_u64);
                let source = if steps.unwrap_or(0) <= 1 {
                    "startup"
                } else {
                    "resume"
                };
                map.insert("source".into(), Value::String(source.into()));
                HookEvent::SessionStart
            } else {
                HookEvent::PreToolUse
            }
        }
        "Stop" => HookEvent::Stop,
        "PreToolUse" => HookEvent::PreToolUse,
        other => return (other.to_string(), Value::Object(map)),
    };
    rename(&mut map);
    map.insert(
        "hook_event_name".into(),
        Value::String(event.as_str().into()),
    );
    (event.as_str().to_string(), Value::Object(map))
}

/// agy's fields under the shared protocol's names.
fn rename(map: &mut Map<String, Value>) {
    if let Some(id) = map.remove("conversationId") {
        map.insert("session_id".into(), id);
    }
    if let Some(path) = map.remove("transcriptPath") {
        map.insert("transcript_path".into(), path);
    }
    if let Some(model) = map.remove("modelName") {
        map.insert("model".into(), model);
    }
    let workspace = map
        .get("workspacePaths")
        .and_then(Value::as_array)
        .and_then(|paths| paths.first())
        .cloned();
    if let Some(cwd) = workspace {
        map.insert("cwd".into(), cwd);
    }
}

/// What agy reads back from a PreInvocation hook to show `context` to the
/// invocation's model.
pub fn inject_output(context: &str) -> String {
    json!({"injectSteps": [{"ephemeralMessage": context}]}).to_string()
}

/// A tool argument as the model meant it: agy writes string arguments
/// double-encoded (`"\"ls\""`) in transcripts and sometimes in payloads;
/// such a string is decoded, anything else kept.
pub fn decode_argument(value: &Value) -> Value {
    match value {
        Value::String(s) if s.starts_with('"') => match serde_json::from_str::<Value>(s) {
            Ok(decoded @ Value::String(_)) => decoded,
            _ => value.clone(),
        },
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Agent, CodeContext, HookOptions, drafts_at};

    fn read(event: &str, payload: &str) -> Vec<memlog_format::Draft> {
        let agent = &crate::antigravity::Antigravity;
        let payload = agent.read_payload(event, payload.as_bytes()).unwrap();
        let options = HookOptions {
            agent,
            ..HookOptions::new("p")
        };
        drafts_at(
            &payload,
            &CodeContext::default(),
            &options,
            "2026-11-26T10:00:00.000Z",
        )
    }

    #[test]
    fn a_turns_first_invocation_starts_it_and_later_ones_record_nothing() {
        let first = read(
            "PreInvocation",
            include_str!("../../../fixtures/antigravity/hooks/pre_invocation_first.json"),
        );
        assert_eq!(first.len(), 1);
        let d = &first[0];
        assert_eq!(d.kind.as_str(), "session_start");
        assert_eq!(d.session, "7b2e4f10-3c5d-4a8e-9f21-6d0c8b4a2e57");
        assert_eq!(d.body["source"], "startup");
        assert_eq!(d.body["model"], "gemini-3.5-flash");
        assert_eq!(d.meta["client"], "antigravity");
        assert_eq!(d.meta["cwd"], "/work/shop");
        let later = read(
            "PreInvocation",
            include_str!("../../../fixtures/antigravity/hooks/pre_invocation_later.json"),
        );
        assert!(later.is_empty(), "{later:?}");
        let stop = read(
            "Stop",
            include_str!("../../../fixtures/antigravity/hooks/stop.json"),
        );
        assert!(stop.is_empty(), "{stop:?}");
    }

    #[test]
    fn context_is_an_ephemeral_message_of_the_first_invocation() {
        let agent = &crate::antigravity::Antigravity;
        let out = agent
            .hook_output(HookEvent::SessionStart, Some("memo"))
            .unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&out).unwrap(),
            json!({"injectSteps": [{"ephemeralMessage": "memo"}]})
        );
        assert_eq!(agent.hook_output(HookEvent::Stop, Some("memo")), None);
    }

    #[test]
    fn double_encoded_arguments_are_decoded() {
        assert_eq!(decode_argument(&json!("\"ls -a\"")), json!("ls -a"));
        assert_eq!(decode_argument(&json!("ls")), json!("ls"));
        assert_eq!(decode_argument(&json!("2000")), json!("2000"));
        assert_eq!(decode_argument(&json!(5)), json!(5));
    }
}
