//! Reading events back out of the projection database (`events` table), so
//! that showing an event or a session costs an indexed query rather than a
//! read of the whole log.
//!
//! The table keeps an event's fields, with `body` left out when it is only
//! `{"text": …}` and that text is the row's, and a tool observation's
//! output left out of `body` when the row's text holds it (most of its
//! bytes would be stored twice): see [`stored_body`]. An event rebuilt from a row is
//! checked against its id (the blake3 of its content): `verified` is false
//! only for a row that is not the event (a damaged database), and callers
//! then read the event from the log.
//!
//! Every lookup reflects what the log holds beyond the index
//! ([`crate::projection::Unindexed`]): events a forget not yet applied
//! hides are left out, events not yet indexed are found.

use std::path::Path;

use memlog_format::event::FORMAT_VERSION;
use memlog_format::{Event, EventId, IdPrefix, Kind};
use rusqlite::{OptionalExtension, Row, params};
use serde_json::{Map, Value};

use crate::fts::event_key;
use crate::projection::Projections;
use crate::{Error, Result};

const COLUMNS: &str = "id, session, seq, ts, kind, project, text, body, meta";

/// A row of the `events` table, as an event.
#[derive(Clone, Debug)]
pub struct Stored {
    /// The event rebuilt from the row.
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
    let body = body_of_row(body_json.as_deref(), text);
    let event = Event {
        v: FORMAT_VERSION,
        id: EventId::unchecked(id),
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

/// What the `body` column holds for `event`, whose searchable text (the
/// row's `text`) is `text`: nothing when the body is `{"text": text}`;
/// else the body, with a tool observation's `output` written `true` when
/// `text` holds it where [`crate::derive`] puts it (no event's output is
/// `true`: a string is captured, and a non-string is never in the text).
pub fn stored_body(event: &Event, text: &str) -> Option<String> {
    let body = &event.body;
    if body.len() == 1 && event.text() == Some(text) {
        return None;
    }
    let mut out = String::new();
    match body.get("output").and_then(Value::as_str) {
        Some(output) if output_in_text(body, output, text) => {
            let mut elided = body.clone();
            elided.insert("output".into(), Value::Bool(true));
            memlog_format::canonical::write_map(&mut out, &elided);
        }
        _ => memlog_format::canonical::write_map(&mut out, body),
    }
    Some(out)
}

/// The body of a row: its `body` column ([`stored_body`]) and `text`.
fn body_of_row(stored: Option<&str>, text: String) -> Map<String, Value> {
    let Some(stored) = stored else {
        let mut m = Map::new();
        m.insert("text".into(), Value::String(text));
        return m;
    };
    let mut body = object(stored);
    if body.get("output") == Some(&Value::Bool(true))
        && body.get("text").is_none()
        && let Some(tool) = body.get("tool").and_then(Value::as_str)
    {
        let (head, tail) = crate::derive::around_output(tool, &body);
        let output = text
            .strip_prefix(&head)
            .and_then(|t| t.strip_prefix('\n'))
            .and_then(|t| t.strip_suffix(tail.as_str()));
        // a row not written so is not verified, and is read from the log
        if let Some(output) = output {
            body.insert("output".into(), Value::String(output.to_string()));
        }
    }
    body
}

/// Whether `text` is a tool observation's text made of its output: the
/// part [`body_of_row`] gives back.
fn output_in_text(body: &Map<String, Value>, output: &str, text: &str) -> bool {
    let Some(tool) = body.get("tool").and_then(Value::as_str) else {
        return false;
    };
    if body.get("text").is_some() {
        return false;
    }
    let (head, tail) = crate::derive::around_output(tool, body);
    text.len() == head.len() + 1 + output.len() + tail.len()
        && text.starts_with(&head)
        && text[head.len()..].starts_with('\n')
        && text.ends_with(tail.as_str())
        && text[head.len() + 1..].starts_with(output)
}

fn object(json: &str) -> Map<String, Value> {
    match serde_json::from_str(json) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

fn sql(e: rusqlite::Error) -> Error {
    Error::sql(Path::new("graph.sqlite"), e)
}

/// An event not indexed yet, as a lookup returns it.
fn unindexed(e: &crate::projection::UnindexedEvent) -> Stored {
    Stored {
        event: e.event.clone(),
        verified: true,
    }
}

/// `rows` without those a forget not yet applied to the index hides.
fn visible(p: &Projections, mut rows: Vec<Stored>) -> Vec<Stored> {
    if p.unindexed().hides_any() {
        rows.retain(|s| !p.unindexed().hides(&s.event));
    }
    rows
}

/// `rows` as the log has them beyond the index: [`visible`], joined by the
/// events not indexed yet that `wanted` picks, all in `order` (untouched
/// when none joined). Says whether some joined.
fn with_unindexed<K: Ord>(
    p: &Projections,
    rows: Vec<Stored>,
    wanted: impl Fn(&crate::projection::UnindexedEvent) -> bool,
    order: impl Fn(&Event) -> K,
) -> (Vec<Stored>, bool) {
    let mut rows = visible(p, rows);
    let before = rows.len();
    rows.extend(
        p.unindexed()
            .events()
            .iter()
            .filter(|e| wanted(e))
            .map(unindexed),
    );
    let joined = rows.len() > before;
    if joined {
        rows.sort_by_key(|s| order(&s.event));
    }
    (rows, joined)
}

/// Ids of live events that start with `prefix`, at most `limit`, in id
/// order.
pub fn ids_with_prefix(p: &Projections, prefix: &IdPrefix, limit: usize) -> Result<Vec<EventId>> {
    let mut ids = indexed_ids_with_prefix(p, prefix, limit)?;
    if p.unindexed().hides_any() {
        let mut kept = Vec::with_capacity(ids.len());
        for id in ids {
            if event(p, &id)?.is_some() {
                kept.push(id);
            }
        }
        ids = kept;
    }
    ids.extend(
        p.unindexed()
            .events()
            .iter()
            .filter(|e| e.event.id.starts_with(prefix.as_str()))
            .map(|e| e.event.id.clone()),
    );
    ids.sort();
    ids.dedup();
    ids.truncate(limit);
    Ok(ids)
}

fn indexed_ids_with_prefix(
    p: &Projections,
    prefix: &IdPrefix,
    limit: usize,
) -> Result<Vec<EventId>> {
    let wanted = prefix.as_str();
    // Rows are found by key, the id's first 16 hex digits as an integer:
    // the ids starting with `wanted` have keys in [wanted00…, wantedff…].
    // Both bounds share the first digit, hence the sign they are stored
    // with, so the signed range is in order.
    let digits = &wanted[..wanted.len().min(16)];
    let bound = |fill: char| {
        let hex: String = digits
            .chars()
            .chain(std::iter::repeat(fill))
            .take(16)
            .collect();
        u64::from_str_radix(&hex, 16).map(|k| k as i64).unwrap_or(0)
    };
    let mut stmt = p
        .graph
        .conn
        .prepare_cached(
            "SELECT id FROM events WHERE key BETWEEN ?1 AND ?2 AND substr(id, 1, ?3) = ?4 ORDER BY key, id LIMIT ?5",
        )
        .map_err(sql)?;
    let ids = stmt
        .query_map(
            params![
                bound('0'),
                bound('f'),
                wanted.len() as i64,
                wanted,
                limit as i64
            ],
            |r| r.get(0).map(EventId::unchecked),
        )
        .map_err(sql)?
        .collect::<rusqlite::Result<_>>()
        .map_err(sql)?;
    Ok(ids)
}

/// The event with this full id, if it is live.
pub fn event(p: &Projections, id: &str) -> Result<Option<Stored>> {
    let mut stmt = p
        .graph
        .conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM events WHERE key = ?1 AND id = ?2"
        ))
        .map_err(sql)?;
    let row = stmt
        .query_row(params![event_key(id) as i64, id], stored)
        .optional()
        .map_err(sql)?;
    Ok(match row {
        Some(s) => visible(p, vec![s]).pop(),
        None => p.unindexed().event(id).map(unindexed),
    })
}

/// An indexed event a forget not applied to the index yet hides, and
/// whether it is still in a journal.
pub type PendingHidden = (Stored, bool);

/// The indexed events a forget not applied to the index yet hides, each
/// with whether it is still in a journal: what the index counts as live
/// until it catches up. Reads every row, but only while such a forget
/// waits ([`crate::projection::Unindexed::hides_any`]); none otherwise.
pub fn hidden_by_pending_forgets(p: &Projections) -> Result<Vec<PendingHidden>> {
    let unindexed = p.unindexed();
    if !unindexed.hides_any() {
        return Ok(Vec::new());
    }
    let mut stmt = p
        .graph
        .conn
        .prepare(&format!("SELECT {COLUMNS}, source = 'journal' FROM events"))
        .map_err(sql)?;
    let rows = stmt
        .query_map([], |row| Ok((stored(row)?, row.get::<_, bool>(9)?)))
        .map_err(sql)?;
    let mut hidden = Vec::new();
    for row in rows {
        let (s, journal) = row.map_err(sql)?;
        if unindexed.hides(&s.event) {
            hidden.push((s, journal));
        }
    }
    Ok(hidden)
}

/// The live event of index key `key` ([`event_key`]).
pub fn by_key(p: &Projections, key: u64) -> Result<Option<Stored>> {
    let mut stmt = p
        .graph
        .conn
        .prepare_cached(&format!("SELECT {COLUMNS} FROM events WHERE key = ?1"))
        .map_err(sql)?;
    let row = stmt
        .query_row(params![key as i64], stored)
        .optional()
        .map_err(sql)?;
    // an event the index lacks (read past its watermark) is found too
    Ok(match row {
        Some(s) => visible(p, vec![s]).pop(),
        None => p.unindexed().get(key).map(unindexed),
    })
}

/// Up to `limit` events of `session` after (`ts`, `seq`), of `kind`, in
/// session order.
pub fn session_after(
    p: &Projections,
    session: &str,
    (ts, seq): (&str, u64),
    kind: &str,
    limit: usize,
) -> Result<Vec<Stored>> {
    let mut stmt = p
        .graph
        .conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM events WHERE session = ?1 AND (ts > ?2 OR (ts = ?2 AND seq > ?3))
             AND kind = ?4 ORDER BY ts, seq, id LIMIT ?5"
        ))
        .map_err(sql)?;
    let rows = stmt
        .query_map(params![session, ts, seq as i64, kind, limit as i64], stored)
        .map_err(sql)?
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(sql)?;
    // and those the index lacks: a session sealed a moment ago
    let (mut rows, _) = with_unindexed(
        p,
        rows,
        |u| {
            let e = &u.event;
            e.session == session && e.kind.as_str() == kind && (e.ts.as_str(), e.seq) > (ts, seq)
        },
        |e| (e.ts.clone(), e.seq, e.id.clone()),
    );
    rows.truncate(limit);
    Ok(rows)
}

