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
//! | AfterTool | PostToolUse | `tool_response.returnDisplay` (else `llmContent`) as the output; `error` makes it a failure; no call id |
//! | AfterAgent | Stop | `prompt_response` is the answer (the turn's text) |
//! | PreCompress | PreCompact | `trigger` |
//! | SessionEnd | SessionEnd | `reason` |
//!
//! Context is injected with the same `hookSpecificOutput.additionalContext`
//! under Gemini's event name ([`event_name`]); Gemini wraps it in
//! `<hook_context>`.
//!
//! ## Saved chats
//!
//! [`read_chat`] reads `~/.gemini/tmp/<project>/chats/session-*.jsonl`: a
//! header line (`sessionId`, `startTime`), then records with an `id` (a
//! record whose id was seen replaces the earlier one) and `$set` updates
//! (`messages`: records in bulk). A `user` record with text is a prompt
//! (without `<hook_context>` blocks; Gemini's own `<session_context>` is
//! left out), a `gemini` record's `content` is what the agent said and its
//! `toolCalls` (with `resultDisplay`) are tool observations. The agent's
//! texts of one turn become one `agent_response`, joined by newlines, as
//! the AfterAgent hook sees them. Tool observations carry no `tool_use_id`
//! (the hooks have none to match it): they are matched by tool and input.

use std::collections::HashMap;
use std::path::Path;

use memlog_format::{Draft, Kind};
use serde_json::{Map, Value};

use crate::{Agent, Error, HookEvent, HookOptions};

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
                let error = response
                    .get("error")
                    .filter(|e| !e.is_null())
                    .map(error_text);
                let shown = ["returnDisplay", "llmContent"]
                    .iter()
                    .find_map(|k| response.get(*k).and_then(Value::as_str))
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

/// A saved Gemini CLI chat converted to drafts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Chat {
    /// The session (`sessionId`, else the file name).
    pub session_id: String,
    /// The drafts in chat order.
    pub drafts: Vec<Draft>,
    /// Lines that are not JSON objects.
    pub malformed: usize,
}

/// Reads one saved chat file.
pub fn read_chat(path: impl AsRef<Path>, options: &HookOptions) -> crate::Result<Chat> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let fallback = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("")
        .to_string();
    Ok(parse_chat(
        &String::from_utf8_lossy(&bytes),
        &fallback,
        options,
    ))
}

/// Converts a chat's text; `fallback_session` names the session when the
/// header has none.
pub fn parse_chat(text: &str, fallback_session: &str, options: &HookOptions) -> Chat {
    let mut chat = Chat {
        session_id: fallback_session.to_string(),
        ..Chat::default()
    };
    // Records by id, in order of first appearance; later ones replace.
    let mut order: Vec<String> = Vec::new();
    let mut records: HashMap<String, Map<String, Value>> = HashMap::new();
    let mut keep = |record: &Map<String, Value>| {
        if let Some(id) = record.get("id").and_then(Value::as_str) {
            if !records.contains_key(id) {
                order.push(id.to_string());
            }
            records.insert(id.to_string(), record.clone());
        }
    };
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(Value::Object(line)) = serde_json::from_str::<Value>(line) else {
            chat.malformed += 1;
            continue;
        };
        if let Some(id) = line.get("sessionId").and_then(Value::as_str) {
            chat.session_id = id.to_string();
        }
        if let Some(Value::Array(messages)) = line.get("$set").and_then(|s| s.get("messages")) {
            for m in messages.iter().filter_map(Value::as_object) {
                keep(m);
            }
        } else if line.contains_key("type") {
            keep(&line);
        }
    }
    if chat.session_id.is_empty() {
        chat.session_id = Agent::Gemini.unknown_session();
    }
    let maker = |ts: &str, kind: Kind, body: Map<String, Value>, reference: &str| {
        let mut draft = Draft::new(
            chat.session_id.clone(),
            ts,
            kind,
            options.project.clone(),
            body,
        );
        draft.meta.insert(
            "client".into(),
            Value::String(Agent::Gemini.client().into()),
        );
        draft
            .meta
            .insert("ref".into(), Value::String(reference.to_string()));
        draft
    };
    let mut drafts = Vec::new();
    // The agent's texts of the current turn: (joined text, last ts, last id).
    let mut answer: Option<(String, String, String)> = None;
    let flush = |answer: &mut Option<(String, String, String)>, drafts: &mut Vec<Draft>| {
        if let Some((text, ts, id)) = answer.take() {
            let mut body = Map::new();
            body.insert("text".into(), Value::String(text));
            drafts.push(maker(&ts, Kind::AgentResponse, body, &id));
        }
    };
    for id in &order {
        let Some(record) = records.get(id) else {
            continue;
        };
        let Some(ts) = record
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(|t| memlog_format::time::normalize(t).ok())
        else {
            continue;
        };
        match record.get("type").and_then(Value::as_str) {
            Some("user") => {
                let Some(prompt) = user_text(record) else {
                    continue;
                };
                flush(&mut answer, &mut drafts);
                let mut body = Map::new();
                body.insert("text".into(), Value::String(prompt));
                drafts.push(maker(&ts, Kind::UserPrompt, body, id));
            }
            Some("gemini") => {
                if let Some(text) = record
                    .get("content")
                    .and_then(Value::as_str)
                    .filter(|t| !t.trim().is_empty())
                {
                    answer = Some(match answer.take() {
                        Some((joined, _, _)) => {
                            (format!("{joined}\n{text}"), ts.clone(), id.clone())
                        }
                        None => (text.to_string(), ts.clone(), id.clone()),
                    });
                }
                for call in record
                    .get("toolCalls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some((call_ts, body, call_id)) = tool_body(call, &ts, options) {
                        drafts.push(maker(&call_ts, Kind::ToolObservation, body, &call_id));
                    }
                }
            }
            _ => {}
        }
    }
    flush(&mut answer, &mut drafts);
    chat.drafts = drafts;
    chat
}

