//! Hook payloads as memlog drafts (the mapping of each event is in
//! [`crate::protocol`]'s documentation).

use memlog_format::{Draft, Kind, time};
use serde_json::{Map, Value};

use super::event::HookEvent;
use super::payload::Payload;
use crate::options::{CodeContext, HookOptions};
use crate::todo::{
    TASK_CREATE, TASK_UPDATE, TODO_TOOL, parse_todos, plan_tool_events, task_events,
    task_tool_events,
};
use crate::tool::{ToolCall, observe};

/// The drafts a hook payload records, stamped with the current time. See
/// the crate documentation for the mapping of each event.
pub fn drafts(payload: &Payload, context: &CodeContext, options: &HookOptions) -> Vec<Draft> {
    drafts_at(payload, context, options, &time::now())
}

/// [`drafts`] with a given timestamp (memlog form, see
/// `memlog_format::time`), for replays and tests.
pub fn drafts_at(
    payload: &Payload,
    context: &CodeContext,
    options: &HookOptions,
    ts: &str,
) -> Vec<Draft> {
    let maker = DraftMaker::new(payload, context, options, ts);
    if !payload.raw.is_object() {
        return vec![maker.unknown_shape()];
    }
    let Some(event) = payload.event else {
        return vec![maker.unknown_shape()];
    };
    match event {
        HookEvent::SessionStart => {
            let mut body = Map::new();
            insert_text(&mut body, "source", payload.source.as_deref());
            insert_text(&mut body, "model", payload.model.as_deref());
            vec![maker.draft(Kind::SessionStart, body)]
        }
        HookEvent::SessionEnd => {
            let mut body = Map::new();
            insert_text(&mut body, "reason", payload.reason.as_deref());
            vec![maker.draft(Kind::SessionEnd, body)]
        }
        HookEvent::UserPromptSubmit => match payload.prompt.as_deref() {
            None => vec![maker.unknown_shape()],
            Some(prompt) if prompt.trim().is_empty() => Vec::new(),
            Some(prompt) if options.agent.is_harness_prompt(prompt) => Vec::new(),
            Some(prompt) => vec![maker.text(Kind::UserPrompt, prompt)],
        },
        HookEvent::PreToolUse => {
            if !options.record_pre_tool_use {
                return Vec::new();
            }
            let Some(tool) = payload.tool_name.as_deref() else {
                return vec![maker.unknown_shape()];
            };
            if options.excludes(tool) {
                return Vec::new();
            }
            let mut draft = observe(&ToolCall {
                tool,
                input: payload.tool_input.as_ref(),
                tool_use_id: payload.tool_use_id.as_deref(),
                ..ToolCall::default()
            })
            .draft(|body| maker.draft(Kind::ToolObservation, body));
            draft.meta.insert("pre_tool_use".into(), Value::Bool(true));
            vec![draft]
        }
        HookEvent::PostToolUse => {
            let Some(tool) = payload.tool_name.as_deref() else {
                return vec![maker.unknown_shape()];
            };
            if options.excludes(tool) {
                return Vec::new();
            }
            if tool == TODO_TOOL
                && let Some(tasks) = todo_drafts(&maker, payload, &options.project)
            {
                return tasks;
            }
            if let Some(tasks) = task_tool_drafts(&maker, tool, payload, &options.project) {
                return tasks;
            }
            // other agents' plan tools: their whole list, as TodoWrite's
            if let Some(events) =
                plan_tool_events(tool, payload.tool_input.as_ref(), &options.project)
            {
                return task_drafts(&maker, payload, events);
            }
            let call = ToolCall {
                tool,
                input: payload.tool_input.as_ref(),
                response: payload.tool_response.as_ref(),
                tool_use_id: payload.tool_use_id.as_deref(),
                ..ToolCall::default()
            };
            vec![observe(&call).draft(|body| maker.draft(Kind::ToolObservation, body))]
        }
        HookEvent::PostToolUseFailure => {
            let Some(tool) = payload.tool_name.as_deref() else {
                return vec![maker.unknown_shape()];
            };
            if options.excludes(tool) {
                return Vec::new();
            }
            let call = ToolCall {
                tool,
                input: payload.tool_input.as_ref(),
                response: payload.tool_response.as_ref(),
                tool_use_id: payload.tool_use_id.as_deref(),
                failure: Some(payload.error.as_deref().unwrap_or("")),
                interrupted: payload.is_interrupt,
                ..ToolCall::default()
            };
            vec![observe(&call).draft(|body| maker.draft(Kind::ToolObservation, body))]
        }
        HookEvent::Stop | HookEvent::SubagentStop => {
            // A compaction's fork answers no one: what it wrote is the
            // session's summary.
            if let Some(summary) = compaction_summary(payload) {
                let mut draft = maker.text(Kind::SessionSummary, &summary);
                draft.meta.insert("compaction".into(), Value::Bool(true));
                return vec![draft];
            }
            // Calls no hook reported come first: they happened before the
            // answer.
            let mut drafts: Vec<Draft> = options
                .agent
                .unreported_calls(payload)
                .iter()
                .flat_map(|(ts, call)| drafts_at(call, context, options, ts))
                .map(|mut draft| {
                    draft
                        .meta
                        .insert("from_transcript".into(), Value::Bool(true));
                    draft
                })
                .collect();
            // What the agent said between its calls, before the answer.
            for (ts, text) in options.agent.earlier_texts(payload) {
                let mut draft = maker.text(Kind::AgentResponse, &text);
                if let Some(ts) = ts {
                    draft.ts = ts;
                }
                draft
                    .meta
                    .insert("from_transcript".into(), Value::Bool(true));
                drafts.push(draft);
            }
            let given = payload
                .last_assistant_message
                .as_deref()
                .map(str::trim)
                .filter(|t| !t.is_empty());
            if let Some(text) = given {
                drafts.push(maker.text(Kind::AgentResponse, text));
            } else if let Some(text) = options.agent.answer_from_files(payload) {
                let mut draft = maker.text(Kind::AgentResponse, &text);
                draft
                    .meta
                    .insert("from_transcript".into(), Value::Bool(true));
                drafts.push(draft);
            }
            drafts
        }
        HookEvent::PreCompact => {
            let instructions = payload
                .custom_instructions
                .as_deref()
                .map(str::trim)
                .filter(|t| !t.is_empty());
            match instructions {
                Some(instructions) => {
                    let mut draft =
                        maker.text(Kind::UserPrompt, &format!("/compact {instructions}"));
                    draft
                        .meta
                        .insert("slash_command".into(), Value::String("/compact".into()));
                    if let Some(trigger) = payload.trigger.as_deref() {
                        draft
                            .meta
                            .insert("compact_trigger".into(), Value::String(trigger.into()));
                    }
                    vec![draft]
                }
                None => Vec::new(),
            }
        }
    }
}

