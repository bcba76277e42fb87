//! The lock files of a log's ref, against writers that were killed.
//!
//! git and gix move a ref by creating `<ref>.lock` (and `packed-refs.lock`
//! once the ref is packed), writing the new value and renaming it over the
//! ref. A process killed in between leaves the lock behind, and every later
//! update of the ref fails on it. git cannot tell a live holder from a dead
//! one, so a lock is only taken for dead once it is [`STALE_LOCK`] old: a
//! slow `git gc` holds `packed-refs.lock` for seconds, and breaking a live
//! git's lock loses its update.
//!
//! memlog's own updates need not wait that long. Each one runs as an
//! [`Edit`]: under an exclusive `flock` on a file of memlog's folder, which
//! the kernel releases when the process dies, and with the lock files the
//! edit may create written into that file until it ends. A writer that
//! takes the flock and finds such a list knows the previous edit died half
//! way, and removes the locks of that list made in its moment. The crash
//! bench (`memlog-bench --kills`) killed a seal there and the next seals
//! waited out the half minute, then failed.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use crate::{Error, Repo, Result};

/// A ref lock file older than this was left by a killed process (see the
/// module doc): a killed git's lock costs the seals of this half minute;
/// their journals wait for the next.
const STALE_LOCK: Duration = Duration::from_secs(30);

/// How far a dead edit's lock may be from the moment it wrote its list: the
/// edit creates its locks right after, in microseconds; a machine that is
/// swapping can take longer, and a git starting exactly then is unlikely.
const EDIT_MOMENT: Duration = Duration::from_secs(5);

/// The lock files an update of `ref_name` in `repo` may create.
fn lock_files(repo: &Repo, ref_name: &str) -> [PathBuf; 2] {
    [
        repo.common_dir.join(format!("{ref_name}.lock")),
        repo.common_dir.join("packed-refs.lock"),
    ]
}

/// Removes a ref lock left behind by a killed process once it is
/// [`STALE_LOCK`] old, so one crash of git cannot block sealing for good.
pub(crate) fn remove_stale(repo: &Repo, ref_name: &str) {
    for lock in lock_files(repo, ref_name) {
        if age(&lock).is_some_and(|age| age > STALE_LOCK) {
            let _ = std::fs::remove_file(&lock);
        }
    }
}

/// What holds the ref's lock, for the error after giving up: git's lock
/// files name no process, so their path and age.
pub(crate) fn holder(repo: &Repo, ref_name: &str) -> String {
    lock_files(repo, ref_name)
        .iter()
        .find_map(|lock| {
            Some(format!(
                ", held by the lock file {} (created {} ms ago by a git process; delete it if none runs)",
                lock.display(),
                age(lock)?.as_millis()
            ))
        })
        .unwrap_or_default()
}

fn age(path: &std::path::Path) -> Option<Duration> {
    std::fs::metadata(path)
        .ok()?
        .modified()
        .ok()?
        .elapsed()
        .ok()
}

/// The working tree that has `ref_name` checked out (the main one, or a
/// linked `git worktree`), if any: its `HEAD` names the ref.
pub(crate) fn checked_out(repo: &Repo, ref_name: &str) -> Option<PathBuf> {
    repo.worktrees().into_iter().find_map(|(tree, head)| {
        std::fs::read_to_string(head)
            .is_ok_and(|text| text.trim().strip_prefix("ref: ") == Some(ref_name))
            .then_some(tree)
    })
}

/// One update of a ref by memlog, from [`Edit::begin`] until dropped.
pub(crate) struct Edit {
    /// `None` once a test has made the edit die half way.
    file: Option<File>,
}

