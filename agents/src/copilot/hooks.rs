//! Copilot CLI's hooks (checked against 1.0.102 and payloads it sent),
//! read as the shared hook protocol.
//!
//! memlog installs the camelCase events, whose payloads name tools as the
//! session's `events.jsonl` does (`bash`, `view`; the PascalCase variants
//! rename them), and translates them ([`to_common`]):
//!
//! | Copilot CLI | read as | notes |
//! | --- | --- | --- |
//! | sessionStart | SessionStart | `source` (`new`, `resume`, `startup`) |
//! | userPromptSubmitted | UserPromptSubmit | `prompt` |
//! | preToolUse | PreToolUse | `toolArgs` as the input; its `additionalContext` reaches the model with the call (checked with 1.0.102): file-aware recall |
//! | postToolUse | PostToolUse | `toolArgs` as the input, `toolResult.textResultForLlm` as the output; a `resultType` other than `success`, or a shell's non-zero exit code in that text, makes it a failure; no call id |
//! | postToolUseFailure | PostToolUseFailure | `error` |
//! | agentStop | Stop | no answer in the payload: it is read from `transcriptPath` |
//! | preCompact | PreCompact | `trigger`, `customInstructions` |
//! | sessionEnd | SessionEnd | `reason` |

use serde_json::{Map, Value};

use crate::HookEvent;

/// The shared event a Copilot CLI event is read as, by its camelCase name.
pub fn common_event(copilot: &str) -> Option<HookEvent> {
    Some(match copilot {
        "sessionStart" => HookEvent::SessionStart,
        "userPromptSubmitted" => HookEvent::UserPromptSubmit,
        "preToolUse" => HookEvent::PreToolUse,
        "postToolUse" => HookEvent::PostToolUse,
        "postToolUseFailure" => HookEvent::PostToolUseFailure,
        "agentStop" => HookEvent::Stop,
        "subagentStop" => HookEvent::SubagentStop,
        "preCompact" => HookEvent::PreCompact,
        "sessionEnd" => HookEvent::SessionEnd,
        _ => return None,
    })
}

/// Payload fields renamed to the shared protocol's.
const RENAMED: [(&str, &str); 7] = [
    ("sessionId", "session_id"),
    ("toolName", "tool_name"),
    ("toolArgs", "tool_input"),
    ("transcriptPath", "transcript_path"),
    ("customInstructions", "custom_instructions"),
    ("agentName", "agent_type"),
    ("initialPrompt", "initial_prompt"),
];

/// The event name (as installed) and payload in the shared shape. Events
/// without a shared meaning keep their name and are recorded as unknown
/// hooks.
pub fn to_common(event_name: &str, raw: Value) -> (String, Value) {
    let Some(mut event) = common_event(event_name) else {
        return (event_name.to_string(), raw);
    };
    let Value::Object(mut map) = raw else {
        return (event.as_str().to_string(), raw);
    };
    for (from, to) in RENAMED {
        if let Some(value) = map.remove(from) {
            map.insert(to.into(), value);
        }
    }
    if let Some(Value::Object(result)) = map.remove("toolResult") {
        let text = result
            .get("textResultForLlm")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let kind = result.get("resultType").and_then(Value::as_str);
        if kind.is_some_and(|k| k != "success") {
            event = HookEvent::PostToolUseFailure;
            map.insert("error".into(), Value::String(failure(kind, &text)));
        } else if let Some(code) = shell_exit_code(&text).filter(|c| *c != 0) {
            // a command that ran is a success to Copilot, whatever it
            // exited with: its exit code is in what the model saw
            event = HookEvent::PostToolUseFailure;
            map.insert("error".into(), Value::String(format!("exit code {code}")));
        }
        map.insert("tool_response".into(), Value::String(text));
    }
    if let Some(Value::Object(error)) = map.get("error") {
        let message = error_message(error);
        map.insert("error".into(), Value::String(message));
    }
    map.insert(
        "hook_event_name".into(),
        Value::String(event.as_str().into()),
    );
    (event.as_str().to_string(), Value::Object(map))
}

