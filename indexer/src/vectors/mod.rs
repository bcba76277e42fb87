//! The vector projection: one embedding per event worth recalling, searched
//! with HNSW (hnsw_rs), under `<index dir>/vectors/`.
//!
//! It trails the full-text index with a freshness of its own: the indexer
//! commits events to full text first, then [`catch_up`] embeds what is new
//! (from the [`EmbeddingCache`] when it can), so searches never wait for
//! the model. Its watermark is the database row of the last event embedded.
//!
//! Files: `keys.bin` (the event key of each row, u64), `texts.bin` (a
//! hash of the text embedded, u64) and `vectors.bin` (the row's unit
//! vector, f32) are append-only; `meta.json`, replaced atomically, says how
//! many rows are committed and which HNSW dump covers the first `hnsw_rows`
//! of them. Rows past the dump (the tail) are scanned exactly; once the tail
//! is long enough it is inserted and the graph dumped again. Readers only
//! read committed rows. Forgotten events stay in the files but are dropped
//! from every result, because the event table no longer has them.
//!
//! A rebuild of the other projections keeps this one ([`adopt`]): events
//! are content-addressed, so a row stays right as long as its event still
//! has the same text, which the next [`catch_up`] checks row by row before
//! it embeds what is missing. Building the HNSW graph again would cost a
//! minute per 100k vectors; checking costs a scan of the event table. The
//! projection starts over (from the embedding cache) when a text changed or
//! when more than a fifth of its rows belong to events no longer indexed.
mod adopt;
mod catch_up;
mod rows;

use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use hnsw_rs::prelude::{Distance, Hnsw, HnswIo};
use serde::{Deserialize, Serialize};

use crate::event_keys::{KeyMap, KeySet};
use crate::{Error, Result};

pub use adopt::{adopt, discard};
pub use catch_up::{catch_up, caught_up, embeddable_events};

use rows::read_u64s;

/// Tail rows at which they are inserted into the HNSW graph.
pub(super) const TAIL_MAX: usize = 2048;
/// Events read from the database per round of embedding; each round is
/// committed, so progress survives an interruption.
pub(super) const ROUND: usize = 256;
pub(super) const HNSW_CONNECTIONS: usize = 16;
pub(super) const HNSW_LAYERS: usize = 16;
pub(super) const HNSW_EF_CONSTRUCTION: usize = 100;
/// Breadth of a graph search; recall@10 against exact search is measured
/// by `memlog-bench --vectors`.
pub(super) const HNSW_EF_SEARCH: usize = 200;

/// Layout of the files; projections of another layout start over.
/// (3: graphs dumped with [`UnitCosine`].)
pub(super) const FORMAT: u32 = 3;
/// Share of rows whose events are gone past which a carried projection
/// starts over rather than carry them.
pub(super) const MAX_DEAD_SHARE: f64 = 0.2;

type Graph = Hnsw<'static, f32, UnitCosine>;

/// Cosine distance between unit vectors (every vector here is one):
/// `1 - dot`. anndists' `DistCosine` computes both norms again in f64 on
/// every call, which was most of a graph search, and its `DistDot` asserts
/// a result rounding can push below zero for equal vectors.
#[derive(Clone, Copy, Debug, Default)]
pub struct UnitCosine;

impl Distance<f32> for UnitCosine {
    fn eval(&self, a: &[f32], b: &[f32]) -> f32 {
        (1.0 - crate::embed::dot(a, b)).max(0.0)
    }
}

/// `meta.json`: what the vector files hold and how far they are committed.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct VectorMeta {
    /// [`FORMAT`] of the files (absent, 0, before `texts.bin`).
    #[serde(default)]
    pub format: u32,
    /// The model that made the vectors.
    pub model: String,
    /// Their dimensions.
    pub dim: usize,
    /// Committed rows.
    pub rows: usize,
    /// Rows covered by the HNSW dump.
    pub hnsw_rows: usize,
    /// File name base of the HNSW dump, if there is one.
    pub hnsw_base: Option<String>,
    /// Database rowid and key of the last event embedded; a rowid of -1
    /// (set by [`adopt`]) makes the next catch-up check every row.
    pub watermark_rowid: i64,
    /// Key of the last event embedded.
    pub watermark_key: u64,
}

