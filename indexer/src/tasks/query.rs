//! Reading tasks back off the projections: the task list, one task with
//! its history, the open tasks of a project, blockers by name.

use memlog_format::EventId;
use memlog_format::task::{BlockerKind, BlockerRef, Confidence, Status, task_key};
use rusqlite::OptionalExtension;
use serde::Serialize;
use serde_json::Value;

use crate::matcher::{self, Match};
use crate::projection::Projections;
use crate::{Error, Result};

use super::fold::{TaskEvent, fold, offline_ref};
use super::refold::{TASK_KINDS, load_events};

/// A task as listings show it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TaskSummary {
    /// Its entity id.
    pub entity_id: String,
    /// Its title.
    pub title: String,
    /// Its status.
    pub status: String,
    /// Its priority, if set.
    pub priority: Option<String>,
    /// How many blockers it has.
    pub blockers: usize,
    /// The blockers as written.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub blocked_by: Vec<String>,
    /// Its project.
    pub project: String,
    /// When it last changed.
    pub updated: String,
    /// The session that last changed it.
    pub session: String,
    /// The last event about it.
    pub last_event: EventId,
}

impl TaskSummary {
    /// The task's key as task events name it: the entity id without
    /// `task:`.
    pub fn key(&self) -> &str {
        self.entity_id
            .strip_prefix("task:")
            .unwrap_or(&self.entity_id)
    }

    /// Whether it is pending, in progress or blocked.
    pub fn is_open(&self) -> bool {
        Status::parse(&self.status).is_none_or(Status::is_open)
    }
}

/// Every task, most recently changed first. Task events the index has not
/// taken in yet (a session sealed a moment ago while another writer holds
/// the index) are folded in, in memory: `memlog task list` right after a
/// session listed none of its tasks.
pub fn tasks(p: &Projections) -> Result<Vec<TaskSummary>> {
    let recent: Vec<TaskEvent> = p
        .unindexed()
        .events()
        .iter()
        .map(|u| &u.event)
        .filter(|e| TASK_KINDS.contains(&e.kind))
        .map(TaskEvent::from)
        .collect();
    if !recent.is_empty() {
        // the log's order: what the index holds, then what follows it
        let mut events = load_events(&p.graph.conn)?;
        events.extend(recent);
        let graph = fold(&events);
        let mut out: Vec<TaskSummary> = graph
            .tasks
            .values()
            .map(|t| {
                let current = serde_json::to_value(t).unwrap_or(Value::Null);
                summary(
                    t.entity_id.clone(),
                    t.title.clone(),
                    &current,
                    t.updated_at.clone(),
                )
            })
            .collect();
        out.sort_by(|a, b| {
            b.updated
                .cmp(&a.updated)
                .then_with(|| a.entity_id.cmp(&b.entity_id))
        });
        return Ok(out);
    }
    let err = |e| Error::sql(&p.dir, e);
    let mut stmt = p
        .graph
        .conn
        .prepare_cached(
            "SELECT entity_id, title, current_json, updated_at FROM entities
             WHERE entity_type = 'task' ORDER BY updated_at DESC, entity_id",
        )
        .map_err(err)?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
            ))
        })
        .map_err(err)?;
    let mut out = Vec::new();
    for row in rows {
        let (entity_id, title, current, updated) = row.map_err(err)?;
        let current: Value = serde_json::from_str(&current).unwrap_or(Value::Null);
        out.push(summary(entity_id, title, &current, updated));
    }
    Ok(out)
}

