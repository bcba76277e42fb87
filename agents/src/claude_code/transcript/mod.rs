//! Claude Code transcripts (`~/.claude/projects/<project>/<session>.jsonl`)
//! as memlog drafts, and the last answer of a live transcript.
//!
//! A transcript is one JSON object per line. The lines memlog reads:
//!
//! - `type: "user"`: `message.content` is a string or a list of blocks.
//!   Text becomes a `user_prompt`, except text the harness wrote rather than
//!   the user (`isMeta` lines, `[Request interrupted by user…]`, local
//!   command output and its caveat, `<task-notification>` and
//!   `<system-reminder>` messages, and the context a prompt hook added,
//!   which older versions write as `<user-prompt-submit-hook>` messages),
//!   which is left out. A compaction's
//!   continuation (`isCompactSummary`, or text starting "This session is
//!   being continued from a previous conversation") becomes a
//!   `session_summary`. A slash command (`<command-name>/x</command-name>
//!   <command-args>a</command-args>`) is recorded as the user typed it,
//!   `/x a`, with `meta.slash_command`, unless Claude Code ran it itself
//!   (`/compact`, `/cost`): its `<local-command-stdout>` then follows
//!   before any answer, and it is left out, as the hooks never see it.
//!   `tool_result` blocks complete the
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

mod convert;
mod lines;
mod tail;

use std::path::{Path, PathBuf};

pub use convert::{CLIENT, Transcript, UNKNOWN_SESSION};
pub use lines::is_harness_text;
pub use tail::{SidechainScope, TAIL_BYTES, TurnText, last_assistant_text, turn_texts};

use self::convert::convert;
use self::lines::parse_lines;
use crate::{Error, HookOptions, Result};

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

/// The folder a transcript's session started in: the first `cwd` among
/// its lines (the lines before it, summaries and queue operations, have
/// none). `None` when no line says, or the file cannot be read; only the
/// file's first [`CWD_SEARCH_BYTES`] are looked at.
pub fn started_in(path: impl AsRef<Path>) -> Option<PathBuf> {
    use std::io::Read;
    let mut head = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(CWD_SEARCH_BYTES)
        .read_to_end(&mut head)
        .ok()?;
    parse_lines(&head).into_iter().find_map(|line| {
        line.value?
            .get("cwd")?
            .as_str()
            .filter(|cwd| !cwd.is_empty())
            .map(PathBuf::from)
    })
}

/// How much of a transcript [`started_in`] reads: the first prompt's line
/// comes early, after at most some summary lines.
pub const CWD_SEARCH_BYTES: u64 = 4 << 20;

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

#[cfg(test)]
mod tests {
    use std::fs::File;
    use std::io::Write;

    use serde_json::{Map, Value, json};

    use super::lines::*;
    use super::*;

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

