//! Codex CLI session files ("rollouts",
//! `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`) as memlog
//! drafts, in every format Codex has written since 0.60 (checked against
//! 0.60.1, 0.104.0, 0.149.0 and 0.169.0).
//!
//! One JSON object per line, `{"timestamp", "type", "payload"}` (and an
//! `ordinal` since the paginated history of 0.14x). Two families of lines
//! say what happened, and versions differ in which they write:
//!
//! - what the model saw and did, `response_item`s: its tool calls
//!   (`function_call`, `custom_tool_call`, `local_shell_call`,
//!   `web_search_call`) and their outputs (`function_call_output`,
//!   `custom_tool_call_output`), and messages, which also carry the
//!   harness's additions (environment context, instructions, injected hook
//!   context) and are therefore not read as prompts;
//! - what the user saw, `event_msg`s: the typed prompt and the agent's
//!   messages (`user_message`, `agent_message`, up to 0.14x; in the
//!   paginated history `item_completed` with a `UserMessage` or
//!   `AgentMessage` item), and the outcome of tool calls (`exec_command_end`
//!   and `patch_apply_end` in some versions; `item_completed` with a
//!   `CommandExecution`, whose `exit_code` is the real one, or a
//!   `FileChange`, the files an edit changed).
//!
//! So a prompt is a `user_message` or `UserMessage` (a turn that has the
//! second is not read from the first); an answer an `agent_message` or
//! `AgentMessage`; a tool call each model call, completed by what the
//! rollout says of its outcome, and recorded as the hooks name it: the
//! shell tools (`exec_command`, `shell`, `shell_command`, local shell
//! calls) as `Bash` with `input.command`, the output the command printed
//! and its exit code (from the item, else the output's `Exit code: N` /
//! `Process exited with code N`); an edit, `apply_patch` called as a tool or
//! through the shell, as `apply_patch` with its files and changes
//! ([`super::patch`]); an `update_plan` call its plan's task events, as
//! the Stop hook records them (`todo.rs`; unless Codex refused the
//! call); any other tool under its own name, with its arguments.
//! `tool_use_id` is the call's id, as in the hook payloads. Compactions
//! (`compacted`) become `session_summary`s.
//!
//! A subagent's rollout (`session_meta.source.subagent`, a
//! `parent_thread_id`) is recorded in its parent's session, as its hooks
//! are: each draft with `meta.agent_id` (the subagent's thread),
//! `agent_type` (its role, `default` without one) and `sidechain: true`.
//! When it started from the parent's history, the history it repeats (from
//! `subagent_history_start_ordinal`, or a second `session_meta` up to the
//! subagent's own turns) is not read again.
//!
//! Every draft's `meta.ref` is its item's or call's id (the line's number
//! when it has none) and its `ts` its line's `timestamp`, so reading the
//! same file again gives the same drafts.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use memlog_format::{Draft, Kind};
use serde_json::{Map, Value, json};

use super::patch;
use crate::sessions::read_text;
use crate::todo::observed_plan_events;
use crate::tool::{Observation, ToolCall, observe};
use crate::{HookOptions, Result};

/// The client name memlog records in `meta.client` for Codex CLI.
pub const CLIENT: &str = "codex";

/// A rollout converted to drafts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rollout {
    /// The session its drafts are recorded in: `session_meta.id`, a
    /// subagent's parent session, else the file name.
    pub session_id: String,
    /// Codex's thread (`session_meta.id`).
    pub thread_id: Option<String>,
    /// Where Codex ran (`session_meta.cwd`).
    pub cwd: Option<String>,
    /// The Codex CLI version that wrote it (`session_meta.cli_version`).
    pub cli_version: Option<String>,
    /// Set when the rollout is a subagent's.
    pub subagent: Option<Subagent>,
    /// The drafts in file order.
    pub drafts: Vec<Draft>,
    /// Lines that are not JSON objects.
    pub malformed: usize,
}

/// A subagent's rollout: who it is in its parent's session.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Subagent {
    /// Its own thread (`meta.agent_id`).
    pub thread_id: String,
    /// Its role (`meta.agent_type`).
    pub agent_type: String,
}

/// The `session_meta` payload of a rollout's first line, if it is one.
pub fn session_meta(first_line: &str) -> Option<Map<String, Value>> {
    let value: Value = serde_json::from_str(first_line).ok()?;
    if value.get("type")?.as_str()? != "session_meta" {
        return None;
    }
    value.get("payload")?.as_object().cloned()
}

/// Reads one rollout file.
pub fn read(path: impl AsRef<Path>, options: &HookOptions) -> Result<Rollout> {
    let (text, fallback) = read_text(path.as_ref())?;
    Ok(parse(&text, &fallback, options))
}

