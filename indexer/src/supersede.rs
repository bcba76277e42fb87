//! Contradictions and successors (docs/DESIGN.md §12): a `fact` or `rule`
//! names the older memories it replaces (`supersedes`) or contradicts
//! (`contradicts`). A superseded memory ranks below its successor and is
//! marked where it is injected; so does a contradicted one, and the events
//! a replaced memory rested on (its quote's event, its evidence) lose rank
//! with it ([`replaced_sources`]), or the old words would still rank where
//! the memory made from them no longer does.

use std::collections::HashMap;

use memlog_format::{EventId, Kind};
use serde_json::{Map, Value};

use crate::{Error, Projections, Result};

/// The body of the live event `id`.
fn body_of(p: &Projections, id: &EventId) -> Result<Map<String, Value>> {
    let body: Option<Option<String>> = p
        .graph
        .conn
        .prepare_cached("SELECT body FROM events WHERE key = ?1 AND id = ?2")
        .and_then(|mut stmt| {
            let mut rows = stmt.query(rusqlite::params![
                crate::fts::event_key(id.as_str()) as i64,
                id.as_str()
            ])?;
            rows.next()?.map(|r| r.get(0)).transpose()
        })
        .map_err(|e| Error::sql(&p.dir, e))?;
    match body.flatten() {
        Some(b) => Ok(serde_json::from_str(&b).unwrap_or_default()),
        // one the index has not caught up with
        None => Ok(p
            .unindexed()
            .event(id.as_str())
            .map(|u| u.event.body.clone())
            .unwrap_or_default()),
    }
}

/// The events a memory rests on: the event its quote was found in and its
/// evidence.
fn sources_of(body: &Map<String, Value>) -> Vec<EventId> {
    let mut out = ids_in(body, "event");
    out.extend(ids_in(body, "evidence"));
    out
}

/// For memories replaced by others (`(older, newer)` pairs), the events
/// they rest on that the memory replacing them does not: source → the
/// replaced memory.
pub fn replaced_sources(
    p: &Projections,
    replaced: &[(EventId, EventId)],
) -> Result<HashMap<EventId, EventId>> {
    let mut out = HashMap::new();
    for (older, newer) in replaced {
        let kept = sources_of(&body_of(p, newer)?);
        for source in sources_of(&body_of(p, older)?) {
            if !kept.contains(&source) && source != *newer {
                out.entry(source).or_insert_with(|| older.clone());
            }
        }
    }
    Ok(out)
}

/// Share of its score a superseded memory keeps.
pub const SUPERSEDED_FACTOR: f32 = 0.5;

/// The ids an event's body lists under `field` (a list, or one id), as
/// written (a body is not checked when it is logged).
pub fn ids_in(body: &Map<String, Value>, field: &str) -> Vec<EventId> {
    match body.get(field) {
        Some(Value::Array(ids)) => ids
            .iter()
            .filter_map(Value::as_str)
            .map(|id| EventId::unchecked(id.to_string()))
            .collect(),
        Some(Value::String(id)) => vec![EventId::unchecked(id.clone())],
        _ => Vec::new(),
    }
}

/// Live links of `field` (`supersedes` or `contradicts`) from facts and
/// rules: `(older id, newer id)`, in log order.
pub fn links(p: &Projections, field: &str) -> Result<Vec<(EventId, EventId)>> {
    let mut stmt = p
        .graph
        .conn
        .prepare_cached(
            "SELECT id, body FROM events WHERE kind IN ('fact', 'rule') AND body LIKE ?1
             ORDER BY ts, session, seq, id",
        )
        .map_err(|e| Error::sql(&p.dir, e))?;
    let rows = stmt
        .query_map([format!("%\"{field}\"%")], |r| {
            Ok((
                EventId::unchecked(r.get::<_, String>(0)?),
                r.get::<_, Option<String>>(1)?,
            ))
        })
        .map_err(|e| Error::sql(&p.dir, e))?
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(|e| Error::sql(&p.dir, e))?;
    let mut out = Vec::new();
    for (id, body) in rows {
        let body: Map<String, Value> = body
            .and_then(|b| serde_json::from_str(&b).ok())
            .unwrap_or_default();
        for older in ids_in(&body, field) {
            out.push((older, id.clone()));
        }
    }
    // then those of facts and rules the index has not caught up with
    for u in p.unindexed().events() {
        if matches!(u.event.kind, Kind::Fact | Kind::Rule) {
            for older in ids_in(&u.event.body, field) {
                out.push((older, u.event.id.clone()));
            }
        }
    }
    Ok(out)
}

/// Superseded memory → the latest live memory that supersedes it.
pub fn successors(p: &Projections) -> Result<HashMap<EventId, EventId>> {
    Ok(links(p, "supersedes")?.into_iter().collect())
}
