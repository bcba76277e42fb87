//! Claude Code transcripts (`~/.claude/projects/<project>/<session>.jsonl`)
//! as memlog drafts, and the last answer of a live transcript.
//!
//! A transcript is one JSON object per line. The lines memlog reads:
//!
//! - `type: "user"`: `message.content` is a string or a list of blocks.
//!   Text becomes a `user_prompt`, except text the harness wrote rather than
//!   the user (`isMeta` lines, `[Request interrupted by user…]`, local
//!   command output and its caveat, `<task-notification>` and
//!   `<system-reminder>` messages), which is left out. A compaction's
//!   continuation (`isCompactSummary`, or text starting "This session is
//!   being continued from a previous conversation") becomes a
//!   `session_summary`. A slash command (`<command-name>/x</command-name>
//!   <command-args>a</command-args>`) is recorded as the user typed it,
//!   `/x a`, with `meta.slash_command`. `tool_result` blocks complete the
//!   tool call they answer (`tool_use_id`); the line's `toolUseResult` is
//!   the same structured response a PostToolUse hook receives.
//! - `type: "assistant"`: `message.content` blocks. `text` becomes an
//!   `agent_response`; `thinking` is skipped (it is private reasoning);
//!   `tool_use` and its result become one `tool_observation` (a TodoWrite
//!   call becomes task events instead, as described in the crate docs,
//!   unless its result is an error). Current Claude Code writes one block
//!   per line; older versions several.
//! - `type: "summary"`: `summary` becomes a `session_summary` (the line has
//!   no time of its own: it takes its `leafUuid` message's, else the file's
//!   first).
//! - `type: "queue-operation"`, `operation: "enqueue"`: a prompt the user
//!   typed while the agent was busy. Claude Code hands it to the agent in
//!   the middle of the turn and writes it nowhere else, so it becomes a
//!   `user_prompt` marked `meta.queued` (harness messages such as
//!   `<task-notification>` excepted); if it is written again later as a
//!   user line (it waited for the turn to end), that line is not recorded
//!   twice.
//! - `progress`, `system`, `file-history-snapshot` and the other queue
//!   operations carry nothing to remember and are counted as ignored;
//!   other types are
//!   counted as skipped; lines that are not JSON objects, or user and
//!   assistant lines without a message, as malformed.
//!
//! Every draft's `meta.ref` is the line's `uuid` (`<uuid>#<n>` for the n-th
//! block of a line, n > 0; `…/todo/<i>` for the i-th todo of a TodoWrite
//! call, `…/todo/<i>/implied` for its implied start, see `todo`; `summary:<leafUuid>` for summaries; `line:<n>` for a line without
//! a uuid), and its `ts` the line's `timestamp`. Both depend only on the
//! line and the ones before it, so importing a transcript again, or after
//! it grew, yields the same drafts for the same lines.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use memlog_format::{Draft, Kind, time};
use serde_json::{Map, Value};

use crate::hook::{CLIENT, HookOptions, UNKNOWN_SESSION};
use crate::todo::{TODO_TOOL, Todo, parse_todos, task_events};
use crate::tool::{ToolCall, content_blocks_text, observation_body};
use crate::{Error, Result};

/// How much of a live transcript's end [`last_assistant_text`] reads.
pub const TAIL_BYTES: u64 = 256 * 1024;

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

/// Reads one transcript file.
pub fn read(path: impl AsRef<Path>, options: &HookOptions) -> Result<Transcript> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let lines = parse_lines(&bytes);
    let session_id = lines
        .iter()
        .find_map(|l| l.value.as_ref()?.get("sessionId")?.as_str())
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .or_else(|| {
            path.file_stem()
                .and_then(|s| s.to_str())
                .map(str::to_string)
        })
        .unwrap_or_else(|| UNKNOWN_SESSION.to_string());
    let mut transcript = Transcript {
        session_id,
        ..Transcript::default()
    };
    convert(&lines, None, options, &mut transcript);
    Ok(transcript)
}

