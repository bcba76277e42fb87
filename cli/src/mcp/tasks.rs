//! The task list of the MCP tool `memory_tasks`: the task entities of
//! `memlog tasks`, in the shape the tool has always returned.

use memlog_indexer::Projections;

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

/// The task entities (`memlog_indexer::tasks`: the fold of the task
/// events through seed 002's state machine, shared with `memlog tasks`),
/// most recently updated first.
pub fn tasks(p: &Projections) -> anyhow::Result<Vec<Task>> {
    Ok(memlog_indexer::tasks::tasks(p)?
        .into_iter()
        .map(|t| Task {
            key: t.key().to_string(),
            title: t.title,
            status: Some(t.status),
            priority: t.priority,
            blockers: t.blocked_by,
            updated: t.updated,
            session: t.session,
            last_event: t.last_event,
        })
        .collect())
}
