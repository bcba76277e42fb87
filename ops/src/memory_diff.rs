//! What memory changed between two states of the log, in human terms.
//!
//! A pure function of two sets of events (the log at revision A and at
//! revision B): sessions added, events added by kind, tasks created,
//! changed and closed, entities (files, URLs, issues) first seen, and the
//! `forget` events added with what they hide. The text of a hidden event is
//! never part of the result: a review of a forget must not repeat the secret.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use aho_corasick::AhoCorasick;
use serde::Serialize;
use serde_json::Value;

use memlog_format::event::sort_events;
use memlog_format::refs::{self, Reference};
use memlog_format::visibility::Forgets;
use memlog_format::{Event, EventId, Kind};
use memlog_indexer::review;

/// Task statuses that mean the task is finished.
pub const CLOSED_STATUSES: &[&str] = &[
    "done",
    "closed",
    "completed",
    "cancelled",
    "canceled",
    "resolved",
    "wont_do",
];

/// The difference between two states of the log.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct MemoryDiff {
    /// Events in B that are not in A.
    pub events_added: usize,
    /// Events in A that are not in B (only a purge removes events).
    pub events_removed: usize,
    /// Added events by kind.
    pub events_by_kind: BTreeMap<String, usize>,
    /// Sessions with no events in A.
    pub sessions_added: Vec<SessionAdded>,
    /// Tasks created, changed or closed.
    pub tasks: Vec<TaskChange>,
    /// Files and artifacts named for the first time.
    pub entities_added: Vec<EntityAdded>,
    /// Forget events added, with what they hide.
    pub forgets: Vec<ForgetAdded>,
    /// What the agent learned: rules promoted or retired, concepts filed
    /// (docs/DESIGN.md §12).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub learned: Vec<Learned>,
    /// Purges recorded in B and not in A: what they erased from history
    /// (ids and counts, never content).
    pub purges: Vec<PurgeAdded>,
}

/// A purge recorded in the range (`purges/<name>.json`).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PurgeAdded {
    /// The record's name.
    pub name: String,
    /// When the purge was made.
    pub ts: String,
    /// The events erased.
    pub events: Vec<String>,
    /// The sessions they belonged to.
    pub sessions: Vec<String>,
    /// How many segments were rewritten.
    pub segments_rewritten: usize,
    /// How many commits were rewritten.
    pub commits_rewritten: usize,
}

/// A rule promoted or retired, or sessions filed under a concept.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Learned {
    /// The event.
    pub id: EventId,
    /// `rule_added`, `rule_retired`, `concept` or `review`.
    pub change: &'static str,
    /// For a rule: `rule`, `solution` or `core_logic`; for a concept its
    /// name; for a retirement its reason; for a review its decision.
    pub label: String,
    /// The rule's text, or the concept's topic.
    pub text: String,
    /// The rule's evidence, the retired rule, or the concept's sessions.
    pub refs: Vec<String>,
    /// For a rule no agent is given at B: `held` (waiting for review:
    /// `memlog review accept|reject ID`) or `rejected`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review: Option<&'static str>,
}

impl MemoryDiff {
    /// Whether nothing was added, removed or purged.
    pub fn is_empty(&self) -> bool {
        self.events_added == 0 && self.events_removed == 0 && self.purges.is_empty()
    }
}

/// A session with no events in A.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SessionAdded {
    /// The session id.
    pub session: String,
    /// Its project.
    pub project: String,
    /// Time of its first event.
    pub start: String,
    /// Its events in B.
    pub events: usize,
    /// Its first prompt (or first text), unless forgotten.
    pub first_prompt: Option<String>,
}

/// What happened to a task.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum TaskChangeKind {
    /// The task is new in B.
    Created,
    /// Its state changed.
    Changed,
    /// It became done or cancelled.
    Closed,
}

/// The state of a task: the fields its events set, folded in order.
pub type TaskState = BTreeMap<String, String>;

/// A task created, changed or closed between A and B.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TaskChange {
    /// The task's canonical key.
    pub key: String,
    /// What happened to it.
    pub change: TaskChangeKind,
    /// Its title in B.
    pub title: String,
    /// State in A (empty for a created task) and in B.
    pub before: TaskState,
    /// State in B.
    pub after: TaskState,
}

impl TaskChange {
    /// The state as `field: value` lines, for a text diff.
    pub fn state_text(state: &TaskState) -> String {
        state.iter().map(|(k, v)| format!("{k}: {v}\n")).collect()
    }
}