/// Converts a rollout's text; `fallback_session` names the session when the
/// file has no `session_meta`.
pub fn parse(text: &str, fallback_session: &str, options: &HookOptions) -> Rollout {
    let mut rollout = Rollout {
        session_id: fallback_session.to_string(),
        ..Rollout::default()
    };
    let mut values = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<Value>(line) {
            Ok(value @ Value::Object(_)) => values.push(value),
            _ => rollout.malformed += 1,
        }
    }
    let lines = Line::all(&values);
    if let Some(meta) = lines.iter().find(|l| l.kind == "session_meta") {
        read_meta(&mut rollout, meta.payload);
    }
    if rollout.session_id.is_empty() {
        rollout.session_id = format!("{CLIENT}-unknown");
    }
    let own = own_lines(&lines, rollout.thread_id.as_deref());
    let lines: Vec<&Line> = lines
        .iter()
        .zip(own)
        .filter(|(_, o)| *o)
        .map(|(l, _)| l)
        .collect();
    let index = Index::of(lines.iter().copied());
    let maker = Maker {
        rollout: &rollout,
        options,
    };
    let mut drafts = Vec::new();
    for line in &lines {
        let Some(ts) = line.ts.as_deref() else {
            continue;
        };
        let reference = |id: Option<&str>| {
            id.filter(|i| !i.is_empty())
                .map(str::to_string)
                .unwrap_or_else(|| format!("line:{}", line.number))
        };
        let text_draft = |kind: Kind, text: String, id: Option<&str>| {
            let mut body = Map::new();
            body.insert("text".into(), Value::String(text));
            maker.draft(ts, kind, body, reference(id))
        };
        let payload = line.payload;
        let payload_type = payload.get("type").and_then(Value::as_str).unwrap_or("");
        match (line.kind, payload_type) {
            ("event_msg", "item_completed") => {
                let Some(item) = payload.get("item") else {
                    continue;
                };
                let id = item.get("id").and_then(Value::as_str);
                match item.get("type").and_then(Value::as_str) {
                    Some("UserMessage") => {
                        if let Some(text) = content_text(item).filter(|t| typed(t)) {
                            drafts.push(text_draft(Kind::UserPrompt, text, id));
                        }
                    }
                    Some("AgentMessage") => {
                        if let Some(text) = agent_text(line, &index) {
                            drafts.push(text_draft(Kind::AgentResponse, text, id));
                        }
                    }
                    _ => {}
                }
            }
            ("event_msg", "user_message") if !index.has_items(line.turn.as_deref()) => {
                let kind = payload.get("kind").and_then(Value::as_str);
                let text = payload
                    .get("message")
                    .and_then(Value::as_str)
                    .map(str::trim);
                if let Some(text) = text.filter(|t| typed(t))
                    && kind.is_none_or(|k| k == "plain")
                {
                    drafts.push(text_draft(Kind::UserPrompt, text.to_string(), None));
                }
            }
            ("event_msg", "agent_message") => {
                if let Some(text) = agent_text(line, &index) {
                    drafts.push(text_draft(Kind::AgentResponse, text, None));
                }
            }
            ("compacted", _) => {
                let text = payload
                    .get("message")
                    .and_then(Value::as_str)
                    .map(str::trim);
                if let Some(text) = text.filter(|t| !t.is_empty()) {
                    drafts.push(text_draft(Kind::SessionSummary, text.to_string(), None));
                }
            }
            ("response_item", _) => {
                let Some(call) = Call::of(payload) else {
                    continue;
                };
                let observed = call.observe(&index, None);
                if options.excludes(&observed.tool) {
                    continue;
                }
                let observation = observed.observation(call.id);
                // an `update_plan` call is its plan's task events, as the
                // Stop hook records it
                let tasks = (!plan_refused(&observed))
                    .then(|| observed_plan_events(&observation.body, &options.project))
                    .flatten();
                if let Some(tasks) = tasks {
                    let call_ref = reference(call.id);
                    for task in tasks {
                        let task_ref = task.reference(&call_ref);
                        drafts.push(maker.draft(ts, task.kind, task.body, task_ref));
                    }
                    continue;
                }
                drafts.push(observation.draft(|body| {
                    maker.draft(ts, Kind::ToolObservation, body, reference(call.id))
                }));
            }
            _ => {}
        }
    }
    rollout.drafts = drafts;
    rollout
}

