//! A tool call as a `tool_observation` body (format/FORMAT.md): the tool, its
//! input, a readable rendering of its output, whether it succeeded, and
//! per-tool metadata. Shared by the PostToolUse hook and transcript import,
//! which see the same structured responses (`tool_response` in a hook
//! payload is `toolUseResult` in a transcript line).
//!
//! Every path that records a tool call, each agent's hooks and each
//! importer, goes through [`observe`]: a call to memlog's own tools is
//! withheld there, and one that read a personal event back makes its draft
//! personal, whichever way the call was seen (field test 12a: the Gemini
//! CLI importer built its bodies by hand and shared a personal note).
//!
//! Truncation of `output` and the configured privacy rules are not done
//! here: memlog-format's `Recorder` applies both to every draft before it
//! is written.

use memlog_format::event::truncate_chars;
use memlog_format::{Draft, canonical};
use serde_json::{Map, Value};

/// Longest `body.error`, in characters (the output carries the rest).
const MAX_ERROR_CHARS: usize = 500;

/// What is known about one tool call.
#[derive(Clone, Debug, Default)]
pub(crate) struct ToolCall<'a> {
    pub tool: &'a str,
    pub input: Option<&'a Value>,
    /// The structured response: `tool_response` (hooks), `toolUseResult`
    /// (transcripts). Built-in tools return objects; errors are strings.
    pub response: Option<&'a Value>,
    /// The text the model saw (a transcript's `tool_result` content).
    pub result_text: Option<String>,
    pub tool_use_id: Option<&'a str>,
    /// The transcript's `tool_result.is_error`.
    pub is_error: Option<bool>,
    /// PostToolUseFailure's `error`: `body.error` is its first line, and
    /// the whole of it is the output when nothing else gives one.
    pub failure: Option<&'a str>,
    /// PostToolUseFailure's `is_interrupt`.
    pub interrupted: Option<bool>,
    /// A shell's exit code where the agent gives it apart from the
    /// response (Copilot CLI's `shellExecution`, the `Exit Code:` line
    /// Gemini CLI and agy print): `metadata.exit_code`.
    pub exit_code: Option<i64>,
}

/// A tool call as it is recorded.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Observation {
    /// Its `tool_observation` body (withheld for memlog's own tools).
    pub body: Map<String, Value>,
    /// Whether the call read a personal event back through memlog's own
    /// tools: what the agent says next may repeat it, so its draft, and
    /// with it the rest of its session, stays on this machine.
    pub personal: bool,
}

impl Observation {
    /// The draft `make` builds of the body, marked personal when the call
    /// read a personal event.
    pub fn draft(self, make: impl FnOnce(Map<String, Value>) -> Draft) -> Draft {
        let personal = self.personal;
        let mut draft = make(self.body);
        if personal {
            memlog_format::scope::mark_personal(&mut draft.meta);
        }
        draft
    }
}

/// A call as recorded: its body and scope.
pub(crate) fn observe(call: &ToolCall<'_>) -> Observation {
    let mut body = observation_body(call);
    let Some(kept) = crate::own_calls::kept_input(call.tool, call.input) else {
        return Observation {
            body,
            personal: false,
        };
    };
    use memlog_format::scope::{WITHHELD_MEMLOG, withhold};
    withhold(&mut body, kept, WITHHELD_MEMLOG);
    Observation {
        body,
        personal: crate::own_calls::read_personal(call),
    }
}

