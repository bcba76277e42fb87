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

mod batch;
mod lock;
mod unindexed;
mod update;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use memlog_store::journal;
use memlog_store::view::View;
use memlog_store::{IndexLayout, Repo};
use serde::{Deserialize, Serialize};

use crate::fts::Fts;
use crate::graph::{Graph, SCHEMA_VERSION};
use crate::vectors::{VectorAccess, VectorIndex};
use crate::{Error, Result};

pub use lock::WriterLock;
pub use unindexed::{MAX_PROMPT_BYTES, Reach, Unindexed, UnindexedEvent};
pub use update::NOT_BUILT;

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
    /// Segments read.
    pub segments: usize,
    /// Events indexed.
    pub events_added: usize,
    /// Events a forget removed.
    pub events_hidden: usize,
    /// Of the events indexed, those from journals.
    pub journal_events: usize,
    /// Problems met in segments or journals (the rest was indexed).
    pub warnings: Vec<String>,
    /// The memlog commit indexed.
    pub commit: Option<String>,
}

/// How far each journal was read: file identity and byte offset.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct JournalMark {
    pub(crate) id: u64,
    pub(crate) offset: u64,
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
    /// What the log held beyond these projections when last looked at
    /// ([`Projections::read_unindexed`]): their reads reflect it.
    pub(crate) unindexed: Unindexed,
}

