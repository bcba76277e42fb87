//! What the MCP tools do, as plain blocking functions over one repository.
//!
//! [`Memory`] owns the repository, the open projections and the session
//! the server writes to. It lives on the server's worker thread (see
//! `worker.rs`); the async side only passes arguments in and JSON out.

use std::path::Path;

use memlog_format::id;
use memlog_format::task::Status;
use memlog_format::{Event, Kind, scope, time};
use memlog_indexer::Projections;
use memlog_indexer::lookup::{self, TimelineQuery};
use memlog_indexer::search::Hit;
use memlog_indexer::standing::standing;
use memlog_ops::bail;
use memlog_ops::error::{Context, Error, Result};
use memlog_ops::facts::{self, Proposal, Remember};
use memlog_ops::forget::{ForgetRequest, plan, record};
use memlog_ops::ids;
use memlog_ops::search::{self, KeptModel, MAX_QUERY_BYTES, SearchQuery};
use memlog_ops::show::event_with_context;
use memlog_ops::stats::stats_of;
use memlog_ops::workspace::{self, KeptProjections};
use memlog_store::Repo;
use memlog_store::seal::{JournalSelection, seal_journals};
use serde_json::{Map, Value, json};

use super::params::{
    AddRuleParams, ForgetParams, GetParams, Outcome, ReinforceParams, RememberKind, RememberParams,
    SearchParams, TaskAddParams, TaskUpdateParams, TasksParams, TimelineParams,
};

const MAX_SEARCH_LIMIT: usize = 50;
const MAX_GET_IDS: usize = 20;
const MAX_GET_CONTEXT: usize = 20;
const MAX_TIMELINE_LIMIT: usize = 500;
const MAX_TASKS_LIMIT: usize = 200;
/// Most events one `memory_forget` call may hide.
const MAX_FORGET: usize = 20;
/// Characters of an event's first line in compact rows.
const HEADLINE_CHARS: usize = 100;

/// One repository's memory, as the MCP server serves it.
pub struct Memory {
    repo: Repo,
    projections: KeptProjections,
    /// The session `memory_remember` writes to: minted once per server run.
    session: String,
    /// Events written to `session` (sealed when the server stops).
    remembered: usize,
    /// The embedding model of its searches, kept once loaded.
    model: KeptModel,
}

impl Memory {
    pub fn open(dir: &Path) -> Result<Memory> {
        let repo = workspace::open(dir)?;
        Ok(Memory {
            repo,
            projections: KeptProjections::default(),
            session: memlog_store::journal::mint_session("mcp"),
            remembered: 0,
            model: KeptModel::default(),
        })
    }

    pub fn session(&self) -> &str {
        &self.session
    }

    /// Forgets the open projections (after a failed call, which may have
    /// left them in any state); the next call opens them again.
    pub fn reset(&mut self) {
        self.projections.reset();
    }

    /// The projections, up to date (see [`KeptProjections::get`]).
    fn projections(&mut self) -> Result<&Projections> {
        self.projections.get(&self.repo)
    }

    /// `memory_search`: compact hits, best first, ranked exactly as
    /// `memlog search` ranks them.
    pub fn search(&mut self, p: SearchParams) -> Result<Value> {
        if p.query.len() > MAX_QUERY_BYTES {
            bail!(
                "query is {} bytes; keep it under {MAX_QUERY_BYTES} (a few words or an identifier)",
                p.query.len()
            );
        }
        if p.limit == 0 || p.limit > MAX_SEARCH_LIMIT {
            bail!("limit must be between 1 and {MAX_SEARCH_LIMIT}");
        }
        let kinds = p.kind.map(|k| k.into_vec()).unwrap_or_default();
        let query = SearchQuery {
            query: &p.query,
            limit: p.limit,
            kinds: &kinds,
            session: p.session.as_deref(),
            since: p.since.as_deref(),
            until: p.until.as_deref(),
            file: p.file.as_deref(),
            agent: p.agent.as_deref(),
            mode: p.mode.as_deref(),
            // the prompt being answered now is no memory
            within_a_turn: true,
            ..SearchQuery::default()
        };
        let projections = self.projections.get(&self.repo)?;
        let found = search::run(&self.repo, projections, &query, Some(&mut self.model))?;
        let hits = &found.hits;
        let levels = &self.repo.config.ranking.levels;
        let mut rows = Vec::with_capacity(hits.len());
        for h in hits {
            let level = standing(projections, &h.id, levels)?.map_or(0, |s| s.level);
            rows.push(compact_hit(h, &p.query, level));
        }
        Ok(json!({
            "query": p.query,
            "mode": found.mode,
            "semantic": found.semantic,
            "note": found.note,
            "hits": rows,
        }))
    }

