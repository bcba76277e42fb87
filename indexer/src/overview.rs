//! Summaries read off the projection database: how many events of each
//! kind (`memlog stats`), the recent sessions of a SessionStart briefing,
//! the viewer's timeline page and per-day counts, an entity with its edges.
//! Every query the front-ends need beyond [`crate::lookup`] and
//! [`crate::search`] is here, so that no SQL lives outside this crate.

use std::collections::BTreeMap;
use std::path::Path;

use memlog_format::EventId;
use rusqlite::{OptionalExtension, params};
use serde::Serialize;
use serde_json::{Value, json};

use crate::projection::Projections;
pub use crate::session_row::SessionRow;
use crate::{Error, Result};

fn sql(e: rusqlite::Error) -> Error {
    Error::sql(Path::new("graph.sqlite"), e)
}

fn count(n: i64) -> u64 {
    n.max(0) as u64
}

/// Live events by kind and where they are (sealed or in a journal).
#[derive(Clone, Debug, Default)]
pub struct EventCounts {
    /// Live events of each kind.
    pub by_kind: BTreeMap<String, u64>,
    /// Every live event.
    pub events: u64,
    /// Those still in a journal.
    pub journal_events: u64,
    /// Sessions with at least one live event.
    pub sessions: u64,
    /// Events a forget hides.
    pub hidden: u64,
    /// Time of the earliest live event.
    pub first_ts: Option<String>,
    /// Time of the latest live event.
    pub last_ts: Option<String>,
}

/// Counts of live events, read off the index on (kind, source): no table
/// scan, no sort. The events the index lacks yet ([`Projections::unindexed`]:
/// sealed while a background `memlog index` held the writer lock, say)
/// are counted too, and the rows a forget the index has not applied yet
/// hides count as hidden, not live.
pub fn event_counts(
    p: &Projections,
    pending: &[crate::lookup::PendingHidden],
) -> Result<EventCounts> {
    let conn = &p.graph.conn;
    let mut out = EventCounts::default();
    let mut stmt = conn
        .prepare("SELECT kind, source = 'journal', count(*) FROM events GROUP BY kind, source")
        .map_err(sql)?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, bool>(1)?,
                r.get::<_, i64>(2)?,
            ))
        })
        .map_err(sql)?;
    for row in rows {
        let (kind, journal, n) = row.map_err(sql)?;
        let n = count(n);
        *out.by_kind.entry(kind).or_default() += n;
        out.events += n;
        if journal {
            out.journal_events += n;
        }
    }
    let total = |query: &str| -> Result<u64> {
        conn.query_row(query, [], |r| r.get::<_, i64>(0))
            .map(count)
            .map_err(sql)
    };
    out.sessions = total("SELECT count(*) FROM sessions")?;
    out.hidden = total("SELECT count(*) FROM hidden")?;
    // a forget the index has not applied yet hides rows it still counts
    let hidden_ids: std::collections::HashSet<&str> =
        pending.iter().map(|(s, _)| s.event.id.as_str()).collect();
    // the earliest (latest) row no such forget hides: the first, as a rule
    let edge = |order: &str| -> Result<Option<String>> {
        let mut stmt = conn
            .prepare(&format!(
                "SELECT id, ts FROM events ORDER BY ts_ms {order}, ts {order}"
            ))
            .map_err(sql)?;
        let mut rows = stmt.query([]).map_err(sql)?;
        while let Some(row) = rows.next().map_err(sql)? {
            let id: String = row.get(0).map_err(sql)?;
            if !hidden_ids.contains(id.as_str()) {
                return row.get(1).map_err(sql);
            }
        }
        Ok(None)
    };
    out.first_ts = edge("ASC")?;
    out.last_ts = edge("DESC")?;
    for (s, journal) in pending {
        if let Some(n) = out.by_kind.get_mut(s.event.kind.as_str()) {
            *n = n.saturating_sub(1);
        }
        out.events = out.events.saturating_sub(1);
        if *journal {
            out.journal_events = out.journal_events.saturating_sub(1);
        }
        out.hidden += 1;
    }
    // a session left with no live event is gone
    let mut hidden_in: BTreeMap<&str, u64> = BTreeMap::new();
    for (s, _) in pending {
        *hidden_in.entry(s.event.session.as_str()).or_default() += 1;
    }
    let mut live_in = conn
        .prepare_cached("SELECT events FROM sessions WHERE session = ?1")
        .map_err(sql)?;
    for (session, hidden) in hidden_in {
        let live: Option<i64> = live_in
            .query_row([session], |r| r.get(0))
            .optional()
            .map_err(sql)?;
        if live.is_some_and(|n| count(n) <= hidden) {
            out.sessions = out.sessions.saturating_sub(1);
        }
    }
    out.by_kind.retain(|_, n| *n > 0);
    let unindexed = p.unindexed().events();
    let mut new_sessions: std::collections::HashSet<&str> = Default::default();
    for u in unindexed {
        let e = &u.event;
        *out.by_kind.entry(e.kind.as_str().to_string()).or_default() += 1;
        out.events += 1;
        if u.from_journal {
            out.journal_events += 1;
        }
        if out.first_ts.as_ref().is_none_or(|t| e.ts < *t) {
            out.first_ts = Some(e.ts.clone());
        }
        if out.last_ts.as_ref().is_none_or(|t| e.ts > *t) {
            out.last_ts = Some(e.ts.clone());
        }
        new_sessions.insert(&e.session);
    }
    let mut known = conn
        .prepare_cached("SELECT 1 FROM sessions WHERE session = ?1")
        .map_err(sql)?;
    for s in new_sessions {
        if !known.exists([s]).map_err(sql)? {
            out.sessions += 1;
        }
    }
    Ok(out)
}

