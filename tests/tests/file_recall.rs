//! File-aware recall (issue 31): before Claude Code reads or edits a file,
//! or runs a command again, the PreToolUse hook injects what memory knows
//! about it — a failure there and its fix, cited by id — once per session,
//! and nothing for a file memory knows nothing about. The same through
//! Codex CLI's PreToolUse (files read through its shell, `apply_patch`)
//! and Gemini CLI's AfterTool (its BeforeTool takes no context), each in
//! its own output.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use memlog_e2e::TestRepo;
use serde_json::{Value, json};

fn hook(repo: &TestRepo, event: &str, session: &str, payload: Value) -> String {
    repo.hook(event, session, payload)
}

fn pre_tool(repo: &TestRepo, session: &str, tool: &str, input: Value) -> Option<String> {
    injected_as(
        &hook(
            repo,
            "PreToolUse",
            session,
            json!({"tool_name": tool, "tool_input": input}),
        ),
        "PreToolUse",
    )
}

/// That `context` cites the earlier failure and the edit that fixed it
/// (see [`TestRepo::failed_and_fixed_session`]).
fn assert_cites_fix(context: &str, failure: &str, fix: &str) {
    assert!(context.contains("src/invoice.rs"), "{context}");
    assert!(
        context.contains(&format!("[{failure}] failure")),
        "{context}"
    );
    assert!(
        context.contains(&format!("edited src/invoice.rs [{fix}]")),
        "{context}"
    );
}

#[test]
fn a_read_of_a_file_that_failed_and_was_fixed_injects_the_fix_once() {
    let repo = TestRepo::with_generous_budgets();
    let file = |p: &str| repo.path().join(p).display().to_string();
    let (failure, fix, _lock) = repo.failed_and_fixed_session();

    // a later session reads the file: the failure and its fix, cited
    let s2 = "later";
    hook(&repo, "SessionStart", s2, json!({"source": "startup"}));
    let context = pre_tool(
        &repo,
        s2,
        "Read",
        json!({"file_path": file("src/invoice.rs")}),
    )
    .expect("the fix is injected");
    assert_cites_fix(&context, &failure, &fix);
    // about 300 tokens at most (four bytes a token)
    assert!(context.len() <= 1200, "{} bytes", context.len());
    // once per file per session
    assert_eq!(
        pre_tool(
            &repo,
            s2,
            "Edit",
            json!({"file_path": file("src/invoice.rs"), "old_string": "a", "new_string": "b"})
        ),
        None
    );
    // an unrelated file (read before, nothing learned): nothing
    assert_eq!(
        pre_tool(
            &repo,
            s2,
            "Read",
            json!({"file_path": file("src/unrelated.rs")})
        ),
        None
    );
    assert_eq!(
        pre_tool(&repo, s2, "Grep", json!({"pattern": "invoice"})),
        None
    );
    // the command that failed before: its failure and what fixed it
    let command = pre_tool(
        &repo,
        s2,
        "Bash",
        json!({"command": "cargo test -p export"}),
    )
    .expect("the command's failure is injected");
    assert!(
        command.contains(&format!("[{failure}] failure")),
        "{command}"
    );
    assert!(command.contains("then it passed"), "{command}");
    // and another command nothing
    assert_eq!(
        pre_tool(&repo, s2, "Bash", json!({"command": "ls -la"})),
        None
    );
    // what was injected is a recall event, for credit and review
    let recalls: Vec<Value> = repo
        .session_events(s2)
        .into_iter()
        .filter(|e| e["kind"] == "recall" && e["body"]["hook"] == "PreToolUse")
        .collect();
    assert_eq!(recalls.len(), 2, "{recalls:#?}");
}

/// `memlog hook --agent AGENT EVENT` with `payload`, as the agent runs
/// it; what memlog printed.
fn agent_hook(repo: &TestRepo, agent: &str, event: &str, payload: Value) -> String {
    let out = repo.memlog_stdin(&["hook", "--agent", agent, event], &payload.to_string());
    assert_eq!(out.code(), Some(0), "{}", out.stderr());
    out.stdout().trim().to_string()
}

