//! The hook protocol every agent is read as: Claude Code's, which Codex
//! CLI speaks as is and Gemini CLI is translated into ([`crate::gemini`]).
//! An agent reads its stdin into a [`Payload`] ([`crate::Agent::read_payload`]);
//! [`drafts`] turns it into memlog drafts, and [`hook_output`] is what the
//! hook prints to inject context.
//!
//! ```text
//! stdin ─ agent.read_payload(event, bytes) ─ drafts(&payload, &context, &options) ─ ops records them
//!                                        └─ (SessionStart, UserPromptSubmit) agent.hook_output(event, Some(context)) ─ stdout
//! ```
//!
//! # Hook events and what they record
//!
//! Every draft is in the payload's `session_id` (subagents' events too),
//! at the current time, with `meta`: `cwd`, `branch`, `head` (from
//! [`crate::CodeContext`]), `client` (the agent's, [`crate::Agent::client`]), `hook` (the event's name),
//! and `agent_id` / `agent_type` / `sidechain: true` for a subagent's events.
//!
//! | event | records |
//! | --- | --- |
//! | SessionStart | `session_start` {`source`, `model`} |
//! | UserPromptSubmit | `user_prompt` {`text`: the prompt}; nothing for a blank prompt |
//! | PreToolUse | nothing, unless [`crate::HookOptions::record_pre_tool_use`]: then a `tool_observation` without output, `meta.pre_tool_use` |
//! | PostToolUse | `tool_observation` {`tool`, `input`, `output`, `success`, `error`, `metadata`, `tool_use_id`}; TodoWrite, Claude Code's task tools and the other agents' plan tools: task events instead (below); nothing for [`crate::HookOptions::excluded_tools`] |
//! | PostToolUseFailure | `tool_observation` with `success: false`, the `error`'s first line as `error` and the whole of it (a failed command's output) as `output` |
//! | Stop, SubagentStop | `agent_response` {`text`} (below) |
//! | PreCompact | `user_prompt` `/compact <instructions>` when the user gave instructions, else nothing (below) |
//! | SessionEnd | `session_end` {`reason`} |
//!
//! A payload memlog cannot read as its event — not a JSON object, an event
//! memlog does not know, or a known event without its essential field (a
//! UserPromptSubmit without `prompt`, a tool event without `tool_name`) —
//! is not an error and is not dropped: it becomes a `note` marked
//! `meta.unknown_hook = true` whose `body.payload` is the payload as it came.
//! Only input that is not JSON at all is an error ([`crate::Error::MalformedPayload`]).
//!
//! # Tool observations
//!
//! `output` is the readable part of `tool_response`: a string as it is;
//! for built-in tools the useful text — Bash stdout and stderr, the file
//! Read returned, Edit's patch as a unified diff, Glob and Grep results,
//! WebFetch's answer, WebSearch's links, a Task's reply; for other objects
//! a text-like member (`output`, `result`, `content`…) or else compact
//! JSON (inline base64 left out); terminal escape sequences (colours) are
//! removed. `metadata` holds per-tool fields (format/FORMAT.md): `file_path`
//! (Read, Write, Edit, MultiEdit, NotebookEdit) and `line_count` (the
//! file's lines, after the change for Write and the edits),
//! `command`, `exit_code`, `interrupted` (Bash), `pattern`,
//! `match_count` (Grep, Glob), `url`, `status` (WebFetch), `query`
//! (WebSearch), `description`, `subagent_type`, `agent_id` (Task),
//! `mcp_server` (MCP tools). `success` is false when the response says so
//! (`success: false`, a non-empty `error`, a non-zero exit code, an
//! interruption, a transcript's `is_error`), with a one-line `error`.
//!
//! # TodoWrite: task events instead of an observation
//!
//! A TodoWrite call carries the agent's whole todo list, which is what
//! memlog's tasks are made of; its observation would only repeat it. So a
//! TodoWrite call records task events, keyed by
//! `memlog_format::key::canonical_key(content, Some(project))`, and no
//! `tool_observation`. Comparing the new list with the previous one (the
//! hook's `tool_response.oldTodos`; in a transcript, the previous TodoWrite
//! call of the same conversation):
//!
//! - a todo not in the previous list, or every todo when the previous list
//!   is unknown, gives `task_created` {`key`, `title`, `status`,
//!   `priority`?, `todo_id`?, `active_form`?, `source: "TodoWrite"`};
//! - a todo whose status changed gives `task_status_changed` {`key`,
//!   `title`, `status`, `from`, `to`, `source`};
//! - an unchanged todo, or one that left the list, gives nothing.
//!
//! Statuses are docs/DESIGN.md §5's: TodoWrite's `completed` is `done` (the raw
//! value kept in `todo_status`). Hooks are stateless, so the same task can
//! be created more than once (a new session's first list, a lost
//! `oldTodos`), and those events do not share an id because their times
//! differ. Consumers (the task projection) must therefore fold task events
//! by `key` and read a repeated `task_created` as an update of the task it
//! names, not as a second task (from another session, an update that never
//! sends the task back: `memlog_indexer::tasks`).
//!
//! Claude Code 2.1 plans with TaskCreate and TaskUpdate instead (TodoWrite
//! is refused there), one task a call. A TaskCreate gives `task_created`
//! as a one-todo list would, its `todo_id` the id the response gives; a
//! TaskUpdate with a `status` gives the `task_status_changed` of that
//! change (`from` its `statusChange`, `deleted` as `cancelled`), the task
//! named by the subject Claude Code keeps in `tasks/<session>/<id>.json`
//! beside the session's transcript (in a transcript, the session's own
//! TaskCreate). `source` is the tool's name. A call that changes no
//! status, or whose task is not found, is the plain observation it is.
//!
//! # Other agents' plan tools
//!
//! Other agents plan with tools of TodoWrite's kind, the whole list each
//! call, but no previous list comes with it (`todo.rs`):
//!
//! | agent | tool | input |
//! | --- | --- | --- |
//! | Codex CLI | `update_plan` | {`explanation`?, `plan`: [{`step`, `status`}]} |
//! | Gemini CLI | `write_todos` | {`todos`: [{`description`, `status`}]} (statuses add `cancelled`, `blocked`) |
//! | OpenCode | `todowrite` | {`todos`: [{`content`, `status`, `priority`, `id`?}]} |
//! | Copilot CLI | `update_todo` | {`todos`: a markdown checklist: `- [ ] step` pending, `- [x] step` completed, `[/]`, `[-]`, `[~]` read as `in_progress`} |
//!
//! Each call (its PostToolUse, whatever the agent calls it, or the call
//! read from its session file on import) gives, for every item of its
//! list, the `task_created` a TodoWrite list gives when the previous one
//! is unknown — its current status, `source` the tool's name — and no
//! `tool_observation`. The next call creates the items again with their
//! new status, which the fold reads as an update of the session's task
//! (and a `pending → done` jump as implying the start:
//! `memlog_format::task::implies_start`). Hook and import give the same
//! events (kind, key, status), so importing a hooked session adds none. A
//! failed call, or one without its list, is the plain observation it is.
//! Codex runs no hook for `update_plan`: its Stop reads the turn's plan
//! calls from the rollout ([`crate::codex::hooks`]).
//!
//! # Stop and SubagentStop
//!
//! The answer is `last_assistant_message` when the agent sends it. When it
//! does not, the agent reads it from its own files
//! ([`crate::Agent::answer_from_files`], `meta.from_transcript = true`):
//! older Claude Code versions, from the last 256 KB of the transcript
//! ([`crate::claude_code::transcript::last_assistant_text`]), the text of
//! the last assistant message of the current turn — the main conversation
//! for Stop; for SubagentStop the subagent's own `agent_transcript_path`,
//! else the sidechain lines of `transcript_path`. A turn without text, or
//! a transcript that is missing or unreadable, records nothing and is not
//! an error. Before the answer come the texts the agent wrote earlier in
//! the turn, between its tool calls, read from the same files with their
//! times ([`crate::Agent::earlier_texts`]; Claude Code): what it found on
//! the way is often what the next session needs.
//!
//! # PreCompact
//!
//! Compaction itself needs no event: the SessionStart that follows it has
//! `source: "compact"`, and the summary Claude Code writes is imported from
//! the transcript as a `session_summary`. What PreCompact alone knows is
//! what the user asked the compaction to keep (`/compact <instructions>`):
//! that is recorded as the `user_prompt` the user typed, with
//! `meta.slash_command = "/compact"` and `meta.compact_trigger`. An
//! automatic or instruction-less compaction records nothing.
//!

mod drafts;
mod event;
mod output;
mod payload;
mod target;

pub use drafts::{drafts, drafts_at};
pub use event::HookEvent;
pub use output::{hook_output, stop_block_output};
pub use payload::{Payload, parse_payload, parse_translated};
pub use target::{ToolTarget, file_printed_by, tool_target, tool_target_reading_through_shell};