/// Task drafts for a TodoWrite call; `None` when the payload holds no todo
/// list (then the call is recorded as a plain tool observation).
fn todo_drafts(maker: &DraftMaker<'_>, payload: &Payload, project: &str) -> Option<Vec<Draft>> {
    let response = payload.tool_response.as_ref();
    let current = response
        .and_then(|r| r.get("newTodos"))
        .and_then(parse_todos)
        .or_else(|| {
            payload
                .tool_input
                .as_ref()
                .and_then(|i| i.get("todos"))
                .and_then(parse_todos)
        })?;
    let previous = response
        .and_then(|r| r.get("oldTodos"))
        .and_then(parse_todos);
    Some(task_drafts(
        maker,
        payload,
        task_events(&current, previous.as_deref(), project),
    ))
}

/// The drafts of a task tool call's events, each carrying the call's id.
fn task_drafts(
    maker: &DraftMaker<'_>,
    payload: &Payload,
    events: Vec<crate::todo::TaskEvent>,
) -> Vec<Draft> {
    events
        .into_iter()
        .map(|task| {
            let mut draft = maker.draft(task.kind, task.body);
            if let Some(id) = payload.tool_use_id.as_deref() {
                draft
                    .meta
                    .insert("tool_use_id".into(), Value::String(id.into()));
            }
            draft
        })
        .collect()
}