impl Edit {
    /// Waits for memlog's other updates of `ref_name`, removes the locks a
    /// killed one left, and records the locks this one may leave.
    pub(crate) fn begin(repo: &Repo, ref_name: &str) -> Result<Edit> {
        let path = repo
            .memlog_dir
            .join(format!("ref-edit-{}", ref_name.replace('/', "-")));
        repo.create_memlog_dir()?;
        let mut file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        // every user of a shared repository moves the ref under it
        repo.sharing()
            .apply(&path)
            .map_err(|e| Error::io(&path, e))?;
        file.lock().map_err(|e| Error::io(&path, e))?;
        let mut left = String::new();
        let _ = file.read_to_string(&mut left);
        if !left.is_empty()
            && let Ok(moment) = file.metadata().and_then(|m| m.modified())
        {
            remove_dead_edits_locks(&left, moment);
        }
        let list: String = lock_files(repo, ref_name)
            .iter()
            .map(|lock| format!("{}\n", lock.display()))
            .collect();
        let written = file
            .set_len(0)
            .and_then(|()| file.seek(SeekFrom::Start(0)))
            .and_then(|_| file.write_all(list.as_bytes()));
        written.map_err(|e| Error::io(&path, e))?;
        Ok(Edit { file: Some(file) })
    }

    /// Ends the edit as a killed process does: the flock goes, the list
    /// stays.
    #[cfg(test)]
    fn die(mut self) {
        self.file.take();
    }
}

impl Drop for Edit {
    fn drop(&mut self) {
        // an edit that ended leaves no list: its locks are gone or live
        // (another git's); the flock goes with the file
        if let Some(file) = &self.file {
            let _ = file.set_len(0);
        }
    }
}

/// Removes the locks of a dead edit's `list` made within [`EDIT_MOMENT`]
/// of the `moment` it wrote the list.
fn remove_dead_edits_locks(list: &str, moment: SystemTime) {
    for lock in list.lines().filter(|l| !l.is_empty()) {
        let made = std::fs::metadata(lock).and_then(|m| m.modified());
        let in_moment = made.is_ok_and(|made| {
            let gap = made
                .duration_since(moment)
                .or_else(|e| Ok::<_, ()>(e.duration()))
                .unwrap_or_default();
            gap <= EDIT_MOMENT
        });
        if in_moment {
            let _ = std::fs::remove_file(lock);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // a test fails loudly

    use super::*;

    fn repo() -> (tempfile::TempDir, Repo) {
        let dir = tempfile::tempdir().unwrap();
        gix::init(dir.path()).unwrap();
        let repo = Repo::discover(dir.path()).unwrap();
        (dir, repo)
    }

    #[test]
    fn the_lock_of_an_edit_that_died_is_removed_by_the_next() {
        let (_dir, repo) = repo();
        let [ref_lock, _] = lock_files(&repo, "refs/heads/memlog");
        let edit = Edit::begin(&repo, "refs/heads/memlog").unwrap();
        std::fs::create_dir_all(ref_lock.parent().unwrap()).unwrap();
        std::fs::write(&ref_lock, "").unwrap();
        edit.die();
        let next = Edit::begin(&repo, "refs/heads/memlog").unwrap();
        assert!(!ref_lock.exists());
        drop(next);
    }

    #[test]
    fn a_live_gits_lock_is_left_to_it() {
        let (_dir, repo) = repo();
        let [ref_lock, packed] = lock_files(&repo, "refs/heads/memlog");
        // after an edit that ended, and after one that died long before
        drop(Edit::begin(&repo, "refs/heads/memlog").unwrap());
        std::fs::write(&packed, "").unwrap();
        drop(Edit::begin(&repo, "refs/heads/memlog").unwrap());
        assert!(packed.exists());
        Edit::begin(&repo, "refs/heads/memlog").unwrap().die();
        let list = repo.memlog_dir.join("ref-edit-refs-heads-memlog");
        let before = SystemTime::now() - Duration::from_secs(60);
        File::options()
            .write(true)
            .open(&list)
            .unwrap()
            .set_modified(before)
            .unwrap();
        std::fs::create_dir_all(ref_lock.parent().unwrap()).unwrap();
        std::fs::write(&ref_lock, "").unwrap();
        drop(Edit::begin(&repo, "refs/heads/memlog").unwrap());
        assert!(packed.exists() && ref_lock.exists());
        remove_stale(&repo, "refs/heads/memlog");
        assert!(packed.exists() && ref_lock.exists());
    }
}
