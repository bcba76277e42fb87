//! Copilot CLI session files (`session-state/<id>/events.jsonl`, checked
//! against 1.0.102) as memlog drafts.
//!
//! One JSON object per line, `{"type", "data", "id", "timestamp",
//! "parentId"}`. The lines memlog reads:
//!
//! - `session.start`: the session's `sessionId`, `copilotVersion` and
//!   `context.cwd`;
//! - `user.message`: `data.content`, what the user typed (the model got
//!   `transformedContent`, with Copilot's additions), a `user_prompt`;
//! - `assistant.message`: `data.content`, an `agent_response` when not
//!   empty; its `toolRequests` name each call's tool and arguments;
//! - `tool.execution_complete`: a call's outcome (`success`,
//!   `result.content`, `shellExecution.exitCode`), a `tool_observation`
//!   with the tool and arguments of its request (an `update_todo` call:
//!   its checklist's task events instead, as the hook records it,
//!   `todo.rs`).
//!
//! Hook events (`hook.start`), usage records and other lines are not read.
//! A tool observation carries no `tool_use_id` — Copilot's hooks have none,
//! and the capture identity of a call is then its tool and input — but the
//! call id is its `meta.ref`. Every other draft's `meta.ref` is its line's
//! `id`, and its `ts` the line's `timestamp`.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use memlog_format::Kind;
use serde_json::{Map, Value};

use crate::sessions::{file_draft, normalized_time, read_text, text_body};
use crate::todo::observed_plan_events;
use crate::tool::{Observation, ToolCall, observe};
use crate::{HookOptions, Result, SessionFile};

/// Reads one `events.jsonl`.
pub fn read(path: &Path, options: &HookOptions) -> Result<SessionFile> {
    let (text, _) = read_text(path)?;
    // The file is `<session id>/events.jsonl`: the folder names the session.
    let fallback = path
        .parent()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .unwrap_or("");
    Ok(parse(&text, fallback, options))
}

/// Converts an `events.jsonl`'s text; `fallback_session` names the session
/// when it has no `session.start`.
pub fn parse(text: &str, fallback_session: &str, options: &HookOptions) -> SessionFile {
    let mut file = SessionFile {
        session_id: fallback_session.to_string(),
        ..SessionFile::default()
    };
    let mut lines = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(map)) => lines.push(map),
            _ => file.malformed += 1,
        }
    }
    let mut version = None;
    if let Some(start) = lines
        .iter()
        .find(|l| type_of(l) == Some("session.start"))
        .and_then(|l| l.get("data"))
    {
        if let Some(id) = start.get("sessionId").and_then(Value::as_str) {
            file.session_id = id.to_string();
        }
        file.cwd = start
            .pointer("/context/cwd")
            .and_then(Value::as_str)
            .map(str::to_string);
        version = start.get("copilotVersion").and_then(Value::as_str);
    }
    if file.session_id.is_empty() {
        file.session_id = options.agent.unknown_session();
    }
    // Each call's tool and arguments, by call id.
    let mut requests: HashMap<&str, (&str, &Value)> = HashMap::new();
    let mut drafts = Vec::new();
    let mut skipped = 0;
    for (n, line) in lines.iter().enumerate() {
        let data = line.get("data").unwrap_or(&Value::Null);
        let Some(ts) = normalized_time(line.get("timestamp")) else {
            skipped += 1;
            continue;
        };
        let line_ref = line
            .get("id")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| format!("line:{n}"));
        let entries = match type_of(line) {
            Some("user.message") => match non_empty(data.get("content")) {
                Some(text) => vec![(Kind::UserPrompt, text_body(text), line_ref)],
                None => continue,
            },
            Some("assistant.message") => {
                for request in data
                    .get("toolRequests")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let (Some(id), Some(name)) = (
                        request.get("toolCallId").and_then(Value::as_str),
                        request.get("name").and_then(Value::as_str),
                    ) {
                        let arguments = request.get("arguments").unwrap_or(&Value::Null);
                        requests.insert(id, (name, arguments));
                    }
                }
                match non_empty(data.get("content")) {
                    Some(text) => vec![(Kind::AgentResponse, text_body(text), line_ref)],
                    None => continue,
                }
            }
            Some("tool.execution_start") => {
                if let (Some(id), Some(name)) = (
                    data.get("toolCallId").and_then(Value::as_str),
                    data.get("toolName").and_then(Value::as_str),
                ) {
                    let arguments = data.get("arguments").unwrap_or(&Value::Null);
                    requests.entry(id).or_insert((name, arguments));
                }
                continue;
            }
            Some("tool.execution_complete") => {
                let Some(id) = data.get("toolCallId").and_then(Value::as_str) else {
                    continue;
                };
                let Some(&(tool, arguments)) = requests.get(id) else {
                    continue;
                };
                if options.excludes(tool) {
                    continue;
                }
                let observation = tool_observation(tool, arguments, data);
                // an `update_todo` call is its checklist's task events, as
                // the hook records it
                match observed_plan_events(&observation.body, &options.project) {
                    Some(tasks) => tasks
                        .into_iter()
                        .map(|t| {
                            let task_ref = t.reference(id);
                            (t.kind, t.body, task_ref)
                        })
                        .collect(),
                    None => {
                        drafts.push(observation.draft(|body| {
                            file_draft(
                                &file,
                                version,
                                &ts,
                                Kind::ToolObservation,
                                body,
                                options,
                                id,
                            )
                        }));
                        continue;
                    }
                }
            }
            Some(_) => continue,
            None => {
                skipped += 1;
                continue;
            }
        };
        for (kind, body, reference) in entries {
            drafts.push(file_draft(
                &file, version, &ts, kind, body, options, &reference,
            ));
        }
    }
    file.drafts = SessionFile::numbered(drafts);
    file.skipped = Some(skipped);
    file
}