    /// `/compact` typed while the agent was busy is written as a queue
    /// operation, then as a user line wrapped in its command tags: one
    /// prompt (Claude Code 2.1.328, found by a field test).
    #[test]
    fn a_queued_slash_command_is_one_prompt() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_lines(
            dir.path(),
            "s1.jsonl",
            &[
                user(
                    "u1",
                    "2026-11-27T03:30:00Z",
                    json!("remember the rotation schedule"),
                ),
                json!({"type": "queue-operation", "operation": "enqueue", "sessionId": "s1",
                       "timestamp": "2026-11-27T03:31:00Z", "content": "/compact"}),
                command("u2", "2026-11-27T03:31:05Z", "/compact"),
            ],
        );
        let t = read(&path, &HookOptions::new("p")).unwrap();
        assert_eq!(prompts(&t), ["remember the rotation schedule", "/compact"]);
    }

    /// A slash command line as Claude Code writes it.
    fn command(uuid: &str, ts: &str, name: &str) -> Value {
        user(
            uuid,
            ts,
            json!(format!(
                "<command-name>{name}</command-name>\n            <command-message>{name}</command-message>\n            <command-args></command-args>"
            )),
        )
    }

    fn prompts(t: &Transcript) -> Vec<&str> {
        t.drafts
            .iter()
            .filter(|(_, d)| d.kind == memlog_format::Kind::UserPrompt)
            .map(|(_, d)| d.body["text"].as_str().unwrap_or(""))
            .collect()
    }

    /// A slash command Claude Code runs itself (`/compact`, `/cost`) is
    /// answered by its local output, not by the model, and the hooks never
    /// see it: import leaves it out too (a field test: an import after a
    /// live `/compact` sealed a commit holding only "/compact"). One the
    /// model answers stays the user's prompt.
    #[test]
    fn a_slash_command_claude_code_ran_itself_is_not_a_prompt() {
        let dir = tempfile::tempdir().unwrap();
        let stdout = |uuid: &str, ts: &str, text: &str| {
            user(
                uuid,
                ts,
                json!(format!(
                    "<local-command-stdout>{text}</local-command-stdout>"
                )),
            )
        };
        let path = write_lines(
            dir.path(),
            "s1.jsonl",
            &[
                user(
                    "u1",
                    "2026-11-27T03:30:00Z",
                    json!("remember the rotation schedule"),
                ),
                assistant(
                    "a1",
                    "2026-11-27T03:30:05Z",
                    "m1",
                    json!([{"type": "text", "text": "Noted."}]),
                ),
                json!({"type": "queue-operation", "operation": "enqueue", "sessionId": "s1",
                       "timestamp": "2026-11-27T03:31:00Z", "content": "/compact"}),
                json!({"type": "user", "uuid": "u2", "timestamp": "2026-11-27T03:31:04Z", "sessionId": "s1",
                       "isCompactSummary": true, "message": {"role": "user", "content":
                       "This session is being continued from a previous conversation that ran out of context. <summary>rotation schedule</summary>"}}),
                command("u3", "2026-11-27T03:31:05Z", "/compact"),
                stdout("u4", "2026-11-27T03:31:06Z", "Compacted"),
                command("u5", "2026-11-27T03:32:00Z", "/cost"),
                stdout("u6", "2026-11-27T03:32:01Z", "Total cost: $0.01"),
                command("u7", "2026-11-27T03:33:00Z", "/review"),
                assistant(
                    "a2",
                    "2026-11-27T03:33:05Z",
                    "m2",
                    json!([{"type": "text", "text": "Reviewing."}]),
                ),
            ],
        );
        let t = read(&path, &HookOptions::new("p")).unwrap();
        assert_eq!(prompts(&t), ["remember the rotation schedule", "/review"]);
        let summaries = t
            .drafts
            .iter()
            .filter(|(_, d)| d.kind == memlog_format::Kind::SessionSummary)
            .count();
        assert_eq!(summaries, 1);
    }

    /// Claude Code 1.0.98 and 2.0.15 write what a UserPromptSubmit hook
    /// added as a user message after the prompt: memlog's own memories,
    /// which an import took for a prompt (field test 8a).
    #[test]
    fn the_context_a_prompt_hook_added_is_not_a_prompt() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_lines(
            dir.path(),
            "s1.jsonl",
            &[
                user(
                    "u1",
                    "2026-11-27T09:06:00Z",
                    json!("when does the cron job run?"),
                ),
                user(
                    "u2",
                    "2026-11-27T09:06:00Z",
                    json!(
                        "<user-prompt-submit-hook>## Memory from earlier sessions (memlog)\n- [80f17ced5be2] note: it runs at 3am\n</user-prompt-submit-hook>"
                    ),
                ),
                assistant(
                    "a1",
                    "2026-11-27T09:06:05Z",
                    "m1",
                    json!([{"type": "text", "text": "At 3am."}]),
                ),
            ],
        );
        let t = read(&path, &HookOptions::new("p")).unwrap();
        assert_eq!(prompts(&t), ["when does the cron job run?"]);
        assert_eq!(t.drafts.len(), 2);
    }

    /// A transcript saved again by a Windows editor starts with a byte
    /// order mark: its first line, the first prompt, was malformed (field
    /// test 8a).
    #[test]
    fn a_byte_order_mark_does_not_cost_the_first_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_lines(
            dir.path(),
            "s1.jsonl",
            &[
                user("u1", "2026-11-27T09:00:00Z", json!("/init")),
                assistant(
                    "a1",
                    "2026-11-27T09:00:05Z",
                    "m1",
                    json!([{"type": "text", "text": "Done."}]),
                ),
            ],
        );
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, format!("\u{feff}{text}")).unwrap();
        let t = read(&path, &HookOptions::new("p")).unwrap();
        assert_eq!(t.malformed, 0);
        assert_eq!(prompts(&t), ["/init"]);
    }

    #[test]
    fn classifies_user_text() {
        let plain = Map::new();
        assert_eq!(classify_user_text(&plain, "fix it"), UserText::Prompt);
        // a prompt typed after reminders in the same message keeps its words
        assert_eq!(
            classify_user_text(
                &plain,
                "<system-reminder>ctx</system-reminder>\n<system-reminder>more</system-reminder>\nActual question: why does variantA fail?"
            ),
            UserText::TypedAfterReminders("Actual question: why does variantA fail?".into())
        );
        assert_eq!(
            classify_user_text(
                &plain,
                "<system-reminder>only the harness</system-reminder>\n"
            ),
            UserText::Harness
        );
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

    /// Field test 12a: memlog's own call, read from the transcript as its
    /// hook records it.
    #[test]
    fn memlogs_own_call_is_withheld_and_personal() {
        let dir = tempfile::tempdir().unwrap();
        let fixture = include_str!(
            "../../../../fixtures/claude-code/transcripts/9b1f6c2e-4d3a-4e8b-a1c7-5f2e8d9c0b14.jsonl"
        )
        .replace("cargo test -p cart coupons", "memlog search coupons")
        .replace("running 6 tests", "(personal) heliotrope");
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, fixture).unwrap();
        let t = read(&path, &HookOptions::new("demo")).unwrap();
        crate::tool::assert_own_call_kept_private(t.drafts.iter().map(|(_, d)| d), "heliotrope");
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
                // the subagents' prompts are their parent's words, not the user's
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
                json!({"type": "assistant", "uuid": "x2", "parentUuid": "x1", "timestamp": "2026-01-01T09:00:02Z",
                     "sessionId": "s1", "isSidechain": true, "agentId": "x1",
                     "message": {"id": "m9", "role": "assistant", "content": [{"type": "text", "text": "Looked."}]}}),
            ],
        );
        write_lines(
            dir.path(),
            "s1/subagents/agent-acompact-1.jsonl",
            &[user("c1", "2026-01-01T09:00:02Z", json!("summarise"))],
        );
        let t = read_with_subagents(&main, &HookOptions::new("p")).unwrap();
        // the subagent's prompt ("look") is its parent's, not a user_prompt
        let kinds: Vec<&str> = t.drafts.iter().map(|(_, d)| d.kind.as_str()).collect();
        assert_eq!(kinds, ["user_prompt", "agent_response"]);
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

    /// A forked session's transcript opens with its parent's turns under
    /// its own id, the same uuids; Claude Code 2.1 marks the copied answers
    /// with the parent's id as `requestSessionId`. Only the fork's own turn
    /// is its.
    #[test]
    fn a_fork_keeps_only_its_own_turns() {
        let dir = tempfile::tempdir().unwrap();
        let copied = |mut line: Value| {
            line["sessionId"] = json!("fork");
            if line["type"] == "assistant" {
                line["requestSessionId"] = json!("s1");
            }
            line
        };
        let mut own_answer = assistant(
            "a2",
            "2026-01-01T09:05:01Z",
            "m2",
            json!([{"type": "text", "text": "Added jitter."}]),
        );
        own_answer["sessionId"] = json!("fork");
        let mut own_prompt = user("u2", "2026-01-01T09:05:00Z", json!("try jitter instead"));
        own_prompt["sessionId"] = json!("fork");
        own_prompt["parentUuid"] = json!("a1");
        own_answer["parentUuid"] = json!("u2");
        let mut parent_answer = assistant(
            "a1",
            "2026-01-01T09:00:01Z",
            "m1",
            json!([{"type": "text", "text": "Chose exponential backoff."}]),
        );
        parent_answer["parentUuid"] = json!("u1");
        let path = write_lines(
            dir.path(),
            "fork.jsonl",
            &[
                copied(user(
                    "u1",
                    "2026-01-01T09:00:00Z",
                    json!("design the retry policy"),
                )),
                copied(parent_answer),
                own_prompt,
                own_answer,
            ],
        );
        let t = read(&path, &HookOptions::default()).unwrap();
        let texts: Vec<&str> = t
            .drafts
            .iter()
            .filter_map(|(_, d)| d.body["text"].as_str())
            .collect();
        assert_eq!(texts, ["try jitter instead", "Added jitter."]);
    }

    /// A turn of large tool outputs outgrows any fixed tail: what the agent
    /// said before its first call is read too (a field test lost it in a
    /// turn of six 50 KB outputs, and import could not bring it back).
    #[test]
    fn every_text_of_a_turn_longer_than_the_tail_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let output = "y".repeat(TAIL_BYTES as usize / 2);
        let mut lines = vec![
            user("u0", "2026-01-01T08:59:00Z", json!("an earlier turn")),
            assistant(
                "a0",
                "2026-01-01T08:59:01Z",
                "m0",
                json!([{"type": "text", "text": "Earlier answer"}]),
            ),
            user("u1", "2026-01-01T09:00:00Z", json!("read every chunk")),
        ];
        for i in 0..6 {
            let ts = format!("2026-01-01T09:00:{:02}Z", 1 + 2 * i);
            lines.push(assistant(
                &format!("n{i}"),
                &ts,
                &format!("m{}", i + 1),
                json!([{"type": "text", "text": format!("NOTE-{i}")},
                       {"type": "tool_use", "id": format!("t{i}"), "name": "Bash", "input": {}}]),
            ));
            lines.push(user(
                &format!("r{i}"),
                &ts,
                json!([{"type": "tool_result", "tool_use_id": format!("t{i}"), "content": output}]),
            ));
        }
        lines.push(assistant(
            "fin",
            "2026-01-01T09:01:00Z",
            "m9",
            json!([{"type": "text", "text": "FINAL"}]),
        ));
        let path = write_lines(dir.path(), "long.jsonl", &lines);
        assert!(std::fs::metadata(&path).unwrap().len() > TAIL_BYTES * 2);
        let texts: Vec<String> = turn_texts(&path, SidechainScope::MainOnly)
            .into_iter()
            .map(|t| t.text)
            .collect();
        assert_eq!(
            texts,
            [
                "NOTE-0", "NOTE-1", "NOTE-2", "NOTE-3", "NOTE-4", "NOTE-5", "FINAL"
            ]
        );
    }

    /// A background subagent's end comes back as a `<task-notification>`
    /// user line, which Claude Code answers in a turn of its own: that
    /// turn's texts are not the previous turn's again (field test 12a: they
    /// were recorded twice), and the notice is no prompt.
    #[test]
    fn a_task_notification_starts_a_turn_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let lines = vec![
            user("u1", "2026-01-01T09:00:00Z", json!("find the ocelot value")),
            assistant(
                "a1",
                "2026-01-01T09:00:01Z",
                "m1",
                json!([{"type": "text", "text": "Delegating."},
                       {"type": "tool_use", "id": "t1", "name": "Agent", "input": {}}]),
            ),
            user(
                "r1",
                "2026-01-01T09:00:02Z",
                json!([{"type": "tool_result", "tool_use_id": "t1", "content": "Async agent launched"}]),
            ),
            assistant(
                "a2",
                "2026-01-01T09:00:03Z",
                "m2",
                json!([{"type": "text", "text": "Waiting for it."}]),
            ),
            user(
                "n1",
                "2026-01-01T09:00:09Z",
                json!("<task-notification> <task-id>a567</task-id> done </task-notification>"),
            ),
            assistant(
                "a3",
                "2026-01-01T09:00:10Z",
                "m3",
                json!([{"type": "text", "text": "The ocelot value is 42."}]),
            ),
        ];
        let path = write_lines(dir.path(), "notified.jsonl", &lines);
        let texts: Vec<String> = turn_texts(&path, SidechainScope::MainOnly)
            .into_iter()
            .map(|t| t.text)
            .collect();
        assert_eq!(texts, ["The ocelot value is 42."]);
        assert!(is_harness_text(
            "<task-notification> <task-id>a567</task-id>"
        ));
        assert!(!is_harness_text("find the ocelot value"));
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
