//! Catching the vectors up with the full-text index: one writer at a
//! time, rows checked against the events after a rebuild, new events
//! embedded (from the cache where it can), the tail laid into the graph.

use memlog_store::IndexLayout;
use std::fs::{File, OpenOptions};
use std::path::Path;

use hnsw_rs::prelude::AnnT;
use rusqlite::{Connection, OptionalExtension};

use crate::embed::Embedder;
use crate::embed_cache::{CacheUse, EmbeddingCache};
use crate::{Error, Result};

use super::{
    CatchUpReport, FORMAT, ROUND, TAIL_MAX, VectorIndex, VectorMeta, embeddable_kinds_sql,
    kinds_sql, new_graph, read_meta, write_meta,
};

use super::rows::{RowCheck, RowFiles, check_rows, row_text_hash};

/// The single writer of a vector projection (`vectors/writer.lock`).
pub(super) struct VectorLock {
    pub(super) _file: File,
}

impl VectorLock {
    pub(super) fn try_acquire(dir: &Path) -> Result<Option<VectorLock>> {
        let path = dir.join("writer.lock");
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        match file.try_lock() {
            Ok(()) => Ok(Some(VectorLock { _file: file })),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => Err(Error::io(&path, e)),
        }
    }
}

/// How many indexed events are worth a vector (for status reports).
pub fn embeddable_events(p: &crate::Projections) -> Result<u64> {
    let kinds = embeddable_kinds_sql();
    p.graph
        .conn
        .query_row(
            &format!("SELECT count(*) FROM events WHERE kind IN ({kinds}) AND text != ''"),
            [],
            |r| r.get::<_, i64>(0),
        )
        .map(|n| n as u64)
        .map_err(|e| Error::sql(&p.dir, e))
}

/// Whether the watermark row is still the event it names (0: none yet).
/// If not (a forget removed it, SQLite reused its rowid, or a rebuild
/// renumbered every row: -1), every row must be checked against the events.
fn watermark_holds(db: &Connection, db_path: &Path, meta: &VectorMeta) -> Result<bool> {
    match meta.watermark_rowid {
        0 => Ok(true),
        rowid if rowid < 0 => Ok(false),
        rowid => Ok(db
            .query_row("SELECT key FROM events WHERE rowid = ?1", [rowid], |r| {
                r.get::<_, i64>(0)
            })
            .optional()
            .map_err(|e| Error::sql(db_path, e))?
            == Some(meta.watermark_key as i64)),
    }
}

/// Events past rowid `from` that are to be embedded.
fn pending_since(db: &Connection, db_path: &Path, from: i64) -> Result<usize> {
    let kinds = embeddable_kinds_sql();
    let n: i64 = db
        .query_row(
            &format!(
                "SELECT count(*) FROM events WHERE rowid > ?1 AND +kind IN ({kinds}) AND text != ''"
            ),
            [from],
            |r| r.get(0),
        )
        .map_err(|e| Error::sql(db_path, e))?;
    Ok(n as usize)
}

/// What [`catch_up`] would report with nothing to do, when the vectors
/// made by the model named `model` (its id's name, before `@`) are caught
/// up with the index: none of the events past the watermark is to be
/// embedded. Read only, and without the model: a run with nothing to do
/// does not pay the model's load (0.5 s, 280 MB). `None` whenever a real
/// catch-up must decide (no vectors yet, another model's, a watermark to
/// check row by row, a discard waiting).
pub fn caught_up(index_dir: &Path, model: &str) -> Result<Option<CatchUpReport>> {
    let files = IndexLayout::new(index_dir);
    let dir = files.vectors();
    if dir.join(super::adopt::DISCARD_REQUEST).exists() {
        return Ok(None);
    }
    let Ok(Some(meta)) = read_meta(&dir) else {
        return Ok(None);
    };
    let same_model = meta.model.split('@').next() == Some(model);
    let tail_to_index = meta.rows.saturating_sub(meta.hnsw_rows) >= TAIL_MAX;
    if meta.format != FORMAT || !same_model || tail_to_index {
        return Ok(None);
    }
    let db_path = files.graph();
    let db = Connection::open_with_flags(&db_path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| Error::sql(&db_path, e))?;
    if !watermark_holds(&db, &db_path, &meta)? {
        return Ok(None);
    }
    let pending = pending_since(&db, &db_path, meta.watermark_rowid)?;
    Ok((pending == 0).then(|| CatchUpReport {
        model: meta.model.clone(),
        rows: meta.rows,
        ..Default::default()
    }))
}

