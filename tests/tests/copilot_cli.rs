//! The real GitHub Copilot CLI, offline against a scripted Messages API on
//! 127.0.0.1 (its own BYOK provider setting), with memlog's hooks installed
//! by `memlog install copilot`: capture of a session with a tool call, an
//! import of Copilot's own session file that adds nothing, and memory from
//! a Claude Code session reaching Copilot's model. Skipped (with a message)
//! when `scripts/install-assets` has not installed the CLIs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use memlog_e2e::{
    AgentCli, ClaudeCli, CopilotCli, DECIDED, assert_invoice_recall, bash_cat_notes,
    captured_session, invoice_repo, memlog_command, plan_the_migration, read_invoice_then_notes,
    repo_with_notes, run as run_memlog, wait_for_background_index,
};
use serde_json::json;

/// What `notes.txt` says, for the scripted model to read.
const NOTES: &str = "The release freeze is Wednesday noon.\n";

#[test]
fn a_copilot_session_is_captured_sealed_and_not_imported_twice() {
    let repo = repo_with_notes(NOTES);
    let Some(copilot) = CopilotCli::find(&repo) else {
        return;
    };
    let answer = "The freeze is Wednesday noon.";
    let run = copilot.run("When is the release freeze?", &bash_cat_notes(answer));
    assert!(
        run.requests_contain("The release freeze is Wednesday noon."),
        "the command's output reached the model"
    );

    let (events, tool) = captured_session(
        &repo,
        &run.session_id,
        "When is the release freeze?",
        "bash",
        "Wednesday noon",
    );
    assert_eq!(tool["body"]["input"]["command"], "cat notes.txt");
    assert_eq!(tool["body"]["success"], true, "{tool}");
    // What it said before its call, then the turn's last message: the
    // Stop hook reads both from events.jsonl once Copilot has written it.
    let answers: Vec<&str> = events
        .iter()
        .filter(|e| e["kind"] == "agent_response")
        .map(|e| e["body"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(answers, ["Reading the notes.", answer], "{events:#?}");
    let version = copilot.version().split_whitespace().nth(3).unwrap();
    let version = version.trim_end_matches('.');
    for e in &events {
        assert_eq!(e["meta"]["client"], "copilot-cli", "{e}");
        assert!(e["meta"]["unknown_hook"].is_null(), "{e}");
    }
    assert!(
        events.iter().any(|e| e["meta"]["agent_version"] == version),
        "{version}: {events:#?}"
    );
    assert_eq!(repo.memlog_commits().len(), 1, "sealed as one commit");

    // Copilot's own session file adds nothing to what the hooks captured.
    let file = copilot.events_file(&run.session_id);
    let report = repo
        .memlog(&["import", "copilot", "--json", file.to_str().unwrap()])
        .ok()
        .json();
    assert_eq!(report["files"][0]["session"], run.session_id.as_str());
    assert!(
        report["files"][0]["events"].as_u64().unwrap() >= 3,
        "{report}"
    );
    assert_eq!(report["added"], 0, "{report}");
    assert_eq!(report["commits"], 0, "{report}");
    // By default: the sessions under ~/.copilot that ran here.
    let default = run_memlog(
        memlog_command(repo.path())
            .env("HOME", copilot.home())
            .env_remove("COPILOT_HOME")
            .args(["import", "copilot", "--json"]),
    )
    .ok()
    .json();
    assert_eq!(default["files"].as_array().unwrap().len(), 1, "{default}");
    assert_eq!(default["added"], 0, "{default}");
}

#[test]
fn a_claude_code_session_reaches_copilot_as_injected_context() {
    let repo = repo_with_notes(NOTES);
    let (Some(claude), Some(copilot)) = (ClaudeCli::find(&repo), CopilotCli::find(&repo)) else {
        return;
    };
    plan_the_migration(&claude);
    // Between sessions: the index catches up in the background, started
    // by the Claude Code session's end (the test runs no `memlog index`).
    wait_for_background_index(&repo);
    let run = copilot.run(
        "Is the quarzite migration behind the billing cutover?",
        &json!({"turns": [{"text": "Yes, after the cutover."}], "side_text": "x"}),
    );
    assert!(
        run.requests_contain("Plan the quarzite migration order"),
        "the sessionStart briefing reached Copilot's model"
    );
    assert!(
        run.requests_contain(DECIDED),
        "Copilot's model saw Claude Code's answer"
    );
    // Recorded once, as Copilot's: it runs the hooks of Claude Code's
    // settings too, which step aside for memlog's Copilot hooks.
    let events = repo.session_events(&run.session_id);
    let prompts: Vec<_> = events
        .iter()
        .filter(|e| e["kind"] == "user_prompt")
        .collect();
    assert_eq!(prompts.len(), 1, "{events:#?}");
    assert!(
        events
            .iter()
            .filter(|e| e["kind"] != "recall")
            .all(|e| e["meta"]["client"] == "copilot-cli"),
        "{events:#?}"
    );
}

/// File-aware recall through the real Copilot CLI: an earlier session
/// failed on src/invoice.rs and fixed it; Copilot reads the file with
/// `view` and prints it with `bash`, and memlog's `preToolUse` hook gives
/// what memory knows about it, which Copilot hands to its model with the
/// call. A read of a file memory knows nothing about gets nothing.
#[test]
fn a_file_copilot_reads_brings_what_failed_there() {
    let (repo, invoice) = invoice_repo(NOTES);
    let Some(copilot) = CopilotCli::find(&repo) else {
        return;
    };
    let (failure, fix, _lock) = repo.failed_and_fixed_session();
    let bash = |command: &str| json!({"command": command, "description": "Read it"});
    let run = copilot.run(
        "Look at the invoice code and the notes.",
        &read_invoice_then_notes(
            &[
                ("view", json!({"path": invoice.display().to_string()})),
                ("bash", bash("sed -n '1,80p' src/invoice.rs")),
            ],
            ("bash", bash("cat notes.txt")),
        ),
    );
    assert_invoice_recall(&repo, &run, ("preToolUse", "PreToolUse"), (&failure, &fix));
}
