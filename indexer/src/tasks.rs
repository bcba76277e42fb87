//! Task entities (seed 002): the fold of every task event into tasks, the
//! conditions and artifacts that block them, their aliases and the edges
//! between them, written into the `entities`, `entity_aliases` and `edges`
//! tables.
//!
//! The fold is a pure function of the task events in log order (`ts`,
//! `session`, `seq`, `id`), so an incremental update and a rebuild give the
//! same rows: whenever a batch brings task events (or hides some), the task
//! rows are derived again from all of them ([`refold`]). Task events are few
//! next to the rest of the log, which keeps this cheap.
//!
//! Which task an event is about: its `task` (an entity id, written by the
//! CLI), else its canonical `key` (`task:` + key, FORMAT.md §6) or an alias
//! of one; a `task_created` whose key is unknown is matched against the
//! open tasks of the project ([`crate::matcher`]): confirmed, it becomes an
//! alias of that task; suggested, a new task remembering the suggestions;
//! otherwise a new task. Tasks a session already touched are not candidates
//! for that session's new titles: within one session, the agent's own list
//! tells its todos apart.
//!
//! State changes go through [`memlog_format::task`]'s state machine; a
//! change it refuses leaves the task as it was and is kept in the task's
//! history as rejected (a `task_transition_rejected` event, written by the
//! CLI when it refuses a change, is shown the same way).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use memlog_format::Kind;
use memlog_format::task::{
    BlockerKind, BlockerMode, BlockerRef, Confidence, Rejection, Status, TODO_WRITE_SOURCE,
    TaskState, artifact_reference, condition_key, task_key,
};
use rusqlite::{OptionalExtension, Transaction, params};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::matcher::{self, Match};
use crate::projection::Projections;
use crate::{Error, Result};

/// The kinds folded here.
pub const TASK_KINDS: [Kind; 5] = [
    Kind::TaskCreated,
    Kind::TaskStatusChanged,
    Kind::TaskPriorityChanged,
    Kind::TaskBlockersSet,
    Kind::TaskTransitionRejected,
];

/// One task event, as the fold reads it.
#[derive(Clone, Debug)]
pub struct TaskEvent {
    pub id: String,
    pub session: String,
    pub ts: String,
    pub kind: Kind,
    pub project: String,
    pub body: Map<String, Value>,
}

/// One step of a task's history.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HistoryEntry {
    pub event: String,
    pub ts: String,
    pub session: String,
    pub kind: String,
    /// The status after the event.
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<Status>,
    /// A step the fold added (TodoWrite's implied start).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub implied: bool,
    /// Why the event changed nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejected: Option<String>,
    /// How a new title found this task (`alias`, with its score).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched: Option<f32>,
}

/// A task, folded.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Task {
    pub entity_id: String,
    pub title: String,
    pub project: String,
    #[serde(flatten)]
    pub state: TaskState,
    /// Other keys that name this task.
    pub aliases: Vec<String>,
    pub sessions: Vec<String>,
    pub created_at: String,
    pub updated_at: String,
    /// Tasks its title was close to, but not close enough, when created.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub match_suggestions: Vec<matcher::Scored>,
    pub history: Vec<HistoryEntry>,
    /// The event that set the current blockers.
    #[serde(skip)]
    blockers_event: Option<(String, String)>,
    /// The first event suggesting each suggested blocker.
    #[serde(skip)]
    suggested_by: BTreeMap<String, (String, String)>,
}

impl Task {
    pub fn is_open(&self) -> bool {
        self.state.status.is_open()
    }
}

/// A condition: a blocker text that named no artifact and no task for sure.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Condition {
    pub entity_id: String,
    pub text: String,
    pub project: String,
    pub candidates: Vec<memlog_format::task::Candidate>,
    /// The task it turned out to be, once one matches it for sure.
    pub resolved_to: Option<String>,
    pub created_at: String,
    #[serde(skip)]
    event: String,
}

/// An artifact a blocker named (get-or-create: it may exist already).
#[derive(Clone, Debug, PartialEq)]
pub struct Artifact {
    pub entity_id: String,
    pub title: String,
    pub ts: String,
}