/// Embeds the events of the index at `index_dir` that have no vector yet,
/// `progress(done, pending)` after each round. Returns `Ok(None)` when
/// another process is doing it. A projection made with another model is
/// started again (from the cache where it can).
pub fn catch_up(
    index_dir: &Path,
    embedder: &mut dyn Embedder,
    cache: &mut EmbeddingCache,
    batch: usize,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Option<CatchUpReport>> {
    let files = IndexLayout::new(index_dir);
    let dir = files.vectors();
    memlog_store::layout::create_dir_in_parent(&dir)?;
    let Some(_lock) = VectorLock::try_acquire(&dir)? else {
        return Ok(None);
    };
    let discard = dir.join(super::adopt::DISCARD_REQUEST);
    if discard.exists() {
        // a discard that gave up waiting for the last writer: done now
        reset(&dir)?;
    }
    let db_path = files.graph();
    let db = Connection::open_with_flags(&db_path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| Error::sql(&db_path, e))?;
    db.busy_timeout(std::time::Duration::from_secs(10))
        .map_err(|e| Error::sql(&db_path, e))?;
    let sql = |e| Error::sql(&db_path, e);
    let fresh_meta = || VectorMeta {
        format: FORMAT,
        model: embedder.model_id().to_string(),
        dim: embedder.dim(),
        ..Default::default()
    };
    let mut report = CatchUpReport::default();

    let mut meta = match read_meta(&dir) {
        Ok(Some(m))
            if m.format == FORMAT && m.model == embedder.model_id() && m.dim == embedder.dim() =>
        {
            m
        }
        // none yet, damaged, another layout or another model: start again
        found => {
            if let Ok(Some(m)) = found {
                report.restarted = Some(format!("the vectors were made by {}", m.model));
            }
            reset(&dir)?;
            fresh_meta()
        }
    };
    let mut files = RowFiles::open(&dir, &meta)?;

    let fast = watermark_holds(&db, &db_path, &meta)?;
    let mut have: std::collections::HashSet<u64> = Default::default();
    if !fast {
        match check_rows(&db, &db_path, &dir, &meta)? {
            RowCheck::Good(live) => {
                report.kept = live.len();
                have = live;
            }
            RowCheck::StartOver(why) => {
                report.restarted = Some(why);
                drop(files);
                reset(&dir)?;
                meta = fresh_meta();
                files = RowFiles::open(&dir, &meta)?;
            }
        }
    }
    let from = if fast { meta.watermark_rowid } else { 0 };
    let pending = pending_since(&db, &db_path, from)?;
    report.model = meta.model.clone();
    // A long catch-up (a first index, an import) embeds what was distilled
    // or asked before the long answers, so that memory is useful early.
    // Until its end the watermark says "check every row" (-1): rows of the
    // first pass lie past rowids the second has not reached, and an
    // interrupted run must not embed them twice.
    let passes: Vec<Vec<&str>> = if pending > ROUND {
        let (first, later) = crate::derive::EMBEDDED_KINDS
            .iter()
            .partition(|k| !crate::derive::EMBEDDED_LAST.contains(k));
        vec![first, later]
    } else {
        vec![crate::derive::EMBEDDED_KINDS.to_vec()]
    };
    let provisional = passes.len() > 1;
    let mut last_row: Option<(i64, u64)> = None;
    let mut done = 0;
    for kinds in passes.iter().filter(|k| !k.is_empty()) {
        let kinds = kinds_sql(kinds);
        // `+kind`: a range of rowids, not the kind index, whose entries past
        // the cursor SQLite would otherwise visit again every round (quadratic:
        // 5 s to check 60k kept rows).
        let mut stmt = db
            .prepare(&format!(
                "SELECT rowid, key, text FROM events WHERE rowid > ?1 AND +kind IN ({kinds}) AND text != '' ORDER BY rowid LIMIT {ROUND}"
            ))
            .map_err(sql)?;
        let mut cursor = from;
        loop {
            if discard.exists() {
                // a purge discards the projection: nothing more goes in
                return Ok(None);
            }
            let rows: Vec<(i64, u64, String)> = stmt
                .query_map([cursor], |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, i64>(1)? as u64,
                        r.get::<_, String>(2)?,
                    ))
                })
                .map_err(sql)?
                .collect::<std::result::Result<_, _>>()
                .map_err(sql)?;
            let Some(last) = rows.last() else { break };
            cursor = last.0;
            if last_row.is_none_or(|(rowid, _)| last.0 > rowid) {
                last_row = Some((last.0, last.1));
            }
            // (the query keeps embeddable kinds only)
            let todo: Vec<&(i64, u64, String)> =
                rows.iter().filter(|r| !have.contains(&r.1)).collect();
            let texts: Vec<&str> = todo.iter().map(|r| r.2.as_str()).collect();
            let (vectors, usage): (Vec<Vec<f32>>, CacheUse) =
                cache.embed(embedder, &texts, batch)?;
            report.embedded += usage.embedded;
            report.cached += usage.cached;
            report.pending += todo.len();
            let appended = todo
                .iter()
                .zip(&vectors)
                .filter(|(_, v)| v.len() == meta.dim)
                .map(|(r, v)| (r.1, row_text_hash(&r.2), v.as_slice()));
            let added = files.append(appended)?;
            meta.rows += added;
            match (provisional, last_row) {
                (false, Some((rowid, key))) => {
                    meta.watermark_rowid = rowid;
                    meta.watermark_key = key;
                }
                _ => meta.watermark_rowid = -1,
            }
            // Committed when rows were added; rounds with nothing new (rows
            // kept from before a rebuild) only move the watermark, written at
            // the end: three fsyncs a round made checking 60k kept rows 6 s.
            if added > 0 {
                write_meta(&dir, &meta)?;
            }
            done += rows.len();
            progress(done.min(pending), pending);
        }
    }
    if let Some((rowid, key)) = last_row {
        meta.watermark_rowid = rowid;
        meta.watermark_key = key;
    }
    drop(files);
    if meta.watermark_rowid != from {
        write_meta(&dir, &meta)?;
    }
    if meta.rows - meta.hnsw_rows >= TAIL_MAX {
        index_tail(&dir, &mut meta)?;
    }
    report.rows = meta.rows;
    Ok(Some(report))
}