/// Reads the first `session_meta`: the thread, its session, where it ran,
/// the version, and whether it is a subagent's.
fn read_meta(rollout: &mut Rollout, meta: &Value) {
    let text = |key: &str| {
        meta.get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    rollout.thread_id = text("id");
    rollout.cwd = text("cwd");
    rollout.cli_version = text("cli_version");
    let subagent = meta.pointer("/source/subagent");
    let spawn = subagent.and_then(|s| s.get("thread_spawn"));
    let parent = text("parent_thread_id").or_else(|| {
        spawn
            .and_then(|s| s.get("parent_thread_id"))
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    // The session a subagent's hooks name is the root session
    // (`session_id`, 0.15x on), else its parent's thread.
    let session = text("session_id")
        .filter(|s| Some(s) != rollout.thread_id.as_ref())
        .or(parent.clone())
        .or_else(|| rollout.thread_id.clone());
    if let Some(session) = session {
        rollout.session_id = session;
    }
    let Some(thread) = rollout.thread_id.clone() else {
        return;
    };
    if rollout.session_id == thread && subagent.is_none() {
        return;
    }
    let role = spawn
        .and_then(|s| s.get("agent_role"))
        .or_else(|| meta.get("agent_role"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let kind = match subagent {
        Some(Value::String(kind)) => Some(kind.clone()),
        Some(Value::Object(map)) if spawn.is_none() => map
            .iter()
            .next()
            .map(|(k, v)| v.as_str().map(str::to_string).unwrap_or_else(|| k.clone())),
        _ => None,
    };
    rollout.subagent = Some(Subagent {
        thread_id: thread,
        agent_type: role.or(kind).unwrap_or_else(|| "default".into()),
    });
}

/// One line of a rollout, with the turn it belongs to.
pub(crate) struct Line<'a> {
    /// Its place among the file's lines (its `ordinal` when it has one).
    pub number: u64,
    pub ts: Option<String>,
    pub kind: &'a str,
    pub payload: &'a Value,
    /// The turn: the payload's `turn_id`, else the last turn started.
    pub turn: Option<String>,
}

impl<'a> Line<'a> {
    /// The lines of parsed values, their turns followed through
    /// `task_started` and `turn_context`.
    pub fn all(values: &'a [Value]) -> Vec<Line<'a>> {
        let mut current: Option<String> = None;
        values
            .iter()
            .enumerate()
            .map(|(i, value)| {
                let payload = value.get("payload").unwrap_or(&Value::Null);
                let kind = value.get("type").and_then(Value::as_str).unwrap_or("");
                let own_turn = payload
                    .get("turn_id")
                    .or_else(|| {
                        payload.pointer("/internal_chat_message_metadata_passthrough/turn_id")
                    })
                    .and_then(Value::as_str)
                    .map(str::to_string);
                let starts = kind == "turn_context"
                    || payload.get("type").and_then(Value::as_str) == Some("task_started");
                if starts && own_turn.is_some() {
                    current = own_turn.clone();
                }
                Line {
                    number: value
                        .get("ordinal")
                        .and_then(Value::as_u64)
                        .unwrap_or(i as u64),
                    ts: value
                        .get("timestamp")
                        .and_then(Value::as_str)
                        .and_then(|t| memlog_format::time::normalize(t).ok()),
                    kind,
                    payload,
                    turn: own_turn.or_else(|| current.clone()),
                }
            })
            .collect()
    }
}

/// Which lines are the thread's own: not the history a subagent started
/// from. That history starts at `subagent_history_start_ordinal` (lines
/// before it are the parent's), or at a second `session_meta` (the
/// parent's, repeated), whose lines are the parent's unless they belong to
/// a turn this thread's own items name (`thread_id`).
fn own_lines(lines: &[Line<'_>], thread: Option<&str>) -> Vec<bool> {
    let mut own = vec![true; lines.len()];
    let first_meta = lines.iter().position(|l| l.kind == "session_meta");
    let start = first_meta
        .and_then(|i| lines[i].payload.get("subagent_history_start_ordinal"))
        .and_then(Value::as_u64);
    if let Some(start) = start {
        for (o, line) in own.iter_mut().zip(lines) {
            *o = line.kind == "session_meta" || line.number >= start;
        }
        return own;
    }
    let (Some(first), Some(thread)) = (first_meta, thread) else {
        return own;
    };
    let replay = lines.iter().enumerate().skip(first + 1).find(|(_, l)| {
        l.kind == "session_meta" && l.payload.get("id").and_then(Value::as_str) != Some(thread)
    });
    let Some((replay, _)) = replay else {
        return own;
    };
    let own_turns: HashSet<&str> = lines
        .iter()
        .filter(|l| l.payload.get("thread_id").and_then(Value::as_str) == Some(thread))
        .filter_map(|l| l.turn.as_deref())
        .collect();
    if own_turns.is_empty() {
        return own;
    }
    for (o, line) in own.iter_mut().zip(lines).skip(replay) {
        *o = line.turn.as_deref().is_some_and(|t| own_turns.contains(t));
    }
    own
}

/// What the rollout says of its tool calls' outcomes, by call id, and
/// which turns have items (the paginated history's messages).
#[derive(Default)]
pub(crate) struct Index<'a> {
    /// `item_completed` items (`CommandExecution`, `FileChange`, …).
    items: HashMap<&'a str, &'a Value>,
    /// `exec_command_end`, `patch_apply_end`, `mcp_tool_call_end` events.
    ends: HashMap<&'a str, &'a Value>,
    /// `function_call_output`, `custom_tool_call_output`.
    outputs: HashMap<&'a str, &'a Value>,
    /// Turns with `UserMessage` or `AgentMessage` items.
    message_turns: HashSet<&'a str>,
}

impl<'a> Index<'a> {
    pub fn of<'l>(lines: impl IntoIterator<Item = &'l Line<'a>>) -> Index<'a>
    where
        'a: 'l,
    {
        let mut index = Index::default();
        for line in lines {
            let payload = line.payload;
            let id_of = |v: &'a Value, key: &str| v.get(key).and_then(Value::as_str);
            match (line.kind, payload.get("type").and_then(Value::as_str)) {
                ("event_msg", Some("item_completed")) => {
                    let Some(item) = payload.get("item") else {
                        continue;
                    };
                    match item.get("type").and_then(Value::as_str) {
                        Some("UserMessage" | "AgentMessage") => {
                            if let Some(turn) = id_of(payload, "turn_id") {
                                index.message_turns.insert(turn);
                            }
                        }
                        _ => {
                            if let Some(id) = id_of(item, "id") {
                                index.items.insert(id, item);
                            }
                        }
                    }
                }
                (
                    "event_msg",
                    Some("exec_command_end" | "patch_apply_end" | "mcp_tool_call_end"),
                ) => {
                    if let Some(id) = id_of(payload, "call_id") {
                        index.ends.insert(id, payload);
                    }
                }
                ("response_item", Some("function_call_output" | "custom_tool_call_output")) => {
                    if let Some(id) = id_of(payload, "call_id") {
                        index.outputs.insert(id, payload);
                    }
                }
                _ => {}
            }
        }
        index
    }

    /// Whether `turn` has `UserMessage` / `AgentMessage` items.
    fn has_items(&self, turn: Option<&str>) -> bool {
        turn.is_some_and(|t| self.message_turns.contains(t))
    }

    /// The item or end event of call `id`.
    pub fn outcome(&self, id: Option<&str>) -> Option<&'a Value> {
        let id = id?;
        self.items.get(id).or_else(|| self.ends.get(id)).copied()
    }
}

/// The shell tools Codex has had; their calls are recorded as `Bash`.
const SHELL_TOOLS: [&str; 5] = [
    "exec_command",
    "shell",
    "shell_command",
    "container.exec",
    "local_shell",
];

/// A model's tool call, as a `response_item`.
pub(crate) struct Call<'a> {
    /// `call_id` (`id` for older local shell calls).
    pub id: Option<&'a str>,
    /// The tool's name (`local_shell` for local shell calls, `web_search`).
    pub name: &'a str,
    /// The arguments, parsed (a local shell call's `action`).
    pub args: Value,
    /// A freeform call's input (the patch of `apply_patch`).
    pub freeform: Option<&'a str>,
}

impl<'a> Call<'a> {
    /// The tool call a `response_item` payload is, if it is one.
    pub fn of(payload: &'a Value) -> Option<Call<'a>> {
        let text = |key: &str| payload.get(key).and_then(Value::as_str);
        let id = text("call_id").or_else(|| text("id"));
        match text("type")? {
            "function_call" => {
                let raw = text("arguments").unwrap_or("");
                let args = serde_json::from_str(raw).unwrap_or_else(|_| json!({ "value": raw }));
                Some(Call {
                    id: text("call_id"),
                    name: text("name")?,
                    args,
                    freeform: None,
                })
            }
            "custom_tool_call" => Some(Call {
                id: text("call_id"),
                name: text("name")?,
                args: Value::Null,
                freeform: text("input"),
            }),
            "local_shell_call" => Some(Call {
                id,
                name: "local_shell",
                args: payload.get("action").cloned().unwrap_or(Value::Null),
                freeform: None,
            }),
            "web_search_call" => Some(Call {
                id: text("call_id"),
                name: "web_search",
                args: payload.get("action").cloned().unwrap_or(Value::Null),
                freeform: None,
            }),
            _ => None,
        }
    }

    /// The command a shell call runs, as the agent wrote it: a string, or
    /// the script of `["bash", "-lc", "<script>"]`, else the words joined
    /// ([`memlog_format::command::command_line`]).
    pub fn command(&self) -> Option<String> {
        if !SHELL_TOOLS.contains(&self.name) {
            return None;
        }
        memlog_format::command::command_line(&self.args)
    }

    /// What the call is recorded as: its tool, input and response, from
    /// the rollout's `index` and, from a hook, the `output` it reported.
    pub fn observe(&self, index: &Index<'_>, hook_output: Option<&Value>) -> Observed {
        let outcome = index.outcome(self.id);
        let output = hook_output.cloned().or_else(|| {
            self.id
                .and_then(|id| index.outputs.get(id))
                .and_then(|o| o.get("output"))
                .cloned()
        });
        let command = self.command();
        let patch = match (self.name, &command) {
            ("apply_patch", _) => self
                .freeform
                .map(str::to_string)
                .or_else(|| {
                    ["input", "patch"]
                        .iter()
                        .find_map(|k| self.args.get(*k).and_then(Value::as_str))
                        .map(str::to_string)
                })
                .or(Some(String::new())),
            (_, Some(command)) if is_edit(outcome) || patch::patch_text(command).is_some() => {
                Some(command.clone())
            }
            _ => None,
        };
        if let Some(patch) = patch {
            return Observed {
                tool: "apply_patch".into(),
                input: json!({ "command": patch }),
                response: Some(edit_response(outcome, output.as_ref())),
            };
        }
        if let Some(command) = command {
            return Observed {
                tool: "Bash".into(),
                input: json!({ "command": command }),
                response: shell_response(outcome, output.as_ref()),
            };
        }
        let input = match &self.args {
            Value::Object(_) => self.args.clone(),
            Value::Null => self
                .freeform
                .map(|f| json!({ "input": f }))
                .unwrap_or_else(|| json!({})),
            other => json!({ "value": other }),
        };
        Observed {
            tool: self.name.to_string(),
            input,
            response: output.map(|o| match o {
                Value::Object(map) => map.get("content").cloned().unwrap_or(Value::Object(map)),
                other => other,
            }),
        }
    }
}

/// Codex's plan tool, whose calls are task events
/// ([`crate::todo::plan_tool_events`]).
pub(crate) const PLAN_TOOL: &str = "update_plan";

/// Whether Codex refused a plan call, which then changed no plan: a tool
/// it did not offer (`unsupported call: update_plan`), or arguments it
/// could not read (`failed to parse function arguments: …`). The rollout
/// says so only in the output the model read.
pub(crate) fn plan_refused(observed: &Observed) -> bool {
    let text = match &observed.response {
        Some(Value::String(s)) => s.as_str(),
        _ => return false,
    };
    text.starts_with("unsupported call") || text.starts_with("failed to parse")
}

/// A tool call as memlog records it.
pub(crate) struct Observed {
    pub tool: String,
    pub input: Value,
    pub response: Option<Value>,
}

impl Observed {
    /// The call as recorded, with call id `id`.
    pub fn observation(&self, id: Option<&str>) -> Observation {
        observe(&ToolCall {
            tool: &self.tool,
            input: Some(&self.input),
            response: self.response.as_ref(),
            tool_use_id: id,
            ..ToolCall::default()
        })
    }
}

/// Whether an outcome is a file edit's.
fn is_edit(outcome: Option<&Value>) -> bool {
    outcome.is_some_and(|o| {
        matches!(
            o.get("type").and_then(Value::as_str),
            Some("FileChange" | "patch_apply_end")
        )
    })
}

/// The text of a call's output: a string; `{"content": …}` or
/// `{"output": …}`; content items.
fn output_text(output: &Value) -> Option<String> {
    match output {
        Value::String(s) => Some(s.clone()),
        Value::Object(map) => map
            .get("content")
            .or_else(|| map.get("output"))
            .and_then(output_text),
        Value::Array(items) => {
            let texts: Vec<&str> = items
                .iter()
                .filter_map(|i| i.get("text").and_then(Value::as_str))
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        }
        _ => None,
    }
}

/// What a shell tool's output says: the exit code and what the command
/// printed. Codex wraps it as `Exit code: N\nWall time: …\nOutput:\n…`
/// (0.5x–0.10x), `Chunk ID: …\nProcess exited with code N\n…\nOutput:\n…`
/// (0.11x on) or `{"output": …, "metadata": {"exit_code": N}}` (older).
pub(crate) fn shell_output(text: &str) -> (Option<i64>, String) {
    if let Ok(Value::Object(map)) = serde_json::from_str::<Value>(text) {
        let code = map
            .get("metadata")
            .and_then(|m| m.get("exit_code"))
            .and_then(Value::as_i64);
        let out = map.get("output").and_then(Value::as_str).unwrap_or("");
        return (code, out.to_string());
    }
    let mut code = None;
    for line in text.lines().take(6) {
        let number = line
            .strip_prefix("Exit code: ")
            .or_else(|| line.strip_prefix("Process exited with code "));
        if let Some(n) = number.and_then(|n| n.trim().parse().ok()) {
            code = Some(n);
        }
    }
    let body = match text.find("Output:\n") {
        Some(at)
            if code.is_some() || text.starts_with("Wall time") || text.starts_with("Chunk ID") =>
        {
            &text[at + "Output:\n".len()..]
        }
        _ => text,
    };
    (code, body.to_string())
}

/// A field under its snake_case or camelCase name.
fn field<'v>(value: &'v Value, snake: &str, camel: &str) -> Option<&'v Value> {
    value.get(snake).or_else(|| value.get(camel))
}

/// A shell call's response: `{"stdout": what it printed, "exit_code"}`,
/// from its `CommandExecution` item or `exec_command_end` (the real exit
/// code), else its output text; `None` when the call never completed.
fn shell_response(outcome: Option<&Value>, output: Option<&Value>) -> Option<Value> {
    let parsed = output.and_then(output_text).map(|t| shell_output(&t));
    let (mut code, mut printed) = match parsed {
        Some((code, printed)) => (code, Some(printed)),
        None => (None, None),
    };
    if let Some(outcome) = outcome {
        if let Some(c) = field(outcome, "exit_code", "exitCode").and_then(Value::as_i64) {
            code = Some(c);
        }
        let aggregated = field(outcome, "aggregated_output", "aggregatedOutput")
            .or_else(|| field(outcome, "formatted_output", "formattedOutput"))
            .and_then(Value::as_str);
        if let Some(text) = aggregated {
            printed = Some(text.to_string());
        } else if printed.is_none() {
            let stdout = outcome.get("stdout").and_then(Value::as_str).unwrap_or("");
            let stderr = outcome.get("stderr").and_then(Value::as_str).unwrap_or("");
            printed = Some(format!("{stdout}{stderr}"));
        }
    }
    let printed = printed?;
    let mut response = json!({ "stdout": printed });
    if let Some(code) = code {
        response["exit_code"] = Value::from(code);
    }
    if outcome
        .and_then(|o| o.get("status"))
        .and_then(Value::as_str)
        == Some("declined")
    {
        response["error"] = Value::String("declined".into());
    }
    Some(response)
}

/// An edit's response (see [`super::patch`]): what the tool printed, the
/// changes by path and whether it applied, from its `FileChange` item or
/// `patch_apply_end`, else its output text.
fn edit_response(outcome: Option<&Value>, output: Option<&Value>) -> Value {
    let text = output.and_then(output_text);
    let (code, printed) = match &text {
        Some(t) => {
            let (code, printed) = shell_output(t);
            (code, Some(printed))
        }
        None => (None, None),
    };
    let mut response = Map::new();
    let mut success = match code {
        Some(c) => Some(c == 0),
        None => printed.as_deref().map(|p| {
            let p = p.trim_start();
            !(p.starts_with("apply_patch verification failed")
                || p.starts_with("Failed to")
                || p.starts_with("error:"))
        }),
    };
    let mut own = printed;
    if let Some(outcome) = outcome {
        if let Some(changes) = outcome.get("changes") {
            response.insert("changes".into(), changes.clone());
        }
        match outcome.get("status").and_then(Value::as_str) {
            Some("completed") => success = Some(true),
            Some("failed" | "declined") => success = Some(false),
            _ => {}
        }
        if let Some(ok) = outcome.get("success").and_then(Value::as_bool) {
            success = Some(ok);
        }
        let stdout = outcome.get("stdout").and_then(Value::as_str).unwrap_or("");
        let stderr = outcome.get("stderr").and_then(Value::as_str).unwrap_or("");
        if !stdout.is_empty() || !stderr.is_empty() {
            own = Some(format!("{stdout}{stderr}"));
        }
        if !stderr.trim().is_empty() {
            response.insert("stderr".into(), Value::String(stderr.to_string()));
        }
    }
    if let Some(own) = own {
        if success == Some(false) {
            response.insert("error".into(), Value::String(own.clone()));
        }
        response.insert("output".into(), Value::String(own));
    }
    if let Some(success) = success {
        response.insert("success".into(), Value::Bool(success));
    }
    Value::Object(response)
}

/// The text of an item's content parts (`[{"type": "text", "text"}]`).
/// What the agent said, if `line` is one of its messages: an
/// `AgentMessage` item, or an `agent_message` event of a turn that has no
/// message items (rollouts up to 0.14x; later ones write both).
pub(crate) fn agent_text(line: &Line<'_>, index: &Index<'_>) -> Option<String> {
    let payload = line.payload;
    match (line.kind, payload.get("type").and_then(Value::as_str)?) {
        ("event_msg", "item_completed") => payload
            .get("item")
            .filter(|item| item.get("type").and_then(Value::as_str) == Some("AgentMessage"))
            .and_then(content_text),
        ("event_msg", "agent_message") if !index.has_items(line.turn.as_deref()) => payload
            .get("message")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(str::to_string),
        _ => None,
    }
}

fn content_text(item: &Value) -> Option<String> {
    let parts: Vec<&str> = item
        .get("content")?
        .as_array()?
        .iter()
        .filter_map(|c| c.get("text").and_then(Value::as_str))
        .collect();
    let text = parts.join("\n");
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// Whether a user message is one the user typed: not empty, not the
/// harness's context (`<environment_context>`, `<user_instructions>`, an
/// AGENTS.md's instructions).
fn typed(text: &str) -> bool {
    let text = text.trim_start();
    !text.is_empty()
        && ![
            "<environment_context>",
            "<user_instructions>",
            "<permissions instructions>",
            "# AGENTS.md instructions for ",
        ]
        .iter()
        .any(|p| text.starts_with(p))
}

/// Builds a rollout's drafts: its session, project and meta.
struct Maker<'a> {
    rollout: &'a Rollout,
    options: &'a HookOptions,
}

impl Maker<'_> {
    fn draft(&self, ts: &str, kind: Kind, body: Map<String, Value>, reference: String) -> Draft {
        let rollout = self.rollout;
        let mut draft = Draft::new(
            rollout.session_id.clone(),
            ts,
            kind,
            self.options.project.clone(),
            body,
        );
        let meta = &mut draft.meta;
        if let Some(cwd) = &rollout.cwd {
            meta.insert("cwd".into(), Value::String(cwd.clone()));
        }
        meta.insert("client".into(), Value::String(CLIENT.into()));
        if let Some(v) = rollout
            .cli_version
            .as_ref()
            .or(self.options.agent_version.as_ref())
        {
            meta.insert("agent_version".into(), Value::String(v.clone()));
        }
        if let Some(sub) = &rollout.subagent {
            meta.insert("agent_id".into(), Value::String(sub.thread_id.clone()));
            meta.insert("agent_type".into(), Value::String(sub.agent_type.clone()));
            meta.insert("sidechain".into(), Value::Bool(true));
        }
        meta.insert("ref".into(), Value::String(reference));
        draft
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROLLOUT: &str = include_str!("../../../fixtures/codex/rollout.jsonl");

    /// Field test 12a: memlog's own call, read from the rollout as its hook
    /// records it.
    #[test]
    fn memlogs_own_call_is_withheld_and_personal() {
        let rollout = ROLLOUT
            .replace("cat notes.txt", "memlog search freeze")
            .replace("freeze: Wednesday", "(personal) heliotrope");
        let r = parse(&rollout, "x", &HookOptions::new("shop"));
        crate::tool::assert_own_call_kept_private(&r.drafts, "heliotrope");
    }

    #[test]
    fn prompts_commands_and_answers() {
        let r = parse(ROLLOUT, "x", &HookOptions::new("shop"));
        assert_eq!(r.session_id, "01a20e67-babc-7132-9f93-f028d80d9d92");
        assert_eq!(r.cli_version.as_deref(), Some("0.169.0"));
        let kinds: Vec<&str> = r.drafts.iter().map(|d| d.kind.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "user_prompt",
                "agent_response",
                "tool_observation",
                "agent_response"
            ]
        );
        let tool = &r.drafts[2];
        assert_eq!(tool.body["tool"], "Bash");
        assert_eq!(tool.body["input"]["command"], "cat notes.txt");
        assert_eq!(tool.body["output"], "freeze: Wednesday\n");
        assert_eq!(tool.body["tool_use_id"], "call_01");
        assert_eq!(tool.body["metadata"]["exit_code"], 0);
        assert_eq!(tool.meta["client"], "codex");
        assert_eq!(tool.meta["agent_version"], "0.169.0");
        assert_eq!(r.drafts[0].body["text"], "When is the freeze?");
        // the same file, the same drafts
        assert_eq!(parse(ROLLOUT, "x", &HookOptions::new("shop")), r);
    }

    /// The same session in the shapes of 0.60, 0.104 and 0.149: a prompt,
    /// a command and a failing one, an edit with the tool, a failed one,
    /// one through the shell, and an answer.
    #[test]
    fn every_version_reads_as_the_same_session() {
        for (file, text) in [
            (
                "0.60",
                include_str!("../../../fixtures/codex/rollout-0.60.jsonl"),
            ),
            (
                "0.104",
                include_str!("../../../fixtures/codex/rollout-0.104.jsonl"),
            ),
            (
                "0.149",
                include_str!("../../../fixtures/codex/rollout-0.149.jsonl"),
            ),
        ] {
            let r = parse(text, "x", &HookOptions::new("shop"));
            assert_eq!(r.malformed, 0, "{file}");
            assert_eq!(r.cwd.as_deref(), Some("/home/dev/acme-shop"), "{file}");
            let prompts: Vec<&Value> = r
                .drafts
                .iter()
                .filter(|d| d.kind == Kind::UserPrompt)
                .map(|d| &d.body["text"])
                .collect();
            assert_eq!(prompts[0], "Raise the tax rate to 8 %", "{file}");
            let call = |id: &str| {
                r.drafts
                    .iter()
                    .find(|d| d.body.get("tool_use_id").and_then(Value::as_str) == Some(id))
                    .unwrap_or_else(|| panic!("{file}: no {id}"))
            };
            let grep = call("call_grep");
            assert_eq!(grep.body["tool"], "Bash", "{file}");
            assert_eq!(grep.body["input"]["command"], "grep -rn TAX src", "{file}");
            assert_eq!(
                grep.body["output"], "src/cart.js:1:const TAX = 0.07;\n",
                "{file}"
            );
            assert_eq!(grep.body["metadata"]["exit_code"], 0, "{file}");
            let test = call("call_test");
            assert_eq!(test.body["success"], false, "{file}");
            assert_eq!(test.body["metadata"]["exit_code"], 1, "{file}");
            let patch = call("call_patch");
            assert_eq!(patch.body["tool"], "apply_patch", "{file}");
            assert_eq!(patch.body["success"], true, "{file}");
            assert!(
                patch.body["metadata"]["file_path"]
                    .as_str()
                    .unwrap()
                    .ends_with("src/cart.js"),
                "{file}: {:?}",
                patch.body
            );
            assert!(
                patch.body["output"]
                    .as_str()
                    .unwrap()
                    .contains("+const TAX = 0.08;"),
                "{file}"
            );
            let shell = call("call_shell_patch");
            assert_eq!(shell.body["tool"], "apply_patch", "{file}");
            assert_eq!(
                shell.body["metadata"]["changes"][0]["kind"], "add",
                "{file}"
            );
            assert!(
                shell.body["input"]["command"]
                    .as_str()
                    .unwrap()
                    .starts_with("apply_patch <<")
            );
            let answers: Vec<&Value> = r
                .drafts
                .iter()
                .filter(|d| d.kind == Kind::AgentResponse)
                .map(|d| &d.body["text"])
                .collect();
            assert!(
                answers.contains(&&Value::from(
                    "The rate is 8 % now; one cart test still fails."
                )),
                "{file}: {answers:?}"
            );
            // Only what the user typed is a prompt.
            assert!(
                prompts.iter().all(|p| !p.as_str().unwrap().contains('<')),
                "{file}"
            );
            // its plan is a task, as the hook records it
            if text.contains("update_plan") {
                let plan: Vec<&Draft> = r
                    .drafts
                    .iter()
                    .filter(|d| {
                        d.meta.get("ref").and_then(Value::as_str) == Some("call_plan/todo/0")
                    })
                    .collect();
                assert_eq!(plan.len(), 1, "{file}");
                assert_eq!(plan[0].kind, Kind::TaskCreated, "{file}");
                assert_eq!(plan[0].body["title"], "Raise the rate", "{file}");
                assert_eq!(plan[0].body["status"], "done", "{file}");
                assert_eq!(plan[0].body["source"], "update_plan", "{file}");
            }
            assert_eq!(parse(text, "x", &HookOptions::new("shop")), r, "{file}");
        }
        let legacy = parse(
            include_str!("../../../fixtures/codex/rollout-0.104.jsonl"),
            "x",
            &HookOptions::new("shop"),
        );
        let failed = legacy
            .drafts
            .iter()
            .find(|d| d.body.get("tool_use_id").and_then(Value::as_str) == Some("call_bad_patch"))
            .unwrap();
        assert_eq!(failed.body["success"], false);
        assert!(
            failed.body["error"]
                .as_str()
                .unwrap()
                .starts_with("apply_patch verification failed")
        );
        let kinds: Vec<&str> = legacy.drafts.iter().map(|d| d.kind.as_str()).collect();
        assert!(kinds.contains(&"session_summary"), "{kinds:?}");
        let mcp = legacy
            .drafts
            .iter()
            .find(|d| d.body.get("tool_use_id").and_then(Value::as_str) == Some("call_mcp"))
            .unwrap();
        assert_eq!(mcp.body["tool"], "mcp__docs__search");
        assert_eq!(mcp.body["metadata"]["mcp_server"], "docs");
        assert!(
            legacy
                .drafts
                .iter()
                .any(|d| d.body.get("tool") == Some(&Value::from("web_search")))
        );
    }

    #[test]
    fn a_subagent_is_read_into_its_parents_session_without_its_history() {
        let r = parse(
            include_str!("../../../fixtures/codex/rollout-0.169-subagent.jsonl"),
            "x",
            &HookOptions::new("shop"),
        );
        let parent = "01a20e67-babc-7132-9f93-f028d80d9d92";
        assert_eq!(r.session_id, parent);
        let sub = r.subagent.as_ref().unwrap();
        assert_eq!(sub.agent_type, "explorer");
        let texts: Vec<String> = r
            .drafts
            .iter()
            .map(|d| {
                d.body
                    .get("text")
                    .or_else(|| d.body.get("tool_use_id"))
                    .map(Value::to_string)
                    .unwrap_or_default()
            })
            .collect();
        // The parent's prompt and call, repeated, are not read again.
        assert_eq!(
            texts,
            [
                "\"Find who moved the freeze\"",
                "\"call_sub_01\"",
                "\"Dana moved it.\""
            ]
        );
        for d in &r.drafts {
            assert_eq!(d.session, parent);
            assert_eq!(d.meta["agent_id"], sub.thread_id.as_str());
            assert_eq!(d.meta["agent_type"], "explorer");
            assert_eq!(d.meta["sidechain"], true);
        }
    }

    #[test]
    fn broken_lines_are_counted_not_fatal() {
        let r = parse(
            "not json\n{\"type\":\"event_msg\"}\n",
            "fallback",
            &HookOptions::new("p"),
        );
        assert_eq!(r.malformed, 1);
        assert_eq!(r.session_id, "fallback");
        assert!(r.drafts.is_empty());
    }

    #[test]
    fn shell_outputs_of_every_version() {
        assert_eq!(
            shell_output("Exit code: 1\nWall time: 0 seconds\nOutput:\nno such file\n"),
            (Some(1), "no such file\n".to_string())
        );
        assert_eq!(
            shell_output(
                "Chunk ID: 1a\nWall time: 0.0000 seconds\nProcess exited with code 2\nOriginal token count: 3\nOutput:\nboom\n"
            ),
            (Some(2), "boom\n".to_string())
        );
        assert_eq!(
            shell_output(r#"{"output":"ok\n","metadata":{"exit_code":0,"duration_seconds":0.1}}"#),
            (Some(0), "ok\n".to_string())
        );
        assert_eq!(shell_output("plain"), (None, "plain".to_string()));
    }
}
