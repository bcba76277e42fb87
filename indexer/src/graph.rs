//! The entity/edge projection (SQLite): events, sessions, entities, their
//! aliases and the edges between them. Its schema is documented in
//! `indexer/SCHEMA.md` so that people can query it with `memlog sql`.

use std::path::Path;

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use crate::{Error, Result};

/// Bumped whenever the schema or what is derived into it changes: an index
/// with another version is rebuilt.
pub const SCHEMA_VERSION: &str = "7";

/// `meta` key saying whether the log holds what every search reads besides
/// its hits (reinforcements, superseding facts and rules): "absent" from a
/// rebuild that met none, "present" once one is indexed. Without the key
/// (an index from before it) they are looked for.
pub const RANKING_LINKS: &str = "ranking_links";

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
CREATE TABLE IF NOT EXISTS hidden (
    id    TEXT PRIMARY KEY
);
"#;

/// Indexes. Events are found by `key` (the first 16 hex digits of the id,
/// as an integer; callers compare the full id): an index keyed by a hash
/// receives every new row at a random place and costs about one page write
/// per row, so there is one such index, small, and not one per id column.
/// Edges are removed (forgets) through their source session, not through an
/// index on `evidence`.
pub(crate) const INDEXES: &str = r#"
CREATE UNIQUE INDEX IF NOT EXISTS events_by_key ON events(key);
CREATE INDEX IF NOT EXISTS events_by_session ON events(session, ts, seq);
CREATE INDEX IF NOT EXISTS events_by_time ON events(ts_ms);
CREATE INDEX IF NOT EXISTS events_by_kind ON events(kind, source);
CREATE UNIQUE INDEX IF NOT EXISTS entities_by_id ON entities(entity_id);
CREATE UNIQUE INDEX IF NOT EXISTS entities_by_type_key ON entities(entity_type, canonical_key);
CREATE INDEX IF NOT EXISTS entities_by_status ON entities(status);
CREATE INDEX IF NOT EXISTS edges_by_src ON edges(src_id, rel_type, dst_id);
CREATE INDEX IF NOT EXISTS edges_by_dst ON edges(dst_id, rel_type);
"#;

/// The SQLite database of the projections.
pub struct Graph {
    /// The connection (read-write for the writer, read-only for readers).
    pub conn: Connection,
}

