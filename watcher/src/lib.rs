//! # memlog-watcher
//!
//! Keeps a repository's projections fresh while it runs, so that searches
//! and context injection never pay for indexing themselves.
//!
//! Two things make the projections stale (see `memlog-indexer`): the memlog
//! ref moving (a seal, `git fetch`/`pull`, `memlog sync`, `git gc` packing
//! refs) and journals of live sessions growing. The [`Watcher`] asks the
//! operating system (notify: inotify, FSEvents, …) to report changes in the
//! few directories where those happen — see [`WatchTargets`] — and, once the
//! changes have settled, runs the incremental indexer
//! ([`memlog_indexer::Projections::update`]).
//!
//! How it stays cheap and robust:
//!
//! - **Directories, not files.** Git and memlog replace files by renaming a
//!   lock file over them, which would silently end a watch on the file
//!   itself. Every watch is on a directory, non-recursive, and events are
//!   filtered by path. A directory that does not exist yet (no journal
//!   before the first `record`) is watched through its nearest existing
//!   ancestor and armed when it appears; one that is deleted is re-armed.
//! - **Debounced.** An index run starts once no relevant change has arrived
//!   for [`Timing::quiet`], or at the latest [`Timing::max_delay`] after
//!   the first pending change, so a burst of thousands of appends becomes a
//!   handful of runs while a steady stream still gets indexed.
//! - **No polling.** The loop blocks on the event channel; its only timer
//!   is [`Timing::tick`], to look at the caller's stop condition. Reading
//!   files (our own index runs open journals and `packed-refs`) is ignored,
//!   so an index run never triggers another.
//! - **Nothing is cached between runs.** Each run opens the repository
//!   afresh (refs packed, objects repacked and `.memlog.yaml` changes are
//!   all seen) and the indexer rebuilds an index directory that was
//!   deleted. A failed run is reported and retried with a growing delay; the
//!   loop keeps going.
//!
//! The loop is a single thread reading one channel. Other threads talk to
//! it through a [`WatchHandle`] (stop it, ask for a run now).
//!
//! [`daemon`] is the whole of `memlog watch` around the loop: the embedding
//! model loaded once and shared, the [`warm`] server answering hooks (and
//! query embeddings) from open projections on a thread of its own, and a
//! vector thread that catches vectors up after each run, so that full-text
//! indexing never waits for the model.

pub mod daemon;
pub mod model;
pub mod warm;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use memlog_indexer::{IndexReport, Projections};
use memlog_store::Repo;
use notify::event::{EventKind, ModifyKind};
use notify::{RecommendedWatcher, RecursiveMode, Watcher as _};

/// Errors of the watcher.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The repository could not be opened.
    #[error(transparent)]
    Repo(#[from] memlog_store::Error),

    /// The indexer failed.
    #[error(transparent)]
    Index(#[from] memlog_indexer::Error),

    /// The operating system refused a watch.
    #[error("cannot watch {path}: {source}")]
    Watch {
        /// The directory.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: notify::Error,
    },

    /// The git directory itself is gone.
    #[error("the git directory {0} no longer exists")]
    RepoGone(PathBuf),

    /// An operation of the daemon (loading the model, vectors) failed.
    #[error(transparent)]
    Ops(#[from] memlog_ops::Error),

    /// Another `memlog watch` runs for this repository.
    #[error(
        "memlog watch already runs for this repository (pid {pid}, holding {}); stop it first",
        lock.display()
    )]
    AlreadyWatching {
        /// Its process id, as written in the lock file ("?" when unreadable).
        pid: String,
        /// The lock file.
        lock: PathBuf,
    },

    /// The lock file of the watcher could not be opened or locked.
    #[error("cannot lock {path}: {source}")]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },

    /// The warm server's socket could not be bound.
    #[error("cannot listen on {path}: {source}")]
    Socket {
        /// The socket file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// The result of a watcher operation.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// When index runs happen.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// A run starts once no relevant change arrived for this long.
    pub quiet: Duration,
    /// …or at the latest this long after the first pending change, so that
    /// a session appending without pause is still indexed.
    pub max_delay: Duration,
    /// How often the stop condition given to [`Watcher::run`] is looked
    /// at while nothing happens.
    pub tick: Duration,
    /// First delay before retrying a failed run; it doubles up to
    /// `max_retry`.
    pub retry: Duration,
    /// The longest delay between retries.
    pub max_retry: Duration,
    /// After a run, once nothing changed for this long, the database's
    /// write-ahead log is copied into it ([`Projections::checkpoint`]):
    /// updates leave that work to idle time.
    pub checkpoint_after: Duration,
}

impl Default for Timing {
    fn default() -> Timing {
        Timing {
            quiet: Duration::from_millis(150),
            max_delay: Duration::from_secs(1),
            tick: Duration::from_secs(1),
            retry: Duration::from_secs(1),
            max_retry: Duration::from_secs(60),
            checkpoint_after: Duration::from_secs(2),
        }
    }
}

/// The files whose changes make the projections stale.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WatchTargets {
    /// The git common directory.
    pub common_dir: PathBuf,
    /// The loose memlog ref, `<common dir>/refs/heads/memlog` by default.
    pub ref_file: PathBuf,
    /// `<common dir>/packed-refs`, where `git gc` and `git pack-refs` move
    /// the ref.
    pub packed_refs: PathBuf,
    /// `<common dir>/memlog/journal`: any change of a file in it.
    pub journal_dir: PathBuf,
}