/// The prompt of a user record: its text parts (the displayed ones when
/// given), without hook context; `None` for tool results and Gemini's own
/// session context.
fn user_text(record: &Map<String, Value>) -> Option<String> {
    let parts = record
        .get("displayContent")
        .or_else(|| record.get("content"))?;
    let text = match parts {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => return None,
    };
    let text = strip_hook_context(&text).trim();
    (!text.is_empty() && !text.starts_with("<session_context>")).then(|| text.to_string())
}

/// A tool call's observation: (time, body, call id).
fn tool_body(
    call: &Value,
    ts: &str,
    options: &HookOptions,
) -> Option<(String, Map<String, Value>, String)> {
    let name = call.get("name").and_then(Value::as_str)?;
    if options.excludes(name) {
        return None;
    }
    let id = call.get("id").and_then(Value::as_str).unwrap_or(name);
    let output = call
        .get("resultDisplay")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| {
            call.pointer("/result/0/functionResponse/response/output")
                .and_then(Value::as_str)
                .map(str::to_string)
        });
    let mut body = Map::new();
    body.insert("tool".into(), Value::String(name.to_string()));
    body.insert(
        "input".into(),
        call.get("args")
            .cloned()
            .unwrap_or(Value::Object(Map::new())),
    );
    if let Some(output) = output {
        body.insert("output".into(), Value::String(output));
    }
    let success = call.get("status").and_then(Value::as_str) != Some("error");
    body.insert("success".into(), Value::Bool(success));
    let call_ts = call
        .get("timestamp")
        .and_then(Value::as_str)
        .and_then(|t| memlog_format::time::normalize(t).ok())
        .unwrap_or_else(|| ts.to_string());
    Some((call_ts, body, id.to_string()))
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
        let answer = read(
            "AfterAgent",
            json!({"session_id": "g1", "hook_event_name": "AfterAgent", "prompt": "q",
                   "prompt_response": "It is Wednesday.", "stop_hook_active": false}),
        );
        assert_eq!(answer[0].kind.as_str(), "agent_response");
        assert_eq!(answer[0].body["text"], "It is Wednesday.");
    }

    #[test]
    fn a_saved_chat_reads_like_its_hooks() {
        let chat = parse_chat(
            include_str!("../../fixtures/gemini/chat.jsonl"),
            "x",
            &HookOptions::new("p"),
        );
        assert_eq!(chat.session_id, "439fd1eb-5014-4d17-a1b2-e25047c5a3c3");
        let kinds: Vec<&str> = chat.drafts.iter().map(|d| d.kind.as_str()).collect();
        assert_eq!(kinds, ["user_prompt", "tool_observation", "agent_response"]);
        assert_eq!(chat.drafts[0].body["text"], "When is the freeze?");
        assert_eq!(chat.drafts[1].body["output"], "freeze: Wednesday");
        assert!(chat.drafts[1].body.get("tool_use_id").is_none());
        // The turn's texts joined, as AfterAgent's prompt_response.
        assert_eq!(
            chat.drafts[2].body["text"],
            "Reading.\nThe freeze is Wednesday."
        );
        assert!(chat.drafts.iter().all(|d| d.meta["client"] == "gemini-cli"));
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
