//! What the Stop hook does once the agent's answer is recorded
//! (docs/DESIGN.md §12): memories injected into the session whose ids the
//! answer cites are credited with a success, and when the session has
//! enough new material the agent is asked, once, to extract its facts.
//!
//! Agent-neutral: the caller turns the returned instruction into its
//! client's way of keeping the agent going (Claude Code: a `block`
//! decision whose reason the agent reads).

use std::collections::BTreeSet;

use memlog_format::{Draft, Event, IdPrefix, Kind, time};
use memlog_store::journal::Journal;
use memlog_store::{Recorder, Repo};
use serde_json::{Map, Value, json};

use crate::error::Result;
use crate::extraction::{self, is_material};

/// What the Stop hook knows of the turn that ended.
#[derive(Clone, Debug, Default)]
pub struct StopTurn<'a> {
    /// The session.
    pub session: &'a str,
    /// True when the agent is already continuing because of a Stop hook:
    /// then memlog never asks again.
    pub stop_hook_active: bool,
    /// Whether the agent's client lets a Stop hook keep it going with an
    /// instruction (Claude Code's `decision: block`); when it does not,
    /// cited memories are still credited.
    pub may_ask: bool,
}

/// Credits cited memories and returns the extraction instruction when the
/// agent should be asked for facts (an `extraction_request` event then
/// marks the point, so that the count starts again).
pub fn on_stop(repo: &Repo, recorder: &Recorder, turn: &StopTurn) -> Result<Option<String>> {
    let journal = Journal::new(&repo.journal_dir(), turn.session)?;
    let (events, _) = journal.read()?;
    if let Some(draft) = credit_cited(repo, turn.session, &events) {
        recorder.record(vec![draft])?;
    }
    let every = repo.config.learn.extract_after_events;
    if !turn.may_ask || turn.stop_hook_active || every == 0 {
        return Ok(None);
    }
    let new = extraction::since_last_request(&events);
    let count = new.iter().filter(|e| is_material(&e.kind)).count();
    if count < every {
        return Ok(None);
    }
    // The agent would have to give a long answer again (the user sees its
    // final message only): twice the tokens and the wait, and a model
    // that shortens it loses the answer. A later turn, shorter, asks.
    let last_answer = events
        .iter()
        .rev()
        .find(|e| e.kind == Kind::AgentResponse)
        .and_then(|e| e.text())
        .map_or(0, |t| t.chars().count());
    if last_answer > LONG_ANSWER_CHARS {
        return Ok(None);
    }
    let view = extraction::session_view(turn.session, new);
    let mut body = Map::new();
    body.insert("events".into(), json!(count));
    body.insert("threshold".into(), json!(every));
    recorder.record(vec![Draft::new(
        turn.session,
        time::now(),
        Kind::ExtractionRequest,
        repo.project(),
        body,
    )])?;
    Ok(Some(format!(
        "{}{REPLY_AGAIN}",
        extraction::instruction(&view, None)
    )))
}

/// An answer past this many characters is not asked for again: the
/// extraction waits for a turn that ends shorter.
const LONG_ANSWER_CHARS: usize = 2_000;

/// The instruction's last words. The agent's client shows the user its
/// final message only (`claude -p` prints it as the result, and Claude Code
/// asks again when that message is empty), so a save that ended the turn
/// with "Facts recorded." displaced the answer the user asked for.
const REPLY_AGAIN: &str = "\nLast: this bookkeeping is not for the user, who sees only your \
     final message. When it is done (or if nothing is worth keeping), end your turn by giving \
     the user your answer above again, word for word, and say nothing about memlog.\n";

/// A `reinforce` success for the memories recalled into this session whose
/// ids the latest answer cites (by a prefix of at least 8 hex digits) and
/// that were not credited in this session before.
fn credit_cited(repo: &Repo, session: &str, events: &[Event]) -> Option<Draft> {
    let answer = events
        .iter()
        .rev()
        .find(|e| e.kind == Kind::AgentResponse)?
        .text()?
        .to_ascii_lowercase();
    let mut credited: BTreeSet<String> = BTreeSet::new();
    let mut recalled: BTreeSet<String> = BTreeSet::new();
    for e in events {
        let into = match e.kind {
            Kind::Recall => &mut recalled,
            Kind::Reinforce => &mut credited,
            _ => continue,
        };
        if let Some(Value::Array(ids)) = e.body.get("targets") {
            into.extend(ids.iter().filter_map(Value::as_str).map(str::to_string));
        }
    }
    let cited: Vec<Value> = recalled
        .into_iter()
        .filter(|id| !credited.contains(id))
        .filter(|id| {
            id.get(..IdPrefix::MIN)
                .is_some_and(|prefix| answer.contains(prefix))
        })
        .map(Value::String)
        .collect();
    if cited.is_empty() {
        return None;
    }
    let mut body = Map::new();
    body.insert("targets".into(), Value::Array(cited));
    body.insert("outcome".into(), json!("success"));
    body.insert("source".into(), json!("cited"));
    Some(Draft::new(
        session,
        time::now(),
        Kind::Reinforce,
        repo.project(),
        body,
    ))
}
