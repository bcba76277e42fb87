//! What Codex's hook payloads leave out, read from the rollout they name
//! (`transcript_path`), which Codex has written by the time the hook runs
//! (checked against 0.169.0):
//!
//! - PostToolUse's `tool_response` is only the text a command printed: the
//!   `CommandExecution` item (or `exec_command_end`) of the call holds its
//!   exit code, and an edit's `FileChange` its files and changes. The
//!   payload is completed from them ([`complete_post_tool_use`]), so that a
//!   command that exited 1 is recorded as failed, with its code.
//! - An edit made through the shell (`apply_patch <<'EOF' …`, as models
//!   often call it) fires PreToolUse but no PostToolUse. At Stop, the
//!   turn's edits of that kind are read from the rollout and recorded as
//!   the PostToolUse they never had ([`unreported_calls`]).
//! - `update_plan` fires no hook at all (0.169.0): at Stop, the turn's
//!   plan updates are read from the rollout the same way, for their task
//!   events (`todo.rs`). Were a later Codex to report them too, the
//!   repeated events would only repeat each task's status, which the task
//!   fold reads as no change.
//!
//! - Codex reads files through the shell (`sed -n '1,200p' src/a.rs`,
//!   `cat`, `head`) and edits them with `apply_patch`: for file-aware
//!   recall, a PreToolUse of such a command is about that file
//!   ([`tool_target`]).
//!
//! Only the rollout's last few MiB are read ([`TAIL`]); what is not there
//! is left to `memlog import codex`, which reads the whole file and adds
//! what the hooks missed.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::{Value, json};

use super::patch;
use super::rollout::{Call, Index, Line, PLAN_TOOL, plan_refused};
use crate::protocol::{HookEvent, Payload, ToolTarget};

/// How much of the rollout's end a hook reads: a turn's lines, however
/// long its outputs (Codex cuts them), fit well within it.
const TAIL: u64 = 4 << 20;

/// What PostToolUse reads first: the call's outcome was written just
/// before the hook ran, so it is among the last lines.
const SHORT_TAIL: u64 = 256 << 10;