/// An entity named for the first time.
#[derive(Clone, Debug, Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct EntityAdded {
    /// `file` or `artifact`.
    pub entity_type: String,
    /// Canonical key (`file:src/db.rs`, `art:jira:ACME-12`…).
    pub key: String,
    /// What it is called.
    pub title: String,
}

/// A forget event added, and what it hides (never the hidden text).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ForgetAdded {
    /// The forget event.
    pub id: EventId,
    /// When it was recorded.
    pub ts: String,
    /// Why, as given.
    pub reason: Option<String>,
    /// The event ids it names.
    pub targets: Vec<String>,
    /// The session it forgets, if any.
    pub session: Option<String>,
    /// The date before which it forgets everything, if any.
    pub before: Option<String>,
    /// Events of B this forget hides.
    pub hides: Vec<HiddenEvent>,
}

/// An event hidden by a forget: where it was, not what it said.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct HiddenEvent {
    /// The event.
    pub id: EventId,
    /// Its session.
    pub session: String,
    /// Its kind.
    pub kind: String,
    /// Its time.
    pub ts: String,
}

/// What changed from the events of state A to those of state B.
pub fn diff(before: &[Event], after: &[Event]) -> MemoryDiff {
    diff_naming(before, after, &NamedBefore::default())
}

/// [`diff`], with events of A kept without their text by [`BothEnds`]
/// (`named`: the entities they name).
pub fn diff_naming(before: &[Event], after: &[Event], named: &NamedBefore) -> MemoryDiff {
    let before_ids: HashSet<&str> = before.iter().map(|e| e.id.as_str()).collect();
    let after_ids: HashSet<&str> = after.iter().map(|e| e.id.as_str()).collect();
    let mut added: Vec<Event> = after
        .iter()
        .filter(|e| !before_ids.contains(e.id.as_str()))
        .cloned()
        .collect();
    sort_events(&mut added);
    added.dedup_by(|a, b| a.id == b.id);
    let forgets_after = Forgets::from_events(after.iter());

    let mut out = MemoryDiff {
        events_added: added.len(),
        events_removed: before_ids.difference(&after_ids).count(),
        ..Default::default()
    };
    for e in &added {
        *out.events_by_kind
            .entry(e.kind.as_str().to_string())
            .or_default() += 1;
    }
    out.sessions_added = sessions_added(before, &added, &forgets_after);
    out.tasks = task_changes(before, after);
    out.entities_added = entities_added(before, &added, &forgets_after, named);
    out.forgets = added
        .iter()
        .filter(|e| e.kind == Kind::Forget)
        .map(|f| forget_added(f, after))
        .collect();
    let decisions = review_decisions(after);
    // a review says what it decided on: the fact or rule, in a few words
    let reviewed = reviewed_by(&added);
    let targets: HashMap<&str, String> = after
        .iter()
        .filter(|e| reviewed.contains(e.id.as_str()) && !forgets_after.hides(e))
        .map(|e| {
            (
                e.id.as_str(),
                format!("{}: {}", e.kind.as_str(), e.headline(100)),
            )
        })
        .collect();
    out.learned = added
        .iter()
        .filter(|e| !forgets_after.hides(e))
        .filter_map(|e| learned(e, &decisions, &targets))
        .collect();
    out
}

/// The latest review decision on each event at B (as the briefing folds
/// them, [`review::latest`]).
fn review_decisions(after: &[Event]) -> HashMap<EventId, review::Decision> {
    review::latest(review::reviews_in_log_order(after))
}

