//! Contradictions and successors (docs/DESIGN.md §12): a `fact` or `rule`
//! names the older memories it replaces (`supersedes`) or contradicts
//! (`contradicts`). A superseded memory ranks below its successor and is
//! marked where it is injected.

use std::collections::HashMap;

use memlog_format::EventId;
use serde_json::{Map, Value};

use crate::{Error, Projections, Result};

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
    Ok(out)
}

/// Superseded memory → the latest live memory that supersedes it.
pub fn successors(p: &Projections) -> Result<HashMap<EventId, EventId>> {
    Ok(links(p, "supersedes")?.into_iter().collect())
}
