//! Memory that learns, through a real Claude Code session (issue 16,
//! docs/DESIGN.md §12): once the session has enough events, memlog's Stop
//! hook blocks with the ProMem instruction; the (scripted) model obeys it
//! through its Bash tool with `memlog extract --facts -`; the supported fact
//! is recorded aligned to its quote and the unsupported one rejected, and
//! the model is told so. A rule promoted from that evidence then reaches the
//! next session's briefing. The CLI runs offline against a scripted API on
//! 127.0.0.1; skipped (with a message) when `scripts/install-assets` has not
//! installed Claude Code.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use memlog_e2e::{AgentCli, AgentRun, ClaudeCli, TestRepo};
use serde_json::{Value, json};

const PROMPT: &str = "Note for later: the tank sensor readings go to src/telemetry.rs, \
                      one line per reading, because the dashboard tails that file.";
const SUPPORTED: &str = "Tank sensor readings are appended to src/telemetry.rs, one line each.";
const SUPPORTED_QUOTE: &str = "the tank sensor readings go to src/telemetry.rs";
const UNSUPPORTED: &str = "The tank pump runs on twelve volts.";
const UNSUPPORTED_QUOTE: &str = "the pump runs on twelve volts";
const RULE: &str = "Append tank sensor readings to src/telemetry.rs, one line per reading: \
                    the dashboard tails it.";

