//! The row files (`keys.bin`, `texts.bin`, `vectors.bin`): appending,
//! reading back, and checking them against the event table.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use rusqlite::Connection;

use crate::{Error, Result};

use super::{MAX_DEAD_SHARE, VectorMeta, embeddable_kinds_sql};

/// The u64 kept per row in `texts.bin`: the head of the text's blake3, as
/// the embedding cache keys it.
pub(super) fn row_text_hash(text: &str) -> u64 {
    let h = crate::embed_cache::text_hash(text);
    u64::from_le_bytes([h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]])
}

pub(super) fn read_u64s(path: &Path, n: usize) -> Result<Vec<u64>> {
    use std::io::Read;
    let short = || Error::Corrupt {
        what: path.display().to_string(),
        message: "shorter than its meta.json says".into(),
    };
    // Through a small buffer into the one vector: reading the whole file
    // first allocated (and faulted in) it twice, a cost every prompt hook
    // with vectors paid.
    let mut file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut out = Vec::with_capacity(n);
    let mut buf = [0u8; 64 * 1024];
    while out.len() < n {
        let want = ((n - out.len()) * 8).min(buf.len());
        match file.read_exact(&mut buf[..want]) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Err(short()),
            Err(e) => return Err(Error::io(path, e)),
        }
        out.extend(
            buf[..want]
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])),
        );
    }
    Ok(out)
}

/// The append-only row files, open for a catch-up.
pub(super) struct RowFiles {
    pub(super) keys: (File, PathBuf),
    pub(super) texts: (File, PathBuf),
    pub(super) vectors: (File, PathBuf),
}

impl RowFiles {
    /// Opens them for appending, dropping rows an interrupted run appended
    /// but never committed.
    pub(super) fn open(dir: &Path, meta: &VectorMeta) -> Result<RowFiles> {
        let open = |name: &str, len: usize| -> Result<(File, PathBuf)> {
            let path = dir.join(name);
            let file = OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .map_err(|e| Error::io(&path, e))?;
            file.set_len(len as u64).map_err(|e| Error::io(&path, e))?;
            Ok((file, path))
        };
        Ok(RowFiles {
            keys: open("keys.bin", meta.rows * 8)?,
            texts: open("texts.bin", meta.rows * 8)?,
            vectors: open("vectors.bin", meta.rows * meta.dim * 4)?,
        })
    }

    /// Appends rows (key, text hash, vector) durably; returns how many.
    pub(super) fn append<'a>(
        &mut self,
        rows: impl Iterator<Item = (u64, u64, &'a [f32])>,
    ) -> Result<usize> {
        let mut rows = rows.peekable();
        if rows.peek().is_none() {
            return Ok(0);
        }
        let (mut kbuf, mut tbuf, mut vbuf) = (Vec::new(), Vec::new(), Vec::new());
        let mut n = 0;
        for (key, text, v) in rows {
            kbuf.extend_from_slice(&key.to_le_bytes());
            tbuf.extend_from_slice(&text.to_le_bytes());
            vbuf.extend_from_slice(&crate::embed_cache::to_bytes(v));
            n += 1;
        }
        for ((file, path), buf) in [
            (&mut self.keys, &kbuf),
            (&mut self.texts, &tbuf),
            (&mut self.vectors, &vbuf),
        ] {
            file.write_all(buf)
                .and_then(|_| file.sync_data())
                .map_err(|e| Error::io(path, e))?;
        }
        Ok(n)
    }
}

/// What checking carried rows against the events found.
pub(super) enum RowCheck {
    /// Every row whose event is indexed has its text: these keys are live.
    Good(std::collections::HashSet<u64>),
    /// The rows cannot be kept, for this reason.
    StartOver(String),
}

/// Checks each committed row against the event table: its event must be
/// there with the same text. Rows of events no longer indexed are
/// tolerated (searches drop them) up to [`MAX_DEAD_SHARE`].
pub(super) fn check_rows(
    db: &Connection,
    db_path: &Path,
    dir: &Path,
    meta: &VectorMeta,
) -> Result<RowCheck> {
    if meta.rows == 0 {
        return Ok(RowCheck::Good(Default::default()));
    }
    let keys = read_u64s(&dir.join("keys.bin"), meta.rows)?;
    let texts = read_u64s(&dir.join("texts.bin"), meta.rows)?;
    let rows: HashMap<u64, u64> = keys.into_iter().zip(texts).collect();
    let kinds = embeddable_kinds_sql();
    let mut stmt = db
        .prepare(&format!(
            "SELECT key, text FROM events WHERE +kind IN ({kinds}) AND text != ''"
        ))
        .map_err(|e| Error::sql(db_path, e))?;
    let mut found = stmt.query([]).map_err(|e| Error::sql(db_path, e))?;
    let mut live = std::collections::HashSet::with_capacity(rows.len());
    while let Some(r) = found.next().map_err(|e| Error::sql(db_path, e))? {
        let key = r.get::<_, i64>(0).map_err(|e| Error::sql(db_path, e))? as u64;
        let Some(&text) = rows.get(&key) else {
            continue;
        };
        let now: String = r.get(1).map_err(|e| Error::sql(db_path, e))?;
        if row_text_hash(&now) != text {
            return Ok(RowCheck::StartOver(format!(
                "the text of event key {key:016x} is not the one embedded"
            )));
        }
        live.insert(key);
    }
    let dead = meta.rows - live.len();
    if dead as f64 > MAX_DEAD_SHARE * meta.rows as f64 {
        return Ok(RowCheck::StartOver(format!(
            "{dead} of {} vectors belong to events no longer indexed",
            meta.rows
        )));
    }
    Ok(RowCheck::Good(live))
}
