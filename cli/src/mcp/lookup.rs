//! Reading events back out of the projection database (`events` table), so
//! that a tool call costs an indexed query rather than a read of the whole
//! log.
//!
//! The table keeps an event's fields, with `body` left out when it is only
//! `{"text": …}`. An event rebuilt from a row is checked against its id (the
//! blake3 of its content): when the two disagree — the one case is a
//! bookkeeping event whose text the index does not keep — the caller reads
//! the event from the log instead.

use anyhow::bail;
use memlog_format::event::FORMAT_VERSION;
use memlog_format::{Event, Kind};
use memlog_indexer::Projections;
use rusqlite::{OptionalExtension, Row, params};
use serde_json::{Map, Value};

const COLUMNS: &str = "id, session, seq, ts, kind, project, text, body, meta";

/// A row of the `events` table, as an event.
#[derive(Clone, Debug)]
pub struct Stored {
    pub event: Event,
    /// Whether the rebuilt event hashes to its id, i.e. is exactly the
    /// event in the log.
    pub verified: bool,
}

fn stored(row: &Row) -> rusqlite::Result<Stored> {
    let id: String = row.get(0)?;
    let text: String = row.get(6)?;
    let body_json: Option<String> = row.get(7)?;
    let meta_json: String = row.get(8)?;
    let body = match body_json {
        Some(b) => object(&b),
        None => {
            let mut m = Map::new();
            m.insert("text".into(), Value::String(text));
            m
        }
    };
    let event = Event {
        v: FORMAT_VERSION,
        id,
        session: row.get(1)?,
        seq: row.get::<_, i64>(2)?.max(0) as u64,
        ts: row.get(3)?,
        kind: Kind::parse(&row.get::<_, String>(4)?),
        project: row.get(5)?,
        body,
        meta: object(&meta_json),
    };
    let verified = event.compute_id() == event.id;
    Ok(Stored { event, verified })
}

fn object(json: &str) -> Map<String, Value> {
    match serde_json::from_str(json) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

fn sql(e: rusqlite::Error) -> anyhow::Error {
    anyhow::anyhow!("reading the index: {e}")
}

/// The full id of the one live event whose id starts with `prefix` (at
/// least 8 hex digits).
pub fn resolve_id(p: &Projections, prefix: &str) -> anyhow::Result<String> {
    let wanted = prefix.trim().to_ascii_lowercase();
    if wanted.len() < 8 || wanted.len() > 64 || !wanted.bytes().all(|b| b.is_ascii_hexdigit()) {
        bail!("{prefix:?} is not an event id (give the id, or at least its first 8 hex digits)");
    }
    // Ids are lowercase hex, so every id starting with `wanted` sorts in
    // [wanted, wanted + "g"): a range the unique index answers.
    let upper = format!("{wanted}g");
    let mut stmt = p
        .graph
        .conn
        .prepare_cached("SELECT id FROM events WHERE id >= ?1 AND id < ?2 ORDER BY id LIMIT 2")
        .map_err(sql)?;
    let ids: Vec<String> = stmt
        .query_map(params![wanted, upper], |r| r.get(0))
        .map_err(sql)?
        .collect::<rusqlite::Result<_>>()
        .map_err(sql)?;
    match ids.as_slice() {
        [one] => Ok(one.clone()),
        [] => bail!("no event has id {prefix:?} (unknown, or forgotten)"),
        _ => bail!("{prefix:?} names more than one event; give more digits"),
    }
}

/// The event with this full id, if it is live.
pub fn event(p: &Projections, id: &str) -> anyhow::Result<Option<Stored>> {
    let mut stmt = p
        .graph
        .conn
        .prepare_cached(&format!("SELECT {COLUMNS} FROM events WHERE id = ?1"))
        .map_err(sql)?;
    stmt.query_row([id], stored).optional().map_err(sql)
}

/// Every live event of a session, in session order (time, then seq, then
/// id: the order `memlog show` uses).
pub fn session_events(p: &Projections, session: &str) -> anyhow::Result<Vec<Stored>> {
    let mut stmt = p
        .graph
        .conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM events WHERE session = ?1 ORDER BY ts, seq, id"
        ))
        .map_err(sql)?;
    let rows = stmt
        .query_map([session], stored)
        .map_err(sql)?
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(sql)?;
    Ok(rows)
}