/// Every live event of a session, in session order (time, then seq, then
/// id: the order `memlog show` uses).
pub fn session_events(p: &Projections, session: &str) -> Result<Vec<Stored>> {
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
    let (rows, _) = with_unindexed(
        p,
        rows,
        |e| e.event.session == session,
        |e| (e.ts.clone(), e.seq, e.id.clone()),
    );
    Ok(rows)
}

/// Whether `session` holds a personal event (FORMAT.md §9), indexed or
/// not: from that event on its words are personal, and what shows them
/// to a shared session must not.
pub fn session_is_personal(p: &Projections, session: &str) -> Result<bool> {
    let personal = |e: &Event| e.session == session && memlog_format::scope::is_personal(&e.meta);
    if p.unindexed().events().iter().any(|u| personal(&u.event)) {
        return Ok(true);
    }
    p.graph
        .conn
        // the canonical meta writes the key as `"scope":"personal"`: a
        // substring test, not a JSON parse of every event of the session
        // (at SessionStart, for each session the briefing lists)
        .prepare_cached(
            "SELECT EXISTS(SELECT 1 FROM events WHERE session = ?1
             AND instr(meta, '\"scope\":\"personal\"') > 0)",
        )
        .map_err(sql)?
        .query_row([session], |row| row.get(0))
        .map_err(sql)
}

