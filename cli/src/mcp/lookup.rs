//! Reading events back out of the projection database (`events` table), so
//! that a tool call costs an indexed query rather than a read of the whole
//! log.
//!
//! The table keeps an event's fields, with `body` left out when it is only
//! `{"text": …}`. An event rebuilt from a row is checked against its id (the
//! blake3 of its content): when the two disagree — the one case is a
//! bookkeeping event whose text the index does not keep — the caller reads
//! the event from the log instead.

use std::collections::HashMap;

use anyhow::bail;
use memlog_format::event::FORMAT_VERSION;
use memlog_format::{Event, Kind, Repo};
use memlog_indexer::Projections;
use rusqlite::{OptionalExtension, Row, params};
use serde_json::{Map, Value, json};

use crate::workspace;

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

/// `{"event", "context"}`, exactly as `memlog show ID --context N --json`
/// prints it: the live event with this full id and up to `context` events
/// before and after it in its session. Events the index does not keep
/// exactly are read from the log, once per caller (`log_events`).
pub fn event_with_context(
    p: &Projections,
    repo: &Repo,
    id: &str,
    context: usize,
    log_events: &mut Option<Vec<Event>>,
) -> anyhow::Result<Value> {
    let Some(target) = event(p, id)? else {
        bail!("no event has id {id:?} (unknown, or forgotten)");
    };
    let session = session_events(p, &target.event.session)?;
    let pos = session
        .iter()
        .position(|s| s.event.id == id)
        .unwrap_or_default();
    let from = pos.saturating_sub(context);
    let to = (pos + context + 1).min(session.len());
    let window = &session[from..to];
    let neighbours: Vec<Event> = if window.iter().all(|s| s.verified) {
        window.iter().map(|s| s.event.clone()).collect()
    } else {
        verified_events(repo, window, log_events)?
    };
    let Some(event) = neighbours.iter().find(|e| e.id == id) else {
        bail!("event {id} is missing from its session");
    };
    Ok(json!({
        "event": event.to_value(true),
        "context": neighbours
            .iter()
            .filter(|e| e.id != id)
            .map(|e| e.to_value(true))
            .collect::<Vec<_>>(),
    }))
}

/// The events of `rows` as they are in the log: the index does not keep
/// the unverified ones exactly. The log is read once per caller.
pub fn verified_events(
    repo: &Repo,
    rows: &[Stored],
    log_events: &mut Option<Vec<Event>>,
) -> anyhow::Result<Vec<Event>> {
    if log_events.is_none() {
        *log_events = Some(workspace::live(repo, false)?);
    }
    let all = log_events.as_deref().unwrap_or_default();
    Ok(rows
        .iter()
        .map(|s| {
            all.iter()
                .find(|e| e.id == s.event.id)
                .cloned()
                .unwrap_or_else(|| s.event.clone())
        })
        .collect())
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

/// Tasks from the `task_*` events, folded by `body.key` in time order: a
/// repeated `task_created` updates the task it names (hooks are stateless
/// and may create a task twice), `task_status_changed` sets the status.
pub fn tasks(p: &Projections) -> anyhow::Result<Vec<Task>> {
    let mut stmt = p
        .graph
        .conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM events WHERE kind LIKE 'task_%' ORDER BY ts_ms, ts, seq, id"
        ))
        .map_err(sql)?;
    let rows = stmt
        .query_map([], stored)
        .map_err(sql)?
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(sql)?;
    let mut by_key: HashMap<String, Task> = HashMap::new();
    for Stored { event: e, .. } in rows {
        let text = |k: &str| e.body.get(k).and_then(Value::as_str).map(str::to_string);
        let Some(key) = text("key") else { continue };
        let task = by_key.entry(key.clone()).or_insert_with(|| Task {
            key,
            ..Task::default()
        });
        if let Some(t) = text("title") {
            task.title = t;
        }
        match e.kind {
            Kind::TaskCreated | Kind::TaskStatusChanged => {
                if let Some(s) = text("to").or_else(|| text("status")) {
                    task.status = Some(s);
                }
            }
            Kind::TaskPriorityChanged => {
                if let Some(p) = text("to").or_else(|| text("priority")) {
                    task.priority = Some(p);
                }
            }
            Kind::TaskBlockersSet => {
                task.blockers = e
                    .body
                    .get("blockers")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default();
            }
            _ => continue,
        }
        if e.kind == Kind::TaskCreated
            && let Some(p) = text("priority")
        {
            task.priority = Some(p);
        }
        task.updated = e.ts.clone();
        task.session = e.session.clone();
        task.last_event = e.id.clone();
    }
    let mut tasks: Vec<Task> = by_key.into_values().collect();
    tasks.sort_by(|a, b| b.updated.cmp(&a.updated).then_with(|| a.key.cmp(&b.key)));
    Ok(tasks)
}