/// The sessions with prompts, most recently active first, leaving out
/// `exclude` (the session asking): a SessionStart briefing's list. Those
/// the index has not seen yet come first (the latest sessions, sealed a
/// moment ago).
pub fn recent_sessions(p: &Projections, exclude: &str, limit: usize) -> Result<Vec<SessionRow>> {
    let mut out: Vec<SessionRow> = p
        .unindexed()
        .sessions()
        .into_iter()
        .filter(|s| s.session != exclude)
        .take(limit)
        .collect();
    for row in indexed_recent_sessions(p, exclude, limit)? {
        if out.len() < limit && out.iter().all(|s| s.session != row.session) {
            out.push(row);
        }
    }
    Ok(out)
}

fn indexed_recent_sessions(
    p: &Projections,
    exclude: &str,
    limit: usize,
) -> Result<Vec<SessionRow>> {
    let mut stmt = p
        .graph
        .conn
        .prepare_cached(
            // sessions dated more than an hour ahead (a teammate's clock,
            // an import) come after the rest: by their dates alone they
            // would crowd out every session of today until those dates pass
            "SELECT session, first_ts, last_ts, events, prompts, tool_calls, first_prompt, branch
             FROM sessions
             WHERE session != ?1 AND prompts > 0
             ORDER BY last_ts > strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '+1 hour'), last_ts DESC
             LIMIT ?2",
        )
        .map_err(sql)?;
    let rows = stmt
        .query_map(params![exclude, limit as i64], session_row)
        .map_err(sql)?;
    visible_sessions(p, rows.collect::<rusqlite::Result<_>>().map_err(sql)?)
}

/// One session's row, if it has live events.
pub fn session(p: &Projections, session: &str) -> Result<Option<SessionRow>> {
    let mut stmt = p
        .graph
        .conn
        .prepare_cached(
            "SELECT session, first_ts, last_ts, events, prompts, tool_calls, first_prompt, branch
             FROM sessions WHERE session = ?1",
        )
        .map_err(sql)?;
    let row = stmt
        .query_row([session], session_row)
        .optional()
        .map_err(sql)?;
    Ok(visible_sessions(p, row.into_iter().collect())?.pop())
}

/// Session rows as a forget the index has not applied yet leaves them
/// ([`crate::projection::Unindexed`]): a forgotten session is left out,
/// and a forgotten first prompt is not shown.
fn visible_sessions(p: &Projections, mut rows: Vec<SessionRow>) -> Result<Vec<SessionRow>> {
    let unindexed = p.unindexed();
    if !unindexed.hides_any() {
        return Ok(rows);
    }
    rows.retain(|r| !unindexed.hides_session(&r.session));
    let mut first = p
        .graph
        .conn
        .prepare_cached(
            "SELECT id FROM events WHERE session = ?1 AND kind = 'user_prompt' ORDER BY ts, seq LIMIT 1",
        )
        .map_err(sql)?;
    for r in &mut rows {
        let id: Option<String> = first
            .query_row([&r.session], |row| row.get(0))
            .optional()
            .map_err(sql)?;
        if let Some(id) = id
            && crate::lookup::event(p, &id)?.is_none()
        {
            r.first_prompt = None;
        }
    }
    Ok(rows)
}

