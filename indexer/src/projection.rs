//! The projections of a repository's log and how they are kept up to date.
//!
//! Everything lives under `<git common dir>/memlog/index/`: `fts/` (tantivy)
//! and `graph.sqlite` (SQLite), whose `meta` table holds the watermark: the
//! memlog commit and tree indexed, and how far each live journal was read.
//!
//! [`Projections::update`] indexes only what is new: the segments the tree
//! of the ref's tip has beyond the watermark's tree (so a `git pull` that
//! brings a teammate's sessions is picked up), then the unread tail of every
//! journal. Events are immutable and keyed by id, so indexing one twice is a
//! no-op. `forget` events remove their targets everywhere and keep them out
//! later. A history rewrite (segments removed: `memlog purge`), a schema
//! change or a damaged file leads to a rebuild, which derives everything
//! again into a fresh directory and swaps it in.
//!
//! One process writes at a time (`index.lock`); readers never block.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::path::{Path, PathBuf};

use memlog_format::refs::Reference;
use memlog_format::visibility::Forgets;
use memlog_format::{Event, Kind, segment};
use memlog_store::journal;
use memlog_store::log::Log;
use memlog_store::{IndexLayout, Layout, Repo};
use rusqlite::{Transaction, params};
use serde::{Deserialize, Serialize};
use tantivy::IndexWriter;

use crate::derive::{self, Derived};
use crate::fts::{Fts, FtsDoc};
use crate::graph::{Graph, SCHEMA_VERSION};
use crate::vectors::{VectorAccess, VectorIndex};
use crate::{Error, Result};

/// Memory of the full-text writer: incremental runs are small; a rebuild
/// gets more so that it writes fewer, larger segments.
const WRITER_BUDGET: usize = 64 << 20;
const REBUILD_BUDGET: usize = 192 << 20;
/// Past this many full-text segments, an update waits for merges.
const MAX_UNMERGED_SEGMENTS: usize = 16;

/// Size of the database's write-ahead log past which an update copies it
/// into the database (see [`Projections::checkpoint`]).
pub const WAL_CHECKPOINT_BYTES: u64 = 64 << 20;

/// What an update or rebuild did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct IndexReport {
    /// True when everything was derived again.
    pub rebuilt: bool,
    /// Why a rebuild happened, if it did.
    pub reason: Option<String>,
    pub segments: usize,
    pub events_added: usize,
    pub events_hidden: usize,
    pub journal_events: usize,
    /// Problems met in segments or journals (the rest was indexed).
    pub warnings: Vec<String>,
    /// The memlog commit indexed.
    pub commit: Option<String>,
}

/// How far each journal was read: file identity and byte offset.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct JournalMark {
    id: u64,
    offset: u64,
}

/// The projections of one repository.
pub struct Projections {
    pub(crate) dir: PathBuf,
    pub(crate) graph: Graph,
    pub(crate) fts: Fts,
    /// Vectors, when a model has made some (they trail the other two) and
    /// [`Projections::load_vectors`] opened them.
    pub(crate) vectors: Option<VectorIndex>,
    /// The vectors' `meta.json` as it read when they were last opened (or
    /// failed to open): the commit of each catch-up changes it.
    vectors_meta: Option<Vec<u8>>,
}

/// `<memlog dir>/index` ([`memlog_store::Layout::index_dir`]).
pub fn index_dir(repo: &Repo) -> PathBuf {
    repo.layout().index_dir()
}

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

impl Projections {
    /// The index directory these projections were opened from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The entity/edge database. Other crates read it only through this
    /// crate's query functions, except `memlog sql` (read-only) and the
    /// tests and benchmarks.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// The full-text index.
    pub fn fts(&self) -> &Fts {
        &self.fts
    }

    /// The vectors, when loaded (see [`Projections::load_vectors`]).
    pub fn vectors(&self) -> Option<&VectorIndex> {
        self.vectors.as_ref()
    }

    /// Takes the loaded vectors out of the projections.
    pub fn take_vectors(&mut self) -> Option<VectorIndex> {
        self.vectors.take()
    }

    /// Opens existing projections for reading. A missing or damaged index
    /// is an error the caller answers with [`Projections::update`].
    pub fn open(repo: &Repo) -> Result<Projections> {
        Projections::open_at(&index_dir(repo))
    }

