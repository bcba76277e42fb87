//! The fold: a pure function from task events in log order to tasks,
//! conditions, artifacts, aliases and edges (no SQL).

use std::collections::{BTreeMap, HashMap};

use memlog_format::EventId;
use memlog_format::Kind;
use memlog_format::task::{
    BlockerKind, BlockerMode, BlockerRef, Confidence, Rejection, Status, TaskState,
    artifact_reference, condition_key, implies_start, task_key,
};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::matcher::{self, Match};

/// One task event, as the fold reads it.
#[derive(Clone, Debug)]
pub struct TaskEvent {
    /// The event id.
    pub id: EventId,
    /// Its session.
    pub session: String,
    /// Its time.
    pub ts: String,
    /// Its kind (one of the task kinds).
    pub kind: Kind,
    /// Its project.
    pub project: String,
    /// Its body.
    pub body: Map<String, Value>,
}

impl From<&memlog_format::Event> for TaskEvent {
    fn from(e: &memlog_format::Event) -> TaskEvent {
        TaskEvent {
            id: e.id.clone(),
            session: e.session.clone(),
            ts: e.ts.clone(),
            kind: e.kind.clone(),
            project: e.project.clone(),
            body: e.body.clone(),
        }
    }
}

/// One step of a task's history.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HistoryEntry {
    /// The event.
    pub event: EventId,
    /// Its time.
    pub ts: String,
    /// Its session.
    pub session: String,
    /// Its kind.
    pub kind: String,
    /// The status after the event.
    pub status: Status,
    /// The status before, when the event changed it.
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
    /// Its entity id (`task:` and its key).
    pub entity_id: String,
    /// Its title.
    pub title: String,
    /// Its project.
    pub project: String,
    /// Status, blockers, suggestions, priority.
    #[serde(flatten)]
    pub state: TaskState,
    /// Other keys that name this task.
    pub aliases: Vec<String>,
    /// Sessions that touched it.
    pub sessions: Vec<String>,
    /// When it was created.
    pub created_at: String,
    /// When it last changed.
    pub updated_at: String,
    /// Tasks its title was close to, but not close enough, when created.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub match_suggestions: Vec<matcher::Scored>,
    /// Its events, in order.
    pub history: Vec<HistoryEntry>,
    /// The event that set the current blockers.
    #[serde(skip)]
    blockers_event: Option<(EventId, String)>,
    /// The first event suggesting each suggested blocker.
    #[serde(skip)]
    suggested_by: BTreeMap<String, (EventId, String)>,
}

impl Task {
    /// Whether it is pending, in progress or blocked.
    pub fn is_open(&self) -> bool {
        self.state.status.is_open()
    }
}

/// A condition: a blocker text that named no artifact and no task for sure.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Condition {
    /// Its entity id (`cond:` and its key).
    pub entity_id: String,
    /// The blocker as written.
    pub text: String,
    /// Its project.
    pub project: String,
    /// Tasks it came close to.
    pub candidates: Vec<memlog_format::task::Candidate>,
    /// The task it turned out to be, once one matches it for sure.
    pub resolved_to: Option<String>,
    /// When it was first named.
    pub created_at: String,
    #[serde(skip)]
    event: EventId,
}

/// An artifact a blocker named (get-or-create: it may exist already).
#[derive(Clone, Debug, PartialEq)]
pub struct Artifact {
    /// Its entity id (`art:…`).
    pub entity_id: String,
    /// The reference as written.
    pub title: String,
    /// When it was first named.
    pub ts: String,
}

/// An edge with its evidence event.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Edge {
    /// The entity it starts from.
    pub src: String,
    /// The relation.
    pub rel: String,
    /// The entity it points to.
    pub dst: String,
    /// The event it comes from.
    pub evidence: EventId,
    /// That event's time.
    pub ts: String,
}

/// Everything the task events say.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskGraph {
    /// Tasks by entity id.
    pub tasks: BTreeMap<String, Task>,
    /// Every key naming a task (its own included) → the task.
    pub aliases: BTreeMap<String, String>,
    /// Conditions by entity id.
    pub conditions: BTreeMap<String, Condition>,
    /// Artifacts by entity id.
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

/// Whether another session's creation of an existing task moves it on: a
/// pending task started or ended, a task in progress ended or blocked.
/// Never back to pending, never out of `blocked` (only its blockers' end
/// does that), never a reopening of a done or cancelled task.
fn advances(from: Status, to: Status) -> bool {
    match from {
        Status::Pending => to != Status::Pending,
        Status::InProgress => !matches!(to, Status::Pending | Status::InProgress),
        Status::Blocked | Status::Done | Status::Cancelled => false,
    }
}

