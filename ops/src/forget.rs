//! Forgetting and reinforcing: bookkeeping events that name other events,
//! recorded in a session of their own and sealed at once (so they are
//! reviewed and shared like any other memory).

use memlog_format::{Draft, Event, EventId, Kind, time, visibility};
use memlog_store::seal::{JournalSelection, seal_journals};
use memlog_store::{Recorder, Repo};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::bail;
use crate::error::Result;
use crate::{ids, workspace};

/// What to forget: the arguments of `memlog forget` and of the MCP tool
/// `memory_forget`.
#[derive(Clone, Debug, Default)]
pub struct ForgetRequest {
    /// Event ids or unique prefixes of at least 8 hex digits.
    pub ids: Vec<String>,
    /// Every event of this session.
    pub session: Option<String>,
    /// Every event before this date or RFC 3339 time.
    pub before: Option<String>,
    /// Why (kept in the forget event).
    pub reason: Option<String>,
}

impl ForgetRequest {
    /// The request with its session as recorded (a secret in the id
    /// redacted, [`workspace::recorded_session`]).
    fn as_recorded(&self, repo: &Repo) -> ForgetRequest {
        ForgetRequest {
            session: self
                .session
                .as_deref()
                .map(|s| workspace::recorded_session(repo, s)),
            ..self.clone()
        }
    }

    /// Fails unless the request names something to forget.
    pub fn check(&self) -> Result<()> {
        if self.ids.is_empty() && self.session.is_none() && self.before.is_none() {
            bail!(
                "say what to forget: event ids, a session, or a date to forget everything before"
            );
        }
        if let Some(before) = &self.before {
            let at = time::normalize_given(before)?;
            // a later date hides, with what there is, all that is recorded
            // until then: every session to come
            if at > time::now() {
                bail!(
                    "--before {before:?} is in the future: it would hide every event recorded \
                     until then too; give a date in the past"
                );
            }
        }
        Ok(())
    }
}

/// The recorded `forget` event (`memlog forget --json`).
#[derive(Clone, Debug, Serialize)]
pub struct Forgotten {
    /// Id of the `forget` event.
    pub id: EventId,
    /// The commit that sealed it.
    pub commit: Option<String>,
    /// Full ids of the events named by id.
    pub targets: Vec<EventId>,
    /// The session forgotten, if one was.
    pub session: Option<String>,
    /// The date before which everything was forgotten, if one was.
    pub before: Option<String>,
    /// Events derived from the forgotten ones, hidden with them (facts,
    /// evidence-giving memories, quoting summaries and recalls).
    pub derived: Vec<EventId>,
}

/// One event a forget hides (`memlog forget --dry-run`).
#[derive(Clone, Debug, Serialize)]
pub struct Hidden {
    /// Its id.
    pub id: EventId,
    /// Its kind.
    pub kind: String,
    /// Its session.
    pub session: String,
    /// When it was recorded.
    pub ts: String,
    /// Its first line.
    pub headline: String,
    /// Whether it is hidden because it was derived from a forgotten event.
    pub derived: bool,
}

/// What a forget would hide: the events it names (by id, session or date)
/// and those derived from them (docs/DESIGN.md §11).
#[derive(Clone, Debug, Default, Serialize)]
pub struct ForgetPlan {
    /// Full ids of the events named by id.
    pub targets: Vec<EventId>,
    /// Every live event the forget would hide, named then derived.
    pub hidden: Vec<Hidden>,
    /// Those events themselves, whose fingerprints the forget keeps.
    #[serde(skip)]
    pub events: Vec<Event>,
}

impl ForgetPlan {
    /// Ids of the derived events.
    pub fn derived(&self) -> Vec<EventId> {
        self.hidden
            .iter()
            .filter(|h| h.derived)
            .map(|h| h.id.clone())
            .collect()
    }
}

