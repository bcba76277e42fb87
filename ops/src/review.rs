//! The review queue (`learn.review: true`, issue 31): facts and rules
//! proposed while reviewing is on wait, withheld from every injection
//! ([`memlog_indexer::review`]), until a person accepts them
//! (`memlog review accept ID`) or rejects them. A decision is a `review`
//! event sealed at once, so that it is reviewed like code and travels with
//! the log.

use memlog_format::{EventId, Kind};
use memlog_indexer::Projections;
use memlog_indexer::review::{Held, PENDING, decisions, marked, standing};
use memlog_store::Repo;
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::bail;
use crate::error::Result;
use crate::workspace;

/// The body field that marks a memory as waiting for review, when
/// `learn.review` is on: what facts and rules get when they are written.
pub fn mark(repo: &Repo, body: &mut Map<String, Value>) {
    if repo.config.learn.review {
        body.insert("review".into(), json!(PENDING));
    }
}

/// A memory in the review queue.
#[derive(Clone, Debug, Serialize)]
pub struct Item {
    /// The fact or rule.
    pub id: EventId,
    /// `fact` or `rule`.
    pub kind: String,
    /// What it says.
    pub text: String,
    /// When it was proposed.
    pub ts: String,
    /// The session that proposed it.
    pub session: String,
    /// The client that proposed it, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The events it rests on.
    pub evidence: Vec<String>,
    /// `pending`, `accepted` or `rejected`.
    pub status: &'static str,
    /// The `review` event that decided it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<EventId>,
    /// Later memories that say the same (the same fact extracted in two
    /// clones): they follow this one's decision.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub twins: Vec<EventId>,
}

/// The memories written for review, oldest first: those still pending
/// only, or all of them with their decision.
pub fn queue(p: &Projections, all: bool) -> Result<Vec<Item>> {
    let ids = marked(p)?;
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let decided = decisions(p)?;
    let twins = memlog_indexer::review::twins(p)?;
    let mut out = Vec::new();
    for id in ids {
        // a twin is decided with its original, which lists it
        if twins.contains_key(&id) && !decided.contains_key(&id) {
            continue;
        }
        let d = decided.get(&id);
        let status = match standing(d.map(|d| d.decision.as_str())) {
            Some(Held::Pending) => "pending",
            Some(Held::Rejected) => "rejected",
            None => "accepted",
        };
        if !all && status != "pending" {
            continue;
        }
        let Some(stored) = memlog_indexer::lookup::event(p, &id)? else {
            continue;
        };
        let e = stored.event;
        let mut evidence: Vec<String> = memlog_indexer::supersede::ids_in(&e.body, "evidence")
            .into_iter()
            .map(|id| id.to_string())
            .collect();
        if let Some(source) = e.body.get("event").and_then(Value::as_str) {
            evidence.insert(0, source.to_string());
        }
        out.push(Item {
            kind: e.kind.as_str().to_string(),
            text: e.text().unwrap_or_default().to_string(),
            ts: e.ts.clone(),
            session: e.session.clone(),
            client: e
                .meta
                .get("client")
                .and_then(Value::as_str)
                .map(str::to_string),
            evidence,
            status,
            decided_by: d.map(|d| d.event.clone()),
            twins: twins
                .iter()
                .filter(|(_, original)| **original == e.id)
                .map(|(twin, _)| twin.clone())
                .collect(),
            id: e.id,
        });
    }
    Ok(out)
}

/// A decision recorded by [`decide`].
#[derive(Clone, Debug, Serialize)]
pub struct Decided {
    /// The `review` event.
    pub id: EventId,
    /// The memory decided on.
    pub target: EventId,
    /// `accept` or `reject`.
    pub decision: &'static str,
    /// The commit that sealed it.
    pub commit: Option<String>,
}

/// Accepts or rejects the memory `name` (an id or a unique prefix) that
/// waits for review: a `review` event, sealed at once. A memory not in the
/// queue, or decided already, is an error saying so.
pub fn decide(repo: &Repo, name: &str, accept: bool, reason: Option<&str>) -> Result<Decided> {
    let target = {
        let p = workspace::projections(repo)?;
        let names = |id: &EventId| {
            id.as_str() == name || (name.len() >= 8 && id.as_str().starts_with(name))
        };
        let Some(item) = queue(&p, true)?
            .into_iter()
            .find(|i| names(&i.id) || i.twins.iter().any(names))
        else {
            bail!(
                "{name:?} is not a fact or rule waiting for review (see `memlog review`; \
                 facts and rules wait there when `learn.review: true`)"
            );
        };
        if item.status != "pending" {
            bail!(
                "{} was {} already (review event {})",
                item.id.short(),
                item.status,
                item.decided_by
                    .map(|d| d.short().to_string())
                    .unwrap_or_default()
            );
        }
        item.id
    };
    let decision = if accept { "accept" } else { "reject" };
    let mut body = Map::new();
    body.insert("target".into(), json!(target));
    body.insert("decision".into(), json!(decision));
    if let Some(r) = reason.map(str::trim).filter(|r| !r.is_empty()) {
        body.insert("reason".into(), json!(r));
    }
    let (id, commit) = crate::forget::record_sealed(repo, Kind::Review, body)?;
    Ok(Decided {
        id,
        target,
        decision,
        commit,
    })
}