/// An edge with its evidence event.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Edge {
    pub src: String,
    pub rel: String,
    pub dst: String,
    pub evidence: String,
    pub ts: String,
}

/// Everything the task events say.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskGraph {
    pub tasks: BTreeMap<String, Task>,
    /// Every key naming a task (its own included) → the task.
    pub aliases: BTreeMap<String, String>,
    pub conditions: BTreeMap<String, Condition>,
    pub artifacts: BTreeMap<String, Artifact>,
    /// Words of task titles (normalised) → the tasks whose title has them:
    /// where title matching looks for candidates.
    words: BTreeMap<String, Vec<String>>,
}

/// Folds task events given in log order.
pub fn fold(events: &[TaskEvent]) -> TaskGraph {
    let mut g = TaskGraph::default();
    for e in events {
        g.apply(e);
    }
    g.resolve_conditions();
    g
}

/// The distinct words of a title, normalised as canonical keys are and cut
/// to their first four characters, so that `login` and `logins`, `test`
/// and `tests` count as shared.
fn words(title: &str) -> Vec<String> {
    let mut out: Vec<String> = memlog_format::key::normalize(title)
        .split(' ')
        .filter(|w| !w.is_empty())
        .map(|w| w.chars().take(4).collect())
        .collect();
    out.sort();
    out.dedup();
    out
}

fn text<'a>(body: &'a Map<String, Value>, field: &str) -> Option<&'a str> {
    body.get(field)
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
}

impl TaskGraph {
    /// The entity key an event names, if any.
    fn named_key(e: &TaskEvent) -> Option<String> {
        if let Some(key) = text(&e.body, "key") {
            return Some(format!("task:{key}"));
        }
        text(&e.body, "title").map(|t| task_key(t, &e.project))
    }

    fn apply(&mut self, e: &TaskEvent) {
        let explicit = text(&e.body, "task").filter(|id| self.tasks.contains_key(*id));
        let named = Self::named_key(e);
        let known = explicit
            .map(str::to_string)
            .or_else(|| named.as_ref().and_then(|k| self.aliases.get(k).cloned()));
        // Creations and status changes bring their task into being (a
        // TodoWrite change implies the todo exists, even if its creation
        // was forgotten); blockers or a refusal for an unknown task say
        // nothing we can keep.
        let may_create = matches!(
            e.kind,
            Kind::TaskCreated | Kind::TaskStatusChanged | Kind::TaskPriorityChanged
        );
        let id = match (known, named) {
            (Some(id), _) => id,
            (None, Some(key)) if may_create => self.new_or_matched(e, key),
            _ => return,
        };
        let Some(task) = self.tasks.get_mut(&id) else {
            return;
        };
        if !task.sessions.contains(&e.session) {
            task.sessions.push(e.session.clone());
        }
        task.updated_at = e.ts.clone();
        let from_todo_write = text(&e.body, "source") == Some(TODO_WRITE_SOURCE);
        let before = task.state.status;
        let mut entry = HistoryEntry {
            event: e.id.clone(),
            ts: e.ts.clone(),
            session: e.session.clone(),
            kind: e.kind.as_str().to_string(),
            status: before,
            from: None,
            // a step the hooks recorded as implied (hooks::todo) says so
            implied: e.body.get("implied") == Some(&Value::Bool(true)),
            rejected: None,
            matched: None,
        };
        let mut outcome: std::result::Result<(), Rejection> = Ok(());
        let mut implied = None;
        let mut blockers_to_register = Vec::new();
        match e.kind {
            Kind::TaskCreated | Kind::TaskStatusChanged => {
                if let Some(p) = text(&e.body, "priority") {
                    task.state.priority = Some(p.to_string());
                }
                let target = if e.kind == Kind::TaskStatusChanged {
                    text(&e.body, "to").or_else(|| text(&e.body, "status"))
                } else {
                    text(&e.body, "status")
                };
                if let Some(name) = target {
                    outcome = match Status::parse(name) {
                        None => Err(Rejection::UnknownStatus(name.to_string())),
                        Some(to) => task
                            .state
                            .set_status(to, from_todo_write)
                            .map(|step| implied = step),
                    };
                }
            }
            Kind::TaskPriorityChanged => {
                if let Some(p) = text(&e.body, "priority").or_else(|| text(&e.body, "to")) {
                    task.state.priority = Some(p.to_string());
                }
            }
            Kind::TaskBlockersSet => {
                let mode = match text(&e.body, "mode") {
                    Some("replace") => BlockerMode::Replace,
                    _ => BlockerMode::Suggest,
                };
                let refs = blocker_refs(e);
                blockers_to_register = refs.clone();
                outcome = task.state.set_blockers(mode, refs.clone());
                if outcome.is_ok() {
                    match mode {
                        BlockerMode::Replace => {
                            task.blockers_event = Some((e.id.clone(), e.ts.clone()))
                        }
                        BlockerMode::Suggest => {
                            for r in &refs {
                                task.suggested_by
                                    .entry(r.entity_id.clone())
                                    .or_insert_with(|| (e.id.clone(), e.ts.clone()));
                            }
                        }
                    }
                }
            }
            Kind::TaskTransitionRejected => {
                let reason = text(&e.body, "reason")
                    .or_else(|| text(&e.body, "rule"))
                    .unwrap_or("rejected");
                entry.rejected = Some(reason.to_string());
            }
            _ => {}
        }
        if let Err(why) = outcome {
            entry.rejected = Some(why.to_string());
        }
        if let Some(step) = implied {
            task.history.push(HistoryEntry {
                status: step.to,
                from: Some(step.from),
                implied: true,
                ..entry.clone()
            });
        }
        let after = task.state.status;
        entry.from = (after != before).then_some(if implied.is_some() {
            Status::InProgress
        } else {
            before
        });
        entry.status = after;
        task.history.push(entry);
        let project = task.project.clone();
        if blockers_to_register.is_empty() {
            return;
        }
        for b in blockers_to_register {
            self.register_blocker(&b, &project, e);
        }
    }