/// Reads a transcript and its subagents' transcripts
/// (`<dir>/<session>/subagents/agent-*.jsonl`, see [`subagent_files`]),
/// all in the main transcript's session. A subagent's drafts follow the
/// main transcript's, file by file in name order, and carry
/// `meta.agent_id` (the lines' `agentId`, else the file's name) and
/// `meta.sidechain = true`. Compaction sidechains (`agent-acompact*`) are
/// left out: the summary they write is already in the main transcript as
/// its continuation message.
pub fn read_with_subagents(path: impl AsRef<Path>, options: &HookOptions) -> Result<Transcript> {
    let path = path.as_ref();
    let mut transcript = read(path, options)?;
    for file in subagent_files(path)? {
        let bytes = std::fs::read(&file).map_err(|e| Error::io(&file, e))?;
        let lines = parse_lines(&bytes);
        let agent_id = file
            .file_stem()
            .and_then(|s| s.to_str())
            .map(|s| s.strip_prefix("agent-").unwrap_or(s).to_string());
        convert(&lines, agent_id.as_deref(), options, &mut transcript);
    }
    Ok(transcript)
}

/// The subagent transcripts of a session's transcript, in name order:
/// `agent-*.jsonl` in `<session>/subagents/` next to `<session>.jsonl`,
/// without compaction sidechains (`agent-acompact*`). None when that
/// folder does not exist.
pub fn subagent_files(path: impl AsRef<Path>) -> Result<Vec<PathBuf>> {
    let path = path.as_ref();
    let Some(stem) = path.file_stem() else {
        return Ok(Vec::new());
    };
    let dir = path.with_file_name(stem).join("subagents");
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(&dir, e)),
    };
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(&dir, e))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.starts_with("agent-")
            && name.ends_with(".jsonl")
            && !name.starts_with("agent-acompact")
        {
            files.push(entry.path());
        }
    }
    files.sort();
    Ok(files)
}

/// Which lines of a transcript [`last_assistant_text`] looks at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SidechainScope {
    /// The main conversation (`isSidechain` false or absent): Stop.
    MainOnly,
    /// Subagent lines inlined in the main transcript (Claude Code 1.x):
    /// SubagentStop without its own transcript.
    SidechainOnly,
    /// Every line: a subagent's own transcript.
    Any,
}

/// The text of the last assistant message of the current turn of a live
/// transcript, reading only its last [`TAIL_BYTES`]: the text blocks of
/// the last assistant message (by `message.id`, which current Claude Code
/// spreads over several lines) that has text, provided no user prompt
/// follows it. `None` when the file cannot be read, or the turn has no
/// text (an earlier turn's answer is never returned twice).
pub fn last_assistant_text(path: &Path, scope: SidechainScope) -> Option<String> {
    let tail = read_tail(path, TAIL_BYTES).ok()?;
    let mut texts: Vec<String> = Vec::new();
    let mut message_id: Option<Option<String>> = None;
    for raw_line in tail.split(|b| *b == b'\n').rev() {
        let Ok(Value::Object(line)) = serde_json::from_slice::<Value>(raw_line) else {
            continue;
        };
        let sidechain = line.get("isSidechain").and_then(Value::as_bool) == Some(true);
        let in_scope = match scope {
            SidechainScope::MainOnly => !sidechain,
            SidechainScope::SidechainOnly => sidechain,
            SidechainScope::Any => true,
        };
        if !in_scope {
            continue;
        }
        let Some(message) = line.get("message").and_then(Value::as_object) else {
            continue;
        };
        match line.get("type").and_then(Value::as_str) {
            Some("user") if is_user_prompt_line(&line, message) => break,
            Some("assistant") => {
                let id = message
                    .get("id")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                if let Some(current) = &message_id
                    && *current != id
                {
                    break;
                }
                let line_texts = assistant_texts(message);
                if line_texts.is_empty() {
                    continue;
                }
                message_id.get_or_insert(id);
                for text in line_texts.into_iter().rev() {
                    texts.push(text);
                }
            }
            _ => {}
        }
    }
    texts.reverse();
    let joined = texts.join("\n\n");
    (!joined.trim().is_empty()).then_some(joined)
}