    fn open_at(dir: &Path) -> Result<Projections> {
        let db = IndexLayout::new(dir).graph();
        if !db.exists() {
            return Err(Error::Corrupt {
                what: dir.display().to_string(),
                message: "no index yet".into(),
            });
        }
        let graph = Graph::open(&db)?;
        match graph.get_meta("schema_version")? {
            Some(v) if v == SCHEMA_VERSION => {}
            other => {
                return Err(Error::Corrupt {
                    what: db.display().to_string(),
                    message: format!(
                        "index schema {} but this memlog writes {SCHEMA_VERSION}",
                        other.unwrap_or_else(|| "unknown".into())
                    ),
                });
            }
        }
        let fts = Fts::open(&IndexLayout::new(dir).fts())?;
        let committed = fts
            .index
            .load_metas()
            .map_err(|e| Error::Corrupt {
                what: dir.display().to_string(),
                message: e.to_string(),
            })?
            .payload;
        if committed != graph.get_meta("generation")? {
            return Err(Error::Corrupt {
                what: dir.display().to_string(),
                message: "its full-text and database halves are from different runs (an interrupted update)".into(),
            });
        }
        Ok(Projections {
            dir: dir.to_path_buf(),
            graph,
            fts,
            vectors: None,
            vectors_meta: None,
        })
    }

    /// Copies the database's write-ahead log into it when the log holds
    /// more than `max_bytes` (0: anything). Updates leave their pages in
    /// the log; `memlog watch` calls this when idle, and an update calls it
    /// when the log has grown past [`WAL_CHECKPOINT_BYTES`].
    pub fn checkpoint(&self, max_bytes: u64) -> Result<bool> {
        self.graph
            .checkpoint_if_larger(&self.dir.join("graph.sqlite-wal"), max_bytes)
    }

    /// Opens the vectors with their HNSW graph, for a process that searches
    /// many times (loading the graph costs time the hooks' full-text path
    /// does not spend). Vectors are optional and rebuildable: a damaged
    /// projection is searched without, and the next catch-up starts it
    /// again.
    pub fn load_vectors(&mut self) {
        self.load_vectors_as(VectorAccess::Graph);
    }

    /// Opens the vectors as `access` says (see [`VectorAccess`]).
    pub fn load_vectors_as(&mut self, access: VectorAccess) {
        let dir = IndexLayout::new(&self.dir).vectors();
        self.vectors_meta = std::fs::read(dir.join("meta.json")).ok();
        self.vectors = VectorIndex::open_as(&dir, access).unwrap_or(None);
    }

    /// Whether the vectors on disk are still those last opened: none there
    /// and none then counts as current, and so does a projection that
    /// failed to open and has not changed since (opening it again would
    /// fail again, at the cost of loading a graph).
    pub fn vectors_are_current(&self) -> bool {
        std::fs::read(crate::vectors::meta_path(
            &IndexLayout::new(&self.dir).vectors(),
        ))
        .ok()
            == self.vectors_meta
    }

    /// Whether every sealed session is indexed (journals aside): one ref
    /// read. Hooks use this: the live session need not be searchable for
    /// injecting memories of earlier ones.
    pub fn has_sealed(&self, repo: &Repo) -> Result<bool> {
        let tip = Log::new(repo).tip()?.map(|t| t.to_string());
        Ok(tip == self.graph.get_meta("indexed_commit")?)
    }