/// What a file-system event means for the watcher.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Relevance {
    /// Nothing the projections depend on (a read, another ref, the index).
    Ignore,
    /// The ref or a journal changed: index.
    Index,
    /// A watched directory, or one on the way to a target, appeared,
    /// vanished or moved (or events were lost): arm the watches again, and
    /// index.
    Rearm,
}

impl WatchTargets {
    /// The targets of a repository (with its configured ref name).
    pub fn of(repo: &Repo) -> WatchTargets {
        WatchTargets {
            common_dir: repo.common_dir.clone(),
            ref_file: repo.common_dir.join(repo.ref_name()),
            packed_refs: repo.common_dir.join("packed-refs"),
            journal_dir: repo.journal_dir(),
        }
    }

    /// The directories whose entries hold the targets.
    fn target_dirs(&self) -> [&Path; 3] {
        [
            self.ref_file.parent().unwrap_or(&self.common_dir),
            &self.common_dir,
            &self.journal_dir,
        ]
    }

    /// The directories to watch (non-recursively) right now: each target's
    /// directory, or its nearest existing ancestor within the git directory
    /// when it does not exist yet.
    pub fn dirs_to_watch(&self) -> Result<BTreeSet<PathBuf>> {
        if !self.common_dir.is_dir() {
            return Err(Error::RepoGone(self.common_dir.clone()));
        }
        let mut dirs = BTreeSet::new();
        for target in self.target_dirs() {
            let existing = target
                .ancestors()
                .take_while(|a| a.starts_with(&self.common_dir))
                .find(|a| a.is_dir())
                .unwrap_or(&self.common_dir);
            dirs.insert(existing.to_path_buf());
        }
        Ok(dirs)
    }

    /// What `event` means: see [`Relevance`].
    pub fn relevance(&self, event: &notify::Event) -> Relevance {
        if event.need_rescan() {
            return Relevance::Rearm;
        }
        match event.kind {
            // Reads (our own index runs open journals and packed-refs) and
            // metadata changes say nothing about content.
            EventKind::Access(_) | EventKind::Modify(ModifyKind::Metadata(_)) => {
                return Relevance::Ignore;
            }
            _ => {}
        }
        let mut relevance = Relevance::Ignore;
        for path in &event.paths {
            if self.target_dirs().iter().any(|t| t.starts_with(path)) {
                return Relevance::Rearm;
            }
            if *path == self.ref_file
                || *path == self.packed_refs
                || path.parent() == Some(self.journal_dir.as_path())
            {
                relevance = Relevance::Index;
            }
        }
        relevance
    }
}

/// One run of the indexer.
#[derive(Debug)]
pub struct IndexRun {
    /// Relevant file-system changes coalesced into this run (0 for the
    /// first run, a requested one or a retry).
    pub changes: usize,
    /// How long the run took.
    pub took: Duration,
    /// What the run did, or why it failed.
    pub outcome: Result<IndexReport>,
}

/// Indexes the repository containing `repo_path` once, without watching
/// (what `memlog watch --once` does: no OS watch is taken).
pub fn index_once(repo_path: &Path) -> IndexRun {
    let start = Instant::now();
    let outcome = Repo::discover(repo_path)
        .map_err(Error::from)
        .and_then(|repo| Ok(Projections::update(&repo)?));
    IndexRun {
        changes: 0,
        took: start.elapsed(),
        outcome,
    }
}

enum Message {
    Fs(notify::Result<notify::Event>),
    Refresh,
    Stop,
}

/// Talks to a running [`Watcher`] from another thread.
#[derive(Clone)]
pub struct WatchHandle {
    tx: Sender<Message>,
}

impl WatchHandle {
    /// Ends [`Watcher::run`] (after the current index run, if any).
    pub fn stop(&self) {
        let _ = self.tx.send(Message::Stop);
    }