/// The Bash command the scripted model runs to obey the instruction. A
/// scripted model cannot know the event ids before the session exists, so
/// it looks up its prompt's id the way the instruction allows (`memlog`
/// itself), then hands both facts back in one call.
fn extract_command() -> String {
    let facts = [
        (SUPPORTED, SUPPORTED_QUOTE),
        (UNSUPPORTED, UNSUPPORTED_QUOTE),
    ]
    .iter()
    .map(|(text, quote)| {
        // `$ID` is left for the shell to expand in the unquoted here-document
        format!(r#"{{"text": "{text}", "quote": "{quote}", "event": "$ID"}}"#)
    })
    .collect::<Vec<_>>()
    .join("\n");
    format!(
        "ID=$(memlog cat --kind user_prompt | python3 -c \
         'import json, sys; print(json.loads(sys.stdin.readline())[\"id\"])')\n\
         memlog extract --facts - <<EOF\n{facts}\nEOF"
    )
}

/// The text of every tool result in `requests`' message histories.
fn tool_results(requests: &[Value]) -> String {
    let mut out = String::new();
    for r in requests {
        for message in r["body"]["messages"].as_array().into_iter().flatten() {
            for block in message["content"].as_array().into_iter().flatten() {
                if block["type"] == "tool_result" {
                    out.push_str(&block["content"].to_string());
                    out.push('\n');
                }
            }
        }
    }
    out
}

/// A repository with `src/telemetry.rs` that asks for facts after 3 events
/// (prompt, Read, answer), and Claude Code installed in it; `None` when it
/// is not installed. Generous budgets: the machine running the tests may be
/// loaded.
fn telemetry_repo() -> Option<(TestRepo, ClaudeCli)> {
    let repo = TestRepo::new();
    repo.with_telemetry_code(
        "hooks:\n  inject_budget_ms: 20000\n  record_budget_ms: 20000\n\
         learn:\n  extract_after_events: 3\n",
    );
    let claude = ClaudeCli::find(&repo)?;
    Some((repo, claude))
}

/// A session on [`PROMPT`] in [`telemetry_repo`] where the scripted model
/// reads the file and answers `answer`; asked for facts, it answers with
/// the `asked` turns. Every scripted turn answers, in order, and no request
/// is left for a turn the script does not have (a loop would be).
fn scripted_session(answer: &str, asked: Vec<Value>) -> Option<(TestRepo, ClaudeCli, AgentRun)> {
    let (repo, claude) = telemetry_repo()?;
    let file = repo.path().join("src/telemetry.rs");
    let mut turns = vec![
        json!({"text": "Let me look.",
               "tool_use": {"name": "Read", "input": {"file_path": file.display().to_string()}}}),
        json!({"text": answer}),
    ];
    let expected: Vec<Value> = (0..turns.len() + asked.len()).map(|i| json!(i)).collect();
    turns.extend(asked);
    let script = json!({"turns": turns, "side_text": "Telemetry"});
    let run = claude.run(PROMPT, &script);
    let answered: Vec<&Value> = run
        .requests
        .iter()
        .map(|r| &r["answered_by"])
        .filter(|a| !a.is_null())
        .collect();
    assert_eq!(
        answered,
        expected.iter().collect::<Vec<_>>(),
        "every scripted turn answered, in order"
    );
    // the main loop's requests carry tools; each was answered by a turn
    let unanswered = run
        .requests
        .iter()
        .filter(|r| r["answered_by"].is_null() && r["body"]["tools"].is_array())
        .count();
    assert_eq!(
        unanswered, 0,
        "the agent asked for more turns than scripted"
    );
    Some((repo, claude, run))
}

/// [`scripted_session`] where, asked for facts, the model hands them to
/// memlog through Bash (no words for the user), then ends with `last`.
fn saving_session(answer: &str, last: &str) -> Option<(TestRepo, ClaudeCli, AgentRun)> {
    scripted_session(
        answer,
        vec![
            json!({"when_contains": "Self-question",
                   "tool_use": {"name": "Bash", "input": {
                       "command": extract_command(),
                       "description": "Hand the session's facts to memlog"}}}),
            json!({"when_contains": "recorded", "text": last}),
        ],
    )
}

#[test]
fn the_model_obeys_the_stop_hook_and_the_promoted_rule_briefs_the_next_session() {
    let Some((repo, claude, first)) = saving_session(
        "Noted: readings are appended to src/telemetry.rs.",
        "Facts recorded.",
    ) else {
        return;
    };
    assert!(
        first.requests_contain("Stop hook feedback"),
        "the Stop hook did not block: {:?}",
        first.requests
    );
    assert!(first.requests_contain("memlog extract --facts -"));
    assert_eq!(first.result["result"], "Facts recorded.");

    // What the model got back from its Bash call: one recorded, one rejected.
    let results = tool_results(&first.requests);
    assert!(
        results.contains("1 recorded, 1 rejected"),
        "extract's summary missing from the tool results:\n{results}"
    );
    assert!(
        results.contains(&format!("rejected #1: {UNSUPPORTED}")),
        "the rejected fact is not listed:\n{results}"
    );

    // The supported fact is recorded with its quote, aligned in the prompt;
    // the unsupported one is not.
    let events = repo.memlog(&["cat"]).ok().json_lines();
    let prompt = events
        .iter()
        .find(|e| e["kind"] == "user_prompt")
        .expect("the prompt is recorded");
    let facts: Vec<&Value> = events.iter().filter(|e| e["kind"] == "fact").collect();
    assert_eq!(facts.len(), 1, "one fact recorded: {facts:?}");
    let fact = facts[0];
    assert_eq!(fact["body"]["text"], SUPPORTED);
    let body = fact["body"].to_string();
    assert!(body.contains(SUPPORTED_QUOTE), "no quote in {body}");
    assert!(
        body.contains(prompt["id"].as_str().unwrap()),
        "the fact does not cite its prompt: {body}"
    );
    // (the Bash call itself is recorded as a tool observation, so the text
    // is in the log; what matters is that no fact states it)
    let facts_out = repo.memlog(&["cat", "--kind", "fact"]).ok().stdout();
    assert!(
        !facts_out.contains(UNSUPPORTED),
        "the unsupported fact landed: {facts_out}"
    );
    assert_eq!(
        events
            .iter()
            .filter(|e| e["kind"] == "extraction_request")
            .count(),
        1,
        "asked once only"
    );

    // Reflection promotes a rule on that evidence; the next session's
    // SessionStart briefing carries it to the model. No `memlog index`
    // between: a user runs none, and the hooks' background index may
    // still be running.
    let fact_id = fact["id"].as_str().unwrap();
    repo.memlog(&[
        "rules",
        "add",
        "--kind",
        "rule",
        RULE,
        "--evidence",
        fact_id,
    ])
    .ok();
    // the next session at once: its hooks read what the index lacks
    let second = claude.run(
        "What should I check before changing the dashboard?",
        &json!({"turns": [{"text": "The telemetry file format."}], "side_text": "Dashboard"}),
    );
    assert!(second.requests_contain("rules learned in this project"));
    assert!(
        second.requests_contain(RULE),
        "the promoted rule did not reach the next session: {:?}",
        second.requests
    );
}

/// The answer the user asked for, which the fact-saving turn must not
/// displace.
const ANSWER: &str = "Readings go to src/telemetry.rs, one line each: the dashboard tails it.";

/// Issue 31: the Stop hook asks for facts, the (scripted) model saves them
/// the way the instruction says (Bash, `memlog extract --facts -`), the
/// fact is found by `memlog search`, and what `claude -p` prints as the
/// result is still the answer to the user, not the bookkeeping turn.
#[test]
fn the_stop_hook_loop_saves_facts_and_leaves_the_reply_intact() {
    // the last turn as the instruction's last words ask
    let Some((repo, _claude, run)) = saving_session(ANSWER, ANSWER) else {
        return;
    };
    // what reached the model, for the record
    for (i, r) in run.requests.iter().enumerate() {
        let last = r["body"]["messages"]
            .as_array()
            .and_then(|m| m.last())
            .map(|m| m["content"].to_string())
            .unwrap_or_default();
        eprintln!(
            "request {i} (turn {}): last message {}",
            r["answered_by"],
            &last[..last.len().min(300)]
        );
    }
    let feedback = run
        .requests
        .iter()
        .find(|r| r["body"].to_string().contains("Stop hook feedback"))
        .expect("the Stop hook blocked")["body"]
        .to_string();
    assert!(feedback.contains("memlog extract --facts -"), "{feedback}");
    assert!(feedback.contains("word for word"), "{feedback}");
    assert!(tool_results(&run.requests).contains("1 recorded, 1 rejected"));

    // the saved fact is in the log and found
    let facts = repo.memlog(&["cat", "--kind", "fact"]).ok().json_lines();
    assert_eq!(facts.len(), 1, "{facts:?}");
    assert_eq!(facts[0]["body"]["text"], SUPPORTED);
    let found = repo
        .memlog(&["search", "appended to telemetry", "--json"])
        .ok()
        .stdout();
    assert!(
        found.contains(facts[0]["id"].as_str().unwrap()),
        "search does not find the fact: {found}"
    );

    // the user-facing reply is the answer, intact
    assert_eq!(run.result["result"], ANSWER, "{}", run.result);
    assert!(!run.result["result"].to_string().contains("memlog"));
    // asked once, one fact saved, and SessionEnd sealed the session
    assert_eq!(asked_saved_sealed(&repo), (1, 1, true));
    eprintln!("saved: asked 1, saved 1, reply intact");
}

/// What a session that was asked for facts left behind: how many times it
/// was asked, how many facts it saved, and whether it was sealed.
fn asked_saved_sealed(repo: &TestRepo) -> (usize, usize, bool) {
    let events = repo.memlog(&["cat"]).ok().json_lines();
    let count = |kind: &str| events.iter().filter(|e| e["kind"] == kind).count();
    let sealed = repo.memlog(&["stats", "--json"]).ok().json()["journals"] == 0
        && !repo.memlog_commits().is_empty();
    (count("extraction_request"), count("fact"), sealed)
}

/// Issue 31, the Stop-hook loop when the agent skips the save: asked for
/// facts, the (scripted) model calls no tool and gives the user its answer
/// again, as the instruction's last words ask when nothing is worth
/// keeping. `claude -p` prints the answer, the hook does not ask again
/// (no loop: the model is not called once more), and SessionEnd seals the
/// session.
#[test]
fn a_model_that_skips_the_save_keeps_the_reply_and_is_not_asked_again() {
    let Some((repo, _claude, run)) = scripted_session(
        ANSWER,
        vec![json!({"when_contains": "Self-question", "text": ANSWER})],
    ) else {
        return;
    };
    assert!(run.requests_contain("Stop hook feedback"), "never asked");
    assert_eq!(run.result["result"], ANSWER, "{}", run.result);
    assert_eq!(asked_saved_sealed(&repo), (1, 0, true));
    eprintln!("skipped save: asked 1, saved 0, reply intact");
}

/// The same when the model only says it has nothing to save: no loop, the
/// session seals, and what `claude -p` prints is what the model said last
/// — Claude Code shows the final message, and a Stop hook cannot rewrite
/// it. memlog's instruction asks for the answer again for this reason; a
/// model that ignores it displaces the reply (measured here, not hidden).
/// The answer itself stays in memory as the session's `agent_response`.
#[test]
fn a_model_that_says_it_has_nothing_to_save_is_not_asked_again() {
    let nothing = "Nothing from this session is worth keeping.";
    let Some((repo, _claude, run)) = scripted_session(
        ANSWER,
        vec![json!({"when_contains": "Self-question", "text": nothing})],
    ) else {
        return;
    };
    assert!(run.requests_contain("Stop hook feedback"), "never asked");
    assert_eq!(asked_saved_sealed(&repo), (1, 0, true));
    let answers: Vec<String> = repo
        .memlog(&["cat", "--kind", "agent_response"])
        .ok()
        .json_lines()
        .iter()
        .map(|e| e["body"]["text"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(answers.iter().any(|a| a == ANSWER), "{answers:?}");
    // the reply is the answer or the model's own last words, never memlog's
    let displaced = run.result["result"] != ANSWER;
    assert!(
        !displaced || run.result["result"] == nothing,
        "{}",
        run.result
    );
    eprintln!("said nothing to save: asked 1, saved 0, reply displaced: {displaced}");
}