/// The JSON lines of the last `max` bytes of `path` containing any of
/// `needles` (the first line, cut, left out); empty when the file cannot
/// be read.
fn tail_lines(path: &Path, max: u64, needles: &[&str]) -> Vec<Value> {
    let Ok(mut file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let start = len.saturating_sub(max);
    if file.seek(SeekFrom::Start(start)).is_err() {
        return Vec::new();
    }
    let mut bytes = Vec::new();
    if file.take(max).read_to_end(&mut bytes).is_err() {
        return Vec::new();
    }
    let text = String::from_utf8_lossy(&bytes);
    let mut lines = text.lines();
    if start > 0 {
        lines.next();
    }
    lines
        .filter(|l| needles.iter().any(|n| l.contains(n)))
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// What a Codex PreToolUse is about to work on: the first file of an
/// `apply_patch` (Codex's tool, or the shell running it), the file a
/// simple shell command only prints, else the command (see
/// [`crate::protocol::tool_target`]).
pub fn tool_target(payload: &Payload) -> Option<ToolTarget> {
    // (older versions: argv, often `bash -lc "…"`)
    let command = memlog_format::command::command_line(payload.tool_input.as_ref()?)?;
    let patched = match payload.tool_name.as_deref() {
        Some("apply_patch") => Some(patch::patch_text(&command).unwrap_or(&command)),
        _ => patch::patch_text(&command),
    };
    if let Some(text) = patched {
        return patch::from_patch_text(text)
            .into_iter()
            .next()
            .map(|edit| ToolTarget::File(edit.path));
    }
    match crate::protocol::file_printed_by(&command) {
        Some(file) => Some(ToolTarget::File(file)),
        None => crate::protocol::tool_target(payload),
    }
}

/// Completes a PostToolUse payload (`raw`, as Codex sent it) with what the
/// rollout says of its call: the exit code of a command, the changes of an
/// edit (see the module docs). Anything else is left as it is.
pub fn complete_post_tool_use(raw: &mut Value) {
    let text = |key: &str| raw.get(key).and_then(Value::as_str).map(str::to_string);
    if HookEvent::parse(&text("hook_event_name").unwrap_or_default())
        != Some(HookEvent::PostToolUse)
    {
        return;
    }
    let (Some(id), Some(path), Some(tool)) = (
        text("tool_use_id"),
        text("transcript_path"),
        text("tool_name"),
    ) else {
        return;
    };
    let command = raw
        .pointer("/tool_input/command")
        .and_then(Value::as_str)
        .map(str::to_string);
    let quoted = format!("\"{id}\"");
    let mut values = tail_lines(Path::new(&path), SHORT_TAIL, &[&quoted]);
    if values.is_empty() {
        values = tail_lines(Path::new(&path), TAIL, &[&quoted]);
    }
    let lines = Line::all(&values);
    let index = Index::of(&lines);
    let from_rollout = lines
        .iter()
        .filter(|l| l.kind == "response_item")
        .filter_map(|l| Call::of(l.payload))
        .find(|c| c.id == Some(id.as_str()));
    // The call as the hook names it, when the rollout's line is not there.
    let from_payload = || {
        let command = command.clone().unwrap_or_default();
        match tool.as_str() {
            "Bash" => Some(Call {
                id: Some(&id),
                name: "exec_command",
                args: json!({ "cmd": command }),
                freeform: None,
            }),
            "apply_patch" => Some(Call {
                id: Some(&id),
                name: "apply_patch",
                args: Value::Null,
                freeform: None,
            }),
            _ => None,
        }
    };
    let Some(mut call) = from_rollout.or_else(from_payload) else {
        return;
    };
    let patch_input = command.as_deref().filter(|_| call.name == "apply_patch");
    if call.freeform.is_none() {
        call.freeform = patch_input;
    }
    let observed = call.observe(&index, raw.get("tool_response"));
    raw["tool_name"] = Value::String(observed.tool);
    raw["tool_input"] = observed.input;
    if let Some(response) = observed.response {
        raw["tool_response"] = response;
    }
}

/// The rollout and the turn a Stop or SubagentStop payload ends. A
/// subagent's own rollout is its `agent_transcript_path` (SubagentStop
/// names its parent's in `transcript_path`).
fn rollout_turn(payload: &Payload) -> Option<(&Path, &str)> {
    let path = payload
        .agent_transcript_path
        .as_deref()
        .or(payload.transcript_path.as_deref())?;
    Some((path, payload.raw.get("turn_id")?.as_str()?))
}

/// What the agent said earlier in the turn a Stop payload ends, before its
/// answer (between its calls), read from the rollout: each text with its
/// time, in order. Codex's hooks give the turn's last answer only, and an
/// import later keeps out what a hook-captured turn said before its answer
/// (`memlog_format::capture`): unread here, it was lost (field test 12a).
pub fn earlier_texts(payload: &Payload) -> Vec<(Option<String>, String)> {
    let Some((path, turn)) = rollout_turn(payload) else {
        return Vec::new();
    };
    // the turn's lines, and where turns start (older rollouts tag their
    // messages with no turn)
    let values = tail_lines(
        path,
        TAIL,
        &[turn, "agent_message", "turn_context", "task_started"],
    );
    let lines: Vec<Line<'_>> = Line::all(&values)
        .into_iter()
        .filter(|l| l.turn.as_deref() == Some(turn))
        .collect();
    let index = Index::of(&lines);
    let mut texts: Vec<(Option<String>, String)> = lines
        .iter()
        .filter_map(|l| {
            let text = crate::codex::rollout::agent_text(l, &index)?;
            let ts =
                l.ts.as_deref()
                    .and_then(|t| memlog_format::time::normalize(t).ok());
            Some((ts, text))
        })
        .collect();
    // the answer is recorded as the payload gives it; without one, the
    // rollout's last text is the answer
    match payload
        .last_assistant_message
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        Some(answer) => texts.retain(|(_, t)| t.trim() != answer),
        None => {
            texts.pop();
        }
    }
    texts
}

/// The calls of the turn a Stop (or SubagentStop) payload ends that no
/// PostToolUse reported — edits Codex made through the shell, and its
/// `update_plan` calls — each as a PostToolUse payload of tool
/// `apply_patch` or `update_plan`, with the time of its call.
pub fn unreported_calls(payload: &Payload) -> Vec<(String, Payload)> {
    let Some((path, turn)) = rollout_turn(payload) else {
        return Vec::new();
    };
    // Lines of the turn (those naming it, and calls and their outcomes,
    // which older rollouts do not tag with it); none without an edit or a
    // plan.
    let values = tail_lines(path, TAIL, &[turn, "\"call_id\""]);
    if !values.iter().any(|v| {
        let text = v.to_string();
        text.contains("apply_patch")
            || text.contains("FileChange")
            || text.contains("patch_apply_end")
            || text.contains(PLAN_TOOL)
    }) {
        return Vec::new();
    }
    let lines: Vec<Line<'_>> = Line::all(&values)
        .into_iter()
        .filter(|l| l.turn.as_deref() == Some(turn))
        .collect();
    let index = Index::of(&lines);
    let mut edits = Vec::new();
    for line in &lines {
        let Some(ts) = &line.ts else {
            continue;
        };
        let Some(call) =
            Call::of(line.payload).filter(|c| c.name == PLAN_TOOL || c.command().is_some())
        else {
            continue;
        };
        let observed = call.observe(&index, None);
        let unreported = match observed.tool.as_str() {
            "apply_patch" => true,
            PLAN_TOOL => !plan_refused(&observed),
            _ => false,
        };
        if !unreported {
            continue;
        }
        let mut raw = json!({
            "hook_event_name": "PostToolUse",
            "tool_name": observed.tool,
            "tool_input": observed.input,
            "tool_use_id": call.id,
        });
        if let Some(response) = observed.response {
            raw["tool_response"] = response;
        }
        for key in [
            "session_id",
            "transcript_path",
            "cwd",
            "turn_id",
            "agent_id",
            "agent_type",
        ] {
            if let Some(v) = payload.raw.get(key) {
                raw[key] = v.clone();
            }
        }
        edits.push((ts.clone(), Payload::from_value("PostToolUse", raw)));
    }
    edits
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROLLOUT: &str = include_str!("../../../fixtures/codex/rollout-0.149.jsonl");
    const TURN: &str = "01a0b3da-5c0f-7ee0-9149-5c0ffee0b001";

    /// The fixture's rollout in a file, as a hook finds it.
    fn rollout_file() -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rollout-x.jsonl");
        std::fs::write(&path, ROLLOUT).unwrap();
        (dir, path.display().to_string())
    }

    fn post_tool_use(path: &str, tool: &str, command: &str, id: &str, response: &str) -> Value {
        let mut raw = json!({
            "session_id": "s", "turn_id": TURN, "transcript_path": path,
            "hook_event_name": "PostToolUse", "tool_name": tool,
            "tool_input": {"command": command}, "tool_response": response, "tool_use_id": id,
        });
        complete_post_tool_use(&mut raw);
        raw
    }

    fn target(tool: &str, command: Value) -> Option<ToolTarget> {
        let payload = crate::protocol::parse_payload(
            "PreToolUse",
            json!({"tool_name": tool, "tool_input": {"command": command}})
                .to_string()
                .as_bytes(),
        )
        .unwrap();
        tool_target(&payload)
    }

    #[test]
    fn reads_and_patches_through_the_shell_are_about_their_file() {
        let file = |p: &str| Some(ToolTarget::File(p.into()));
        assert_eq!(
            target("Bash", json!("sed -n '1,200p' src/invoice.rs")),
            file("src/invoice.rs")
        );
        assert_eq!(target("Bash", json!("cat src/a.rs")), file("src/a.rs"));
        assert_eq!(
            target("Bash", json!("head -n 40 src/a.rs")),
            file("src/a.rs")
        );
        assert_eq!(
            target("Bash", json!(["bash", "-lc", "nl -ba src/a.rs"])),
            file("src/a.rs")
        );
        let patch = "*** Begin Patch\n*** Update File: src/cart.js\n@@\n-a\n+b\n*** End Patch\n";
        assert_eq!(target("apply_patch", json!(patch)), file("src/cart.js"));
        assert_eq!(
            target("Bash", json!(format!("apply_patch <<'EOF'\n{patch}EOF"))),
            file("src/cart.js")
        );
        // anything else is a command
        let command = |c: &str| Some(ToolTarget::Command(c.into()));
        assert_eq!(
            target("Bash", json!("cargo test -p export")),
            command("cargo test -p export")
        );
        assert_eq!(
            target("Bash", json!("cat src/a.rs | wc -l")),
            command("cat src/a.rs | wc -l")
        );
        assert_eq!(
            target("Bash", json!("sed -i s/a/b/ src/a.rs")),
            command("sed -i s/a/b/ src/a.rs")
        );
        assert_eq!(
            target("Bash", json!("sed -n 1,20p")),
            command("sed -n 1,20p")
        );
    }

    #[test]
    fn a_command_gets_its_exit_code() {
        let (_dir, path) = rollout_file();
        let raw = post_tool_use(
            &path,
            "Bash",
            "npm test",
            "call_test",
            "1 failing: cart total\n",
        );
        assert_eq!(raw["tool_name"], "Bash");
        assert_eq!(
            raw["tool_response"],
            json!({"stdout": "1 failing: cart total\n", "exit_code": 1})
        );
        // A call the rollout does not hold keeps what the hook said.
        let raw = post_tool_use(&path, "Bash", "ls", "call_unknown", "a\n");
        assert_eq!(raw["tool_response"], json!({"stdout": "a\n"}));
        // Without a readable rollout, nothing changes but the shape.
        let raw = post_tool_use("/nonexistent", "Bash", "ls", "call_test", "a\n");
        assert_eq!(raw["tool_response"], json!({"stdout": "a\n"}));
    }

    #[test]
    fn an_edit_gets_its_changes() {
        let (_dir, path) = rollout_file();
        let patch = "*** Begin Patch\n*** Update File: src/cart.js\n@@\n-const TAX = 0.07;\n+const TAX = 0.08;\n*** End Patch\n";
        let raw = post_tool_use(
            &path,
            "apply_patch",
            patch,
            "call_patch",
            "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess.\n",
        );
        assert_eq!(raw["tool_name"], "apply_patch");
        assert_eq!(raw["tool_input"]["command"], patch);
        let response = &raw["tool_response"];
        assert_eq!(response["success"], true);
        assert!(
            response["changes"]["/home/dev/acme-shop/src/cart.js"].is_object(),
            "{response}"
        );
    }

    #[test]
    fn the_turns_edits_through_the_shell_are_found_at_stop() {
        let (_dir, path) = rollout_file();
        let stop = Payload::from_value(
            "Stop",
            json!({"session_id": "s", "turn_id": TURN, "transcript_path": path,
                   "hook_event_name": "Stop", "cwd": "/home/dev/acme-shop"}),
        );
        let edits = unreported_calls(&stop);
        // The freeform edit had its PostToolUse; the shell one did not.
        assert_eq!(edits.len(), 1, "{edits:?}");
        let (ts, call) = &edits[0];
        assert_eq!(ts, "2026-03-02T09:00:09.500Z");
        assert_eq!(call.event, Some(HookEvent::PostToolUse));
        assert_eq!(call.tool_name.as_deref(), Some("apply_patch"));
        assert_eq!(call.tool_use_id.as_deref(), Some("call_shell_patch"));
        assert_eq!(call.session_id.as_deref(), Some("s"));
        let response = call.tool_response.as_ref().unwrap();
        assert_eq!(response["success"], true);
        // Another turn has none.
        let other = Payload::from_value(
            "Stop",
            json!({"session_id": "s", "turn_id": "another", "transcript_path": path}),
        );
        assert!(unreported_calls(&other).is_empty());
    }

    #[test]
    fn the_turns_plan_updates_are_found_at_stop() {
        let turn = json!({"turn_id": "t1"});
        let plan = |id: &str, status: &str| {
            let args = json!({"plan": [{"step": "Add tests", "status": status}]}).to_string();
            json!({"timestamp": "2026-11-27T09:00:01.000Z", "type": "response_item",
                   "payload": {"type": "function_call", "name": "update_plan", "arguments": args,
                               "call_id": id, "internal_chat_message_metadata_passthrough": turn}})
        };
        let output = |id: &str, text: &str| {
            json!({"timestamp": "2026-11-27T09:00:02.000Z", "type": "response_item",
                   "payload": {"type": "function_call_output", "call_id": id, "output": text,
                               "internal_chat_message_metadata_passthrough": turn}})
        };
        let lines = [
            plan("c1", "in_progress"),
            output("c1", "Plan updated"),
            plan("c2", "completed"),
            output("c2", "unsupported call: update_plan"),
        ];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rollout-x.jsonl");
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&path, text).unwrap();
        let stop = Payload::from_value(
            "Stop",
            json!({"session_id": "s", "turn_id": "t1", "transcript_path": path,
                   "hook_event_name": "Stop"}),
        );
        let calls = unreported_calls(&stop);
        // the refused one changed no plan
        assert_eq!(calls.len(), 1, "{calls:?}");
        let (ts, call) = &calls[0];
        assert_eq!(ts, "2026-11-27T09:00:01.000Z");
        assert_eq!(call.tool_name.as_deref(), Some("update_plan"));
        assert_eq!(call.tool_use_id.as_deref(), Some("c1"));
        let input = call.tool_input.as_ref().unwrap();
        assert_eq!(input["plan"][0]["status"], "in_progress");
    }
}