    /// Asks for an index run now, without waiting for a change.
    pub fn refresh(&self) {
        let _ = self.tx.send(Message::Refresh);
    }
}

/// Watches one repository and keeps its projections fresh.
pub struct Watcher {
    repo_path: PathBuf,
    targets: WatchTargets,
    fs: RecommendedWatcher,
    /// Watched directories and their inode, to notice one replaced by a
    /// new directory of the same name.
    armed: BTreeMap<PathBuf, u64>,
    tx: Sender<Message>,
    rx: Receiver<Message>,
    timing: Timing,
}

impl Watcher {
    /// Opens the repository containing `repo_path` and starts watching it.
    /// Changes from now on are queued until [`Watcher::run`] handles them.
    pub fn new(repo_path: &Path) -> Result<Watcher> {
        let repo = Repo::discover(repo_path)?;
        let (tx, rx) = mpsc::channel();
        let fs_tx = tx.clone();
        let fs = notify::recommended_watcher(move |event| {
            let _ = fs_tx.send(Message::Fs(event));
        })
        .map_err(|source| Error::Watch {
            path: repo.common_dir.clone(),
            source,
        })?;
        let mut watcher = Watcher {
            repo_path: std::fs::canonicalize(repo_path).unwrap_or_else(|_| repo_path.into()),
            targets: WatchTargets::of(&repo),
            fs,
            armed: BTreeMap::new(),
            tx,
            rx,
            timing: Timing::default(),
        };
        watcher.arm()?;
        Ok(watcher)
    }

    /// Replaces the default [`Timing`].
    pub fn with_timing(mut self, timing: Timing) -> Watcher {
        self.timing = timing;
        self
    }

    /// What is watched.
    pub fn targets(&self) -> &WatchTargets {
        &self.targets
    }

    /// The directories currently watched.
    pub fn watched_dirs(&self) -> impl Iterator<Item = &Path> {
        self.armed.keys().map(PathBuf::as_path)
    }

    /// A handle to stop the loop or ask for a run from another thread.
    pub fn handle(&self) -> WatchHandle {
        WatchHandle {
            tx: self.tx.clone(),
        }
    }

    /// Indexes once, now, outside the loop.
    pub fn index_now(&mut self) -> IndexRun {
        self.index(0)
    }

    /// Indexes once (to catch up with what changed while nobody watched),
    /// then after every settled burst of changes, until `until()` is true
    /// or [`WatchHandle::stop`] is called. `on_update` sees every run,
    /// failed ones included; a failure does not end the loop.
    pub fn run(&mut self, until: impl Fn() -> bool, mut on_update: impl FnMut(&IndexRun)) {
        let mut schedule = Schedule {
            now: true,
            ..Schedule::default()
        };
        let mut retry_delay = self.timing.retry;
        let mut checkpoint_at: Option<Instant> = None;
        loop {
            if until() {
                return;
            }
            let now = Instant::now();
            let due = schedule.due(&self.timing, now);
            if due.is_some_and(|d| d <= now) {
                let changes = std::mem::take(&mut schedule).changes;
                let run = self.index(changes);
                if run.outcome.is_ok() {
                    retry_delay = self.timing.retry;
                    checkpoint_at = Some(Instant::now() + self.timing.checkpoint_after);
                } else {
                    schedule.retry_at = Some(Instant::now() + retry_delay);
                    retry_delay = (retry_delay * 2).min(self.timing.max_retry);
                }
                on_update(&run);
                continue;
            }
            if due.is_none() && checkpoint_at.is_some_and(|c| c <= now) {
                checkpoint_at = None;
                // Best effort: a failure here is retried after the next run,
                // and the next update checkpoints a log grown too large.
                let _ = self.checkpoint();
            }
            // The checkpoint waits for a moment with nothing due: while a
            // run is pending (a retry after a failure), a checkpoint time
            // already past made this wait zero and the loop spin.
            let timeout = due
                .or(checkpoint_at)
                .map(|d| d.saturating_duration_since(now))
                .unwrap_or(self.timing.tick)
                .min(self.timing.tick);
            match self.rx.recv_timeout(timeout) {
                Ok(Message::Fs(Ok(event))) => match self.targets.relevance(&event) {
                    Relevance::Ignore => {}
                    Relevance::Index => schedule.change(now),
                    Relevance::Rearm => {
                        self.disarm_gone(&event);
                        schedule.change(now);
                    }
                },
                // The OS lost track (queue overflow, a watch gone): arm
                // again and index, which also reports any lasting problem.
                Ok(Message::Fs(Err(_))) => {
                    self.armed.clear();
                    schedule.change(now);
                }
                Ok(Message::Refresh) => schedule.now = true,
                Ok(Message::Stop) => return,
                // Disconnection cannot happen: `self.tx` keeps the channel
                // open.
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {}
            }
        }
    }