/// The `tool_observation` body of a call, its words all kept.
fn observation_body(call: &ToolCall<'_>) -> Map<String, Value> {
    let mut body = Map::new();
    body.insert("tool".into(), Value::String(call.tool.to_string()));
    let input = match call.input {
        Some(Value::Object(map)) => Value::Object(map.clone()),
        Some(Value::Null) | None => Value::Object(Map::new()),
        Some(other) => {
            let mut wrapped = Map::new();
            wrapped.insert("value".into(), other.clone());
            Value::Object(wrapped)
        }
    };
    body.insert("input".into(), input);
    let rendered = call
        .response
        .and_then(|r| render_output(call.tool, call.input, r));
    // For a failed call the text the model saw is the clearest account;
    // without one, the failure's whole message is (Claude Code's
    // PostToolUseFailure gives a failed command's output only there, and
    // `error` keeps its first line).
    let output = if call.is_error == Some(true) {
        call.result_text.clone().or(rendered)
    } else {
        rendered.or_else(|| call.result_text.clone())
    }
    .or_else(|| {
        call.failure
            .filter(|f| !f.trim().is_empty())
            .map(str::to_string)
    })
    .map(|text| crate::agent_cut::without_cut_line(&strip_terminal_escapes(&text)));
    if let Some(output) = &output {
        body.insert("output".into(), Value::String(output.clone()));
    }
    if let Some((success, error)) = outcome(call, output.as_deref()) {
        body.insert("success".into(), Value::Bool(success));
        if let Some(error) = error {
            body.insert("error".into(), Value::String(error));
        }
    }
    let metadata = metadata(call);
    if !metadata.is_empty() {
        body.insert("metadata".into(), Value::Object(metadata));
    }
    if let Some(id) = call.tool_use_id.filter(|id| !id.is_empty()) {
        body.insert("tool_use_id".into(), Value::String(id.to_string()));
    }
    body
}

/// Whether the call succeeded and, if not, why; `None` when nothing is
/// known (a tool_use whose result never came).
fn outcome(call: &ToolCall<'_>, output: Option<&str>) -> Option<(bool, Option<String>)> {
    if let Some(failure) = call.failure {
        let error = if failure.is_empty() {
            "tool failed"
        } else {
            failure
        };
        return Some((false, Some(short_error(error))));
    }
    if call.interrupted == Some(true) {
        return Some((false, Some("interrupted".into())));
    }
    if call.is_error == Some(true) {
        let error = output.map(short_error).filter(|e| !e.is_empty());
        return Some((false, error.or_else(|| Some("tool error".into()))));
    }
    let Some(response) = call.response else {
        return call.is_error.map(|_| (true, None));
    };
    if let Value::Object(map) = response {
        if map.get("success").and_then(Value::as_bool) == Some(false) {
            let why = ["error", "message", "stderr"]
                .iter()
                .find_map(|k| non_empty_str(map, k))
                .map(short_error)
                .unwrap_or_else(|| "tool reported failure".into());
            return Some((false, Some(why)));
        }
        if let Some(error) = non_empty_str(map, "error") {
            return Some((false, Some(short_error(error))));
        }
        if let Some(code) = exit_code(map).filter(|code| *code != 0) {
            return Some((false, Some(format!("exit code {code}"))));
        }
        if map.get("interrupted").and_then(Value::as_bool) == Some(true) {
            return Some((false, Some("interrupted".into())));
        }
    }
    Some((true, None))
}

/// The first non-empty line of an error text, cut to a readable length.
fn short_error(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    truncate_chars(line, MAX_ERROR_CHARS)
}

/// The useful text of a tool's response: what a person reading the memory
/// wants to see, not the response's plumbing. `None` for a null response.
pub(crate) fn render_output(tool: &str, input: Option<&Value>, response: &Value) -> Option<String> {
    match response {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Array(items) => {
            Some(content_blocks_text(items).unwrap_or_else(|| compact(response)))
        }
        Value::Object(map) => {
            let empty = Map::new();
            let input = input.and_then(Value::as_object).unwrap_or(&empty);
            Some(render_object(tool, input, map).unwrap_or_else(|| compact(response)))
        }
        other => Some(other.to_string()),
    }
}