/// The vector projection, open for searching.
pub struct VectorIndex {
    /// The `vectors/` directory.
    pub dir: PathBuf,
    /// Its meta as opened.
    pub meta: VectorMeta,
    keys: Vec<u64>,
    /// Built on first use: a process that reads a few vectors (a hook's
    /// query from the stored vectors of its best full-text hits) finds them
    /// in one pass over `keys` instead.
    rows_by_key: OnceLock<KeyMap<u32>>,
    vectors: File,
    graph: Option<Graph>,
}

/// How a process searches the vectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VectorAccess {
    /// Through the HNSW graph, loaded first: for processes that search
    /// many times (`memlog mcp`, `memlog serve`). Loading costs about 1 s
    /// per 100k vectors.
    Graph,
    /// By scanning every row exactly: for a process that searches once
    /// (`memlog search`), to which that costs less than loading the graph
    /// (and it misses nothing).
    Scan,
}

/// One vector hit: the event key and its cosine to the query.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VectorHit {
    /// The event's key.
    pub key: u64,
    /// Its cosine to the query.
    pub cosine: f32,
}

/// What a catch-up did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct CatchUpReport {
    /// Events that needed a vector.
    pub pending: usize,
    /// Texts the model embedded (the rest came from the cache).
    pub embedded: usize,
    /// Texts whose vector came from the cache.
    pub cached: usize,
    /// Rows carried over from before a rebuild, checked and kept.
    pub kept: usize,
    /// Why the projection started over, if it did.
    pub restarted: Option<String>,
    /// The model.
    pub model: String,
    /// Rows in the projection afterwards.
    pub rows: usize,
}

pub(crate) fn meta_path(dir: &Path) -> PathBuf {
    dir.join("meta.json")
}

pub(super) fn read_meta(dir: &Path) -> Result<Option<VectorMeta>> {
    let p = meta_path(dir);
    match std::fs::read(&p) {
        Ok(b) => serde_json::from_slice(&b)
            .map(Some)
            .map_err(|e| Error::Corrupt {
                what: p.display().to_string(),
                message: e.to_string(),
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(&p, e)),
    }
}

pub(super) fn write_meta(dir: &Path, meta: &VectorMeta) -> Result<()> {
    let p = meta_path(dir);
    let tmp = dir.join("meta.json.tmp");
    let bytes = serde_json::to_vec_pretty(meta).map_err(|e| Error::Invalid(e.to_string()))?;
    // synced before the rename: an empty meta after a crash would make the
    // next catch-up start the whole projection over
    File::create(&tmp)
        .and_then(|mut f| f.write_all(&bytes).and_then(|_| f.sync_all()))
        .map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, &p).map_err(|e| Error::io(&p, e))
}

pub(super) fn load_graph(dir: &Path, base: &str) -> Result<Graph> {
    // hnsw_rs ties a reloaded graph's lifetime to its loader; the loader
    // holds only paths and options (no mmap here), so it is leaked to give
    // the graph a 'static one: a few hundred bytes per load.
    let corrupt = |message: String| Error::Corrupt {
        what: dir.join(base).display().to_string(),
        message,
    };
    // hnsw_rs asserts on what it reads (a damaged dump panics): a panic
    // here is a corrupt file, to report like any other.
    let (dir_path, base_name) = (dir.to_path_buf(), base.to_string());
    match std::panic::catch_unwind(move || {
        let io: &'static mut HnswIo = Box::leak(Box::new(HnswIo::new(&dir_path, &base_name)));
        io.load_hnsw::<f32, UnitCosine>()
    }) {
        Ok(loaded) => loaded.map_err(|e| corrupt(e.to_string())),
        Err(_) => Err(corrupt("unreadable HNSW dump".into())),
    }
}

pub(super) fn new_graph(expected: usize) -> Graph {
    Hnsw::new(
        HNSW_CONNECTIONS,
        expected.max(1024),
        HNSW_LAYERS,
        HNSW_EF_CONSTRUCTION,
        UnitCosine,
    )
}

impl VectorIndex {
    /// Opens the projection at `dir` with its HNSW graph, for a process
    /// that searches many times; `None` when there is none yet.
    pub fn open(dir: &Path) -> Result<Option<VectorIndex>> {
        VectorIndex::open_as(dir, VectorAccess::Graph)
    }