    /// A task for a `key` nobody knows: an alias of an open task the title
    /// matches for sure, else a new task.
    fn new_or_matched(&mut self, e: &TaskEvent, key: String) -> String {
        let title = text(&e.body, "title")
            .map(str::to_string)
            .unwrap_or_else(|| key.trim_start_matches("task:").to_string());
        let mut suggestions = Vec::new();
        if e.kind == Kind::TaskCreated {
            let candidates: Vec<matcher::Candidate<'_>> = self
                .sharing_words(&title)
                .into_iter()
                .filter_map(|id| self.tasks.get(id))
                .filter(|t| {
                    t.is_open() && t.project == e.project && !t.sessions.contains(&e.session)
                })
                .map(|t| matcher::Candidate {
                    entity_id: &t.entity_id,
                    title: &t.title,
                })
                .collect();
            match matcher::match_title(&title, &candidates, None) {
                Match::High { best } => {
                    let id = best.entity_id.clone();
                    self.aliases.insert(key.clone(), id.clone());
                    if let Some(t) = self.tasks.get_mut(&id) {
                        t.aliases.push(key);
                        t.history.push(HistoryEntry {
                            event: e.id.clone(),
                            ts: e.ts.clone(),
                            session: e.session.clone(),
                            kind: "alias".into(),
                            status: t.state.status,
                            from: None,
                            implied: false,
                            rejected: None,
                            matched: Some(best.score),
                        });
                    }
                    return id;
                }
                Match::Suggested { candidates } => suggestions = candidates,
                Match::None { .. } => {}
            }
        }
        self.aliases.insert(key.clone(), key.clone());
        for word in words(&title) {
            self.words.entry(word).or_default().push(key.clone());
        }
        self.tasks.insert(
            key.clone(),
            Task {
                entity_id: key.clone(),
                title,
                project: e.project.clone(),
                state: TaskState::new(),
                aliases: Vec::new(),
                sessions: Vec::new(),
                created_at: e.ts.clone(),
                updated_at: e.ts.clone(),
                match_suggestions: suggestions,
                history: Vec::new(),
                blockers_event: None,
                suggested_by: BTreeMap::new(),
            },
        );
        key
    }