fn render_object(
    tool: &str,
    input: &Map<String, Value>,
    map: &Map<String, Value>,
) -> Option<String> {
    match tool {
        "Bash" | "BashOutput" => {
            let stdout = str_field(map, "stdout").unwrap_or("");
            let stderr = str_field(map, "stderr").unwrap_or("");
            let out = match (stdout.is_empty(), stderr.is_empty()) {
                (_, true) => stdout.to_string(),
                (true, false) => stderr.to_string(),
                (false, false) => format!("{stdout}\n{stderr}"),
            };
            if out.is_empty()
                && let Some(id) = non_empty_str(map, "backgroundTaskId")
            {
                return Some(format!("running in the background as {id}"));
            }
            Some(out)
        }
        "Read" => {
            let file = map.get("file").and_then(Value::as_object);
            if let Some(content) = file.and_then(|f| str_field(f, "content")) {
                return Some(content.to_string());
            }
            if let Some(cells) = file.and_then(|f| f.get("cells")).and_then(Value::as_array) {
                let sources: Vec<String> = cells.iter().filter_map(cell_source).collect();
                return Some(sources.join("\n\n"));
            }
            let kind = str_field(map, "type").unwrap_or("binary");
            match file.and_then(|f| non_empty_str(f, "filePath")) {
                Some(path) => Some(format!("[{kind} file {path}]")),
                None => Some(format!("[{kind} file]")),
            }
        }
        "Write" => {
            let path = str_field(map, "filePath").unwrap_or("");
            let verb = match str_field(map, "type") {
                Some("create") => "created",
                _ => "updated",
            };
            Some(format!("{verb} {path}"))
        }
        "Edit" | "MultiEdit" => {
            let patch = map.get("structuredPatch").and_then(Value::as_array);
            match patch.map(|hunks| render_patch(hunks)) {
                Some(diff) if !diff.is_empty() => Some(diff),
                _ => Some(format!(
                    "edited {}",
                    str_field(map, "filePath").unwrap_or("")
                )),
            }
        }
        "Glob" | "Grep" => {
            if let Some(content) = non_empty_str(map, "content") {
                return Some(content.to_string());
            }
            let files: Vec<&str> = map
                .get("filenames")
                .and_then(Value::as_array)
                .map(|names| names.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if files.is_empty() {
                let nothing = if tool == "Glob" {
                    "No files found"
                } else {
                    "No matches found"
                };
                return Some(nothing.into());
            }
            let mut out = files.join("\n");
            if map.get("truncated").and_then(Value::as_bool) == Some(true) {
                out.push_str("\n(results truncated)");
            }
            Some(out)
        }
        "WebFetch" => str_field(map, "result").map(str::to_string),
        "WebSearch" => {
            let results = map.get("results").and_then(Value::as_array)?;
            let mut lines = Vec::new();
            for result in results {
                match result {
                    Value::String(summary) => lines.push(summary.clone()),
                    Value::Object(group) => {
                        for link in group
                            .get("content")
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                        {
                            let title = link.get("title").and_then(Value::as_str).unwrap_or("");
                            let url = link.get("url").and_then(Value::as_str).unwrap_or("");
                            lines.push(format!("{title} — {url}"));
                        }
                    }
                    _ => {}
                }
            }
            Some(lines.join("\n"))
        }
        "Task" | "Agent" => map
            .get("content")
            .and_then(Value::as_array)
            .and_then(|blocks| content_blocks_text(blocks)),
        "NotebookEdit" => str_field(map, "new_source").map(str::to_string),
        "TaskOutput" => map
            .get("task")
            .and_then(Value::as_object)
            .and_then(|task| str_field(task, "output"))
            .map(str::to_string),
        "KillShell" | "KillBash" => str_field(map, "message").map(str::to_string),
        "apply_patch" => crate::codex::patch::render(input, map).or_else(|| generic_text(map)),
        _ => generic_text(map),
    }
}

/// The text of a response object of a tool memlog has no rule for.
fn generic_text(map: &Map<String, Value>) -> Option<String> {
    for key in ["output", "result", "content", "message", "text", "stdout"] {
        match map.get(key) {
            Some(Value::String(s)) if !s.is_empty() => return Some(s.clone()),
            Some(Value::Array(blocks)) => {
                if let Some(text) = content_blocks_text(blocks) {
                    return Some(text);
                }
            }
            _ => {}
        }
    }
    None
}

/// The texts of `[{"type":"text","text":…}, …]` content blocks, joined; `None`
/// when there are none (images and other blocks are left out).
pub(crate) fn content_blocks_text(blocks: &[Value]) -> Option<String> {
    let texts: Vec<&str> = blocks
        .iter()
        .filter_map(|b| match b {
            Value::String(s) => Some(s.as_str()),
            Value::Object(block) if block.get("type").and_then(Value::as_str) == Some("text") => {
                block.get("text").and_then(Value::as_str)
            }
            _ => None,
        })
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

fn cell_source(cell: &Value) -> Option<String> {
    match cell.get("source")? {
        Value::String(s) => Some(s.clone()),
        Value::Array(lines) => Some(lines.iter().filter_map(Value::as_str).collect()),
        _ => None,
    }
}

/// `structuredPatch` hunks as a unified diff.
fn render_patch(hunks: &[Value]) -> String {
    let mut out = Vec::new();
    for hunk in hunks {
        let num = |k: &str| hunk.get(k).and_then(Value::as_i64).unwrap_or(0);
        out.push(format!(
            "@@ -{},{} +{},{} @@",
            num("oldStart"),
            num("oldLines"),
            num("newStart"),
            num("newLines")
        ));
        for line in hunk
            .get("lines")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(line) = line.as_str() {
                out.push(line.to_string());
            }
        }
    }
    out.join("\n")
}

/// Lines added and removed by `structuredPatch` hunks, and the change in the
/// file's line count.
fn patch_stats(hunks: &[Value]) -> (u64, u64, i64) {
    let (mut added, mut removed, mut delta) = (0u64, 0u64, 0i64);
    for hunk in hunks {
        let num = |k: &str| hunk.get(k).and_then(Value::as_i64).unwrap_or(0);
        delta += num("newLines") - num("oldLines");
        for line in hunk
            .get("lines")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if line.starts_with('+') {
                added += 1;
            } else if line.starts_with('-') {
                removed += 1;
            }
        }
    }
    (added, removed, delta)
}