    /// Opens the projection at `dir` as `access` says.
    pub fn open_as(dir: &Path, access: VectorAccess) -> Result<Option<VectorIndex>> {
        let Some(meta) = read_meta(dir)? else {
            return Ok(None);
        };
        if meta.format != FORMAT {
            // laid out by another version: the next catch-up starts over
            return Ok(None);
        }
        let keys = read_u64s(&dir.join("keys.bin"), meta.rows)?;
        let rows_by_key = OnceLock::new();
        let vpath = dir.join("vectors.bin");
        let vectors = File::open(&vpath).map_err(|e| Error::io(&vpath, e))?;
        let graph = match &meta.hnsw_base {
            Some(base) if meta.hnsw_rows > 0 && access == VectorAccess::Graph => {
                Some(load_graph(dir, base)?)
            }
            _ => None,
        };
        Ok(Some(VectorIndex {
            dir: dir.to_path_buf(),
            meta,
            keys,
            rows_by_key,
            vectors,
            graph,
        }))
    }

    /// Whether `vectors.bin` holds every committed row: a short one failed
    /// each search and prompt hook ("failed to fill whole buffer") until
    /// the next catch-up; searched without vectors meanwhile, they work.
    pub fn is_whole(&self) -> bool {
        let needed = (self.meta.rows * self.meta.dim * 4) as u64;
        self.vectors.metadata().is_ok_and(|m| m.len() >= needed)
    }

    /// Committed rows.
    pub fn rows(&self) -> usize {
        self.meta.rows
    }

    /// The stored vector of an event, if it has one.
    pub fn vector_of(&self, key: u64) -> Result<Option<Vec<f32>>> {
        match self.rows_by_key().get(&key) {
            Some(&row) => self.read_rows(row as usize, row as usize + 1).map(Some),
            None => Ok(None),
        }
    }

    /// The stored vectors of `keys` (those that have one), found in one pass
    /// over the rows unless the key map is built already.
    pub fn vectors_of(&self, keys: &[u64]) -> Result<HashMap<u64, Vec<f32>>> {
        let mut rows: Vec<(u64, usize)> = match self.rows_by_key.get() {
            Some(map) => keys
                .iter()
                .filter_map(|k| map.get(k).map(|r| (*k, *r as usize)))
                .collect(),
            None => {
                let wanted: KeySet = keys.iter().copied().collect();
                self.keys
                    .iter()
                    .enumerate()
                    .filter(|(_, k)| wanted.contains(k))
                    .map(|(row, k)| (*k, row))
                    .collect()
            }
        };
        rows.sort_unstable_by_key(|r| r.1);
        rows.dedup_by_key(|r| r.0);
        let mut out = HashMap::with_capacity(rows.len());
        for (key, row) in rows {
            out.insert(key, self.read_rows(row, row + 1)?);
        }
        Ok(out)
    }

    fn rows_by_key(&self) -> &KeyMap<u32> {
        self.rows_by_key.get_or_init(|| {
            self.keys
                .iter()
                .enumerate()
                .map(|(i, k)| (*k, i as u32))
                .collect()
        })
    }

    pub(super) fn read_rows(&self, start: usize, end: usize) -> Result<Vec<f32>> {
        let dim = self.meta.dim;
        let mut buf = vec![0u8; (end - start) * dim * 4];
        self.vectors
            .read_exact_at(&mut buf, (start * dim * 4) as u64)
            .map_err(|e| Error::io(&self.dir.join("vectors.bin"), e))?;
        Ok(crate::embed_cache::from_bytes(&buf))
    }

    /// The `k` events nearest to `query` (a unit vector), best first. With
    /// `allowed` (event keys that pass the search's filters), only those:
    /// few are scored exactly, many through the graph with the filter.
    pub fn search(
        &self,
        query: &[f32],
        k: usize,
        allowed: Option<&[u64]>,
    ) -> Result<Vec<VectorHit>> {
        self.search_with_breadth(query, k, allowed, HNSW_EF_SEARCH)
    }

