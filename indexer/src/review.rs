//! The review queue (`learn.review`, issue 31): facts and rules written
//! while reviewing is on carry `"review": "pending"` in their body and wait
//! for a `review` event (`decision`: `accept` or `reject`, `target`: the
//! event). Until one accepts them they are withheld from what is injected
//! into an agent's context; a rejected one stays withheld. Both are read
//! from the log, so that a rebuild gives the same queue.

use std::collections::{HashMap, HashSet};

use memlog_format::EventId;
use serde_json::{Map, Value};

use crate::{Error, Projections, Result};

/// `body.review` of a fact or rule that waits for review.
pub const PENDING: &str = "pending";

/// A decision on a memory waiting for review.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// The `review` event.
    pub event: EventId,
    /// `accept` or `reject`.
    pub decision: String,
}

/// Every live decision by its target (the latest wins).
pub fn decisions(p: &Projections) -> Result<HashMap<EventId, Decision>> {
    let err = |e| Error::sql(&p.dir, e);
    let mut stmt = p
        .graph
        .conn
        .prepare_cached(
            "SELECT id, body FROM events WHERE kind = 'review' ORDER BY ts, session, seq, id",
        )
        .map_err(err)?;
    let rows = stmt
        .query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?))
        })
        .map_err(err)?
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(err)?;
    let mut decided: Vec<(String, Map<String, Value>)> = rows
        .into_iter()
        .map(|(id, body)| {
            let body = body
                .and_then(|b| serde_json::from_str(&b).ok())
                .unwrap_or_default();
            (id, body)
        })
        .collect();
    // and those the index has not taken in yet (a person's yes a moment
    // before the next session's briefing), after the indexed ones
    let recent = p.unindexed().events().iter().map(|u| &u.event);
    decided.extend(reviews_in_log_order(recent));
    Ok(latest(decided))
}

/// The review events among `events`, as (id, body), in log order.
pub fn reviews_in_log_order<'e>(
    events: impl IntoIterator<Item = &'e memlog_format::Event>,
) -> Vec<(String, Map<String, Value>)> {
    let mut reviews: Vec<&memlog_format::Event> = events
        .into_iter()
        .filter(|e| e.kind.as_str() == "review")
        .collect();
    reviews
        .sort_by(|a, b| (&a.ts, &a.session, a.seq, &a.id).cmp(&(&b.ts, &b.session, b.seq, &b.id)));
    reviews
        .into_iter()
        .map(|e| (e.id.to_string(), e.body.clone()))
        .collect()
}

/// The latest decision on each target among `decided` (review events'
/// ids and bodies, in log order).
pub fn latest(decided: Vec<(String, Map<String, Value>)>) -> HashMap<EventId, Decision> {
    let mut out = HashMap::new();
    for (id, body) in decided {
        let (Some(target), Some(decision)) = (
            body.get("target").and_then(Value::as_str),
            body.get("decision").and_then(Value::as_str),
        ) else {
            continue;
        };
        out.insert(
            EventId::unchecked(target.to_string()),
            Decision {
                event: EventId::unchecked(id),
                decision: decision.to_string(),
            },
        );
    }
    out
}

/// The live facts and rules written to wait for review, in log order, and
/// after them those the index has not taken in yet (a rule an agent wrote
/// a moment ago, before the next session's briefing).
pub fn marked(p: &Projections) -> Result<Vec<EventId>> {
    Ok(marked_with_keys(p)?.into_iter().map(|(id, _)| id).collect())
}

/// Each memory written for review that says what an earlier one says (its
/// kind and normalised text), with that earlier one: the same fact
/// extracted in two clones, met at a sync. A twin follows its original's
/// decision and is not asked about again.
pub fn twins(p: &Projections) -> Result<HashMap<EventId, EventId>> {
    Ok(twins_among(&marked_with_keys(p)?))
}

fn twins_among(marked: &[(EventId, String)]) -> HashMap<EventId, EventId> {
    let mut first: HashMap<&str, &EventId> = HashMap::new();
    let mut out = HashMap::new();
    for (id, key) in marked {
        match first.get(key.as_str()) {
            Some(original) => {
                out.insert(id.clone(), (*original).clone());
            }
            None => {
                first.insert(key, id);
            }
        }
    }
    out
}