/// A completed call's observation: the tool's output as the model saw it,
/// its outcome and, for a shell command, its exit code.
fn tool_observation(tool: &str, arguments: &Value, data: &Value) -> Observation {
    let output = data
        .pointer("/result/content")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| {
            data.pointer("/error/message")
                .and_then(Value::as_str)
                .map(str::to_string)
        });
    let exit_code = data
        .pointer("/shellExecution/exitCode")
        .and_then(Value::as_i64);
    // Copilot says success for a command that ran, whatever it exited with
    let failed = data.get("success").and_then(Value::as_bool) == Some(false)
        || exit_code.is_some_and(|c| c != 0);
    observe(&ToolCall {
        tool,
        input: Some(arguments),
        result_text: output,
        is_error: Some(failed),
        exit_code,
        ..ToolCall::default()
    })
}

fn type_of(line: &Map<String, Value>) -> Option<&str> {
    line.get("type").and_then(Value::as_str)
}

fn non_empty(value: Option<&Value>) -> Option<&str> {
    value
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|t| !t.is_empty())
}

/// How long a Stop hook waits for Copilot CLI to write the session's lines
/// up to its own `hook.start`: Copilot appends to `events.jsonl` behind the
/// agent, and a real 1.0.102 run's `agentStop` hook read the file before
/// the turn's last `assistant.message` was in it (and recorded the turn's
/// first message as its answer).
const WRITE_LAG: Duration = Duration::from_millis(1500);

/// The last message the agent wrote after the user's last prompt, from the
/// end of an `events.jsonl` (the Stop hook's answer); `None` when the file
/// is missing or the turn has no text. `stop` is the `timestamp` of the
/// `agentStop` payload: Copilot logs the hook's start with that payload
/// before running it, so the answer is what precedes that line, once the
/// file holds it (waited for up to [`WRITE_LAG`]).
pub fn last_answer(path: &Path, stop: Option<u64>) -> Option<String> {
    turn_texts(path, stop).pop().map(|(_, text)| text)
}

