//! Reading an event's standing as a memory (its level and vitality) off
//! the projections: the read side of [`crate::memory`], which derives the
//! `memory` rows below the projection.

use memlog_format::config::LevelsConfig;
use rusqlite::{OptionalExtension, params};

use crate::memory::{MEMORY_COLUMNS, MemoryRow, Standing, memory_row};
use crate::projection::Projections;
use crate::{Error, Result};

/// What the log says about an event as a memory, by its full-text key
/// (see [`memory_row`]).
pub fn row_by_key(p: &Projections, key: i64) -> Result<Option<MemoryRow>> {
    p.graph
        .conn
        .prepare_cached(&format!(
            "SELECT e.kind, {MEMORY_COLUMNS}
             FROM events e LEFT JOIN memory m ON m.event_id = e.id WHERE e.key = ?1 LIMIT 1"
        ))
        .and_then(|mut st| {
            st.query_row([key], |r| memory_row(&r.get::<_, String>(0)?, r, 1))
                .optional()
                .map(Option::flatten)
        })
        .map_err(|e| Error::sql(&p.dir, e))
}

/// An event's level and vitality now (L0 and age-only vitality for events
/// the log says nothing more about).
pub fn standing(p: &Projections, event_id: &str, cfg: &LevelsConfig) -> Result<Option<Standing>> {
    let found: Option<(i64, String)> = p
        .graph
        .conn
        .query_row(
            "SELECT key, ts FROM events WHERE key = ?1 AND id = ?2",
            params![crate::fts::event_key(event_id) as i64, event_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()
        .map_err(|e| Error::sql(&p.dir, e))?;
    let Some((key, ts)) = found else {
        return Ok(None);
    };
    let row = row_by_key(p, key)?.unwrap_or_default();
    let now = jiff::Timestamp::now().as_millisecond();
    Ok(Some(Standing {
        level: row.level(cfg),
        vitality: row.vitality(memlog_format::time::to_ms(&ts), now, cfg),
        row,
    }))
}

/// How many live memories stand at each level now (index 0 to 4: L0 to
/// L4), counting the events the log says something about as memories and
/// the kinds that are memories by themselves (notes, summaries, facts,
/// rules, concepts); every other event is L0 and is not counted.
pub fn level_counts(
    p: &Projections,
    cfg: &LevelsConfig,
    pending: &[crate::lookup::PendingHidden],
) -> Result<[u64; 5]> {
    let err = |e| Error::sql(&p.dir, e);
    let mut counts = [0u64; 5];
    // rows a forget the index has not applied yet hides are not memories
    let hidden: std::collections::HashSet<&str> =
        pending.iter().map(|(s, _)| s.event.id.as_str()).collect();
    let kinds = "'note', 'session_summary', 'fact', 'rule', 'concept'";
    let mut by_kind = p
        .graph
        .conn
        .prepare(&format!(
            "SELECT e.kind, e.id, {MEMORY_COLUMNS}
             FROM events e LEFT JOIN memory m ON m.event_id = e.id WHERE e.kind IN ({kinds})"
        ))
        .map_err(err)?;
    let rows = by_kind
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(1)?,
                memory_row(&r.get::<_, String>(0)?, r, 2)?,
            ))
        })
        .map_err(err)?;
    for row in rows {
        if let (id, Some(row)) = row.map_err(err)?
            && !hidden.contains(id.as_str())
        {
            counts[usize::from(row.level(cfg).min(4))] += 1;
        }
    }
    // memories of other kinds: events that were reinforced or recalled
    let mut used = p
        .graph
        .conn
        .prepare(&format!(
            "SELECT m.event_id, {MEMORY_COLUMNS} FROM memory m"
        ))
        .map_err(err)?;
    let rows: Vec<(String, MemoryRow)> = used
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                memory_row("", r, 1)?.unwrap_or_default(),
            ))
        })
        .map_err(err)?
        .collect::<rusqlite::Result<_>>()
        .map_err(err)?;
    let mut kind_of = p
        .graph
        .conn
        .prepare_cached("SELECT kind FROM events WHERE key = ?1 AND id = ?2")
        .map_err(err)?;
    for (id, row) in rows {
        if hidden.contains(id.as_str()) {
            continue;
        }
        let kind: Option<String> = kind_of
            .query_row(params![crate::fts::event_key(&id) as i64, id], |r| r.get(0))
            .optional()
            .map_err(err)?;
        match kind {
            Some(k) if crate::memory::kind_level(&k) == 0 => {
                counts[usize::from(row.level(cfg).min(4))] += 1;
            }
            _ => {}
        }
    }
    Ok(counts)
}
