//! L3 concepts (docs/DESIGN.md §12): sessions and their facts grouped by
//! meaning. The agent names a session's topic and picks an existing
//! concept or creates one (never by shared files or words); memlog records
//! a `concept` event {`name`, `key`, `topic`, `sessions`, `facts`,
//! `reason`} and folds those events into concepts, by the canonical key
//! of the name.

use std::collections::BTreeMap;

use memlog_format::key::normalize;
use memlog_format::{EventId, Kind};
use memlog_indexer::Projections;
use memlog_store::Repo;
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::bail;
use crate::error::Result;
use crate::forget::{record_sealed_as, resolve_ids};

/// Longest concept name: a handful of words.
const MAX_NAME: usize = 80;

/// A concept: what its `concept` events say together.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Concept {
    /// Its name as first given.
    pub name: String,
    /// The normalised name that identifies it.
    pub key: String,
    /// The topics of its sessions, in the order they were given.
    pub topics: Vec<String>,
    /// Its sessions.
    pub sessions: Vec<String>,
    /// Facts filed under it.
    pub facts: Vec<EventId>,
    /// The `concept` events that made it.
    pub events: Vec<EventId>,
    /// When it last grew.
    pub updated: String,
}

/// Every concept, most recently grown first.
pub fn list(p: &Projections) -> Result<Vec<Concept>> {
    let rows = crate::workspace::of_kinds(p, &[Kind::Concept.as_str()])?;
    let mut by_key: BTreeMap<String, Concept> = BTreeMap::new();
    for e in rows.into_iter().map(|s| s.event) {
        let s = |k: &str| e.body.get(k).and_then(Value::as_str).unwrap_or("").trim();
        let name = s("name");
        if name.is_empty() {
            continue;
        }
        let c = by_key.entry(normalize(name)).or_insert_with(|| Concept {
            name: name.to_string(),
            key: normalize(name),
            ..Concept::default()
        });
        let topic = s("topic");
        if !topic.is_empty() && !c.topics.iter().any(|t| t == topic) {
            c.topics.push(topic.to_string());
        }
        for v in strings(&e.body, "sessions") {
            if !c.sessions.contains(&v) {
                c.sessions.push(v);
            }
        }
        for v in strings(&e.body, "facts") {
            let id = EventId::unchecked(v);
            if !c.facts.contains(&id) {
                c.facts.push(id);
            }
        }
        c.events.push(e.id.clone());
        c.updated = e.ts.clone();
    }
    let mut out: Vec<Concept> = by_key.into_values().collect();
    out.sort_by(|a, b| b.updated.cmp(&a.updated).then(a.key.cmp(&b.key)));
    Ok(out)
}

/// The concept named `name` (any spelling with the same normalised form).
pub fn find(p: &Projections, name: &str) -> Result<Option<Concept>> {
    let key = normalize(name);
    Ok(list(p)?.into_iter().find(|c| c.key == key))
}

/// The sessions and facts of a concept, as a search filter
/// (`memlog search --concept`).
#[derive(Clone, Debug, Default)]
pub struct Scope {
    sessions: std::collections::BTreeSet<String>,
    facts: std::collections::BTreeSet<String>,
}

impl Scope {
    /// The scope of the concept named `name`; an unknown name is an error
    /// naming the concepts there are.
    pub fn of(p: &Projections, name: &str) -> Result<Scope> {
        let all = list(p)?;
        let key = normalize(name);
        let Some(c) = all.iter().find(|c| c.key == key) else {
            let names: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
            if names.is_empty() {
                bail!("no concept is named {name:?}: there are no concepts yet");
            }
            bail!(
                "no concept is named {name:?}; concepts: {}",
                names.join(", ")
            );
        };
        Ok(Scope {
            sessions: c.sessions.iter().cloned().collect(),
            facts: c.facts.iter().map(ToString::to_string).collect(),
        })
    }

    /// Whether an event (by id and session) is in the concept.
    pub fn contains(&self, id: &str, session: &str) -> bool {
        self.sessions.contains(session) || self.facts.contains(id)
    }
}

/// Hits searched for beyond the limit when a concept filters them.
pub const SCOPE_OVERSAMPLE: usize = 10;

/// What the agent files under a concept.
#[derive(Clone, Debug, Default)]
pub struct Filing<'a> {
    /// The concept: an existing one's name, or a new one.
    pub name: &'a str,
    /// The session's topic, in 3 to 5 words.
    pub topic: Option<&'a str>,
    /// The sessions filed.
    pub sessions: &'a [String],
    /// Facts filed (ids or prefixes).
    pub facts: &'a [String],
    /// Why this concept (and not another).
    pub reason: Option<&'a str>,
}

/// What [`add`] recorded.
#[derive(Clone, Debug, Serialize)]
pub struct Filed {
    /// The `concept` event.
    pub id: EventId,
    /// The commit that sealed it.
    pub commit: Option<String>,
    /// The concept's name.
    pub name: String,
    /// Whether the concept is new.
    pub created: bool,
}

/// Records a `concept` event filing sessions and facts under a concept;
/// the sessions and facts must exist.
pub fn add(repo: &Repo, p: &Projections, filing: &Filing) -> Result<Filed> {
    // the name as it will be stored, secrets redacted: it is looked up,
    // keyed and echoed as such
    let stored = memlog_store::Recorder::new(repo)?.redact(filing.name);
    let name = stored.trim();
    if name.is_empty() || normalize(name).is_empty() {
        bail!("the concept needs a name (a few words)");
    }
    if name.chars().count() > MAX_NAME {
        bail!(
            "concept name {name:?} is longer than {MAX_NAME} characters: name the topic in a few words"
        );
    }
    if filing.sessions.is_empty() && filing.facts.is_empty() {
        bail!("name at least one session (--session) or fact (--fact) to file under {name:?}");
    }
    for s in filing.sessions {
        if !memlog_indexer::overview::session_exists(p, s)? {
            bail!("no session is named {s:?} (`memlog log` lists them)");
        }
    }
    let facts = resolve_ids(repo, filing.facts)?;
    let existing = find(p, name)?;
    let created = existing.is_none();
    let mut body = Map::new();
    body.insert(
        "name".into(),
        json!(existing.as_ref().map_or(name, |c| c.name.as_str())),
    );
    body.insert("key".into(), json!(normalize(name)));
    if let Some(t) = filing.topic.map(str::trim).filter(|t| !t.is_empty()) {
        body.insert("topic".into(), json!(t));
        body.insert("text".into(), json!(format!("{name}: {t}")));
    } else {
        body.insert("text".into(), json!(name));
    }
    body.insert("sessions".into(), json!(filing.sessions));
    body.insert("facts".into(), json!(facts));
    if let Some(r) = filing.reason.map(str::trim).filter(|r| !r.is_empty()) {
        body.insert("reason".into(), json!(r));
    }
    let personal = crate::workspace::rests_on_personal(p, &facts)?;
    let (id, commit) = record_sealed_as(repo, Kind::Concept, body, personal)?;
    Ok(Filed {
        id,
        commit,
        name: existing.map_or_else(|| name.to_string(), |c| c.name),
        created,
    })
}

fn strings(body: &Map<String, Value>, field: &str) -> Vec<String> {
    match body.get(field) {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        Some(Value::String(s)) => vec![s.clone()],
        _ => Vec::new(),
    }
}
