//! The watcher in-process, on real git repositories: which directories it
//! watches, what it makes of events, and the loop reacting to seals and
//! journals that appear after it started.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use memlog_format::{Draft, Kind};
use memlog_store::seal::{JournalSelection, seal_journals};
use memlog_store::{Recorder, Repo};
use memlog_watcher::{IndexRun, Relevance, Timing, WatchHandle, WatchTargets, Watcher};
use notify::event::{AccessKind, CreateKind, DataChange, EventKind, ModifyKind, RenameMode};

fn git_repo() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("memlog-watcher-")
        .tempdir()
        .expect("tempdir");
    let status = Command::new("git")
        .args(["init", "-q"])
        .current_dir(dir.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .status()
        .expect("git runs");
    assert!(status.success());
    dir
}

fn record(repo: &Repo, session: &str, text: &str) {
    let draft = Draft::text(
        session,
        memlog_format::time::now(),
        Kind::Note,
        "demo",
        text,
    );
    Recorder::new(repo)
        .expect("recorder")
        .record(vec![draft])
        .expect("record");
}

fn event(kind: EventKind, paths: &[&Path]) -> notify::Event {
    let mut e = notify::Event::new(kind);
    for p in paths {
        e = e.add_path(p.to_path_buf());
    }
    e
}

#[test]
fn watches_the_nearest_existing_directory_of_each_target() {
    let dir = git_repo();
    let repo = Repo::discover(dir.path()).unwrap();
    let targets = WatchTargets::of(&repo);
    let common = repo.common_dir.clone();
    assert_eq!(targets.ref_file, common.join("refs/heads/memlog"));
    // no memlog directory yet: the git directory stands in for the journal
    let dirs: Vec<PathBuf> = targets.dirs_to_watch().unwrap().into_iter().collect();
    assert_eq!(dirs, vec![common.clone(), common.join("refs/heads")]);
    repo.ensure_dirs().unwrap();
    let dirs: Vec<PathBuf> = targets.dirs_to_watch().unwrap().into_iter().collect();
    assert_eq!(
        dirs,
        vec![
            common.clone(),
            common.join("memlog/journal"),
            common.join("refs/heads")
        ]
    );
}

#[test]
fn only_changes_to_the_ref_packed_refs_and_journals_count() {
    let dir = git_repo();
    let repo = Repo::discover(dir.path()).unwrap();
    let t = WatchTargets::of(&repo);
    let common = repo.common_dir.clone();
    let journal = t.journal_dir.join("s1.jsonl");
    let lock = common.join("refs/heads/memlog.lock");
    let cases = [
        // a seal renames the lock over the ref
        (
            event(
                EventKind::Modify(ModifyKind::Name(RenameMode::Both)),
                &[&lock, &t.ref_file],
            ),
            Relevance::Index,
        ),
        (
            event(EventKind::Create(CreateKind::File), &[&lock]),
            Relevance::Ignore,
        ),
        (
            event(
                EventKind::Modify(ModifyKind::Name(RenameMode::To)),
                &[&t.packed_refs],
            ),
            Relevance::Index,
        ),
        (
            event(
                EventKind::Modify(ModifyKind::Data(DataChange::Any)),
                &[&journal],
            ),
            Relevance::Index,
        ),
        // our own index runs read journals and packed-refs
        (
            event(EventKind::Access(AccessKind::Any), &[&journal]),
            Relevance::Ignore,
        ),
        (
            event(EventKind::Access(AccessKind::Any), &[&t.packed_refs]),
            Relevance::Ignore,
        ),
        // other refs, git's own index, the projections
        (
            event(
                EventKind::Modify(ModifyKind::Name(RenameMode::To)),
                &[&common.join("refs/heads/main")],
            ),
            Relevance::Ignore,
        ),
        (
            event(
                EventKind::Modify(ModifyKind::Data(DataChange::Any)),
                &[&common.join("index")],
            ),
            Relevance::Ignore,
        ),
        (
            event(
                EventKind::Create(CreateKind::File),
                &[&common.join("memlog/index.lock")],
            ),
            Relevance::Ignore,
        ),
        // a directory on the way to a target appears
        (
            event(
                EventKind::Create(CreateKind::Folder),
                &[&common.join("memlog")],
            ),
            Relevance::Rearm,
        ),
        (
            event(EventKind::Create(CreateKind::Folder), &[&t.journal_dir]),
            Relevance::Rearm,
        ),
        (
            notify::Event::new(EventKind::Other).set_flag(notify::event::Flag::Rescan),
            Relevance::Rearm,
        ),
    ];
    for (e, expected) in cases {
        assert_eq!(t.relevance(&e), expected, "{e:?}");
    }
}

/// A watcher loop on its own thread, reporting each run.
struct Running {
    handle: WatchHandle,
    runs: mpsc::Receiver<Summary>,
    thread: Option<thread::JoinHandle<()>>,
}

#[derive(Debug)]
struct Summary {
    added: usize,
    rebuilt: bool,
    changes: usize,
    error: Option<String>,
}

