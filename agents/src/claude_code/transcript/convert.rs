//! Turning a transcript's lines into drafts: prompts, answers, tool calls
//! with their results, TodoWrite as task events, summaries.

use std::collections::{HashMap, HashSet};

use memlog_format::{Draft, Kind};
use serde_json::{Map, Value};

use super::lines::{
    Line, UserText, classify_user_text, is_copied_answer, is_local_command_output, is_sidechain,
    line_ref, line_ts, readable_message, user_text,
};
use crate::HookOptions;
use crate::todo::{
    TASK_CREATE, TASK_UPDATE, TODO_TOOL, Todo, created_task, parse_todos, task_events,
    task_tool_events,
};
use crate::tool::{ToolCall, content_blocks_text, observe};

/// The client name memlog records in `meta.client` for Claude Code.
pub const CLIENT: &str = "claude-code";

/// The session a payload without a `session_id` is recorded in.
pub const UNKNOWN_SESSION: &str = "claude-code-unknown";

/// A transcript converted to drafts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Transcript {
    /// The session: the first `sessionId` in the file, else the file name.
    pub session_id: String,
    /// The drafts in file order, each with its stable external reference
    /// (also in `meta.ref`).
    pub drafts: Vec<(String, Draft)>,
    /// Lines of a type memlog does not know (or without a type).
    pub skipped: usize,
    /// Lines of a known type that carry nothing to record.
    pub ignored: usize,
    /// Lines that are not JSON objects, or user/assistant lines without a
    /// readable message.
    pub malformed: usize,
}

/// A tool's answer, found in a user line.
pub(super) struct ToolResult {
    ts: Option<String>,
    text: Option<String>,
    is_error: Option<bool>,
    structured: Option<Value>,
}

/// Converts the lines of one file, appending to `out`.
pub(super) fn convert(
    lines: &[Line],
    agent_id: Option<&str>,
    options: &HookOptions,
    out: &mut Transcript,
) {
    let mut converter = Converter {
        session: out.session_id.clone(),
        options,
        agent_id,
        results: HashMap::new(),
        times: HashMap::new(),
        first_ts: None,
        last_ts: None,
        todo_lists: HashMap::new(),
        task_subjects: HashMap::new(),
        queued: Vec::new(),
        unanswered_command: None,
        roots: HashMap::new(),
        copied: HashSet::new(),
        last_cwd: None,
        last_branch: None,
    };
    converter.index(lines);
    for line in lines {
        let Some(object) = &line.value else {
            out.malformed += 1;
            continue;
        };
        converter.line(line.number, object, out);
    }
}

pub(super) struct Converter<'a> {
    session: String,
    options: &'a HookOptions,
    agent_id: Option<&'a str>,
    /// Tool results by tool_use_id.
    results: HashMap<String, ToolResult>,
    /// Line times by uuid (for summaries).
    times: HashMap<String, String>,
    first_ts: Option<String>,
    /// The time of the last line that had one (for lines without).
    last_ts: Option<String>,
    /// The last TodoWrite list of each conversation: the main one, or a
    /// subagent's thread.
    todo_lists: HashMap<String, Vec<Todo>>,
    /// The subjects of the tasks each conversation made with TaskCreate,
    /// by (conversation, task id): a TaskUpdate names only the id.
    task_subjects: HashMap<(String, String), String>,
    /// Prompts recorded from queue operations and not yet seen again as
    /// user lines.
    queued: Vec<String>,
    /// The draft of the last slash command, while the model has not
    /// answered it: one that Claude Code ran itself (`/compact`, `/cost`,
    /// `/model`) is answered by `<local-command-stdout>` instead, and is
    /// left out, as the hooks, which never see it, leave it out.
    unanswered_command: Option<usize>,
    /// The first line of each line's thread (`parentUuid` chain), by uuid:
    /// it tells apart the subagents that Claude Code 1.x interleaves in
    /// one file.
    roots: HashMap<String, String>,
    /// Lines a forked session (`--resume … --fork-session`) copied from the
    /// session it forked, by uuid: the parent's own transcript and hooks
    /// recorded them already.
    copied: HashSet<String>,
    /// The working directory and branch of the last line that had them,
    /// for lines that do not (queue operations).
    last_cwd: Option<String>,
    last_branch: Option<String>,
}