/// Task drafts for a call of Claude Code's task tools
/// ([`crate::todo::task_tool_events`]); `None` for any other tool, and for
/// a call that changes no tracked task (recorded as a plain observation).
/// A `TaskUpdate` names its task by the id its session gave it: the
/// subject is read from the file Claude Code keeps for that task.
fn task_tool_drafts(
    maker: &DraftMaker<'_>,
    tool: &str,
    payload: &Payload,
    project: &str,
) -> Option<Vec<Draft>> {
    if tool != TASK_CREATE && tool != TASK_UPDATE {
        return None;
    }
    let subject_of = |id: &str| claude_task_subject(payload, id);
    let events = task_tool_events(
        tool,
        payload.tool_input.as_ref(),
        payload.tool_response.as_ref(),
        project,
        &subject_of,
    )?;
    Some(task_drafts(maker, payload, events))
}

/// The subject task `id` of the payload's session was created with: from
/// its TaskCreate's result in the session's transcript, which keeps it
/// through a rename (an update recorded under the new title left the task
/// open under the old one) and a delete (which removes Claude Code's file
/// of the task); else from `<Claude Code's folder>/tasks/<session>/<id>.json`
/// (the folder holding the transcript's `projects`, else
/// `$CLAUDE_CONFIG_DIR`, else `~/.claude`).
fn claude_task_subject(payload: &Payload, id: &str) -> Option<String> {
    let transcript = payload.transcript_path.as_deref();
    if let Some(subject) = transcript.and_then(|t| created_in_transcript(t, id)) {
        return Some(subject);
    }
    if id.contains(['/', '\\']) || id.starts_with('.') {
        return None;
    }
    let session = transcript
        .and_then(|t| t.file_stem())
        .and_then(|s| s.to_str())
        .map(str::to_string)
        .or_else(|| payload.session_id.clone())?;
    let folders = [
        transcript
            .and_then(|t| t.parent()?.parent()?.parent())
            .map(std::path::Path::to_path_buf),
        std::env::var_os("CLAUDE_CONFIG_DIR").map(std::path::PathBuf::from),
        std::env::home_dir().map(|h| h.join(".claude")),
    ];
    folders.into_iter().flatten().find_map(|folder| {
        let file = folder
            .join("tasks")
            .join(&session)
            .join(format!("{id}.json"));
        let task: Value = serde_json::from_slice(&std::fs::read(file).ok()?).ok()?;
        task.get("subject")
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .map(str::to_string)
    })
}

/// The subject of the task `id` a TaskCreate of the transcript `path` made
/// (its line's `toolUseResult.task`). Only lines that may hold one are
/// parsed: a TaskUpdate is rare, a transcript long.
fn created_in_transcript(path: &std::path::Path, id: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .filter(|line| line.contains("\"toolUseResult\"") && line.contains("\"subject\""))
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find_map(|line| {
            let task = line.get("toolUseResult")?.get("task")?;
            let same = match task.get("id")? {
                Value::String(s) => s == id,
                Value::Number(n) => n.to_string() == id,
                _ => false,
            };
            same.then(|| task.get("subject")?.as_str().map(str::to_string))
                .flatten()
        })
}

/// Builds the drafts of one payload: same session, time, project and meta.
struct DraftMaker<'a> {
    payload: &'a Payload,
    session: String,
    ts: &'a str,
    project: &'a str,
    meta: Map<String, Value>,
}