    fn create_at(dir: &Path) -> Result<Projections> {
        if dir.exists() {
            std::fs::remove_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let graph = Graph::create_bulk(&IndexLayout::new(dir).graph())?;
        Graph::set_meta(&graph.conn, "schema_version", SCHEMA_VERSION)?;
        let fts = Fts::create(&IndexLayout::new(dir).fts())?;
        Ok(Projections {
            dir: dir.to_path_buf(),
            graph,
            fts,
            vectors: None,
            vectors_meta: None,
        })
    }

    /// Brings the projections up to date, rebuilding them when they are
    /// missing, damaged, from another schema, or behind a rewritten history.
    /// Waits for another writer to finish first.
    pub fn update(repo: &Repo) -> Result<IndexReport> {
        let _lock = WriterLock::acquire(repo)?;
        Projections::update_locked(repo)
    }

    /// Like [`Projections::update`], but returns `Ok(None)` at once if
    /// another process is writing (the caller reads what is there).
    pub fn try_update(repo: &Repo) -> Result<Option<IndexReport>> {
        match WriterLock::try_acquire(repo)? {
            Some(_lock) => Projections::update_locked(repo).map(Some),
            None => Ok(None),
        }
    }

    fn update_locked(repo: &Repo) -> Result<IndexReport> {
        let dir = index_dir(repo);
        let reason = match Projections::open_at(&dir) {
            Ok(mut p) => match p.apply(repo, false)? {
                Applied::Done(report) => return Ok(report),
                Applied::NeedsRebuild(reason) => reason,
            },
            Err(Error::Corrupt { what, message }) if message == "no index yet" => {
                let _ = what;
                "no index yet".to_string()
            }
            Err(Error::Corrupt { what, message }) => format!("{what} is damaged ({message})"),
            Err(e) => return Err(e),
        };
        let mut report = Projections::rebuild_locked(repo)?;
        report.reason = Some(reason);
        Ok(report)
    }

    /// Deletes the projections and derives them again from the log.
    pub fn rebuild(repo: &Repo) -> Result<IndexReport> {
        let _lock = WriterLock::acquire(repo)?;
        let mut report = Projections::rebuild_locked(repo)?;
        report.reason = Some("requested".into());
        Ok(report)
    }

    fn rebuild_locked(repo: &Repo) -> Result<IndexReport> {
        let dir = index_dir(repo);
        remove_leftovers(repo);
        let fresh = repo.layout().fresh_index_dir(std::process::id());
        let mut p = Projections::create_at(&fresh)?;
        let report = match p.apply(repo, true)? {
            Applied::Done(r) => r,
            Applied::NeedsRebuild(reason) => {
                return Err(Error::Invalid(format!(
                    "rebuild could not complete: {reason}"
                )));
            }
        };
        p.graph.finish_bulk()?;
        drop(p);
        // Vectors cost a minute per 100k events to lay out again and stay
        // right across a rebuild: the next catch-up checks them row by row.
        // Failing to carry them only means they are made again.
        let _ = crate::vectors::adopt(&dir, &fresh);
        // Swap directories: readers that still have the old files open keep
        // reading them; new readers get the new index.
        let old = repo.layout().old_index_dir(std::process::id());
        if dir.exists() {
            std::fs::rename(&dir, &old).map_err(|e| Error::io(&dir, e))?;
        }
        std::fs::rename(&fresh, &dir).map_err(|e| Error::io(&fresh, e))?;
        let _ = std::fs::remove_dir_all(&old);
        Ok(IndexReport {
            rebuilt: true,
            ..report
        })
    }

    /// Whether the projections are behind the log: one ref read and a stat
    /// of each journal.
    pub fn is_fresh(&self, repo: &Repo) -> Result<bool> {
        let tip = Log::new(repo).tip()?.map(|t| t.to_string());
        if tip != self.graph.get_meta("indexed_commit")? {
            return Ok(false);
        }
        let marks = self.journal_marks()?;
        let files = journal::list(&repo.journal_dir())?;
        if files.len() != marks.len() {
            return Ok(false);
        }
        for f in files {
            match marks.get(&f.session) {
                Some(m) if m.offset == f.bytes && m.id == file_id(&f.path) => {}
                _ => return Ok(false),
            }
        }
        Ok(true)
    }

    fn journal_marks(&self) -> Result<HashMap<String, JournalMark>> {
        Ok(match self.graph.get_meta("journals")? {
            Some(json) => serde_json::from_str(&json).unwrap_or_default(),
            None => HashMap::new(),
        })
    }

    /// Indexes what is new since the watermark (everything, for a fresh
    /// index). Returns `NeedsRebuild` when history was rewritten.
    fn apply(&mut self, repo: &Repo, rebuilding: bool) -> Result<Applied> {
        let log = Log::new(repo);
        let tip = log.tip()?;
        let indexed_commit = self.graph.get_meta("indexed_commit")?;
        let indexed_tree = self.graph.get_meta("indexed_tree")?;
        let mut report = IndexReport {
            commit: tip.map(|t| t.to_string()),
            ..Default::default()
        };

        // Which segments are new.
        let mut segments = Vec::new();
        let mut tip_tree = None;
        if let Some(t) = tip {
            let tree = log.commit(t)?.tree;
            tip_tree = Some(tree);
            if indexed_commit.as_deref() != Some(t.to_string().as_str()) {
                match indexed_tree.as_deref().map(gix_object_id) {
                    None => segments = log.segments_in_tree(tree)?,
                    Some(None) => {
                        return Ok(Applied::NeedsRebuild(
                            "the index watermark is unreadable".into(),
                        ));
                    }
                    Some(Some(old)) => {
                        if !log.has_tree(old) {
                            return Ok(Applied::NeedsRebuild(
                                "the memlog history was rewritten".into(),
                            ));
                        }
                        let diff = log.diff_trees(old, tree)?;
                        if !diff.removed.is_empty() {
                            return Ok(Applied::NeedsRebuild(
                                "segments were removed from the log (purge)".into(),
                            ));
                        }
                        segments = diff.added;
                    }
                }
            }
        } else if indexed_commit.is_some() {
            return Ok(Applied::NeedsRebuild("the memlog ref was deleted".into()));
        }
        report.segments = segments.len();

        // A rebuild learns every forget first, so that nothing is indexed and
        // then deleted (deleted documents would skew BM25 statistics).
        let mut forgets = self.load_forgets()?;
        if rebuilding {
            for seg in &segments {
                let bytes = log.read_blob(seg.blob)?;
                if memchr_forget(&bytes) {
                    for e in segment::decode_trusted(&bytes).0 {
                        forgets.add(&e);
                    }
                }
            }
        }

        let mut marks = if rebuilding {
            HashMap::new()
        } else {
            self.journal_marks()?
        };
        let threads = if rebuilding { 0 } else { 1 };
        let budget = if rebuilding {
            REBUILD_BUDGET
        } else {
            WRITER_BUDGET
        };
        let writer = self.fts.writer(threads, budget)?;
        let tx = self
            .graph
            .conn
            .transaction()
            .map_err(|e| Error::sql(&self.dir, e))?;
        let mut batch = Batch {
            fts: &self.fts,
            writer: &writer,
            tx: &tx,
            forgets,
            sessions: HashSet::new(),
            deleted: false,
            report: &mut report,
            now: memlog_format::time::now(),
            bulk: rebuilding,
            seen_events: HashSet::new(),
            seen_entities: HashSet::new(),
            tasks_changed: false,
            memory_changed: false,
        };
        for seg in &segments {
            let (events, problem) = log.read_segment(seg, false)?;
            if let Some(p) = problem {
                batch
                    .report
                    .warnings
                    .push(format!("{}: {}", p.path, p.problem));
            }
            for e in &events {
                batch.index(e, Source::Log)?;
            }
        }

        // Journals of running sessions.
        let files = journal::list(&repo.journal_dir())?;
        let present: HashSet<&str> = files.iter().map(|f| f.session.as_str()).collect();
        let gone: Vec<String> = marks
            .keys()
            .filter(|s| !present.contains(s.as_str()))
            .cloned()
            .collect();
        for session in gone {
            marks.remove(&session);
            batch.drop_unsealed(&session)?;
        }
        for f in &files {
            let id = file_id(&f.path);
            let start = match marks.get(&f.session) {
                Some(m) if m.id == id && m.offset <= f.bytes => m.offset,
                _ => 0,
            };
            if start == f.bytes {
                continue;
            }
            let bytes = match std::fs::read(&f.path) {
                Ok(b) => b,
                // sealed meanwhile: its events arrive with the segments
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(Error::io(&f.path, e)),
            };
            let start = (start as usize).min(bytes.len());
            let tail = &bytes[start..];
            let complete = tail.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
            let (events, problems) = segment::decode(&tail[..complete]);
            for p in problems {
                batch.report.warnings.push(format!(
                    "{}, line after byte {start}: {}",
                    f.path.display(),
                    p.message
                ));
            }
            for e in &events {
                batch.index(e, Source::Journal)?;
                batch.report.journal_events += 1;
            }
            marks.insert(
                f.session.clone(),
                JournalMark {
                    id,
                    offset: (start + complete) as u64,
                },
            );
        }
        let sessions: Vec<String> = batch.sessions.drain().collect();
        let deleted = batch.deleted;
        let tasks_changed = batch.tasks_changed;
        let memory_changed = batch.memory_changed;
        drop(batch);
        // Both halves carry the same generation: if a crash lands between
        // the two commits, they disagree on the next open and the index is
        // rebuilt, instead of the full-text half holding documents the
        // database does not know (or missing some it does).
        let generation = new_generation(&report, &marks);
        // Until their commits the halves are independent: the full-text
        // commit (flushing the indexing threads, a rebuild's merges) runs
        // beside the database's indexing, which a rebuild otherwise did
        // alone at the end. The full-text half still commits first.
        let (fts, dir) = (&self.fts, &self.dir);
        std::thread::scope(|scope| {
            let fts_commit =
                scope.spawn(|| commit_fts(fts, dir, writer, &generation, rebuilding, deleted));
            let sql = (|| {
                if rebuilding {
                    // the tables are full: index them once
                    tx.execute_batch(crate::graph::INDEXES)
                        .map_err(|e| Error::sql(dir, e))?;
                }
                // After the indexes exist: artifacts that blockers name are
                // get-or-create, which needs the unique index on entities.
                if rebuilding || tasks_changed {
                    crate::tasks::refold::refold(&tx)?;
                }
                if rebuilding || memory_changed {
                    crate::memory::refold(&tx)?;
                }
                refresh_sessions(&tx, &sessions, rebuilding)
            })();
            let fts = fts_commit.join().unwrap_or_else(|_| {
                Err(Error::Invalid(
                    "the full-text commit stopped unexpectedly".into(),
                ))
            });
            fts.and(sql)
        })?;
        Graph::set_meta(&tx, "generation", &generation)?;
        Graph::set_meta(
            &tx,
            "indexed_commit",
            report.commit.as_deref().unwrap_or(""),
        )?;
        Graph::set_meta(
            &tx,
            "indexed_tree",
            &tip_tree.map(|t| t.to_string()).unwrap_or_default(),
        )?;
        Graph::set_meta(
            &tx,
            "journals",
            &serde_json::to_string(&marks).unwrap_or_else(|_| "{}".into()),
        )?;
        if report.commit.is_none() {
            tx.execute(
                "DELETE FROM meta WHERE key IN ('indexed_commit', 'indexed_tree')",
                [],
            )
            .map_err(|e| Error::sql(&self.dir, e))?;
        }
        tx.commit().map_err(|e| Error::sql(&self.dir, e))?;
        if !rebuilding {
            self.checkpoint(WAL_CHECKPOINT_BYTES)?;
        }
        Ok(Applied::Done(report))
    }

    fn load_forgets(&self) -> Result<Forgets> {
        let mut stmt = self
            .graph
            .conn
            .prepare("SELECT event FROM forgets")
            .map_err(|e| Error::sql(&self.dir, e))?;
        let rows = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .map_err(|e| Error::sql(&self.dir, e))?;
        let mut forgets = Forgets::default();
        for line in rows {
            let line = line.map_err(|e| Error::sql(&self.dir, e))?;
            if let Ok(e) = Event::from_line(&line) {
                forgets.add(&e);
            }
        }
        Ok(forgets)
    }
}

enum Applied {
    Done(IndexReport),
    NeedsRebuild(String),
}

#[derive(Clone, Copy, PartialEq)]
enum Source {
    Log,
    Journal,
}

impl Source {
    fn as_str(self) -> &'static str {
        match self {
            Source::Log => "log",
            Source::Journal => "journal",
        }
    }
}