impl Running {
    fn start(path: &Path) -> Running {
        let (handle_tx, handle_rx) = mpsc::channel();
        let (run_tx, runs) = mpsc::channel();
        let path = path.to_path_buf();
        let thread = thread::spawn(move || {
            let timing = Timing {
                quiet: Duration::from_millis(50),
                ..Timing::default()
            };
            let mut watcher = Watcher::new(&path).expect("watcher").with_timing(timing);
            handle_tx.send(watcher.handle()).expect("send handle");
            watcher.run(
                || false,
                |run: &IndexRun| {
                    let _ = run_tx.send(Summary {
                        added: run.outcome.as_ref().map_or(0, |r| r.events_added),
                        rebuilt: run.outcome.as_ref().is_ok_and(|r| r.rebuilt),
                        changes: run.changes,
                        error: run.outcome.as_ref().err().map(|e| e.to_string()),
                    });
                },
            );
        });
        let handle = handle_rx.recv().expect("watcher started");
        Running {
            handle,
            runs,
            thread: Some(thread),
        }
    }

    /// Waits for at least one run, and for runs until `added` events were
    /// indexed in total.
    fn wait_for_events(&self, added: usize) -> Vec<Summary> {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut seen = Vec::new();
        let mut total = 0;
        while total < added || seen.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.runs.recv_timeout(left) {
                Ok(s) => {
                    assert_eq!(s.error, None, "a run failed");
                    total += s.added;
                    seen.push(s);
                }
                Err(_) => panic!("only {total} of {added} events indexed; runs: {seen:?}"),
            }
        }
        seen
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.handle.stop();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[test]
fn indexes_journals_that_appear_after_start_and_seals() {
    let dir = git_repo();
    let watcher = Running::start(dir.path());
    // the first run catches up (nothing yet) and builds the index
    watcher.wait_for_events(0);
    let repo = Repo::discover(dir.path()).unwrap();
    assert!(!repo.journal_dir().exists());
    // the journal directory is created by this first record
    record(
        &repo,
        "late",
        "the journal directory appears after the watcher",
    );
    watcher.wait_for_events(1);
    record(&repo, "late", "and grows");
    watcher.wait_for_events(1);
    seal_journals(&repo, &JournalSelection::All).unwrap();
    // sealed events are already indexed (from the journal): a run happens,
    // adds nothing, and does not fail
    let run = watcher
        .runs
        .recv_timeout(Duration::from_secs(10))
        .expect("a run after the seal");
    assert_eq!(run.error, None);
    assert!(repo.common_dir.join("refs/heads/memlog").exists());
}

#[test]
fn an_index_run_does_not_trigger_another() {
    let dir = git_repo();
    let repo = Repo::discover(dir.path()).unwrap();
    repo.ensure_dirs().unwrap();
    record(&repo, "s", "one event");
    let watcher = Running::start(dir.path());
    let runs = watcher.wait_for_events(1);
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert!(runs[0].rebuilt, "the first run builds the index");
    // our own run opened journals, packed-refs and the index: none of it
    // may count as a change
    assert!(
        watcher
            .runs
            .recv_timeout(Duration::from_millis(1500))
            .is_err(),
        "the watcher ran again with nothing changed"
    );
}

#[test]
fn a_deleted_journal_directory_is_watched_again_when_it_returns() {
    let dir = git_repo();
    let repo = Repo::discover(dir.path()).unwrap();
    repo.ensure_dirs().unwrap();
    let watcher = Running::start(dir.path());
    watcher.wait_for_events(0);
    std::fs::remove_dir_all(repo.journal_dir()).unwrap();
    // the removal is a change (journals gone); let it settle
    let run = watcher
        .runs
        .recv_timeout(Duration::from_secs(10))
        .expect("a run after the removal");
    assert_eq!(run.error, None);
    assert!(run.changes >= 1);
    record(&repo, "back", "written into a new journal directory");
    watcher.wait_for_events(1);
}

#[test]
fn a_refresh_request_runs_at_once() {
    let dir = git_repo();
    let watcher = Running::start(dir.path());
    watcher.wait_for_events(0);
    // The first run created `.git/memlog`, which the watcher sees appear (it
    // is on the way to the journal directory): let that run pass.
    while watcher
        .runs
        .recv_timeout(Duration::from_millis(500))
        .is_ok()
    {}
    let repo = Repo::discover(dir.path()).unwrap();
    let start = Instant::now();
    watcher.handle.refresh();
    let run = watcher
        .runs
        .recv_timeout(Duration::from_secs(10))
        .expect("a requested run");
    assert_eq!(run.changes, 0);
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(memlog_indexer::projection::index_dir(&repo).exists());
}

#[test]
fn a_failed_run_is_reported_and_retried() {
    let dir = git_repo();
    let repo = Repo::discover(dir.path()).unwrap();
    repo.ensure_dirs().unwrap();
    record(&repo, "s", "indexed once the obstacle is gone");
    // A rebuild derives into `index.new-<pid>`; a file in its place makes
    // it fail (this test's process is the watcher's).
    let obstacle = repo
        .memlog_dir
        .join(format!("index.new-{}", std::process::id()));
    std::fs::write(&obstacle, "not a directory").unwrap();
    let watcher = Running::start(dir.path());
    let failed = watcher
        .runs
        .recv_timeout(Duration::from_secs(10))
        .expect("a first run");
    assert!(failed.error.is_some(), "{failed:?}");
    std::fs::remove_file(&obstacle).unwrap();
    // no change to the log: the retry alone brings the index up to date
    let retried = watcher.wait_for_events(1);
    assert!(retried.iter().any(|r| r.rebuilt), "{retried:?}");
}