    fn register_blocker(&mut self, b: &BlockerRef, project: &str, e: &TaskEvent) {
        match b.kind {
            BlockerKind::Artifact => {
                self.artifacts
                    .entry(b.entity_id.clone())
                    .or_insert_with(|| Artifact {
                        entity_id: b.entity_id.clone(),
                        title: artifact_reference(&b.raw_text)
                            .map(|r| r.title())
                            .unwrap_or_else(|| b.raw_text.clone()),
                        ts: e.ts.clone(),
                    });
            }
            BlockerKind::Condition => {
                self.conditions
                    .entry(b.entity_id.clone())
                    .or_insert_with(|| Condition {
                        entity_id: b.entity_id.clone(),
                        text: b.raw_text.clone(),
                        project: project.to_string(),
                        candidates: b.candidates.clone(),
                        resolved_to: None,
                        created_at: e.ts.clone(),
                        event: e.id.clone(),
                    });
            }
            BlockerKind::Task => {}
        }
    }

    /// A condition resolves to a task whose title matches its text for sure
    /// (seed 000 §4.6: "a condition can later be resolved to a real task").
    fn resolve_conditions(&mut self) {
        let mut resolved = Vec::new();
        for c in self.conditions.values() {
            let exact = self.aliases.get(&task_key(&c.text, &c.project)).cloned();
            let to = exact.or_else(|| {
                let candidates: Vec<matcher::Candidate<'_>> = self
                    .sharing_words(&c.text)
                    .into_iter()
                    .filter_map(|id| self.tasks.get(id))
                    .filter(|t| t.project == c.project)
                    .map(|t| matcher::Candidate {
                        entity_id: &t.entity_id,
                        title: &t.title,
                    })
                    .collect();
                match matcher::match_title(&c.text, &candidates, None) {
                    Match::High { best } => Some(best.entity_id),
                    _ => None,
                }
            });
            resolved.push((c.entity_id.clone(), to));
        }
        for (id, to) in resolved {
            if let Some(c) = self.conditions.get_mut(&id) {
                c.resolved_to = to;
            }
        }
    }

    /// The tasks whose title shares at least half of the words of `title`
    /// (by their first four characters; in id order). Matching scores only
    /// these: a title close enough to be suggested (similarity ≥ 0.75)
    /// shares that many in practice, and scoring every task for every new
    /// title would make the fold quadratic in the number of tasks (2,400
    /// tasks took minutes).
    fn sharing_words(&self, title: &str) -> Vec<&String> {
        let wanted = words(title);
        let mut shared: HashMap<&String, usize> = HashMap::new();
        for w in &wanted {
            for id in self.words.get(w).into_iter().flatten() {
                *shared.entry(id).or_default() += 1;
            }
        }
        let needed = wanted.len().div_ceil(2).max(1);
        let mut ids: Vec<&String> = shared
            .into_iter()
            .filter(|(_, n)| *n >= needed)
            .map(|(id, _)| id)
            .collect();
        ids.sort();
        ids
    }

    /// Every edge the task events make, sorted.
    pub fn edges(&self) -> Vec<Edge> {
        let mut out = Vec::new();
        for t in self.tasks.values() {
            if let Some((event, ts)) = &t.blockers_event {
                for b in &t.state.blockers {
                    out.push(Edge {
                        src: t.entity_id.clone(),
                        rel: "blocked_by".into(),
                        dst: b.entity_id.clone(),
                        evidence: event.clone(),
                        ts: ts.clone(),
                    });
                }
            }
            for b in &t.state.suggestions {
                if let Some((event, ts)) = t.suggested_by.get(&b.entity_id) {
                    out.push(Edge {
                        src: t.entity_id.clone(),
                        rel: "blocked_by_suggested".into(),
                        dst: b.entity_id.clone(),
                        evidence: event.clone(),
                        ts: ts.clone(),
                    });
                }
            }
            let mut first_in_session: BTreeMap<&str, &HistoryEntry> = BTreeMap::new();
            for h in &t.history {
                first_in_session.entry(h.session.as_str()).or_insert(h);
            }
            for (session, h) in first_in_session {
                out.push(Edge {
                    src: format!("session:{session}"),
                    rel: "mentions".into(),
                    dst: t.entity_id.clone(),
                    evidence: h.event.clone(),
                    ts: h.ts.clone(),
                });
            }
        }
        for c in self.conditions.values() {
            if let Some(task) = &c.resolved_to {
                out.push(Edge {
                    src: c.entity_id.clone(),
                    rel: "resolves_to".into(),
                    dst: task.clone(),
                    evidence: c.event.clone(),
                    ts: c.created_at.clone(),
                });
            }
        }
        out.sort();
        out.dedup();
        out
    }
}

