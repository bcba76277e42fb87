//! Every read reflects every acknowledged write (issue 29): a forget holds
//! in the very next read — the prompt hook, `search`, `context`, `show`,
//! `rules`, MCP and the viewer — and a note, record, seal or reinforce is
//! found by it, in any process, even while another process holds the
//! index's writer lock or `memlog watch` has not caught up yet.
//!
//! The 1,000-pair runs under a running watcher are the ignored test
//! at the end (`cargo test -p memlog-e2e --test read_your_writes --
//! --ignored`); the suite runs the same loops with fewer pairs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use memlog_e2e::{McpProcess, ServeProcess, TestRepo, all_objects, holds, start_watch};
use serde_json::{Value, json};

/// A word nobody else wrote, from `i`: eight letters (the code tokenizer
/// splits digits from letters), scattered so that no two are one edit
/// apart (search corrects a word nobody wrote to such a neighbour).
fn word(i: usize) -> String {
    let mut x = (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (0..8)
        .map(|_| {
            x ^= x >> 29;
            x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
            char::from(b'a' + (x >> 59) as u8 % 26)
        })
        .collect()
}

fn note_text(w: &str) -> String {
    format!("The {w} cache is flushed every night by the janitor job")
}

fn prompt_for(w: &str) -> String {
    format!("When is the {w} cache flushed?")
}

/// A repository without the embedding model (full text ranks, as in a
/// fresh install), with generous hook budgets (the suite loads the
/// machine), holding `n` notes in sessions of their own, indexed. Returns
/// the notes' ids.
fn indexed_notes(n: usize) -> (TestRepo, Vec<String>) {
    let repo = TestRepo::new();
    std::fs::write(
        repo.path().join(".memlog.yaml"),
        "embedding:\n  model_dir: /nonexistent\nhooks:\n  inject_budget_ms: 20000\n  record_budget_ms: 20000\n  warm_watcher_idle_minutes: 0\n",
    )
    .unwrap();
    let mut lines = String::new();
    for i in 0..n {
        lines.push_str(
            &json!({"session": format!("n{i}"), "ts": "2026-01-05T10:00:00Z", "kind": "note",
                    "text": note_text(&word(i))})
            .to_string(),
        );
        lines.push('\n');
    }
    std::fs::write(repo.path().join("notes.jsonl"), lines).unwrap();
    // no background index: its embedder would race this `memlog index`
    repo.memlog(&["import", "jsonl", "--no-index", "notes.jsonl"])
        .ok();
    repo.memlog(&["index"]).ok();
    let ids = (0..n)
        .map(|i| {
            let hits = search_ids(&repo, &word(i));
            assert_eq!(hits.len(), 1, "note {i} is found once: {hits:?}");
            hits[0].clone()
        })
        .collect();
    (repo, ids)
}

/// What the prompt hook injects for a prompt about `w`.
fn injected(repo: &TestRepo, w: &str) -> String {
    repo.hook(
        "UserPromptSubmit",
        "asker",
        json!({"transcript_path": "/nonexistent.jsonl", "prompt": prompt_for(w)}),
    )
}

fn ids_of(hits: &Value) -> Vec<String> {
    hits.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|h| h["id"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn search_ids(repo: &TestRepo, query: &str) -> Vec<String> {
    ids_of(&repo.memlog(&["search", query, "--json"]).ok().json()["hits"])
}

#[test]
fn a_forget_holds_in_every_read_while_the_index_cannot_catch_up() {
    let (repo, ids) = indexed_notes(4);
    let mut mcp = McpProcess::start(repo.path());
    let serve = ServeProcess::start(repo.path(), &[]);
    // The servers have their index open before the forgets.
    let w = word(0);
    assert!(
        injected(&repo, &w).contains(&w),
        "the hook injects the note"
    );
    assert!(ids_of(&mcp.tool("memory_search", json!({"query": w}))["hits"]).contains(&ids[0]));
    assert!(
        serve
            .get(&format!("/api/search?q={w}"))
            .text()
            .contains(&ids[0])
    );
    // From here on no process can bring the index up to date.
    let _lock = repo.hold_index_lock();
    for (i, id) in ids.iter().enumerate() {
        let w = word(i);
        // hiding the forgotten ones hides nothing else
        assert!(search_ids(&repo, &w).contains(id), "note {i} before");
        repo.memlog(&["forget", id]).ok();
        assert!(!injected(&repo, &w).contains(&w), "note {i} injected");
        assert!(!search_ids(&repo, &w).contains(id), "note {i} searched");
        let context = repo
            .memlog(&["context", &prompt_for(&w), "--exclude-session", "asker"])
            .ok()
            .stdout();
        assert!(!context.contains(&w), "note {i} in context: {context}");
        assert_eq!(repo.memlog(&["show", id]).code(), Some(1));
        let hits = mcp.tool("memory_search", json!({"query": w}));
        assert!(!ids_of(&hits["hits"]).contains(id), "note {i} via MCP");
        let got = mcp.tool("memory_timeline", json!({"session": format!("n{i}")}));
        assert!(!got.to_string().contains(&w), "note {i} in MCP's timeline");
        let page = serve.get(&format!("/api/search?q={w}")).text();
        assert!(
            !page.contains(id.as_str()),
            "note {i} in the viewer: {page}"
        );
        let page = serve.get(&format!("/api/sessions/n{i}"));
        assert_eq!(page.status, 404, "note {i}'s session page");
    }
    drop(mcp);
}

#[test]
fn writes_are_read_at_once_while_the_index_cannot_catch_up() {
    let (repo, _) = indexed_notes(2);
    let serve = ServeProcess::start(repo.path(), &[]);
    let _lock = repo.hold_index_lock();
    // a note, sealed into a commit of its own
    let w = word(10);
    let note = repo.memlog(&["note", &note_text(&w), "--json"]).ok().json()["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(search_ids(&repo, &w), vec![note.clone()]);
    assert!(
        injected(&repo, &w).contains(&w),
        "the hook injects the note"
    );
    assert!(
        serve
            .get(&format!("/api/search?q={w}"))
            .text()
            .contains(&note)
    );
    let shown = repo.memlog(&["show", &note[..12], "--json"]).ok().json();
    assert_eq!(shown["event"]["id"], note.as_str(), "{shown}");
    // an event recorded into a live session's journal, then sealed
    let w = word(11);
    let recorded = repo.record("live", "note", &note_text(&w));
    assert_eq!(search_ids(&repo, &w), vec![recorded.clone()]);
    let session = serve.get("/api/sessions/live").text();
    assert!(session.contains(&recorded), "{session}");
    repo.memlog(&["seal", "--session", "live"]).ok();
    assert_eq!(search_ids(&repo, &w), vec![recorded.clone()]);
    // a reinforcement
    let reinforced = repo
        .memlog(&["reinforce", &recorded, "--success", "--json"])
        .ok()
        .json();
    let rid = reinforced["id"].as_str().unwrap();
    let shown = repo.memlog(&["show", rid, "--json"]).ok().json();
    assert_eq!(shown["event"]["kind"], "reinforce", "{shown}");
    // and a forget of what the index has never seen, named by a prefix
    repo.memlog(&["forget", &recorded[..12]]).ok();
    assert!(search_ids(&repo, &w).is_empty());
    assert!(!serve.get("/api/sessions/live").text().contains(&recorded));
}

/// What the index derives from a write (a memory's successes, a fact
/// replacing another) is read at once too, not only the write itself.
#[test]
fn derived_state_is_read_at_once_while_the_index_cannot_catch_up() {
    let (repo, _) = indexed_notes(1);
    let _lock = repo.hold_index_lock();
    let w = word(20);
    let old = repo.record(
        "s",
        "agent_response",
        &format!("The {w} export batch size is 500 rows per request."),
    );
    let new = repo.record(
        "s",
        "agent_response",
        &format!("The {w} export batch size is now 1000 rows per request."),
    );
    let facts = |facts: Value| {
        repo.memlog_stdin(&["extract", "--facts", "-", "--json"], &facts.to_string())
            .ok()
            .json()["recorded"][0]["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let old_fact = facts(
        json!([{"text": format!("The {w} export batch size is 500 rows"),
        "quote": "export batch size is 500 rows", "event": old}]),
    );
    let new_fact = facts(
        json!([{"text": format!("The {w} export batch size is 1000 rows"),
        "quote": "export batch size is now 1000 rows", "event": new, "supersedes": old_fact}]),
    );
    let hits = repo.memlog(&["search", &w, "--json"]).ok().json()["hits"].clone();
    let hit = |id: &str| {
        hits.as_array()
            .unwrap()
            .iter()
            .find(|h| h["id"] == id)
            .unwrap_or_else(|| panic!("{id} not among {hits:#}"))
            .clone()
    };
    assert_eq!(
        hit(&old_fact)["superseded_by"],
        new_fact.as_str(),
        "{hits:#}"
    );
    assert!(
        hit(&old_fact)["score"].as_f64() < hit(&new_fact)["score"].as_f64(),
        "{hits:#}"
    );
    // a reinforcement moves the memory's importance in the next search (a
    // failure: a fact starts at full importance)
    let importance = |hits: &Value| {
        hits.as_array()
            .unwrap()
            .iter()
            .find(|h| h["id"] == new_fact.as_str())
            .unwrap()["parts"]["importance"]
            .as_f64()
            .unwrap()
    };
    let before = importance(&hits);
    repo.memlog(&["reinforce", &new_fact, "--failure"]).ok();
    let after = importance(&repo.memlog(&["search", &w, "--json"]).ok().json()["hits"]);
    assert!(after < before, "importance {before} -> {after}");
}

#[test]
fn a_forget_reaches_rules_their_retirements_and_rules_left_without_evidence() {
    let (repo, ids) = indexed_notes(3);
    let rule = |text: &str, evidence: &[&String]| -> String {
        let mut args = vec!["rules", "add", text, "--json"];
        for e in evidence {
            args.extend(["--evidence", e.as_str()]);
        }
        repo.memlog(&args).ok().json()["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let early = rule("Flush caches early in the week", &[&ids[0], &ids[1]]);
    let quiet = rule("Janitor jobs run at night", &[&ids[2]]);
    // a year on, both are retired as unused; the retirements repeat the text
    let later = "2099-01-01T00:00:00Z";
    let out = repo
        .memlog(&["reflect", "--json", "--now", later])
        .ok()
        .json();
    assert_eq!(out["retired"].as_array().unwrap().len(), 2, "{out}");
    let listed = |all: bool| -> String {
        let args: &[&str] = if all {
            &["rules", "--all", "--json"]
        } else {
            &["rules", "--json"]
        };
        repo.memlog(args).ok().stdout()
    };
    // the retirements forgotten, the rules are active again
    for r in out["retired"].as_array().unwrap() {
        repo.memlog(&["forget", r["id"].as_str().unwrap()]).ok();
    }
    repo.memlog(&["index"]).ok();
    assert!(listed(false).contains(&early) && listed(false).contains(&quiet));
    let briefing = || {
        repo.hook(
            "SessionStart",
            "asker",
            json!({"transcript_path": "/nonexistent.jsonl", "source": "startup"}),
        )
    };
    assert!(briefing().contains("Flush caches early"));
    let _lock = repo.hold_index_lock();
    // one of two pieces of evidence forgotten: the rule still stands
    repo.memlog(&["forget", &ids[0]]).ok();
    assert!(listed(false).contains(&early));
    // both: it stands on nothing, at once, in the briefing too
    repo.memlog(&["forget", &ids[1]]).ok();
    assert!(!listed(true).contains(&early), "{}", listed(true));
    assert!(!briefing().contains("Flush caches early"));
    // a forgotten rule takes its retirement with it
    let retire = repo
        .memlog(&["reflect", "--json", "--now", later])
        .ok()
        .json();
    assert_eq!(retire["retired"][0]["rule"], quiet.as_str(), "{retire}");
    repo.memlog(&["forget", &quiet]).ok();
    assert!(!listed(true).contains(&quiet));
    let cat = repo.memlog(&["cat"]).ok().stdout();
    assert!(!cat.contains("Janitor jobs run at night"), "{cat}");
    // and purge erases every copy of both rules' words
    drop(_lock);
    repo.memlog(&["purge"]).ok();
    let objects = all_objects(repo.path());
    assert!(!holds(&objects, "Janitor jobs run at night"));
    assert!(!holds(&objects, "Flush caches early in the week"));
}

/// `pairs` times: a note forgotten, then at once a prompt about it (which
/// a warm `memlog watch` answers). Returns how many injected it.
fn forget_then_prompt(pairs: usize) -> usize {
    let (repo, ids) = indexed_notes(pairs);
    let _watch = start_watch(repo.path());
    assert!(injected(&repo, &word(0)).contains(&word(0)), "control");
    let mut injections = 0;
    for (i, id) in ids.iter().enumerate() {
        repo.memlog(&["forget", id]).ok();
        if injected(&repo, &word(i)).contains(&word(i)) {
            injections += 1;
        }
    }
    injections
}

/// `pairs` times: a note, then at once a search for it, under a running
/// `memlog watch`. Returns how many searches missed it.
fn note_then_search(pairs: usize) -> usize {
    let (repo, _) = indexed_notes(1);
    let _watch = start_watch(repo.path());
    let mut misses = 0;
    for i in 0..pairs {
        let w = word(100_000 + i);
        let out = repo.memlog(&["note", &note_text(&w), "--json"]).ok().json();
        let id = out["id"].as_str().unwrap().to_string();
        if !search_ids(&repo, &w).contains(&id) {
            misses += 1;
        }
    }
    misses
}

#[test]
fn under_a_running_watcher_forgets_and_notes_hold_at_once() {
    assert_eq!(forget_then_prompt(15), 0, "forgotten notes injected");
    assert_eq!(note_then_search(15), 0, "notes missed");
}

#[test]
#[ignore = "the issue's 1,000-pair runs: minutes"]
fn under_a_running_watcher_a_thousand_pairs_each() {
    let started = std::time::Instant::now();
    let injections = forget_then_prompt(1000);
    let forgets = started.elapsed();
    let started = std::time::Instant::now();
    let misses = note_then_search(1000);
    eprintln!(
        "1,000 forget -> prompt-hook pairs: {injections} injected ({:.0} s); \
         1,000 note -> search pairs: {misses} missed ({:.0} s)",
        forgets.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    assert_eq!((injections, misses), (0, 0));
}

/// `memlog stats` (and MCP's `memory_stats`, the viewer's page: one
/// function) counts what the index lacks too: a session sealed and one
/// still live while a background `memlog index` holds the writer lock.
#[test]
fn stats_count_what_the_index_cannot_catch_up_with() {
    let (repo, _) = indexed_notes(2);
    let before = repo.memlog(&["stats", "--json"]).ok().json();
    assert_eq!(before["events"], 2, "{before}");
    let _lock = repo.hold_index_lock();
    repo.record("sealed", "user_prompt", "how do we deploy");
    repo.record("sealed", "agent_response", "with the release script");
    repo.memlog(&["seal", "--session", "sealed"]).ok();
    repo.record("live", "note", &note_text(&word(30)));
    let stats = repo.memlog(&["stats", "--json"]).ok().json();
    assert_eq!(stats["events"], 5, "{stats}");
    assert_eq!(stats["journal_events"], 1, "{stats}");
    assert_eq!(stats["sealed_events"], 4, "{stats}");
    assert_eq!(stats["sessions"], 4, "{stats}");
    assert_eq!(stats["events_by_kind"]["note"], 3, "{stats}");
    assert_eq!(stats["events_by_kind"]["user_prompt"], 1, "{stats}");
    assert_eq!(stats["events_by_kind"]["agent_response"], 1, "{stats}");
}

#[test]
fn stats_count_what_a_pending_forget_hides() {
    let (repo, ids) = indexed_notes(3);
    let lock = repo.hold_index_lock();
    repo.memlog(&["forget", &ids[0]]).ok();
    repo.memlog(&["forget", "--session", "n1"]).ok();
    let counts = |s: &Value| {
        [
            "events",
            "events_by_kind",
            "hidden_events",
            "sealed_events",
            "journal_events",
            "sessions",
            "memory_levels",
        ]
        .map(|k| s[k].clone())
    };
    let pending = repo.memlog(&["stats", "--json"]).ok().json();
    assert_eq!(pending["events_by_kind"]["note"], 1, "{pending}");
    assert_eq!(pending["hidden_events"], 2, "{pending}");
    // the same as once the index has applied both forgets
    drop(lock);
    repo.memlog(&["index"]).ok();
    let applied = repo.memlog(&["stats", "--json"]).ok().json();
    assert_eq!(counts(&pending), counts(&applied), "{pending}\n{applied}");
}

/// Tasks an agent wrote a moment ago are listed while another writer
/// holds the index (a session's end starts one in the background): `memlog
/// task list` right after a real session listed none of them.
#[test]
fn tasks_are_listed_before_the_index_takes_them_in() {
    let (repo, _) = indexed_notes(1);
    let _lock = repo.hold_index_lock();
    repo.hook(
        "PostToolUse",
        "planner",
        json!({"tool_name": "TodoWrite", "tool_use_id": "toolu_plan",
               "tool_input": {"todos": [
                   {"content": "Add the budget command", "status": "completed", "activeForm": "Adding"},
                   {"content": "Tag the release", "status": "pending", "activeForm": "Tagging"}]}}),
    );
    repo.memlog(&["seal", "--all"]).ok();
    let tasks = repo.memlog(&["task", "list", "--json"]).ok().json();
    let listed: Vec<(String, String)> = tasks
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["title"].as_str().unwrap_or_default().to_string(),
                t["status"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert!(
        listed.contains(&("Add the budget command".into(), "done".into()))
            && listed.contains(&("Tag the release".into(), "pending".into())),
        "{tasks:#}"
    );
}