/// What a timeline asks for.
pub struct TimelineQuery<'a> {
    pub session: Option<&'a str>,
    pub since_ms: Option<i64>,
    pub until_ms: Option<i64>,
    pub kinds: &'a [String],
    /// With `until` and no `since`: the latest rows before `until`.
    pub latest: bool,
    pub limit: usize,
}

/// Events in time order, filtered; at most `limit + 1` rows are read so
/// that the caller can tell there are more.
pub fn timeline(p: &Projections, q: &TimelineQuery) -> anyhow::Result<Vec<Stored>> {
    let mut clauses: Vec<String> = Vec::new();
    let mut args: Vec<rusqlite::types::Value> = Vec::new();
    if let Some(s) = q.session {
        args.push(s.to_string().into());
        clauses.push(format!("session = ?{}", args.len()));
    }
    if let Some(ms) = q.since_ms {
        args.push(ms.into());
        clauses.push(format!("ts_ms >= ?{}", args.len()));
    }
    if let Some(ms) = q.until_ms {
        args.push(ms.into());
        clauses.push(format!("ts_ms < ?{}", args.len()));
    }
    if !q.kinds.is_empty() {
        let mut marks = Vec::new();
        for k in q.kinds {
            args.push(k.clone().into());
            marks.push(format!("?{}", args.len()));
        }
        clauses.push(format!("kind IN ({})", marks.join(", ")));
    }
    let filter = if clauses.is_empty() {
        String::new()
    } else {
        format!("WHERE {}", clauses.join(" AND "))
    };
    let order = if q.latest {
        "ORDER BY ts_ms DESC, ts DESC, session DESC, seq DESC, id DESC"
    } else {
        "ORDER BY ts_ms, ts, session, seq, id"
    };
    let query = format!(
        "SELECT {COLUMNS} FROM events {filter} {order} LIMIT {}",
        q.limit + 1
    );
    let mut stmt = p.graph.conn.prepare(&query).map_err(sql)?;
    let mut rows = stmt
        .query_map(rusqlite::params_from_iter(args), stored)
        .map_err(sql)?
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(sql)?;
    if q.latest {
        // Read newest first to take the latest; shown oldest first.
        rows.reverse();
    }
    Ok(rows)
}

/// One task, folded from its events.
#[derive(Clone, Debug, Default)]
pub struct Task {
    pub key: String,
    pub title: String,
    pub status: Option<String>,
    pub priority: Option<String>,
    pub blockers: Vec<String>,
    /// Time of the last event about it.
    pub updated: String,
    pub session: String,
    pub last_event: String,
}

impl Task {
    /// Done, completed and cancelled tasks are closed; anything else
    /// (pending, in_progress, blocked, no status) is open.
    pub fn is_open(&self) -> bool {
        !matches!(
            self.status.as_deref(),
            Some("done" | "completed" | "cancelled" | "canceled")
        )
    }
}

/// The task entities (`memlog_indexer::tasks`: the fold of the task
/// events through seed 002's state machine, shared with `memlog tasks`),
/// most recently updated first.
pub fn tasks(p: &Projections) -> anyhow::Result<Vec<Task>> {
    Ok(memlog_indexer::tasks::tasks(p)?
        .into_iter()
        .map(|t| Task {
            key: t
                .entity_id
                .strip_prefix("task:")
                .unwrap_or(&t.entity_id)
                .to_string(),
            title: t.title,
            status: Some(t.status),
            priority: t.priority,
            blockers: t.blocked_by,
            updated: t.updated,
            session: t.session,
            last_event: t.last_event,
        })
        .collect())
}