impl Graph {
    /// Opens (creating if needed) the database for writing.
    pub fn open(path: &Path) -> Result<Graph> {
        // Any failure to open a projection counts as damage (it is derived
        // data, and rebuilding it is always safe), but another user's file.
        let conn = Connection::open(path).map_err(|e| corrupt(path, e))?;
        conn.execute_batch(
            "PRAGMA busy_timeout=5000; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA cache_size=-65536;",
        )
        .map_err(|e| corrupt(path, e))?;
        defer_checkpoints(&conn).map_err(|e| corrupt(path, e))?;
        conn.set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
            true,
        )
        .map_err(|e| corrupt(path, e))?;
        // Parsing the schema statements was a sixth of a one-shot search:
        // they run only when the database was not stamped with this
        // schema text yet (a new file, or a memlog whose tables changed).
        let stamp = ddl_stamp();
        let stamped: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| corrupt(path, e))?;
        if stamped != stamp {
            conn.execute_batch(TABLES).map_err(|e| corrupt(path, e))?;
            conn.execute_batch(INDEXES).map_err(|e| corrupt(path, e))?;
            conn.execute_batch(&format!("PRAGMA user_version={stamp}"))
                .map_err(|e| corrupt(path, e))?;
        }
        Ok(Graph { conn })
    }

    /// Creates a database to be filled in bulk by a rebuild: no journal, no
    /// fsync (a rebuild that dies leaves a directory that is thrown away),
    /// and no indexes until the tables are full.
    pub fn create_bulk(path: &Path) -> Result<Graph> {
        let conn = Connection::open(path).map_err(|e| Error::sql(path, e))?;
        conn.execute_batch(
            // threads: creating the indexes sorts millions of rows, which
            // SQLite can spread over helper threads.
            "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-131072; PRAGMA temp_store=MEMORY; PRAGMA threads=2;",
        )
        .map_err(|e| Error::sql(path, e))?;
        conn.execute_batch(TABLES)
            .map_err(|e| Error::sql(path, e))?;
        Ok(Graph { conn })
    }

    /// Makes a bulk-filled database durable and shareable: write-ahead
    /// logging from now on (switched here, once, rather than by the first
    /// update that opens it).
    pub fn finish_bulk(&self) -> Result<()> {
        let path = Path::new("graph.sqlite");
        self.conn
            .execute_batch("PRAGMA synchronous=FULL; PRAGMA journal_mode=WAL;")
            .map_err(|e| Error::sql(path, e))?;
        Ok(())
    }

    /// Copies the write-ahead log into the database once it has grown past
    /// `max_bytes`; returns whether it did. Commits leave their pages in the
    /// log ([`defer_checkpoints`]), so that an update writes each page once
    /// and syncs nothing; this is where the pages reach the database.
    pub fn checkpoint_if_larger(&self, wal: &Path, max_bytes: u64) -> Result<bool> {
        let size = std::fs::metadata(wal).map(|m| m.len()).unwrap_or(0);
        if size <= max_bytes {
            return Ok(false);
        }
        self.conn
            // PASSIVE: never waits for readers; frames they still need are
            // copied by a later checkpoint.
            .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
            .map_err(|e| Error::sql(wal, e))?;
        Ok(true)
    }

    /// Copies the whole write-ahead log into the database and empties the
    /// file. The first connection of every process reads the entire log
    /// again to rebuild its index (`-shm`), so a log left behind by a
    /// writer that exits was read anew by every later search and hook: 7 MB
    /// after indexing 5,000 events, 1,800 reads, twice a search's time.
    /// Waits for readers (the busy timeout); a log still in use is then
    /// left as it is.
    pub fn empty_log(&self) -> Result<()> {
        self.conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .map_err(|e| Error::sql(Path::new("graph.sqlite-wal"), e))
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

    /// One read transaction for the statements that follow, until the
    /// returned guard drops: they see one state of the database, and take
    /// its locks once instead of once each (a search runs dozens). `None`
    /// when a transaction is already open, whose snapshot they share.
    pub fn snapshot(&self) -> Result<Option<rusqlite::Transaction<'_>>> {
        if !self.conn.is_autocommit() {
            return Ok(None);
        }
        self.conn
            .unchecked_transaction()
            .map(Some)
            .map_err(|e| Error::sql(Path::new("graph.sqlite"), e))
    }

    /// Whether some event of the `events` table is personal (a scan of
    /// their meta; for commands whose output may show any row).
    pub fn holds_personal(&self) -> Result<bool> {
        let pattern = format!(
            "%\"{}\":\"{}\"%",
            memlog_format::scope::SCOPE_KEY,
            memlog_format::scope::PERSONAL
        );
        self.conn
            .query_row(
                "SELECT 1 FROM events WHERE meta LIKE ?1 LIMIT 1",
                [pattern],
                |_| Ok(()),
            )
            .optional()
            .map(|found| found.is_some())
            .map_err(|e| Error::sql(Path::new("events"), e))
    }

    /// A value of the `meta` table (watermark, generation, …).
    pub fn get_meta(&self, key: &str) -> Result<Option<String>> {
        // Cached: opening the projections and checking their freshness
        // read four keys, and preparing the statement cost more than
        // running it.
        self.conn
            .prepare_cached("SELECT value FROM meta WHERE key = ?1")
            .and_then(|mut st| st.query_row([key], |r| r.get(0)).optional())
            .map_err(|e| Error::sql(Path::new("meta"), e))
    }

    /// Sets a value of the `meta` table.
    pub fn set_meta(conn: &Connection, key: &str, value: &str) -> Result<()> {
        conn.execute(
            "INSERT INTO meta(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            params![key, value],
        )
        .map_err(|e| Error::sql(Path::new("meta"), e))?;
        Ok(())
    }
}

/// A fingerprint of [`TABLES`] and [`INDEXES`] (FNV-1a, 31 bits, never
/// 0: SQLite's default `user_version`), kept in the database's
/// `user_version` once they were run against it.
fn ddl_stamp() -> i64 {
    let mut h: u32 = 0x811c_9dc5;
    for b in TABLES.bytes().chain(INDEXES.bytes()) {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    i64::from((h & 0x7fff_ffff).max(1))
}

/// Turns off SQLite's own checkpoints: the automatic one after a commit
/// that grew the log past 1000 pages, and the one when the last connection
/// closes. Either would make a routine update (or, worse, a search that
/// happens to close last) copy and sync every page an update wrote, which
/// was most of the time of indexing a session into a large database.
/// Writers call [`Graph::checkpoint_if_larger`] instead.
fn defer_checkpoints(conn: &Connection) -> rusqlite::Result<()> {
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
        true,
    )?;
    // The log file is reused from its start after a full checkpoint; this
    // gives back the disk space of a log that grew large meanwhile.
    conn.execute_batch("PRAGMA wal_autocheckpoint=0; PRAGMA journal_size_limit=16777216;")
}

/// A failure to open the database: damage, unless a file of it is
/// another user's ([`Error::not_permitted`]).
fn corrupt(path: &Path, e: rusqlite::Error) -> Error {
    if let Some(denied) = Error::not_permitted(path) {
        return denied;
    }
    Error::Corrupt {
        what: path.display().to_string(),
        message: e.to_string(),
    }
}
