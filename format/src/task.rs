//! The task state machine of docs/DESIGN.md §5, as pure functions of task
//! events, shared by whoever writes task events (the CLI checks a change
//! before recording it) and whoever folds them (the indexer's projection).
//!
//! ```text
//! pending ──▶ in_progress ──▶ done
//!    │  ▲          │  ▲         │
//!    │  └──────────┘  │         └──▶ pending / in_progress (reopened)
//!    └──▶ blocked ◀───┘
//!           └──▶ in_progress (its blockers resolved)
//! any open status ──▶ cancelled ──▶ pending / in_progress (reopened)
//! ```
//!
//! Invariants, checked after every step: `blocked` has at least one blocker;
//! `done` has none. `pending → done` is rejected: the work has to be started
//! first. Staying in the same status is not a transition and always passes.
//!
//! Claude Code's TodoWrite (and its task tools since 2.1, TaskUpdate; and
//! the other agents' plan tools, [`PLAN_TOOL_SOURCES`]) is the exception
//! the state machine alone does not foresee: it moves a
//! todo from `pending` to `completed` between two calls when the agent did
//! the work without marking it started. The tool call itself proves the
//! work happened, so for changes whose source is an agent's task tool
//! ([`implies_start`]) the missing `in_progress` step is applied first
//! ([`Implied`]), and recorded as such (the hooks write it as its own event
//! when they see both states; the fold marks it `implied` in the task's
//! history when they did not).

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::refs::{self, Reference};

/// The `source` of task events derived from Claude Code's TodoWrite calls.
pub const TODO_WRITE_SOURCE: &str = "TodoWrite";
/// The `source` of task events derived from Claude Code's TaskCreate calls.
pub const TASK_CREATE_SOURCE: &str = "TaskCreate";
/// The `source` of task events derived from Claude Code's TaskUpdate calls.
pub const TASK_UPDATE_SOURCE: &str = "TaskUpdate";

/// The `source`s of task events derived from other agents' plan tools,
/// each of which sends the whole list every call as TodoWrite does: Codex
/// CLI's `update_plan`, Gemini CLI's `write_todos`, OpenCode's
/// `todowrite`, GitHub Copilot CLI's `update_todo`.
pub const PLAN_TOOL_SOURCES: [&str; 4] = ["update_plan", "write_todos", "todowrite", "update_todo"];

/// Whether a `pending → done` jump of a task event from `source` implies
/// the start it skipped: an agent's own task tools (TodoWrite, Claude
/// Code's TaskCreate and TaskUpdate, the other agents' plan tools of
/// [`PLAN_TOOL_SOURCES`]), whose call proves the work happened; not a
/// person's `memlog task set`.
pub fn implies_start(source: &str) -> bool {
    [TODO_WRITE_SOURCE, TASK_CREATE_SOURCE, TASK_UPDATE_SOURCE].contains(&source)
        || PLAN_TOOL_SOURCES.contains(&source)
}

/// The five statuses of a task.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Waiting on its blockers.
    Blocked,
    /// Finished.
    Done,
    /// Given up.
    Cancelled,
}

impl Status {
    /// Every status.
    pub const ALL: [Status; 5] = [
        Status::Pending,
        Status::InProgress,
        Status::Blocked,
        Status::Done,
        Status::Cancelled,
    ];

    /// The status as stored (`in_progress`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::InProgress => "in_progress",
            Status::Blocked => "blocked",
            Status::Done => "done",
            Status::Cancelled => "cancelled",
        }
    }

    /// Reads a status, accepting TodoWrite's `completed` for `done` and the
    /// American `canceled`.
    pub fn parse(name: &str) -> Option<Status> {
        match name {
            "completed" => Some(Status::Done),
            "canceled" => Some(Status::Cancelled),
            other => Status::ALL.into_iter().find(|s| s.as_str() == other),
        }
    }

    /// Done and cancelled tasks are closed: not matched, not listed as open.
    pub fn is_open(self) -> bool {
        !matches!(self, Status::Done | Status::Cancelled)
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a blocker refers to (docs/DESIGN.md §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockerKind {
    /// Another task.
    Task,
    /// Something to happen, in words.
    Condition,
    /// A URL, an issue, a JIRA key.
    Artifact,
}

/// How sure the resolver was.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    /// Confirmed (docs/DESIGN.md §5).
    High,
    /// Close, but not confirmed.
    Suggested,
    /// Nothing came close.
    None,
}

/// A task the resolver considered for a blocker that became a condition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// The task.
    pub entity_id: String,
    /// Its title.
    pub title: String,
    /// How close it came.
    pub score: f32,
}

