//! `memlog watch`: the watch loop with the embedding model loaded once and
//! shared by the [`warm`](crate::warm) server (query embeddings, hook
//! context) and a vector thread that catches vectors up after each index
//! run. The front-end gives what to do with each run (print it) and says
//! when to stop.

use std::path::Path;
use std::sync::{Arc, mpsc};
use std::time::Duration;

use memlog_ops::{diag, semantic, workspace};

use crate::model::{self, ModelSlot};
use crate::warm::{self, Activity};
use crate::{IndexRun, Result, Watcher};

/// How long a daemon waits, without a request or an index run, before it
/// lets go of something.
#[derive(Clone, Copy, Debug)]
pub struct IdleLimits {
    /// Before it exits (`None`: it runs until stopped).
    pub exit: Option<Duration>,
    /// Before it lets the embedding model go ([`ModelSlot`]).
    pub model: Duration,
}

/// Runs the daemon for the repository containing `dir`: `started` is told
/// the directories watched, `on_run` each index run, until `until` says to
/// stop, `idle.exit` passes without a request or an index run, or the
/// repository is gone (a deleted checkout).
pub fn run(
    dir: &Path,
    idle: IdleLimits,
    started: impl FnOnce(&Watcher),
    until: impl Fn() -> bool,
    mut on_run: impl FnMut(&IndexRun),
) -> Result<()> {
    let repo = workspace::open(dir)?;
    // One watcher per repository: a second would only index and embed
    // everything twice, and hold the model twice. Two sessions starting at
    // once both start one (neither sees the other's socket yet): the lock
    // decides, and the one started by a hook (with an idle exit) leaves
    // without a word.
    let _lock = match WatchLock::claim(&repo) {
        Err(crate::Error::AlreadyWatching { .. }) if idle.exit.is_some() => return Ok(()),
        other => other?,
    };
    let mut watcher = Watcher::new(dir)?;
    // The repository is gone when git's HEAD is: memlog's own directory
    // does not say it, since this process writes there (an index run, the
    // vector and native threads) and made it again after a test's
    // repository was deleted, leaving half-deleted ones in /tmp.
    let head = repo.common_dir.join("HEAD");
    model::map_large_blocks();
    let embedder = ModelSlot::load(dir, idle.model)?;
    let activity = Activity::default();
    start_warm_server(dir, embedder.clone(), activity.clone());
    let vector_wakeup = embedder.map(|e| start_vector_thread(dir, e));
    start_native_thread(dir);
    started(&watcher);
    let stop =
        || until() || idle.exit.is_some_and(|exit| activity.idle() >= exit) || !head.exists();
    watcher.run(stop, |run| {
        activity.touch();
        if let Some(tx) = &vector_wakeup {
            let _ = tx.send(());
        }
        on_run(run);
    });
    Ok(())
}

/// `watch.lock`, held (an advisory lock the system drops when the process
/// ends, however it ends) for as long as the watcher runs.
struct WatchLock {
    _file: std::fs::File,
}

impl WatchLock {
    fn claim(repo: &memlog_store::Repo) -> Result<WatchLock> {
        use std::io::{Read, Seek, Write};
        let path = repo.layout().watch_lock();
        let lock_error = |source| crate::Error::Lock {
            path: path.clone(),
            source,
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(lock_error)?;
        }
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .map_err(lock_error)?;
        // the next watcher may be another user's of a shared repository
        repo.sharing().apply(&path).map_err(lock_error)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut pid = String::new();
                let _ = file.read_to_string(&mut pid);
                let pid = pid.trim();
                return Err(crate::Error::AlreadyWatching {
                    pid: if pid.is_empty() { "?" } else { pid }.to_string(),
                    lock: path,
                });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(lock_error(e)),
        }
        // who holds it, for the message a second `memlog watch` gives
        file.set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| writeln!(file, "{}", std::process::id()))
            .map_err(lock_error)?;
        Ok(WatchLock { _file: file })
    }
}

/// The warm server, on a thread of its own (gix repositories are not
/// `Send`: the thread opens its own).
fn start_warm_server(dir: &Path, embedder: Option<Arc<ModelSlot>>, activity: Activity) {
    let repo_dir = dir.to_path_buf();
    std::thread::spawn(move || {
        let served = workspace::open(&repo_dir)
            .map_err(crate::Error::from)
            .and_then(|repo| warm::serve(&repo, embedder, activity));
        if let Err(e) = served {
            diag::warning(format_args!(
                "the hooks' warm path is off: {}",
                memlog_ops::error::chain(&e)
            ));
        }
    });
}

/// How often the agents' memory files (CLAUDE.md, AGENTS.md, MEMORY.md)
/// are looked at: a `stat` each, read only when they changed.
const NATIVE_POLL: Duration = Duration::from_secs(2);

/// Re-reads the agents' memory files when they change, on a thread of its
/// own (they live outside the directories the loop watches; what it
/// records moves the memlog ref, which the loop then indexes).
fn start_native_thread(dir: &Path) {
    let repo_dir = dir.to_path_buf();
    std::thread::spawn(move || {
        loop {
            if let Ok(repo) = workspace::open(&repo_dir)
                && memlog_ops::native::changed(&repo)
            {
                match memlog_ops::native::refresh(&repo) {
                    Ok(files) => {
                        for f in files.iter().filter(|f| f.status != "unchanged") {
                            eprintln!(
                                "native: {} {} (+{} paragraphs, -{})",
                                f.status, f.label, f.added, f.forgotten
                            );
                        }
                    }
                    Err(e) => diag::warning(format_args!(
                        "native memory files: {}",
                        memlog_ops::error::chain(&e)
                    )),
                }
            }
            std::thread::sleep(NATIVE_POLL);
        }
    });
}

/// Vectors catch up on a thread of their own, woken after each index run
/// (and once at the start), so that full-text indexing never waits for the
/// model. Between runs it lets an idle model go ([`ModelSlot::release_if_idle`]).
fn start_vector_thread(dir: &Path, embedder: Arc<ModelSlot>) -> mpsc::Sender<()> {
    let (tx, rx) = mpsc::channel::<()>();
    let repo_dir = dir.to_path_buf();
    std::thread::spawn(move || {
        let Ok(repo) = workspace::open(&repo_dir) else {
            return;
        };
        loop {
            match rx.recv_timeout(embedder.release_check()) {
                Ok(()) => {}
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    embedder.release_if_idle();
                    continue;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            }
            while rx.try_recv().is_ok() {}
            let mut model = embedder.on_demand();
            match semantic::catch_up_vectors(&repo, Some(&mut model), true) {
                Ok(Some(r)) if r.pending > 0 => eprintln!(
                    "vectors: {} events ({} embedded, {} from the cache)",
                    r.pending, r.embedded, r.cached
                ),
                Ok(_) => {}
                Err(e) => diag::warning(format_args!("vectors: {}", memlog_ops::error::chain(&e))),
            }
            // what the batches took, back to the system
            model::give_back_free_memory();
        }
    });
    let _ = tx.send(());
    tx
}