/// Inserts the tail rows into the HNSW graph and dumps it under a new name,
/// then commits the meta and removes the old dump.
pub(super) fn index_tail(dir: &Path, meta: &mut VectorMeta) -> Result<()> {
    let opened = match VectorIndex::open(dir) {
        // a damaged graph is laid out again from the rows, which are whole
        Err(Error::Corrupt { .. }) if meta.hnsw_base.is_some() => {
            meta.hnsw_base = None;
            meta.hnsw_rows = 0;
            write_meta(dir, meta)?;
            VectorIndex::open(dir)
        }
        other => other,
    };
    let mut index = opened?.ok_or_else(|| Error::Corrupt {
        what: dir.display().to_string(),
        message: "meta.json vanished".into(),
    })?;
    let graph = match index.graph.take() {
        Some(g) => g,
        None => new_graph(meta.rows),
    };
    let start = if meta.hnsw_base.is_some() {
        meta.hnsw_rows
    } else {
        0
    };
    let dim = meta.dim;
    let mut row = start;
    while row < meta.rows {
        let end = (row + 16_384).min(meta.rows);
        let block = index.read_rows(row, end)?;
        let items: Vec<(&[f32], usize)> = block
            .chunks_exact(dim)
            .enumerate()
            .map(|(i, v)| (v, row + i))
            .collect();
        graph.parallel_insert_slice(&items);
        row = end;
    }
    let base = format!("hnsw-{}", meta.rows);
    let written = graph.file_dump(dir, &base).map_err(|e| Error::Corrupt {
        what: dir.join(&base).display().to_string(),
        message: e.to_string(),
    })?;
    let old = meta.hnsw_base.replace(written);
    meta.hnsw_rows = meta.rows;
    write_meta(dir, meta)?;
    if let Some(old) = old
        && Some(&old) != meta.hnsw_base.as_ref()
    {
        for ext in ["hnsw.graph", "hnsw.data"] {
            let _ = std::fs::remove_file(dir.join(format!("{old}.{ext}")));
        }
    }
    Ok(())
}

/// Empties a vector directory (the lock file stays).
pub(super) fn reset(dir: &Path) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    for entry in entries.flatten() {
        if entry.file_name() != "writer.lock" {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    Ok(())
}
