//! Tasks as the task events left them: `task_created` and
//! `task_status_changed` events folded by their canonical `key` (a repeated
//! `task_created` updates the task it names). The full task system — state
//! machine, blockers, matching (seed 002) — builds on this.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::projection::Projections;
use crate::{Error, Result};

/// A task's current state.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TaskState {
    pub key: String,
    pub title: String,
    pub status: String,
    /// When it last changed.
    pub updated: String,
    pub session: String,
}

impl TaskState {
    pub fn is_open(&self) -> bool {
        !matches!(self.status.as_str(), "done" | "completed" | "cancelled")
    }
}

/// Every task, folded from the task events, most recently changed first.
pub fn tasks(p: &Projections) -> Result<Vec<TaskState>> {
    let err = |e| Error::sql(&p.dir, e);
    let mut stmt = p
        .graph
        .conn
        .prepare_cached(
            "SELECT kind, body, ts, session FROM events
             WHERE kind IN ('task_created', 'task_status_changed') ORDER BY ts, seq",
        )
        .map_err(err)?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, Option<String>>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
            ))
        })
        .map_err(err)?;
    let mut by_key: BTreeMap<String, TaskState> = BTreeMap::new();
    for row in rows {
        let (kind, body, ts, session) = row.map_err(err)?;
        let Some(body) = body.and_then(|b| serde_json::from_str::<Value>(&b).ok()) else {
            continue;
        };
        let Some(key) = body.get("key").and_then(Value::as_str) else {
            continue;
        };
        let text = |k: &str| body.get(k).and_then(Value::as_str).map(str::to_string);
        let status = if kind == "task_status_changed" {
            text("to").or_else(|| text("status"))
        } else {
            text("status")
        };
        let entry = by_key.entry(key.to_string()).or_insert_with(|| TaskState {
            key: key.to_string(),
            title: text("title").unwrap_or_else(|| key.to_string()),
            status: "pending".into(),
            updated: ts.clone(),
            session: session.clone(),
        });
        if let Some(t) = text("title") {
            entry.title = t;
        }
        if let Some(s) = status {
            entry.status = s;
        }
        entry.updated = ts;
        entry.session = session;
    }
    let mut out: Vec<TaskState> = by_key.into_values().collect();
    out.sort_by(|a, b| b.updated.cmp(&a.updated).then(a.key.cmp(&b.key)));
    Ok(out)
}