/// A page of the timeline: sessions by first event, newest first, those
/// before the cursor `(first_ts, session)` when one is given.
pub fn sessions_page(
    p: &Projections,
    before: Option<(&str, &str)>,
    limit: usize,
) -> Result<Vec<SessionRow>> {
    let mut stmt = p
        .graph
        .conn
        .prepare_cached(
            "SELECT session, first_ts, last_ts, events, prompts, tool_calls, first_prompt, branch
             FROM sessions
             WHERE ?1 IS NULL OR (first_ts, session) < (?1, ?2)
             ORDER BY first_ts DESC, session DESC LIMIT ?3",
        )
        .map_err(sql)?;
    let (ts, session) = before.unzip();
    let rows = stmt
        .query_map(params![ts, session, limit as i64], session_row)
        .map_err(sql)?;
    let mut rows: Vec<SessionRow> = rows.collect::<rusqlite::Result<_>>().map_err(sql)?;
    // sessions the index has not seen yet (sealed a moment ago, or while
    // a background index holds the writer lock), in the same order
    let unindexed = p.unindexed().sessions();
    if !unindexed.is_empty() {
        for u in unindexed {
            let after_cursor =
                before.is_none_or(|(ts, s)| (u.first_ts.as_str(), u.session.as_str()) < (ts, s));
            if after_cursor && rows.iter().all(|r| r.session != u.session) {
                rows.push(u);
            }
        }
        rows.sort_by(|a, b| (&b.first_ts, &b.session).cmp(&(&a.first_ts, &a.session)));
        rows.truncate(limit);
    }
    visible_sessions(p, rows)
}

fn session_row(r: &rusqlite::Row) -> rusqlite::Result<SessionRow> {
    Ok(SessionRow {
        session: r.get(0)?,
        first_ts: r.get(1)?,
        last_ts: r.get(2)?,
        events: count(r.get(3)?),
        prompts: count(r.get(4)?),
        tool_calls: count(r.get(5)?),
        first_prompt: r.get(6)?,
        branch: r.get(7)?,
    })
}

/// Whether any live event belongs to `session`.
pub fn session_exists(p: &Projections, session: &str) -> Result<bool> {
    if p.unindexed().hides_session(session) {
        return Ok(false);
    }
    if p.unindexed()
        .events()
        .iter()
        .any(|e| e.event.session == session)
    {
        return Ok(true);
    }
    let n: i64 = p
        .graph
        .conn
        .query_row(
            "SELECT count(*) FROM events WHERE session = ?1",
            [session],
            |r| r.get(0),
        )
        .map_err(sql)?;
    Ok(n > 0)
}

/// Up to `limit` sessions whose id starts with `prefix`, sorted: those the
/// index holds and those still in journals.
pub fn sessions_starting_with(p: &Projections, prefix: &str, limit: usize) -> Result<Vec<String>> {
    let mut found: std::collections::BTreeSet<String> = p
        .unindexed()
        .events()
        .iter()
        .map(|e| &e.event.session)
        .filter(|s| s.starts_with(prefix) && !p.unindexed().hides_session(s))
        .cloned()
        .collect();
    // `substr` rather than LIKE: a session id may hold `_` or `%`
    let mut stmt = p
        .graph
        .conn
        .prepare_cached(
            "SELECT session FROM sessions WHERE substr(session, 1, length(?1)) = ?1
             ORDER BY session LIMIT ?2",
        )
        .map_err(sql)?;
    let rows = stmt
        .query_map(rusqlite::params![prefix, limit as i64], |r| {
            r.get::<_, String>(0)
        })
        .map_err(sql)?;
    for row in rows {
        let session = row.map_err(sql)?;
        if !p.unindexed().hides_session(&session) {
            found.insert(session);
        }
    }
    Ok(found.into_iter().take(limit).collect())
}