    /// `memory_get`: each event in full with its session neighbours, as
    /// `memlog show ID --context N --json` prints it.
    pub fn get(&mut self, p: GetParams) -> Result<Value> {
        if p.ids.is_empty() {
            bail!("ids is empty: give the ids of the events to read");
        }
        if p.ids.len() > MAX_GET_IDS {
            bail!("{} ids given; at most {MAX_GET_IDS} per call", p.ids.len());
        }
        if p.context > MAX_GET_CONTEXT {
            bail!("context must be at most {MAX_GET_CONTEXT}");
        }
        let mut found = Vec::with_capacity(p.ids.len());
        let projections = self.projections.get(&self.repo)?;
        let held = memlog_indexer::review::held(projections)?;
        for prefix in &p.ids {
            let id = ids::resolve(projections, prefix)?;
            // what a person has not let an agent have (review), it does
            // not get by asking for it
            if let Some(why) = held.get(&id) {
                bail!(
                    "{} is withheld from agents: {}",
                    id.short(),
                    match why {
                        memlog_indexer::review::Held::Pending => "it waits for a person's review",
                        memlog_indexer::review::Held::Rejected => "it was rejected in review",
                    }
                );
            }
            found.push(event_with_context(projections, &self.repo, &id, p.context)?);
        }
        Ok(json!({ "events": found }))
    }

    /// `memory_timeline`: compact rows in time order.
    pub fn timeline(&mut self, p: TimelineParams) -> Result<Value> {
        if p.session.is_none() && p.since.is_none() && p.until.is_none() {
            bail!("give a session, or a time range (since and/or until)");
        }
        if p.limit == 0 || p.limit > MAX_TIMELINE_LIMIT {
            bail!("limit must be between 1 and {MAX_TIMELINE_LIMIT}");
        }
        let mut kinds = p.kind.map(|k| k.into_vec()).unwrap_or_default();
        for k in &kinds {
            Kind::parse_known(k).map_err(Error::Invalid)?;
        }
        if kinds.is_empty() {
            // a session's start and end rows say nothing the rows between
            // do not, and padded a day's timeline (a field test)
            kinds = Kind::KNOWN
                .iter()
                .filter(|k| !matches!(k, Kind::SessionStart | Kind::SessionEnd))
                .map(|k| k.as_str().to_string())
                .collect();
        }
        let ms = |d: &Option<String>| -> Result<Option<i64>> {
            d.as_deref()
                .map(|s| Ok(time::parse_given(s)?.as_millisecond()))
                .transpose()
        };
        let query = TimelineQuery {
            session: p.session.as_deref(),
            since_ms: ms(&p.since)?,
            until_ms: ms(&p.until)?,
            kinds: &kinds,
            latest: p.since.is_none() && p.until.is_some() && p.session.is_none(),
            limit: p.limit,
        };
        let projections = self.projections()?;
        let withheld = memlog_indexer::review::withheld(projections)?;
        let mut rows = lookup::timeline(projections, &query)?;
        rows.retain(|r| !withheld.contains(&r.event.id));
        let more = rows.len() > p.limit;
        if more {
            if query.latest {
                rows.remove(0);
            } else {
                rows.truncate(p.limit);
            }
        }
        if rows.is_empty()
            && let Some(s) = &p.session
            && !self.session_exists(s)?
        {
            bail!("no session is named {s:?}");
        }
        let with_session = p.session.is_none();
        Ok(json!({
            "session": p.session,
            "rows": rows.iter().map(|r| compact_row(&r.event, with_session)).collect::<Vec<_>>(),
            "more": more,
        }))
    }

    fn session_exists(&mut self, session: &str) -> Result<bool> {
        let p = self.projections()?;
        memlog_indexer::overview::session_exists(p, session).context("reading the index")
    }