/// Whether a change to `to`, written when the task was `written_at`, would
/// reopen a task that is `now` done or cancelled, which its writer did not
/// see (two clones changed the task before they synced).
fn reopens_unseen(written_at: Option<Status>, now: Status, to: Status) -> bool {
    let finished = |s: Status| matches!(s, Status::Done | Status::Cancelled);
    written_at.is_some_and(|w| w != now) && finished(now) && !finished(to)
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
        let refs = if e.kind == Kind::TaskBlockersSet {
            let mut refs = self.blocker_refs(e);
            // An agent adding blockers may name a task it already finished,
            // which blocks nothing.
            if text(&e.body, "mode") == Some("add") {
                refs.retain(|r| {
                    r.kind != BlockerKind::Task
                        || self
                            .tasks
                            .get(&r.entity_id)
                            .is_none_or(|t| t.state.status.is_open())
                });
            }
            refs
        } else {
            Vec::new()
        };
        let Some(task) = self.tasks.get_mut(&id) else {
            return;
        };
        // Another session creating a task that exists (a teammate's own
        // `task add` merged by a sync, a later session's todo of the same
        // title) did not see it: its status is news only when it moves the
        // task on. Within one session a repeated creation is the agent's
        // list again (a lost `oldTodos`) and updates the task.
        let joins = e.kind == Kind::TaskCreated
            && !task.sessions.is_empty()
            && !task.sessions.contains(&e.session);
        if !task.sessions.contains(&e.session) {
            task.sessions.push(e.session.clone());
        }
        task.updated_at = e.ts.clone();
        let from_todo_write = text(&e.body, "source").is_some_and(implies_start);
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
                // the status the change was written against
                let written_at = (e.kind == Kind::TaskStatusChanged)
                    .then(|| text(&e.body, "from").and_then(Status::parse))
                    .flatten();
                if let Some(name) = target {
                    outcome = match Status::parse(name) {
                        None => Err(Rejection::UnknownStatus(name.to_string())),
                        Some(to) if joins && !advances(before, to) => Ok(()),
                        Some(to) if reopens_unseen(written_at, before, to) => {
                            Err(Rejection::Stale {
                                from: written_at.unwrap_or(before),
                                now: before,
                            })
                        }
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
                    Some("add") => BlockerMode::Add,
                    _ => BlockerMode::Suggest,
                };
                blockers_to_register = refs.clone();
                outcome = task.state.set_blockers(mode, refs.clone());
                if outcome.is_ok() {
                    match mode {
                        BlockerMode::Replace | BlockerMode::Add => {
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
        for b in blockers_to_register {
            self.register_blocker(&b, &project, e);
        }
        if before.is_open() && !after.is_open() {
            self.release(&id, e);
        }
    }

    /// A task that closes blocks nothing any more: it leaves the blockers
    /// of every task it blocked (as a task, or as a condition worded
    /// exactly like its title), and a blocked task left without blockers
    /// goes back to work (blocked → in_progress, the state machine's "its
    /// blockers resolved"). Each such task's history says so (`unblocked`,
    /// with the closing event).
    fn release(&mut self, closed: &str, e: &TaskEvent) {
        let names_closed = |b: &BlockerRef, project: &str| {
            let key = match b.kind {
                BlockerKind::Task => b.entity_id.clone(),
                BlockerKind::Condition => task_key(&b.raw_text, project),
                BlockerKind::Artifact => return false,
            };
            self.aliases.get(&key).map(String::as_str) == Some(closed)
        };
        let released: Vec<(String, Vec<usize>)> = self
            .tasks
            .values()
            .filter(|t| t.entity_id != closed)
            .filter_map(|t| {
                let gone: Vec<usize> = (0..t.state.blockers.len())
                    .filter(|&i| names_closed(&t.state.blockers[i], &t.project))
                    .collect();
                (!gone.is_empty()).then(|| (t.entity_id.clone(), gone))
            })
            .collect();
        for (id, gone) in released {
            let Some(task) = self.tasks.get_mut(&id) else {
                continue;
            };
            let before = task.state.status;
            let mut kept = std::mem::take(&mut task.state.blockers);
            for i in gone.into_iter().rev() {
                kept.remove(i);
            }
            task.state.blockers = kept;
            if before == Status::Blocked && task.state.blockers.is_empty() {
                // blocked → in_progress is an edge and needs no blocker
                task.state.status = Status::InProgress;
            }
            task.updated_at = e.ts.clone();
            let after = task.state.status;
            task.history.push(HistoryEntry {
                event: e.id.clone(),
                ts: e.ts.clone(),
                session: e.session.clone(),
                kind: "unblocked".into(),
                status: after,
                from: (after != before).then_some(before),
                implied: false,
                rejected: None,
                matched: None,
            });
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
                // of any project name: one log is one repository, whose
                // name changes (a folder renamed, `origin` added later) or
                // differs between clones (a team remote not named origin),
                // and the agent's later creation of the same task made a
                // second one, the first left open forever (field test 12b)
                .filter(|t| t.is_open() && !t.sessions.contains(&e.session))
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
    /// (docs/DESIGN.md §5: "a condition can later be resolved to a real task").
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

    /// The blockers of a `task_blockers_set` event: resolved references as
    /// the CLI writes them, or bare texts (from other writers), which are
    /// resolved here without the index: a known task's id is that task, a
    /// strong reference an artifact, anything else a condition.
    fn blocker_refs(&self, e: &TaskEvent) -> Vec<BlockerRef> {
        let Some(Value::Array(items)) = e.body.get("blockers") else {
            return Vec::new();
        };
        items
            .iter()
            .filter_map(|item| match item {
                Value::String(raw) => Some(match self.aliases.get(raw.trim()) {
                    Some(task) => BlockerRef {
                        kind: BlockerKind::Task,
                        entity_id: task.clone(),
                        raw_text: raw.clone(),
                        confidence: Confidence::High,
                        candidates: Vec::new(),
                    },
                    None => offline_ref(raw, &e.project),
                }),
                other => {
                    let mut r = serde_json::from_value::<BlockerRef>(other.clone()).ok()?;
                    // a task named by its key is the entity that key reached
                    if r.kind == BlockerKind::Task
                        && let Some(task) = self.aliases.get(&r.entity_id)
                    {
                        r.entity_id = task.clone();
                    }
                    Some(r)
                }
            })
            .collect()
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