/// What `request` would hide among the live events (sealed or in a
/// journal), without recording anything.
pub fn plan(repo: &Repo, request: &ForgetRequest) -> Result<ForgetPlan> {
    let request = &request.as_recorded(repo);
    request.check()?;
    let targets = resolve_ids(repo, &request.ids)?;
    let before = request
        .before
        .as_deref()
        .map(time::normalize_given)
        .transpose()?;
    let live = workspace::live(repo, false)?;
    let named: Vec<&Event> = live
        .iter()
        .filter(|e| e.kind != Kind::Forget)
        .filter(|e| {
            targets.contains(&e.id)
                || request.session.as_deref() == Some(e.session.as_str())
                || before.as_deref().is_some_and(|b| e.ts.as_str() < b)
        })
        .collect();
    let derived = visibility::derived_from(&named, &live);
    let hidden_of = |e: &Event, derived: bool| Hidden {
        id: e.id.clone(),
        kind: e.kind.as_str().to_string(),
        session: e.session.clone(),
        ts: e.ts.clone(),
        headline: e.headline(72),
        derived,
    };
    let mut hidden: Vec<Hidden> = named.iter().map(|e| hidden_of(e, false)).collect();
    hidden.extend(
        live.iter()
            .filter(|e| derived.contains(&e.id))
            .map(|e| hidden_of(e, true)),
    );
    let events = named
        .iter()
        .copied()
        .chain(live.iter().filter(|e| derived.contains(&e.id)))
        .cloned()
        .collect();
    Ok(ForgetPlan {
        targets,
        hidden,
        events,
    })
}

/// Full ids of the live events (sealed or in a journal) named by `prefixes`
/// (whole ids or unique prefixes), through the index brought up to date.
pub fn resolve_ids(repo: &Repo, prefixes: &[String]) -> Result<Vec<EventId>> {
    if prefixes.is_empty() {
        return Ok(Vec::new());
    }
    let p = workspace::projections(repo)?;
    match ids::resolve_all(&p, prefixes) {
        // An id just recorded may be missing from an index another
        // process is updating: wait for it before saying there is none.
        Err(e) if !p.is_fresh(repo)? => {
            drop(p);
            memlog_indexer::Projections::update_within(repo, workspace::WRITER_WAIT)?;
            ids::resolve_all(&workspace::projections(repo)?, prefixes).map_err(|_| e)
        }
        resolved => resolved,
    }
}

/// Forgets what `request` names: its [`plan`], then [`record`]; `None`
/// when it hides nothing (forgotten already), and nothing is recorded.
pub fn forget(repo: &Repo, request: &ForgetRequest) -> Result<Option<Forgotten>> {
    let plan = plan(repo, request)?;
    if plan.hidden.is_empty() {
        return Ok(None);
    }
    record(repo, request, plan).map(Some)
}

/// Records and seals the `forget` event of `request`, whose [`plan`] the
/// caller made (and may have shown, or bounded). Ids are resolved against
/// every live event (sealed or in a journal) so that a prefix names
/// exactly one.
///
/// Events derived from the forgotten ones are named in the forget's
/// `derived` list, so that readers hide them too and `memlog purge` erases
/// them with their sources.
pub fn record(repo: &Repo, request: &ForgetRequest, plan: ForgetPlan) -> Result<Forgotten> {
    let request = &request.as_recorded(repo);
    // a forget of nothing would still be a commit every clone receives
    if plan.hidden.is_empty() {
        bail!("nothing to forget: no event in memory matches (forgotten already?)");
    }
    let targets = plan.targets.clone();
    let derived = plan.derived();
    // A forget names what it hides and why: for personal events that
    // stays on this machine too. A forget of personal events only is
    // personal; one of both kinds is recorded twice, the personal ids and
    // the reason in a personal forget, the rest (without the reason,
    // which may speak of them) in a shared one.
    let personal: std::collections::HashSet<&EventId> = plan
        .events
        .iter()
        .filter(|e| memlog_format::scope::is_personal(&e.meta))
        .map(|e| &e.id)
        .collect();
    let only_personal = !plan.events.is_empty() && personal.len() == plan.events.len();
    // the ids of `targets` and `derived` that `keep` keeps
    let named = |keep: &dyn Fn(&EventId) -> bool| -> Map<String, Value> {
        let part = |ids: &[EventId]| -> Vec<EventId> {
            ids.iter().filter(|id| keep(id)).cloned().collect()
        };
        let mut body = Map::new();
        for (field, ids) in [("targets", part(&targets)), ("derived", part(&derived))] {
            if !ids.is_empty() {
                body.insert(field.into(), ids_value(&ids));
            }
        }
        body
    };
    let mut body = named(&|id| only_personal || !personal.contains(id));
    if let Some(s) = &request.session {
        body.insert("session".into(), Value::String(s.clone()));
    }
    if let Some(b) = &request.before {
        body.insert("before".into(), Value::String(time::normalize_given(b)?));
    }
    if let Some(r) = request
        .reason
        .as_ref()
        .filter(|_| personal.is_empty() || only_personal)
    {
        body.insert("reason".into(), Value::String(r.clone()));
    }
    // before the forget is recorded: an import must not bring back what a
    // recorded forget hides
    let events: Vec<&Event> = plan.events.iter().collect();
    memlog_store::forgotten::Forgotten::load(repo)?
        .remember(&events, request.session.as_deref())?;
    // (personal events a session or a date chose are hidden by the shared
    // forget's selector: nothing more to name)
    let mut own = named(&|id| personal.contains(id));
    if !only_personal && !own.is_empty() {
        if let Some(r) = &request.reason {
            own.insert("reason".into(), Value::String(r.clone()));
        }
        record_sealed_as(repo, Kind::Forget, own, true)?;
    }
    let (id, commit) = record_sealed_as(repo, Kind::Forget, body, only_personal)?;
    Ok(Forgotten {
        id,
        commit,
        targets,
        session: request.session.clone(),
        before: request.before.clone(),
        derived,
    })
}

