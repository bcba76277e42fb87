//! `memlog scan` finds secrets that a log written before its rules holds
//! (sealed and in journals), never printing them; `memlog forget --secrets`
//! hides exactly those events and `memlog purge` erases them from git.
#![allow(clippy::unwrap_used)] // a test fails loudly

use memlog_e2e::TestRepo;
use memlog_format::{Draft, Kind};

const SLACK: &str = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx";
const STRIPE: &str = "sk_live_4eC39HqLyjWDarjtT1zdp7dcXyZ";

/// Appends an event to a session's journal as an older memlog would have
/// written it: without today's filter.
fn write_unfiltered(repo: &TestRepo, session: &str, seq: u64, text: &str) {
    let event =
        Draft::text(session, "2025-01-02T03:04:05.000Z", Kind::Note, "p", text).into_event(seq);
    let dir = repo.path().join(".git/memlog/journal");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{session}.jsonl"));
    let mut lines = std::fs::read_to_string(&path).unwrap_or_default();
    lines.push_str(&event.canonical_line());
    lines.push('\n');
    std::fs::write(path, lines).unwrap();
}

#[test]
fn scan_then_forget_secrets_then_purge() {
    let repo = TestRepo::new();
    write_unfiltered(&repo, "old", 0, &format!("the bot token is {SLACK}"));
    write_unfiltered(&repo, "old", 1, "nothing to hide here");
    repo.memlog(&["seal", "--all"]).ok();
    write_unfiltered(&repo, "live", 0, &format!("charge with {STRIPE}"));

    let scan = repo.memlog(&["scan", "--json"]).ok();
    let report = scan.json();
    assert!(!scan.stdout().contains(SLACK) && !scan.stdout().contains(STRIPE));
    assert_eq!(report["events_scanned"], 3);
    let rules: Vec<&str> = report["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["rule"].as_str().unwrap())
        .collect();
    assert_eq!(rules, ["slack-bot-token", "stripe-access-token"]);
    assert_eq!(report["flagged"].as_array().unwrap().len(), 2);
    let text = repo.memlog(&["scan"]).ok().stdout();
    assert!(text.contains("memlog forget --secrets"), "{text}");
    assert!(!text.contains(SLACK) && !text.contains(STRIPE));

    repo.memlog(&["forget", "--secrets"]).ok();
    let after = repo.memlog(&["scan", "--json"]).ok().json();
    assert!(
        after["flagged"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["forgotten"] == true),
        "{after}"
    );
    // nothing else was forgotten
    let live: Vec<String> = repo
        .cat()
        .iter()
        .filter_map(|e| e["body"]["text"].as_str().map(str::to_string))
        .collect();
    assert!(live.iter().any(|t| t == "nothing to hide here"), "{live:?}");
    assert!(
        !live
            .iter()
            .any(|t| t.contains("xoxb-") || t.contains("sk_live_"))
    );

    repo.memlog(&["seal", "--all"]).ok();
    repo.memlog(&["purge"]).ok();
    let objects = repo
        .git(&["cat-file", "--batch-all-objects", "--batch"])
        .ok()
        .stdout();
    assert!(!objects.contains(SLACK) && !objects.contains(STRIPE));
    let last = repo.memlog(&["scan", "--json"]).ok().json();
    assert_eq!(last["flagged"].as_array().unwrap().len(), 0, "{last}");
    // with nothing left, forget --secrets says so and records nothing
    let none = repo.memlog(&["forget", "--secrets"]).ok().stdout();
    assert!(none.contains("no secret-shaped content"), "{none}");
}
