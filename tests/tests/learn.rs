//! Memory that learns (issue 16, docs/DESIGN.md §10): the Stop hook asks
//! the agent for the session's facts once enough happened, the agent's
//! facts are aligned or rejected, cited memories are credited, rules are
//! promoted by reflection and retired, concepts group sessions.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use memlog_e2e::TestRepo;
use serde_json::{Value, json};

/// A repository whose hooks only record (no injection): these tests are
/// about what Stop answers.
fn quiet_repo(extra: &str) -> TestRepo {
    let repo = TestRepo::new();
    std::fs::write(
        repo.path().join(".memlog.yaml"),
        format!("hooks:\n  inject: false\n  record_budget_ms: 10000\n{extra}"),
    )
    .unwrap();
    repo
}

/// Runs `memlog hook EVENT` with `payload` (its `cwd`, `session_id` and
/// `hook_event_name` filled in) and returns what it printed.
fn hook(repo: &TestRepo, event: &str, session: &str, mut payload: Value) -> String {
    payload["cwd"] = json!(repo.path().display().to_string());
    payload["session_id"] = json!(session);
    payload["hook_event_name"] = json!(event);
    let out = repo.memlog_stdin(&["hook", event], &payload.to_string());
    assert_eq!(out.code(), Some(0), "{}", out.stderr());
    out.stdout().trim().to_string()
}

/// A session of `prompts` prompts, each followed by `tools` tool calls
/// (every fourth one a failing test run), without its Stop.
fn session(repo: &TestRepo, session: &str, prompts: usize, tools: usize) {
    hook(repo, "SessionStart", session, json!({"source": "startup"}));
    for p in 0..prompts {
        hook(
            repo,
            "UserPromptSubmit",
            session,
            json!({"prompt": format!("Step {p}: make getUserById return Option")}),
        );
        for t in 0..tools {
            let payload = if t % 4 == 3 {
                json!({"tool_name": "Bash", "tool_input": {"command": "cargo test"},
                       "tool_response": {"stdout": "", "stderr": "test user::by_id failed", "exit_code": 101}})
            } else {
                json!({"tool_name": "Edit", "tool_input": {"file_path": format!("src/user{t}.rs"),
                       "old_string": "a", "new_string": "b"}, "tool_response": {"filePath": format!("src/user{t}.rs")}})
            };
            hook(repo, "PostToolUse", session, payload);
        }
    }
}

fn stop(repo: &TestRepo, session: &str, active: bool, answer: &str) -> String {
    hook(
        repo,
        "Stop",
        session,
        json!({"stop_hook_active": active, "last_assistant_message": answer}),
    )
}

#[test]
fn a_long_session_is_asked_for_its_facts_once() {
    let repo = quiet_repo("");
    // 1 start + 5 prompts + 5 × 6 tool calls = 36 events, the answer the 37th
    session(&repo, "long", 5, 6);
    let out = stop(&repo, "long", true, "Done.");
    assert_eq!(out, "", "never while a Stop hook already keeps it going");

    let out = stop(&repo, "long", false, "Done: by_id returns Option now.");
    let decision: Value = serde_json::from_str(&out).expect("a JSON decision");
    assert_eq!(decision["decision"], "block");
    let reason = decision["reason"].as_str().unwrap();
    for needed in [
        "Compact view",
        "Prompts:",
        "Step 4: make getUserById return Option",
        "src/user0.rs changed",
        "Failures:",
        "Bash: cargo test — exit code 101",
        "Extract",
        "Match against the source",
        "Self-question",
        "memlog extract --facts -",
        "memory_remember",
    ] {
        assert!(
            reason.contains(needed),
            "{needed:?} missing from:\n{reason}"
        );
    }
    // the ids it cites are the session's
    let events = repo.memlog(&["cat", "--session", "long"]).ok().json_lines();
    let prompt = events.iter().find(|e| e["kind"] == "user_prompt").unwrap()["id"]
        .as_str()
        .unwrap();
    assert!(reason.contains(&prompt[..12]), "{reason}");
    assert_eq!(
        events
            .iter()
            .filter(|e| e["kind"] == "extraction_request")
            .count(),
        1
    );

    // the agent obeys, and stops again: asked once only
    assert_eq!(stop(&repo, "long", true, "Facts recorded."), "");
    assert_eq!(stop(&repo, "long", false, "Anything else?"), "");

    // the same instruction on demand
    let printed = repo.memlog(&["extract", "--prompt", "long"]).ok().stdout();
    assert!(printed.contains("memlog extract --facts -"), "{printed}");
    assert!(printed.contains(&prompt[..12]));
}

#[test]
fn a_short_session_or_a_user_who_turned_it_off_is_not_asked() {
    let repo = quiet_repo("");
    // 1 start + 1 prompt + 1 tool call, the answer the 4th
    session(&repo, "short", 1, 1);
    assert_eq!(stop(&repo, "short", false, "Done."), "");

    let off = quiet_repo("learn:\n  extract_after_events: 0\n");
    session(&off, "off", 5, 6);
    assert_eq!(stop(&off, "off", false, "Done."), "");

    let err = repo.memlog(&["extract", "--prompt", "nosuch"]);
    assert_eq!(err.code(), Some(1));
    assert!(err.stderr().contains("no session is named \"nosuch\""));
}

