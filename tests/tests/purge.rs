//! `memlog purge`: after forgetting a leaked secret and purging, no object
//! of the repository holds a byte of it, every other event is still there,
//! both fscks are clean and the index does not find it; and through the
//! purge's record in the log, the same holds on every clone of a team and
//! on their remote, whichever order they sync in, a clone that was offline
//! during the purge included.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use std::collections::{BTreeMap, BTreeSet};

use memlog_e2e::{
    McpProcess, ServeProcess, TestRepo, git_command, holds as contains, remote_and_clones, run,
};
use serde_json::json;

const MARKER: &str = "ZQXJ-LEAK-4471-MARKER";

fn all_objects(repo: &TestRepo) -> Vec<u8> {
    memlog_e2e::all_objects(repo.path())
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
    assert!(out.contains("recorded as purges/"), "{out}");
    assert!(out.contains("memlog sync origin"), "{out}");
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
    assert!(messages.contains("Memlog-Purge: "), "{messages}");
    // three seals, the forget's and the purge's record
    assert_eq!(repo.memlog_commits().len(), 5);
    // the review of what the purge did names it, ids and counts only
    let diff = repo.memlog(&["diff"]).ok().stdout();
    assert!(diff.contains("1 erased by 1 purge(s)"), "{diff}");
    assert!(diff.contains(&secret[..12]), "{diff}");
    assert!(!diff.contains("ZQXJ"), "{diff}");
    let json = repo.memlog(&["diff", "--json"]).ok().json();
    assert_eq!(json["purges"][0]["events"], serde_json::json!([secret]));
    // and the log says what each commit without a prompt holds
    let log = repo.memlog(&["log"]).ok().stdout();
    assert!(log.contains("Purge 1 forgotten event(s)"), "{log}");
    assert!(log.contains("1 forget"), "{log}");
    assert!(log.contains("Emails are stored lowercased"), "{log}");

    // Purging again finds nothing to do.
    let again = repo.memlog(&["purge"]).ok().stdout();
    assert!(again.contains("nothing to purge"), "{again}");
}

/// Every event id in the segments of `rev`'s tree, with how many segments
/// hold it, read with plain git.
fn stored_ids(dir: &std::path::Path, rev: &str) -> BTreeMap<String, usize> {
    let tree = run(git_command(dir).args(["ls-tree", "-r", "--name-only", rev])).ok();
    let mut out = BTreeMap::new();
    for path in tree.stdout().lines().filter(|p| p.starts_with("segments/")) {
        let blob = run(git_command(dir).args(["cat-file", "blob", &format!("{rev}:{path}")])).ok();
        for line in blob.stdout().lines() {
            let event: serde_json::Value = serde_json::from_str(line).unwrap();
            *out.entry(event["id"].as_str().unwrap().to_string())
                .or_default() += 1;
        }
    }
    out
}

fn seal(repo: &TestRepo, session: &str, text: &str) -> BTreeSet<String> {
    let ids = [
        repo.record(session, "user_prompt", text),
        repo.record(session, "agent_response", &format!("answer to {session}")),
    ];
    repo.memlog(&["seal", "--session", session]).ok();
    ids.into_iter().collect()
}