/// The context of an injection under `event`'s name; `None` when nothing
/// was printed.
fn injected_as(out: &str, event: &str) -> Option<String> {
    if out.is_empty() {
        return None;
    }
    let v: Value = serde_json::from_str(out).unwrap();
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], event, "{v}");
    v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .map(str::to_string)
}

/// A Codex CLI PreToolUse hook, with the payload Codex 0.169.0 sends
/// (every field its schema requires).
fn codex_pre_tool(repo: &TestRepo, session: &str, tool: &str, command: &str) -> Option<String> {
    let payload = json!({
        "session_id": session,
        "transcript_path": null,
        "cwd": repo.path().display().to_string(),
        "hook_event_name": "PreToolUse",
        "model": "gpt-5.1-codex",
        "permission_mode": "default",
        "turn_id": "019a0b3d-5c0f-7ee0-9149-5c0ffee0b001",
        "tool_name": tool,
        "tool_use_id": format!("call_{}", command.len()),
        "tool_input": {"command": command},
    });
    injected_as(
        &agent_hook(repo, "codex", "PreToolUse", payload),
        "PreToolUse",
    )
}

/// Codex CLI reads files through its shell and edits them with
/// `apply_patch`; its PreToolUse hook's `additionalContext` reaches the
/// model (0.169.0's hook output schema). A `sed -n` of the file an earlier
/// session failed on and fixed injects the fix, cited by id, in Codex's
/// output; the patch of the same file in that session nothing more (once
/// per file); a read of an unrelated file nothing.
#[test]
fn codex_reading_a_file_through_its_shell_gets_the_fix() {
    let repo = TestRepo::with_generous_budgets();
    let (failure, fix, _lock) = repo.failed_and_fixed_session();
    let s2 = "019a0b3d-later";
    let context = codex_pre_tool(&repo, s2, "Bash", "sed -n '1,200p' src/invoice.rs")
        .expect("the fix is injected");
    assert_cites_fix(&context, &failure, &fix);
    let patch = "*** Begin Patch\n*** Update File: src/invoice.rs\n@@\n-a\n+b\n*** End Patch\n";
    assert_eq!(codex_pre_tool(&repo, s2, "apply_patch", patch), None);
    assert_eq!(
        codex_pre_tool(&repo, s2, "Bash", "cat src/unrelated.rs"),
        None
    );
    // the command that failed before: its failure and what fixed it
    let command = codex_pre_tool(&repo, s2, "Bash", "cargo test -p export")
        .expect("the command's failure is injected");
    assert!(command.contains("then it passed"), "{command}");
}

/// A Gemini CLI AfterTool hook of `read_file`, with the payload Gemini
/// 0.61.0 sends.
fn gemini_read(repo: &TestRepo, session: &str, path: &str) -> Option<String> {
    let file = repo.path().join(path).display().to_string();
    let payload = json!({
        "session_id": session,
        "transcript_path": "/home/dev/.gemini/tmp/p/chats/session-x.jsonl",
        "cwd": repo.path().display().to_string(),
        "hook_event_name": "AfterTool",
        "timestamp": "2026-11-26T12:00:00.000Z",
        "tool_name": "read_file",
        "tool_input": {"file_path": file},
        "tool_response": {"llmContent": "pub fn total() -> usize { 500 }", "returnDisplay": ""},
    });
    injected_as(
        &agent_hook(repo, "gemini", "AfterTool", payload),
        "AfterTool",
    )
}

/// Gemini CLI's BeforeTool takes no context (0.61.0 reads only a decision
/// and rewritten arguments from it), but AfterTool's is appended to the
/// tool's result the model reads: a `read_file` of the file an earlier
/// session failed on and fixed brings the fix with it, cited by id, once;
/// an unrelated file nothing.
#[test]
fn gemini_reading_a_file_gets_the_fix_with_its_content() {
    let repo = TestRepo::with_generous_budgets();
    let (failure, fix, _lock) = repo.failed_and_fixed_session();
    let s2 = "gemini-later";
    let context = gemini_read(&repo, s2, "src/invoice.rs").expect("the fix is injected");
    assert_cites_fix(&context, &failure, &fix);
    assert_eq!(
        gemini_read(&repo, s2, "src/invoice.rs"),
        None,
        "once per file"
    );
    assert_eq!(gemini_read(&repo, s2, "src/unrelated.rs"), None);
}