    /// `memory_remember`: a note or fact appended to this server's session
    /// journal, checked as `memlog extract` checks facts, through the same
    /// privacy filter as every other write.
    pub fn remember(&mut self, p: RememberParams) -> Result<Value> {
        let kind = match p.kind {
            RememberKind::Note => Kind::Note,
            RememberKind::Fact => Kind::Fact,
        };
        let projections = self.projections.get(&self.repo)?;
        let done = facts::remember(
            &self.repo,
            projections,
            &Remember {
                kind,
                client: "mcp",
                session: &self.session,
                proposal: Proposal {
                    text: &p.text,
                    quote: p.quote.as_deref(),
                    evidence: &p.evidence,
                    supersedes: &p.supersedes,
                    contradicts: &p.contradicts,
                },
                personal: p.personal,
            },
        )?;
        self.remembered += 1;
        let (event, report) = (done.event, done.report);
        Ok(json!({
            "id": event.id,
            "short_id": event.id.short(),
            "kind": event.kind.as_str(),
            "session": event.session,
            "evidence": done.evidence,
            "aligned": event.body.contains_key("span"),
            // a fact waits for a person's review when `learn.review` says so
            "pending": event.body.contains_key("review"),
            "private_spans_removed": report.private_spans,
            "secrets_redacted": report.redactions,
            "warnings": report.warnings,
        }))
    }

    /// `memory_forget`: exactly `memlog forget`.
    pub fn forget(&mut self, p: ForgetParams) -> Result<Value> {
        let request = ForgetRequest {
            ids: p.ids,
            session: p.session,
            before: p.before,
            reason: p.reason,
        };
        // A model (or a text it read) may not empty the memory: past a
        // handful of events, forgetting is the user's to do.
        let plan = plan(&self.repo, &request)?;
        let hidden = plan.hidden.len();
        if hidden > MAX_FORGET {
            bail!(
                "this would hide {hidden} events; a model forgets at most {MAX_FORGET} at once. \
                 Ask the user to run `memlog forget` (with --dry-run first) if it is meant"
            );
        }
        self.repo.ensure_dirs()?;
        let forgotten = record(&self.repo, &request, plan)?;
        Ok(serde_json::to_value(forgotten)?)
    }

    /// `memory_reinforce`: exactly `memlog reinforce`.
    pub fn reinforce(&mut self, p: ReinforceParams) -> Result<Value> {
        if p.ids.is_empty() {
            bail!("ids is empty: name the memories that helped or misled");
        }
        self.repo.ensure_dirs()?;
        let success = matches!(p.outcome, Outcome::Success);
        let done = memlog_ops::forget::reinforce(&self.repo, &p.ids, success)?;
        Ok(serde_json::to_value(done)?)
    }

    /// `memory_add_rule`: exactly `memlog rules add`.
    pub fn add_rule(&mut self, p: AddRuleParams) -> Result<Value> {
        self.repo.ensure_dirs()?;
        let added = memlog_ops::rules::add(
            &self.repo,
            &memlog_ops::rules::Promotion {
                rule_kind: &p.kind,
                text: &p.text,
                evidence: &p.evidence,
                supersedes: &p.supersedes,
                contradicts: &p.contradicts,
            },
        )?;
        Ok(serde_json::to_value(added)?)
    }

    /// `memory_tasks`: tasks that are not done, most recently updated
    /// first.
    pub fn tasks(&mut self, p: TasksParams) -> Result<Value> {
        if p.limit == 0 || p.limit > MAX_TASKS_LIMIT {
            bail!("limit must be between 1 and {MAX_TASKS_LIMIT}");
        }
        // the fold's tasks (shared with `memlog tasks`); a status is taken
        // as the state machine names it (`completed` is `done`)
        let wanted_status = p.status.as_deref().map(|s| Status::parse(s).ok_or(s));
        let wanted: Vec<_> = memlog_indexer::tasks::tasks(self.projections()?)?
            .into_iter()
            .filter(|t| match &wanted_status {
                Some(Ok(s)) => Status::parse(&t.status) == Some(*s),
                Some(Err(s)) => t.status == *s,
                None => t.is_open(),
            })
            .collect();
        let more = wanted.len() > p.limit;
        let tasks: Vec<Value> = wanted
            .iter()
            .take(p.limit)
            .map(|t| {
                let mut row = Map::new();
                row.insert("key".into(), json!(t.key()));
                row.insert("title".into(), json!(t.title));
                row.insert("status".into(), json!(t.status));
                if let Some(pr) = &t.priority {
                    row.insert("priority".into(), json!(pr));
                }
                if !t.blocked_by.is_empty() {
                    row.insert("blocked_by".into(), json!(t.blocked_by));
                }
                row.insert("updated".into(), json!(time::short(&t.updated)));
                row.insert("session".into(), json!(t.session));
                row.insert("last_event".into(), json!(id::short(&t.last_event)));
                Value::Object(row)
            })
            .collect();
        Ok(json!({ "tasks": tasks, "more": more }))
    }

