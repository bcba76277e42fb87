//! The real OpenCode, offline against a scripted Messages API on 127.0.0.1
//! (a provider of its own with a `baseURL`), with memlog's plugin installed
//! by `memlog install opencode`: capture of a session with a tool call,
//! memory from a Claude Code session reaching OpenCode's model, and its
//! todos (`todowrite`) as memlog's tasks. Skipped
//! (with a message) when `scripts/install-assets` has not installed the
//! CLIs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use memlog_e2e::{
    AgentCli, ClaudeCli, DECIDED, OpencodeCli, PLAN_STEPS, assert_invoice_recall,
    assert_plan_tasks, bash_cat_notes, invoice_repo, plan_the_migration, plan_twice,
    read_invoice_then_notes, repo_with_notes, wait_for_background_index,
};
use serde_json::json;

/// What `notes.txt` says, for the scripted model to read.
const NOTES: &str = "The release freeze is Wednesday noon.\n";

#[test]
fn an_opencode_session_is_captured() {
    let repo = repo_with_notes(NOTES);
    let Some(opencode) = OpencodeCli::find(&repo) else {
        return;
    };
    let answer = "The freeze is Wednesday noon.";
    let run = opencode.run("When is the release freeze?", &bash_cat_notes(answer));
    assert!(
        run.requests_contain("The release freeze is Wednesday noon."),
        "the command's output reached the model"
    );
    // `opencode run` ends without deleting its session, the event the
    // plugin seals on: the session stays in its journal.
    let events = repo.session_events(&run.session_id);
    let of = |kind: &str| -> Vec<&serde_json::Value> {
        events.iter().filter(|e| e["kind"] == kind).collect()
    };
    assert_eq!(of("session_start").len(), 1, "{events:#?}");
    let prompts = of("user_prompt");
    assert_eq!(prompts.len(), 1, "{events:#?}");
    assert_eq!(prompts[0]["body"]["text"], "When is the release freeze?");
    let calls = of("tool_observation");
    assert_eq!(calls.len(), 1, "{events:#?}");
    assert_eq!(calls[0]["body"]["tool"], "bash");
    assert_eq!(calls[0]["body"]["input"]["command"], "cat notes.txt");
    assert_eq!(calls[0]["body"]["success"], true, "{events:#?}");
    assert!(
        calls[0]["body"]["output"]
            .as_str()
            .unwrap()
            .contains("Wednesday noon"),
        "{events:#?}"
    );
    let answers: Vec<_> = of("agent_response")
        .iter()
        .map(|e| e["body"]["text"].clone())
        .collect();
    assert_eq!(answers, [answer], "{events:#?}");
    assert!(
        events
            .iter()
            .filter(|e| e["kind"] != "recall")
            .all(|e| e["meta"]["client"] == "opencode"),
        "{events:#?}"
    );
}

#[test]
fn a_claude_code_session_reaches_opencode_as_injected_context() {
    let repo = repo_with_notes(NOTES);
    let (Some(claude), Some(opencode)) = (ClaudeCli::find(&repo), OpencodeCli::find(&repo)) else {
        return;
    };
    plan_the_migration(&claude);
    // Between sessions: the index catches up in the background, started
    // by the Claude Code session's end (the test runs no `memlog index`).
    wait_for_background_index(&repo);
    let run = opencode.run(
        "Is the quarzite migration behind the billing cutover?",
        &json!({"turns": [{"text": "Yes, after the cutover."}], "side_text": "x"}),
    );
    assert!(
        run.requests_contain(DECIDED),
        "OpenCode's model saw Claude Code's answer"
    );
    // OpenCode's own side calls (the session's title) get no memory
    let titles: Vec<&serde_json::Value> = run
        .requests
        .iter()
        .filter(|r| {
            r["body"]["system"]
                .to_string()
                .contains("You are a title generator")
        })
        .collect();
    assert!(
        titles
            .iter()
            .all(|r| !r["body"].to_string().contains(DECIDED)),
        "{titles:#?}"
    );
}

/// File-aware recall through the real OpenCode: an earlier session failed
/// on src/invoice.rs and fixed it; OpenCode reads the file, and memlog's
/// plugin appends what memory knows about it to the `read` result its
/// model gets. A file memory knows nothing about gets nothing.
#[test]
fn a_file_opencode_reads_brings_what_failed_there() {
    let (repo, invoice) = invoice_repo(NOTES);
    let Some(opencode) = OpencodeCli::find(&repo) else {
        return;
    };
    let (failure, fix, _lock) = repo.failed_and_fixed_session();
    let run = opencode.run(
        "Look at the invoice code and the notes.",
        &read_invoice_then_notes(
            &[("read", json!({"filePath": invoice.display().to_string()}))],
            (
                "bash",
                json!({"command": "cat notes.txt", "description": "Read the notes"}),
            ),
        ),
    );
    assert_invoice_recall(
        &repo,
        &run,
        ("tool.execute.after", "PostToolUse"),
        (&failure, &fix),
    );
}

/// A shell command that exits non-zero is recorded as failed, with its
/// exit code: OpenCode gives it in the result's metadata, and the plugin
/// sent the output alone (a field test: `ls; false` was a success).
#[test]
fn an_opencode_command_that_fails_is_recorded_failed() {
    let repo = repo_with_notes(NOTES);
    let Some(opencode) = OpencodeCli::find(&repo) else {
        return;
    };
    let script = json!({
        "turns": [
            {"text": "Reading the plan.",
             "tool_use": {"name": "bash",
                          "input": {"command": "cat plan.txt", "description": "Read the plan"}}},
            {"text": "There is no plan."}
        ],
        "side_text": "Plan"
    });
    let run = opencode.run("What does the plan say?", &script);
    let events = repo.session_events(&run.session_id);
    let call = events
        .iter()
        .find(|e| e["kind"] == "tool_observation")
        .unwrap_or_else(|| panic!("no call: {events:#?}"));
    assert_eq!(call["body"]["success"], false, "{call}");
    assert_eq!(call["body"]["error"], "exit code 1", "{call}");
}

/// OpenCode plans with `todowrite` (TodoWrite's shape, the whole list each
/// call): its todos are memlog's tasks, on the hook path (the plugin's
/// `tool.execute.after`), and its export brings no second copy.
#[test]
fn opencodes_todos_are_memlogs_tasks() {
    let repo = repo_with_notes(NOTES);
    let Some(opencode) = OpencodeCli::find(&repo) else {
        return;
    };
    let todos = |statuses: [&str; 3]| {
        let todos: Vec<serde_json::Value> = PLAN_STEPS
            .iter()
            .zip(statuses)
            .map(|(step, status)| json!({"content": step, "status": status, "priority": "high"}))
            .collect();
        json!({ "todos": todos })
    };
    let script = plan_twice(
        "todowrite",
        todos(["in_progress", "pending", "pending"]),
        todos(["completed", "completed", "pending"]),
    );
    let run = opencode.run("Add the parser, with tests and docs.", &script);
    assert_plan_tasks(&repo, &run.session_id, "todowrite");

    let export = opencode.export(&run.session_id);
    let report = repo
        .memlog(&["import", "opencode", "--json", export.to_str().unwrap()])
        .ok()
        .json();
    assert_eq!(report["files"][0]["session"], run.session_id.as_str());
    assert_eq!(report["added"], 0, "{report}");
}
