//! Writing the fold into the database: reading every live task event and
//! replacing the task rows (`entities`, `entity_aliases`, `edges`) in the
//! projection's transaction. It sits below the projection, which calls it.

use std::path::Path;

use memlog_format::{EventId, Kind};
use rusqlite::{Transaction, params};
use serde_json::{Map, Value};

use crate::{Error, Result};

use super::fold::{TaskEvent, fold};

/// The kinds folded here.
pub const TASK_KINDS: [Kind; 5] = [
    Kind::TaskCreated,
    Kind::TaskStatusChanged,
    Kind::TaskPriorityChanged,
    Kind::TaskBlockersSet,
    Kind::TaskTransitionRejected,
];

fn sql_err(e: rusqlite::Error) -> Error {
    Error::sql(Path::new("graph.sqlite"), e)
}

/// Reads every live task event in log order.
pub fn load_events(conn: &rusqlite::Connection) -> Result<Vec<TaskEvent>> {
    let kinds: Vec<String> = TASK_KINDS
        .iter()
        .map(|k| format!("'{}'", k.as_str()))
        .collect();
    let mut stmt = conn
        .prepare(&format!(
            "SELECT id, session, ts, kind, project, body FROM events
             WHERE kind IN ({}) ORDER BY ts, session, seq, id",
            kinds.join(", ")
        ))
        .map_err(sql_err)?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, Option<String>>(5)?,
            ))
        })
        .map_err(sql_err)?;
    let mut out = Vec::new();
    for row in rows {
        let (id, session, ts, kind, project, body) = row.map_err(sql_err)?;
        let body = body
            .and_then(|b| serde_json::from_str::<Map<String, Value>>(&b).ok())
            .unwrap_or_default();
        out.push(TaskEvent {
            id: EventId::unchecked(id),
            session,
            ts,
            kind: Kind::parse(&kind),
            project,
            body,
        });
    }
    Ok(out)
}

/// Derives the task rows again from every task event (module docs).
pub fn refold(tx: &Transaction) -> Result<()> {
    let g = fold(&load_events(tx)?);
    tx.execute_batch(
        "DELETE FROM entities WHERE entity_type IN ('task', 'condition');
         DELETE FROM entity_aliases WHERE entity_type IN ('task', 'condition');
         -- the fold's edges: from tasks and conditions, and the sessions'
         -- mentions of tasks; ranges, so that the edge indexes answer
         -- (a scan of every edge would cost each update at scale)
         DELETE FROM edges WHERE src_id >= 'task:' AND src_id < 'task;';
         DELETE FROM edges WHERE src_id >= 'cond:' AND src_id < 'cond;';
         DELETE FROM edges WHERE dst_id >= 'task:' AND dst_id < 'task;' AND rel_type = 'mentions';
         -- artifacts nothing links to any more (their blocker or mention was
         -- forgotten or replaced): a rebuild would not have them; those the
         -- fold still names are inserted again below
         DELETE FROM entities WHERE entity_type = 'artifact'
            AND NOT EXISTS (SELECT 1 FROM edges WHERE edges.dst_id = entities.entity_id);",
    )
    .map_err(sql_err)?;
    let mut entity = tx
        .prepare(
            "INSERT INTO entities(entity_id, entity_type, canonical_key, title, stage, status, current_json, title_norm, search_text, created_at, updated_at)
             VALUES (?1, ?2, ?1, ?3, ?4, 'active', ?5, ?6, ?3, ?7, ?8)",
        )
        .map_err(sql_err)?;
    let mut alias = tx
        .prepare(
            "INSERT OR IGNORE INTO entity_aliases(entity_type, canonical_key, entity_id, is_primary, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )
        .map_err(sql_err)?;
    for t in g.tasks.values() {
        let current = serde_json::to_string(t).map_err(|e| Error::Invalid(e.to_string()))?;
        entity
            .execute(params![
                t.entity_id,
                "task",
                t.title,
                // docs/DESIGN.md §5's stage: a task someone works on is working
                if t.is_open() { "working" } else { "raw" },
                current,
                memlog_format::key::normalize(&t.title),
                t.created_at,
                t.updated_at
            ])
            .map_err(sql_err)?;
    }
    for (key, id) in &g.aliases {
        let created = g.tasks.get(id).map_or("", |t| t.created_at.as_str());
        alias
            .execute(params!["task", key, id, key == id, created])
            .map_err(sql_err)?;
    }
    for c in g.conditions.values() {
        let current = serde_json::to_string(c).map_err(|e| Error::Invalid(e.to_string()))?;
        entity
            .execute(params![
                c.entity_id,
                "condition",
                c.text,
                "raw",
                current,
                memlog_format::key::normalize(&c.text),
                c.created_at,
                c.created_at
            ])
            .map_err(sql_err)?;
        alias
            .execute(params![
                "condition",
                c.entity_id,
                c.entity_id,
                true,
                c.created_at
            ])
            .map_err(sql_err)?;
    }
    let mut artifact = tx
        .prepare(
            "INSERT OR IGNORE INTO entities(entity_id, entity_type, canonical_key, title, title_norm, created_at, updated_at)
             VALUES (?1, 'artifact', ?1, ?2, ?3, ?4, ?4)",
        )
        .map_err(sql_err)?;
    for a in g.artifacts.values() {
        artifact
            .execute(params![
                a.entity_id,
                a.title,
                memlog_format::key::normalize(&a.title),
                a.ts
            ])
            .map_err(sql_err)?;
    }
    let mut edge = tx
        .prepare(
            "INSERT INTO edges(src_id, rel_type, dst_id, evidence, ts) VALUES (?1, ?2, ?3, ?4, ?5)",
        )
        .map_err(sql_err)?;
    for e in g.edges() {
        edge.execute(params![e.src, e.rel, e.dst, e.evidence.as_str(), e.ts])
            .map_err(sql_err)?;
    }
    Ok(())
}