fn read_tail(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    let start = len.saturating_sub(max);
    file.seek(SeekFrom::Start(start))?;
    let mut buf = Vec::with_capacity((len - start) as usize);
    file.read_to_end(&mut buf)?;
    if start > 0 {
        // The first line was cut: drop it.
        match buf.iter().position(|b| *b == b'\n') {
            Some(end) => {
                buf.drain(..=end);
            }
            None => buf.clear(),
        }
    }
    Ok(buf)
}

/// Whether a user line is something the user said (not a tool result,
/// not a harness message): it ends the search for the turn's answer.
fn is_user_prompt_line(line: &Map<String, Value>, message: &Map<String, Value>) -> bool {
    user_text(message)
        .is_some_and(|text| !matches!(classify_user_text(line, &text), UserText::Harness))
}

/// The non-blank text blocks of an assistant message, trimmed.
fn assistant_texts(message: &Map<String, Value>) -> Vec<String> {
    match message.get("content") {
        Some(Value::String(s)) => vec![s.trim().to_string()],
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .map(str::trim)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
    .into_iter()
    .filter(|t| !t.is_empty())
    .collect()
}

/// The text a user line says, its text blocks joined; `None` when it has
/// none (tool results, images).
fn user_text(message: &Map<String, Value>) -> Option<String> {
    let text = match message.get("content")? {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => {
            let texts: Vec<&str> = blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect();
            texts.join("\n\n")
        }
        _ => return None,
    };
    (!text.trim().is_empty()).then_some(text)
}

/// What the text of a user line is.
#[derive(Debug, PartialEq)]
enum UserText {
    Prompt,
    /// A slash command, as typed (`/name args`), and its name.
    SlashCommand(String, String),
    /// A compaction's continuation summary.
    CompactSummary,
    /// Written by the harness, not the user.
    Harness,
}

const CONTINUATION_PREFIX: &str = "This session is being continued from a previous conversation";

/// Prefixes of user-role text that Claude Code writes itself.
const HARNESS_PREFIXES: [&str; 7] = [
    "[Request interrupted by user",
    "Caveat: The messages below were generated by the user while running local commands",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<task-notification>",
    "<system-reminder>",
    "<bash-stdout>",
];

fn classify_user_text(line: &Map<String, Value>, text: &str) -> UserText {
    let flag = |key: &str| line.get(key).and_then(Value::as_bool) == Some(true);
    let trimmed = text.trim_start();
    if flag("isCompactSummary") || trimmed.starts_with(CONTINUATION_PREFIX) {
        return UserText::CompactSummary;
    }
    if flag("isMeta") || HARNESS_PREFIXES.iter().any(|p| trimmed.starts_with(p)) {
        return UserText::Harness;
    }
    if let Some(name) = tag_content(trimmed, "command-name") {
        let name = name.trim();
        let name = if name.starts_with('/') {
            name.to_string()
        } else {
            format!("/{name}")
        };
        let args = tag_content(trimmed, "command-args")
            .map(str::trim)
            .unwrap_or("");
        let typed = if args.is_empty() {
            name.clone()
        } else {
            format!("{name} {args}")
        };
        return UserText::SlashCommand(typed, name);
    }
    UserText::Prompt
}

/// The text between `<tag>` and `</tag>`.
fn tag_content<'t>(text: &'t str, tag: &str) -> Option<&'t str> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let start = text.find(&open)? + open.len();
    let end = text[start..].find(&close)? + start;
    Some(&text[start..end])
}

/// One line of a transcript: its 1-based number and, when it is a JSON
/// object, the object.
struct Line {
    number: usize,
    value: Option<Map<String, Value>>,
}

fn parse_lines(bytes: &[u8]) -> Vec<Line> {
    bytes
        .split(|b| *b == b'\n')
        .enumerate()
        .filter(|(_, raw)| !raw.iter().all(u8::is_ascii_whitespace))
        .map(|(i, raw)| Line {
            number: i + 1,
            value: match serde_json::from_slice::<Value>(raw) {
                Ok(Value::Object(map)) => Some(map),
                _ => None,
            },
        })
        .collect()
}

/// A tool's answer, found in a user line.
struct ToolResult {
    ts: Option<String>,
    text: Option<String>,
    is_error: Option<bool>,
    structured: Option<Value>,
}

