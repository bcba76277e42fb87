//! Every file and directory memlog keeps under `<git common dir>/memlog/`,
//! named in one place. Nothing there is committed: the journals are the
//! live sessions' events until they are sealed; everything else is state
//! or a projection that can be deleted and derived again from the log.
//!
//! ```text
//! memlog/
//!   journal/<session>.jsonl      a live session's events (locked, fsynced)
//!   journal/quarantine/          journals with bad lines, kept after sealing
//!   index/                       the projections (IndexLayout)
//!     fts/  graph.sqlite  vectors/
//!   index.new-<pid>/ index.old-<pid>/   a rebuild's fresh and swapped-out index
//!   index.lock                   the projections' single-writer lock
//!   embeddings.sqlite            embeddings by text hash and model (outlives rebuilds)
//!   sessions.cache               which commit seals which session
//!   sessions-personal.cache      the same, for the personal ref
//!   personal-sessions/<session>  sessions that recorded a personal event
//!   purged-commits               commits a purge replaced before purges
//!                                were recorded in the log (sync refuses them)
//!   warm.sock                    `memlog watch`'s warm server
//!   hooks.log, hooks.log.1       what hooks could not do (they never fail the agent)
//!   privacy.key                  32 random bytes keying redaction markers (never synced;
//!                                the group's to read in a shared repository)
//! ```

use std::path::{Path, PathBuf};

/// Creates the directory `dir` in its parent, which must exist: memlog's
/// directories live inside a git directory, and a background writer (the
/// index a session's end starts) whose repository was deleted meanwhile
/// must fail rather than make a ghost `.git/memlog` where the project was,
/// as `create_dir_all` would. A directory already there is fine.
pub fn create_dir_in_parent(dir: &Path) -> crate::Result<()> {
    match std::fs::create_dir(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(crate::Error::io(dir, e)),
    }
}

/// The files of one repository's memlog directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    dir: PathBuf,
}

impl Layout {
    /// The layout of the memlog directory `dir` (`<common dir>/memlog`).
    pub fn new(dir: impl Into<PathBuf>) -> Layout {
        Layout { dir: dir.into() }
    }

    /// The memlog directory itself.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `journal/`: one journal per live session.
    pub fn journal_dir(&self) -> PathBuf {
        self.dir.join("journal")
    }

    /// `index/`: the projections in use.
    pub fn index_dir(&self) -> PathBuf {
        self.dir.join("index")
    }

    /// `index.new-<pid>`: where a rebuild derives the projections before
    /// swapping them in.
    pub fn fresh_index_dir(&self, pid: u32) -> PathBuf {
        self.dir.join(format!("{FRESH_INDEX_PREFIX}{pid}"))
    }

    /// `index.old-<pid>`: the projections a rebuild swapped out, removed
    /// once the new ones are in place.
    pub fn old_index_dir(&self, pid: u32) -> PathBuf {
        self.dir.join(format!("{OLD_INDEX_PREFIX}{pid}"))
    }

    /// Whether a directory entry's name is a rebuild's leftover
    /// (`index.new-*`, `index.old-*`).
    pub fn is_index_leftover(name: &str) -> bool {
        name.starts_with(FRESH_INDEX_PREFIX) || name.starts_with(OLD_INDEX_PREFIX)
    }

    /// `index.lock`: held by the one process writing the projections.
    pub fn index_lock(&self) -> PathBuf {
        self.dir.join("index.lock")
    }

    /// `history.lock`: held shared by seals and syncs, exclusively by a
    /// purge (see `history_lock`).
    pub fn history_lock(&self) -> PathBuf {
        self.dir.join("history.lock")
    }

    /// `embeddings.sqlite`: the embedding cache, outside `index/` so that a
    /// rebuild keeps it.
    pub fn embeddings_cache(&self) -> PathBuf {
        self.dir.join("embeddings.sqlite")
    }

    /// `sessions.cache`: which commit seals which session.
    pub fn sessions_cache(&self) -> PathBuf {
        self.dir.join("sessions.cache")
    }

    /// `sessions-personal.cache`: which commit of the personal ref seals
    /// which session.
    pub fn personal_sessions_cache(&self) -> PathBuf {
        self.dir.join("sessions-personal.cache")
    }

    /// `personal.git`: the bare repository this machine's personal log is
    /// sealed in ([`crate::personal_store`]).
    pub fn personal_store(&self) -> PathBuf {
        self.dir.join("personal.git")
    }

    /// `personal-sessions/`: an empty file per session that recorded a
    /// personal event, so the rest of the session stays personal too.
    pub fn personal_sessions(&self) -> PathBuf {
        self.dir.join("personal-sessions")
    }

    /// Whether `session` recorded a personal event (its marker in
    /// [`Layout::personal_sessions`]): the rest of it is personal too.
    pub fn is_personal_session(&self, session: &str) -> bool {
        self.personal_sessions().join(session).exists()
    }

    /// `forgotten`: fingerprints of what was forgotten here, which an
    /// import leaves out ([`crate::forgotten`]).
    pub fn forgotten(&self) -> PathBuf {
        self.dir.join("forgotten")
    }

    /// `purged-commits`: the commits purges replaced, one id a line
    /// (written by versions that did not record purges in the log).
    pub fn purged_commits(&self) -> PathBuf {
        self.dir.join("purged-commits")
    }

    /// `tip`: where this clone last moved the shared memlog ref
    /// ([`crate::lost_ref`]).
    pub fn last_tip(&self) -> PathBuf {
        self.dir.join("tip")
    }

    /// `watch.lock`: held by the one `memlog watch` of the repository for as
    /// long as it runs; it holds that process's id.
    pub fn watch_lock(&self) -> PathBuf {
        self.dir.join("watch.lock")
    }

    /// `warm.sock`: the socket of `memlog watch`'s warm server.
    pub fn warm_socket(&self) -> PathBuf {
        self.dir.join("warm.sock")
    }

    /// `hooks.log`: errors of hooks, which never fail the agent.
    pub fn hooks_log(&self) -> PathBuf {
        self.dir.join("hooks.log")
    }

    /// How the repository's `core.sharedRepository` widens the modes of
    /// what memlog creates here ([`crate::shared`]).
    pub fn sharing(&self) -> crate::shared::Sharing {
        crate::shared::Sharing::of_memlog_dir(&self.dir)
    }

    /// `privacy.key`: the key of this repository's redaction markers
    /// ([`crate::privacy_key`]).
    pub fn privacy_key(&self) -> PathBuf {
        self.dir.join("privacy.key")
    }
}

const FRESH_INDEX_PREFIX: &str = "index.new-";
const OLD_INDEX_PREFIX: &str = "index.old-";

/// The files of one index directory (`index/`, or a rebuild's fresh one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexLayout {
    dir: PathBuf,
}

impl IndexLayout {
    /// The layout of the index directory `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> IndexLayout {
        IndexLayout { dir: dir.into() }
    }

    /// The index directory itself.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `fts/`: the full-text index (tantivy).
    pub fn fts(&self) -> PathBuf {
        self.dir.join("fts")
    }

    /// `graph.sqlite`: the entity/edge database.
    pub fn graph(&self) -> PathBuf {
        self.dir.join(GRAPH_FILE)
    }

    /// `vectors/`: the vectors and their `meta.json`.
    pub fn vectors(&self) -> PathBuf {
        self.dir.join("vectors")
    }
}

/// The database's file name, for messages about it.
pub const GRAPH_FILE: &str = "graph.sqlite";
