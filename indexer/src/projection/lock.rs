//! The projections' single-writer lock (`index.lock`): one process writes
//! at a time; readers never wait for it. The holder writes its pid and
//! command line into the file, so one who cannot wait can name it.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use memlog_store::Repo;

use crate::{Error, Result};

/// How often [`WriterLock::acquire_within`] tries the lock again.
const RETRY: Duration = Duration::from_millis(50);

fn lock_path(repo: &Repo) -> PathBuf {
    repo.layout().index_lock()
}

/// The single-writer lock, held while the projections are written.
pub struct WriterLock {
    file: File,
}

impl WriterLock {
    /// Waits for the lock.
    pub fn acquire(repo: &Repo) -> Result<WriterLock> {
        let file = open_lock_file(repo)?;
        file.lock().map_err(|e| Error::io(&lock_path(repo), e))?;
        Ok(WriterLock::held(file))
    }

    /// Takes the lock if it is free; `None` if another process holds it,
    /// or if this process cannot write the index at all (a read-only
    /// store, another user's): then there is nothing to write, and a
    /// reader reads what is there.
    pub fn try_acquire(repo: &Repo) -> Result<Option<WriterLock>> {
        match WriterLock::try_acquire_writable(repo) {
            Err(Error::Io { source, .. })
                if matches!(
                    source.kind(),
                    std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
                ) =>
            {
                Ok(None)
            }
            taken => taken,
        }
    }

    /// [`WriterLock::try_acquire`] for a writer: a store it cannot write
    /// is an error.
    fn try_acquire_writable(repo: &Repo) -> Result<Option<WriterLock>> {
        let file = open_lock_file(repo)?;
        match file.try_lock() {
            Ok(()) => Ok(Some(WriterLock::held(file))),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => Err(Error::io(&lock_path(repo), e)),
        }
    }

    /// Waits for the lock up to `within`, then fails with
    /// [`Error::WriterBusy`] naming the holder: a caller that must not hang
    /// behind a writer that never finishes (or a process that holds the
    /// lock and waits for it).
    pub fn acquire_within(repo: &Repo, within: Duration) -> Result<WriterLock> {
        let started = Instant::now();
        loop {
            if let Some(lock) = WriterLock::try_acquire_writable(repo)? {
                return Ok(lock);
            }
            if started.elapsed() >= within {
                return Err(Error::WriterBusy {
                    holder: holder(repo),
                    waited_secs: started.elapsed().as_secs(),
                });
            }
            std::thread::sleep(RETRY);
        }
    }

    fn held(mut file: File) -> WriterLock {
        // Best effort: the name only serves an error message.
        let me = format!(
            "pid {} ({})",
            std::process::id(),
            std::env::args().collect::<Vec<_>>().join(" ")
        );
        let _ = file
            .set_len(0)
            .and_then(|()| file.seek(SeekFrom::Start(0)))
            .and_then(|_| file.write_all(me.as_bytes()));
        WriterLock { file }
    }
}

impl Drop for WriterLock {
    fn drop(&mut self) {
        // A later holder that does not name itself is not taken for us.
        let _ = self.file.set_len(0);
    }
}

/// Who holds the lock, as it named itself.
fn holder(repo: &Repo) -> String {
    let mut named = String::new();
    let _ = File::open(lock_path(repo)).and_then(|mut f| f.read_to_string(&mut named));
    let named = named.trim();
    if named.is_empty() {
        format!("another process (it holds {})", lock_path(repo).display())
    } else {
        format!("{named}, which holds {}", lock_path(repo).display())
    }
}

fn open_lock_file(repo: &Repo) -> Result<File> {
    let path = lock_path(repo);
    repo.create_memlog_dir()?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| Error::io(&path, e))?;
    // every user of a shared repository writes the projections
    repo.sharing()
        .apply(&path)
        .map_err(|e| Error::io(&path, e))?;
    Ok(file)
}