impl<'a> Converter<'a> {
    /// First pass: tool results, line times and the lines a fork copied.
    fn index(&mut self, lines: &[Line]) {
        let mut parents: HashMap<&str, &str> = HashMap::new();
        let mut copied_answers: Vec<&str> = Vec::new();
        for object in lines.iter().filter_map(|l| l.value.as_ref()) {
            if let Some(uuid) = object.get("uuid").and_then(Value::as_str) {
                if let Some(parent) = object.get("parentUuid").and_then(Value::as_str) {
                    parents.insert(uuid, parent);
                }
                if is_copied_answer(object) {
                    copied_answers.push(uuid);
                }
                let root = object
                    .get("parentUuid")
                    .and_then(Value::as_str)
                    .map(|parent| self.roots.get(parent).map_or(parent, String::as_str))
                    .unwrap_or(uuid)
                    .to_string();
                self.roots.entry(uuid.to_string()).or_insert(root);
            }
            let ts = line_ts(object);
            if let (Some(ts), Some(uuid)) = (&ts, object.get("uuid").and_then(Value::as_str)) {
                self.times.entry(uuid.to_string()).or_insert(ts.clone());
            }
            if self.first_ts.is_none() {
                self.first_ts.clone_from(&ts);
            }
            if object.get("type").and_then(Value::as_str) != Some("user") {
                continue;
            }
            let Some(Value::Array(blocks)) = object.get("message").and_then(|m| m.get("content"))
            else {
                continue;
            };
            let results: Vec<&Map<String, Value>> = blocks
                .iter()
                .filter_map(Value::as_object)
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
                .collect();
            // `toolUseResult` belongs to the line's result only when there is one.
            let structured = if results.len() == 1 {
                object.get("toolUseResult").cloned()
            } else {
                None
            };
            for block in results {
                let Some(id) = block.get("tool_use_id").and_then(Value::as_str) else {
                    continue;
                };
                let text = match block.get("content") {
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(Value::Array(items)) => content_blocks_text(items),
                    _ => None,
                };
                self.results.entry(id.to_string()).or_insert(ToolResult {
                    ts: ts.clone(),
                    text,
                    is_error: block.get("is_error").and_then(Value::as_bool),
                    structured: structured.clone(),
                });
            }
        }
        // what a copied answer answers was copied with it: the prompt, the
        // tool results before it
        for mut uuid in copied_answers {
            while self.copied.insert(uuid.to_string()) {
                let Some(parent) = parents.get(uuid) else {
                    break;
                };
                uuid = parent;
            }
        }
    }

    fn line(&mut self, number: usize, line: &Map<String, Value>, out: &mut Transcript) {
        if line
            .get("uuid")
            .and_then(Value::as_str)
            .is_some_and(|uuid| self.copied.contains(uuid))
        {
            out.ignored += 1;
            return;
        }
        match line.get("type").and_then(Value::as_str) {
            Some("user") => self.user(number, line, out),
            Some("assistant") => self.assistant(number, line, out),
            Some("summary") => self.summary(number, line, out),
            Some("queue-operation") => self.queue_operation(number, line, out),
            Some("progress" | "system" | "file-history-snapshot") => out.ignored += 1,
            _ => out.skipped += 1,
        }
        if let Some(ts) = line_ts(line) {
            self.last_ts = Some(ts);
        }
        if let Some(cwd) = line.get("cwd").and_then(Value::as_str) {
            self.last_cwd = Some(cwd.to_string());
        }
        if let Some(branch) = line.get("gitBranch").and_then(Value::as_str) {
            self.last_branch = Some(branch.to_string());
        }
    }