/// One run of indexing: the open writer and transaction.
struct Batch<'a> {
    fts: &'a Fts,
    writer: &'a IndexWriter,
    tx: &'a Transaction<'a>,
    forgets: Forgets,
    sessions: HashSet<String>,
    deleted: bool,
    report: &'a mut IndexReport,
    now: String,
    /// A rebuild: tables have no indexes yet, every forget is known up
    /// front, and uniqueness is checked in memory.
    bulk: bool,
    /// Keys (not ids: no string hashing per event) of the events indexed.
    seen_events: HashSet<u64>,
    seen_entities: HashSet<String>,
    /// Task events were added or events removed: the task rows are
    /// derived again at the end of the run.
    tasks_changed: bool,
    /// Likewise for the `memory` table (levels' counts).
    memory_changed: bool,
}

impl Batch<'_> {
    fn sql(&self, e: rusqlite::Error) -> Error {
        Error::sql(Path::new("graph.sqlite"), e)
    }

    fn index(&mut self, e: &Event, source: Source) -> Result<()> {
        if e.kind == Kind::Forget {
            self.tx
                .prepare_cached("INSERT OR IGNORE INTO forgets(id, event) VALUES (?1, ?2)")
                .and_then(|mut st| st.execute(params![e.id.as_str(), e.canonical_line()]))
                .map_err(|x| self.sql(x))?;
            self.forgets.add(e);
            // A rebuild learned every forget before indexing anything.
            if !self.bulk {
                self.hide_forgotten(e)?;
            }
        }
        if self.forgets.hides(e) {
            return self.note_hidden(&e.id);
        }
        if self.bulk && !self.seen_events.insert(crate::fts::event_key(&e.id)) {
            return Ok(());
        }
        let d = derive::derive(e);
        // The body is kept unless it is `{"text": …}` with the row's text,
        // so that every row gives back its event exactly (`lookup`).
        let body = (e.body.len() != 1 || e.text() != Some(d.text.as_str())).then(|| {
            let mut out = String::new();
            memlog_format::canonical::write_map(&mut out, &e.body);
            out
        });
        let mut meta = String::new();
        memlog_format::canonical::write_map(&mut meta, &e.meta);
        let inserted = self
            .tx
            .prepare_cached(
                "INSERT OR IGNORE INTO events(id, key, session, seq, ts, ts_ms, kind, project, text, tool, ref, body, meta, source)
                 VALUES (?1, ?14, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            )
            .and_then(|mut st| {
                st.execute(params![
                    e.id.as_str(),
                    e.session,
                    e.seq as i64,
                    e.ts,
                    memlog_format::time::to_ms(&e.ts),
                    e.kind.as_str(),
                    e.project,
                    d.text,
                    d.tool,
                    e.external_ref(),
                    body,
                    meta,
                    source.as_str(),
                    crate::fts::event_key(&e.id) as i64,
                ])
            })
            .map_err(|x| self.sql(x))?;
        if inserted == 0 {
            if source == Source::Log {
                self.tx
                    .prepare_cached(
                        "UPDATE events SET source = 'log' WHERE key = ?1 AND id = ?2 AND source = 'journal'",
                    )
                    .and_then(|mut st| st.execute(params![crate::fts::event_key(&e.id) as i64, e.id.as_str()]))
                    .map_err(|x| self.sql(x))?;
            }
            return Ok(());
        }
        self.report.events_added += 1;
        self.sessions.insert(e.session.clone());
        self.tasks_changed |= crate::tasks::refold::TASK_KINDS.contains(&e.kind);
        self.memory_changed |= crate::memory::MEMORY_KINDS.contains(&e.kind);
        self.link(e, &d)?;
        if !d.text.is_empty() {
            let files = d.files();
            self.fts.add(
                self.writer,
                &FtsDoc {
                    id: &e.id,
                    text: &d.text,
                    kind: e.kind.as_str(),
                    session: &e.session,
                    ts_ms: memlog_format::time::to_ms(&e.ts),
                    tool: d.tool.as_deref(),
                    files: &files,
                },
            )?;
        }
        Ok(())
    }

    /// Entities and edges of one event: its session, the files it touched
    /// and the artifacts and files it mentions.
    fn link(&mut self, e: &Event, d: &Derived) -> Result<()> {
        let session_id = format!("session:{}", e.session);
        self.entity(&session_id, "session", &e.session, &e.session)?;
        for path in &d.touched {
            let key = format!("file:{path}");
            self.entity(&key, "file", &key, path)?;
            self.edge(&session_id, "touches", &key, &e.id, &e.ts)?;
        }
        for r in &d.mentions {
            let key = r.key();
            self.entity(&key, r.entity_type(), &key, &r.title())?;
            // A file the event touched already has its `touches` edge.
            if matches!(r, Reference::File(p) if d.touched.contains(p)) {
                continue;
            }
            self.edge(&session_id, "mentions", &key, &e.id, &e.ts)?;
        }
        Ok(())
    }

    fn entity(&mut self, id: &str, kind: &str, key: &str, title: &str) -> Result<()> {
        if !self.seen_entities.insert(id.to_string()) {
            return Ok(());
        }
        let sql = if self.bulk {
            // uniqueness is kept in `seen_entities` until indexes exist;
            // entities known before this batch cannot exist in a rebuild
            "INSERT INTO entities(entity_id, entity_type, canonical_key, title, title_norm, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)"
        } else {
            "INSERT OR IGNORE INTO entities(entity_id, entity_type, canonical_key, title, title_norm, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)"
        };
        self.tx
            .prepare_cached(sql)
            .and_then(|mut st| {
                st.execute(params![
                    id,
                    kind,
                    key,
                    title,
                    memlog_format::key::normalize(title),
                    self.now
                ])
            })
            .map_err(|x| self.sql(x))?;
        Ok(())
    }

    fn edge(&self, src: &str, rel: &str, dst: &str, evidence: &str, ts: &str) -> Result<()> {
        self.tx
            .prepare_cached(
                // an event is indexed once, so its edges are new
                "INSERT INTO edges(src_id, rel_type, dst_id, evidence, ts) VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .and_then(|mut st| st.execute(params![src, rel, dst, evidence, ts]))
            .map_err(|x| self.sql(x))?;
        Ok(())
    }

    /// Removes already indexed events that a new forget hides.
    fn hide_forgotten(&mut self, forget: &Event) -> Result<()> {
        let mut victims: Vec<(String, String)> = Vec::new();
        {
            let mut by_id = self
                .tx
                .prepare("SELECT id, session FROM events WHERE key = ?1 AND id = ?2")
                .map_err(|x| self.sql(x))?;
            if let Some(serde_json::Value::Array(targets)) = forget.body.get("targets") {
                for t in targets.iter().filter_map(|t| t.as_str()) {
                    let rows = by_id
                        .query_map(params![crate::fts::event_key(t) as i64, t], |r| {
                            Ok((r.get(0)?, r.get(1)?))
                        })
                        .map_err(|x| self.sql(x))?;
                    for row in rows {
                        victims.push(row.map_err(|x| self.sql(x))?);
                    }
                }
            }
            let mut wide = self
                .tx
                .prepare(
                    "SELECT id, session FROM events WHERE kind != 'forget' AND (session = ?1 OR ts < ?2)",
                )
                .map_err(|x| self.sql(x))?;
            let session = forget
                .body
                .get("session")
                .and_then(|v| v.as_str())
                .unwrap_or("\u{0}");
            let before = forget
                .body
                .get("before")
                .and_then(|v| v.as_str())
                .unwrap_or("");
            if session != "\u{0}" || !before.is_empty() {
                let rows = wide
                    .query_map(params![session, before], |r| Ok((r.get(0)?, r.get(1)?)))
                    .map_err(|x| self.sql(x))?;
                for row in rows {
                    victims.push(row.map_err(|x| self.sql(x))?);
                }
            }
        }
        for (id, session) in victims {
            self.remove(&id, &session)?;
            self.note_hidden(&id)?;
            self.sessions.insert(session);
            self.report.events_hidden += 1;
        }
        Ok(())
    }

    fn remove(&mut self, id: &str, session: &str) -> Result<()> {
        self.tx
            .execute(
                "DELETE FROM events WHERE key = ?1 AND id = ?2",
                params![crate::fts::event_key(id) as i64, id],
            )
            .map_err(|x| self.sql(x))?;
        // An event's edges start at its session (see `link`).
        self.tx
            .execute(
                "DELETE FROM edges WHERE src_id = ?1 AND evidence = ?2",
                params![format!("session:{session}"), id],
            )
            .map_err(|x| self.sql(x))?;
        self.fts.delete(self.writer, id);
        self.deleted = true;
        self.tasks_changed = true;
        self.memory_changed = true;
        Ok(())
    }

    /// Counts an event hidden by a forget (`memlog stats`), once.
    fn note_hidden(&self, id: &str) -> Result<()> {
        self.tx
            .prepare_cached("INSERT OR IGNORE INTO hidden(id) VALUES (?1)")
            .and_then(|mut st| st.execute([id]))
            .map_err(|x| self.sql(x))?;
        Ok(())
    }

    /// A journal vanished: its events that were never sealed (the journal
    /// was quarantined or deleted by hand) leave the projections.
    fn drop_unsealed(&mut self, session: &str) -> Result<()> {
        let ids: Vec<String> = {
            let mut stmt = self
                .tx
                .prepare("SELECT id FROM events WHERE session = ?1 AND source = 'journal'")
                .map_err(|x| self.sql(x))?;
            let rows = stmt
                .query_map([session], |r| r.get(0))
                .map_err(|x| self.sql(x))?;
            rows.collect::<std::result::Result<_, _>>()
                .map_err(|x| self.sql(x))?
        };
        for id in ids {
            self.remove(&id, session)?;
        }
        self.sessions.insert(session.to_string());
        Ok(())
    }
}

const SESSION_ROWS: &str = "INSERT INTO sessions(session, project, first_ts, last_ts, events, prompts, tool_calls, first_prompt, branch)
     SELECT session, min(project), min(ts), max(ts), count(*),
            sum(kind = 'user_prompt'), sum(kind = 'tool_observation'),
            (SELECT text FROM events p WHERE p.session = e.session AND p.kind = 'user_prompt' ORDER BY ts, seq LIMIT 1),
            (SELECT json_extract(meta, '$.branch') FROM events b WHERE b.session = e.session AND json_extract(meta, '$.branch') IS NOT NULL ORDER BY ts, seq LIMIT 1)
     FROM events e";

/// Commits the full-text half with its generation, and waits for the
/// merges worth waiting for.
fn commit_fts(
    fts: &Fts,
    dir: &Path,
    mut writer: IndexWriter,
    generation: &str,
    rebuilding: bool,
    deleted: bool,
) -> Result<()> {
    let mut prepared = writer.prepare_commit().map_err(|e| Error::fts(dir, e))?;
    prepared.set_payload(generation);
    prepared.commit().map_err(|e| Error::fts(dir, e))?;
    if deleted {
        merge_all(fts, &mut writer)?;
    }
    // Merging segments is what makes a small update slow (it was most of
    // the time of indexing one session); it is worth waiting for only when
    // segments have piled up, or after a rebuild. Otherwise merges started
    // by the commit are abandoned with the writer (tantivy collects their
    // files later) and the data is already committed.
    let segments = fts
        .index
        .searchable_segment_ids()
        .map(|ids| ids.len())
        .unwrap_or(0);
    if rebuilding || deleted || segments > MAX_UNMERGED_SEGMENTS {
        writer
            .wait_merging_threads()
            .map_err(|e| Error::fts(dir, e))?;
    }
    Ok(())
}

/// Removes half-built or swapped-out index directories that a killed
/// rebuild left behind (the caller holds the writer lock, so none is live).
fn remove_leftovers(repo: &Repo) {
    let Ok(entries) = std::fs::read_dir(&repo.memlog_dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if Layout::is_index_leftover(&name) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// A token naming one run's committed state.
fn new_generation(report: &IndexReport, marks: &HashMap<String, JournalMark>) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let seed = format!(
        "{:?}|{}|{}|{}",
        report.commit,
        serde_json::to_string(marks).unwrap_or_default(),
        nanos,
        std::process::id()
    );
    blake3::hash(seed.as_bytes()).to_hex()[..16].to_string()
}

/// Recomputes the `sessions` rows of the given sessions (of all of them in
/// a rebuild) from `events`.
fn refresh_sessions(tx: &Transaction, sessions: &[String], all: bool) -> Result<()> {
    let err = |e| Error::sql(Path::new("graph.sqlite"), e);
    if all {
        tx.execute("DELETE FROM sessions", []).map_err(err)?;
        tx.execute(&format!("{SESSION_ROWS} GROUP BY session"), [])
            .map_err(err)?;
        return Ok(());
    }
    let mut delete = tx
        .prepare("DELETE FROM sessions WHERE session = ?1")
        .map_err(err)?;
    let mut insert = tx
        .prepare(&format!(
            "{SESSION_ROWS} WHERE session = ?1 GROUP BY session"
        ))
        .map_err(err)?;
    for s in sessions {
        delete.execute([s]).map_err(err)?;
        insert.execute([s]).map_err(err)?;
    }
    Ok(())
}

/// Merges every segment so that deleted documents stop counting in BM25
/// statistics (incremental and rebuilt indexes then score alike).
fn merge_all(fts: &Fts, writer: &mut IndexWriter) -> Result<()> {
    let ids = fts
        .index
        .searchable_segment_ids()
        .map_err(|e| Error::fts(Path::new("full-text index"), e))?;
    if ids.len() > 1
        || fts
            .index
            .searchable_segment_metas()
            .map(|m| m.iter().any(|s| s.has_deletes()))
            .unwrap_or(false)
    {
        let _ = writer.merge(&ids).wait();
    }
    Ok(())
}

fn memchr_forget(bytes: &[u8]) -> bool {
    memchr::memmem::find(bytes, br#""kind":"forget""#).is_some()
}

fn gix_object_id(hex: &str) -> Option<memlog_store::ObjectId> {
    memlog_store::ObjectId::from_hex(hex.as_bytes()).ok()
}

/// Identity of a journal file (inode), so a new journal for the same
/// session is read from its start.
fn file_id(path: &Path) -> u64 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).map(|m| m.ino()).unwrap_or(0)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        0
    }
}