    /// [`VectorIndex::search`] with the graph search's breadth (`ef`, at
    /// least `2k`) chosen, to measure recall against it.
    pub fn search_with_breadth(
        &self,
        query: &[f32],
        k: usize,
        allowed: Option<&[u64]>,
        breadth: usize,
    ) -> Result<Vec<VectorHit>> {
        if query.len() != self.meta.dim || k == 0 || self.meta.rows == 0 {
            return Ok(Vec::new());
        }
        let mut hits: Vec<VectorHit> = Vec::new();
        match allowed {
            Some(keys) if keys.len() <= 4 * TAIL_MAX => {
                for key in keys {
                    if let Some(v) = self.vector_of(*key)? {
                        hits.push(VectorHit {
                            key: *key,
                            cosine: crate::embed::dot(query, &v),
                        });
                    }
                }
            }
            _ => {
                if let Some(graph) = &self.graph {
                    let ef = (k * 2).max(breadth);
                    let found = match allowed {
                        Some(keys) => {
                            let mut rows: Vec<usize> = keys
                                .iter()
                                .filter_map(|k| self.rows_by_key().get(k).map(|r| *r as usize))
                                .filter(|r| *r < self.meta.hnsw_rows)
                                .collect();
                            rows.sort_unstable();
                            graph.search_filter(query, k, ef, Some(&rows))
                        }
                        None => graph.search(query, k, ef),
                    };
                    for n in found {
                        if let Some(key) = self.keys.get(n.d_id) {
                            hits.push(VectorHit {
                                key: *key,
                                cosine: 1.0 - n.distance,
                            });
                        }
                    }
                }
                // the tail, exactly (every row without a graph)
                let start = if self.graph.is_some() {
                    self.meta.hnsw_rows
                } else {
                    0
                };
                let allowed_set: Option<KeySet> = allowed.map(|a| a.iter().copied().collect());
                self.scan(start, |row, v| {
                    let key = self.keys[row];
                    if allowed_set.as_ref().is_none_or(|s| s.contains(&key)) {
                        hits.push(VectorHit {
                            key,
                            cosine: crate::embed::dot(query, v),
                        });
                    }
                })?;
            }
        }
        Ok(best(hits, k))
    }

    /// Calls `f(row, vector)` for every committed row from `start`, reading
    /// blocks into buffers used again: fresh ones per block cost more in
    /// page faults than the products.
    pub(super) fn scan(&self, start: usize, mut f: impl FnMut(usize, &[f32])) -> Result<()> {
        const BLOCK: usize = 512;
        let dim = self.meta.dim;
        let mut bytes = vec![0u8; BLOCK * dim * 4];
        let mut floats = vec![0f32; BLOCK * dim];
        let mut row = start;
        while row < self.meta.rows {
            let n = BLOCK.min(self.meta.rows - row);
            let bytes = &mut bytes[..n * dim * 4];
            self.vectors
                .read_exact_at(bytes, (row * dim * 4) as u64)
                .map_err(|e| Error::io(&self.dir.join("vectors.bin"), e))?;
            for (x, c) in floats.iter_mut().zip(bytes.chunks_exact(4)) {
                *x = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            }
            for (i, v) in floats[..n * dim].chunks_exact(dim).enumerate() {
                f(row + i, v);
            }
            row += n;
        }
        Ok(())
    }

    /// Exact nearest neighbours over every row (for measuring HNSW recall).
    pub fn search_exact(&self, query: &[f32], k: usize) -> Result<Vec<VectorHit>> {
        let mut hits = Vec::with_capacity(self.meta.rows);
        self.scan(0, |row, v| {
            hits.push(VectorHit {
                key: self.keys[row],
                cosine: crate::embed::dot(query, v),
            })
        })?;
        Ok(best(hits, k))
    }
}

/// The `k` best hits, best first, one per key (ties by key).
pub(super) fn best(mut hits: Vec<VectorHit>, k: usize) -> Vec<VectorHit> {
    let order =
        |a: &VectorHit, b: &VectorHit| b.cosine.total_cmp(&a.cosine).then(a.key.cmp(&b.key));
    // a scan yields a hit per row: select before sorting (room is left
    // for the rare key with two rows)
    let keep = k.saturating_mul(4).max(64);
    if hits.len() > keep {
        hits.select_nth_unstable_by(keep, order);
        hits.truncate(keep);
    }
    hits.sort_by(order);
    hits.dedup_by_key(|h| h.key);
    hits.truncate(k);
    hits
}

/// Kinds whose events are embedded, as an SQL list.
fn embeddable_kinds_sql() -> String {
    kinds_sql(&crate::derive::EMBEDDED_KINDS)
}