/// One resolved blocker, as `task_blockers_set` stores it: the text as
/// written, and the entity it was resolved to when it was written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BlockerRef {
    /// What it refers to.
    pub kind: BlockerKind,
    /// The entity it was resolved to.
    pub entity_id: String,
    /// The blocker as written.
    pub raw_text: String,
    /// How sure the resolution was.
    pub confidence: Confidence,
    /// Tasks it came close to, for a condition.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<Candidate>,
}

/// `mode` of a `task_blockers_set` event: evidence-backed blockers replace
/// the task's blockers; others are only suggestions (docs/DESIGN.md §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockerMode {
    /// The blockers replace the task's.
    Replace,
    /// The blockers are suggestions only.
    Suggest,
    /// The blockers join the task's (an agent's `addBlockedBy`).
    Add,
}

/// Why a change was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    /// `pending → done`.
    #[error("a pending task cannot be done directly: start it first (in_progress)")]
    PendingToDone,
    /// A change that is not an edge of the state machine.
    #[error("{from} → {to} is not a transition of the task state machine")]
    NotAllowed {
        /// The status before.
        from: Status,
        /// The status asked for.
        to: Status,
    },
    /// `blocked` without a blocker.
    #[error("a blocked task needs at least one blocker (give --blocker)")]
    BlockedWithoutBlockers,
    /// `done` with blockers.
    #[error("a done task has no blockers: clear them before finishing it")]
    DoneWithBlockers,
    /// A status that is not one.
    #[error("unknown task status {0:?} (known: pending, in_progress, blocked, done, cancelled)")]
    UnknownStatus(String),
    /// A change written when the task was `from` that would reopen it,
    /// `now` done or cancelled (a change made in another clone before the
    /// two synced): nobody who saw it finished asked for that.
    #[error(
        "written when the task was {from}; it is {now} since (another clone's change, met at a \
         sync): reopen it with `memlog task set` if it must be"
    )]
    Stale {
        /// The status the change was written against.
        from: Status,
        /// The status the task has.
        now: Status,
    },
}

impl Rejection {
    /// A short stable name for the log (`task_transition_rejected.rule`).
    pub fn rule(&self) -> &'static str {
        match self {
            Rejection::PendingToDone => "pending_to_done",
            Rejection::NotAllowed { .. } => "not_allowed",
            Rejection::BlockedWithoutBlockers => "blocked_without_blockers",
            Rejection::DoneWithBlockers => "done_with_blockers",
            Rejection::UnknownStatus(_) => "unknown_status",
            Rejection::Stale { .. } => "stale",
        }
    }
}

/// Whether `from → to` is an edge of the state machine (blockers aside).
pub fn is_edge(from: Status, to: Status) -> bool {
    use Status::*;
    match (from, to) {
        (a, b) if a == b => true,
        (Pending, InProgress | Blocked | Cancelled) => true,
        (InProgress, Pending | Blocked | Done | Cancelled) => true,
        (Blocked, InProgress | Cancelled) => true,
        (Done | Cancelled, Pending | InProgress) => true,
        _ => false,
    }
}

/// A step the fold applied without an event of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Implied {
    /// The status before.
    pub from: Status,
    /// The status after.
    pub to: Status,
}

/// The folded state of one task: what the invariants are about.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskState {
    /// Its status.
    pub status: Status,
    /// Blockers set with `mode=replace` (non-empty iff the task may be
    /// blocked).
    #[serde(default)]
    pub blockers: Vec<BlockerRef>,
    /// Blockers set with `mode=suggest`, accumulated.
    #[serde(default)]
    pub suggestions: Vec<BlockerRef>,
    /// Its priority, if one was set (`low` … `critical`).
    #[serde(default)]
    pub priority: Option<String>,
}

impl TaskState {
    /// A new task. Tasks are created `pending` or `in_progress`; a creation
    /// in another status is a creation followed by a change to it.
    pub fn new() -> TaskState {
        TaskState {
            status: Status::Pending,
            blockers: Vec::new(),
            suggestions: Vec::new(),
            priority: None,
        }
    }

    /// Checks the invariants of docs/DESIGN.md §5.
    pub fn check(&self) -> Result<(), Rejection> {
        match self.status {
            Status::Blocked if self.blockers.is_empty() => Err(Rejection::BlockedWithoutBlockers),
            Status::Done if !self.blockers.is_empty() => Err(Rejection::DoneWithBlockers),
            _ => Ok(()),
        }
    }