/// The blockers of a `task_blockers_set` event: resolved references as the
/// CLI writes them, or bare texts (from other writers), which are resolved
/// here without the index: a strong reference is an artifact, anything
/// else a condition.
fn blocker_refs(e: &TaskEvent) -> Vec<BlockerRef> {
    let Some(Value::Array(items)) = e.body.get("blockers") else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| match item {
            Value::String(raw) => Some(offline_ref(raw, &e.project)),
            other => serde_json::from_value::<BlockerRef>(other.clone()).ok(),
        })
        .collect()
}

/// A blocker text resolved without any index.
pub fn offline_ref(raw: &str, project: &str) -> BlockerRef {
    match artifact_reference(raw) {
        Some(r) => BlockerRef {
            kind: BlockerKind::Artifact,
            entity_id: r.key(),
            raw_text: raw.to_string(),
            confidence: Confidence::High,
            candidates: Vec::new(),
        },
        None => BlockerRef {
            kind: BlockerKind::Condition,
            entity_id: condition_key(raw, project),
            raw_text: raw.to_string(),
            confidence: Confidence::None,
            candidates: Vec::new(),
        },
    }
}

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
            id,
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
                // seed 002 §5.1's stage: a task someone works on is working
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
        edge.execute(params![e.src, e.rel, e.dst, e.evidence, e.ts])
            .map_err(sql_err)?;
    }
    Ok(())
}

/// A task as listings show it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TaskSummary {
    pub entity_id: String,
    pub title: String,
    pub status: String,
    pub priority: Option<String>,
    pub blockers: usize,
    /// The blockers as written.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub blocked_by: Vec<String>,
    pub project: String,
    /// When it last changed.
    pub updated: String,
    /// The session that last changed it.
    pub session: String,
    /// The last event about it.
    pub last_event: String,
}

impl TaskSummary {
    /// The task's key as task events name it: the entity id without
    /// `task:`.
    pub fn key(&self) -> &str {
        self.entity_id
            .strip_prefix("task:")
            .unwrap_or(&self.entity_id)
    }

    pub fn is_open(&self) -> bool {
        Status::parse(&self.status).is_none_or(Status::is_open)
    }
}