/// `kinds` as a list of SQL strings, for `kind IN (…)`.
fn kinds_sql(kinds: &[&str]) -> String {
    kinds
        .iter()
        .map(|k| format!("'{k}'"))
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    use super::*;
    use crate::embed::HashEmbedder;
    use crate::embed_cache::EmbeddingCache;

    /// A database with just what catch-up reads: the events table.
    fn events_db(dir: &Path) -> Connection {
        let db = Connection::open(dir.join("graph.sqlite")).unwrap();
        db.execute_batch(
            "CREATE TABLE events (key INTEGER NOT NULL, kind TEXT NOT NULL, text TEXT NOT NULL)",
        )
        .unwrap();
        db
    }

    fn add(db: &Connection, key: u64, kind: &str, text: &str) {
        db.execute(
            "INSERT INTO events(key, kind, text) VALUES (?1, ?2, ?3)",
            rusqlite::params![key as i64, kind, text],
        )
        .unwrap();
    }

    fn text(i: u64) -> String {
        format!("event {i} about topic{} and area{}", i % 97, i % 13)
    }

    fn run(dir: &Path, cache: &mut EmbeddingCache) -> CatchUpReport {
        let mut e = HashEmbedder::new(32);
        catch_up(dir, &mut e, cache, 16, &mut |_, _| {})
            .unwrap()
            .unwrap()
    }

    /// A purge discards the vectors while a watcher embeds: the writer
    /// stops at its next round, the discard then goes through.
    #[test]
    fn a_discard_stops_a_catch_up_under_way() {
        let dir = tempfile::tempdir().unwrap();
        let db = events_db(dir.path());
        let mut cache = EmbeddingCache::open(&dir.path().join("cache.sqlite")).unwrap();
        for i in 1..=40u64 {
            add(&db, i, "user_prompt", &text(i));
        }
        assert_eq!(run(dir.path(), &mut cache).rows, 40);
        let vectors = dir.path().join("vectors");
        // another writer holds the projection, and honours the request
        let lock = catch_up::VectorLock::try_acquire(&vectors)
            .unwrap()
            .unwrap();
        let request = vectors.join(adopt::DISCARD_REQUEST);
        let writer = std::thread::spawn(move || {
            while !request.exists() {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            drop(lock);
        });
        discard(dir.path()).unwrap();
        writer.join().unwrap();
        assert!(read_meta(&vectors).unwrap().is_none(), "vectors discarded");
        // a catch-up that finds a request left behind (a discard that gave
        // up waiting) discards first, then embeds afresh
        std::fs::write(vectors.join(adopt::DISCARD_REQUEST), b"").unwrap();
        for i in 41..=60u64 {
            add(&db, i, "user_prompt", &text(i));
        }
        assert_eq!(run(dir.path(), &mut cache).rows, 60);
        assert!(!vectors.join(adopt::DISCARD_REQUEST).exists());
    }

    #[test]
    fn incremental_persistent_and_filtered() {
        let dir = tempfile::tempdir().unwrap();
        let db = events_db(dir.path());
        let mut cache = EmbeddingCache::open(&dir.path().join("cache.sqlite")).unwrap();
        for i in 1..=3300u64 {
            let kind = if i % 3 == 0 {
                "tool_observation"
            } else {
                "user_prompt"
            };
            add(&db, i, kind, &text(i));
        }
        let first = run(dir.path(), &mut cache);
        assert_eq!(first.pending, 2200);
        assert_eq!(first.rows, 2200);
        let index = VectorIndex::open(&dir.path().join("vectors"))
            .unwrap()
            .unwrap();
        assert!(
            index.graph.is_some(),
            "past the tail size the graph is built"
        );
        let q = HashEmbedder::new(32).vector(&text(7));
        let hits = index.search(&q, 10, None).unwrap();
        assert_eq!(hits[0].key, 7);
        // recall counting ties at the 10th cosine as found
        let exact = index.search_exact(&q, 10).unwrap();
        let kth = exact[9].cosine - 1e-6;
        let overlap = hits.iter().filter(|h| h.cosine >= kth).count();
        assert!(overlap >= 9, "recall {overlap}/10: {hits:?} vs {exact:?}");
        // filters: only the allowed keys come back
        let allowed: Vec<u64> = (1..=3300).filter(|k| k % 3 != 0 && k % 2 == 0).collect();
        let filtered = index.search(&q, 10, Some(&allowed)).unwrap();
        assert!(filtered.iter().all(|h| h.key % 2 == 0), "{filtered:?}");

        // new events: only they are embedded
        add(&db, 5000, "note", "a brand new note");
        let second = run(dir.path(), &mut cache);
        assert_eq!((second.pending, second.embedded), (1, 1));
        // the watermark row is deleted and its rowid reused: caught anyway
        db.execute("DELETE FROM events WHERE key = 5000", [])
            .unwrap();
        add(&db, 6000, "fact", "a fact that reuses the rowid");
        let third = run(dir.path(), &mut cache);
        assert_eq!(third.pending, 1, "{third:?}");
        assert_eq!(third.rows, 2202);
        let index = VectorIndex::open(&dir.path().join("vectors"))
            .unwrap()
            .unwrap();
        assert!(index.vector_of(6000).unwrap().is_some());

        // started again from scratch, the cache embeds nothing
        std::fs::remove_dir_all(dir.path().join("vectors")).unwrap();
        let again = run(dir.path(), &mut cache);
        assert_eq!((again.embedded, again.rows), (0, 2201));
    }

    /// A projection of events 1..=n of `kind`, caught up, with its
    /// database and embedding cache.
    fn embedded(n: u64, kind: &str) -> (tempfile::TempDir, Connection, EmbeddingCache) {
        let dir = tempfile::tempdir().unwrap();
        let db = events_db(dir.path());
        let mut cache = EmbeddingCache::open(&dir.path().join("cache.sqlite")).unwrap();
        for i in 1..=n {
            add(&db, i, kind, &text(i));
        }
        run(dir.path(), &mut cache);
        (dir, db, cache)
    }

    /// An index built again: the same events in another row order, one
    /// of them gone and one new.
    fn rebuilt_db(dir: &Path, keys: impl Iterator<Item = u64>, text: impl Fn(u64) -> String) {
        let db = events_db(dir);
        for k in keys {
            add(&db, k, "user_prompt", &text(k));
        }
    }

    #[test]
    fn a_rebuild_keeps_checked_vectors() {
        let (old, _db, mut cache) = embedded(2500, "user_prompt");
        let first = read_meta(&old.path().join("vectors")).unwrap().unwrap();
        let base = read_meta(&old.path().join("vectors"))
            .unwrap()
            .unwrap()
            .hnsw_base;
        assert!(base.is_some());

        let new = tempfile::tempdir().unwrap();
        rebuilt_db(new.path(), (2..=2501u64).rev(), text);
        assert!(adopt(old.path(), new.path()).unwrap());
        assert!(!old.path().join("vectors").exists());
        let second = run(new.path(), &mut cache);
        assert_eq!(second.kept, 2499, "{second:?}");
        assert_eq!((second.pending, second.embedded), (1, 1), "{second:?}");
        assert_eq!(second.rows, first.rows + 1);
        assert_eq!(second.restarted, None);
        let meta = read_meta(&new.path().join("vectors")).unwrap().unwrap();
        assert_eq!(meta.hnsw_base, base, "the graph was not built again");
        // caught up: the next run has nothing to do
        let third = run(new.path(), &mut cache);
        assert_eq!((third.pending, third.kept), (0, 0), "{third:?}");
        let index = VectorIndex::open(&new.path().join("vectors"))
            .unwrap()
            .unwrap();
        let q = HashEmbedder::new(32).vector(&text(2501));
        assert_eq!(index.vector_of(2501).unwrap(), Some(q.clone()));
        assert!(index.search(&q, 1, None).unwrap()[0].cosine > 0.999);
    }

    #[test]
    fn a_changed_text_or_many_gone_events_start_vectors_over() {
        let (old, _db, mut cache) = embedded(100, "user_prompt");

        // one text derived differently now
        let changed_text = |k| {
            if k == 50 {
                "another text".to_string()
            } else {
                text(k)
            }
        };
        let changed = tempfile::tempdir().unwrap();
        rebuilt_db(changed.path(), 1..=100u64, changed_text);
        assert!(adopt(old.path(), changed.path()).unwrap());
        let r = run(changed.path(), &mut cache);
        assert!(
            r.restarted.as_deref().is_some_and(|w| w.contains("text")),
            "{r:?}"
        );
        assert_eq!((r.kept, r.rows, r.embedded, r.cached), (0, 100, 1, 99));

        // a quarter of the events gone
        let fewer = tempfile::tempdir().unwrap();
        rebuilt_db(fewer.path(), 26..=100u64, changed_text);
        assert!(adopt(changed.path(), fewer.path()).unwrap());
        let r = run(fewer.path(), &mut cache);
        assert!(
            r.restarted
                .as_deref()
                .is_some_and(|w| w.contains("25 of 100")),
            "{r:?}"
        );
        assert_eq!((r.kept, r.rows), (0, 75));
    }

    #[test]
    fn a_damaged_graph_is_an_error_not_a_panic() {
        let (dir, db, mut cache) = embedded(2100, "note");
        let vectors = dir.path().join("vectors");
        let base = read_meta(&vectors).unwrap().unwrap().hnsw_base.unwrap();
        std::fs::write(vectors.join(format!("{base}.hnsw.data")), b"not a dump").unwrap();
        match VectorIndex::open(&vectors) {
            Err(Error::Corrupt { what, .. }) => assert!(what.contains(&base), "{what}"),
            Err(e) => panic!("another error: {e}"),
            Ok(_) => panic!("a damaged graph opened"),
        }
        // the next catch-up that reaches the graph lays it out again
        for i in 2101..=4200u64 {
            add(&db, i, "note", &text(i));
        }
        run(dir.path(), &mut cache);
        let index = VectorIndex::open(&vectors).unwrap().unwrap();
        assert_eq!((index.meta.rows, index.meta.hnsw_rows), (4200, 4200));
    }

    /// Records what it embeds, and fails once it has embedded `fail_after`
    /// texts (an interrupted catch-up).
    struct Recording {
        inner: HashEmbedder,
        seen: Vec<String>,
        fail_after: usize,
    }

    impl crate::embed::Embedder for Recording {
        fn model_id(&self) -> &str {
            self.inner.model_id()
        }
        fn dim(&self) -> usize {
            self.inner.dim()
        }
        fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
            if self.seen.len() >= self.fail_after {
                return Err(crate::Error::Model("interrupted".into()));
            }
            self.seen.extend(texts.iter().map(|t| t.to_string()));
            self.inner.embed(texts)
        }
    }

    /// A long catch-up embeds prompts and notes before answers, and one
    /// interrupted midway embeds nothing twice when it runs again.
    #[test]
    fn a_long_catch_up_embeds_text_kinds_first_and_resumes() {
        let dir = tempfile::tempdir().unwrap();
        let db = events_db(dir.path());
        for i in 1..=900u64 {
            let kind = ["agent_response", "user_prompt", "agent_response", "note"][i as usize % 4];
            add(&db, i, kind, &text(i));
        }
        let embedder = |fail_after| Recording {
            inner: HashEmbedder::new(32),
            seen: Vec::new(),
            fail_after,
        };
        let mut cache = EmbeddingCache::open(&dir.path().join("cache.sqlite")).unwrap();
        let mut first = embedder(600);
        assert!(catch_up(dir.path(), &mut first, &mut cache, 16, &mut |_, _| {}).is_err());
        let answers = |seen: &[String]| {
            seen.iter()
                .map(|t| {
                    db.query_row("SELECT kind FROM events WHERE text = ?1", [t], |r| {
                        r.get::<_, String>(0)
                    })
                    .unwrap()
                })
                .map(|k| k == "agent_response")
                .collect::<Vec<bool>>()
        };
        let kinds = answers(&first.seen);
        let first_answer = kinds.iter().position(|a| *a).unwrap();
        assert_eq!(first_answer, 450, "the 450 prompts and notes came first");
        assert!(kinds[first_answer..].iter().all(|a| *a));
        // a fresh cache: the rows written before the failure are what is kept
        let mut other_cache = EmbeddingCache::open(&dir.path().join("other.sqlite")).unwrap();
        let mut second = embedder(usize::MAX);
        let report = catch_up(
            dir.path(),
            &mut second,
            &mut other_cache,
            16,
            &mut |_, _| {},
        )
        .unwrap()
        .unwrap();
        assert_eq!(report.rows, 900);
        assert!(report.kept >= 448, "{report:?}");
        assert_eq!(report.kept + second.seen.len(), 900, "{report:?}");
        let again = run(dir.path(), &mut cache);
        assert_eq!((again.pending, again.rows), (0, 900), "{again:?}");
    }
}