    /// `memory_task_add`: exactly `memlog task add --json`.
    pub fn task_add(&mut self, p: TaskAddParams) -> Result<Value> {
        self.repo.ensure_dirs()?;
        memlog_ops::tasks::add(&self.repo, &p.title, p.priority, "mcp")
    }

    /// `memory_task_update`: exactly `memlog task set --json`; a change the
    /// state machine refuses is an error saying why (and recorded).
    pub fn task_update(&mut self, p: TaskUpdateParams) -> Result<Value> {
        self.repo.ensure_dirs()?;
        let change = memlog_ops::tasks::Change {
            task: &p.task,
            status: p.status.as_deref(),
            blockers: &p.blockers,
            suggest: p.suggest,
            source: "mcp",
        };
        match memlog_ops::tasks::set(&self.repo, &change)? {
            memlog_ops::tasks::Changed::Done(task) => Ok(task),
            memlog_ops::tasks::Changed::Refused { task, reason } => {
                bail!("{task}: {reason} (refused, and recorded as task_transition_rejected)")
            }
        }
    }

    /// `memory_stats`: exactly `memlog stats --json`.
    pub fn stats(&mut self) -> Result<Value> {
        let p = self.projections.get(&self.repo)?;
        stats_of(&self.repo, p)
    }

    /// Seals what this server remembered into one commit, if anything.
    /// Returns the commit.
    pub fn seal(&mut self) -> Result<Option<String>> {
        if self.remembered == 0 {
            return Ok(None);
        }
        let report = seal_journals(&self.repo, &JournalSelection::Session(self.session.clone()))?;
        self.remembered = 0;
        Ok(report.sealed.into_iter().find_map(|s| s.commit))
    }
}

/// A search hit in about 50-100 tokens: enough to decide whether to read
/// the whole event with `memory_get`.
/// `level` (docs/DESIGN.md §8) is given for memories (L1 and up) only.
fn compact_hit(h: &Hit, query: &str, level: u8) -> Value {
    let headline = h.preview(query, HEADLINE_CHARS);
    let mut hit = json!({
        "short_id": id::short(&h.id),
        "id": h.id,
        "date": time::short(&h.ts),
        "kind": h.kind,
        "session": h.session,
        "headline": if headline.is_empty() { format!("({})", h.kind) } else { headline },
        "score": (f64::from(h.score) * 1000.0).round() / 1000.0,
    });
    if level > 0 {
        hit["level"] = json!(level);
    }
    // said, so that the agent's hook reading the answer back knows
    if h.meta.as_object().is_some_and(scope::is_personal) {
        hit["personal"] = json!(true);
    }
    hit
}

/// A timeline row: like a hit, without a score.
fn compact_row(e: &Event, with_session: bool) -> Value {
    let headline = e.headline(HEADLINE_CHARS);
    let mut row = Map::new();
    row.insert("short_id".into(), json!(e.id.short()));
    row.insert("id".into(), json!(e.id));
    row.insert("date".into(), json!(time::short(&e.ts)));
    row.insert("kind".into(), json!(e.kind.as_str()));
    if scope::is_personal(&e.meta) {
        row.insert("personal".into(), json!(true));
    }
    if with_session {
        row.insert("session".into(), json!(e.session));
    }
    row.insert(
        "headline".into(),
        json!(if headline.is_empty() {
            format!("({})", e.kind)
        } else {
            headline
        }),
    );
    Value::Object(row)
}
