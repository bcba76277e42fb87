//! `memlog watch`, end to end: the real binary as a child process on real
//! repositories, changed by `memlog` and by git itself.
//!
//! Read commands (`search`, `sql`) bring the index up to date on their own,
//! so they cannot tell whether the watcher did. These tests read the index
//! database directly, read-only, and only ever look at what the watcher
//! wrote: the indexed commit, and the events with where they were indexed
//! from (`journal` while live, `log` once their segment was indexed).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use memlog_e2e::{TestRepo, memlog_command};
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use serde_json::Value;

const TIMEOUT: Duration = Duration::from_secs(10);

/// A running `memlog watch --json`, killed when dropped (also when a test
/// panics), with its output collected by reader threads.
struct WatchChild {
    child: Child,
    lines: Arc<Mutex<Vec<Value>>>,
    stderr: Arc<Mutex<String>>,
}

impl WatchChild {
    /// Starts the watcher and waits for its first index run, so that its
    /// watches are in place before the test changes anything.
    fn start(repo: &TestRepo) -> WatchChild {
        let mut child = memlog_command(repo.path())
            .args(["watch", "--json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn memlog watch");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let stderr = Arc::new(Mutex::new(String::new()));
        if let Some(out) = child.stdout.take() {
            let lines = Arc::clone(&lines);
            thread::spawn(move || {
                for line in BufReader::new(out).lines().map_while(Result::ok) {
                    let value = serde_json::from_str(&line)
                        .unwrap_or_else(|e| panic!("bad JSON line from watch ({e}): {line}"));
                    lines.lock().expect("lines").push(value);
                }
            });
        }
        if let Some(err) = child.stderr.take() {
            let stderr = Arc::clone(&stderr);
            thread::spawn(move || {
                for line in BufReader::new(err).lines().map_while(Result::ok) {
                    let mut s = stderr.lock().expect("stderr");
                    s.push_str(&line);
                    s.push('\n');
                }
            });
        }
        let watcher = WatchChild {
            child,
            lines,
            stderr,
        };
        watcher.wait_for("the first index run", || !watcher.runs().is_empty());
        watcher
    }

    /// Every index run reported so far.
    fn runs(&self) -> Vec<Value> {
        self.lines.lock().expect("lines").clone()
    }

    /// Polls `done` every 20 ms for up to [`TIMEOUT`].
    fn wait_for(&self, what: &str, mut done: impl FnMut() -> bool) {
        let deadline = Instant::now() + TIMEOUT;
        while !done() {
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}\nwatch runs:\n{}\nwatch stderr:\n{}",
                self.runs()
                    .iter()
                    .map(Value::to_string)
                    .collect::<Vec<_>>()
                    .join("\n"),
                self.stderr.lock().expect("stderr")
            );
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until the watcher indexed the memlog ref's current tip.
    fn wait_for_tip(&self, repo: &TestRepo) {
        let tip = tip(repo);
        self.wait_for(&format!("commit {tip} to be indexed"), || {
            indexed_commit(repo).as_deref() == Some(tip.as_str())
        });
    }

    /// Waits until `event` is indexed from the sealed log.
    fn wait_for_sealed(&self, repo: &TestRepo, event: &str) {
        self.wait_for(&format!("event {event} to be indexed from the log"), || {
            event_source(repo, event).as_deref() == Some("log")
        });
    }

    fn failed_runs(&self) -> Vec<Value> {
        self.runs()
            .into_iter()
            .filter(|r| r.get("error").is_some())
            .collect()
    }
}

impl Drop for WatchChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn index_db(repo: &TestRepo) -> PathBuf {
    repo.path().join(".git/memlog/index/graph.sqlite")
}

/// The index database, read-only; `None` while it does not exist (before
/// the first run, or between a rebuild's directory swap).
fn open_index(repo: &TestRepo) -> Option<Connection> {
    let path = index_db(repo);
    if !path.exists() {
        return None;
    }
    Connection::open_with_flags(
        &path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .ok()
}

fn query_text(repo: &TestRepo, sql: &str, arg: &str) -> Option<String> {
    let db = open_index(repo)?;
    db.query_row(sql, [arg], |r| r.get::<_, String>(0))
        .optional()
        .ok()
        .flatten()
}

fn indexed_commit(repo: &TestRepo) -> Option<String> {
    query_text(
        repo,
        "SELECT value FROM meta WHERE key = ?1",
        "indexed_commit",
    )
}

/// Where the index has `event` from: `journal`, `log`, or nowhere.
fn event_source(repo: &TestRepo, event: &str) -> Option<String> {
    query_text(repo, "SELECT source FROM events WHERE id = ?1", event)
}

fn event_count(repo: &TestRepo) -> i64 {
    open_index(repo)
        .and_then(|db| {
            db.query_row("SELECT count(*) FROM events", [], |r| r.get(0))
                .ok()
        })
        .unwrap_or(-1)
}

fn tip(repo: &TestRepo) -> String {
    repo.git(&["rev-parse", "refs/heads/memlog"])
        .ok()
        .stdout()
        .trim()
        .to_string()
}

/// Records one event in `session` and seals it; returns the event id.
fn seal_one(repo: &TestRepo, session: &str, text: &str) -> String {
    let id = repo.record(session, "user_prompt", text);
    repo.memlog(&["seal", "--session", session]).ok();
    id
}

#[test]
fn a_sealed_session_becomes_searchable_without_a_read_command() {
    let repo = TestRepo::new();
    let watcher = WatchChild::start(&repo);
    let id = seal_one(
        &repo,
        "s1",
        "Why does reconcileLedger double count refunds?",
    );
    watcher.wait_for_tip(&repo);
    watcher.wait_for_sealed(&repo, &id);
    // The index is fresh, so search reads it as it is.
    let out = repo
        .memlog(&["search", "reconcileLedger", "--json"])
        .ok()
        .json();
    assert_eq!(out["hits"][0]["id"], id.as_str());
    assert_eq!(watcher.failed_runs(), Vec::<Value>::new());
}

#[test]
fn a_git_fetch_of_a_teammates_memlog_is_picked_up() {
    let (_remote, me, teammate) = TestRepo::teammates();
    let watcher = WatchChild::start(&me);
    watcher.wait_for_tip(&me);
    let theirs = seal_one(
        &teammate,
        "theirs",
        "the flaky test is test_upload_retry, it needs a mock clock",
    );
    teammate.git(&["push", "-q", "origin", "memlog"]).ok();
    // git itself moves the ref: no memlog command runs in `me`
    me.git(&["fetch", "-q", "origin", "memlog:memlog"]).ok();
    watcher.wait_for_tip(&me);
    watcher.wait_for_sealed(&me, &theirs);
    assert_eq!(watcher.failed_runs(), Vec::<Value>::new());
}

#[test]
fn a_deleted_index_is_rebuilt_on_the_next_change() {
    let repo = TestRepo::new();
    let watcher = WatchChild::start(&repo);
    let first = seal_one(&repo, "s1", "first session");
    watcher.wait_for_sealed(&repo, &first);
    // The watcher may still be writing into it (vectors catching up, an
    // idle checkpoint): a file created meanwhile fails one removal.
    let index = repo.path().join(".git/memlog/index");
    let mut attempts = 0;
    while let Err(e) = std::fs::remove_dir_all(&index) {
        attempts += 1;
        assert!(attempts < 100, "removing {}: {e}", index.display());
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let second = seal_one(&repo, "s2", "second session");
    watcher.wait_for_tip(&repo);
    watcher.wait_for_sealed(&repo, &second);
    // the first session is back in the index: rebuilt by the run the
    // change started, or, on a loaded machine, by another of the watcher's
    // threads that found the index gone first (its run then only updates)
    assert_eq!(event_source(&repo, &first).as_deref(), Some("log"));
    assert_eq!(watcher.failed_runs(), Vec::<Value>::new());
}

#[test]
fn seals_after_git_gc_are_picked_up() {
    let repo = TestRepo::new();
    let watcher = WatchChild::start(&repo);
    let first = seal_one(&repo, "s1", "before gc");
    watcher.wait_for_sealed(&repo, &first);
    repo.git(&["gc", "-q"]).ok();
    // the scenario is real: the ref now lives in packed-refs and the
    // segments in a pack
    let loose_ref = repo.path().join(".git/refs/heads/memlog");
    assert!(!loose_ref.exists(), "git gc packed the memlog ref");
    let packed = std::fs::read_to_string(repo.path().join(".git/packed-refs")).unwrap();
    assert!(packed.contains("refs/heads/memlog"));
    let loose = repo.git(&["count-objects", "-v"]).ok().stdout();
    assert!(loose.contains("count: 0"), "{loose}");
    let second = seal_one(&repo, "s2", "after gc");
    watcher.wait_for_tip(&repo);
    watcher.wait_for_sealed(&repo, &second);
    assert_eq!(watcher.failed_runs(), Vec::<Value>::new());
}

#[test]
fn a_burst_of_thousands_of_events_coalesces_into_few_runs() {
    let repo = TestRepo::new();
    repo.memlog(&["init"]).ok();
    let watcher = WatchChild::start(&repo);
    let runs_before = watcher.runs().len();
    // 2,000 appends, each its own locked and fsynced write to the journal,
    // as a busy agent session would make them.
    let core = memlog_store::Repo::discover(repo.path()).unwrap();
    let recorder = memlog_store::Recorder::new(&core).unwrap();
    for i in 0..2000 {
        let draft = memlog_format::Draft::text(
            "burst",
            memlog_format::time::now(),
            memlog_format::Kind::ToolObservation,
            "demo",
            format!("observation {i}: edited src/module_{}.rs", i % 37),
        );
        recorder.record(vec![draft]).unwrap();
    }
    watcher.wait_for("all 2,000 events to be indexed", || {
        event_count(&repo) == 2000
    });
    // The same burst sealed at once, then 2,000 more through an import of
    // 100 sessions (100 commits).
    repo.memlog(&["seal", "--all"]).ok();
    let file = repo.path().join("burst.jsonl");
    let mut text = String::new();
    for i in 0..2000 {
        text.push_str(&format!(
            "{{\"session\":\"import-{}\",\"ts\":\"2026-01-01T00:{:02}:{:02}Z\",\"kind\":\"note\",\"text\":\"imported note {i}\"}}\n",
            i / 20,
            (i / 60) % 60,
            i % 60
        ));
    }
    std::fs::write(&file, text).unwrap();
    repo.memlog(&["import", "jsonl", file.to_str().unwrap()])
        .ok();
    watcher.wait_for_tip(&repo);
    watcher.wait_for("all 4,000 events to be indexed", || {
        event_count(&repo) == 4000
    });
    let runs = watcher.runs().len() - runs_before;
    eprintln!("{runs} index runs for 4,000 events and 101 commits");
    assert!(
        runs <= 100,
        "{runs} index runs for 4,000 events and 101 commits: bursts must coalesce"
    );
    assert_eq!(watcher.failed_runs(), Vec::<Value>::new());
}

#[test]
fn watch_once_indexes_and_exits() {
    let repo = TestRepo::new();
    let sealed = seal_one(&repo, "s1", "sealed before anyone indexed");
    let live = repo.record("s2", "note", "still in a journal");
    let out = repo.memlog(&["watch", "--once", "--json"]).ok();
    let runs = out.json_lines();
    assert_eq!(runs.len(), 1, "{}", out.stdout());
    assert_eq!(runs[0]["events_added"], 2);
    assert_eq!(runs[0]["commit"], tip(&repo).as_str());
    assert_eq!(event_source(&repo, &sealed).as_deref(), Some("log"));
    assert_eq!(event_source(&repo, &live).as_deref(), Some("journal"));
    // and as text, with nothing new
    let out = repo.memlog(&["watch", "--once"]).ok();
    assert!(
        out.stdout().contains("indexed 0 new events"),
        "{}",
        out.stdout()
    );
}

#[test]
fn watch_outside_a_repository_fails_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let out = memlog_e2e::run(memlog_command(dir.path()).args(["watch", "--once"]));
    assert_eq!(out.code(), Some(1));
    assert!(out.stderr().contains("error:"), "{}", out.stderr());
}

/// `child`'s stderr, once it has exited.
fn stderr_of(child: &mut Child) -> String {
    use std::io::Read;
    let mut err = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        pipe.read_to_string(&mut err).expect("read stderr");
    }
    err
}

#[test]
fn one_watcher_runs_per_repository() {
    let repo = TestRepo::new();
    // Two sessions starting at once each start one, as SessionStart does
    // (neither sees the other's socket yet): one stays, the other leaves
    // without a word.
    let spawn_hook_started = || {
        memlog_command(repo.path())
            .args(["watch", "--idle-exit", "1"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn memlog watch")
    };
    let mut pair = [spawn_hook_started(), spawn_hook_started()];
    let started = Instant::now();
    let (left, status) = loop {
        let done = (0..2).find_map(|i| pair[i].try_wait().expect("try_wait").map(|s| (i, s)));
        if let Some(done) = done {
            break done;
        }
        assert!(started.elapsed() < TIMEOUT, "neither of the two left");
        thread::sleep(Duration::from_millis(20));
    };
    let stayed = 1 - left;
    let err = stderr_of(&mut pair[left]);
    assert!(status.success(), "the one that leaves exits 0: {err}");
    assert!(err.is_empty(), "and says nothing: {err}");
    thread::sleep(Duration::from_millis(500));
    assert!(
        pair[stayed].try_wait().expect("try_wait").is_none(),
        "the other keeps running: {}",
        stderr_of(&mut pair[stayed])
    );
    let lock = std::fs::read_to_string(repo.path().join(".git/memlog/watch.lock")).unwrap();
    assert_eq!(
        lock.trim(),
        pair[stayed].id().to_string(),
        "the lock names it"
    );

    // One started by hand meanwhile is refused, naming the one that runs.
    let out = memlog_e2e::run(memlog_command(repo.path()).args(["watch"]));
    assert_eq!(out.code(), Some(1), "{}", out.stderr());
    let expected = format!(
        "memlog watch already runs for this repository (pid {},",
        pair[stayed].id()
    );
    assert!(out.stderr().contains(&expected), "{}", out.stderr());
    // and `memlog doctor` names it, once its socket answers
    let socket = repo.path().join(".git/memlog/warm.sock");
    let started = Instant::now();
    while std::os::unix::net::UnixStream::connect(&socket).is_err() {
        assert!(started.elapsed() < TIMEOUT, "the watcher never answered");
        thread::sleep(Duration::from_millis(50));
    }
    let doctor = repo.memlog(&["doctor", "--json"]).json();
    let ranking = doctor["hook_path"]["ranking"].as_str().unwrap_or_default();
    assert!(
        ranking.contains(&format!("`memlog watch` (pid {})", pair[stayed].id())),
        "{doctor}"
    );

    // Once it is gone (killed: no clean exit), the next one takes over.
    pair[stayed].kill().unwrap();
    pair[stayed].wait().unwrap();
    let mut next = spawn_hook_started();
    thread::sleep(Duration::from_millis(500));
    assert!(next.try_wait().unwrap().is_none(), "the next one runs");
    next.kill().unwrap();
    let _ = next.wait();
}

/// CPU time (user + system) of a process so far, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // the fields after the command name, which is in parentheses
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let field = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    field(11) + field(12)
}

/// While a failed run waits for its retry, the watcher sleeps: a
/// checkpoint time gone by made its wait zero, and it burnt a core
/// (seen with a store that turned read-only).
#[test]
fn a_failing_index_run_waits_for_its_retry_without_spinning() {
    if !std::path::Path::new("/proc/self/stat").exists() {
        eprintln!("skipped: no /proc to read the watcher's CPU time from");
        return;
    }
    let repo = TestRepo::new();
    let watcher = WatchChild::start(&repo);
    seal_one(&repo, "s1", "the first session indexes fine");
    watcher.wait_for_tip(&repo);
    // an index that cannot be written: every run fails from now on
    let Some(_immutable) = memlog_e2e::Immutable::set(&repo.path().join(".git/memlog/index"))
    else {
        eprintln!("skipped: chattr +i does not work here");
        return;
    };
    seal_one(&repo, "s2", "this one cannot be indexed");
    watcher.wait_for("a failed run", || !watcher.failed_runs().is_empty());
    // past the checkpoint the last good run set, while retries back off
    thread::sleep(Duration::from_millis(2500));
    let before = cpu_ticks(watcher.child.id());
    thread::sleep(Duration::from_secs(2));
    let used = cpu_ticks(watcher.child.id()) - before;
    // clock ticks are 1/100 s: a spinning loop uses ~200 in 2 s
    assert!(
        used < 60,
        "the watcher used {used} ticks of CPU in 2 s while waiting"
    );
}

/// A warm server of another build (the memlog of before an upgrade, still
/// running: here the same program copied to another file) is not taken at
/// its word: the prompt hook ranks on its own and gets the memory the old
/// one may not find, and the old server is stopped (a field test: the old
/// watcher kept answering the new hooks, without the new tokenizer, and
/// every use kept it alive).
#[test]
fn a_warm_server_of_another_build_is_not_used_and_is_stopped() {
    let repo = TestRepo::new();
    repo.memlog(&["note", "担当は佐藤さんです: the billing module"])
        .ok();
    repo.memlog(&["index"]).ok();
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("memlog-other-build");
    std::fs::copy(memlog_e2e::memlog_bin(), &other).unwrap();
    let mut old = None;
    for _ in 0..50 {
        // a copy just written may still be busy for a moment (ETXTBSY)
        match std::process::Command::new(&other)
            .current_dir(repo.path())
            .env_remove("CLAUDE_PROJECT_DIR")
            .env_remove("GEMINI_PROJECT_DIR")
            .args(["watch", "--idle-exit", "5"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
        {
            Ok(child) => {
                old = Some(child);
                break;
            }
            Err(_) => thread::sleep(Duration::from_millis(100)),
        }
    }
    let mut old = old.expect("start the other build's watch");
    let socket = repo.path().join(".git/memlog/warm.sock");
    let started = Instant::now();
    while std::os::unix::net::UnixStream::connect(&socket).is_err() {
        assert!(
            started.elapsed() < TIMEOUT,
            "the other build never answered"
        );
        thread::sleep(Duration::from_millis(50));
    }
    // `memlog doctor` does not call it warm (a field test: it named the
    // old build's watcher as the one answering the hooks)
    let doctor = repo.memlog(&["doctor", "--json"]).json();
    assert_eq!(doctor["hook_path"]["path"], "local", "{doctor}");
    let ranking = doctor["hook_path"]["ranking"].as_str().unwrap_or_default();
    assert!(ranking.contains("another build"), "{doctor}");
    assert!(
        old.try_wait().unwrap().is_none(),
        "doctor leaves it running"
    );
    std::fs::write(
        repo.path().join(".memlog.yaml"),
        "hooks:\n  inject_budget_ms: 20000\n",
    )
    .unwrap();
    let injected = repo.hook(
        "UserPromptSubmit",
        "asker",
        serde_json::json!({"prompt": "佐藤さんに確認して", "transcript_path": "/nonexistent.jsonl"}),
    );
    assert!(injected.contains("佐藤さん"), "{injected}");
    let started = Instant::now();
    while old.try_wait().unwrap().is_none() {
        assert!(
            started.elapsed() < TIMEOUT,
            "the other build's server still runs"
        );
        thread::sleep(Duration::from_millis(50));
    }
}
