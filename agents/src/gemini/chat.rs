//! Gemini CLI's saved chats as memlog drafts.
//!
//! [`read_chat`] reads `~/.gemini/tmp/<project>/chats/session-*.jsonl`: a
//! header line (`sessionId`, `startTime`), then records with an `id` (a
//! record whose id was seen replaces the earlier one) and `$set` updates
//! (`messages`: records in bulk). Versions before the JSON lines (0.2x,
//! checked against 0.24.0) saved `session-*.json`: one JSON object,
//! `{"sessionId", "projectHash", "startTime", "lastUpdated", "messages"}`,
//! whose messages are the same records. A `user` record with text is a prompt
//! (without `<hook_context>` blocks; Gemini's own `<session_context>` is
//! left out), a `gemini` record's `content` is what the agent said and its
//! `toolCalls` (with `resultDisplay`) are tool observations. The agent's
//! texts of one turn become one `agent_response`, joined by newlines, as
//! the AfterAgent hook sees them. Tool observations carry no `tool_use_id`
//! (the hooks have none to match it): they are matched by tool and input.
//! A `write_todos` call gives its list's task events instead, as its
//! AfterTool hook does (`todo.rs`).

use std::collections::HashMap;
use std::path::Path;

use memlog_format::{Draft, Kind};
use serde_json::{Map, Value};

use super::hooks::strip_hook_context;
use crate::HookOptions;
use crate::sessions::read_text;
use crate::todo::observed_plan_events;
use crate::tool::{Observation, ToolCall, observe};

/// The client name memlog records in `meta.client` for Gemini CLI.
pub const CLIENT: &str = "gemini-cli";

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
    let (text, fallback) = read_text(path.as_ref())?;
    Ok(parse_chat(&text, &fallback, options))
}

/// Converts a chat's text; `fallback_session` names the session when the
/// header has none.
pub fn parse_chat(text: &str, fallback_session: &str, options: &HookOptions) -> Chat {
    let mut chat = Chat {
        session_id: fallback_session.to_string(),
        ..Chat::default()
    };
    // Records by id, in order of first appearance; a later one updates the
    // fields it has (a resumed chat writes its history again, its texts as
    // parts and without what it no longer needs).
    let mut order: Vec<String> = Vec::new();
    let mut records: HashMap<String, Map<String, Value>> = HashMap::new();
    let mut keep = |record: &Map<String, Value>| {
        if let Some(id) = record.get("id").and_then(Value::as_str) {
            match records.get_mut(id) {
                Some(known) => known.extend(record.clone()),
                None => {
                    order.push(id.to_string());
                    records.insert(id.to_string(), record.clone());
                }
            }
        }
    };
    // A whole-file chat (before the JSON lines): its messages are records.
    let whole = text
        .trim_start()
        .starts_with('{')
        .then(|| serde_json::from_str::<Map<String, Value>>(text).ok())
        .flatten()
        .filter(|c| c.get("messages").is_some_and(Value::is_array));
    let lines: Box<dyn Iterator<Item = &str>> = match &whole {
        Some(_) => Box::new(std::iter::empty()),
        None => Box::new(text.lines().filter(|l| !l.trim().is_empty())),
    };
    if let Some(whole) = &whole {
        if let Some(id) = whole.get("sessionId").and_then(Value::as_str) {
            chat.session_id = id.to_string();
        }
        for m in whole
            .get("messages")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_object)
        {
            keep(m);
        }
    }
    for line in lines {
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
        chat.session_id = format!("{CLIENT}-unknown");
    }
    let maker = |ts: &str, kind: Kind, body: Map<String, Value>, reference: &str| {
        let mut draft = Draft::new(
            chat.session_id.clone(),
            ts,
            kind,
            options.project.clone(),
            body,
        );
        draft
            .meta
            .insert("client".into(), Value::String(CLIENT.into()));
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
                    .and_then(parts_text)
                    .filter(|t| !t.trim().is_empty())
                {
                    answer = Some(match answer.take() {
                        Some((joined, _, _)) => {
                            (format!("{joined}\n{text}"), ts.clone(), id.clone())
                        }
                        None => (text, ts.clone(), id.clone()),
                    });
                }
                for call in record
                    .get("toolCalls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let Some((call_ts, observation, call_id)) =
                        tool_observation(call, &ts, options)
                    else {
                        continue;
                    };
                    // a `write_todos` call is its list's task events, as
                    // the hook records it
                    if let Some(tasks) = observed_plan_events(&observation.body, &options.project) {
                        for task in tasks {
                            let task_ref = task.reference(&call_id);
                            drafts.push(maker(&call_ts, task.kind, task.body, &task_ref));
                        }
                        continue;
                    }
                    drafts.push(
                        observation
                            .draft(|body| maker(&call_ts, Kind::ToolObservation, body, &call_id)),
                    );
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
    let text = parts_text(parts)?;
    let text = strip_hook_context(&text).trim();
    (!text.is_empty() && !text.starts_with("<session_context>")).then(|| text.to_string())
}

/// The exit code a shell command's result ends with (`Exit Code: N`, in
/// what the model saw).
pub(super) fn shell_exit_code(model_saw: &str) -> Option<i64> {
    model_saw
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("Exit Code: "))
        .and_then(|n| n.trim().parse::<i64>().ok())
}