/// Per-tool metadata (format/FORMAT.md, snake_case): what the call was about
/// (`file_path`, `command`, `pattern`, `url`, `query`…) and what came of it
/// (`line_count`, `exit_code`, `match_count`, `status`…).
fn metadata(call: &ToolCall<'_>) -> Map<String, Value> {
    let empty = Map::new();
    let input = call.input.and_then(Value::as_object).unwrap_or(&empty);
    let response = call.response.and_then(Value::as_object).unwrap_or(&empty);
    let mut meta = Metadata::default();
    match call.tool {
        "Read" => {
            let file = response.get("file").and_then(Value::as_object);
            meta.text("file_path", str_field(input, "file_path"));
            meta.text("file_path", file.and_then(|f| str_field(f, "filePath")));
            let total = file
                .and_then(|f| f.get("totalLines"))
                .and_then(Value::as_u64);
            let read = file.and_then(|f| f.get("numLines")).and_then(Value::as_u64);
            let counted = file.and_then(|f| str_field(f, "content")).map(line_count);
            meta.number("line_count", total.or(read).or(counted));
            if let (Some(read), Some(total)) = (read, total)
                && read < total
            {
                meta.number("lines_read", Some(read));
            }
        }
        "Write" => {
            meta.text("file_path", str_field(input, "file_path"));
            meta.text("file_path", str_field(response, "filePath"));
            let content = str_field(input, "content").or_else(|| str_field(response, "content"));
            meta.number("line_count", content.map(line_count));
            meta.text("write_type", str_field(response, "type"));
        }
        "Edit" | "MultiEdit" => {
            meta.text("file_path", str_field(input, "file_path"));
            meta.text("file_path", str_field(response, "filePath"));
            if let Some(hunks) = response.get("structuredPatch").and_then(Value::as_array) {
                let (added, removed, delta) = patch_stats(hunks);
                let original = str_field(response, "originalFile")
                    .or_else(|| str_field(response, "originalFileContents"));
                if let Some(original) = original {
                    let after = line_count(original) as i64 + delta;
                    meta.number("line_count", u64::try_from(after).ok());
                }
                meta.number("lines_added", Some(added));
                meta.number("lines_removed", Some(removed));
            }
            if let Some(edits) = input.get("edits").and_then(Value::as_array) {
                meta.number("edit_count", Some(edits.len() as u64));
            }
            if input.get("replace_all").and_then(Value::as_bool) == Some(true) {
                meta.insert("replace_all", Value::Bool(true));
            }
        }
        "NotebookEdit" => {
            meta.text("file_path", str_field(input, "notebook_path"));
            meta.text("cell_id", str_field(input, "cell_id"));
            meta.text("cell_id", str_field(response, "cell_id"));
            meta.text("edit_mode", str_field(input, "edit_mode"));
            meta.text("edit_mode", str_field(response, "edit_mode"));
            meta.text("cell_type", str_field(response, "cell_type"));
        }
        "Bash" => {
            meta.text("command", str_field(input, "command"));
            meta.number_i64("exit_code", exit_code(response));
            if let Some(interrupted) = response.get("interrupted").and_then(Value::as_bool) {
                meta.insert("interrupted", Value::Bool(interrupted));
            }
            if input.get("run_in_background").and_then(Value::as_bool) == Some(true) {
                meta.insert("background", Value::Bool(true));
            }
            meta.text(
                "background_task_id",
                str_field(response, "backgroundTaskId"),
            );
        }
        "BashOutput" => {
            meta.text("shell_id", str_field(input, "bash_id"));
            meta.text("shell_id", str_field(input, "shell_id"));
            meta.text("shell_id", str_field(response, "shellId"));
            meta.text("command", str_field(response, "command"));
            meta.text("status", str_field(response, "status"));
            meta.number_i64("exit_code", exit_code(response));
        }
        "KillShell" | "KillBash" => {
            meta.text("shell_id", str_field(input, "shell_id"));
            meta.text("shell_id", str_field(response, "shell_id"));
        }
        "Glob" | "Grep" => {
            meta.text("pattern", str_field(input, "pattern"));
            meta.text("path", str_field(input, "path"));
            meta.text("glob", str_field(input, "glob"));
            meta.text("output_mode", str_field(response, "mode"));
            meta.text("output_mode", str_field(input, "output_mode"));
            let listed = response
                .get("filenames")
                .and_then(Value::as_array)
                .map(|f| f.len() as u64);
            let count = ["numMatches", "numLines", "numFiles"]
                .iter()
                .find_map(|k| response.get(*k).and_then(Value::as_u64))
                .or(listed);
            meta.number("match_count", count);
            if response.get("truncated").and_then(Value::as_bool) == Some(true) {
                meta.insert("truncated", Value::Bool(true));
            }
        }
        "WebFetch" => {
            meta.text("url", str_field(input, "url"));
            meta.text("url", str_field(response, "url"));
            meta.number("status", response.get("code").and_then(Value::as_u64));
        }
        "WebSearch" => {
            meta.text("query", str_field(input, "query"));
            meta.text("query", str_field(response, "query"));
            let links = response
                .get("results")
                .and_then(Value::as_array)
                .map(|results| {
                    results
                        .iter()
                        .filter_map(|r| r.get("content").and_then(Value::as_array))
                        .map(|links| links.len() as u64)
                        .sum::<u64>()
                });
            meta.number("result_count", links);
        }
        "Task" | "Agent" => {
            meta.text("description", str_field(input, "description"));
            meta.text("subagent_type", str_field(input, "subagent_type"));
            meta.text("agent_id", str_field(response, "agentId"));
            meta.text("status", str_field(response, "status"));
        }
        "TaskOutput" => {
            let task = response
                .get("task")
                .and_then(Value::as_object)
                .unwrap_or(&empty);
            meta.text("task_id", str_field(input, "task_id"));
            meta.text("task_id", str_field(task, "task_id"));
            meta.text("status", str_field(task, "status"));
            meta.text("retrieval_status", str_field(response, "retrieval_status"));
            meta.number_i64("exit_code", exit_code(task));
        }
        "SlashCommand" => {
            meta.text("command", str_field(input, "command"));
        }
        "apply_patch" => {
            for (key, value) in crate::codex::patch::metadata(input, response) {
                meta.insert(&key, value);
            }
        }
        _ => {}
    }
    if let Some(server) = call
        .tool
        .strip_prefix("mcp__")
        .and_then(|rest| rest.split("__").next())
        .filter(|s| !s.is_empty())
    {
        meta.text("mcp_server", Some(server));
    }
    if call.interrupted == Some(true) {
        meta.insert("interrupted", Value::Bool(true));
    }
    meta.number_i64("exit_code", call.exit_code);
    meta.0
}