/// [`marked`], each with what makes two of them the same memory.
fn marked_with_keys(p: &Projections) -> Result<Vec<(EventId, String)>> {
    let key = |kind: &str, body: &Map<String, Value>| {
        twin_key(
            kind,
            body.get("text").and_then(Value::as_str).unwrap_or_default(),
        )
    };
    let mut marked = indexed_marked(p)?
        .into_iter()
        .map(|(id, kind, body)| {
            let body: Map<String, Value> = body
                .and_then(|b| serde_json::from_str(&b).ok())
                .unwrap_or_default();
            let key = key(&kind, &body);
            (id, key)
        })
        .collect::<Vec<_>>();
    let indexed: HashSet<EventId> = marked.iter().map(|(id, _)| id.clone()).collect();
    marked.extend(
        p.unindexed()
            .events()
            .iter()
            .map(|u| &u.event)
            .filter(|e| is_marked(&e.body) && !indexed.contains(&e.id))
            .map(|e| (e.id.clone(), key(e.kind.as_str(), &e.body))),
    );
    Ok(marked)
}

/// What makes two memories written for review the same: their kind and
/// words as written, case, spacing and a final stop aside (`!= 200` and
/// `== 200`, `1.5 s` and `15 s` are not the same memory).
fn twin_key(kind: &str, text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    format!(
        "{kind}:{}",
        words.join(" ").trim_end_matches('.').to_lowercase()
    )
}

fn indexed_marked(p: &Projections) -> Result<Vec<(EventId, String, Option<String>)>> {
    let err = |e| Error::sql(&p.dir, e);
    let mut stmt = p
        .graph
        .conn
        .prepare_cached(
            "SELECT id, kind, body FROM events WHERE kind IN ('fact', 'rule') AND body LIKE ?1
             ORDER BY ts, session, seq, id",
        )
        .map_err(err)?;
    let rows = stmt
        .query_map([format!("%\"review\":\"{PENDING}\"%")], |r| {
            Ok((
                EventId::unchecked(r.get::<_, String>(0)?),
                r.get::<_, String>(1)?,
                r.get::<_, Option<String>>(2)?,
            ))
        })
        .map_err(err)?
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(err)?;
    Ok(rows)
}

/// Where a memory written for review stands while it is held back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Held {
    /// Waiting for a person's decision.
    Pending,
    /// Rejected.
    Rejected,
}

impl Held {
    /// How listings name it: `held` (waiting for review) or `rejected`.
    pub fn as_str(self) -> &'static str {
        match self {
            Held::Pending => "held",
            Held::Rejected => "rejected",
        }
    }
}

/// What is withheld from injection: memories waiting for review and
/// rejected ones.
pub fn withheld(p: &Projections) -> Result<HashSet<EventId>> {
    Ok(held(p)?.into_keys().collect())
}

/// The memories withheld from injection, each with why (waiting for review
/// or rejected): the one reading every listing shares with the briefing,
/// so that what a listing calls active is what agents are given.
pub fn held(p: &Projections) -> Result<HashMap<EventId, Held>> {
    let marked = marked_with_keys(p)?;
    if marked.is_empty() {
        return Ok(HashMap::new());
    }
    let decisions = decisions(p)?;
    let twins = twins_among(&marked);
    Ok(marked
        .into_iter()
        .filter_map(|(id, _)| {
            let held = standing(decision_of(&id, &decisions, &twins).map(|d| d.decision.as_str()))?;
            Some((id, held))
        })
        .collect())
}

/// The decision on `id`: its own, else its original's ([`twins`]).
fn decision_of<'d>(
    id: &EventId,
    decisions: &'d HashMap<EventId, Decision>,
    twins: &HashMap<EventId, EventId>,
) -> Option<&'d Decision> {
    decisions
        .get(id)
        .or_else(|| twins.get(id).and_then(|original| decisions.get(original)))
}

/// Where a memory written for review stands after the latest decision on
/// it, if any: `None` once accepted. The one rule for every reader of the
/// queue (the briefing, `memlog rules`, `memlog diff`).
pub fn standing(decision: Option<&str>) -> Option<Held> {
    match decision {
        None => Some(Held::Pending),
        Some("accept") => None,
        Some(_) => Some(Held::Rejected),
    }
}

/// Whether an event's body marks it as written to wait for review.
pub fn is_marked(body: &Map<String, Value>) -> bool {
    body.get("review").and_then(Value::as_str) == Some(PENDING)
}

#[cfg(test)]
mod tests {
    use super::twin_key;

    #[test]
    fn twins_say_the_same_in_the_same_words() {
        assert_eq!(
            twin_key("fact", "Prices are integer cents."),
            twin_key("fact", "prices  are integer cents")
        );
        assert_ne!(
            twin_key("fact", "the API answers status != 200"),
            twin_key("fact", "the API answers status == 200")
        );
        assert_ne!(
            twin_key("fact", "retries after 1.5 seconds"),
            twin_key("fact", "retries after 15 seconds")
        );
        assert_ne!(twin_key("fact", "x y"), twin_key("rule", "x y"));
    }
}
