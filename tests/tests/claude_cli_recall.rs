//! Recall that reaches a real Claude Code session: the CLI runs offline
//! against a scripted API on 127.0.0.1 with memlog's hooks installed; a
//! later session's paraphrased follow-up carries the earlier session's
//! answer in what reaches the model, and an unrelated prompt carries no
//! memory. Skipped (with a message) when `scripts/install-assets` has not
//! installed Claude Code.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use memlog_e2e::{AgentCli, ClaudeCli, TestRepo};
use serde_json::json;

const ANSWER: &str =
    "The zebrafish telemetry lives in src/telemetry.rs; it appends one line per reading.";

#[test]
fn a_later_session_receives_the_earlier_answer_and_an_unrelated_prompt_nothing() {
    let repo = TestRepo::new();
    std::fs::create_dir_all(repo.path().join("src")).unwrap();
    let file = repo.path().join("src/telemetry.rs");
    std::fs::write(
        &file,
        "// Tank sensor readings, one line each.\npub fn append(reading: &str) {}\n",
    )
    .unwrap();
    // Generous budgets: the machine running the tests may be loaded.
    std::fs::write(
        repo.path().join(".memlog.yaml"),
        "hooks:\n  inject_budget_ms: 20000\n  record_budget_ms: 20000\n",
    )
    .unwrap();
    let Some(claude) = ClaudeCli::find(&repo) else {
        return;
    };
    let first = claude.run(
        "Where do we write the tank sensor readings?",
        &json!({
            "turns": [
                {"text": "Let me look.",
                 "tool_use": {"name": "Read", "input": {"file_path": file.display().to_string()}}},
                {"text": ANSWER}
            ],
            "side_text": "Sensor readings"
        }),
    );
    assert_eq!(first.result["result"], ANSWER);
    // SessionEnd sealed it; the index catches up as `memlog watch` or a
    // hook's background `memlog index` would.
    repo.memlog(&["index"]).ok();

    let follow_up = claude.run(
        "Remind me: which file holds the zebrafish telemetry?",
        &json!({"turns": [{"text": "Noted."}], "side_text": "Telemetry"}),
    );
    assert!(
        follow_up.requests_contain("lives in src/telemetry.rs"),
        "the earlier answer did not reach the model: {:?}",
        follow_up.requests
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
    assert!(!unrelated.requests_contain("lives in src/telemetry.rs"));
}