/// Metadata under construction; the first value given for a key wins and
/// empty strings are left out.
#[derive(Default)]
struct Metadata(Map<String, Value>);

impl Metadata {
    fn insert(&mut self, key: &str, value: Value) {
        self.0.entry(key.to_string()).or_insert(value);
    }

    fn text(&mut self, key: &str, value: Option<&str>) {
        if let Some(v) = value.filter(|v| !v.is_empty()) {
            self.insert(key, Value::String(v.to_string()));
        }
    }

    fn number(&mut self, key: &str, value: Option<u64>) {
        if let Some(v) = value {
            self.insert(key, Value::from(v));
        }
    }

    fn number_i64(&mut self, key: &str, value: Option<i64>) {
        if let Some(v) = value {
            self.insert(key, Value::from(v));
        }
    }
}

/// A shell's exit code under any of the names tools use for it.
fn exit_code(map: &Map<String, Value>) -> Option<i64> {
    ["exitCode", "exit_code", "returnCode", "return_code"]
        .iter()
        .find_map(|k| map.get(*k).and_then(Value::as_i64))
}

fn str_field<'m>(map: &'m Map<String, Value>, key: &str) -> Option<&'m str> {
    map.get(key).and_then(Value::as_str)
}

fn non_empty_str<'m>(map: &'m Map<String, Value>, key: &str) -> Option<&'m str> {
    str_field(map, key).filter(|s| !s.trim().is_empty())
}