/// A place in a session's order (time, seq, id): where a page of its
/// events starts or ends.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct SessionCursor {
    /// The event's time.
    pub ts: String,
    /// Its place among events of the same time.
    pub seq: u64,
    /// Its id.
    pub id: String,
}

impl SessionCursor {
    /// The place of `event`.
    pub fn of(event: &Event) -> SessionCursor {
        SessionCursor {
            ts: event.ts.clone(),
            seq: event.seq,
            id: event.id.to_string(),
        }
    }
}

/// Which events of a session a page holds.
#[derive(Clone, Copy, Debug)]
pub enum SessionPage<'a> {
    /// The first `n` after this place (from the start with `None`).
    After(Option<&'a SessionCursor>, usize),
    /// The last `n` before this place (up to the end with `None`).
    Before(Option<&'a SessionCursor>, usize),
}

/// A page of a session's live events, in session order: one indexed query
/// whatever the session's size (a long session is read a page at a time).
pub fn session_page(p: &Projections, session: &str, page: SessionPage) -> Result<Vec<Stored>> {
    let (cursor, n, backward) = match page {
        SessionPage::After(c, n) => (c, n, false),
        SessionPage::Before(c, n) => (c, n, true),
    };
    let (compare, order) = if backward {
        ("<", "DESC")
    } else {
        (">", "ASC")
    };
    let mut stmt = p
        .graph
        .conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM events WHERE session = ?1
               AND (?2 IS NULL OR (ts, seq, id) {compare} (?2, ?3, ?4))
             ORDER BY ts {order}, seq {order}, id {order} LIMIT ?5"
        ))
        .map_err(sql)?;
    let mut rows = stmt
        .query_map(
            params![
                session,
                cursor.map(|c| c.ts.as_str()),
                cursor.map(|c| c.seq as i64),
                cursor.map(|c| c.id.as_str()),
                n as i64
            ],
            stored,
        )
        .map_err(sql)?
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(sql)?;
    if backward {
        rows.reverse();
    }
    let (mut rows, joined) = with_unindexed(
        p,
        rows,
        |e| {
            e.event.session == session
                && cursor.is_none_or(|c| {
                    let at = SessionCursor::of(&e.event);
                    if backward { at < *c } else { at > *c }
                })
        },
        SessionCursor::of,
    );
    if joined && rows.len() > n {
        if backward {
            rows.drain(..rows.len() - n);
        } else {
            rows.truncate(n);
        }
    }
    Ok(rows)
}

