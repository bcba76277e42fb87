//! What a hook prints for the agent to read back: context to inject, and
//! the Stop hook's instruction to keep going.

use serde_json::json;

use super::event::HookEvent;

/// What a hook prints on stdout for Claude Code to add `additional_context`
/// to the conversation:
/// `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"…"}}`.
/// SessionStart, UserPromptSubmit and (file-aware recall) PreToolUse and
/// PostToolUse inject context this way; for other events, and when there
/// is no (or only blank) context, there is nothing to print.
pub fn hook_output(event: HookEvent, additional_context: Option<&str>) -> Option<String> {
    let context = additional_context.filter(|c| !c.trim().is_empty())?;
    // around a tool call: file-aware recall, for agents that read it back
    let tool_call = matches!(event, HookEvent::PreToolUse | HookEvent::PostToolUse);
    if !event.injects_context() && !tool_call {
        return None;
    }
    let output = json!({
        "hookSpecificOutput": {
            "hookEventName": event.as_str(),
            "additionalContext": context,
        }
    });
    Some(output.to_string())
}

/// What a Stop hook prints to keep the agent going with `reason` as its
/// next instruction: `{"decision":"block","reason":"…"}`.
pub fn stop_block_output(reason: &str) -> String {
    json!({"decision": "block", "reason": reason}).to_string()
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    #[test]
    fn output_for_context_injection() {
        let out = hook_output(HookEvent::UserPromptSubmit, Some("memo \"quoted\"")).unwrap();
        let parsed: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            parsed,
            json!({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                          "additionalContext": "memo \"quoted\""}})
        );
        assert!(
            hook_output(HookEvent::SessionStart, Some("x"))
                .unwrap()
                .contains("\"SessionStart\"")
        );
        assert_eq!(hook_output(HookEvent::UserPromptSubmit, None), None);
        assert_eq!(hook_output(HookEvent::UserPromptSubmit, Some(" ")), None);
        assert_eq!(hook_output(HookEvent::Stop, Some("x")), None);
    }
}
