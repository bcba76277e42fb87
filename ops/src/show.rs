//! What `memlog show` shows (and the MCP tool `memory_get` and the
//! viewer's event page): an event with its neighbours in the session, a
//! whole session, or what a commit of the memlog ref sealed. The data
//! only; printing is the front-end's.

use memlog_format::event::sort_events;
use memlog_format::{Event, EventId, IdPrefix};
use memlog_indexer::Projections;
use memlog_indexer::lookup::{self, SessionCursor, SessionPage};
use memlog_store::Repo;
use memlog_store::log::{CommitInfo, Log};
use serde_json::{Value, json};

use crate::bail;
use crate::error::Result;
use crate::{ids, workspace};

/// What a name given to `memlog show` names.
pub enum Named {
    /// A session and its live events.
    Session(Vec<Event>),
    /// An event, by its full id.
    Event(EventId),
    /// A commit of the memlog ref and the live events it sealed.
    Commit(CommitView),
}

/// A commit of the memlog ref and the live events it added, in order.
pub struct CommitView {
    /// The commit.
    pub commit: CommitInfo,
    /// Its events that are not forgotten.
    pub events: Vec<Event>,
}

/// Shortest start of a session id `show` takes for the session.
const MIN_SESSION_PREFIX: usize = 4;

/// Resolves `name` as, in order: a session id; an event id or a unique
/// prefix of one; a revision of the memlog ref; a unique start of a
/// session id.
pub fn named(repo: &Repo, p: &Projections, name: &str) -> Result<Named> {
    let session = lookup::session_events(p, &workspace::recorded_session(repo, name))?;
    if !session.is_empty() {
        return Ok(Named::Session(workspace::exact_events(repo, session)?));
    }
    if let Ok(prefix) = IdPrefix::parse(name) {
        let ids = ids::matching(p, &prefix, 3)?;
        if !ids.is_empty() {
            return Ok(Named::Event(ids::one_of(&prefix, ids)?));
        }
    }

    if let Some(view) = commit_view(repo, p, name)? {
        return Ok(Named::Commit(view));
    }
    // the start of a session id, as `memlog log` prints it
    if name.chars().count() >= MIN_SESSION_PREFIX {
        let sessions = memlog_indexer::overview::sessions_starting_with(p, name, 3)?;
        match sessions.as_slice() {
            [one] => {
                let events = lookup::session_events(p, one)?;
                return Ok(Named::Session(workspace::exact_events(repo, events)?));
            }
            [] => {}
            several => bail!(
                "{name:?} starts the ids of several sessions ({}…): give more of it",
                several.join(", ")
            ),
        }
    }
    bail!("no event, session or memlog commit is named {name:?} (forgotten events are hidden)")
}

/// The event with this full id and up to `context` events before and
/// after it in its session, exactly as logged: `(neighbours, position of
/// the event among them)`.
pub fn with_context(
    p: &Projections,
    repo: &Repo,
    id: &str,
    context: usize,
) -> Result<(Vec<Event>, usize)> {
    let Some(target) = lookup::event(p, id)? else {
        bail!("no event has id {id:?} (unknown, or forgotten)");
    };
    // Two pages around it: a session of thousands of events is not read
    // whole for a few neighbours.
    let session = target.event.session.clone();
    let at = SessionCursor::of(&target.event);
    let mut rows = lookup::session_page(p, &session, SessionPage::Before(Some(&at), context))?;
    let pos = rows.len();
    rows.push(target);
    rows.extend(lookup::session_page(
        p,
        &session,
        SessionPage::After(Some(&at), context),
    )?);
    Ok((workspace::exact_events(repo, rows)?, pos))
}

/// `{"event", "level", "memory", "context"}`, as `memlog show ID
/// --context N --json` prints it (and the MCP tool `memory_get` and the
/// viewer's `/api/events/ID`): `level` is the event's memory level (L0 to
/// L4, docs/DESIGN.md §8) and `memory` its vitality and the counts behind
/// them.
pub fn event_with_context(p: &Projections, repo: &Repo, id: &str, context: usize) -> Result<Value> {
    let (neighbours, at) = with_context(p, repo, id, context)?;
    let standing =
        memlog_indexer::standing::standing(p, id, &repo.config.ranking.levels)?.map(|mut s| {
            // computed to the millisecond: rounded so that two reads agree
            s.vitality = (s.vitality * 1000.0).round() / 1000.0;
            s
        });
    Ok(json!({
        "event": neighbours[at].to_value(true),
        "level": standing.as_ref().map_or(0, |s| s.level),
        "memory": standing,
        "context": neighbours
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != at)
            .map(|(_, e)| e.to_value(true))
            .collect::<Vec<_>>(),
    }))
}

/// The commit `name` resolves to in the memlog ref, with its live events;
/// `None` when it names none.
pub fn commit_view(repo: &Repo, p: &Projections, name: &str) -> Result<Option<CommitView>> {
    let log = Log::new(repo);
    if log.tip()?.is_none() {
        return Ok(None);
    }
    let Ok(id) = log.resolve(name) else {
        return Ok(None);
    };
    let commit = log.commit(id)?;
    let mut events = Vec::new();
    for seg in log.added_segments(&commit)? {
        events.extend(log.read_segment(&seg, false)?.0);
    }
    // Forgotten events are not in the index.
    let mut live = Vec::with_capacity(events.len());
    for e in events {
        if lookup::event(p, &e.id)?.is_some() {
            live.push(e);
        }
    }
    let mut events = live;
    sort_events(&mut events);
    Ok(Some(CommitView { commit, events }))
}