/// A record's content as text: a string, or the text of its parts.
fn parts_text(content: &Value) -> Option<String> {
    match content {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => None,
    }
}

/// A tool call's observation: (time, observation, call id). Read as its
/// AfterTool hook reads it ([`super::hooks::to_common`]): what was
/// displayed (else what the model saw) is the output, and an error or a
/// shell's non-zero exit code makes it a failure.
fn tool_observation(
    call: &Value,
    ts: &str,
    options: &HookOptions,
) -> Option<(String, Observation, String)> {
    let name = call.get("name").and_then(Value::as_str)?;
    if options.excludes(name) {
        return None;
    }
    let id = call.get("id").and_then(Value::as_str).unwrap_or(name);
    let response = call.pointer("/result/0/functionResponse/response");
    let model_saw = response
        .and_then(|r| r.get("output"))
        .and_then(Value::as_str);
    let output = call
        .get("resultDisplay")
        .and_then(Value::as_str)
        .filter(|d| !d.is_empty())
        .or(model_saw)
        .map(str::to_string);
    let exit_code = model_saw.and_then(shell_exit_code);
    let failure = match exit_code.filter(|code| *code != 0) {
        Some(code) => Some(format!("exit code {code}")),
        None if call.get("status").and_then(Value::as_str) == Some("error") => Some(
            response
                .and_then(|r| r.get("error"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        ),
        None => None,
    };
    let observation = observe(&ToolCall {
        tool: name,
        input: call.get("args"),
        result_text: output,
        is_error: Some(failure.is_some()),
        failure: failure.as_deref(),
        exit_code,
        ..ToolCall::default()
    });
    let call_ts = call
        .get("timestamp")
        .and_then(Value::as_str)
        .and_then(|t| memlog_format::time::normalize(t).ok())
        .unwrap_or_else(|| ts.to_string());
    Some((call_ts, observation, id.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chat_saved_whole_before_the_json_lines() {
        let chat = parse_chat(
            include_str!("../../../fixtures/gemini/chat-0.24.json"),
            "x",
            &HookOptions::new("p"),
        );
        assert_eq!(chat.malformed, 0);
        assert_eq!(chat.session_id, "7c1e55d0-24a0-4b7e-9c51-0a24c0ffee24");
        let kinds: Vec<&str> = chat.drafts.iter().map(|d| d.kind.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "user_prompt",
                "tool_observation",
                "tool_observation",
                "agent_response"
            ]
        );
        assert_eq!(chat.drafts[0].body["text"], "Raise the tax rate to 8 %");
        let test = &chat.drafts[1].body;
        assert_eq!(test["output"], "1 failing: cart total");
        assert_eq!(test["success"], false);
        assert_eq!(test["metadata"]["exit_code"], 1);
        // An empty display: what the model saw.
        assert!(
            chat.drafts[2].body["output"]
                .as_str()
                .unwrap()
                .starts_with("Successfully modified file")
        );
        assert_eq!(
            chat.drafts[3].body["text"],
            "Running the tests first.\nEditing the rate.\nThe rate is 8 %; one cart test still fails."
        );
    }

    #[test]
    fn a_saved_chat_reads_like_its_hooks() {
        let chat = parse_chat(
            include_str!("../../../fixtures/gemini/chat.jsonl"),
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

    /// Field test 12a: `memlog search` run through the shell printed a
    /// personal note; the import kept its words in a shared event. It is
    /// recorded as the AfterTool hook records it: withheld, and personal.
    #[test]
    fn memlogs_own_call_is_withheld_and_a_personal_read_is_personal() {
        let lines = [
            r#"{"sessionId":"s-own","startTime":"2026-11-27T10:00:00.000Z","kind":"main"}"#,
            r#"{"id":"u1","timestamp":"2026-11-27T10:00:01.000Z","type":"user","content":[{"text":"what was my codeword?"}]}"#,
            r#"{"id":"g1","timestamp":"2026-11-27T10:00:02.000Z","type":"gemini","content":"Searching memory.","toolCalls":[{"id":"c1","name":"run_shell_command","args":{"command":"memlog search codeword"},"result":[{"functionResponse":{"id":"c1","name":"run_shell_command","response":{"output":"Output: 40af8f2ab7  note  (personal) salary review, codeword heliotrope\nExit Code: 0"}}}],"status":"success","timestamp":"2026-11-27T10:00:03.000Z","resultDisplay":"40af8f2ab7  note  (personal) salary review, codeword heliotrope"}]}"#,
            r#"{"id":"g2","timestamp":"2026-11-27T10:00:04.000Z","type":"gemini","content":"Found your note."}"#,
        ];
        let chat = parse_chat(&lines.join("\n"), "x", &HookOptions::new("p"));
        let call = chat
            .drafts
            .iter()
            .find(|d| d.kind == Kind::ToolObservation)
            .expect("the call");
        assert_eq!(call.body["withheld"], true);
        assert_eq!(
            call.body["input"],
            serde_json::json!({"command": "memlog search"})
        );
        assert!(
            !Value::Object(call.body.clone())
                .to_string()
                .contains("heliotrope")
        );
        assert!(memlog_format::scope::is_personal(&call.meta));
        // the same body as the hook's, so that the two are matched
        use crate::Agent;
        let agent = &crate::gemini::Gemini;
        let hook = serde_json::json!({"session_id": "s-own", "hook_event_name": "AfterTool",
            "tool_name": "run_shell_command", "tool_input": {"command": "memlog search codeword"},
            "tool_response": {"llmContent": "Output: (personal) heliotrope\nExit Code: 0",
                              "returnDisplay": "(personal) heliotrope"}});
        let payload = agent
            .read_payload("AfterTool", hook.to_string().as_bytes())
            .unwrap();
        let options = HookOptions {
            agent,
            ..HookOptions::new("p")
        };
        let recorded = crate::drafts_at(
            &payload,
            &crate::CodeContext::default(),
            &options,
            "2026-11-27T10:00:03.000Z",
        );
        assert_eq!(recorded[0].body, call.body);
        assert!(memlog_format::scope::is_personal(&recorded[0].meta));
    }

    /// A resumed session (0.61): Gemini writes the chat's history again in
    /// a `$set`, its answers' content as parts, before the new turn.
    #[test]
    fn a_resumed_chat_keeps_the_answers_it_wrote_again_as_parts() {
        let lines = [
            r#"{"sessionId":"s-resumed","startTime":"2026-11-27T03:31:31.943Z","kind":"main"}"#,
            r#"{"id":"u1","timestamp":"2026-11-27T03:31:32.041Z","type":"user","content":[{"text":"When is the freeze?"}]}"#,
            r#"{"id":"g1","timestamp":"2026-11-27T03:31:32.056Z","type":"gemini","content":"Wednesday at noon."}"#,
            r#"{"$set":{"messages":[{"id":"g1","timestamp":"2026-11-27T03:31:32.056Z","type":"gemini","content":[{"text":"Wednesday at noon."}]}]}}"#,
            r#"{"id":"u2","timestamp":"2026-11-27T03:32:00.000Z","type":"user","content":[{"text":"And the shards?"}]}"#,
            r#"{"id":"g2","timestamp":"2026-11-27T03:32:01.000Z","type":"gemini","content":"Three shards."}"#,
        ];
        let chat = parse_chat(&lines.join("\n"), "x", &HookOptions::new("p"));
        let texts: Vec<(&str, &str)> = chat
            .drafts
            .iter()
            .map(|d| (d.kind.as_str(), d.body["text"].as_str().unwrap_or("")))
            .collect();
        assert_eq!(
            texts,
            [
                ("user_prompt", "When is the freeze?"),
                ("agent_response", "Wednesday at noon."),
                ("user_prompt", "And the shards?"),
                ("agent_response", "Three shards."),
            ]
        );
    }
}
