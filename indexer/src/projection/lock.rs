//! The projections' single-writer lock (`index.lock`): one process writes
//! at a time; readers never wait for it.

use std::fs::File;
use std::path::PathBuf;

use memlog_store::Repo;

use crate::{Error, Result};

fn lock_path(repo: &Repo) -> PathBuf {
    repo.layout().index_lock()
}

/// The single-writer lock, held while the projections are written.
pub struct WriterLock {
    _file: File,
}

impl WriterLock {
    /// Waits for the lock.
    pub fn acquire(repo: &Repo) -> Result<WriterLock> {
        let file = open_lock_file(repo)?;
        file.lock().map_err(|e| Error::io(&lock_path(repo), e))?;
        Ok(WriterLock { _file: file })
    }

    /// Takes the lock if it is free; `None` if another process holds it.
    pub fn try_acquire(repo: &Repo) -> Result<Option<WriterLock>> {
        let file = open_lock_file(repo)?;
        match file.try_lock() {
            Ok(()) => Ok(Some(WriterLock { _file: file })),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => Err(Error::io(&lock_path(repo), e)),
        }
    }
}

fn open_lock_file(repo: &Repo) -> Result<File> {
    let path = lock_path(repo);
    std::fs::create_dir_all(&repo.memlog_dir).map_err(|e| Error::io(&repo.memlog_dir, e))?;
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| Error::io(&path, e))
}
