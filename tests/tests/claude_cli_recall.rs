//! Recall that reaches a real Claude Code session: the CLI runs offline
//! against a scripted API on 127.0.0.1 with memlog's hooks installed. A
//! later session, started within a second of the earlier one's end, gets
//! the earlier answer for its paraphrased follow-up in what reaches the
//! model, and an unrelated prompt no memory; the first session after
//! `memlog install claude` and `memlog import claude-code` gets what was
//! imported. Nothing here runs `memlog index` (SessionEnd, install and
//! import leave it to the hooks and the background). Skipped (with a
//! message) when `scripts/install-assets` has not installed Claude Code.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use std::path::Path;
use std::time::Duration;

use memlog_e2e::{AgentCli, ClaudeCli, TestRepo};
use serde_json::json;

/// The machine running the tests may be loaded: these tests check what
/// reaches the model, and the bench times the hooks.
const GENEROUS_BUDGETS: &str = "hooks:\n  inject_budget_ms: 20000\n  record_budget_ms: 20000\n";

const ANSWER: &str =
    "The zebrafish telemetry lives in src/telemetry.rs; it appends one line per reading.";

#[test]
fn a_later_session_receives_the_earlier_answer_and_an_unrelated_prompt_nothing() {
    let repo = TestRepo::new();
    let file = repo.with_telemetry_code(GENEROUS_BUDGETS);
    let Some(claude) = ClaudeCli::find(&repo) else {
        return;
    };
    // the next session's scripted API is up before the first one ends
    let next_api = claude.api(&json!({"turns": [{"text": "Noted."}], "side_text": "Telemetry"}));
    let first = claude.run(
        "Where do we write the tank sensor readings?",
        &reads_and_answers(&file),
    );
    assert_eq!(first.result["result"], ANSWER);
    // SessionEnd sealed it and started a background `memlog index`; nobody
    // waits for it: the next session starts at once, as a person would
    // start it, and its hooks read what the index lacks directly.
    let follow_up = claude.run_on(
        next_api,
        "Remind me: which file holds the zebrafish telemetry?",
    );
    assert!(
        follow_up.requests_contain("lives in src/telemetry.rs"),
        "the earlier answer did not reach the model: {:?}\nhooks.log:\n{}",
        follow_up.requests,
        hooks_log(&repo)
    );
    let gap = follow_up.started.duration_since(first.ended);
    eprintln!("session 2 started {gap:?} after session 1 ended");
    assert!(
        gap < Duration::from_secs(1),
        "session 2 started {gap:?} after session 1 ended"
    );

    let unrelated = claude.run(
        "What is a good name for a pet hamster?",
        &json!({"turns": [{"text": "Biscuit."}], "side_text": "Hamster"}),
    );
    assert!(
        !unrelated.requests_contain("Memory from earlier sessions"),
        "memories injected for an unrelated prompt: {:?}",
        unrelated.requests
    );
    // (the first session's answer is in the SessionStart briefing, which
    // lists what came of each recent session, whatever is asked next)
    let briefed = unrelated
        .requests
        .iter()
        .filter(|r| r.to_string().contains("lives in src/telemetry.rs"))
        .all(|r| r.to_string().contains("recent sessions in this project"));
    assert!(briefed, "{:?}", unrelated.requests);
}

/// The scripted model's turns: it reads `file`, then gives [`ANSWER`].
fn reads_and_answers(file: &Path) -> serde_json::Value {
    json!({
        "turns": [
            {"text": "Let me look.",
             "tool_use": {"name": "Read", "input": {"file_path": file.display().to_string()}}},
            {"text": ANSWER}
        ],
        "side_text": "Sensor readings"
    })
}

fn hooks_log(repo: &TestRepo) -> String {
    std::fs::read_to_string(repo.path().join(".git/memlog/hooks.log")).unwrap_or_default()
}

#[test]
fn the_first_session_after_install_and_import_gets_the_imported_memory() {
    let repo = TestRepo::new();
    let file = repo.with_telemetry_code(GENEROUS_BUDGETS);
    // A session from before memlog: only Claude Code's transcript has it.
    let Some(claude) = ClaudeCli::find_without_hooks(&repo) else {
        return;
    };
    let earlier = claude.run(
        "Where do we write the tank sensor readings?",
        &reads_and_answers(&file),
    );
    let transcript = claude.transcript(&earlier.session_id);
    assert!(
        !repo.path().join(".git/memlog/index").exists(),
        "memlog saw nothing yet"
    );

    repo.memlog(&["install", "claude"]).ok();
    let imported = repo
        .memlog(&["import", "claude-code", transcript.to_str().unwrap()])
        .ok();
    assert!(
        imported.stdout().contains("new events indexed"),
        "{}",
        imported.stdout()
    );
    // no `memlog index`: the first session after gets what was imported
    let first = claude.run(
        "Remind me: where does the zebrafish telemetry live?",
        &json!({"turns": [{"text": "Noted."}], "side_text": "Telemetry"}),
    );
    assert!(
        first.requests_contain("lives in src/telemetry.rs"),
        "the imported answer did not reach the model: {:?}\nhooks.log:\n{}",
        first.requests,
        hooks_log(&repo)
    );
}