/// The exit code a shell result ends with (`<shellId: 0 completed with
/// exit code 1>`).
fn shell_exit_code(text: &str) -> Option<i64> {
    let (_, after) = text.rsplit_once("completed with exit code ")?;
    let digits: String = after
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '-')
        .collect();
    digits.parse().ok()
}

/// The error of a result that is not a success: its text, else its kind.
fn failure(kind: Option<&str>, text: &str) -> String {
    let text = text.trim();
    if text.is_empty() {
        kind.unwrap_or("failure").to_string()
    } else {
        text.to_string()
    }
}

fn error_message(error: &Map<String, Value>) -> String {
    error
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| Value::Object(error.clone()).to_string())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{Agent, CodeContext, HookOptions, drafts_at};

    fn read(event: &str, payload: Value) -> Vec<memlog_format::Draft> {
        let agent = &crate::copilot::Copilot;
        let payload = agent
            .read_payload(event, payload.to_string().as_bytes())
            .unwrap();
        let options = HookOptions {
            agent,
            ..HookOptions::new("p")
        };
        drafts_at(
            &payload,
            &CodeContext::default(),
            &options,
            "2026-11-26T03:22:08.300Z",
        )
    }

    #[test]
    fn captured_payloads_read_as_the_shared_protocol() {
        let cwd = "/tmp/repo";
        let d = read(
            "userPromptSubmitted",
            json!({"sessionId": "s1", "timestamp": 1795663328048u64, "cwd": cwd,
                   "prompt": "When is the freeze?"}),
        );
        assert_eq!(d[0].kind.as_str(), "user_prompt");
        assert_eq!(d[0].session, "s1");
        assert_eq!(d[0].meta["client"], "copilot-cli");
        assert_eq!(d[0].meta["hook"], "UserPromptSubmit");
        let d = read(
            "postToolUse",
            json!({"sessionId": "s1", "cwd": cwd, "toolName": "bash",
                   "toolArgs": {"command": "cat notes.txt", "description": "read notes"},
                   "toolResult": {"resultType": "success",
                                  "textResultForLlm": "freeze: Wednesday\n<shellId: 0 completed with exit code 0>"}}),
        );
        assert_eq!(d[0].body["tool"], "bash");
        assert_eq!(d[0].body["input"]["command"], "cat notes.txt");
        assert!(
            d[0].body["output"]
                .as_str()
                .unwrap()
                .starts_with("freeze: Wednesday")
        );
        assert_eq!(d[0].body["success"], true);
        // `ls; false`: a success to Copilot, a failure here
        let failed = read(
            "postToolUse",
            json!({"sessionId": "c1", "toolName": "bash", "toolArgs": {"command": "ls; false"},
                   "toolResult": {"resultType": "success",
                                  "textResultForLlm": "\n<shellId: 0 completed with exit code 1>"}}),
        );
        assert_eq!(failed[0].body["success"], false, "{:?}", failed[0].body);
        assert_eq!(failed[0].body["error"], "exit code 1");
        let d = read(
            "postToolUse",
            json!({"sessionId": "s1", "toolName": "bash", "toolArgs": {"command": "false"},
                   "toolResult": {"resultType": "failure", "textResultForLlm": "exit code 1"}}),
        );
        assert_eq!(d[0].body["success"], false);
        assert_eq!(d[0].meta["hook"], "PostToolUseFailure");
    }

    #[test]
    fn context_is_injected_as_additional_context() {
        let agent = &crate::copilot::Copilot;
        let out = agent
            .hook_output(HookEvent::UserPromptSubmit, Some("memo"))
            .unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&out).unwrap(),
            json!({"additionalContext": "memo"})
        );
        assert_eq!(agent.hook_output(HookEvent::Stop, Some("memo")), None);
    }
}
