//! Tasks folded from the `task_*` events of the projection database, for
//! the MCP tool `memory_tasks`.

use std::collections::HashMap;

use memlog_format::Kind;
use memlog_indexer::Projections;
use memlog_indexer::lookup::{Stored, events_of_kind_prefix};
use serde_json::Value;

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
    let rows = events_of_kind_prefix(p, "task_")?;
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