    /// Changes the status, or refuses and leaves the state as it was.
    /// `from_todo_write` allows the implied `in_progress` step of a
    /// `pending → done` jump (module docs), and ends the blockers of a task
    /// it finishes; the implied step is returned.
    pub fn set_status(
        &mut self,
        to: Status,
        from_todo_write: bool,
    ) -> Result<Option<Implied>, Rejection> {
        let from = self.status;
        if from == to {
            return Ok(None);
        }
        let mut next = self.clone();
        let mut implied = None;
        if from == Status::Pending && to == Status::Done {
            if !from_todo_write {
                return Err(Rejection::PendingToDone);
            }
            implied = Some(Implied {
                from,
                to: Status::InProgress,
            });
            next.status = Status::InProgress;
        }
        if !is_edge(next.status, to) {
            return Err(Rejection::NotAllowed { from, to });
        }
        // Leaving `blocked` for work means its blockers were resolved; an
        // agent that finishes a task says the same of whatever blocked it.
        if (next.status == Status::Blocked && to == Status::InProgress)
            || (from_todo_write && to == Status::Done)
        {
            next.blockers.clear();
        }
        next.status = to;
        next.check()?;
        *self = next;
        Ok(implied)
    }

    /// Applies a `task_blockers_set` event.
    pub fn set_blockers(
        &mut self,
        mode: BlockerMode,
        blockers: Vec<BlockerRef>,
    ) -> Result<(), Rejection> {
        match mode {
            BlockerMode::Replace => {
                let mut next = self.clone();
                next.blockers = blockers;
                next.check()?;
                *self = next;
            }
            BlockerMode::Add => {
                let mut next = self.clone();
                for b in blockers {
                    if !next.blockers.iter().any(|k| k.entity_id == b.entity_id) {
                        next.blockers.push(b);
                    }
                }
                next.check()?;
                *self = next;
            }
            BlockerMode::Suggest => {
                for b in blockers {
                    if !self.suggestions.iter().any(|s| s.entity_id == b.entity_id) {
                        self.suggestions.push(b);
                    }
                }
            }
        }
        Ok(())
    }
}

impl Default for TaskState {
    fn default() -> Self {
        TaskState::new()
    }
}

/// The strong reference a blocker text makes, if any: a URL, a GitHub issue
/// (`owner/repo#N`) or a JIRA key — an artifact, whatever else the text
/// says (docs/DESIGN.md §5). File paths are not strong references.
pub fn artifact_reference(text: &str) -> Option<Reference> {
    refs::extract(text)
        .into_iter()
        .filter(|r| !matches!(r, Reference::File(_)))
        // a URL first: `https://github.com/o/r/issues/1` is one reference
        .min_by_key(|r| match r {
            Reference::Url(_) => 0,
            Reference::GithubIssue { .. } => 1,
            _ => 2,
        })
}

/// The entity key of a task: `task:` and the title's canonical key in the
/// project's namespace (FORMAT.md §6), e.g. `task:shop::fix login`.
pub fn task_key(title: &str, project: &str) -> String {
    format!("task:{}", crate::key::canonical_key(title, Some(project)))
}