impl<'a> DraftMaker<'a> {
    fn new(
        payload: &'a Payload,
        context: &CodeContext,
        options: &'a HookOptions,
        ts: &'a str,
    ) -> DraftMaker<'a> {
        let mut meta = Map::new();
        insert_text(
            &mut meta,
            "cwd",
            context.cwd.as_deref().or(payload.cwd.as_deref()),
        );
        insert_text(&mut meta, "branch", context.branch.as_deref());
        insert_text(&mut meta, "head", context.head.as_deref());
        meta.insert(
            "client".into(),
            Value::String(options.agent.client().into()),
        );
        insert_text(&mut meta, "agent_version", options.agent_version.as_deref());
        meta.insert("hook".into(), Value::String(payload.event_name.clone()));
        insert_text(&mut meta, "agent_id", payload.agent_id.as_deref());
        insert_text(&mut meta, "agent_type", payload.agent_type.as_deref());
        // the agent's id of the turn (Claude Code's `prompt_id`, Codex's
        // `turn_id`): tells the same words sent again from one hook
        // configured twice
        insert_text(
            &mut meta,
            "turn_id",
            ["prompt_id", "turn_id"]
                .iter()
                .find_map(|k| payload.raw.get(*k).and_then(Value::as_str)),
        );
        if payload.agent_id.is_some() || payload.event == Some(HookEvent::SubagentStop) {
            meta.insert("sidechain".into(), Value::Bool(true));
        }
        DraftMaker {
            payload,
            session: payload
                .session_id
                .clone()
                .unwrap_or_else(|| options.agent.unknown_session()),
            ts,
            project: &options.project,
            meta,
        }
    }

    fn draft(&self, kind: Kind, body: Map<String, Value>) -> Draft {
        Draft {
            session: self.session.clone(),
            ts: self.ts.to_string(),
            kind,
            project: self.project.to_string(),
            body,
            meta: self.meta.clone(),
        }
    }

    fn text(&self, kind: Kind, text: &str) -> Draft {
        let mut body = Map::new();
        body.insert("text".into(), Value::String(text.to_string()));
        self.draft(kind, body)
    }

    /// A payload memlog cannot read as its event: kept whole as a `note`
    /// marked `meta.unknown_hook`, so that nothing Claude Code sent is lost.
    fn unknown_shape(&self) -> Draft {
        let mut body = Map::new();
        body.insert(
            "text".into(),
            Value::String(format!(
                "Claude Code {} hook payload of a shape memlog does not know",
                self.payload.event_name
            )),
        );
        body.insert("payload".into(), self.payload.raw.clone());
        let mut draft = self.draft(Kind::Note, body);
        draft.meta.insert("unknown_hook".into(), Value::Bool(true));
        draft
    }
}

fn insert_text(map: &mut Map<String, Value>, key: &str, value: Option<&str>) {
    if let Some(v) = value.filter(|v| !v.is_empty()) {
        map.insert(key.to_string(), Value::String(v.to_string()));
    }
}