    /// Which conversation a line belongs to: the main one, a subagent's
    /// file, or (Claude Code 1.x) the thread of an inlined subagent.
    fn conversation(&self, line: &Map<String, Value>) -> String {
        if let Some(agent) = self.agent_id {
            return format!("agent:{agent}");
        }
        if !is_sidechain(line) {
            return "main".into();
        }
        let uuid = line.get("uuid").and_then(Value::as_str).unwrap_or("");
        let root = self.roots.get(uuid).map_or(uuid, String::as_str);
        format!("sidechain:{root}")
    }

    /// The time of a line: its own, else the last one before it, else the
    /// file's first.
    fn ts(&self, line: &Map<String, Value>) -> Option<String> {
        line_ts(line)
            .or_else(|| self.last_ts.clone())
            .or_else(|| self.first_ts.clone())
    }

    /// A prompt the user typed while the agent was busy is written only as
    /// an `enqueue` operation when Claude Code hands it to the agent in the
    /// middle of a turn; one that waits for the turn to end is written
    /// again as a user line, which is then not recorded a second time.
    fn queue_operation(&mut self, number: usize, line: &Map<String, Value>, out: &mut Transcript) {
        let content = line
            .get("content")
            .and_then(Value::as_str)
            .filter(|c| !c.trim().is_empty());
        let enqueued = line.get("operation").and_then(Value::as_str) == Some("enqueue");
        let (Some(content), true, Some(ts)) = (content, enqueued, self.ts(line)) else {
            out.ignored += 1;
            return;
        };
        let (text, slash) = match classify_user_text(line, content) {
            UserText::Prompt => (content.to_string(), None),
            UserText::TypedAfterReminders(typed) => (typed, None),
            UserText::SlashCommand(typed, name) => (typed, Some(name)),
            UserText::Harness | UserText::CompactSummary => {
                out.ignored += 1;
                return;
            }
        };
        self.queued.push(content.trim().to_string());
        let reference = line_ref(number, line, 0);
        let mut body = Map::new();
        body.insert("text".into(), Value::String(text));
        let mut draft = self.draft(line, ts, Kind::UserPrompt, body, &reference);
        draft.meta.insert("queued".into(), Value::Bool(true));
        // queued as typed: `/compact`, not wrapped in command tags
        self.unanswered_command =
            (slash.is_some() || content.trim_start().starts_with('/')).then_some(out.drafts.len());
        if let Some(name) = slash {
            draft
                .meta
                .insert("slash_command".into(), Value::String(name));
        }
        out.drafts.push((reference, draft));
    }

    fn user(&mut self, number: usize, line: &Map<String, Value>, out: &mut Transcript) {
        let Some(message) = readable_message(line) else {
            out.malformed += 1;
            return;
        };
        let Some(text) = user_text(message) else {
            return;
        };
        let Some(ts) = self.ts(line) else {
            out.malformed += 1;
            return;
        };
        let reference = line_ref(number, line, 0);
        let (kind, typed, slash) = match classify_user_text(line, &text) {
            UserText::Harness => {
                if is_local_command_output(&text)
                    && let Some(at) = self.unanswered_command.take()
                    && at < out.drafts.len()
                {
                    out.drafts.remove(at);
                    out.ignored += 1;
                }
                return;
            }
            UserText::Prompt => (Kind::UserPrompt, text.clone(), None),
            UserText::TypedAfterReminders(typed) => (Kind::UserPrompt, typed, None),
            UserText::CompactSummary => (
                Kind::SessionSummary,
                crate::claude_code::compaction::from_continuation(&text),
                None,
            ),
            UserText::SlashCommand(typed, name) => (Kind::UserPrompt, typed, Some(name)),
        };
        // A subagent's prompt is its parent agent's words, not the user's:
        // they are recorded as the `prompt` of the Agent (Task) call that
        // started it, and the hooks, which see no prompt of a subagent,
        // record nothing more. Kept as a prompt, a re-import of a hooked
        // session added it as one (a commit, a prompt count, "Last prompts").
        if kind == Kind::UserPrompt && (is_sidechain(line) || self.agent_id.is_some()) {
            out.ignored += 1;
            return;
        }
        // Already recorded when it was queued: the line holds the text as
        // typed, or (a slash command) wrapped in its command tags.
        if kind == Kind::UserPrompt
            && let Some(at) = self
                .queued
                .iter()
                .position(|q| *q == text.trim() || *q == typed.trim())
        {
            self.queued.remove(at);
            return;
        }
        let text = typed;
        let mut body = Map::new();
        body.insert("text".into(), Value::String(text));
        if kind == Kind::UserPrompt {
            self.unanswered_command = None;
        }
        let mut draft = self.draft(line, ts, kind, body, &reference);
        if let Some(name) = slash {
            draft
                .meta
                .insert("slash_command".into(), Value::String(name));
            self.unanswered_command = Some(out.drafts.len());
        }
        out.drafts.push((reference, draft));
    }