/// Lines of a text as an editor counts them (a final newline ends the last
/// line rather than starting a new one).
pub(crate) fn line_count(text: &str) -> u64 {
    text.lines().count() as u64
}

/// Text without terminal control sequences (colours, cursor moves): CSI
/// (`ESC [ … final`), OSC (`ESC ] … BEL` or `ESC \\`) and two-byte `ESC x`
/// sequences are removed, as is a lone ESC.
pub(crate) fn strip_terminal_escapes(text: &str) -> String {
    if !text.contains('\u{1b}') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match chars.peek().copied() {
            Some('[') => {
                chars.next();
                // Parameters and intermediates, then one final byte @..~.
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            Some(']') => {
                chars.next();
                while let Some(c) = chars.next() {
                    if c == '\u{7}' {
                        break;
                    }
                    if c == '\u{1b}' && chars.peek() == Some(&'\\') {
                        chars.next();
                        break;
                    }
                }
            }
            Some(_) => {
                chars.next();
            }
            None => {}
        }
    }
    out
}

/// Compact JSON of a response memlog has no rendering for, without inline
/// binary data (`base64` members become a size note).
fn compact(value: &Value) -> String {
    let mut cleaned = value.clone();
    strip_binary(&mut cleaned);
    canonical::to_string(&cleaned)
}

fn strip_binary(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if key == "base64"
                    && let Value::String(data) = v
                {
                    *v = Value::String(format!("[{} bytes of base64 omitted]", data.len()));
                } else {
                    strip_binary(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip_binary),
        _ => {}
    }
}

