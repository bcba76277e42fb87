//! `memlog purge`: after forgetting a leaked secret and purging, no object
//! of the repository holds a byte of it, every other event is still there,
//! both fscks are clean and the index does not find it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use std::collections::BTreeSet;

use memlog_e2e::{McpProcess, ServeProcess, TestRepo, git_command, run};
use serde_json::json;

const MARKER: &str = "ZQXJ-LEAK-4471-MARKER";

fn all_objects(repo: &TestRepo) -> Vec<u8> {
    run(git_command(repo.path()).args(["cat-file", "--batch-all-objects", "--batch"]))
        .ok()
        .output
        .stdout
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

fn live_ids(repo: &TestRepo) -> BTreeSet<String> {
    repo.cat()
        .iter()
        .filter(|e| e["kind"] != "forget")
        .map(|e| e["id"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn purge_erases_forgotten_bytes_and_keeps_everything_else() {
    let repo = TestRepo::new();
    repo.record("s-before", "user_prompt", "Set up the database migrations");
    repo.memlog(&["seal", "--all"]).ok();
    // The secret is the session's first prompt: it is the commit's subject.
    let secret = repo.record(
        "s-leak",
        "user_prompt",
        &format!("the staging login is {MARKER} do not share"),
    );
    repo.record("s-leak", "agent_response", "Noted, using the staging login");
    repo.memlog(&["seal", "--all"]).ok();
    repo.record("s-after", "note", "Emails are stored lowercased");
    repo.memlog(&["seal", "--all"]).ok();
    // A remote-tracking ref that still reaches the old history.
    repo.git(&[
        "update-ref",
        "refs/remotes/origin/memlog",
        "refs/heads/memlog",
    ])
    .ok();
    assert!(
        repo.memlog(&["search", "ZQXJ"])
            .ok()
            .stdout()
            .contains("ZQXJ"),
        "the index finds the secret before"
    );

    repo.memlog(&["forget", &secret, "--reason", "leaked"]).ok();
    let kept = live_ids(&repo);
    assert!(!kept.contains(&secret));
    assert!(
        contains(&all_objects(&repo), MARKER),
        "hidden is not erased"
    );

    let out = repo.memlog(&["purge"]).ok().stdout();
    assert!(out.contains("purged 1 forgotten event"), "{out}");
    assert!(out.contains("git push --force origin"), "{out}");
    assert!(out.contains("deleted refs/remotes/origin/memlog"), "{out}");

    assert!(
        !contains(&all_objects(&repo), MARKER),
        "a git object still holds the forgotten text"
    );
    assert_eq!(live_ids(&repo), kept);
    assert_eq!(
        repo.cat().iter().filter(|e| e["kind"] == "forget").count(),
        1
    );
    let fsck = repo.memlog(&["fsck", "--json"]).ok().json();
    assert_eq!(fsck["problems"].as_array().map(Vec::len), Some(0), "{fsck}");
    let git_fsck = repo.git(&["fsck", "--strict", "--no-dangling"]).ok();
    assert!(git_fsck.stdout().trim().is_empty(), "{}", git_fsck.stdout());
    let search = repo.memlog(&["search", "ZQXJ"]).ok().stdout();
    assert!(!search.contains("ZQXJ-LEAK"), "{search}");
    assert!(
        repo.memlog(&["search", "lowercased"])
            .ok()
            .stdout()
            .contains("lowercased")
    );
    let messages = repo
        .git(&["log", "--format=%B", "refs/heads/memlog"])
        .ok()
        .stdout();
    assert!(messages.contains("Memlog-Purged: 1 events"), "{messages}");
    assert_eq!(repo.memlog_commits().len(), 4);

    // Purging again finds nothing to do.
    let again = repo.memlog(&["purge"]).ok().stdout();
    assert!(again.contains("nothing to purge"), "{again}");
}

#[test]
fn sync_refuses_to_merge_purged_history_back() {
    let remote = tempfile::Builder::new()
        .prefix("memlog-e2e-remote-")
        .tempdir()
        .expect("tempdir");
    run(git_command(remote.path()).args(["init", "-q", "--bare", "-b", "main"])).ok();
    let repo = TestRepo::new();
    repo.git(&[
        "remote",
        "add",
        "origin",
        &remote.path().display().to_string(),
    ])
    .ok();
    let secret = repo.record("s-leak", "user_prompt", &format!("token is {MARKER}"));
    repo.record("s-leak", "agent_response", "ok");
    repo.memlog(&["seal", "--all"]).ok();
    repo.memlog(&["sync", "origin"]).ok();
    repo.memlog(&["forget", &secret]).ok();
    let out = repo.memlog(&["purge"]).ok().stdout();
    assert!(out.contains("git push --force origin"), "{out}");

    // The remote still has the old history: sync must not merge it back.
    let refused = repo.memlog(&["sync", "origin"]);
    assert_eq!(refused.code(), Some(1));
    assert!(refused.stderr().contains("purge"), "{}", refused.stderr());
    assert!(!repo.cat().iter().any(|e| e["id"] == secret.as_str()));

    // After the force push the way the message says, sync works again and
    // the remote no longer holds the marker.
    repo.git(&[
        "push",
        "-q",
        "--force",
        "origin",
        "refs/heads/memlog:refs/heads/memlog",
    ])
    .ok();
    repo.memlog(&["purge"]).ok();
    repo.memlog(&["sync", "origin"]).ok();
    run(git_command(remote.path()).args(["gc", "-q", "--prune=now"])).ok();
    let remote_objects =
        run(git_command(remote.path()).args(["cat-file", "--batch-all-objects", "--batch"]))
            .ok()
            .output
            .stdout;
    assert!(!contains(&remote_objects, MARKER));
    assert!(!contains(&all_objects(&repo), MARKER));
}

/// Every byte of every file under `dir` (the memlog directory).
fn files_under(dir: &std::path::Path, out: &mut Vec<(String, Vec<u8>)>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_under(&path, out);
        } else if let Ok(bytes) = std::fs::read(&path) {
            out.push((path.display().to_string(), bytes));
        }
    }
}

#[test]
fn forgetting_an_event_hides_its_facts_everywhere_and_purge_erases_both() {
    let repo = TestRepo::new();
    let said = "our vendor contract code is KVQW-EVENT-3301 and it renews every March";
    let quote = "KVQW-EVENT-3301 and it renews every March";
    let fact_text = "The vendor contract (FACTMARK-7719) renews each March";
    let source = repo.record("s-vendor", "user_prompt", said);
    repo.record("s-vendor", "agent_response", "Noted the renewal month");
    repo.memlog(&["seal", "--all"]).ok();
    repo.record("s-other", "note", "Emails are stored lowercased");
    repo.memlog(&["seal", "--all"]).ok();
    let facts = repo.path().join("facts.json");
    std::fs::write(
        &facts,
        json!([{"text": fact_text, "quote": quote, "event": source}]).to_string(),
    )
    .unwrap();
    let extracted = repo
        .memlog(&["extract", "--facts", facts.to_str().unwrap(), "--json"])
        .ok()
        .json();
    std::fs::remove_file(&facts).unwrap();
    let fact = extracted["recorded"][0]["id"].as_str().unwrap().to_string();
    // vectors and the embedding cache, when the model is installed
    repo.memlog(&["index"]).ok();
    assert!(
        repo.memlog(&["search", "FACTMARK", "--mode", "fts"])
            .ok()
            .stdout()
            .contains(&fact[..12])
    );

    // A dry run lists the event and the fact, and records nothing.
    let plan = repo
        .memlog(&["forget", &source[..12], "--dry-run", "--json"])
        .ok()
        .json();
    let hidden: Vec<(&str, bool)> = plan["hidden"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["id"].as_str().unwrap(), h["derived"].as_bool().unwrap()))
        .collect();
    assert_eq!(
        hidden,
        vec![(source.as_str(), false), (fact.as_str(), true)]
    );
    let text = repo.memlog(&["forget", &source, "--dry-run"]).ok().stdout();
    assert!(
        text.contains(&fact[..12]) && text.contains("(derived)"),
        "{text}"
    );
    assert!(repo.cat().iter().all(|e| e["kind"] != "forget"));

    let forgotten = repo.memlog(&["forget", &source, "--json"]).ok().json();
    assert_eq!(forgotten["derived"], json!([fact]));

    // Gone from search, show, MCP and the viewer.
    for mode in ["fts", "hybrid"] {
        let out = repo
            .memlog(&[
                "search",
                "FACTMARK vendor contract",
                "--mode",
                mode,
                "--json",
            ])
            .ok()
            .json();
        let ids: Vec<&str> = out["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["id"].as_str().unwrap())
            .collect();
        assert!(
            !ids.contains(&fact.as_str()) && !ids.contains(&source.as_str()),
            "{mode}: {out}"
        );
    }
    assert_eq!(repo.memlog(&["show", &fact]).code(), Some(1));
    assert!(repo.cat().iter().all(|e| e["id"] != fact.as_str()));
    let mut mcp = McpProcess::start(repo.path());
    let hits = mcp.tool("memory_search", json!({"query": "vendor contract renews"}));
    assert!(!hits["hits"].to_string().contains("FACTMARK"), "{hits}");
    mcp.call_tool("get", "memory_get", json!({"ids": [fact]}));
    let got = mcp.response("get");
    assert_eq!(got["result"]["isError"], true, "{got}");
    assert!(!got.to_string().contains("FACTMARK"), "{got}");
    assert!(mcp.close().success());
    let viewer = ServeProcess::start(repo.path(), &[]);
    let found = viewer.get("/api/search?q=vendor+contract+renews");
    assert!(!found.text().contains("FACTMARK"), "{}", found.text());
    assert_eq!(viewer.get(&format!("/api/events/{fact}")).status, 404);
    drop(viewer);

    // Purge: no byte of the event's words, the quote or the fact left in
    // git objects or anywhere under .git/memlog.
    let out = repo.memlog(&["purge"]).ok().stdout();
    assert!(out.contains("purged 2 forgotten event"), "{out}");
    let objects = all_objects(&repo);
    let mut files = Vec::new();
    files_under(&repo.path().join(".git/memlog"), &mut files);
    for needle in ["KVQW-EVENT-3301", "FACTMARK-7719", "renews every March"] {
        assert!(!contains(&objects, needle), "a git object holds {needle:?}");
        for (path, bytes) in &files {
            assert!(!contains(bytes, needle), "{path} holds {needle:?}");
        }
    }
    let fsck = repo.memlog(&["fsck", "--json"]).ok().json();
    assert_eq!(fsck["problems"].as_array().map(Vec::len), Some(0), "{fsck}");
    assert!(
        repo.memlog(&["search", "lowercased"])
            .ok()
            .stdout()
            .contains("lowercased")
    );
}