    fn assistant(&mut self, number: usize, line: &Map<String, Value>, out: &mut Transcript) {
        let Some(message) = readable_message(line) else {
            out.malformed += 1;
            return;
        };
        let Some(ts) = self.ts(line) else {
            out.malformed += 1;
            return;
        };
        // the model answers: a slash command before it was a prompt
        self.unanswered_command = None;
        let blocks: Vec<Value> = match message.get("content") {
            Some(Value::Array(blocks)) => blocks.clone(),
            Some(Value::String(s)) => vec![serde_json::json!({"type": "text", "text": s})],
            _ => Vec::new(),
        };
        for (index, block) in blocks.iter().enumerate() {
            let reference = line_ref(number, line, index);
            match block.get("type").and_then(Value::as_str) {
                Some("text") => {
                    let text = block
                        .get("text")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .trim();
                    if text.is_empty() {
                        continue;
                    }
                    let mut body = Map::new();
                    body.insert("text".into(), Value::String(text.to_string()));
                    let draft = self.draft(line, ts.clone(), Kind::AgentResponse, body, &reference);
                    out.drafts.push((reference, draft));
                }
                Some("tool_use") => self.tool_use(line, &ts, block, reference, out),
                // thinking, redacted_thinking, images, …: not recorded.
                _ => {}
            }
        }
    }

    /// The drafts of a task tool call's events, each referenced from the
    /// call's and carrying its id.
    fn push_tasks(
        &self,
        line: &Map<String, Value>,
        ts: &str,
        tasks: Vec<crate::todo::TaskEvent>,
        reference: &str,
        id: Option<&str>,
        out: &mut Transcript,
    ) {
        for task in tasks {
            let task_ref = task.reference(reference);
            let mut draft = self.draft(line, ts.to_string(), task.kind, task.body, &task_ref);
            if let Some(id) = id {
                draft
                    .meta
                    .insert("tool_use_id".into(), Value::String(id.to_string()));
            }
            out.drafts.push((task_ref, draft));
        }
    }