/// A task's summary from its folded state (`current_json`).
fn summary(entity_id: String, title: String, current: &Value, updated: String) -> TaskSummary {
    let field = |k: &str| current.get(k).and_then(Value::as_str).map(str::to_string);
    let blocked_by: Vec<String> = current
        .get("blockers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|b| b.get("raw_text").and_then(Value::as_str))
        .map(str::to_string)
        .collect();
    // the last change: its event and session
    let last = current
        .get("history")
        .and_then(Value::as_array)
        .and_then(|h| h.last());
    let last_of = |k: &str| {
        last.and_then(|h| h.get(k))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    TaskSummary {
        entity_id,
        title,
        status: field("status").unwrap_or_else(|| "pending".into()),
        priority: field("priority"),
        blockers: blocked_by.len(),
        blocked_by,
        project: field("project").unwrap_or_default(),
        last_event: EventId::unchecked(last_of("event")),
        session: last_of("session"),
        updated,
    }
}

/// Finds a task by entity id, by any key naming it (`task:p::title`, or
/// the key without `task:`), or by its title in `project`.
pub fn find_task(p: &Projections, what: &str, project: &str) -> Result<Option<Value>> {
    let err = |e| Error::sql(&p.dir, e);
    let mut keys = vec![what.to_string(), format!("task:{what}")];
    keys.push(task_key(what, project));
    for key in keys {
        let found: Option<String> = p
            .graph
            .conn
            .query_row(
                "SELECT e.current_json FROM entity_aliases a JOIN entities e ON e.entity_id = a.entity_id
                 WHERE a.entity_type = 'task' AND a.canonical_key = ?1",
                [&key],
                |r| r.get(0),
            )
            .optional()
            .map_err(err)?;
        if let Some(json) = found {
            return Ok(serde_json::from_str(&json).ok());
        }
    }
    // The same title under another project of this memory: the project's
    // name changes with the repository (an `origin` added, a clone in
    // another folder), the memory is the same.
    let title = memlog_format::key::normalize(what.strip_prefix("task:").unwrap_or(what));
    if title.is_empty() || title.contains("::") {
        return Ok(None);
    }
    let tail = format!("::{title}");
    let found: Option<String> = p
        .graph
        .conn
        .query_row(
            "SELECT e.current_json FROM entity_aliases a JOIN entities e ON e.entity_id = a.entity_id
             WHERE a.entity_type = 'task' AND substr(a.canonical_key, -?2) = ?1
             ORDER BY e.rowid DESC LIMIT 1",
            rusqlite::params![tail, tail.chars().count() as i64],
            |r| r.get(0),
        )
        .optional()
        .map_err(err)?;
    Ok(found.and_then(|json| serde_json::from_str(&json).ok()))
}

/// The open tasks of a project, for matching a title against them.
pub fn open_tasks(p: &Projections, project: &str) -> Result<Vec<(String, String)>> {
    Ok(tasks(p)?
        .into_iter()
        .filter(|t| t.is_open() && t.project == project)
        .map(|t| (t.entity_id, t.title))
        .collect())
}

/// Resolves blocker texts for a new `task_blockers_set` event (docs/DESIGN.md §5
/// §4.2): an open task's id (`task:PROJECT::title`, or its key without
/// `task:`) is that task; a strong reference is an artifact; a title
/// matching an open task for sure is that task; anything else a condition,
/// with the tasks it came close to as candidates. Never creates a task.
pub fn resolve_blockers(
    texts: &[String],
    open: &[(String, String)],
    project: &str,
    semantic: Option<&dyn matcher::Semantic>,
) -> Vec<BlockerRef> {
    let candidates: Vec<matcher::Candidate<'_>> = open
        .iter()
        .map(|(id, title)| matcher::Candidate {
            entity_id: id,
            title,
        })
        .collect();
    texts
        .iter()
        .map(|raw| {
            // An id names its task exactly: the title matcher would read
            // `task:P::x` as words and the condition key would mangle it.
            let id = raw.trim();
            if let Some((entity_id, _)) = open
                .iter()
                .find(|(open_id, _)| open_id == id || open_id.strip_prefix("task:") == Some(id))
            {
                return BlockerRef {
                    kind: BlockerKind::Task,
                    entity_id: entity_id.clone(),
                    raw_text: raw.clone(),
                    confidence: Confidence::High,
                    candidates: Vec::new(),
                };
            }
            let offline = offline_ref(raw, project);
            if offline.kind == BlockerKind::Artifact {
                return offline;
            }
            match matcher::match_title(raw, &candidates, semantic) {
                Match::High { best } => BlockerRef {
                    kind: BlockerKind::Task,
                    entity_id: best.entity_id,
                    raw_text: raw.clone(),
                    confidence: Confidence::High,
                    candidates: Vec::new(),
                },
                m => BlockerRef {
                    confidence: if matches!(m, Match::Suggested { .. }) {
                        Confidence::Suggested
                    } else {
                        Confidence::None
                    },
                    candidates: m
                        .candidates()
                        .into_iter()
                        .filter(|c| c.score >= matcher::CANDIDATE_FLOOR)
                        .map(|c| memlog_format::task::Candidate {
                            entity_id: c.entity_id,
                            title: c.title,
                            score: c.score,
                        })
                        .collect(),
                    ..offline
                },
            }
        })
        .collect()
}