    /// Opens the repository afresh, re-arms the watches and indexes.
    fn index(&mut self, changes: usize) -> IndexRun {
        let start = Instant::now();
        let outcome = self.rearm_and_update();
        IndexRun {
            changes,
            took: start.elapsed(),
            outcome,
        }
    }

    fn rearm_and_update(&mut self) -> Result<IndexReport> {
        let repo = Repo::discover(&self.repo_path)?;
        self.targets = WatchTargets::of(&repo);
        // Arm before indexing: whatever changes after the watch is set is
        // reported, whatever changed before it is indexed now.
        self.arm()?;
        Ok(Projections::update(&repo)?)
    }

    /// Copies the database's write-ahead log into it and empties it (so
    /// that no process opening the database reads it again), unless a
    /// writer is busy (then its own update takes care of a log grown too
    /// large).
    fn checkpoint(&self) -> Result<()> {
        let repo = Repo::discover(&self.repo_path)?;
        if let Some(_lock) = memlog_indexer::projection::WriterLock::try_acquire(&repo)? {
            Projections::open(&repo)?.empty_log()?;
        }
        Ok(())
    }

    /// Watches [`WatchTargets::dirs_to_watch`] and nothing else.
    fn arm(&mut self) -> Result<()> {
        // A directory can vanish between choosing it and watching it: then
        // choose again (its parent).
        let mut attempts = 0;
        loop {
            attempts += 1;
            match self.try_arm() {
                Err(Error::Watch { source, .. })
                    if attempts < 5 && matches!(source.kind, notify::ErrorKind::PathNotFound) => {}
                other => return other,
            }
        }
    }

    fn try_arm(&mut self) -> Result<()> {
        let wanted = self.targets.dirs_to_watch()?;
        let stale: Vec<PathBuf> = self
            .armed
            .keys()
            .filter(|d| !wanted.contains(*d))
            .cloned()
            .collect();
        for dir in stale {
            self.disarm(&dir);
        }
        for dir in wanted {
            let inode = inode(&dir);
            match self.armed.get(&dir) {
                Some(i) if *i == inode => continue,
                Some(_) => self.disarm(&dir),
                None => {}
            }
            self.fs
                .watch(&dir, RecursiveMode::NonRecursive)
                .map_err(|source| Error::Watch {
                    path: dir.clone(),
                    source,
                })?;
            self.armed.insert(dir, inode);
        }
        Ok(())
    }

    fn disarm(&mut self, dir: &Path) {
        self.armed.remove(dir);
        // The OS may have dropped the watch already (directory deleted).
        let _ = self.fs.unwatch(dir);
    }

    /// Forgets watches on directories that `event` removed or renamed (or
    /// whose ancestor it removed or renamed); the next run re-arms.
    fn disarm_gone(&mut self, event: &notify::Event) {
        if !matches!(
            event.kind,
            EventKind::Remove(_) | EventKind::Modify(ModifyKind::Name(_)) | EventKind::Other
        ) && !event.need_rescan()
        {
            return;
        }
        let gone: Vec<PathBuf> = self
            .armed
            .keys()
            .filter(|d| event.need_rescan() || event.paths.iter().any(|p| d.starts_with(p)))
            .cloned()
            .collect();
        for dir in gone {
            self.disarm(&dir);
        }
    }
}

/// Pending work of the loop.
#[derive(Default)]
struct Schedule {
    /// First and last relevant change not indexed yet.
    first: Option<Instant>,
    last: Option<Instant>,
    changes: usize,
    /// A run was asked for (start-up, [`WatchHandle::refresh`]).
    now: bool,
    /// A failed run is retried then.
    retry_at: Option<Instant>,
}

impl Schedule {
    fn change(&mut self, at: Instant) {
        self.first.get_or_insert(at);
        self.last = Some(at);
        self.changes += 1;
    }

    /// When the next run is due, if one is (`now` when it was asked for).
    fn due(&self, timing: &Timing, now: Instant) -> Option<Instant> {
        if self.now {
            return Some(now);
        }
        let settled = match (self.first, self.last) {
            (Some(first), Some(last)) => Some((last + timing.quiet).min(first + timing.max_delay)),
            _ => None,
        };
        match (settled, self.retry_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

#[cfg(unix)]
fn inode(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(dir).map(|m| m.ino()).unwrap_or(0)
}

#[cfg(not(unix))]
fn inode(_dir: &Path) -> u64 {
    0
}
