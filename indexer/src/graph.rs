//! The entity/edge projection (SQLite): events, sessions, entities, their
//! aliases and the edges between them. Its schema is documented in
//! `indexer/SCHEMA.md` so that people can query it with `memlog sql`.

use std::path::Path;

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use crate::{Error, Result};

/// Bumped whenever the schema or what is derived into it changes: an index
/// with another version is rebuilt.
pub const SCHEMA_VERSION: &str = "5";

/// Tables. Unique and lookup indexes are separate ([`INDEXES`]) so that a
/// rebuild can fill the tables first and index them once at the end.
const TABLES: &str = r#"
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    id       TEXT NOT NULL,
    key      INTEGER NOT NULL,
    session  TEXT NOT NULL,
    seq      INTEGER NOT NULL,
    ts       TEXT NOT NULL,
    ts_ms    INTEGER NOT NULL,
    kind     TEXT NOT NULL,
    project  TEXT NOT NULL,
    text     TEXT NOT NULL,
    tool     TEXT,
    ref      TEXT,
    body     TEXT,
    meta     TEXT NOT NULL,
    source   TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sessions (
    session      TEXT PRIMARY KEY,
    project      TEXT NOT NULL,
    first_ts     TEXT NOT NULL,
    last_ts      TEXT NOT NULL,
    events       INTEGER NOT NULL,
    prompts      INTEGER NOT NULL,
    tool_calls   INTEGER NOT NULL,
    first_prompt TEXT,
    branch       TEXT
);
CREATE TABLE IF NOT EXISTS entities (
    entity_id     TEXT NOT NULL,
    entity_type   TEXT NOT NULL,
    canonical_key TEXT NOT NULL,
    title         TEXT NOT NULL,
    stage         TEXT NOT NULL DEFAULT 'raw',
    status        TEXT NOT NULL DEFAULT 'active',
    current_json  TEXT NOT NULL DEFAULT '{}',
    title_norm    TEXT,
    search_text   TEXT,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS entity_aliases (
    entity_type   TEXT NOT NULL,
    canonical_key TEXT NOT NULL,
    entity_id     TEXT NOT NULL,
    is_primary    INTEGER NOT NULL DEFAULT 0,
    created_at    TEXT NOT NULL,
    PRIMARY KEY (entity_type, canonical_key)
);
CREATE TABLE IF NOT EXISTS edges (
    src_id   TEXT NOT NULL,
    rel_type TEXT NOT NULL,
    dst_id   TEXT NOT NULL,
    evidence TEXT NOT NULL DEFAULT '',
    ts       TEXT NOT NULL,
    meta     TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS memory (
    event_id    TEXT PRIMARY KEY,
    base_level  INTEGER NOT NULL,
    success     INTEGER NOT NULL DEFAULT 0,
    failure     INTEGER NOT NULL DEFAULT 0,
    recalls     INTEGER NOT NULL DEFAULT 0,
    last_recall TEXT
);
CREATE TABLE IF NOT EXISTS forgets (
    id    TEXT PRIMARY KEY,
    event TEXT NOT NULL
);
"#;

pub(crate) const INDEXES: &str = r#"
CREATE UNIQUE INDEX IF NOT EXISTS events_by_id ON events(id);
CREATE INDEX IF NOT EXISTS events_by_key ON events(key);
CREATE INDEX IF NOT EXISTS events_by_session ON events(session, ts, seq);
CREATE INDEX IF NOT EXISTS events_by_time ON events(ts_ms);
CREATE UNIQUE INDEX IF NOT EXISTS entities_by_id ON entities(entity_id);
CREATE UNIQUE INDEX IF NOT EXISTS entities_by_type_key ON entities(entity_type, canonical_key);
CREATE INDEX IF NOT EXISTS entities_by_status ON entities(status);
CREATE INDEX IF NOT EXISTS edges_by_src ON edges(src_id, rel_type, dst_id);
CREATE INDEX IF NOT EXISTS edges_by_dst ON edges(dst_id, rel_type);
CREATE INDEX IF NOT EXISTS edges_by_evidence ON edges(evidence);
"#;

/// The SQLite database of the projections.
pub struct Graph {
    pub conn: Connection,
}

impl Graph {
    /// Opens (creating if needed) the database for writing.
    pub fn open(path: &Path) -> Result<Graph> {
        // Any failure to open a projection counts as damage: it is derived
        // data, and rebuilding it is always safe.
        let conn = Connection::open(path).map_err(|e| corrupt(path, e))?;
        conn.execute_batch(
            "PRAGMA busy_timeout=5000; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA cache_size=-65536;",
        )
        .map_err(|e| corrupt(path, e))?;
        conn.execute_batch(TABLES).map_err(|e| corrupt(path, e))?;
        conn.execute_batch(INDEXES).map_err(|e| corrupt(path, e))?;
        Ok(Graph { conn })
    }

    /// Creates a database to be filled in bulk by a rebuild: no journal, no
    /// fsync (a rebuild that dies leaves a directory that is thrown away),
    /// and no indexes until [`Graph::finish_bulk`].
    pub fn create_bulk(path: &Path) -> Result<Graph> {
        let conn = Connection::open(path).map_err(|e| Error::sql(path, e))?;
        conn.execute_batch(
            "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-131072; PRAGMA temp_store=MEMORY;",
        )
        .map_err(|e| Error::sql(path, e))?;
        conn.execute_batch(TABLES)
            .map_err(|e| Error::sql(path, e))?;
        Ok(Graph { conn })
    }

    /// Indexes a bulk-filled database and makes it durable and shareable.
    pub fn finish_bulk(&self) -> Result<()> {
        let path = Path::new("graph.sqlite");
        self.conn
            .execute_batch(INDEXES)
            .map_err(|e| Error::sql(path, e))?;
        self.conn
            .execute_batch("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")
            .map_err(|e| Error::sql(path, e))?;
        Ok(())
    }

    /// Opens the database read-only (queries by people, searches).
    pub fn open_read_only(path: &Path) -> Result<Graph> {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| Error::sql(path, e))?;
        conn.execute_batch("PRAGMA query_only=1; PRAGMA busy_timeout=5000;")
            .map_err(|e| Error::sql(path, e))?;
        Ok(Graph { conn })
    }

    pub fn get_meta(&self, key: &str) -> Result<Option<String>> {
        self.conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(|e| Error::sql(Path::new("meta"), e))
    }

    pub fn set_meta(conn: &Connection, key: &str, value: &str) -> Result<()> {
        conn.execute(
            "INSERT INTO meta(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            params![key, value],
        )
        .map_err(|e| Error::sql(Path::new("meta"), e))?;
        Ok(())
    }
}

fn corrupt(path: &Path, e: rusqlite::Error) -> Error {
    Error::Corrupt {
        what: path.display().to_string(),
        message: e.to_string(),
    }
}