/// A purge on `a` while `c` is offline; then `b` and `c` sync in `order`,
/// then everyone once more and `git gc` everywhere: no object of the remote
/// or of any clone holds the purged text, and every other event is stored
/// exactly once, the same everywhere.
fn purge_reaches_every_clone(order: [usize; 2]) {
    let (remote, clones) = remote_and_clones(3);
    let (a, b, c) = (&clones[0], &clones[1], &clones[2]);
    let mut kept = BTreeSet::new();
    kept.extend(seal(a, "s-a1", "Set up the database migrations"));
    // The secret is its session's first prompt: a commit subject, and a
    // line of the merge messages that bring the session in.
    let secret = a.record("s-leak", "user_prompt", &format!("the login is {MARKER}"));
    kept.insert(a.record("s-leak", "agent_response", "Noted, using that login"));
    a.memlog(&["seal", "--session", "s-leak"]).ok();
    a.memlog(&["sync", "origin"]).ok();
    kept.extend(seal(b, "s-b1", "Emails are stored lowercased"));
    b.memlog(&["sync", "origin"]).ok();
    kept.extend(seal(c, "s-c1", "The cache expires after an hour"));
    c.memlog(&["sync", "origin"]).ok();
    a.memlog(&["sync", "origin"]).ok();
    for repo in [a, b, c] {
        assert!(contains(&all_objects(repo), MARKER), "everyone holds it");
        // and has indexed it: the index, its caches and the sessions'
        // titles must lose it too
        repo.memlog(&["index"]).ok();
        assert!(holds_in_files(&repo.path().join(".git"), MARKER));
    }

    // c goes offline with a session of its own; b shares one more before
    // a purges, so the remote holds history a never saw.
    kept.extend(seal(c, "s-c2", "Offline work on the parser"));
    kept.extend(seal(b, "s-b2", "Retries use exponential backoff"));
    b.memlog(&["sync", "origin"]).ok();

    let forgot = a.memlog(&["forget", &secret, "--json"]).ok().json();
    kept.insert(forgot["id"].as_str().unwrap().to_string());
    a.memlog(&["purge"]).ok();
    let out = a.memlog(&["sync", "origin"]).ok().stdout();
    assert!(out.contains("applied 1 purge"), "{out}");

    for i in order {
        let out = clones[i].memlog(&["sync", "origin"]).ok().stdout();
        assert!(out.contains("applied 1 purge"), "clone {i}: {out}");
    }
    for repo in [a, b, c] {
        repo.memlog(&["sync", "origin"]).ok();
    }
    let tip = |dir: &std::path::Path| {
        run(git_command(dir).args(["rev-parse", "refs/heads/memlog"]))
            .ok()
            .stdout()
    };
    let expected_tip = tip(remote.path());
    let dirs = [remote.path(), a.path(), b.path(), c.path()];
    for dir in dirs {
        run(git_command(dir).args(["gc", "-q", "--prune=now"])).ok();
        assert_eq!(tip(dir), expected_tip, "{}", dir.display());
        assert!(
            !contains(&memlog_e2e::all_objects(dir), MARKER),
            "{} still holds the purged text",
            dir.display()
        );
        let stored = stored_ids(dir, "refs/heads/memlog");
        let stored_once: BTreeSet<String> = stored
            .iter()
            .filter(|(_, n)| **n == 1)
            .map(|(id, _)| id.clone())
            .collect();
        assert_eq!(stored_once.len(), stored.len(), "{stored:?}");
        assert_eq!(stored_once, kept, "{}", dir.display());
    }
    // Clones rewrote the history they shared into the same commits: each
    // session is sealed by one commit, not by an old and a new one.
    let sealed = run(git_command(remote.path()).args([
        "log",
        "--format=%(trailers:key=Memlog-Session,valueonly)",
        "refs/heads/memlog",
    ]))
    .ok()
    .stdout();
    let mut sessions: Vec<&str> = sealed.lines().filter(|l| !l.is_empty()).collect();
    let all = sessions.len();
    sessions.dedup();
    sessions.sort();
    sessions.dedup();
    assert_eq!(sessions.len(), all, "{sealed}");
    for repo in [a, b, c] {
        // no file under .git holds it as it was written: not the index, a
        // cache, a journal or a log
        assert!(
            !holds_in_files(&repo.path().join(".git"), MARKER),
            "{}",
            repo.path().display()
        );
        let live: BTreeSet<String> = repo
            .cat()
            .iter()
            .map(|e| e["id"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(live, kept);
        let fsck = repo.memlog(&["fsck", "--json"]).ok().json();
        assert_eq!(fsck["problems"].as_array().map(Vec::len), Some(0), "{fsck}");
        let search = repo
            .memlog(&["search", "ZQXJ", "--mode", "fts"])
            .ok()
            .stdout();
        assert!(!search.contains(MARKER), "{search}");
    }
}

#[test]
fn a_purge_reaches_every_clone_when_b_syncs_first() {
    purge_reaches_every_clone([1, 2]);
}

#[test]
fn a_purge_reaches_every_clone_when_the_offline_clone_syncs_first() {
    purge_reaches_every_clone([2, 1]);
}

/// Whether a file under `dir` holds `needle` as plain bytes.
fn holds_in_files(dir: &std::path::Path, needle: &str) -> bool {
    let mut files = Vec::new();
    files_under(dir, &mut files);
    files.iter().any(|(_, bytes)| contains(bytes, needle))
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

/// The agent's session files still hold what a forget hid: importing them
/// again (`memlog import claude-code`, after a crash or to pick up what the
/// hooks missed) must not bring it back, whether an event was forgotten by
/// id or its session whole (found by a field test: a purged answer came
/// back with a new id, was synced, and reached a teammate's agent).
#[test]
fn importing_the_agents_files_again_brings_back_nothing_forgotten() {
    let transcript = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/claude-code/transcripts/9b1f6c2e-4d3a-4e8b-a1c7-5f2e8d9c0b14.jsonl");
    let transcript = transcript.to_str().unwrap();
    let repo = TestRepo::new();
    let import = || {
        repo.memlog(&["import", "claude-code", transcript, "--no-index"])
            .ok()
    };
    import();
    let answer = "The regression test is the last open item";
    let id = repo
        .memlog(&[
            "search",
            "--json",
            "--mode",
            "fts",
            "regression test last open item",
        ])
        .ok()
        .json()["hits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["kind"] == "agent_response")
        .map(|h| h["id"].as_str().unwrap().to_string())
        .expect("the answer is found");
    repo.memlog(&["forget", &id]).ok();
    repo.memlog(&["purge"]).ok();
    assert!(!contains(&all_objects(&repo), answer));
    let again = import();
    assert!(
        !contains(&all_objects(&repo), answer),
        "the forgotten answer came back"
    );
    assert!(
        again.stderr().contains("left out 1 event(s)"),
        "{}",
        again.stderr()
    );

    let prompt = "The checkout total is off by one cent";
    repo.memlog(&[
        "forget",
        "--session",
        "9b1f6c2e-4d3a-4e8b-a1c7-5f2e8d9c0b14",
    ])
    .ok();
    repo.memlog(&["purge"]).ok();
    assert!(!contains(&all_objects(&repo), prompt));
    import();
    assert!(
        !contains(&all_objects(&repo), prompt),
        "the forgotten session came back"
    );
}

/// A forget of a session hides it as far as it went: the agent resuming it
/// under the same id (`claude --resume`) records what follows, which is
/// searched and kept, and a purge erases only the forgotten part (found by
/// a field test: the resumed part was recorded, shared and invisible).
#[test]
fn a_session_resumed_after_its_forget_is_remembered_again() {
    let repo = TestRepo::new();
    let (old, new) = ("OLDPART-4471", "NEWPART-9035");
    repo.hook(
        "UserPromptSubmit",
        "s1",
        json!({"prompt": format!("where is {old} configured?")}),
    );
    repo.memlog(&["seal", "--all"]).ok();
    repo.memlog(&["forget", "--session", "s1"]).ok();
    std::thread::sleep(std::time::Duration::from_millis(5));
    repo.hook(
        "UserPromptSubmit",
        "s1",
        json!({"prompt": format!("resumed: what about {new}?")}),
    );
    repo.memlog(&["seal", "--all"]).ok();
    let hits = |word: &str| {
        repo.memlog(&["search", "--json", "--mode", "fts", word])
            .ok()
            .json()["hits"]
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(hits(old), 0);
    assert_eq!(hits(new), 1);
    repo.memlog(&["purge"]).ok();
    assert!(!contains(&all_objects(&repo), old));
    assert!(contains(&all_objects(&repo), new));
    assert_eq!(hits(new), 1);
}

/// `memlog log` shows no forgotten words: a forgotten first prompt is not
/// a session's title (nor is the seal's subject, made of it); and a forget
/// sealed in the same second as its session is listed above it.
#[test]
fn the_log_shows_nothing_forgotten_and_newest_first() {
    let repo = TestRepo::new();
    repo.record("s2", "user_prompt", "the launch codename is mongoosecomet");
    repo.record("s2", "agent_response", "noted");
    repo.memlog(&["seal", "--session", "s2"]).ok();
    repo.memlog(&["forget", "--session", "s2"]).ok();
    let log = repo.memlog(&["log"]).ok().stdout();
    assert!(!log.contains("mongoosecomet"), "{log}");
    let json = repo.memlog(&["log", "--json"]).ok().stdout();
    assert!(!json.contains("mongoosecomet"), "{json}");
    let first = log.lines().next().unwrap_or_default();
    assert!(first.contains("1 forget"), "newest first:\n{log}");
}

/// A teammate whose clone predates a purge merges the remote's rewritten
/// memlog branch with plain git (`--allow-unrelated-histories`, as git
/// asks) and pushes: for the remote a fast-forward, and its history holds
/// the purged event again beside the purge's record. The next `memlog
/// sync` of anyone applies the record to that history again, here and on
/// the remote, and keeps the teammate's new session (a field test saw
/// every clone fast-forward onto the old bytes).
#[test]
fn a_plain_git_merge_of_the_old_history_is_purged_again_at_the_next_sync() {
    let (remote, clones) = remote_and_clones(3);
    let (alice, bob, dave) = (&clones[0], &clones[1], &clones[2]);
    seal(alice, "s-leak", &format!("the passphrase is {MARKER}"));
    seal(alice, "s-other", "the deploy runs from ci.yml");
    alice.memlog(&["sync", "origin"]).ok();
    bob.memlog(&["sync", "origin"]).ok();
    // dave's clone takes the memlog branch with plain git, before the purge
    dave.git(&["fetch", "-q", "origin", "memlog:memlog"]).ok();
    alice.memlog(&["forget", "--session", "s-leak"]).ok();
    alice.memlog(&["purge"]).ok();
    alice.memlog(&["sync", "origin"]).ok();
    bob.memlog(&["sync", "origin"]).ok();
    assert!(!contains(&all_objects(bob), MARKER));

    seal(dave, "s-dave", "dave's session on the parser");
    dave.git(&["fetch", "-q", "origin"]).ok();
    let worktree = tempfile::tempdir().unwrap();
    let wt = worktree.path().join("wt");
    dave.git(&["worktree", "add", "-q", wt.to_str().unwrap(), "memlog"])
        .ok();
    run(git_command(&wt).args([
        "merge",
        "-q",
        "--no-edit",
        "--allow-unrelated-histories",
        "origin/memlog",
    ]))
    .ok();
    dave.git(&["push", "-q", "origin", "memlog"]).ok();
    let on_remote = |rev: &str| {
        run(git_command(remote.path()).args(["grep", "-c", MARKER, rev, "--"]))
            .output
            .status
            .success()
    };
    assert!(on_remote("memlog"), "the old bytes are back on the remote");
    // the clone that merged them is told
    let fsck = dave.memlog(&["fsck", "--json"]).json();
    assert!(
        fsck.to_string().contains("purge"),
        "fsck names the purged history that came back: {fsck}"
    );

    bob.memlog(&["sync", "origin"]).ok();
    assert!(
        !on_remote("memlog"),
        "the remote's history was purged again"
    );
    alice.memlog(&["sync", "origin"]).ok();
    for (who, clone) in [("alice", alice), ("bob", bob)] {
        clone.git(&["gc", "-q", "--prune=now"]).ok();
        assert!(!contains(&all_objects(clone), MARKER), "{who}");
        assert!(
            clone
                .memlog(&["cat"])
                .ok()
                .stdout()
                .contains("dave's session"),
            "{who} has dave's session"
        );
    }
    run(git_command(remote.path()).args(["gc", "-q", "--prune=now"])).ok();
    assert!(!contains(&memlog_e2e::all_objects(remote.path()), MARKER));
}

/// A forgotten event of a session still running is in its journal, not in
/// history: the purge erases it there, so the session's seal never carries
/// it, and the session goes on recording (a field test saw `purge` say
/// "nothing to purge", then the seal and a sync publish the bytes).
#[test]
fn a_purge_erases_a_live_sessions_forgotten_event_before_its_seal() {
    let repo = TestRepo::new();
    let leaked = repo.record(
        "live",
        "user_prompt",
        &format!("the unseal phrase is {MARKER}"),
    );
    repo.record("live", "agent_response", "ok");
    repo.memlog(&["forget", &leaked, "--reason", "leaked"]).ok();
    let purged = repo.memlog(&["purge", "--json"]).ok().json();
    assert_eq!(purged["journal_events_purged"], 1, "{purged}");
    let journals = repo.path().join(".git/memlog/journal");
    let mut files = Vec::new();
    files_under(&journals, &mut files);
    assert!(files.iter().all(|(_, bytes)| !contains(bytes, MARKER)));
    repo.record("live", "user_prompt", "and the next question");
    repo.memlog(&["seal", "--session", "live"]).ok();
    assert!(!contains(&all_objects(&repo), MARKER));
    let texts = repo.memlog(&["cat"]).ok().stdout();
    assert!(
        texts.contains("and the next question") && texts.contains("\"ok\""),
        "{texts}"
    );
    assert!(!holds_in_files(repo.path(), MARKER));
}

/// A seal killed after writing its pack and before moving the ref left the
/// pack's `.keep`: git never prunes a kept pack, so a purge left the
/// forgotten words in the store (the crash bench, with random kills). A
/// purge, which no seal runs beside, releases what seals kept; a keep of
/// another tool stays.
#[test]
fn a_purge_erases_what_a_killed_seal_left_in_a_kept_pack() {
    let repo = TestRepo::new();
    let secret = "the heron vault code is 4471";
    let note = repo.memlog(&["note", secret, "--json"]).ok().json();
    repo.memlog(&["forget", note["id"].as_str().unwrap()]).ok();
    // what a killed seal leaves: a pack with the words, kept as sealing
    let kept_pack = |text: &str, keep: &str| {
        let blob = memlog_e2e::run_stdin(
            memlog_e2e::git_command(repo.path()).args(["hash-object", "-w", "--stdin"]),
            text,
        )
        .ok()
        .stdout()
        .trim()
        .to_string();
        let base = repo.path().join(".git/objects/pack/pack");
        let name = memlog_e2e::run_stdin(
            memlog_e2e::git_command(repo.path())
                .args(["pack-objects", "-q"])
                .arg(&base),
            &format!("{blob}\n"),
        )
        .ok()
        .stdout()
        .trim()
        .to_string();
        std::fs::write(
            repo.path()
                .join(format!(".git/objects/pack/pack-{name}.keep")),
            keep,
        )
        .unwrap();
        std::fs::remove_file(repo.path().join(format!(
            ".git/objects/{}/{}",
            &blob[..2],
            &blob[2..]
        )))
        .unwrap();
    };
    kept_pack(
        &format!("{secret} (a killed seal's segment)"),
        "memlog: sealing\n",
    );
    kept_pack("a pack another tool keeps", "receive-pack 4242 on host\n");
    assert!(contains(&all_objects(&repo), secret));
    repo.memlog(&["purge"]).ok();
    assert!(!contains(&all_objects(&repo), secret));
    assert!(contains(&all_objects(&repo), "a pack another tool keeps"));
}

/// The review views agree with what a forget and a purge left: `memlog
/// log` counts no forgotten event, the purge's own row has a time in
/// memlog's form, and `memlog diff` says what a session forget whose events
/// were purged forgot (a field test: "2 ev 1 pr" for a session whose
/// prompt was forgotten, a purge row at "00:00", "hides 0 event(s)").
#[test]
fn log_and_diff_agree_with_a_forget_and_a_purge() {
    let repo = TestRepo::new();
    let prompt = repo.record("s1", "user_prompt", "deploy with jane.doe@corp-example.com");
    repo.record("s1", "agent_response", "Deployed.");
    repo.memlog(&["seal", "--all"]).ok();
    repo.memlog(&["forget", &prompt, "--reason", "email"]).ok();
    let log = repo.memlog(&["log", "--json"]).ok().json();
    let row = log["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["session"] == "s1")
        .cloned()
        .unwrap();
    assert_eq!(
        (row["events"].clone(), row["prompts"].clone()),
        (json!(1), json!(0)),
        "{log:#}"
    );
    repo.memlog(&["forget", "--session", "s1", "--reason", "whole session"])
        .ok();
    repo.memlog(&["purge"]).ok();
    let log = repo.memlog(&["log", "--json"]).ok().json();
    for s in log["sessions"].as_array().unwrap() {
        let started = s["started"].as_str().unwrap();
        assert!(
            started.contains('T') && started.ends_with('Z'),
            "{started}: {log:#}"
        );
    }
    // the two forgets and the purge
    let diff = repo.memlog(&["diff", "memlog~3..memlog"]).ok().stdout();
    assert!(!diff.contains("hides 0 event(s)"), "{diff}");
    assert!(diff.contains("forgets session s1"), "{diff}");
}

/// A branch or tag the user made of the memlog ref before a purge (`git
/// branch backup memlog`) keeps the purged bytes in the repository, and a
/// `git push --all` would share them again (field test 12c): the purge and
/// fsck name it, and once it is deleted another purge leaves no byte.
#[test]
fn a_backup_of_the_log_that_keeps_purged_bytes_is_named() {
    let repo = TestRepo::new();
    let secret = repo.record("s-leak", "user_prompt", &format!("the key is {MARKER}"));
    repo.memlog(&["seal", "--all"]).ok();
    repo.record("s-after", "note", "Emails are stored lowercased");
    repo.memlog(&["seal", "--all"]).ok();
    repo.git(&["branch", "backup", "memlog"]).ok();
    repo.git(&["tag", "memlog-v1", "memlog~1"]).ok();
    repo.memlog(&["forget", &secret]).ok();

    let purged = repo.memlog(&["purge"]).ok();
    assert!(
        purged.stdout().contains("purged 1 forgotten event"),
        "{}",
        purged.stdout()
    );
    let warning = purged.stderr();
    assert!(warning.contains("refs/heads/backup"), "{warning}");
    assert!(warning.contains("refs/tags/memlog-v1"), "{warning}");
    assert!(contains(&all_objects(&repo), MARKER), "the backup keeps it");
    let fsck = repo.memlog(&["fsck"]);
    assert_ne!(fsck.code(), Some(0), "fsck passes");
    assert!(
        fsck.stdout().contains("refs/heads/backup"),
        "{}",
        fsck.stdout()
    );

    repo.git(&["branch", "-D", "backup"]).ok();
    repo.git(&["tag", "-d", "memlog-v1"]).ok();
    let again = repo.memlog(&["purge"]).ok();
    assert!(!again.stderr().contains("refs/"), "{}", again.stderr());
    assert!(!contains(&all_objects(&repo), MARKER), "a byte is left");
    repo.memlog(&["fsck"]).ok();
}

/// A remote that takes no forced push (`receive.denyNonFastForwards`, a
/// common server setting) took every sync, then refuses the purged
/// history: the error says that the purge's rewrite is what it refuses and
/// how to let it through, not that it takes no memlog ref (field test 12b).
#[test]
fn a_remote_refusing_the_purged_history_is_named_for_what_it_refuses() {
    let (remote, clones) = remote_and_clones(1);
    let repo = &clones[0];
    run(git_command(remote.path()).args(["config", "receive.denyNonFastForwards", "true"])).ok();
    let secret = repo.record("s-leak", "note", &format!("the key is {MARKER}"));
    repo.record("s-leak", "note", "the otter cache expires after 5 minutes");
    repo.memlog(&["seal", "--all"]).ok();
    repo.memlog(&["sync", "origin"]).ok();
    repo.memlog(&["forget", &secret]).ok();
    repo.memlog(&["purge"]).ok();
    let out = repo.memlog(&["sync", "origin"]);
    assert_eq!(out.code(), Some(1), "{}", out.stdout());
    let err = out.stderr();
    assert!(
        err.contains("refuses to replace history") && err.contains("receive.denyNonFastForwards"),
        "{err}"
    );
    assert!(!err.contains("does not take"), "{err}");
}