/// The summary a SubagentStop carries when its agent is a compaction's
/// fork (no `agent_type`, a `<summary>` answer): Claude Code's
/// ([`crate::claude_code::compaction`]).
fn compaction_summary(payload: &Payload) -> Option<String> {
    let fork = payload.event == Some(HookEvent::SubagentStop)
        && payload.agent_type.as_deref().is_none_or(str::is_empty);
    fork.then(|| {
        payload
            .last_assistant_message
            .as_deref()
            .and_then(crate::claude_code::compaction::from_answer)
    })
    .flatten()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::claude_code::UNKNOWN_SESSION;
    use crate::protocol::parse_payload;

    const TS: &str = "2026-11-22T05:27:21.123Z";

    fn map(event: &str, json: Value) -> Vec<Draft> {
        map_with(event, json, &HookOptions::new("shop"))
    }

    fn map_with(event: &str, json: Value, options: &HookOptions) -> Vec<Draft> {
        let payload = parse_payload(event, json.to_string().as_bytes()).unwrap();
        let context = CodeContext {
            cwd: Some("/repo".into()),
            branch: Some("main".into()),
            head: Some("0123abcd".into()),
        };
        drafts_at(&payload, &context, options, TS)
    }

    fn one(drafts: Vec<Draft>) -> Draft {
        assert_eq!(drafts.len(), 1, "{drafts:#?}");
        drafts.into_iter().next().unwrap()
    }

    #[test]
    fn session_start_and_end() {
        let d = one(map(
            "session-start",
            json!({"session_id": "s1", "hook_event_name": "SessionStart", "source": "resume",
                   "model": "claude-x", "cwd": "/elsewhere"}),
        ));
        assert_eq!(d.kind, Kind::SessionStart);
        assert_eq!(
            (d.session.as_str(), d.ts.as_str(), d.project.as_str()),
            ("s1", TS, "shop")
        );
        assert_eq!(d.body["source"], "resume");
        assert_eq!(d.body["model"], "claude-x");
        assert_eq!(
            Value::Object(d.meta),
            json!({"cwd": "/repo", "branch": "main", "head": "0123abcd",
                   "client": "claude-code", "hook": "SessionStart"})
        );
        let d = one(map(
            "SessionEnd",
            json!({"session_id": "s1", "reason": "logout"}),
        ));
        assert_eq!(d.kind, Kind::SessionEnd);
        assert_eq!(d.body["reason"], "logout");
        assert_eq!(d.meta["hook"], "SessionEnd");
    }

    #[test]
    fn the_payload_cwd_is_used_when_the_context_has_none() {
        let payload =
            parse_payload("Stop", br#"{"cwd":"/p","last_assistant_message":"ok"}"#).unwrap();
        let d = one(drafts_at(
            &payload,
            &CodeContext::default(),
            &HookOptions::default(),
            TS,
        ));
        assert_eq!(d.meta["cwd"], "/p");
        assert_eq!(d.session, UNKNOWN_SESSION);
        assert!(!d.meta.contains_key("branch"));
    }

    /// Claude Code 2.1.328's SubagentStop for `/compact` (captured from
    /// the real CLI against a scripted API): the fork's summary is the
    /// session's, a named subagent's answer stays an answer.
    #[test]
    fn a_compaction_forks_answer_is_the_sessions_summary() {
        let stop = |agent_type: &str| {
            one(map(
                "SubagentStop",
                json!({"session_id": "s1", "hook_event_name": "SubagentStop",
                       "agent_id": "a37cf98b0a1e81b64", "agent_type": agent_type,
                       "agent_transcript_path": "/nowhere/agent-a37cf98b0a1e81b64.jsonl",
                       "last_assistant_message":
                           "<analysis>working</analysis>\n<summary>The rotation is on Tuesdays.</summary>"}),
            ))
        };
        let d = stop("");
        assert_eq!(d.kind, Kind::SessionSummary);
        assert_eq!(d.body["text"], "The rotation is on Tuesdays.");
        assert_eq!(d.meta["compaction"], true);
        assert_eq!(stop("general-purpose").kind, Kind::AgentResponse);
    }

    #[test]
    fn user_prompt() {
        let d = one(map(
            "UserPromptSubmit",
            json!({"session_id": "s", "prompt": "Fix getUserById"}),
        ));
        assert_eq!(d.kind, Kind::UserPrompt);
        assert_eq!(d.body["text"], "Fix getUserById");
        assert!(
            map(
                "UserPromptSubmit",
                json!({"session_id": "s", "prompt": "  "})
            )
            .is_empty()
        );
        let unknown = one(map("UserPromptSubmit", json!({"session_id": "s"})));
        assert_eq!(unknown.meta["unknown_hook"], true);
    }

    #[test]
    fn post_tool_use_is_an_observation_unless_excluded() {
        let payload = json!({"session_id": "s", "hook_event_name": "PostToolUse", "tool_name": "Bash",
            "tool_input": {"command": "ls"}, "tool_response": {"stdout": "a\nb", "stderr": "", "interrupted": false},
            "tool_use_id": "toolu_9"});
        let d = one(map("PostToolUse", payload.clone()));
        assert_eq!(d.kind, Kind::ToolObservation);
        assert_eq!(d.body["tool"], "Bash");
        assert_eq!(d.body["input"], json!({"command": "ls"}));
        assert_eq!(d.body["output"], "a\nb");
        assert_eq!(d.body["success"], true);
        assert_eq!(d.body["tool_use_id"], "toolu_9");
        assert_eq!(d.body["metadata"]["command"], "ls");
        let options = HookOptions {
            excluded_tools: vec!["Bash".into()],
            ..HookOptions::new("shop")
        };
        assert!(map_with("PostToolUse", payload, &options).is_empty());
    }

    #[test]
    fn post_tool_use_failure_is_a_failed_observation() {
        let d = one(map(
            "PostToolUseFailure",
            json!({"session_id": "s", "tool_name": "Bash", "tool_input": {"command": "npm test"},
                   "error": "Command exited with non-zero status code 1", "is_interrupt": false}),
        ));
        assert_eq!(d.body["success"], false);
        assert_eq!(
            d.body["error"],
            "Command exited with non-zero status code 1"
        );
        assert_eq!(d.meta["hook"], "PostToolUseFailure");
        // Claude Code 2.1.328 gives a failed command's output only in
        // `error` (field test 12a): kept whole as the output
        let d = one(map(
            "PostToolUseFailure",
            json!({"session_id": "s", "tool_name": "Bash", "tool_use_id": "toolu_1",
                   "tool_input": {"command": "pytest -q; exit 3"},
                   "error": "Exit code 3\nFAILED test_refund: expected 100 got 99",
                   "is_interrupt": false}),
        ));
        assert_eq!(d.body["success"], false);
        assert_eq!(d.body["error"], "Exit code 3");
        assert_eq!(
            d.body["output"],
            "Exit code 3\nFAILED test_refund: expected 100 got 99"
        );
        // an interrupt says nothing more than that
        let d = one(map(
            "PostToolUseFailure",
            json!({"session_id": "s", "tool_name": "Bash", "tool_input": {"command": "sleep 9"},
                   "error": "", "is_interrupt": true}),
        ));
        assert!(!d.body.contains_key("output"), "{:?}", d.body);
    }

    #[test]
    fn pre_tool_use_is_recorded_only_on_request() {
        let payload = json!({"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Read",
                             "tool_input": {"file_path": "/a"}});
        assert!(map("PreToolUse", payload.clone()).is_empty());
        let options = HookOptions {
            record_pre_tool_use: true,
            ..HookOptions::new("shop")
        };
        let d = one(map_with("PreToolUse", payload, &options));
        assert_eq!(d.kind, Kind::ToolObservation);
        assert_eq!(d.meta["pre_tool_use"], true);
        assert!(!d.body.contains_key("output"));
        assert_eq!(d.body["metadata"]["file_path"], "/a");
    }

    #[test]
    fn todo_write_becomes_task_events() {
        let drafts = map(
            "PostToolUse",
            json!({"session_id": "s", "tool_name": "TodoWrite", "tool_use_id": "toolu_t",
                "tool_input": {"todos": [{"content": "Add tests", "status": "in_progress", "activeForm": "Adding tests"},
                                         {"content": "Ship it", "status": "pending", "activeForm": "Shipping"}]},
                "tool_response": {"oldTodos": [{"content": "Add tests", "status": "pending"}],
                                  "newTodos": [{"content": "Add tests", "status": "in_progress"},
                                               {"content": "Ship it", "status": "pending"}]}}),
        );
        let kinds: Vec<&str> = drafts.iter().map(|d| d.kind.as_str()).collect();
        assert_eq!(kinds, ["task_status_changed", "task_created"]);
        assert_eq!(drafts[0].body["key"], "shop::add tests");
        assert_eq!(drafts[0].body["from"], "pending");
        assert_eq!(drafts[0].body["to"], "in_progress");
        assert_eq!(drafts[1].body["title"], "Ship it");
        assert_eq!(drafts[1].meta["tool_use_id"], "toolu_t");
        // Without a response, the input's list is used and every todo is new.
        let drafts = map(
            "PostToolUse",
            json!({"session_id": "s", "tool_name": "TodoWrite",
                   "tool_input": {"todos": [{"content": "Add tests", "status": "completed"}]}}),
        );
        assert_eq!(one(drafts).body["status"], "done");
        // Excluded TodoWrite records nothing.
        let options = HookOptions {
            excluded_tools: vec!["TodoWrite".into()],
            ..HookOptions::new("shop")
        };
        assert!(
            map_with(
                "PostToolUse",
                json!({"session_id": "s", "tool_name": "TodoWrite", "tool_input": {"todos": []}}),
                &options
            )
            .is_empty()
        );
    }

    #[test]
    fn other_agents_plan_tools_become_task_events() {
        let drafts = map(
            "PostToolUse",
            json!({"session_id": "s", "tool_name": "update_plan", "tool_use_id": "call_1",
                   "tool_input": {"plan": [{"step": "Add tests", "status": "completed"},
                                           {"step": "Ship it", "status": "pending"}]},
                   "tool_response": "Plan updated"}),
        );
        let kinds: Vec<&str> = drafts.iter().map(|d| d.kind.as_str()).collect();
        assert_eq!(kinds, ["task_created", "task_created"]);
        assert_eq!(drafts[0].body["key"], "shop::add tests");
        assert_eq!(drafts[0].body["status"], "done");
        assert_eq!(drafts[0].body["source"], "update_plan");
        assert_eq!(drafts[1].meta["tool_use_id"], "call_1");
        // a failed call changed no list: the plain observation
        let failed = one(map(
            "PostToolUseFailure",
            json!({"session_id": "s", "tool_name": "write_todos", "error": "invalid",
                   "tool_input": {"todos": [{"description": "A", "status": "done?"}]}}),
        ));
        assert_eq!(failed.kind, Kind::ToolObservation);
        // a call without its list, too
        let odd = one(map(
            "PostToolUse",
            json!({"session_id": "s", "tool_name": "todowrite", "tool_input": {}}),
        ));
        assert_eq!(odd.kind, Kind::ToolObservation);
    }

    #[test]
    fn stop_uses_the_last_assistant_message() {
        let d = one(map(
            "Stop",
            json!({"session_id": "s", "stop_hook_active": false, "last_assistant_message": " Done. \n"}),
        ));
        assert_eq!(d.kind, Kind::AgentResponse);
        assert_eq!(d.body["text"], "Done.");
        assert!(!d.meta.contains_key("from_transcript"));
        let missing = json!({"session_id": "s", "transcript_path": "/nonexistent/x.jsonl"});
        assert!(map("Stop", missing).is_empty());
    }

    #[test]
    fn subagent_stop_stays_in_the_parent_session() {
        let d = one(map(
            "SubagentStop",
            json!({"session_id": "parent", "agent_id": "a1", "agent_type": "Explore",
                   "last_assistant_message": "Found it"}),
        ));
        assert_eq!(d.session, "parent");
        assert_eq!(d.meta["agent_id"], "a1");
        assert_eq!(d.meta["agent_type"], "Explore");
        assert_eq!(d.meta["sidechain"], true);
        assert_eq!(d.meta["hook"], "SubagentStop");
    }

    #[test]
    fn pre_compact_keeps_only_user_instructions() {
        assert!(
            map(
                "PreCompact",
                json!({"session_id": "s", "trigger": "auto", "custom_instructions": ""})
            )
            .is_empty()
        );
        let d = one(map(
            "PreCompact",
            json!({"session_id": "s", "trigger": "manual", "custom_instructions": "keep the API notes"}),
        ));
        assert_eq!(d.kind, Kind::UserPrompt);
        assert_eq!(d.body["text"], "/compact keep the API notes");
        assert_eq!(d.meta["compact_trigger"], "manual");
    }

    #[test]
    fn unknown_shapes_are_kept_whole() {
        let d = one(map(
            "Notification",
            json!({"session_id": "s", "hook_event_name": "Notification", "message": "idle"}),
        ));
        assert_eq!(d.kind, Kind::Note);
        assert_eq!(d.meta["unknown_hook"], true);
        assert_eq!(d.meta["hook"], "Notification");
        assert_eq!(d.body["payload"]["message"], "idle");
        let d = one(map("SessionStart", json!(["not", "an", "object"])));
        assert_eq!(d.meta["unknown_hook"], true);
        assert_eq!(d.body["payload"], json!(["not", "an", "object"]));
    }
}