    fn tool_use(
        &mut self,
        line: &Map<String, Value>,
        ts: &str,
        block: &Value,
        reference: String,
        out: &mut Transcript,
    ) {
        let Some(tool) = block
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
        else {
            return;
        };
        if self.options.excludes(tool) {
            return;
        }
        let input = block.get("input");
        let id = block.get("id").and_then(Value::as_str);
        let result = id.and_then(|id| self.results.get(id));
        // A TodoWrite call that failed changed no list: it is recorded as
        // the failed call it is.
        let failed = result.is_some_and(|r| r.is_error == Some(true));
        if tool == TODO_TOOL
            && !failed
            && let Some(todos) = input.and_then(|i| i.get("todos")).and_then(parse_todos)
        {
            let conversation = self.conversation(line);
            let previous = self.todo_lists.get(&conversation).map(Vec::as_slice);
            let tasks = task_events(&todos, previous, &self.options.project);
            self.push_tasks(line, ts, tasks, &reference, id, out);
            self.todo_lists.insert(conversation, todos);
            return;
        }
        if (tool == TASK_CREATE || tool == TASK_UPDATE) && !failed {
            let conversation = self.conversation(line);
            let response = result.and_then(|r| r.structured.as_ref());
            if tool == TASK_CREATE
                && let Some((Some(task), subject)) = created_task(input, response)
            {
                self.task_subjects
                    .insert((conversation.clone(), task), subject);
            }
            let subjects = &self.task_subjects;
            let subject_of = |task: &str| {
                subjects
                    .get(&(conversation.clone(), task.to_string()))
                    .cloned()
            };
            if let Some(tasks) =
                task_tool_events(tool, input, response, &self.options.project, &subject_of)
            {
                self.push_tasks(line, ts, tasks, &reference, id, out);
                return;
            }
        }
        let observation = observe(&ToolCall {
            tool,
            input,
            response: result.and_then(|r| r.structured.as_ref()),
            result_text: result.and_then(|r| r.text.clone()),
            tool_use_id: id,
            is_error: result.map(|r| r.is_error.unwrap_or(false)),
            ..ToolCall::default()
        });
        // The observation is made when the result comes back.
        let observed = result
            .and_then(|r| r.ts.clone())
            .unwrap_or_else(|| ts.to_string());
        let draft = observation
            .draft(|body| self.draft(line, observed, Kind::ToolObservation, body, &reference));
        out.drafts.push((reference, draft));
    }

    fn summary(&mut self, number: usize, line: &Map<String, Value>, out: &mut Transcript) {
        let Some(text) = line
            .get("summary")
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
        else {
            out.malformed += 1;
            return;
        };
        let leaf = line.get("leafUuid").and_then(Value::as_str);
        let ts = leaf
            .and_then(|uuid| self.times.get(uuid).cloned())
            .or_else(|| line_ts(line))
            .or_else(|| self.first_ts.clone());
        let Some(ts) = ts else {
            out.malformed += 1;
            return;
        };
        let reference = match leaf {
            Some(uuid) => format!("summary:{uuid}"),
            None => format!("summary:line:{number}"),
        };
        let mut body = Map::new();
        body.insert("text".into(), Value::String(text.to_string()));
        let mut draft = self.draft(line, ts, Kind::SessionSummary, body, &reference);
        if let Some(uuid) = leaf {
            draft
                .meta
                .insert("leaf_uuid".into(), Value::String(uuid.to_string()));
        }
        out.drafts.push((reference, draft));
    }

    fn draft(
        &self,
        line: &Map<String, Value>,
        ts: String,
        kind: Kind,
        body: Map<String, Value>,
        reference: &str,
    ) -> Draft {
        let mut meta = Map::new();
        let text = |key: &str| {
            line.get(key)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(|s| Value::String(s.to_string()))
        };
        let carried = |value: &Option<String>| {
            value
                .as_deref()
                .filter(|s| !s.is_empty())
                .map(|s| Value::String(s.to_string()))
        };
        if let Some(cwd) = text("cwd").or_else(|| carried(&self.last_cwd)) {
            meta.insert("cwd".into(), cwd);
        }
        if let Some(branch) = text("gitBranch").or_else(|| carried(&self.last_branch)) {
            meta.insert("branch".into(), branch);
        }
        meta.insert("client".into(), Value::String(CLIENT.into()));
        meta.insert("ref".into(), Value::String(reference.to_string()));
        let agent = text("agentId").or_else(|| self.agent_id.map(|a| Value::String(a.into())));
        if let Some(agent) = agent {
            meta.insert("agent_id".into(), agent);
        }
        if is_sidechain(line) || self.agent_id.is_some() {
            meta.insert("sidechain".into(), Value::Bool(true));
        }
        Draft {
            session: self.session.clone(),
            ts,
            kind,
            project: self.options.project.clone(),
            body,
            meta,
        }
    }
}