/// Converts the lines of one file, appending to `out`.
fn convert(lines: &[Line], agent_id: Option<&str>, options: &HookOptions, out: &mut Transcript) {
    let mut converter = Converter {
        session: out.session_id.clone(),
        options,
        agent_id,
        results: HashMap::new(),
        times: HashMap::new(),
        first_ts: None,
        last_ts: None,
        todo_lists: HashMap::new(),
        queued: Vec::new(),
        roots: HashMap::new(),
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

struct Converter<'a> {
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
    /// Prompts recorded from queue operations and not yet seen again as
    /// user lines.
    queued: Vec<String>,
    /// The first line of each line's thread (`parentUuid` chain), by uuid:
    /// it tells apart the subagents that Claude Code 1.x interleaves in
    /// one file.
    roots: HashMap<String, String>,
    /// The working directory and branch of the last line that had them,
    /// for lines that do not (queue operations).
    last_cwd: Option<String>,
    last_branch: Option<String>,
}

impl<'a> Converter<'a> {
    /// First pass: tool results and line times.
    fn index(&mut self, lines: &[Line]) {
        for object in lines.iter().filter_map(|l| l.value.as_ref()) {
            if let Some(uuid) = object.get("uuid").and_then(Value::as_str) {
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
    }

    fn line(&mut self, number: usize, line: &Map<String, Value>, out: &mut Transcript) {
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
        if let Some(at) = self.queued.iter().position(|q| *q == text.trim()) {
            // Already recorded when it was queued.
            self.queued.remove(at);
            return;
        }
        let reference = line_ref(number, line, 0);
        let (kind, text, slash) = match classify_user_text(line, &text) {
            UserText::Harness => return,
            UserText::Prompt => (Kind::UserPrompt, text, None),
            UserText::CompactSummary => (Kind::SessionSummary, text, None),
            UserText::SlashCommand(typed, name) => (Kind::UserPrompt, typed, Some(name)),
        };
        let mut body = Map::new();
        body.insert("text".into(), Value::String(text));
        let mut draft = self.draft(line, ts, kind, body, &reference);
        if let Some(name) = slash {
            draft
                .meta
                .insert("slash_command".into(), Value::String(name));
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
            for task in tasks {
                let task_ref = task.reference(&reference);
                let mut draft = self.draft(line, ts.to_string(), task.kind, task.body, &task_ref);
                if let Some(id) = id {
                    draft
                        .meta
                        .insert("tool_use_id".into(), Value::String(id.to_string()));
                }
                out.drafts.push((task_ref, draft));
            }
            self.todo_lists.insert(conversation, todos);
            return;
        }
        let body = observation_body(&ToolCall {
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
        let draft = self.draft(line, observed, Kind::ToolObservation, body, &reference);
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

/// A line's `message` when it is an object with content.
fn readable_message(line: &Map<String, Value>) -> Option<&Map<String, Value>> {
    let message = line.get("message")?.as_object()?;
    match message.get("content")? {
        Value::String(_) | Value::Array(_) => Some(message),
        _ => None,
    }
}

fn is_sidechain(line: &Map<String, Value>) -> bool {
    line.get("isSidechain").and_then(Value::as_bool) == Some(true)
}

/// The line's `timestamp` in memlog's form, if it has a valid one.
fn line_ts(line: &Map<String, Value>) -> Option<String> {
    let raw = line.get("timestamp")?.as_str()?;
    time::normalize(raw).ok()
}

/// The reference of a line's block: `<uuid>` for its first block,
/// `<uuid>#<n>` for the others; `line:<number>` stands in for a missing uuid.
fn line_ref(number: usize, line: &Map<String, Value>, block: usize) -> String {
    let base = match line
        .get("uuid")
        .and_then(Value::as_str)
        .filter(|u| !u.is_empty())
    {
        Some(uuid) => uuid.to_string(),
        None => format!("line:{number}"),
    };
    if block == 0 {
        base
    } else {
        format!("{base}#{block}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::io::Write;

    fn write_lines(dir: &Path, name: &str, lines: &[Value]) -> PathBuf {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        let mut file = File::create(&path).unwrap();
        for line in lines {
            writeln!(file, "{line}").unwrap();
        }
        path
    }

    fn user(uuid: &str, ts: &str, content: Value) -> Value {
        json!({"type": "user", "uuid": uuid, "timestamp": ts, "sessionId": "s1", "cwd": "/w",
               "gitBranch": "main", "message": {"role": "user", "content": content}})
    }

    fn assistant(uuid: &str, ts: &str, id: &str, content: Value) -> Value {
        json!({"type": "assistant", "uuid": uuid, "timestamp": ts, "sessionId": "s1",
               "message": {"id": id, "role": "assistant", "content": content}})
    }

    #[test]
    fn classifies_user_text() {
        let plain = Map::new();
        assert_eq!(classify_user_text(&plain, "fix it"), UserText::Prompt);
        assert_eq!(
            classify_user_text(
                &plain,
                "<command-message>init is analyzing…</command-message>\n<command-name>/init</command-name>"
            ),
            UserText::SlashCommand("/init".into(), "/init".into())
        );
        assert_eq!(
            classify_user_text(
                &plain,
                "<command-name>review</command-name><command-args> --all </command-args>"
            ),
            UserText::SlashCommand("/review --all".into(), "/review".into())
        );
        assert_eq!(
            classify_user_text(&plain, "[Request interrupted by user for tool use]"),
            UserText::Harness
        );
        assert_eq!(
            classify_user_text(
                &plain,
                "This session is being continued from a previous conversation that ran out of context."
            ),
            UserText::CompactSummary
        );
        let meta: Map<String, Value> = json!({"isMeta": true}).as_object().unwrap().clone();
        assert_eq!(
            classify_user_text(&meta, "expanded command"),
            UserText::Harness
        );
    }

    #[test]
    fn converts_a_small_transcript() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_lines(
            dir.path(),
            "s1.jsonl",
            &[
                json!({"type": "summary", "summary": "Earlier work", "leafUuid": "u1"}),
                user("u1", "2026-01-01T10:00:00+01:00", json!("List files")),
                assistant(
                    "a1",
                    "2026-01-01T09:00:01Z",
                    "m1",
                    json!([{"type": "thinking", "thinking": "hmm"}]),
                ),
                assistant(
                    "a2",
                    "2026-01-01T09:00:02Z",
                    "m1",
                    json!([
                        {"type": "text", "text": "Listing."},
                        {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}
                    ]),
                ),
                json!({"type": "user", "uuid": "r1", "timestamp": "2026-01-01T09:00:03Z",
                       "toolUseResult": {"stdout": "a\nb", "stderr": "", "interrupted": false},
                       "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a\nb"}]}}),
                json!({"type": "progress", "data": {}}),
                json!({"type": "brand-new"}),
                json!(42),
                json!({"type": "assistant", "message": "broken"}),
            ],
        );
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        writeln!(f, "{{not json").unwrap();
        let t = read(&path, &HookOptions::new("demo")).unwrap();
        assert_eq!(t.session_id, "s1");
        assert_eq!((t.skipped, t.ignored, t.malformed), (1, 1, 3));
        let kinds: Vec<&str> = t.drafts.iter().map(|(_, d)| d.kind.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "session_summary",
                "user_prompt",
                "agent_response",
                "tool_observation"
            ]
        );
        let refs: Vec<&str> = t.drafts.iter().map(|(r, _)| r.as_str()).collect();
        assert_eq!(refs, ["summary:u1", "u1", "a2", "a2#1"]);
        let (_, summary) = &t.drafts[0];
        assert_eq!(summary.ts, "2026-01-01T09:00:00.000Z");
        let (_, prompt) = &t.drafts[1];
        assert_eq!(prompt.body["text"], "List files");
        assert_eq!(prompt.meta["ref"], "u1");
        assert_eq!(prompt.meta["cwd"], "/w");
        assert_eq!(prompt.meta["branch"], "main");
        assert_eq!(prompt.meta["client"], "claude-code");
        assert_eq!(prompt.project, "demo");
        let (_, observation) = &t.drafts[3];
        assert_eq!(observation.ts, "2026-01-01T09:00:03.000Z");
        assert_eq!(observation.body["output"], "a\nb");
        assert_eq!(observation.body["success"], true);
        assert_eq!(observation.body["tool_use_id"], "t1");
        assert_eq!(observation.body["metadata"]["command"], "ls");
        // Reading again gives the same drafts.
        assert_eq!(read(&path, &HookOptions::new("demo")).unwrap(), t);
    }

    #[test]
    fn todo_write_calls_become_task_events_against_the_previous_list() {
        let dir = tempfile::tempdir().unwrap();
        let todo = |content: &str, status: &str| json!({"content": content, "status": status});
        let path = write_lines(
            dir.path(),
            "s1.jsonl",
            &[
                assistant(
                    "a1",
                    "2026-01-01T09:00:00Z",
                    "m1",
                    json!([{"type": "tool_use", "id": "t1", "name": "TodoWrite",
                    "input": {"todos": [todo("Plan", "in_progress"), todo("Build", "pending")]}}]),
                ),
                assistant(
                    "a2",
                    "2026-01-01T09:01:00Z",
                    "m2",
                    json!([{"type": "tool_use", "id": "t2", "name": "TodoWrite",
                    "input": {"todos": [todo("Plan", "completed"), todo("Build", "pending"), todo("Test", "pending")]}}]),
                ),
                assistant(
                    "a3",
                    "2026-01-01T09:02:00Z",
                    "m3",
                    json!([{"type": "tool_use", "id": "t3", "name": "TodoWrite",
                    "input": {"todos": [todo("Plan", "bogus")]}}]),
                ),
                user(
                    "r3",
                    "2026-01-01T09:02:01Z",
                    json!([{"type": "tool_result", "tool_use_id": "t3", "is_error": true,
                            "content": "<tool_use_error>InputValidationError</tool_use_error>"}]),
                ),
            ],
        );
        let t = read(&path, &HookOptions::new("p")).unwrap();
        let summary: Vec<(String, &str)> = t
            .drafts
            .iter()
            .map(|(r, d)| (r.clone(), d.kind.as_str()))
            .collect();
        assert_eq!(
            summary,
            [
                ("a1/todo/0".to_string(), "task_created"),
                ("a1/todo/1".to_string(), "task_created"),
                ("a2/todo/0".to_string(), "task_status_changed"),
                ("a2/todo/2".to_string(), "task_created"),
                ("a3".to_string(), "tool_observation"),
            ]
        );
        assert_eq!(t.drafts[2].1.body["to"], "done");
        assert_eq!(t.drafts[2].1.meta["tool_use_id"], "t2");
    }

    #[test]
    fn interleaved_subagents_keep_their_own_todo_lists() {
        let dir = tempfile::tempdir().unwrap();
        let todo_call = |uuid: &str, parent: &str, id: &str, status: &str, title: &str| {
            json!({"type": "assistant", "uuid": uuid, "parentUuid": parent, "isSidechain": true,
                   "timestamp": "2026-01-01T09:00:00Z", "sessionId": "s1",
                   "message": {"id": id, "role": "assistant", "content": [{"type": "tool_use", "id": id,
                       "name": "TodoWrite", "input": {"todos": [{"content": title, "status": status}]}}]}})
        };
        let path = write_lines(
            dir.path(),
            "s1.jsonl",
            &[
                json!({"type": "user", "uuid": "ra", "parentUuid": null, "isSidechain": true,
                       "timestamp": "2026-01-01T09:00:00Z", "message": {"role": "user", "content": "task A"}}),
                json!({"type": "user", "uuid": "rb", "parentUuid": null, "isSidechain": true,
                       "timestamp": "2026-01-01T09:00:00Z", "message": {"role": "user", "content": "task B"}}),
                todo_call("a1", "ra", "ta1", "pending", "Alpha"),
                todo_call("b1", "rb", "tb1", "pending", "Beta"),
                todo_call("a2", "a1", "ta2", "completed", "Alpha"),
            ],
        );
        let t = read(&path, &HookOptions::new("p")).unwrap();
        let kinds: Vec<&str> = t.drafts.iter().map(|(_, d)| d.kind.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "user_prompt",
                "user_prompt",
                "task_created",
                "task_created",
                // Alpha went pending → completed: its implied start first
                "task_status_changed",
                "task_status_changed"
            ]
        );
    }

    #[test]
    fn subagents_join_the_parent_session() {
        let dir = tempfile::tempdir().unwrap();
        let main = write_lines(
            dir.path(),
            "s1.jsonl",
            &[user("u1", "2026-01-01T09:00:00Z", json!("go"))],
        );
        write_lines(
            dir.path(),
            "s1/subagents/agent-x1.jsonl",
            &[
                json!({"type": "user", "uuid": "x1", "timestamp": "2026-01-01T09:00:01Z", "sessionId": "s1",
                     "isSidechain": true, "agentId": "x1", "message": {"role": "user", "content": "look"}}),
            ],
        );
        write_lines(
            dir.path(),
            "s1/subagents/agent-acompact-1.jsonl",
            &[user("c1", "2026-01-01T09:00:02Z", json!("summarise"))],
        );
        let t = read_with_subagents(&main, &HookOptions::new("p")).unwrap();
        assert_eq!(t.drafts.len(), 2);
        let (_, sub) = &t.drafts[1];
        assert_eq!(sub.session, "s1");
        assert_eq!(sub.meta["agent_id"], "x1");
        assert_eq!(sub.meta["sidechain"], true);
        assert!(read(dir.path().join("missing.jsonl"), &HookOptions::default()).is_err());
    }

    #[test]
    fn last_answer_of_the_turn() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_lines(
            dir.path(),
            "s.jsonl",
            &[
                user("u1", "2026-01-01T09:00:00Z", json!("first")),
                assistant(
                    "a1",
                    "2026-01-01T09:00:01Z",
                    "m1",
                    json!([{"type": "text", "text": "Old answer"}]),
                ),
                user("u2", "2026-01-01T09:00:02Z", json!("second")),
                assistant(
                    "a2",
                    "2026-01-01T09:00:03Z",
                    "m2",
                    json!([{"type": "text", "text": "Part one"}]),
                ),
                assistant(
                    "a3",
                    "2026-01-01T09:00:04Z",
                    "m2",
                    json!([{"type": "tool_use", "id": "t", "name": "Bash", "input": {}}]),
                ),
                user(
                    "r",
                    "2026-01-01T09:00:05Z",
                    json!([{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]),
                ),
                assistant(
                    "a4",
                    "2026-01-01T09:00:06Z",
                    "m3",
                    json!([{"type": "text", "text": "Final"}, {"type": "text", "text": "answer"}]),
                ),
                json!({"type": "system", "subtype": "stop_hook_summary"}),
            ],
        );
        assert_eq!(
            last_assistant_text(&path, SidechainScope::MainOnly).as_deref(),
            Some("Final\n\nanswer")
        );
        assert_eq!(
            last_assistant_text(&path, SidechainScope::SidechainOnly),
            None
        );
        // A turn without text does not repeat the previous answer.
        let quiet = write_lines(
            dir.path(),
            "q.jsonl",
            &[
                assistant(
                    "a1",
                    "2026-01-01T09:00:01Z",
                    "m1",
                    json!([{"type": "text", "text": "Old"}]),
                ),
                user("u2", "2026-01-01T09:00:02Z", json!("again")),
            ],
        );
        assert_eq!(last_assistant_text(&quiet, SidechainScope::MainOnly), None);
        assert_eq!(
            last_assistant_text(&dir.path().join("none"), SidechainScope::Any),
            None
        );
    }

    #[test]
    fn the_tail_starts_at_a_line_boundary() {
        let dir = tempfile::tempdir().unwrap();
        let filler = "x".repeat(TAIL_BYTES as usize);
        let path = write_lines(
            dir.path(),
            "big.jsonl",
            &[
                user("u1", "2026-01-01T09:00:00Z", json!(filler)),
                assistant(
                    "a1",
                    "2026-01-01T09:00:01Z",
                    "m1",
                    json!([{"type": "text", "text": "Short"}]),
                ),
            ],
        );
        assert_eq!(
            last_assistant_text(&path, SidechainScope::MainOnly).as_deref(),
            Some("Short")
        );
    }
}
