//! Writers of the memlog history against a purge.
//!
//! Seals and syncs write objects and move the ref by compare-and-swap; they
//! run side by side. A purge rewrites the history and then prunes every
//! object no ref reaches (`git gc --prune=now`): a tree a seal has just
//! written, or an old one it reuses, can be deleted under it, leaving the
//! ref on a commit with missing trees (`memlog-bench --kills` found it).
//! So seals and syncs hold `history.lock` shared and a purge holds it
//! exclusively; and because a purge killed mid-way leaves its `git gc`
//! running, a writer also waits while a live `git gc` holds the repository
//! (`gc.pid`).

use std::fs::{File, OpenOptions};
use std::time::{Duration, Instant};

use crate::{Error, Repo, Result};

/// How long a writer waits for a running `git gc` before going ahead.
const GC_WAIT: Duration = Duration::from_secs(120);

/// The lock, held until dropped.
pub(crate) struct HistoryLock {
    _file: File,
}

fn open(repo: &Repo) -> Result<File> {
    let path = repo.layout().history_lock();
    repo.create_memlog_dir()?;
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| Error::io(&path, e))?;
    // every user of a shared repository takes this lock
    repo.sharing()
        .apply(&path)
        .map_err(|e| Error::io(&path, e))?;
    Ok(file)
}

/// Held by a seal or a sync: many at once, none during a purge.
pub(crate) fn shared(repo: &Repo) -> Result<HistoryLock> {
    let file = open(repo)?;
    file.lock_shared()
        .map_err(|e| Error::io(repo.layout().history_lock(), e))?;
    wait_for_gc(repo);
    Ok(HistoryLock { _file: file })
}

/// Held by a purge: alone.
pub(crate) fn exclusive(repo: &Repo) -> Result<HistoryLock> {
    let file = open(repo)?;
    file.lock()
        .map_err(|e| Error::io(repo.layout().history_lock(), e))?;
    Ok(HistoryLock { _file: file })
}

/// Waits (up to [`GC_WAIT`]) while `gc.pid` names a live `git gc`.
fn wait_for_gc(repo: &Repo) {
    let pid_file = repo.common_dir.join("gc.pid");
    let started = Instant::now();
    while started.elapsed() < GC_WAIT && gc_is_running(&pid_file) {
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `gc.pid` holds `<pid> <host>` while git gc runs (git removes it at exit;
/// a killed gc leaves it behind, which git itself ignores after 12 hours).
fn gc_is_running(pid_file: &std::path::Path) -> bool {
    let Ok(text) = std::fs::read_to_string(pid_file) else {
        return false;
    };
    let Some(pid) = text.split_whitespace().next() else {
        return false;
    };
    if cfg!(target_os = "linux") {
        return std::path::Path::new("/proc").join(pid).exists();
    }
    // elsewhere: trust a recent pid file
    std::fs::metadata(pid_file)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|m| m.elapsed().ok())
        .is_some_and(|age| age < GC_WAIT)
}
