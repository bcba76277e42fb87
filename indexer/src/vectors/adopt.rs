//! Carrying the vectors over a rebuild ([`adopt`]) or dropping them
//! ([`discard`]).

use memlog_store::IndexLayout;
use std::path::Path;

use crate::{Error, Result};

use super::{FORMAT, read_meta, write_meta};

use super::catch_up::{VectorLock, reset};

/// Moves the vector projection of the index at `from_index` into the index
/// being built at `to_index`, to be checked and completed by the next
/// [`catch_up`]. Returns whether it did: not when there is none, when it is
/// of another layout, or when another process is writing it.
pub fn adopt(from_index: &Path, to_index: &Path) -> Result<bool> {
    let from = IndexLayout::new(from_index).vectors();
    let Ok(Some(mut meta)) = read_meta(&from) else {
        return Ok(false);
    };
    if meta.format != FORMAT {
        return Ok(false);
    }
    let Some(lock) = VectorLock::try_acquire(&from)? else {
        return Ok(false);
    };
    meta.watermark_rowid = -1;
    meta.watermark_key = 0;
    write_meta(&from, &meta)?;
    let to = IndexLayout::new(to_index).vectors();
    // the fresh index has no vectors yet; an empty directory is replaced
    let _ = std::fs::remove_dir(&to);
    std::fs::rename(&from, &to).map_err(|e| Error::io(&from, e))?;
    drop(lock);
    Ok(true)
}

/// Deletes the vector projection of the index at `index_dir`, so the next
/// catch-up makes it again (from the embedding cache). A catch-up under
/// way (a `memlog watch` embedding) is asked to stop at its next round
/// ([`DISCARD_REQUEST`]) and waited for, up to [`DISCARD_WAIT`]; past that,
/// an error says who holds it, and the request stays for that writer to
/// honour when it next takes the projection.
pub fn discard(index_dir: &Path) -> Result<()> {
    let dir = IndexLayout::new(index_dir).vectors();
    if !dir.exists() {
        return Ok(());
    }
    let request = dir.join(DISCARD_REQUEST);
    let deadline = std::time::Instant::now() + DISCARD_WAIT;
    loop {
        if let Some(_lock) = VectorLock::try_acquire(&dir)? {
            // the request goes with the rest
            return reset(&dir);
        }
        if !request.exists() {
            std::fs::write(&request, b"").map_err(|e| Error::io(&request, e))?;
        }
        if std::time::Instant::now() >= deadline {
            return Err(Error::Invalid(format!(
                "{} is being written by another process (memlog watch?), which did not stop \
                 within {} s; stop it and retry",
                dir.display(),
                DISCARD_WAIT.as_secs()
            )));
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// A file in the vector directory asking its writer to stop and leave the
/// projection to be discarded (a purge: the vectors of purged events must
/// go, and a watcher's catch-up can run for minutes).
pub(super) const DISCARD_REQUEST: &str = "discard.request";

/// How long [`discard`] waits for a catch-up to stop: a round of the
/// catch-up takes seconds.
const DISCARD_WAIT: std::time::Duration = std::time::Duration::from_secs(60);