/// Every message the agent wrote after the user's last prompt, with its
/// time, up to the `agentStop` whose payload's `timestamp` is `stop` (see
/// [`last_answer`]): what it said between its tool calls, then its answer.
pub fn turn_texts(path: &Path, stop: Option<u64>) -> Vec<(Option<String>, String)> {
    let started = Instant::now();
    loop {
        // Copilot 1.0.102 writes the file in batches: a quick turn's Stop
        // hook may run before it exists at all, so a missing file is
        // waited for like an unfinished one.
        let (texts, complete) = match tail(path, 1 << 20) {
            Some(text) => texts_before_stop(&text, stop),
            None => (Vec::new(), false),
        };
        if complete || started.elapsed() > WRITE_LAG {
            return texts;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The turn's messages in `text`, before the `hook.start` of the
/// `agentStop` whose payload's `timestamp` is `stop`, and whether that line
/// was there (always, without a `stop` to look for).
fn texts_before_stop(text: &str, stop: Option<u64>) -> (Vec<(Option<String>, String)>, bool) {
    let mut texts = Vec::new();
    for line in text.lines() {
        let Ok(Value::Object(line)) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let data = line.get("data");
        match type_of(&line) {
            Some("user.message") => texts.clear(),
            Some("assistant.message") => {
                if let Some(text) = non_empty(data.and_then(|d| d.get("content"))) {
                    let ts = line
                        .get("timestamp")
                        .and_then(Value::as_str)
                        .and_then(|t| memlog_format::time::normalize(t).ok());
                    texts.push((ts, text.to_string()));
                }
            }
            Some("hook.start")
                if stop.is_some()
                    && data.and_then(|d| d.get("hookType")).and_then(Value::as_str)
                        == Some("agentStop")
                    && data
                        .and_then(|d| d.pointer("/input/timestamp"))
                        .and_then(Value::as_u64)
                        == stop =>
            {
                return (texts, true);
            }
            _ => {}
        }
    }
    (texts, stop.is_none())
}

/// `copilotVersion` of an `events.jsonl`'s `session.start`.
pub fn version(path: &Path) -> Option<String> {
    use std::io::{BufRead, Read};
    let file = std::fs::File::open(path).ok()?;
    let mut line = String::new();
    std::io::BufReader::new(file.take(1 << 20))
        .read_line(&mut line)
        .ok()?;
    let value: Value = serde_json::from_str(&line).ok()?;
    value
        .pointer("/data/copilotVersion")?
        .as_str()
        .map(str::to_string)
}

/// The last `max` bytes of a file, from its first whole line.
fn tail(path: &Path, max: u64) -> Option<String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    let start = len.saturating_sub(max);
    file.seek(SeekFrom::Start(start)).ok()?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    Some(match (start > 0, text.find('\n')) {
        (true, Some(i)) => text[i + 1..].to_string(),
        _ => text,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const EVENTS: &str = include_str!("../../../fixtures/copilot/events.jsonl");

    fn options() -> HookOptions {
        HookOptions {
            agent: &crate::copilot::Copilot,
            ..HookOptions::new("shop")
        }
    }

    /// Field test 12a: memlog's own call, read from the events as its hook
    /// records it.
    #[test]
    fn memlogs_own_call_is_withheld_and_personal() {
        let events = EVENTS
            .replace("cat notes.txt", "memlog search freeze")
            .replace("freeze: Wednesday", "(personal) heliotrope");
        let f = parse(&events, "x", &options());
        crate::tool::assert_own_call_kept_private(f.drafts.iter().map(|(_, d)| d), "heliotrope");
    }

    #[test]
    fn prompts_calls_and_answers() {
        let f = parse(EVENTS, "x", &options());
        assert_eq!(f.session_id, "5c1e2b7a-8d3f-4e0a-9b61-2f4d7c9e1a30");
        assert_eq!(f.cwd.as_deref(), Some("/work/shop"));
        let kinds: Vec<&str> = f.drafts.iter().map(|(_, d)| d.kind.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "user_prompt",
                "agent_response",
                "tool_observation",
                "tool_observation",
                "agent_response"
            ]
        );
        let tool = &f.drafts[2].1;
        assert_eq!(tool.body["tool"], "bash");
        assert_eq!(tool.body["input"]["command"], "cat notes.txt");
        assert!(
            tool.body["output"]
                .as_str()
                .unwrap()
                .starts_with("freeze: Wednesday")
        );
        assert!(tool.body.get("tool_use_id").is_none());
        assert_eq!(tool.meta["ref"], "toolu_c01");
        assert_eq!(tool.meta["agent_version"], "1.0.102");
        let failed = &f.drafts[3].1;
        assert_eq!(failed.body["success"], false);
        assert_eq!(failed.body["metadata"]["exit_code"], 1);
        assert!(
            f.drafts
                .iter()
                .all(|(_, d)| d.meta["client"] == "copilot-cli")
        );
        // the same file, the same drafts
        assert_eq!(parse(EVENTS, "x", &options()), f);
    }

    /// An `events.jsonl` as Copilot had written it when a Stop hook read
    /// it: `lines` of the turn, then (when `logged`) the hook's own start.
    fn turn(lines: &[Value], logged: bool) -> String {
        let mut text: Vec<String> =
            vec![json!({"type": "user.message", "data": {"content": "When?"}}).to_string()];
        text.extend(lines.iter().map(Value::to_string));
        if logged {
            text.push(
                json!({"type": "hook.start", "data": {"hookType": "agentStop",
                       "input": {"sessionId": "s", "timestamp": 1795667455113u64}}})
                .to_string(),
            );
        }
        text.join("\n")
    }

    #[test]
    fn an_update_todo_call_is_its_checklists_tasks() {
        let line = |v: Value| format!("{v}\n");
        let text = [
            json!({"type": "assistant.message", "id": "m1", "timestamp": "2026-11-27T04:00:00.000Z",
                   "data": {"content": "", "toolRequests": [{"toolCallId": "t1", "name": "update_todo",
                            "arguments": {"todos": "- [x] Read the code\n- [ ] Fix it"}}]}}),
            json!({"type": "tool.execution_complete", "id": "c1", "timestamp": "2026-11-27T04:00:01.000Z",
                   "data": {"toolCallId": "t1", "success": true, "result": {"content": "TODO list updated"}}}),
            json!({"type": "assistant.message", "id": "m2", "timestamp": "2026-11-27T04:00:02.000Z",
                   "data": {"content": "", "toolRequests": [{"toolCallId": "t2", "name": "update_todo",
                            "arguments": {"todos": "- [x] Fix it"}}]}}),
            json!({"type": "tool.execution_complete", "id": "c2", "timestamp": "2026-11-27T04:00:03.000Z",
                   "data": {"toolCallId": "t2", "success": false, "error": {"message": "refused"}}}),
        ]
        .map(line)
        .concat();
        let f = parse(&text, "x", &options());
        let tasks: Vec<(&str, &Value, &Value)> = f
            .drafts
            .iter()
            .map(|(_, d)| {
                let field = |k: &str| d.body.get(k).unwrap_or(&Value::Null);
                (d.kind.as_str(), field("title"), field("status"))
            })
            .collect();
        // the refused call changed no list: a plain (failed) call
        assert_eq!(
            tasks,
            [
                ("task_created", &json!("Read the code"), &json!("done")),
                ("task_created", &json!("Fix it"), &json!("pending")),
                ("tool_observation", &Value::Null, &Value::Null)
            ]
        );
        assert_eq!(f.drafts[1].1.meta["ref"], "t1/todo/1");
    }

    #[test]
    fn a_stop_hook_answers_with_what_precedes_its_own_start() {
        let first = json!({"type": "assistant.message", "timestamp": "2026-11-27T04:00:00.000Z",
                           "data": {"content": "Reading the notes."}});
        let last = json!({"type": "assistant.message", "data": {"content": "Wednesday noon."}});
        let stop = Some(1795667455113);
        let texts = |t: &str, stop| {
            let (texts, complete) = texts_before_stop(t, stop);
            let texts: Vec<String> = texts.into_iter().map(|(_, t)| t).collect();
            (texts, complete)
        };
        // Copilot has not written the end of the turn yet: not complete.
        assert_eq!(
            texts(&turn(std::slice::from_ref(&first), false), stop),
            (vec!["Reading the notes.".to_string()], false)
        );
        let written = turn(&[first.clone(), last.clone()], true);
        assert_eq!(
            texts(&written, stop),
            (
                vec![
                    "Reading the notes.".to_string(),
                    "Wednesday noon.".to_string()
                ],
                true
            )
        );
        // An older payload without a timestamp takes the file as it is.
        assert!(texts(&turn(&[first, last], false), None).1);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        std::fs::write(&path, written).unwrap();
        assert_eq!(last_answer(&path, stop).as_deref(), Some("Wednesday noon."));
        // what it said on the way, with its time
        let turn = turn_texts(&path, stop);
        assert_eq!(turn[0].0.as_deref(), Some("2026-11-27T04:00:00.000Z"));
        assert_eq!(turn.len(), 2);
    }
}