/// Every task, most recently changed first.
pub fn tasks(p: &Projections) -> Result<Vec<TaskSummary>> {
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
        let field = |k: &str| current.get(k).and_then(Value::as_str).map(str::to_string);
        let blocked_by: Vec<String> = current
            .get("blockers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|b| b.get("raw_text").and_then(Value::as_str))
            .map(str::to_string)
            .collect();
        out.push(TaskSummary {
            entity_id,
            title,
            status: field("status").unwrap_or_else(|| "pending".into()),
            priority: field("priority"),
            blockers: blocked_by.len(),
            blocked_by,
            project: field("project").unwrap_or_default(),
            last_event: current
                .get("history")
                .and_then(Value::as_array)
                .and_then(|h| h.last())
                .and_then(|h| h.get("event"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            // the session of the last change (`sessions` lists each once,
            // in first-seen order)
            session: current
                .get("history")
                .and_then(Value::as_array)
                .and_then(|h| h.last())
                .and_then(|h| h.get("session"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            updated,
        });
    }
    Ok(out)
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
    Ok(None)
}

/// The open tasks of a project, for matching a title against them.
pub fn open_tasks(p: &Projections, project: &str) -> Result<Vec<(String, String)>> {
    Ok(tasks(p)?
        .into_iter()
        .filter(|t| t.is_open() && t.project == project)
        .map(|t| (t.entity_id, t.title))
        .collect())
}

/// Resolves blocker texts for a new `task_blockers_set` event (seed 002
/// §4.2): a strong reference is an artifact; a title matching an open task
/// for sure is that task; anything else a condition, with the tasks it
/// came close to as candidates. Never creates a task.
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ev(n: usize, session: &str, kind: Kind, body: Value) -> TaskEvent {
        TaskEvent {
            id: format!("e{n:03}"),
            session: session.into(),
            ts: format!("2026-01-01T00:00:{:02}.000Z", n % 60),
            kind,
            project: "p".into(),
            body: body.as_object().cloned().unwrap_or_default(),
        }
    }

    #[test]
    fn the_same_task_in_several_sessions_is_one_entity() {
        let g = fold(&[
            ev(
                1,
                "s1",
                Kind::TaskCreated,
                json!({"key": "p::fix the login loop", "title": "Fix the login loop", "status": "pending", "source": "TodoWrite"}),
            ),
            ev(
                2,
                "s2",
                Kind::TaskCreated,
                json!({"key": "p::fix the login loop", "title": "Fix the login loop!", "status": "in_progress", "source": "TodoWrite"}),
            ),
            // reworded in a third session: confirmed by the matcher
            ev(
                3,
                "s3",
                Kind::TaskCreated,
                json!({"key": "p::fix the login loops", "title": "Fix the login loops", "status": "in_progress", "source": "TodoWrite"}),
            ),
            ev(
                4,
                "s3",
                Kind::TaskStatusChanged,
                json!({"key": "p::fix the login loops", "to": "done", "source": "TodoWrite"}),
            ),
        ]);
        assert_eq!(g.tasks.len(), 1, "{:?}", g.tasks.keys());
        let t = &g.tasks["task:p::fix the login loop"];
        assert_eq!(t.state.status, Status::Done);
        assert_eq!(t.sessions, ["s1", "s2", "s3"]);
        assert_eq!(t.aliases, ["task:p::fix the login loops"]);
        assert_eq!(
            g.aliases["task:p::fix the login loops"],
            "task:p::fix the login loop"
        );
    }

    #[test]
    fn refused_changes_stay_in_the_history_and_change_nothing() {
        let g = fold(&[
            ev(
                1,
                "s1",
                Kind::TaskCreated,
                json!({"key": "p::ship", "title": "Ship"}),
            ),
            ev(
                2,
                "s1",
                Kind::TaskStatusChanged,
                json!({"key": "p::ship", "to": "done", "source": "cli"}),
            ),
            ev(
                3,
                "s1",
                Kind::TaskStatusChanged,
                json!({"key": "p::ship", "to": "blocked"}),
            ),
            ev(
                4,
                "s1",
                Kind::TaskTransitionRejected,
                json!({"key": "p::ship", "to": "done", "reason": "pending → done"}),
            ),
        ]);
        let t = &g.tasks["task:p::ship"];
        assert_eq!(t.state.status, Status::Pending);
        let rejected: Vec<_> = t
            .history
            .iter()
            .filter_map(|h| h.rejected.as_deref())
            .collect();
        assert_eq!(rejected.len(), 3, "{rejected:?}");
        assert!(rejected[0].contains("start it first"));
        assert!(rejected[1].contains("at least one blocker"));
    }

    #[test]
    fn todo_write_completions_of_pending_tasks_imply_the_start() {
        let g = fold(&[ev(
            1,
            "s1",
            Kind::TaskCreated,
            json!({"key": "p::a", "title": "A", "status": "done", "source": "TodoWrite"}),
        )]);
        let t = &g.tasks["task:p::a"];
        assert_eq!(t.state.status, Status::Done);
        let steps: Vec<_> = t
            .history
            .iter()
            .map(|h| (h.from, h.status, h.implied))
            .collect();
        assert_eq!(
            steps,
            [
                (Some(Status::Pending), Status::InProgress, true),
                (Some(Status::InProgress), Status::Done, false)
            ]
        );
    }

    #[test]
    fn blockers_replace_or_suggest_and_conditions_resolve_to_tasks() {
        let url = offline_ref("https://ci.example.com/run/7", "p");
        let cond = offline_ref("staging database migrated", "p");
        assert_eq!(url.kind, BlockerKind::Artifact);
        assert_eq!(cond.entity_id, "cond:p::staging database migrated");
        let g = fold(&[
            ev(
                1,
                "s1",
                Kind::TaskCreated,
                json!({"key": "p::deploy", "title": "Deploy", "status": "in_progress"}),
            ),
            ev(
                2,
                "s1",
                Kind::TaskBlockersSet,
                json!({"key": "p::deploy", "mode": "replace", "blockers": [url, cond]}),
            ),
            ev(
                3,
                "s1",
                Kind::TaskStatusChanged,
                json!({"key": "p::deploy", "to": "blocked"}),
            ),
            ev(
                4,
                "s1",
                Kind::TaskBlockersSet,
                json!({"key": "p::deploy", "mode": "suggest", "blockers": ["ACME-9"]}),
            ),
            ev(
                5,
                "s2",
                Kind::TaskCreated,
                json!({"key": "p::migrate staging database", "title": "Staging database migrated", "status": "pending"}),
            ),
        ]);
        let edges = g.edges();
        let rel = |r: &str| -> Vec<(String, String)> {
            edges
                .iter()
                .filter(|e| e.rel == r)
                .map(|e| (e.src.clone(), e.dst.clone()))
                .collect()
        };
        assert_eq!(rel("blocked_by").len(), 2);
        assert_eq!(
            rel("blocked_by_suggested"),
            [("task:p::deploy".to_string(), "art:jira:ACME-9".to_string())]
        );
        assert_eq!(
            rel("resolves_to"),
            [(
                "cond:p::staging database migrated".to_string(),
                "task:p::migrate staging database".to_string()
            )]
        );
        assert_eq!(g.artifacts.len(), 2, "the URL and the JIRA key");
        assert_eq!(g.tasks["task:p::deploy"].state.status, Status::Blocked);
    }

    #[test]
    fn similar_titles_from_the_same_session_stay_apart() {
        let g = fold(&[
            ev(
                1,
                "s1",
                Kind::TaskCreated,
                json!({"key": "p::add test", "title": "Add test", "status": "pending"}),
            ),
            ev(
                2,
                "s1",
                Kind::TaskCreated,
                json!({"key": "p::add tests", "title": "Add tests", "status": "pending"}),
            ),
        ]);
        assert_eq!(g.tasks.len(), 2);
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        fn event() -> impl Strategy<Value = (usize, usize, usize, usize)> {
            (0..5usize, 0..4usize, 0..6usize, 0..3usize)
        }

        proptest! {
            /// Whatever task events the log holds, every folded task keeps
            /// the invariants of seed 002.
            #[test]
            fn no_fold_breaks_an_invariant(events in proptest::collection::vec(event(), 0..60)) {
                let titles = ["Fix login", "Fix logins", "Write docs", "Deploy"];
                let statuses = ["pending", "in_progress", "blocked", "done", "cancelled", "completed"];
                let kinds = [Kind::TaskCreated, Kind::TaskStatusChanged, Kind::TaskBlockersSet, Kind::TaskBlockersSet, Kind::TaskTransitionRejected];
                let rows: Vec<TaskEvent> = events
                    .iter()
                    .enumerate()
                    .map(|(n, &(k, t, s, session))| {
                        let title = titles[t];
                        let body = match kinds[k] {
                            Kind::TaskBlockersSet => json!({
                                "title": title,
                                "mode": if s % 2 == 0 { "replace" } else { "suggest" },
                                "blockers": (0..s % 3).map(|i| format!("blocker {i}")).collect::<Vec<_>>(),
                            }),
                            _ => json!({"title": title, "status": statuses[s], "to": statuses[s],
                                        "source": if session == 0 { "TodoWrite" } else { "cli" }}),
                        };
                        ev(n, &format!("s{session}"), kinds[k].clone(), body)
                    })
                    .collect();
                let g = fold(&rows);
                for t in g.tasks.values() {
                    prop_assert!(t.state.check().is_ok(), "{:?}", t);
                }
                for (alias, id) in &g.aliases {
                    prop_assert!(g.tasks.contains_key(id), "{alias} -> {id}");
                }
            }
        }
    }
}