/// What a timeline asks for.
pub struct TimelineQuery<'a> {
    /// Only this session.
    pub session: Option<&'a str>,
    /// Only at or after this time (ms since the epoch).
    pub since_ms: Option<i64>,
    /// Only before this time.
    pub until_ms: Option<i64>,
    /// Only these kinds (all when empty).
    pub kinds: &'a [String],
    /// With `until` and no `since`: the latest rows before `until`.
    pub latest: bool,
    /// At most this many rows (one more is read, to tell whether there are more).
    pub limit: usize,
}

/// The latest live event of `kind` in `session` (what a session came to:
/// its last answer), read along the session index: a timeline ordered by
/// time scanned every event for each session a briefing lists (a
/// SessionStart 2.7 times slower on 20k events).
pub fn last_in_session(p: &Projections, session: &str, kind: &str) -> Result<Option<Stored>> {
    // beyond the index, the newest are the log's last
    if let Some(u) = p
        .unindexed()
        .events()
        .iter()
        .rev()
        .find(|u| u.event.session == session && u.event.kind.as_str() == kind)
    {
        return Ok(Some(unindexed(u)));
    }
    let mut stmt = p
        .graph
        .conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM events WHERE session = ?1 AND kind = ?2
             ORDER BY session DESC, ts DESC, seq DESC LIMIT 8"
        ))
        .map_err(sql)?;
    let rows = stmt
        .query_map(rusqlite::params![session, kind], stored)
        .map_err(sql)?
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(sql)?;
    // a forget the index has not applied yet hides some of them
    Ok(visible(p, rows).into_iter().next())
}

/// Events in time order, filtered; at most `limit + 1` rows are read so
/// that the caller can tell there are more.
pub fn timeline(p: &Projections, q: &TimelineQuery) -> Result<Vec<Stored>> {
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
    let (mut rows, joined) = with_unindexed(
        p,
        rows,
        |e| {
            q.session.is_none_or(|s| e.event.session == s)
                && q.since_ms.is_none_or(|ms| e.ts_ms >= ms)
                && q.until_ms.is_none_or(|ms| e.ts_ms < ms)
                && (q.kinds.is_empty() || q.kinds.iter().any(|k| k == e.event.kind.as_str()))
        },
        // the timeline's order
        |e| {
            (
                memlog_format::time::to_ms(&e.ts),
                e.ts.clone(),
                e.session.clone(),
                e.seq,
                e.id.clone(),
            )
        },
    );
    // keeping the window asked for
    let keep = q.limit + 1;
    if joined && rows.len() > keep {
        if q.latest {
            rows.drain(..rows.len() - keep);
        } else {
            rows.truncate(keep);
        }
    }
    Ok(rows)
}
