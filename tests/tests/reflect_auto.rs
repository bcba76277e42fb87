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

/// Waits for the background reflection to have kept a candidate of
/// `kind`, as a user waits for it between sessions.
fn reflected(repo: &TestRepo, kind: &str) -> Value {
    let path = repo.path().join(".git/memlog/reflection.json");
    let start = Instant::now();
    loop {
        if let Ok(bytes) = std::fs::read(&path)
            && let Ok(v) = serde_json::from_slice::<Value>(&bytes)
            && v["candidates"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["rule_kind"] == kind)
        {
            return v;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no background reflection kept a {kind} candidate: {:?}\n{}",
            std::fs::read_to_string(&path),
            repo.memlog(&["reflect", "--json"]).stdout()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The candidate of `kind` the background reflection kept (its text holds
/// `about`), and the briefing of the next session, started at once (no
/// `memlog index`, which no user runs), which offers the candidates.
fn offered_at_the_next_start(repo: &TestRepo, kind: &str, about: &str) -> (Value, String) {
    let saved = reflected(repo, kind);
    let candidate = saved["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["rule_kind"] == kind)
        .unwrap_or_else(|| panic!("{saved:#}"))
        .clone();
    assert!(
        candidate["text"].as_str().unwrap().contains(about),
        "{candidate:#}"
    );
    let out = hook(repo, "SessionStart", "four", json!({"source": "startup"}));
    let briefing: Value = serde_json::from_str(&out).unwrap();
    let text = briefing["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(text.contains("rule candidates from reflection"), "{text}");
    (candidate, text)
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
    let (candidate, text) = offered_at_the_next_start(&repo, "solution", "cargo test -p export");
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

/// The same decision, worded differently in each session: the user's
/// prompt, the quote that supports it, and the fact the agent writes.
const DECISIONS: [(&str, &str, &str); 3] = [
    (
        "From now on money is kept as integer cents in the ledger, never as floats. Fix the invoice totals.",
        "money is kept as integer cents in the ledger, never as floats",
        "Money is kept as integer cents in the ledger, never as floats.",
    ),
    (
        "Remember: the ledger keeps money as integer cents, never floats. Now add the refund line.",
        "the ledger keeps money as integer cents, never floats",
        "The ledger keeps money as integer cents, never floats.",
    ),
    (
        "Money stays integer cents in the ledger, never floats; round the tax the same way.",
        "Money stays integer cents in the ledger, never floats",
        "Money stays integer cents in the ledger, never floats.",
    ),
];

/// A session that states a decision, through the hooks only: the prompt,
/// an edit, the answer; the Stop hook asks for facts, the agent hands the
/// decision back through its Bash tool (`memlog extract --facts -`, whose
/// call its PostToolUse records), stops again (not asked twice), and the
/// session ends.
fn deciding_session(repo: &TestRepo, session: &str, (prompt, quote, fact): (&str, &str, &str)) {
    let file = repo.path().join("src/ledger.rs").display().to_string();
    hook(repo, "SessionStart", session, json!({"source": "startup"}));
    hook(repo, "UserPromptSubmit", session, json!({"prompt": prompt}));
    hook(
        repo,
        "PostToolUse",
        session,
        json!({"tool_name": "Edit",
        "tool_input": {"file_path": file, "old_string": "f64", "new_string": "i64"},
        "tool_response": {"filePath": file}}),
    );
    let answer = "Done: amounts are integer cents now.";
    let out = hook(
        repo,
        "Stop",
        session,
        json!({"stop_hook_active": false, "last_assistant_message": answer}),
    );
    let asked: Value = serde_json::from_str(&out).unwrap_or_else(|_| panic!("no request: {out:?}"));
    assert_eq!(asked["decision"], "block", "{asked}");
    let reason = asked["reason"].as_str().unwrap();
    assert!(reason.contains("memlog extract --facts -"), "{reason}");
    // the agent cites the prompt by the id the instruction shows
    let prompt_id = repo
        .session_events(session)
        .into_iter()
        .find(|e| e["kind"] == "user_prompt")
        .unwrap()["id"]
        .as_str()
        .unwrap()[..12]
        .to_string();
    assert!(reason.contains(&prompt_id), "{reason}");
    let facts = json!([{"text": fact, "quote": quote, "event": prompt_id}]).to_string();
    let saved = repo
        .memlog_stdin(&["extract", "--facts", "-"], &facts)
        .ok()
        .stdout();
    assert!(saved.contains("1 recorded"), "{saved}");
    hook(
        repo,
        "PostToolUse",
        session,
        json!({"tool_name": "Bash",
        "tool_input": {"command": format!("memlog extract --facts - <<'EOF'\n{facts}\nEOF"),
                       "description": "Hand the session's facts to memlog"},
        "tool_response": {"stdout": saved, "stderr": "", "exit_code": 0}}),
    );
    let again = hook(
        repo,
        "Stop",
        session,
        json!({"stop_hook_active": true, "last_assistant_message": answer}),
    );
    assert_eq!(again, "", "asked twice");
    hook(repo, "SessionEnd", session, json!({"reason": "exit"}));
}

/// Issue 31: after three sessions repeat a decision (through the hooks and
/// what the agent does when asked for facts), the next SessionStart
/// briefing offers the rule candidate with the exact command that promotes
/// it. Nothing is run by hand: no `memlog index`, no `memlog reflect`.
#[test]
fn sessions_that_repeat_a_decision_get_a_rule_offered_at_the_next_session_start() {
    let repo = TestRepo::new();
    std::fs::write(
        repo.path().join(".memlog.yaml"),
        "hooks:\n  record_budget_ms: 10000\n  inject_budget_ms: 10000\n\
         learn:\n  reflect_every_minutes: 0\n  extract_after_events: 3\n",
    )
    .unwrap();
    for (s, decision) in ["one", "two", "three"].into_iter().zip(DECISIONS) {
        deciding_session(&repo, s, decision);
    }
    let (candidate, text) = offered_at_the_next_start(&repo, "rule", "integer cents");
    assert_eq!(candidate["sessions"], 3, "{candidate:#}");
    let evidence: Vec<String> = candidate["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| format!("--evidence {}", &e.as_str().unwrap()[..12]))
        .collect();
    assert_eq!(evidence.len(), 3, "{candidate:#}");
    assert!(
        text.contains(&format!(
            "memlog rules add --kind rule \"<the rule in your words>\" {}",
            evidence.join(" ")
        )),
        "{text}"
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