#[test]
fn facts_handed_back_are_aligned_or_rejected_and_may_supersede() {
    let repo = TestRepo::new();
    let old = repo.record("s1", "agent_response", "We store emails as typed.");
    let new = repo.record(
        "s2",
        "agent_response",
        "From now on emails are stored lowercased, because logins failed on case.",
    );
    let first = repo
        .memlog_stdin(
            &["extract", "--facts", "-", "--json"],
            &json!([{"text": "Emails are stored as typed", "quote": "We store emails as typed", "event": old}])
                .to_string(),
        )
        .ok()
        .json();
    let old_fact = first["recorded"][0]["id"].as_str().unwrap().to_string();
    let out = repo
        .memlog_stdin(
            &["extract", "--facts", "-", "--json"],
            &json!([
                {"text": "Emails are stored lowercased", "quote": "emails are stored lowercased",
                 "event": new, "supersedes": &old_fact[..12]},
                {"text": "Emails are hashed", "quote": "emails are hashed with argon2", "event": new}
            ])
            .to_string(),
        )
        .ok()
        .json();
    assert_eq!(out["recorded"].as_array().unwrap().len(), 1, "{out:#}");
    assert_eq!(out["rejected"][0]["index"], 1);
    let fact_id = out["recorded"][0]["id"].as_str().unwrap();
    let fact = repo.cat().into_iter().find(|e| e["id"] == fact_id).unwrap();
    assert_eq!(fact["body"]["supersedes"], json!([old_fact]));
}

/// A repository with the demo sessions indexed, whose hooks inject.
fn repo_with_history() -> TestRepo {
    let repo = TestRepo::new();
    std::fs::write(
        repo.path().join(".memlog.yaml"),
        "hooks:\n  inject_budget_ms: 10000\n  record_budget_ms: 10000\n",
    )
    .unwrap();
    let demo =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/demo/sessions.jsonl");
    repo.memlog(&["import", "jsonl", demo.to_str().unwrap()])
        .ok();
    repo.memlog(&["index"]).ok();
    repo
}

fn memory_of(repo: &TestRepo, id: &str) -> Value {
    let shown = repo.memlog(&["show", id, "--json"]).ok().json();
    assert!(shown["level"].is_u64(), "{shown:#}");
    shown["memory"].clone()
}

#[test]
fn a_cited_memory_counts_as_a_success() {
    let repo = repo_with_history();
    let sid = "cite-1";
    let out = hook(
        &repo,
        "UserPromptSubmit",
        sid,
        json!({"prompt": "The checkout page times out again for big carts, what did we change in price_cart?"}),
    );
    let injected: Value = serde_json::from_str(&out).unwrap();
    let context = injected["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    let cited: Vec<&str> = context
        .split('[')
        .skip(1)
        .filter_map(|s| s.split(']').next())
        .filter(|s| s.len() == 12 && s.bytes().all(|b| b.is_ascii_hexdigit()))
        .collect();
    assert!(cited.len() >= 2, "{context}");
    let (used, unused) = (cited[0], cited[1]);
    stop(
        &repo,
        sid,
        false,
        &format!("As [{used}] says, price_cart was made linear."),
    );
    assert_eq!(memory_of(&repo, used)["success"], 1);
    assert_eq!(memory_of(&repo, unused)["success"], 0);
    // credited once, however often the answer repeats it
    stop(&repo, sid, false, &format!("Again: {used}."));
    assert_eq!(memory_of(&repo, used)["success"], 1);
    let credit: Vec<Value> = repo
        .memlog(&["cat", "--session", sid])
        .ok()
        .json_lines()
        .into_iter()
        .filter(|e| e["kind"] == "reinforce")
        .collect();
    assert_eq!(credit.len(), 1);
    assert_eq!(credit[0]["body"]["source"], "cited");

    let stats = repo.memlog(&["stats", "--json"]).ok().json();
    assert!(stats["memory_levels"]["L1"].as_u64().is_some(), "{stats:#}");
}

#[test]
fn memory_reinforce_and_quoted_facts_over_the_python_mcp_client() {
    let Some(python) = memlog_e2e::python_mcp_client() else {
        return;
    };
    let repo = TestRepo::new();
    let source = repo.record(
        "s1",
        "agent_response",
        "We cache prices for five minutes because the pricing service is slow.",
    );
    let note = repo.record("s1", "note", "Prices are cached for five minutes");
    let report = memlog_e2e::run_mcp_client(
        &python,
        repo.path(),
        json!({"calls": [
            {"tool": "memory_reinforce", "args": {"ids": [&note[..12]], "outcome": "success"}},
            {"tool": "memory_reinforce", "args": {"ids": [&note[..12]], "outcome": "maybe"}},
            {"tool": "memory_remember", "args": {"kind": "fact", "text": "Prices are cached for 5 minutes",
                "quote": "cache prices for five minutes", "evidence": [&source[..12]]}},
            {"tool": "memory_remember", "args": {"kind": "fact", "text": "Prices are cached for an hour",
                "quote": "cache prices for an hour", "evidence": [&source[..12]]}},
        ]}),
    );
    let names: Vec<&str> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"memory_reinforce"), "{names:?}");
    let results = report["results"].as_array().unwrap();
    assert_eq!(results[0]["is_error"], false, "{:#}", results[0]);
    assert_eq!(results[0]["structured"]["outcome"], "success");
    assert!(
        results[1]["is_error"] == true || results[1].get("rpc_error").is_some(),
        "{:#}",
        results[1]
    );
    assert_eq!(
        results[2]["structured"]["aligned"], true,
        "{:#}",
        results[2]
    );
    assert_eq!(results[3]["is_error"], true, "{:#}", results[3]);
    assert!(
        results[3]["text"]
            .as_str()
            .unwrap()
            .contains("not in event"),
        "{:#}",
        results[3]
    );
    assert_eq!(memory_of(&repo, &note)["success"], 1);
}
