//! The real Claude Code CLI, offline against a scripted API on 127.0.0.1,
//! with memlog's hooks installed by `memlog install claude`: what memlog
//! captures from a real session, and what a real session receives.
//! Skipped (with a message) when `scripts/install-assets` has not installed
//! Claude Code.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use memlog_e2e::{ClaudeCli, TestRepo};
use serde_json::{Value, json};

/// A repository with a file the scripted model reads.
fn repo_with_notes() -> TestRepo {
    let repo = TestRepo::new();
    std::fs::write(
        repo.path().join("notes.txt"),
        "The release train leaves on Thursdays; freeze is Wednesday noon.\n",
    )
    .unwrap();
    repo
}

/// Reads `notes.txt` with the Read tool, then answers.
fn read_and_answer(repo: &TestRepo, answer: &str) -> Value {
    let file = repo.path().join("notes.txt");
    json!({
        "turns": [
            {"text": "Let me read the notes.",
             "tool_use": {"name": "Read", "input": {"file_path": file.display().to_string()}}},
            {"text": answer}
        ],
        "side_text": "Release notes"
    })
}

fn events_of(repo: &TestRepo, session: &str) -> Vec<Value> {
    repo.memlog(&["cat", "--session", session])
        .ok()
        .json_lines()
}

#[test]
fn a_real_session_is_captured_and_sealed_as_one_commit() {
    let repo = repo_with_notes();
    let Some(claude) = ClaudeCli::find(&repo) else {
        return;
    };
    let answer = "Releases leave on Thursdays, the freeze is Wednesday noon.";
    let run = claude.run(
        "When does the release train leave?",
        &read_and_answer(&repo, answer),
    );
    assert_eq!(run.result["result"], answer, "{}", run.result);
    assert!(
        run.requests_contain("freeze is Wednesday noon"),
        "the Read result reached the model"
    );

    let events = events_of(&repo, &run.session_id);
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    for kind in [
        "session_start",
        "user_prompt",
        "tool_observation",
        "agent_response",
        "session_end",
    ] {
        assert!(kinds.contains(&kind), "{kind} missing from {kinds:?}");
    }
    let prompt = events.iter().find(|e| e["kind"] == "user_prompt").unwrap();
    assert_eq!(prompt["body"]["text"], "When does the release train leave?");
    let read = events
        .iter()
        .find(|e| e["kind"] == "tool_observation")
        .unwrap();
    assert_eq!(read["body"]["tool"], "Read");
    assert!(
        read["body"]["output"]
            .as_str()
            .unwrap()
            .contains("freeze is Wednesday noon"),
        "{read}"
    );
    let response = events
        .iter()
        .find(|e| e["kind"] == "agent_response")
        .unwrap();
    assert_eq!(response["body"]["text"], answer);
    assert!(events.iter().all(|e| e["meta"]["client"] == "claude-code"));

    // SessionEnd sealed the session: one commit, listed by `memlog log`.
    let log = repo.memlog(&["log", "--json"]).ok().json();
    let sessions = log["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{log}");
    assert_eq!(sessions[0]["session"], run.session_id.as_str());
    assert_eq!(sessions[0]["events"], events.len());
    assert_eq!(repo.memlog_commits().len(), 1);
    assert_eq!(
        repo.memlog(&["stats", "--json"]).ok().json()["journals"],
        0,
        "nothing left unsealed"
    );
}
