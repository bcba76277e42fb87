//! Gemini CLI's hooks (checked against Gemini CLI 0.61.0, its bundled
//! `docs/hooks/reference.md` and payloads it sent), read as the shared hook
//! protocol.
//!
//! Gemini CLI names its events differently and shapes two payloads its own
//! way; once translated ([`to_common`]) the shared reader records them:
//!
//! | Gemini CLI | read as | notes |
//! | --- | --- | --- |
//! | SessionStart | SessionStart | `source` |
//! | BeforeAgent | UserPromptSubmit | `prompt`, without the `<hook_context>` blocks Gemini prepends (context hooks injected) |
//! | AfterTool | PostToolUse | `tool_response.returnDisplay` (else, or when empty, `llmContent`) as the output; `error`, or a shell's non-zero `Exit Code:` in `llmContent`, makes it a failure; no call id |
//! | AfterAgent | Stop | `prompt_response` is the answer (the turn's text) |
//! | PreCompress | PreCompact | `trigger` |
//! | SessionEnd | SessionEnd | `reason` |
//!
//! Context is injected with the same `hookSpecificOutput.additionalContext`
//! under Gemini's event name ([`event_name`]); Gemini wraps it in
//! `<hook_context>`.

use serde_json::Value;

use crate::HookEvent;

/// The opening tag of context Gemini CLI adds to the prompt for hooks.
const CONTEXT_OPEN: &str = "<hook_context>";
const CONTEXT_CLOSE: &str = "</hook_context>";

/// The shared event a Gemini CLI event is read as, by its Gemini name.
pub fn common_event(gemini: &str) -> Option<HookEvent> {
    Some(match gemini {
        "SessionStart" => HookEvent::SessionStart,
        "BeforeAgent" => HookEvent::UserPromptSubmit,
        "AfterTool" => HookEvent::PostToolUse,
        "AfterAgent" => HookEvent::Stop,
        "PreCompress" => HookEvent::PreCompact,
        "SessionEnd" => HookEvent::SessionEnd,
        _ => return None,
    })
}

/// Gemini CLI's name for a shared event (for the injection output).
pub fn event_name(event: HookEvent) -> &'static str {
    match event {
        HookEvent::UserPromptSubmit => "BeforeAgent",
        HookEvent::PostToolUse | HookEvent::PostToolUseFailure => "AfterTool",
        HookEvent::Stop => "AfterAgent",
        HookEvent::PreCompact => "PreCompress",
        other => other.as_str(),
    }
}

/// The event name (`gemini`, as the hook was installed) and payload in the
/// shared shape. Events without a shared meaning keep their name and are
/// recorded as unknown hooks.
pub fn to_common(gemini: &str, raw: Value) -> (String, Value) {
    let declared = raw
        .get("hook_event_name")
        .and_then(Value::as_str)
        .unwrap_or(gemini)
        .to_string();
    let Some(event) = common_event(&declared) else {
        return (declared, raw);
    };
    let Value::Object(mut map) = raw else {
        return (event.as_str().to_string(), raw);
    };
    let mut event = event;
    map.insert(
        "hook_event_name".into(),
        Value::String(event.as_str().into()),
    );
    match event {
        HookEvent::UserPromptSubmit => {
            if let Some(Value::String(prompt)) = map.get_mut("prompt") {
                *prompt = strip_hook_context(prompt).to_string();
            }
        }
        HookEvent::PostToolUse => {
            if let Some(Value::Object(response)) = map.get("tool_response").cloned() {
                // a shell command that failed is no error of the tool's:
                // its exit code is in what the model saw
                let exit_code = response
                    .get("llmContent")
                    .and_then(Value::as_str)
                    .and_then(super::chat::shell_exit_code)
                    .filter(|code| *code != 0);
                let error = response
                    .get("error")
                    .filter(|e| !e.is_null())
                    .map(error_text)
                    .or_else(|| exit_code.map(|code| format!("exit code {code}")));
                // (`read_file` displays nothing: its content is only in
                // what the model saw)
                let shown = ["returnDisplay", "llmContent"]
                    .iter()
                    .find_map(|k| {
                        response
                            .get(*k)
                            .and_then(Value::as_str)
                            .filter(|s| !s.trim().is_empty())
                    })
                    .unwrap_or("")
                    .to_string();
                map.insert("tool_response".into(), Value::String(shown));
                if let Some(error) = error {
                    event = HookEvent::PostToolUseFailure;
                    map.insert(
                        "hook_event_name".into(),
                        Value::String(event.as_str().into()),
                    );
                    map.insert("error".into(), Value::String(error));
                }
            }
        }
        HookEvent::Stop => {
            if let Some(answer) = map.remove("prompt_response") {
                map.insert("last_assistant_message".into(), answer);
            }
            map.remove("prompt");
        }
        _ => {}
    }
    (event.as_str().to_string(), Value::Object(map))
}

