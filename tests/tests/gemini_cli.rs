//! The real Gemini CLI, offline against a scripted Gemini API on
//! 127.0.0.1, with memlog's hooks installed by `memlog install gemini`:
//! capture of a session with a tool call, memory shared with Codex CLI,
//! file-aware recall appended to a `read_file` result, and its todos
//! (`write_todos`) as memlog's tasks.
//! Skipped (with a message) when `scripts/install-assets` has not installed
//! the CLIs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use memlog_e2e::{
    AgentCli, CodexCli, DECIDED, GeminiCli, PLAN_STEPS, assert_invoice_recall, assert_plan_tasks,
    captured_session, invoice_repo, memlog_command, plan_the_migration, plan_twice,
    read_invoice_then_notes, repo_with_notes, run as run_memlog,
};
use serde_json::json;

/// What `notes.txt` says, for the scripted model to read.
const NOTES: &str = "The release freeze is Wednesday noon.\n";

/// `memlog import gemini --json` with Gemini's home: by default the chats
/// of this repository under ~/.gemini/tmp.
fn import_gemini(repo: &memlog_e2e::TestRepo, gemini: &GeminiCli) -> serde_json::Value {
    run_memlog(
        memlog_command(repo.path())
            .env("HOME", gemini.home())
            .args(["import", "gemini", "--json"]),
    )
    .ok()
    .json()
}

#[test]
fn a_gemini_session_is_captured_and_sealed() {
    let repo = repo_with_notes(NOTES);
    let Some(gemini) = GeminiCli::find(&repo) else {
        return;
    };
    let run = gemini.run(
        "When is the release freeze?",
        &json!({
            "turns": [
                {"text": "Reading the notes.",
                 "tool_use": {"name": "run_shell_command", "input": {"command": "cat notes.txt"}}},
                {"text": "The freeze is Wednesday noon."}
            ],
            "side_text": "{}"
        }),
    );
    assert!(run.requests_contain("The release freeze is Wednesday noon."));

    // The prompt without the briefing Gemini prepends to it.
    let (events, _) = captured_session(
        &repo,
        &run.session_id,
        "When is the release freeze?",
        "run_shell_command",
        "Wednesday noon",
    );
    let answer = events
        .iter()
        .find(|e| e["kind"] == "agent_response")
        .unwrap();
    assert!(
        answer["body"]["text"]
            .as_str()
            .unwrap()
            .ends_with("The freeze is Wednesday noon."),
        "{answer}"
    );
    assert!(events.iter().all(|e| e["meta"]["client"] == "gemini-cli"));
    assert!(
        events.iter().all(|e| e["meta"]["unknown_hook"].is_null()),
        "{events:#?}"
    );
    assert_eq!(repo.memlog_commits().len(), 1, "sealed as one commit");

    // Gemini's saved chat adds nothing to what the hooks captured: by
    // default the chats of this repository under ~/.gemini/tmp.
    let report = import_gemini(&repo, &gemini);
    assert_eq!(report["files"].as_array().unwrap().len(), 1, "{report}");
    assert_eq!(report["files"][0]["session"], run.session_id.as_str());
    assert!(
        report["files"][0]["events"].as_u64().unwrap() >= 3,
        "{report}"
    );
    assert_eq!(report["added"], 0, "{report}");
    assert_eq!(report["commits"], 0, "{report}");
    let again = repo
        .memlog(&[
            "import",
            "gemini",
            "--json",
            gemini.chats_root().to_str().unwrap(),
        ])
        .ok()
        .json();
    assert_eq!(again["added"], 0, "{again}");
}

#[test]
fn a_codex_session_reaches_gemini_as_injected_context() {
    let repo = repo_with_notes(NOTES);
    let (Some(codex), Some(gemini)) = (CodexCli::find(&repo), GeminiCli::find(&repo)) else {
        return;
    };
    // no `memlog index` between the sessions, as a user runs them
    plan_the_migration(&codex);
    let run = gemini.run(
        "Is the quarzite migration behind the billing cutover?",
        &json!({"turns": [{"text": "Yes, after the cutover."}], "side_text": "{}"}),
    );
    assert!(
        run.requests_contain("<hook_context>"),
        "memlog's context reached Gemini's model"
    );
    assert!(
        run.requests_contain(DECIDED),
        "Gemini's model saw Codex's answer"
    );
}

/// File-aware recall through the real Gemini CLI (issue 31): its
/// BeforeTool takes no context, so memlog's AfterTool hook appends what
/// memory knows about the file to the `read_file` result the model reads
/// — here an earlier session's failure on src/invoice.rs and its fix,
/// cited by id.
#[test]
fn a_file_gemini_reads_brings_what_failed_there() {
    let (repo, invoice) = invoice_repo(NOTES);
    let Some(gemini) = GeminiCli::find(&repo) else {
        return;
    };
    let (failure, fix, _lock) = repo.failed_and_fixed_session();
    let mut script = read_invoice_then_notes(
        &[(
            "read_file",
            json!({"file_path": invoice.display().to_string()}),
        )],
        (
            "read_file",
            json!({"file_path": repo.path().join("notes.txt").display().to_string()}),
        ),
    );
    // Gemini's side requests (its next-speaker check) want JSON
    script["side_text"] = json!("{}");
    let run = gemini.run("Look at the invoice code and the notes.", &script);
    assert_invoice_recall(&repo, &run, ("AfterTool", "PostToolUse"), (&failure, &fix));
}

/// Gemini plans with `write_todos`, the whole list each call: its todos
/// are memlog's tasks, on the hook path (AfterTool), and its saved chat
/// brings no second copy.
#[test]
fn geminis_todos_are_memlogs_tasks() {
    let repo = repo_with_notes(NOTES);
    let Some(gemini) = GeminiCli::find(&repo) else {
        return;
    };
    let todos = |statuses: [&str; 3]| {
        let todos: Vec<serde_json::Value> = PLAN_STEPS
            .iter()
            .zip(statuses)
            .map(|(step, status)| json!({"description": step, "status": status}))
            .collect();
        json!({ "todos": todos })
    };
    let script = plan_twice(
        "write_todos",
        todos(["in_progress", "pending", "pending"]),
        todos(["completed", "completed", "pending"]),
    );
    // Gemini CLI offers write_todos to Gemini 2 models only (its default,
    // a Gemini 3 preview, tracks tasks otherwise)
    let args = [
        "-p",
        "Add the parser, with tests and docs.",
        "--output-format",
        "json",
        "--yolo",
        "--model",
        "gemini-2.5-pro",
    ];
    let run = gemini.run_args(&args, &script);
    assert_plan_tasks(&repo, &run.session_id, "write_todos");

    let report = import_gemini(&repo, &gemini);
    assert_eq!(report["files"][0]["session"], run.session_id.as_str());
    assert_eq!(report["added"], 0, "{report}");
}