/// Live events per day (`YYYY-MM-DD`) and kind, oldest first.
pub fn events_per_day(p: &Projections) -> Result<Vec<Value>> {
    let mut stmt = p
        .graph
        .conn
        .prepare_cached(
            "SELECT substr(ts, 1, 10) AS day, kind, count(*) FROM events GROUP BY day, kind ORDER BY day, kind",
        )
        .map_err(sql)?;
    let rows = stmt
        .query_map([], |r| {
            Ok(json!({
                "day": r.get::<_, String>(0)?,
                "kind": r.get::<_, String>(1)?,
                "events": r.get::<_, i64>(2)?,
            }))
        })
        .map_err(sql)?;
    rows.collect::<rusqlite::Result<_>>().map_err(sql)
}

/// Rows of each table of the database the viewer's stats page shows.
pub fn table_rows(p: &Projections, table: &str) -> Result<i64> {
    const TABLES: &[&str] = &["events", "sessions", "entities", "edges", "hidden"];
    if !TABLES.contains(&table) {
        return Err(Error::Invalid(format!("no table {table:?} to count")));
    }
    p.graph
        .conn
        .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .map_err(sql)
}

/// An edge of the graph seen from one of its ends.
#[derive(Clone, Debug, Serialize)]
pub struct EdgeRow {
    /// The relation (`touches`, `blocked_by`, …).
    pub rel: String,
    /// The entity at the other end.
    pub other: String,
    /// Its type, when it is an entity of the table.
    pub other_type: Option<String>,
    /// Its title.
    pub other_title: Option<String>,
    /// The event the edge was derived from.
    pub evidence: EventId,
    /// When the edge was made.
    pub ts: String,
}

/// Which end of an edge an entity is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Edges from the entity.
    Out,
    /// Edges to the entity.
    In,
}

/// Up to `limit` edges of the entity `id`, newest first.
pub fn edges(
    p: &Projections,
    id: &str,
    direction: Direction,
    limit: usize,
) -> Result<Vec<EdgeRow>> {
    let query = match direction {
        Direction::Out => {
            "SELECT e.rel_type, e.dst_id, n.entity_type, n.title, e.evidence, e.ts
             FROM edges e LEFT JOIN entities n ON n.entity_id = e.dst_id
             WHERE e.src_id = ?1 ORDER BY e.ts DESC LIMIT ?2"
        }
        Direction::In => {
            "SELECT e.rel_type, e.src_id, n.entity_type, n.title, e.evidence, e.ts
             FROM edges e LEFT JOIN entities n ON n.entity_id = e.src_id
             WHERE e.dst_id = ?1 ORDER BY e.ts DESC LIMIT ?2"
        }
    };
    let mut stmt = p.graph.conn.prepare_cached(query).map_err(sql)?;
    let rows = stmt
        .query_map(params![id, limit as i64], |r| {
            Ok(EdgeRow {
                rel: r.get(0)?,
                other: r.get(1)?,
                other_type: r.get(2)?,
                other_title: r.get(3)?,
                evidence: EventId::unchecked(r.get(4)?),
                ts: r.get(5)?,
            })
        })
        .map_err(sql)?;
    rows.collect::<rusqlite::Result<_>>().map_err(sql)
}

/// The entity `id` as the viewer shows it, or `None`.
pub fn entity(p: &Projections, id: &str) -> Result<Option<Value>> {
    p.graph
        .conn
        .prepare_cached(
            "SELECT entity_id, entity_type, canonical_key, title, stage, status, created_at, updated_at
             FROM entities WHERE entity_id = ?1",
        )
        .map_err(sql)?
        .query_row([id], |r| {
            Ok(json!({
                "id": r.get::<_, String>(0)?,
                "type": r.get::<_, String>(1)?,
                "key": r.get::<_, String>(2)?,
                "title": r.get::<_, String>(3)?,
                "stage": r.get::<_, String>(4)?,
                "status": r.get::<_, String>(5)?,
                "created_at": r.get::<_, String>(6)?,
                "updated_at": r.get::<_, String>(7)?,
            }))
        })
        .optional()
        .map_err(sql)
}

/// The generation token of the index's last committed run, read from the
/// database file in `index_dir` opened afresh, read-only (a rebuild swaps
/// the whole directory); `None` when it cannot be read.
pub fn generation(index_dir: &Path) -> Option<String> {
    use rusqlite::{Connection, OpenFlags};
    let conn = Connection::open_with_flags(
        memlog_store::IndexLayout::new(index_dir).graph(),
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .ok()?;
    conn.query_row("SELECT value FROM meta WHERE key = 'generation'", [], |r| {
        r.get(0)
    })
    .optional()
    .ok()
    .flatten()
}
