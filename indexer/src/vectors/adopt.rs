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
/// catch-up makes it again (from the embedding cache). Errs when another
/// process is writing it.
pub fn discard(index_dir: &Path) -> Result<()> {
    let dir = IndexLayout::new(index_dir).vectors();
    if !dir.exists() {
        return Ok(());
    }
    let Some(_lock) = VectorLock::try_acquire(&dir)? else {
        return Err(Error::Invalid(format!(
            "{} is being written by another process (memlog watch?); stop it and retry",
            dir.display()
        )));
    };
    reset(&dir)
}