/// The entity key of a condition (an unresolved blocker text):
/// `cond:` and the text's canonical key in the project's namespace.
pub fn condition_key(text: &str, project: &str) -> String {
    format!("cond:{}", crate::key::canonical_key(text, Some(project)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocker(id: &str) -> BlockerRef {
        BlockerRef {
            kind: BlockerKind::Artifact,
            entity_id: id.into(),
            raw_text: id.into(),
            confidence: Confidence::High,
            candidates: Vec::new(),
        }
    }

    #[test]
    fn every_agents_plan_tool_implies_the_start_a_person_does_not() {
        for source in ["TodoWrite", "TaskCreate", "TaskUpdate"]
            .into_iter()
            .chain(PLAN_TOOL_SOURCES)
        {
            assert!(implies_start(source), "{source}");
        }
        assert!(!implies_start("cli"));
        assert!(!implies_start("update_plans"));
    }

    #[test]
    fn pending_to_done_is_rejected_except_from_todo_write() {
        let mut t = TaskState::new();
        assert_eq!(
            t.set_status(Status::Done, false),
            Err(Rejection::PendingToDone)
        );
        assert_eq!(t.status, Status::Pending, "a refusal changes nothing");
        let implied = t.set_status(Status::Done, true).unwrap();
        assert_eq!(
            implied,
            Some(Implied {
                from: Status::Pending,
                to: Status::InProgress
            })
        );
        assert_eq!(t.status, Status::Done);
    }

    #[test]
    fn blocked_needs_blockers_and_done_has_none() {
        let mut t = TaskState::new();
        assert_eq!(
            t.set_status(Status::Blocked, false),
            Err(Rejection::BlockedWithoutBlockers)
        );
        t.set_blockers(BlockerMode::Replace, vec![blocker("art:jira:A-1")])
            .unwrap();
        t.set_status(Status::Blocked, false).unwrap();
        assert_eq!(
            t.set_blockers(BlockerMode::Replace, vec![]),
            Err(Rejection::BlockedWithoutBlockers)
        );
        assert_eq!(
            t.set_status(Status::Done, false),
            Err(Rejection::NotAllowed {
                from: Status::Blocked,
                to: Status::Done
            })
        );
        // resolving: back to work clears the blockers, then it can finish
        t.set_status(Status::InProgress, false).unwrap();
        assert!(t.blockers.is_empty());
        t.set_status(Status::Done, false).unwrap();
        t.check().unwrap();
        // suggestions never block
        t.set_blockers(BlockerMode::Suggest, vec![blocker("cond:p::x")])
            .unwrap();
        t.set_blockers(BlockerMode::Suggest, vec![blocker("cond:p::x")])
            .unwrap();
        assert_eq!(t.suggestions.len(), 1);
        t.check().unwrap();
    }

    #[test]
    fn in_progress_with_blockers_cannot_finish() {
        let mut t = TaskState::new();
        t.set_status(Status::InProgress, false).unwrap();
        t.set_blockers(BlockerMode::Replace, vec![blocker("art:jira:A-1")])
            .unwrap();
        assert_eq!(
            t.set_status(Status::Done, false),
            Err(Rejection::DoneWithBlockers)
        );
        // an agent finishing it says its blockers are over
        t.set_status(Status::Done, true).unwrap();
        assert!(t.blockers.is_empty());
    }

    #[test]
    fn added_blockers_join_the_tasks() {
        let mut t = TaskState::new();
        t.set_blockers(BlockerMode::Add, vec![blocker("task:p::a")])
            .unwrap();
        t.set_blockers(
            BlockerMode::Add,
            vec![blocker("task:p::b"), blocker("task:p::a")],
        )
        .unwrap();
        let ids: Vec<&str> = t.blockers.iter().map(|b| b.entity_id.as_str()).collect();
        assert_eq!(ids, ["task:p::a", "task:p::b"]);
        assert_eq!(t.status, Status::Pending, "blockers alone keep the status");
    }

    #[test]
    fn statuses_parse_todo_write_names() {
        assert_eq!(Status::parse("completed"), Some(Status::Done));
        assert_eq!(Status::parse("in_progress"), Some(Status::InProgress));
        assert_eq!(Status::parse("bogus"), None);
        for s in Status::ALL {
            assert_eq!(Status::parse(s.as_str()), Some(s));
        }
    }

    #[test]
    fn strong_references_are_artifacts() {
        assert_eq!(
            artifact_reference("waiting on https://example.com/x and ACME-1"),
            Some(Reference::Url("https://example.com/x".into()))
        );
        assert_eq!(
            artifact_reference("needs ACME-412 merged").map(|r| r.key()),
            Some("art:jira:ACME-412".into())
        );
        assert_eq!(
            artifact_reference("fix in acme/shop#7").map(|r| r.key()),
            Some("art:gh_issue:acme/shop:7".into())
        );
        assert_eq!(artifact_reference("the API key is configured"), None);
        assert_eq!(artifact_reference("see src/db.rs"), None);
        assert_eq!(task_key("Fix: login!", "shop"), "task:shop::fix login");
        assert_eq!(
            condition_key("API key ready", "shop"),
            "cond:shop::api key ready"
        );
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    enum Op {
        Status(Status, bool),
        Blockers(BlockerMode, usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0..5usize, any::<bool>()).prop_map(|(s, tw)| Op::Status(Status::ALL[s], tw)),
            (any::<bool>(), 0..3usize).prop_map(|(replace, n)| Op::Blockers(
                if replace {
                    BlockerMode::Replace
                } else {
                    BlockerMode::Suggest
                },
                n
            )),
        ]
    }

    proptest! {
        /// Whatever events arrive, in whatever order, the folded state
        /// satisfies the invariants; a refused event changes nothing.
        #[test]
        fn folding_any_events_keeps_the_invariants(ops in proptest::collection::vec(op(), 0..40)) {
            let mut t = TaskState::new();
            for op in ops {
                let before = t.clone();
                let result = match op {
                    Op::Status(s, tw) => t.set_status(s, tw).map(|_| ()),
                    Op::Blockers(mode, n) => t.set_blockers(
                        mode,
                        (0..n)
                            .map(|i| BlockerRef {
                                kind: BlockerKind::Condition,
                                entity_id: format!("cond:p::c{i}"),
                                raw_text: format!("c{i}"),
                                confidence: Confidence::None,
                                candidates: Vec::new(),
                            })
                            .collect(),
                    ),
                };
                if result.is_err() {
                    prop_assert_eq!(&t, &before);
                }
                prop_assert!(t.check().is_ok(), "{:?}", t);
            }
        }
    }
}