/// For each importer's tests: a session file in which memlog's own
/// `memlog search` printed a personal note (`secret`) is read as the hooks
/// record it (field test 12a).
#[cfg(test)]
pub(crate) fn assert_own_call_kept_private<'d>(
    drafts: impl IntoIterator<Item = &'d Draft>,
    secret: &str,
) {
    let calls: Vec<&Draft> = drafts
        .into_iter()
        .filter(|d| d.kind == memlog_format::Kind::ToolObservation)
        .collect();
    let own = calls
        .iter()
        .find(|d| d.body.get("withheld") == Some(&Value::Bool(true)))
        .unwrap_or_else(|| panic!("memlog's own call is not withheld: {calls:#?}"));
    assert_eq!(
        own.body["input"],
        serde_json::json!({"command": "memlog search"})
    );
    assert!(
        memlog_format::scope::is_personal(&own.meta),
        "a personal read is personal: {own:#?}"
    );
    for call in calls {
        let text = Value::Object(call.body.clone()).to_string();
        assert!(!text.contains(secret), "{text}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body(tool: &str, input: Value, response: Value) -> Map<String, Value> {
        observation_body(&ToolCall {
            tool,
            input: Some(&input),
            response: Some(&response),
            tool_use_id: Some("toolu_1"),
            ..ToolCall::default()
        })
    }

    #[test]
    fn bash_output_and_exit_code() {
        let b = body(
            "Bash",
            json!({"command": "cargo test"}),
            json!({"stdout": "ok", "stderr": "warning: x", "interrupted": false, "exitCode": 0}),
        );
        assert_eq!(b["output"], "ok\nwarning: x");
        assert_eq!(b["success"], true);
        assert_eq!(b["metadata"]["command"], "cargo test");
        assert_eq!(b["metadata"]["exit_code"], 0);
        assert_eq!(b["metadata"]["interrupted"], false);
        assert_eq!(b["tool_use_id"], "toolu_1");

        let failed = body(
            "Bash",
            json!({"command": "false"}),
            json!({"stdout": "", "stderr": "", "exitCode": 1}),
        );
        assert_eq!(failed["success"], false);
        assert_eq!(failed["error"], "exit code 1");
    }

    #[test]
    fn read_gives_the_file_content_and_its_size() {
        let b = body(
            "Read",
            json!({"file_path": "/src/a.rs", "limit": 2}),
            json!({"type": "text", "file": {"filePath": "/src/a.rs", "content": "a\nb",
                    "numLines": 2, "startLine": 1, "totalLines": 40}}),
        );
        assert_eq!(b["output"], "a\nb");
        assert_eq!(b["metadata"]["file_path"], "/src/a.rs");
        assert_eq!(b["metadata"]["line_count"], 40);
        assert_eq!(b["metadata"]["lines_read"], 2);
        let image = body(
            "Read",
            json!({"file_path": "/x.png"}),
            json!({"type": "image", "file": {"base64": "AAAA", "type": "image/png"}}),
        );
        assert_eq!(image["output"], "[image file]");
    }

    #[test]
    fn edit_renders_a_diff_and_derives_the_new_line_count() {
        let b = body(
            "Edit",
            json!({"file_path": "/f", "old_string": "a", "new_string": "b\nc"}),
            json!({"filePath": "/f", "originalFile": "x\na\ny\n",
                   "structuredPatch": [{"oldStart": 2, "oldLines": 1, "newStart": 2, "newLines": 2,
                                         "lines": ["-a", "+b", "+c"]}]}),
        );
        assert_eq!(b["output"], "@@ -2,1 +2,2 @@\n-a\n+b\n+c");
        assert_eq!(b["metadata"]["line_count"], 4);
        assert_eq!(b["metadata"]["lines_added"], 2);
        assert_eq!(b["metadata"]["lines_removed"], 1);
    }

    #[test]
    fn search_tools_count_matches() {
        let glob = body(
            "Glob",
            json!({"pattern": "**/*.rs"}),
            json!({"filenames": ["a.rs", "b.rs"], "numFiles": 2, "truncated": false}),
        );
        assert_eq!(glob["output"], "a.rs\nb.rs");
        assert_eq!(glob["metadata"]["match_count"], 2);
        let grep = body(
            "Grep",
            json!({"pattern": "fn main", "output_mode": "content"}),
            json!({"mode": "content", "content": "a.rs:1:fn main()", "numLines": 1, "numFiles": 1}),
        );
        assert_eq!(grep["output"], "a.rs:1:fn main()");
        assert_eq!(grep["metadata"]["match_count"], 1);
        assert_eq!(grep["metadata"]["output_mode"], "content");
    }

    #[test]
    fn web_tools_keep_url_status_and_query() {
        let fetch = body(
            "WebFetch",
            json!({"url": "https://example.com", "prompt": "title?"}),
            json!({"code": 404, "codeText": "Not Found", "result": "nothing", "url": "https://example.com"}),
        );
        assert_eq!(fetch["output"], "nothing");
        assert_eq!(fetch["metadata"]["url"], "https://example.com");
        assert_eq!(fetch["metadata"]["status"], 404);
        let search = body(
            "WebSearch",
            json!({"query": "rust"}),
            json!({"query": "rust", "results": [{"tool_use_id": "x", "content": [{"title": "Rust", "url": "https://rust-lang.org"}]}, "Rust is a language."]}),
        );
        assert_eq!(
            search["output"],
            "Rust — https://rust-lang.org\nRust is a language."
        );
        assert_eq!(search["metadata"]["query"], "rust");
        assert_eq!(search["metadata"]["result_count"], 1);
    }

    #[test]
    fn task_and_unknown_tools() {
        let task = body(
            "Task",
            json!({"description": "count", "subagent_type": "general-purpose", "prompt": "2+2?"}),
            json!({"status": "completed", "agentId": "ab12", "content": [{"type": "text", "text": "4"}]}),
        );
        assert_eq!(task["output"], "4");
        assert_eq!(task["metadata"]["subagent_type"], "general-purpose");
        assert_eq!(task["metadata"]["agent_id"], "ab12");
        let mcp = body(
            "mcp__github__get_issue",
            json!({"number": 1}),
            json!([{"type": "text", "text": "Issue 1"}]),
        );
        assert_eq!(mcp["output"], "Issue 1");
        assert_eq!(mcp["metadata"]["mcp_server"], "github");
        let odd = body(
            "Odd",
            json!("raw"),
            json!({"b": 1, "a": {"base64": "QUJD"}}),
        );
        assert_eq!(odd["input"], json!({"value": "raw"}));
        assert_eq!(
            odd["output"],
            r#"{"a":{"base64":"[4 bytes of base64 omitted]"},"b":1}"#
        );
    }

    #[test]
    fn terminal_escapes_are_removed() {
        assert_eq!(
            strip_terminal_escapes(
                "\u{1b}[?25l\u{1b}[2K\u{1b}[1G\u{1b}[36m?\u{1b}[39m Done\u{1b}]0;title\u{7} ok\u{1b}"
            ),
            "? Done ok"
        );
        assert_eq!(strip_terminal_escapes("plain"), "plain");
        let b = body(
            "Bash",
            json!({"command": "ls --color"}),
            json!({"stdout": "\u{1b}[34msrc\u{1b}[0m", "stderr": ""}),
        );
        assert_eq!(b["output"], "src");
    }

    #[test]
    fn failures_are_marked() {
        let reported = body(
            "SlashCommand",
            json!({"command": "/x"}),
            json!({"success": false, "error": "no such command\nmore"}),
        );
        assert_eq!(reported["success"], false);
        assert_eq!(reported["error"], "no such command");
        let transcript = observation_body(&ToolCall {
            tool: "Edit",
            response: Some(&json!("Error: File has not been read yet.")),
            result_text: Some(
                "<tool_use_error>File has not been read yet.</tool_use_error>".into(),
            ),
            is_error: Some(true),
            ..ToolCall::default()
        });
        assert_eq!(transcript["success"], false);
        assert_eq!(
            transcript["output"],
            "<tool_use_error>File has not been read yet.</tool_use_error>"
        );
        let pending = observation_body(&ToolCall {
            tool: "Bash",
            ..ToolCall::default()
        });
        assert!(!pending.contains_key("success") && !pending.contains_key("output"));
        assert_eq!(pending["input"], json!({}));
    }
}