/// Records one bookkeeping event (`forget`, `reinforce`) in a session of its
/// own and seals it at once; returns its id and the commit.
pub fn record_sealed(
    repo: &Repo,
    kind: Kind,
    body: Map<String, Value>,
) -> Result<(EventId, Option<String>)> {
    record_sealed_as(repo, kind, body, false)
}

/// [`record_sealed`], personal when `personal` is set (sealed on the
/// personal ref, never synced).
pub fn record_sealed_as(
    repo: &Repo,
    kind: Kind,
    body: Map<String, Value>,
    personal: bool,
) -> Result<(EventId, Option<String>)> {
    let session = memlog_store::journal::mint_session(kind.as_str());
    let mut meta = Map::new();
    if personal {
        memlog_format::scope::mark_personal(&mut meta);
    }
    let draft = Draft {
        session: session.clone(),
        ts: time::now(),
        kind,
        project: repo.project(),
        body,
        meta,
    };
    let (events, _) = Recorder::new(repo)?.record(vec![draft])?;
    let report = seal_journals(repo, &JournalSelection::Session(session))?;
    let id = events.first().map(|e| e.id.clone()).unwrap_or_default();
    let commit = report.sealed.into_iter().find_map(|s| s.commit);
    Ok((id, commit))
}

/// A recorded `reinforce` event (`memlog reinforce --json`).
#[derive(Clone, Debug, Serialize)]
pub struct Reinforced {
    /// The commit that sealed it.
    pub commit: Option<String>,
    /// Id of the `reinforce` event.
    pub id: EventId,
    /// `success` or `failure`.
    pub outcome: &'static str,
    /// Full ids of the events named.
    pub targets: Vec<EventId>,
}

/// Records and seals a `reinforce` event: the memories named by `ids`
/// (whole ids or unique prefixes) helped (`success`) or misled.
pub fn reinforce(repo: &Repo, ids: &[String], success: bool) -> Result<Reinforced> {
    let targets = resolve_ids(repo, ids)?;
    let outcome = if success { "success" } else { "failure" };
    let mut body = Map::new();
    body.insert("targets".into(), ids_value(&targets));
    body.insert("outcome".into(), Value::String(outcome.into()));
    let (id, commit) = record_sealed(repo, Kind::Reinforce, body)?;
    Ok(Reinforced {
        commit,
        id,
        outcome,
        targets,
    })
}

/// Event ids as the JSON array a bookkeeping event's `targets` holds.
fn ids_value(ids: &[EventId]) -> Value {
    Value::Array(ids.iter().map(|t| Value::String(t.to_string())).collect())
}