fn error_text(error: &Value) -> String {
    match error {
        Value::String(s) => s.clone(),
        Value::Object(m) => m
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| Value::Object(m.clone()).to_string()),
        other => other.to_string(),
    }
}

/// The prompt without the `<hook_context>…</hook_context>` blocks Gemini
/// CLI puts before it (context injected by hooks, memlog's own included).
pub fn strip_hook_context(prompt: &str) -> &str {
    let mut rest = prompt.trim_start();
    while let Some(after) = rest.strip_prefix(CONTEXT_OPEN) {
        match after.find(CONTEXT_CLOSE) {
            Some(end) => rest = after[end + CONTEXT_CLOSE.len()..].trim_start(),
            None => break,
        }
    }
    rest
}

/// The injection output under Gemini's event name.
pub fn rename_output(output: String, event: HookEvent) -> String {
    match serde_json::from_str::<Value>(&output) {
        Ok(Value::Object(mut map)) => {
            if let Some(Value::Object(specific)) = map.get_mut("hookSpecificOutput") {
                specific.insert(
                    "hookEventName".into(),
                    Value::String(event_name(event).into()),
                );
            }
            Value::Object(map).to_string()
        }
        _ => output,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{CodeContext, HookOptions, drafts, parse_payload};

    fn read(event: &str, payload: Value) -> Vec<memlog_format::Draft> {
        let (name, common) = to_common(event, payload);
        let payload = parse_payload(&name, common.to_string().as_bytes()).unwrap();
        drafts(&payload, &CodeContext::default(), &HookOptions::new("p"))
    }

    #[test]
    fn the_prompt_loses_the_injected_context() {
        let d = read(
            "BeforeAgent",
            json!({"session_id": "g1", "hook_event_name": "BeforeAgent",
                   "prompt": "<hook_context>MEMORY: x</hook_context>\n\nWhen is the freeze?"}),
        );
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].kind.as_str(), "user_prompt");
        assert_eq!(d[0].body["text"], "When is the freeze?");
    }

    #[test]
    fn tools_and_answers() {
        let tool = read(
            "AfterTool",
            json!({"session_id": "g1", "hook_event_name": "AfterTool",
                   "tool_name": "run_shell_command", "tool_input": {"command": "cat notes.txt"},
                   "tool_response": {"llmContent": "<untrusted_context>Output: x</untrusted_context>",
                                     "returnDisplay": "freeze: Wednesday"}}),
        );
        assert_eq!(tool[0].body["tool"], "run_shell_command");
        assert_eq!(tool[0].body["output"], "freeze: Wednesday");
        assert_eq!(tool[0].body["success"], true);
        // a command that exits non-zero failed, as the model was told
        let failed = read(
            "AfterTool",
            json!({"session_id": "g1", "hook_event_name": "AfterTool",
                   "tool_name": "run_shell_command", "tool_input": {"command": "exit 3"},
                   "tool_response": {"llmContent": "Output: boom\nExit Code: 3\nProcess Group PGID: 1",
                                     "returnDisplay": "boom"}}),
        );
        assert_eq!(failed[0].body["success"], false, "{:?}", failed[0].body);
        assert_eq!(failed[0].body["error"], "exit code 3");
        assert_eq!(failed[0].body["output"], "boom");
        // `read_file` displays nothing: the content is what the model saw
        // (field test 9a: recorded empty)
        let read_file = read(
            "AfterTool",
            json!({"session_id": "g1", "hook_event_name": "AfterTool",
                   "tool_name": "read_file", "tool_input": {"absolute_path": "/w/notes.txt"},
                   "tool_response": {"llmContent": "The freeze moved to Thursday noon.\n",
                                     "returnDisplay": ""}}),
        );
        assert_eq!(
            read_file[0].body["output"],
            "The freeze moved to Thursday noon.\n"
        );
        let answer = read(
            "AfterAgent",
            json!({"session_id": "g1", "hook_event_name": "AfterAgent", "prompt": "q",
                   "prompt_response": "It is Wednesday.", "stop_hook_active": false}),
        );
        assert_eq!(answer[0].kind.as_str(), "agent_response");
        assert_eq!(answer[0].body["text"], "It is Wednesday.");
    }

    #[test]
    fn output_uses_gemini_event_names() {
        let out = crate::hook_output(HookEvent::UserPromptSubmit, Some("ctx")).unwrap();
        let renamed: Value =
            serde_json::from_str(&rename_output(out, HookEvent::UserPromptSubmit)).unwrap();
        assert_eq!(
            renamed["hookSpecificOutput"]["hookEventName"],
            "BeforeAgent"
        );
        assert_eq!(renamed["hookSpecificOutput"]["additionalContext"], "ctx");
    }
}
