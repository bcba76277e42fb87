//! Learning that runs itself (issue 31): SessionEnd starts `memlog
//! reflect` in the background (rate-limited by
//! `learn.reflect_every_minutes`), and the next SessionStart briefing
//! offers its candidates with the exact command that promotes each — all
//! through the hooks. A promoted rule citing a candidate's events ends it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use std::time::{Duration, Instant};

use memlog_e2e::TestRepo;
use serde_json::{Value, json};

fn hook(repo: &TestRepo, event: &str, session: &str, payload: Value) -> String {
    repo.hook(event, session, payload)
}

/// A session where the export tests fail, an edit fixes them, and they
/// pass: the same problem each time.
fn session(repo: &TestRepo, session: &str) {
    let file = repo.path().join("src/invoice.rs").display().to_string();
    hook(repo, "SessionStart", session, json!({"source": "startup"}));
    hook(
        repo,
        "UserPromptSubmit",
        session,
        json!({"prompt": "make the export tests pass"}),
    );
    hook(
        repo,
        "PostToolUse",
        session,
        json!({"tool_name": "Bash",
        "tool_input": {"command": "cargo test -p export"},
        "tool_response": {"stdout": "", "stderr": "error[E0308]: mismatched types", "exit_code": 101}}),
    );
    hook(
        repo,
        "PostToolUse",
        session,
        json!({"tool_name": "Edit",
        "tool_input": {"file_path": file, "old_string": "u32", "new_string": "usize"},
        "tool_response": {"filePath": file}}),
    );
    hook(
        repo,
        "PostToolUse",
        session,
        json!({"tool_name": "Bash",
        "tool_input": {"command": "cargo test -p export"},
        "tool_response": {"stdout": "test result: ok", "stderr": "", "exit_code": 0}}),
    );
    hook(repo, "SessionEnd", session, json!({"reason": "exit"}));
}

/// Waits for the background reflection to have kept candidates.
fn reflected(repo: &TestRepo) -> Value {
    let path = repo.path().join(".git/memlog/reflection.json");
    let start = Instant::now();
    loop {
        if let Ok(bytes) = std::fs::read(&path)
            && let Ok(v) = serde_json::from_slice::<Value>(&bytes)
            && !v["candidates"].as_array().unwrap().is_empty()
        {
            return v;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no background reflection kept candidates: {:?}\n{}",
            std::fs::read_to_string(&path),
            repo.memlog(&["reflect", "--json"]).stdout()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn sessions_that_repeat_a_problem_get_it_offered_at_the_next_session_start() {
    let repo = TestRepo::new();
    std::fs::write(
        repo.path().join(".memlog.yaml"),
        "hooks:\n  record_budget_ms: 10000\n  inject_budget_ms: 10000\nlearn:\n  reflect_every_minutes: 0\n",
    )
    .unwrap();
    for s in ["one", "two", "three"] {
        session(&repo, s);
    }
    let saved = reflected(&repo);
    let candidate = saved["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["rule_kind"] == "solution")
        .unwrap_or_else(|| panic!("{saved:#}"))
        .clone();
    assert!(
        candidate["text"]
            .as_str()
            .unwrap()
            .contains("cargo test -p export"),
        "{candidate:#}"
    );
    repo.memlog(&["index"]).ok();
    let out = hook(&repo, "SessionStart", "four", json!({"source": "startup"}));
    let briefing: Value = serde_json::from_str(&out).unwrap();
    let text = briefing["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(text.contains("rule candidates from reflection"), "{text}");
    let first = &candidate["evidence"][0].as_str().unwrap()[..12];
    assert!(
        text.contains(&format!(
            "memlog rules add --kind solution \"<the rule in your words>\" --evidence {first}"
        )),
        "{text}"
    );

    // promoting it (the agent runs the command) ends the candidate
    repo.memlog(&[
        "rules",
        "add",
        "--kind",
        "solution",
        "When the export tests fail with mismatched types, use usize in src/invoice.rs.",
        "--evidence",
        first,
    ])
    .ok();
    let again = repo.memlog(&["reflect", "--json"]).ok().json();
    assert!(
        !again["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["rule_kind"] == "solution"),
        "{again:#}"
    );
}

/// One reflection at a time: the SessionEnd hook's `memlog reflect
/// --if-due` waits (asleep) for one that is running, one waiter at most,
/// and is skipped once a reflection ran within
/// `learn.reflect_every_minutes`.
#[test]
fn a_reflection_waits_for_the_running_one_and_is_skipped_when_not_due() {
    let repo = TestRepo::new();
    // a note, not a session: its SessionEnd would start a reflection
    repo.memlog(&["note", "the export tests need usize"]).ok();
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(repo.path().join(".git/memlog/reflect.lock"))
        .unwrap();
    lock.lock().unwrap();
    let mut waiting = memlog_e2e::memlog_command(repo.path())
        .args(["reflect", "--if-due", "--json"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        waiting.try_wait().unwrap().is_none(),
        "it ran beside the reflection holding the lock"
    );
    // a second one leaves it to the one waiting, at once
    let second = repo.memlog(&["reflect", "--if-due", "--json"]).ok();
    assert_eq!(second.stdout(), "", "two reflections waited");
    lock.unlock().unwrap();
    let out = waiting.wait_with_output().unwrap();
    assert!(out.status.success());
    let ran: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(ran["candidates"].is_array(), "{ran}");
    // reflected a moment ago: not due for `learn.reflect_every_minutes` (60)
    let again = repo.memlog(&["reflect", "--if-due", "--json"]).ok();
    assert_eq!(again.stdout(), "", "a reflection that was not due ran");
}