/// `<memlog dir>/index` ([`memlog_store::Layout::index_dir`]).
pub fn index_dir(repo: &Repo) -> PathBuf {
    repo.layout().index_dir()
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

    /// Opens existing projections for reading. A missing
    /// ([`Error::NotBuilt`]) or damaged index is an error the caller
    /// answers with [`Projections::update`].
    ///
    /// An update commits the full-text half first, then the database: in
    /// between, the halves are from different runs. Read then, they answer
    /// as the database says (full-text hits it lacks are dropped, and what
    /// it has not indexed yet is read past its watermark, see
    /// [`Unindexed`]), so a reader does not wait for the writer. With no
    /// writer at work, halves that differ are an interrupted update: the
    /// index is damaged.
    pub fn open(repo: &Repo) -> Result<Projections> {
        let dir = index_dir(repo);
        let p = Projections::open_unchecked(&dir)?;
        if p.halves_agree()? || WriterLock::try_acquire(repo)?.is_none() {
            return Ok(p);
        }
        // the writer may have finished in between
        Projections::open_at(&dir)
    }

    /// Opens the projections in `dir`, whose halves must be from the same
    /// run.
    fn open_at(dir: &Path) -> Result<Projections> {
        let p = Projections::open_unchecked(dir)?;
        if !p.halves_agree()? {
            return Err(Error::Corrupt {
                what: dir.display().to_string(),
                message: "its full-text and database halves are from different runs (an interrupted update)".into(),
            });
        }
        Ok(p)
    }

    /// Whether the full-text half's last commit is the database's.
    fn halves_agree(&self) -> Result<bool> {
        Ok(self.fts.committed_payload()? == self.graph.get_meta("generation")?)
    }

    fn open_unchecked(dir: &Path) -> Result<Projections> {
        let db = IndexLayout::new(dir).graph();
        if !db.exists() {
            return Err(Error::NotBuilt(dir.display().to_string()));
        }
        let graph = Graph::open(&db)?;
        match graph.get_meta("schema_version")? {
            Some(v) if v == SCHEMA_VERSION => {}
            other => {
                return Err(Error::Outdated {
                    what: db.display().to_string(),
                    message: format!(
                        "index schema {} but this memlog writes {SCHEMA_VERSION}",
                        other.unwrap_or_else(|| "unknown".into())
                    ),
                });
            }
        }
        let fts = Fts::open(&IndexLayout::new(dir).fts())?;
        Ok(Projections {
            dir: dir.to_path_buf(),
            graph,
            fts,
            vectors: None,
            vectors_meta: None,
            unindexed: Unindexed::default(),
        })
    }

    /// Projections of nothing, in memory: what a repository whose index
    /// was never built (or cannot be opened) is searched with, its log
    /// read past their (empty) watermark ([`Projections::read_unindexed`]).
    pub fn empty() -> Result<Projections> {
        let dir = PathBuf::from(":memory:");
        Ok(Projections {
            graph: Graph::open(&dir)?,
            fts: Fts::create_in_ram()?,
            dir,
            vectors: None,
            vectors_meta: None,
            unindexed: Unindexed::default(),
        })
    }

    /// Copies the database's write-ahead log into it when the log holds
    /// more than `max_bytes` (0: anything), without waiting for readers.
    /// Updates leave their pages in the log; an update calls this when the
    /// log has grown past [`WAL_CHECKPOINT_BYTES`]. (A writer about to
    /// leave empties the log instead: [`Projections::empty_log`].)
    pub fn checkpoint(&self, max_bytes: u64) -> Result<bool> {
        self.graph
            .checkpoint_if_larger(&self.dir.join("graph.sqlite-wal"), max_bytes)
    }

    /// Copies the database's write-ahead log into it and empties the log,
    /// for a one-shot writer about to exit ([`Graph::empty_log`]); `memlog
    /// watch`, which stays, does it when idle.
    pub fn empty_log(&self) -> Result<()> {
        self.graph.empty_log()
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
        self.vectors = VectorIndex::open_as(&dir, access)
            .unwrap_or(None)
            .filter(VectorIndex::is_whole);
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

    fn create_at(dir: &Path) -> Result<Projections> {
        if dir.exists() {
            std::fs::remove_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        memlog_store::layout::create_dir_in_parent(dir)?;
        let graph = Graph::create_bulk(&IndexLayout::new(dir).graph())?;
        Graph::set_meta(&graph.conn, "schema_version", SCHEMA_VERSION)?;
        let fts = Fts::create(&IndexLayout::new(dir).fts())?;
        Ok(Projections {
            dir: dir.to_path_buf(),
            graph,
            fts,
            vectors: None,
            vectors_meta: None,
            unindexed: Unindexed::default(),
        })
    }

    /// Whether the projections are behind the log: one ref read and a stat
    /// of each journal.
    pub fn is_fresh(&self, repo: &Repo) -> Result<bool> {
        let tip = View::peek(repo)?.key();
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

    pub(crate) fn journal_marks(&self) -> Result<HashMap<String, JournalMark>> {
        Ok(match self.graph.get_meta("journals")? {
            Some(json) => serde_json::from_str(&json).unwrap_or_default(),
            None => HashMap::new(),
        })
    }
}

/// What a journal holds beyond the mark of an earlier read: its complete
/// lines past the mark (a torn last line waits for the next read).
struct JournalTail {
    /// Where the tail starts.
    start: usize,
    /// Its events.
    events: Vec<memlog_format::Event>,
    /// Its lines that did not decode.
    problems: Vec<memlog_format::segment::LineProblem>,
    /// The mark after it.
    mark: JournalMark,
    /// Bytes read.
    bytes: usize,
    /// Whether the bound left its older lines out.
    cut: bool,
}

impl JournalTail {
    /// The tail of `f` past `mark` (from its start when the file is not the
    /// one marked), at most its last `max` bytes (from the first whole line
    /// in them); `None` when there is nothing new, or the journal was
    /// sealed meanwhile (its events then arrive with the segments).
    fn read(
        f: &journal::JournalFile,
        mark: Option<&JournalMark>,
        max: u64,
    ) -> Result<Option<JournalTail>> {
        use std::io::{Read, Seek, SeekFrom};
        let id = file_id(&f.path);
        let marked = match mark {
            Some(m) if m.id == id && m.offset <= f.bytes => m.offset,
            _ => 0,
        };
        if marked == f.bytes {
            return Ok(None);
        }
        let start = marked.max(f.bytes.saturating_sub(max));
        let mut file = match std::fs::File::open(&f.path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(&f.path, e)),
        };
        let mut bytes = Vec::new();
        file.seek(SeekFrom::Start(start))
            .and_then(|_| file.read_to_end(&mut bytes))
            .map_err(|e| Error::io(&f.path, e))?;
        let cut = start > marked;
        let tail = if cut {
            unindexed::after_first_line(&bytes)
        } else {
            &bytes[..]
        };
        let skipped = bytes.len() - tail.len();
        let complete = tail.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        let (events, problems) = memlog_format::segment::decode(&tail[..complete]);
        let start = start as usize + skipped;
        Ok(Some(JournalTail {
            start,
            events,
            problems,
            mark: JournalMark {
                id,
                offset: (start + complete) as u64,
            },
            bytes: bytes.len(),
            cut,
        }))
    }
}

/// Identity of a journal file (inode), so a new journal for the same
/// session is read from its start.
pub(crate) fn file_id(path: &Path) -> u64 {
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
