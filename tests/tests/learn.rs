//! Memory that learns (issue 16, docs/DESIGN.md §12): the Stop hook asks
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
fn hook(repo: &TestRepo, event: &str, session: &str, payload: Value) -> String {
    repo.hook(event, session, payload)
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

    // a long answer is not asked for again word for word (found by a
    // field test: 16 KB to repeat); a later, shorter turn asks
    session(&repo, "report", 5, 6);
    let report = "The audit, section by section. ".repeat(100);
    assert_eq!(stop(&repo, "report", false, &report), "");
    assert!(stop(&repo, "report", false, "Anything else?").contains("word for word"));

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
    // no background index: its embedder would race this `memlog index`
    repo.memlog(&["import", "jsonl", "--no-index", demo.to_str().unwrap()])
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

/// Records `text` as an answer in `session` and a fact quoting it; returns
/// (answer id, fact id).
fn fact(repo: &TestRepo, session: &str, text: &str, fact: &str, quote: &str) -> (String, String) {
    let answer = repo.record(session, "agent_response", text);
    let out = repo
        .memlog_stdin(
            &["extract", "--facts", "-", "--json"],
            &json!([{"text": fact, "quote": quote, "event": answer}]).to_string(),
        )
        .ok()
        .json();
    let id = out["recorded"][0]["id"]
        .as_str()
        .expect("recorded")
        .to_string();
    (answer, id)
}

fn add_rule(repo: &TestRepo, args: &[&str]) -> String {
    let mut all = vec!["rules", "add"];
    all.extend_from_slice(args);
    all.push("--json");
    repo.memlog(&all).ok().json()["id"]
        .as_str()
        .unwrap()
        .to_string()
}

fn active_rules(repo: &TestRepo) -> Vec<String> {
    repo.memlog(&["rules", "--json"]).ok().json()["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_decision_repeated_in_three_sessions_is_a_candidate_and_a_promoted_rule_is_injected() {
    let repo = repo_with_history();
    let mut facts = Vec::new();
    for (i, s) in ["d1", "d2", "d3"].iter().enumerate() {
        let (_, f) = fact(
            &repo,
            s,
            &format!("Session {i}: we keep money as integer cents in the ledger, never floats."),
            "Money is kept as integer cents in the ledger",
            "we keep money as integer cents in the ledger",
        );
        facts.push(f);
    }
    // twice is not a pattern yet
    fact(
        &repo,
        "d4",
        "Tests run against a throwaway Postgres container.",
        "Tests run against a throwaway Postgres container",
        "Tests run against a throwaway Postgres container",
    );
    let out = repo.memlog(&["reflect", "--json"]).ok().json();
    let candidates = out["candidates"].as_array().unwrap();
    let decision = candidates
        .iter()
        .find(|c| c["rule_kind"] == "rule")
        .unwrap_or_else(|| panic!("{out:#}"));
    assert_eq!(decision["sessions"], 3);
    assert!(decision["text"].as_str().unwrap().contains("integer cents"));
    assert_eq!(
        candidates
            .iter()
            .filter(|c| c["rule_kind"] == "rule")
            .count(),
        1,
        "{out:#}"
    );
    assert!(
        out["instruction"]
            .as_str()
            .unwrap()
            .contains("memlog rules add --kind rule|solution|core_logic")
    );

    // no evidence, no rule
    let refused = repo.memlog(&["rules", "add", "Money is cents"]);
    assert_eq!(refused.code(), Some(2), "{}", refused.stderr());
    let rule = add_rule(
        &repo,
        &[
            "--kind",
            "rule",
            "Keep money as integer cents, never floats",
            "--evidence",
            &facts[0][..12],
            "--evidence",
            &facts[1][..12],
        ],
    );
    assert_eq!(active_rules(&repo), vec![rule.clone()]);
    // promoted: the pattern is no longer a candidate
    let again = repo.memlog(&["reflect", "--json"]).ok().json();
    assert!(
        !again["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["rule_kind"] == "rule"),
        "{again:#}"
    );

    // the next session starts with it, before recent sessions
    let out = hook(&repo, "SessionStart", "next", json!({"source": "startup"}));
    let briefing: Value = serde_json::from_str(&out).unwrap();
    let text = briefing["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    let at_rule = text.find(&rule[..12]).unwrap_or_else(|| panic!("{text}"));
    let at_sessions = text.find("recent sessions").unwrap();
    assert!(at_rule < at_sessions, "{text}");
    let shown = repo.memlog(&["rules", "--json"]).ok().json();
    assert_eq!(shown["rules"][0]["recalls"], 1, "{shown:#}");
}

#[test]
fn rules_retire_after_two_contradictions_or_six_months_unused() {
    let repo = TestRepo::new();
    let (_, evidence) = fact(
        &repo,
        "r1",
        "Deploys happen on Fridays after the review.",
        "Deploys happen on Fridays",
        "Deploys happen on Fridays",
    );
    let fridays = add_rule(&repo, &["Deploy on Fridays", "--evidence", &evidence]);
    let (_, one) = fact(
        &repo,
        "r2",
        "The Friday deploy broke checkout; no more Friday deploys.",
        "A Friday deploy broke checkout",
        "The Friday deploy broke checkout",
    );
    add_rule(
        &repo,
        &[
            "Never deploy on Fridays",
            "--evidence",
            &one,
            "--contradicts",
            &fridays,
        ],
    );
    let out = repo.memlog(&["reflect", "--json"]).ok().json();
    assert_eq!(
        out["retired"].as_array().unwrap().len(),
        0,
        "one contradiction is not enough"
    );
    let (_, two) = fact(
        &repo,
        "r3",
        "Friday deploys failed again, on-call was unhappy.",
        "Friday deploys failed again",
        "Friday deploys failed again",
    );
    let out = repo
        .memlog_stdin(
            &["extract", "--facts", "-", "--json"],
            &json!([{"text": "Friday deploys are risky", "quote": "Friday deploys failed again",
                     "event": repo.cat().iter().find(|e| e["id"] == two.as_str()).unwrap()["body"]["event"],
                     "contradicts": fridays}])
            .to_string(),
        )
        .ok()
        .json();
    assert_eq!(out["recorded"].as_array().unwrap().len(), 1, "{out:#}");
    let out = repo.memlog(&["reflect", "--json"]).ok().json();
    let retired = out["retired"].as_array().unwrap();
    assert_eq!(retired.len(), 1, "{out:#}");
    assert_eq!(retired[0]["rule"], fridays.as_str());
    assert_eq!(retired[0]["reason"], "contradicted");
    assert!(!active_rules(&repo).contains(&fridays));
    let all = repo.memlog(&["rules", "--all", "--json"]).ok().json();
    assert!(
        all["rules"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["id"] == fridays.as_str() && r["status"] == "retired")
    );
    // reversible: forgetting the retirement restores the rule
    let retirement = retired[0]["id"].as_str().unwrap();
    repo.memlog(&["forget", retirement, "--reason", "still valid"])
        .ok();
    assert!(active_rules(&repo).contains(&fridays));

    // six months without use (the clock is injected)
    let now = memlog_format::time::parse(&memlog_format::time::now()).unwrap();
    let in_days = |d: u64| {
        now.checked_add(std::time::Duration::from_secs(d * 86_400))
            .unwrap()
            .to_string()
    };
    let never = add_rule(&repo, &["Keep the changelog", "--evidence", &evidence]);
    let out = repo
        .memlog(&["reflect", "--json", "--now", &in_days(100)])
        .ok()
        .json();
    assert!(
        !out["retired"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["rule"] == never.as_str()),
        "{out:#}"
    );
    repo.memlog(&["reinforce", &never, "--success"]).ok();
    let out = repo
        .memlog(&["reflect", "--json", "--now", &in_days(200)])
        .ok()
        .json();
    let unused: Vec<&str> = out["retired"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["reason"] == "unused")
        .map(|r| r["rule"].as_str().unwrap())
        .collect();
    assert!(unused.contains(&never.as_str()), "{out:#}");
}

#[test]
fn a_superseded_fact_ranks_below_its_successor_and_is_marked() {
    let repo = repo_with_history();
    let (_, old) = fact(
        &repo,
        "v1",
        "The session timeout is 30 minutes for the checkout page.",
        "The checkout session timeout is 30 minutes",
        "The session timeout is 30 minutes",
    );
    let src = repo.record(
        "v2",
        "agent_response",
        "We raised it: the session timeout is now 2 hours.",
    );
    let out = repo
        .memlog_stdin(
            &["extract", "--facts", "-", "--json"],
            &json!([{"text": "The checkout session timeout is 2 hours", "quote": "the session timeout is now 2 hours",
                     "event": src, "supersedes": old}])
            .to_string(),
        )
        .ok()
        .json();
    let new = out["recorded"][0]["id"].as_str().unwrap().to_string();
    let hits = repo
        .memlog(&[
            "search",
            "checkout session timeout",
            "--mode",
            "fts",
            "--json",
        ])
        .ok()
        .json();
    let ids: Vec<&str> = hits["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap())
        .collect();
    let (at_new, at_old) = (
        ids.iter().position(|i| *i == new).unwrap(),
        ids.iter().position(|i| *i == old).unwrap(),
    );
    assert!(at_new < at_old, "{hits:#}");
    assert_eq!(hits["hits"][at_old]["superseded_by"], new.as_str());

    // memlog finds the same subject with another value by itself
    let (_, newest) = fact(
        &repo,
        "v4",
        "Ops raised it once more: the session timeout is now 3 hours.",
        "The checkout session timeout is 3 hours",
        "the session timeout is now 3 hours",
    );
    let stored = repo
        .cat()
        .into_iter()
        .find(|e| e["id"] == newest.as_str())
        .unwrap();
    assert_eq!(stored["body"]["supersedes"], json!([new]), "{stored:#}");
    assert_eq!(stored["body"]["supersedes_detected"], true);
    // a hook never indexes in the foreground
    repo.memlog(&["index"]).ok();
    let out = hook(
        &repo,
        "UserPromptSubmit",
        "v3",
        json!({"prompt": "what is the checkout session timeout?"}),
    );
    let context: Value = serde_json::from_str(&out).unwrap();
    let text = context["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        text.contains(&format!("(superseded by [{}])", &new[..12]))
            || text.contains(&format!("(superseded by [{}])", &newest[..12])),
        "{text}"
    );

    // and so does a fact an agent remembers over MCP: one verification
    let mut server = memlog_e2e::McpProcess::start(repo.path());
    let remembered = server.tool(
        "memory_remember",
        json!({"kind": "fact", "text": "The checkout session timeout is 4 hours"}),
    );
    server.close();
    let stored = repo
        .cat()
        .into_iter()
        .find(|e| e["id"] == remembered["id"])
        .unwrap();
    let superseded = stored["body"]["supersedes"].as_array().unwrap();
    assert!(superseded.contains(&json!(newest)), "{stored:#}");
    assert_eq!(stored["body"]["supersedes_detected"], true);
}

#[test]
fn concepts_group_sessions_and_filter_search() {
    let repo = TestRepo::new();
    let (_, cents) = fact(
        &repo,
        "pay-1",
        "The ledger rounds refunds to whole cents.",
        "Refunds are rounded to whole cents",
        "rounds refunds to whole cents",
    );
    repo.record("pay-2", "user_prompt", "Why are refunds off by a cent?");
    repo.record("ui-1", "user_prompt", "Why are refund buttons grey?");
    let filed = repo
        .memlog(&[
            "concepts",
            "add",
            "Refund rounding",
            "--topic",
            "refund cent rounding bugs",
            "--session",
            "pay-1",
            "--fact",
            &cents[..12],
            "--json",
        ])
        .ok()
        .json();
    assert_eq!(filed["created"], true);
    // joining it by another spelling of its name
    let joined = repo
        .memlog(&[
            "concepts",
            "add",
            "refund  ROUNDING",
            "--topic",
            "refunds off by a cent",
            "--session",
            "pay-2",
            "--json",
        ])
        .ok()
        .json();
    assert_eq!(joined["created"], false);
    assert_eq!(joined["name"], "Refund rounding");
    let unknown = repo.memlog(&["concepts", "add", "X", "--session", "nosuch"]);
    assert_eq!(unknown.code(), Some(1));
    assert!(unknown.stderr().contains("no session is named \"nosuch\""));

    let list = repo.memlog(&["concepts", "--json"]).ok().json();
    let c = &list["concepts"][0];
    assert_eq!(c["sessions"], json!(["pay-1", "pay-2"]));
    assert_eq!(c["facts"], json!([cents]));
    assert_eq!(c["topics"].as_array().unwrap().len(), 2);

    let hits = repo
        .memlog(&[
            "search",
            "refund refunds",
            "--mode",
            "fts",
            "--concept",
            "refund rounding",
            "--json",
        ])
        .ok()
        .json();
    let sessions: Vec<&str> = hits["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["session"].as_str().unwrap())
        .collect();
    assert!(sessions.contains(&"pay-2"), "{hits:#}");
    assert!(!sessions.contains(&"ui-1"), "{hits:#}");
    let bad = repo.memlog(&["search", "refund", "--concept", "billing"]);
    assert_eq!(bad.code(), Some(1));
    assert!(
        bad.stderr().contains("concepts: Refund rounding"),
        "{}",
        bad.stderr()
    );

    // the viewer's Learned page reads them
    let server = memlog_e2e::ServeProcess::start(repo.path(), &[]);
    let learned = server.get("/api/learned").json();
    assert_eq!(
        learned["concepts"][0]["name"], "Refund rounding",
        "{learned:#}"
    );
    assert!(server.get("/app.js").text().contains("learnedPage"));
    drop(server);

    // the extraction instruction offers the existing concepts
    let prompt = repo.memlog(&["extract", "--prompt", "ui-1"]).ok().stdout();
    assert!(
        prompt.contains("- Refund rounding: refund cent rounding bugs"),
        "{prompt}"
    );
}