fn learned(
    e: &Event,
    decisions: &HashMap<EventId, review::Decision>,
    targets: &HashMap<&str, String>,
) -> Option<Learned> {
    let s = |k: &str| {
        e.body
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let list = |k: &str| -> Vec<String> {
        match e.body.get(k) {
            Some(Value::Array(v)) => v
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            Some(Value::String(one)) => vec![one.clone()],
            _ => Vec::new(),
        }
    };
    let (change, label, text, refs) = match e.kind {
        Kind::Rule => ("rule_added", s("rule_kind"), s("text"), list("evidence")),
        Kind::RuleRetired => ("rule_retired", s("reason"), s("text"), list("target")),
        Kind::Concept => ("concept", s("name"), s("topic"), list("sessions")),
        Kind::Review => {
            let target = list("target");
            let what = target.first().and_then(|t| targets.get(t.as_str()));
            let text = match (s("reason"), what) {
                (reason, Some(what)) if reason.is_empty() => what.clone(),
                (reason, Some(what)) => format!("{what} ({reason})"),
                (reason, None) => reason,
            };
            ("review", s("decision"), text, target)
        }
        _ => return None,
    };
    // held back as the briefing holds it back (memlog_indexer::review)
    let review = (e.kind == Kind::Rule && review::is_marked(&e.body))
        .then(|| review::standing(decisions.get(&e.id).map(|d| d.decision.as_str())))
        .flatten()
        .map(review::Held::as_str);
    Some(Learned {
        id: e.id.clone(),
        change,
        label,
        text,
        refs,
        review,
    })
}

fn sessions_added(before: &[Event], added: &[Event], forgets: &Forgets) -> Vec<SessionAdded> {
    let known: HashSet<&str> = before.iter().map(|e| e.session.as_str()).collect();
    let mut by_session: BTreeMap<&str, Vec<&Event>> = BTreeMap::new();
    for e in added.iter().filter(|e| !known.contains(e.session.as_str())) {
        by_session.entry(&e.session).or_default().push(e);
    }
    let mut out: Vec<SessionAdded> = by_session
        .into_iter()
        .map(|(session, events)| {
            let visible: Vec<&&Event> = events.iter().filter(|e| !forgets.hides(e)).collect();
            let first_prompt = visible
                .iter()
                .find(|e| e.kind == Kind::UserPrompt)
                .or_else(|| visible.iter().find(|e| e.text().is_some()))
                .map(|e| e.headline(100))
                .filter(|s| !s.is_empty());
            SessionAdded {
                session: session.to_string(),
                project: events
                    .first()
                    .map(|e| e.project.clone())
                    .unwrap_or_default(),
                start: events.first().map(|e| e.ts.clone()).unwrap_or_default(),
                events: events.len(),
                first_prompt,
            }
        })
        .collect();
    out.sort_by(|a, b| (&a.start, &a.session).cmp(&(&b.start, &b.session)));
    out
}

/// The state of each task after `events`, by the indexer's own fold (the
/// one `memlog task show` reads): what a change implies (a task unblocked
/// when its blocker is done) is a change too. Keyed by the task's key.
fn task_states(events: &[Event]) -> BTreeMap<String, TaskState> {
    use memlog_indexer::tasks::{TASK_KINDS, TaskEvent, fold};
    let mut tasks: Vec<&Event> = events
        .iter()
        .filter(|e| TASK_KINDS.contains(&e.kind))
        .collect();
    tasks.sort_by(|a, b| (&a.ts, &a.session, a.seq, &a.id).cmp(&(&b.ts, &b.session, b.seq, &b.id)));
    let folded: Vec<TaskEvent> = tasks.into_iter().map(TaskEvent::from).collect();
    fold(&folded)
        .tasks
        .into_values()
        .map(|t| {
            let key = t
                .entity_id
                .strip_prefix("task:")
                .unwrap_or(&t.entity_id)
                .to_string();
            let mut state = TaskState::new();
            state.insert("title".into(), t.title.clone());
            state.insert("status".into(), t.state.status.as_str().to_string());
            if let Some(p) = &t.state.priority {
                state.insert("priority".into(), p.clone());
            }
            if !t.state.blockers.is_empty() {
                let blockers: Vec<&str> = t
                    .state
                    .blockers
                    .iter()
                    .map(|b| b.raw_text.as_str())
                    .collect();
                state.insert("blockers".into(), blockers.join(", "));
            }
            (key, state)
        })
        .collect()
}

fn is_closed(state: &TaskState) -> bool {
    state
        .get("status")
        .is_some_and(|s| CLOSED_STATUSES.contains(&s.to_ascii_lowercase().as_str()))
}

fn task_changes(before: &[Event], after: &[Event]) -> Vec<TaskChange> {
    let old = task_states(before);
    let new = task_states(after);
    let mut out = Vec::new();
    for (key, state) in new {
        let prior = old.get(&key).cloned().unwrap_or_default();
        if prior == state {
            continue;
        }
        let change = if prior.is_empty() {
            TaskChangeKind::Created
        } else if is_closed(&state) && !is_closed(&prior) {
            TaskChangeKind::Closed
        } else {
            TaskChangeKind::Changed
        };
        out.push(TaskChange {
            title: state.get("title").cloned().unwrap_or_else(|| key.clone()),
            key,
            change,
            before: prior,
            after: state,
        });
    }
    out.sort_by(|a, b| (a.change, &a.key).cmp(&(b.change, &b.key)));
    out
}

/// Files and artifacts an event names: references in its text and the file
/// paths of tool inputs.
pub fn entities_of(event: &Event) -> Vec<Reference> {
    let mut out = Vec::new();
    if let Some(text) = event.text() {
        out.extend(refs::extract(text));
    }
    if let Some(Value::Object(input)) = event.body.get("input") {
        for key in ["file_path", "notebook_path", "path"] {
            if let Some(p) = input.get(key).and_then(Value::as_str) {
                out.push(Reference::File(refs::normalize_path(p)));
            }
        }
        for key in ["command", "description", "url"] {
            if let Some(t) = input.get(key).and_then(Value::as_str) {
                out.extend(refs::extract(t));
            }
        }
    }
    out
}

/// The events at both ends of a range, kept as much as a diff reads of them
/// (most of memory, in a diff of the last sessions): a text kind's body
/// (prompts, answers, tool output) is dropped once the entities it names
/// that the added events name too are noted; an event an added review
/// decides on is kept whole. Its id, session, kind, time and meta (what
/// forgets match) stay.
pub struct BothEnds {
    /// The words every naming of an added event's entity holds as written
    /// (a URL, an issue's `owner/repo`, a key, a file's name): an event that
    /// holds none of them names none of those entities, and its text is not
    /// searched for references.
    needles: Option<AhoCorasick>,
    candidates: HashSet<String>,
    reviewed: HashSet<String>,
    named: NamedBefore,
}

/// The entity keys the events of state A kept without their text name
/// (only those an added event names too): what [`diff_naming`] counts as
/// known for them.
#[derive(Default)]
pub struct NamedBefore(HashMap<EventId, Vec<String>>);

/// Kinds whose body the diff reads only for the entities they name (and a
/// reviewed event's headline): the bulk of memory.
const TEXT_KINDS: [Kind; 5] = [
    Kind::UserPrompt,
    Kind::AgentResponse,
    Kind::ToolObservation,
    Kind::SessionSummary,
    Kind::Note,
];

impl BothEnds {
    /// For a range whose added events are `added`.
    pub fn new(added: &[Event]) -> BothEnds {
        let mut candidates = HashSet::new();
        let mut needles: BTreeSet<String> = BTreeSet::new();
        for r in added.iter().flat_map(entities_of) {
            candidates.insert(r.key());
            let needle = match r {
                Reference::Url(u) | Reference::Jira(u) => u,
                Reference::GithubIssue { repo, .. } => repo,
                // a path may be written with `\\` or `./`: its last part is not
                Reference::File(p) => p.rsplit('/').next().unwrap_or(&p).to_string(),
            };
            if !needle.is_empty() {
                needles.insert(needle);
            }
        }
        BothEnds {
            needles: (!needles.is_empty())
                .then(|| AhoCorasick::new(&needles).ok())
                .flatten(),
            candidates,
            reviewed: reviewed_by(added),
            named: NamedBefore::default(),
        }
    }

    /// `event`, at both ends of the range, as the diff needs it.
    pub fn keep(&mut self, mut event: Event) -> Event {
        if !TEXT_KINDS.contains(&event.kind) || self.reviewed.contains(event.id.as_str()) {
            return event;
        }
        if self.may_name(&event) {
            let mut keys: Vec<String> = entities_of(&event)
                .into_iter()
                .map(|r| r.key())
                .filter(|k| self.candidates.contains(k))
                .collect();
            keys.dedup();
            if !keys.is_empty() {
                self.named.0.insert(event.id.clone(), keys);
            }
        }
        event.body = Default::default();
        event
    }

    /// Whether `event`'s text or tool input holds a needle.
    fn may_name(&self, event: &Event) -> bool {
        let Some(ac) = &self.needles else {
            // no needle: the added events name nothing, or (an automaton
            // too large to build) every event is searched
            return !self.candidates.is_empty();
        };
        let in_input = match event.body.get("input") {
            Some(Value::Object(input)) => input
                .values()
                .filter_map(Value::as_str)
                .any(|v| ac.is_match(v)),
            _ => false,
        };
        in_input || event.text().is_some_and(|t| ac.is_match(t))
    }

    /// The entities the events kept without their text name.
    pub fn named(self) -> NamedBefore {
        self.named
    }
}

/// The events the reviews among `added` decide on.
fn reviewed_by(added: &[Event]) -> HashSet<String> {
    added
        .iter()
        .filter(|e| e.kind == Kind::Review)
        .filter_map(|e| e.body.get("target").and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

fn entities_added(
    before: &[Event],
    added: &[Event],
    forgets: &Forgets,
    named: &NamedBefore,
) -> Vec<EntityAdded> {
    let forgets_before = Forgets::from_events(before.iter());
    let known: HashSet<String> = before
        .iter()
        .filter(|e| !forgets_before.hides(e))
        .flat_map(|e| match named.0.get(&e.id) {
            Some(keys) => keys.clone(),
            None => entities_of(e).into_iter().map(|r| r.key()).collect(),
        })
        .collect();
    let mut out = BTreeSet::new();
    for e in added.iter().filter(|e| !forgets.hides(e)) {
        for r in entities_of(e) {
            let key = r.key();
            if !known.contains(&key) {
                out.insert(EntityAdded {
                    entity_type: r.entity_type().to_string(),
                    key,
                    title: r.title(),
                });
            }
        }
    }
    out.into_iter().collect()
}

fn forget_added(forget: &Event, after: &[Event]) -> ForgetAdded {
    let only_this = Forgets::from_events([forget]);
    let mut seen = HashMap::new();
    let mut hides: Vec<HiddenEvent> = after
        .iter()
        .filter(|e| only_this.hides(e) && seen.insert(e.id.as_str(), ()).is_none())
        .map(|e| HiddenEvent {
            id: e.id.clone(),
            session: e.session.clone(),
            kind: e.kind.as_str().to_string(),
            ts: e.ts.clone(),
        })
        .collect();
    hides.sort_by(|a, b| (&a.ts, &a.id).cmp(&(&b.ts, &b.id)));
    let strings = |field: &str| -> Vec<String> {
        match forget.body.get(field) {
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            _ => Vec::new(),
        }
    };
    let string = |field: &str| {
        forget
            .body
            .get(field)
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    ForgetAdded {
        id: forget.id.clone(),
        ts: forget.ts.clone(),
        reason: string("reason"),
        targets: strings("targets"),
        session: string("session"),
        before: string("before"),
        hides,
    }
}

#[cfg(test)]
mod tests {
    use memlog_format::Draft;
    use serde_json::json;

    use super::*;

    fn ev(session: &str, ts: &str, kind: Kind, body: Value) -> Event {
        let Value::Object(body) = body else {
            panic!("ev takes a JSON object body")
        };
        Draft::new(session, ts, kind, "p", body).into_event(0)
    }

    #[test]
    fn sessions_tasks_entities_and_forgets() {
        let t0 = "2026-01-01T00:00:00.000Z";
        let t1 = "2026-01-02T00:00:00.000Z";
        let prompt = ev("s1", t0, Kind::UserPrompt, json!({"text": "Fix src/db.rs"}));
        let task = ev(
            "s1",
            t0,
            Kind::parse("task_created"),
            json!({"key": "p::fix db", "title": "Fix db", "status": "in_progress"}),
        );
        let before = vec![prompt.clone(), task.clone()];
        let secret = ev(
            "s2",
            t1,
            Kind::UserPrompt,
            json!({"text": "key SECRET-1 in lib/x.rs"}),
        );
        let other = ev("s2", t1, Kind::Note, json!({"text": "see ACME-12"}));
        let done = ev(
            "s2",
            t1,
            Kind::parse("task_status_changed"),
            json!({"key": "p::fix db", "from": "in_progress", "to": "done"}),
        );
        let forget = ev("f", t1, Kind::Forget, json!({"targets": [secret.id]}));
        let mut after = before.clone();
        after.extend([secret.clone(), other, done, forget]);
        let d = diff(&before, &after);
        assert_eq!(d.events_added, 4);
        assert_eq!(d.sessions_added.len(), 2);
        let s2 = d.sessions_added.iter().find(|s| s.session == "s2").unwrap();
        assert_eq!(s2.first_prompt.as_deref(), Some("see ACME-12"));
        assert_eq!(d.tasks.len(), 1);
        assert_eq!(d.tasks[0].change, TaskChangeKind::Closed);
        assert_eq!(
            d.tasks[0].after.get("status").map(String::as_str),
            Some("done")
        );
        assert!(d.entities_added.iter().any(|e| e.key == "art:jira:ACME-12"));
        assert!(!d.entities_added.iter().any(|e| e.title.contains("x.rs")));
        assert_eq!(d.forgets.len(), 1);
        assert_eq!(d.forgets[0].hides[0].id, secret.id);
        let json = serde_json::to_string(&d).unwrap();
        assert!(!json.contains("SECRET-1"));
    }
}
