//! Crash safety (SIGKILL during seal), concurrent recorders and sealers, and
//! merging diverged memlog refs with plain git.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use std::collections::{HashMap, HashSet};
use std::process::Stdio;
use std::time::Duration;

use memlog_e2e::{TestRepo, memlog_command};

/// Ids in `memlog cat`, with how often each appears.
fn id_counts(repo: &TestRepo) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for e in repo.cat() {
        *counts
            .entry(e["id"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    counts
}

fn assert_fsck_clean(repo: &TestRepo) {
    let report = repo.memlog(&["fsck", "--json"]).ok().json();
    assert_eq!(report["problems"], serde_json::json!([]), "{report}");
    assert!(
        repo.git(&["fsck", "--strict", "--no-dangling"])
            .output
            .status
            .success()
    );
}

#[test]
fn sigkill_during_seal_loses_nothing() {
    let repo = TestRepo::new();
    let mut expected = HashSet::new();
    // Kill points spread over the whole length of a seal, measured here.
    let t = std::time::Instant::now();
    repo.memlog(&["seal", "--all"]).ok();
    let seal_micros = (t.elapsed().as_micros() as u64).max(2_000) * 3 / 2;
    let mut rng: u64 = 0x9e37_79b9_7f4a_7c15;
    let rounds = 30;
    for round in 0..rounds {
        for s in 0..3 {
            for k in 0..2 {
                expected.insert(repo.record(
                    &format!("s{s}"),
                    "note",
                    &format!("round {round} session {s} event {k}"),
                ));
            }
        }
        let mut child = memlog_command(repo.path())
            .args(["seal", "--all"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn seal");
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        std::thread::sleep(Duration::from_micros(rng % seal_micros));
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
    }
    repo.memlog(&["seal", "--all"]).ok();
    let counts = id_counts(&repo);
    let seen: HashSet<String> = counts.keys().cloned().collect();
    assert_eq!(seen, expected, "every recorded event is present");
    assert!(counts.values().all(|n| *n == 1), "every event exactly once");
    let stats = repo.memlog(&["stats", "--json"]).ok().json();
    assert_eq!(stats["journals"], 0);
    assert_fsck_clean(&repo);
}

#[test]
fn eight_processes_record_and_seal_at_once() {
    let repo = TestRepo::new();
    let per_session = 20;
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(8));
    let handles: Vec<_> = (0..8)
        .map(|p| {
            let dir = repo.path().to_path_buf();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                let session = format!("worker-{p}");
                let mut ids = Vec::new();
                for i in 0..per_session {
                    let out = memlog_command(&dir)
                        .args([
                            "record",
                            "--session",
                            &session,
                            "--kind",
                            "note",
                            "--text",
                            &format!("{session} #{i}"),
                        ])
                        .output()
                        .expect("record");
                    assert!(
                        out.status.success(),
                        "{}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                    ids.push(String::from_utf8_lossy(&out.stdout).trim().to_string());
                }
                // every session is complete; now all eight seal at once
                barrier.wait();
                let out = memlog_command(&dir)
                    .args(["seal", "--session", &session])
                    .output()
                    .expect("seal");
                assert!(
                    out.status.success(),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                // racing `seal --all`s must not duplicate or lose anything
                let out = memlog_command(&dir)
                    .args(["seal", "--all"])
                    .output()
                    .expect("seal");
                assert!(
                    out.status.success(),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                ids
            })
        })
        .collect();
    let mut expected = HashSet::new();
    for h in handles {
        expected.extend(h.join().expect("worker thread"));
    }
    let counts = id_counts(&repo);
    assert_eq!(counts.len(), 8 * per_session);
    assert_eq!(counts.keys().cloned().collect::<HashSet<_>>(), expected);
    assert!(counts.values().all(|n| *n == 1));
    let commits = repo.memlog_commits();
    assert_eq!(commits.len(), 8, "one commit per session: {commits:?}");
    assert_fsck_clean(&repo);
}

#[test]
fn diverged_clones_merge_with_plain_git() {
    let origin = TestRepo::new();
    origin.record("shared", "user_prompt", "the first session, before cloning");
    origin.memlog(&["seal", "--all"]).ok();
    let bare = tempfile::tempdir().unwrap();
    let remote = bare.path().join("remote.git");
    origin
        .git(&["clone", "-q", "--bare", ".", remote.to_str().unwrap()])
        .ok();

    let a = TestRepo::clone_of(&remote);
    let b = TestRepo::clone_of(&remote);
    let c = TestRepo::clone_of(&remote);
    for clone in [&a, &b, &c] {
        clone.git(&["branch", "memlog", "origin/memlog"]).ok();
    }
    a.record("from-a-1", "user_prompt", "work done in clone A");
    a.record("from-a-2", "note", "more from A");
    b.record("from-b", "user_prompt", "work done in clone B");
    c.record("from-c", "user_prompt", "work done in clone C");
    for clone in [&a, &b, &c] {
        clone.memlog(&["seal", "--all"]).ok();
    }
    a.git(&["push", "-q", "origin", "memlog"]).ok();

    // B merges with `git merge` on the memlog branch
    b.git(&["fetch", "-q", "origin"]).ok();
    b.git(&["checkout", "-q", "memlog"]).ok();
    let merge = b.git(&["merge", "--no-edit", "origin/memlog"]);
    assert!(
        merge.output.status.success(),
        "merge conflict: {}{}",
        merge.stdout(),
        merge.stderr()
    );
    b.git(&["checkout", "-q", "main"]).ok();
    b.git(&["push", "-q", "origin", "memlog"]).ok();

    // C merges with `git pull`
    c.git(&["checkout", "-q", "memlog"]).ok();
    let pull = c.git(&["pull", "-q", "--no-rebase", "--no-edit", "origin", "memlog"]);
    assert!(
        pull.output.status.success(),
        "pull failed: {}{}",
        pull.stdout(),
        pull.stderr()
    );
    c.git(&["checkout", "-q", "main"]).ok();

    let sessions = |r: &TestRepo| -> HashSet<String> {
        r.cat()
            .iter()
            .map(|e| e["session"].as_str().unwrap().to_string())
            .collect()
    };
    let all: HashSet<String> = ["shared", "from-a-1", "from-a-2", "from-b", "from-c"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(sessions(&c), all);
    assert_eq!(c.cat().len(), 5);
    let b_sessions = sessions(&b);
    assert!(
        b_sessions.is_superset(
            &["shared", "from-a-1", "from-a-2", "from-b"]
                .iter()
                .map(|s| s.to_string())
                .collect()
        )
    );
    assert_fsck_clean(&c);
    // the merged log still lists every session
    let log = c.memlog(&["log", "--json"]).ok().json();
    assert_eq!(log["sessions"].as_array().map(Vec::len), Some(5));
}

/// The crash bench, small: random SIGKILLs during record, seal, import,
/// index and purge, then every event exactly once and both fscks clean
/// (`memlog-bench --kills N` checks and fails otherwise; the README gives
/// the 1,000-kill figure).
#[test]
fn random_sigkills_during_every_writer_lose_and_duplicate_nothing() {
    let bench = memlog_e2e::memlog_bin()
        .with_file_name(format!("memlog-bench{}", std::env::consts::EXE_SUFFIX));
    if !bench.exists() {
        println!(
            "skipped: {} absent (cargo build -p memlog-bench)",
            bench.display()
        );
        return;
    }
    let out = std::process::Command::new(&bench)
        .args(["--kills", "25", "--seed", "7"])
        .output()
        .expect("run memlog-bench");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("each exactly once"), "{stdout}");
}

/// A process killed while holding `packed-refs.lock` (git takes it to
/// update a packed ref) used to block every later seal for good; a lock
/// older than a live holder keeps one is removed.
#[test]
fn a_stale_packed_refs_lock_does_not_block_sealing() {
    let repo = TestRepo::new();
    repo.record("s1", "note", "before git packs the ref");
    repo.memlog(&["seal", "--all"]).ok();
    repo.git(&["pack-refs", "--all"]).ok();
    let lock = repo.path().join(".git/packed-refs.lock");
    let file = std::fs::File::create(&lock).unwrap();
    let old = std::time::SystemTime::now() - Duration::from_secs(60);
    file.set_modified(old).unwrap();
    drop(file);
    let id = repo.record("s2", "note", "after a crash left the lock");
    repo.memlog(&["seal", "--all"]).ok();
    assert!(id_counts(&repo).contains_key(&id));
    assert!(!lock.exists());
    assert_fsck_clean(&repo);
}

/// A machine with no git identity (a container, CI, a fresh laptop):
/// memlog's commits take the documented fallback, and a seal neither
/// retries nor fails.
#[test]
fn seal_without_a_git_identity() {
    let repo = TestRepo::new();
    let home = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let out = memlog_command(repo.path())
            .env_remove("GIT_COMMITTER_NAME")
            .env_remove("GIT_COMMITTER_EMAIL")
            .env_remove("GIT_AUTHOR_NAME")
            .env_remove("GIT_AUTHOR_EMAIL")
            .env_remove("EMAIL")
            .env("HOME", home.path())
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "memlog {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(&[
        "record",
        "--session",
        "s1",
        "--kind",
        "note",
        "--text",
        "hello",
    ]);
    let t = std::time::Instant::now();
    run(&["seal", "--all"]);
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    let who = repo.git(&["log", "-1", "--format=%cn <%ce>", "memlog"]);
    assert_eq!(who.stdout().trim(), "memlog <memlog@localhost>");
    assert_fsck_clean(&repo);
}

/// A user's own branch named `memlog` (code, not memory) is never written
/// on: the seal refuses, naming what gives it away, the session stays in
/// its journal, and once the branch is renamed it seals on a ref of its own.
#[test]
fn a_users_own_branch_named_memlog_is_left_alone() {
    let repo = TestRepo::new();
    repo.git(&["branch", "memlog"]).ok();
    let before = repo.git(&["rev-parse", "memlog"]).stdout();
    // said at install, not only at the first session's end
    let installed = repo.memlog(&["install", "claude"]).ok();
    assert!(
        installed.stderr().contains("is not memlog's log"),
        "{}",
        installed.stderr()
    );
    repo.record("s1", "user_prompt", "keep the feature flag off");
    repo.hook("SessionEnd", "s1", serde_json::json!({"reason": "exit"}));
    assert_eq!(repo.git(&["rev-parse", "memlog"]).stdout(), before);
    let refused = repo.memlog(&["seal", "--all"]);
    assert_ne!(refused.code(), Some(0), "{}", refused.stderr());
    assert!(
        refused
            .stderr()
            .contains("refs/heads/memlog is not memlog's log: its tree holds README.md"),
        "{}",
        refused.stderr()
    );
    assert_eq!(repo.git(&["rev-parse", "memlog"]).stdout(), before);
    // nor does a purge rewrite it
    let purge = repo.memlog(&["purge"]);
    assert!(
        purge.stderr().contains("is not memlog's log"),
        "{}",
        purge.stderr()
    );
    assert_eq!(repo.git(&["rev-parse", "memlog"]).stdout(), before);
    repo.git(&["branch", "-m", "memlog", "my-work"]).ok();
    repo.memlog(&["seal", "--all"]).ok();
    assert_eq!(repo.git(&["rev-parse", "my-work"]).stdout(), before);
    let events = repo.session_events("s1");
    assert!(
        events
            .iter()
            .any(|e| e["body"]["text"] == "keep the feature flag off"),
        "{events:#?}"
    );
    assert_eq!(repo.memlog_commits().len(), 1);
}

/// Overwrites `len` bytes of `file` at `at` with garbage, as a failing disk
/// or a stray write would.
fn scribble(file: &std::path::Path, at: u64, len: usize) {
    use std::io::{Seek, SeekFrom, Write};
    let mut f = std::fs::OpenOptions::new().write(true).open(file).unwrap();
    f.seek(SeekFrom::Start(at)).unwrap();
    let garbage: Vec<u8> = (0..len).map(|i| (i * 7 + 13) as u8).collect();
    f.write_all(&garbage).unwrap();
}

/// A damaged index database is rebuilt by the next command that reads it,
/// as damaged full-text files are, and a damaged embedding cache starts
/// afresh: both failed every command (or every index run) until a person
/// ran the right one (a field test).
#[test]
fn damaged_databases_of_the_index_are_made_again_unasked() {
    let repo = TestRepo::new();
    for i in 0..40 {
        repo.record(
            &format!("s{i}"),
            "note",
            &format!("the wombat counter is {i}"),
        );
    }
    repo.memlog(&["seal", "--all"]).ok();
    repo.memlog(&["index"]).ok();
    let index = repo.path().join(".git/memlog/index");
    for extra in ["graph.sqlite-wal", "graph.sqlite-shm"] {
        let _ = std::fs::remove_file(index.join(extra));
    }
    scribble(&index.join("graph.sqlite"), 4096, 2048);
    let found = repo.memlog(&["search", "wombat", "--mode", "fts"]);
    assert_eq!(found.code(), Some(0), "{}", found.stderr());
    assert!(
        found.stdout().contains("wombat counter"),
        "{}",
        found.stdout()
    );
    assert!(
        found.stderr().contains("index rebuilt"),
        "{}",
        found.stderr()
    );
    if memlog_e2e::model_installed() {
        let cache = repo.path().join(".git/memlog/embeddings.sqlite");
        assert!(cache.exists());
        scribble(&cache, 100, 3000);
        repo.record("s-late", "note", "one more wombat");
        let indexed = repo.memlog(&["index"]);
        assert_eq!(indexed.code(), Some(0), "{}", indexed.stderr());
        assert!(
            indexed.stderr().contains("starting it afresh"),
            "{}",
            indexed.stderr()
        );
        // vectors cut short: searched without them until a catch-up
        let vectors = index.join("vectors/vectors.bin");
        let len = std::fs::metadata(&vectors).unwrap().len();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&vectors)
            .unwrap()
            .set_len(len - 100)
            .unwrap();
        let found = repo.memlog(&["search", "wombat"]);
        assert_eq!(found.code(), Some(0), "{}", found.stderr());
        assert!(found.stdout().contains("wombat"), "{}", found.stdout());
    }
}

/// A hook that could not record (a full disk, a store it cannot write) is
/// named by doctor afterwards, with how to bring the session back: the
/// agent is never told, and doctor said all was fine once space was back
/// (a field test).
#[test]
fn doctor_names_hooks_that_failed_to_record() {
    let repo = TestRepo::new();
    repo.record("s0", "note", "an earlier note");
    repo.memlog(&["seal", "--all"]).ok();
    let quiet = repo.memlog(&["doctor", "--json"]).json();
    assert_eq!(quiet["hook_failures"]["last_7_days"], 0, "{quiet:#}");
    // the journal folder cannot be written: a file stands where it goes
    let journal = repo.path().join(".git/memlog/journal");
    let _ = std::fs::remove_dir_all(&journal);
    std::fs::write(&journal, "not a folder").unwrap();
    repo.hook(
        "UserPromptSubmit",
        "lost",
        serde_json::json!({"prompt": "rotate the staging keys"}),
    );
    std::fs::remove_file(&journal).unwrap();
    let doctor = repo.memlog(&["doctor"]).stdout();
    assert!(
        doctor.contains("failed 1 time(s)") && doctor.contains("memlog import"),
        "{doctor}"
    );
}
