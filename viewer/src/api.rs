//! What each `/api/…` route answers (documented in docs/API.md).
//!
//! These are blocking functions over one [`Site`]: a repository and its
//! projections, kept open by each thread of tokio's blocking pool and
//! brought up to date before each request with the cheap freshness check
//! every read command uses. Where the CLI has a `--json` output, the route
//! answers the same shape, built by the same code: `memlog search`,
//! `show`, `log`, `diff`, `stats` and `forget`.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use hyper::StatusCode;
use memlog_format::IdPrefix;
use memlog_indexer::Projections;
use memlog_indexer::lookup::{self, SessionCursor, SessionPage};
use memlog_indexer::overview::{self, Direction, EdgeRow};
use memlog_ops::error::chain;
use memlog_ops::forget::{ForgetRequest, forget as record_forget};
use memlog_ops::ids;
use memlog_ops::search::{self, KeptModel, MAX_QUERY_BYTES, SearchQuery};
use memlog_ops::show::event_with_context;
use memlog_ops::workspace::{self, KeptProjections};
use memlog_ops::{diff, sessions, stats};
use memlog_store::log::Log;
use memlog_store::{IndexLayout, ObjectId, Repo};
use serde::Serialize;
use serde_json::{Value, json};

/// Query parameters, each with every value it was given.
pub type Query = HashMap<String, Vec<String>>;

/// An answer that is not a success: a status and a message for people.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
        }
    }
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }
    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, message)
    }
    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, message)
    }
}

/// Failures of memlog itself (reading the log, the index) are the
/// server's; the whole chain of causes is told.
impl From<memlog_store::Error> for ApiError {
    fn from(e: memlog_store::Error) -> ApiError {
        ApiError::internal(chain(&e))
    }
}

impl From<serde_json::Error> for ApiError {
    fn from(e: serde_json::Error) -> ApiError {
        ApiError::internal(e.to_string())
    }
}

impl From<memlog_indexer::Error> for ApiError {
    fn from(e: memlog_indexer::Error) -> ApiError {
        ApiError::internal(e.to_string())
    }
}

impl From<memlog_ops::Error> for ApiError {
    fn from(e: memlog_ops::Error) -> ApiError {
        ApiError::internal(chain(&e))
    }
}

/// One thread's open repository and projections.
pub struct Site {
    repo: Repo,
    projections: KeptProjections,
    /// How each session was sealed, as of the tips (shared, personal) it
    /// was read at.
    seals: Option<(Tips, HashMap<String, Seal>)>,
}

type Tips = (Option<ObjectId>, Option<ObjectId>);

/// The commit that sealed a session, in the shared log or the personal one.
#[derive(Clone)]
struct Seal {
    commit: String,
    /// Sealed in the personal store only: kept on this machine.
    personal: bool,
}

thread_local! {
    static SITE: RefCell<Option<Site>> = const { RefCell::new(None) };
}

/// Runs `f` on this thread's site, opening it on first use. A call that
/// fails leaves the projections to be opened afresh next time.
pub fn with_site<T>(
    dir: &Path,
    f: impl FnOnce(&mut Site) -> Result<T, ApiError>,
) -> Result<T, ApiError> {
    SITE.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            *slot = Some(Site {
                repo: workspace::open(dir)?,
                projections: KeptProjections::default(),
                seals: None,
            });
        }
        let Some(site) = slot.as_mut() else {
            return Err(ApiError::internal("the repository could not be opened"));
        };
        let result = f(site);
        if result
            .as_ref()
            .is_err_and(|e| e.status == StatusCode::INTERNAL_SERVER_ERROR)
        {
            site.projections.reset();
        }
        result
    })
}

impl Site {
    fn projections(&mut self) -> Result<&Projections, ApiError> {
        Ok(self.projections.get(&self.repo)?)
    }

    /// Session → how it was sealed, read again when a tip moved. A
    /// personal session is sealed in the personal store: shown as live, it
    /// looked about to be shared (a field test).
    fn seals(&mut self) -> Result<&HashMap<String, Seal>, ApiError> {
        let shared = Log::new(&self.repo);
        let personal = Log::of(&self.repo, memlog_format::scope::Scope::Personal);
        let tips = (shared.tip()?, personal.tip()?);
        if self.seals.as_ref().is_none_or(|(at, _)| *at != tips) {
            let mut map = HashMap::new();
            // the shared seal first: a session split between the two logs
            // is a shared one that kept some events here
            for log in [&shared, &personal] {
                for c in log.commits()? {
                    if let (Some(s), true) = (c.session, c.parents.len() <= 1) {
                        // Newest first: a session sealed twice keeps its last seal.
                        map.entry(s).or_insert_with(|| Seal {
                            commit: c.id.to_string(),
                            personal: log.scope() == memlog_format::scope::Scope::Personal,
                        });
                    }
                }
            }
            self.seals = Some((tips, map));
        }
        match &self.seals {
            Some((_, map)) => Ok(map),
            None => Err(ApiError::internal("the log could not be read")),
        }
    }
}

/// Routes a `GET /api/<segments>`.
pub fn get(site: &mut Site, segments: &[String], query: &Query) -> Result<Value, ApiError> {
    let parts: Vec<&str> = segments.iter().map(String::as_str).collect();
    match parts.as_slice() {
        ["sessions"] => sessions(site, query),
        ["sessions", id] => session(site, id, query),
        ["events", id] => event(site, id, query),
        ["search"] => search_hits(site, query),
        ["tasks"] => tasks(site),
        ["learned"] => learned(site),
        ["queue"] => queue(site),
        ["entities", id] => entity(site, id),
        ["diff"] => review(site, query),
        ["stats"] => Ok(stats::stats(&site.repo)?),
        ["index"] => index(site),
        _ => Err(ApiError::not_found(format!(
            "no API route /api/{}",
            segments.join("/")
        ))),
    }
}

/// `GET /api/config`: what the pages need to know about this server and
/// repository: whether forget is allowed, and the ranking weights (to
/// show why a hit ranked).
pub fn config(site: &mut Site, allow_forget: bool) -> Result<Value, ApiError> {
    Ok(json!({
        "allow_forget": allow_forget,
        "project": site.repo.project(),
        "ref": site.repo.ref_name(),
        "ranking": site.repo.config.ranking,
    }))
}

fn one<'q>(query: &'q Query, key: &str) -> Option<&'q str> {
    query
        .get(key)
        .and_then(|v| v.first())
        .map(String::as_str)
        .filter(|s| !s.is_empty())
}

fn number(query: &Query, key: &str, default: usize, max: usize) -> Result<usize, ApiError> {
    match one(query, key) {
        None => Ok(default),
        Some(s) => match s.parse::<usize>() {
            Ok(n) if (1..=max).contains(&n) => Ok(n),
            _ => Err(ApiError::bad_request(format!(
                "{key} must be a number from 1 to {max}, not {s:?}"
            ))),
        },
    }
}

const MAX_SESSIONS_PAGE: usize = 200;
/// Events of a session without a prompt read for its subject.
const SUBJECT_EVENTS: usize = 5;

/// `GET /api/sessions?limit=N&before=CURSOR`: the timeline, newest first,
/// in the shape of `memlog log --json` plus `next`, the cursor of the
/// following page (`null` at the end). Read from the index's `sessions`
/// table, so a page costs one indexed query whatever the log's size.
fn sessions(site: &mut Site, query: &Query) -> Result<Value, ApiError> {
    let limit = number(query, "limit", 50, MAX_SESSIONS_PAGE)?;
    // The cursor is the last row's `started|session`.
    let (before_ts, before_session) = match one(query, "before") {
        Some(c) => match c.split_once('|') {
            Some((ts, s)) => (Some(ts.to_string()), Some(s.to_string())),
            None => return Err(ApiError::bad_request(format!("{c:?} is not a cursor"))),
        },
        None => (None, None),
    };
    let before = before_ts.as_deref().zip(before_session.as_deref());
    let (mut lines, more) = sessions::page(site.projections()?, before, limit)?;
    let seals: Vec<Option<Seal>> = {
        let all = site.seals()?;
        lines.iter().map(|l| all.get(&l.session).cloned()).collect()
    };
    for (line, seal) in lines.iter_mut().zip(seals) {
        if let Some(seal) = seal {
            line.commit = Some(seal.commit);
            line.personal = seal.personal;
        }
        // what a session without a prompt is about (a note, a forget),
        // from what the index shows of it: never a forgotten text
        if line.first_prompt.is_none() {
            let first = lookup::session_page(
                site.projections()?,
                &line.session,
                SessionPage::After(None, SUBJECT_EVENTS),
            )?;
            line.subject = first
                .iter()
                .find(|r| r.event.text().is_some_and(|t| !t.trim().is_empty()))
                .map(|r| r.event.headline(sessions::FIRST_PROMPT_CHARS));
        }
    }
    let next = match (more, lines.last()) {
        (true, Some(last)) => Some(format!("{}|{}", last.started, last.session)),
        _ => None,
    };
    Ok(json!({ "sessions": lines, "next": next }))
}

/// A task touched by a session, on its page.
#[derive(Serialize)]
struct TouchedTask {
    key: String,
    title: String,
    status: String,
}

/// Events a session page holds by default, and at most.
const SESSION_PAGE: usize = 200;
const MAX_SESSION_PAGE: usize = 500;

/// A session page's cursor: `ts|seq|id` of the event it starts after.
fn session_cursor(cursor: &str) -> Result<SessionCursor, ApiError> {
    let mut parts = cursor.splitn(3, '|');
    match (
        parts.next(),
        parts.next().map(str::parse::<u64>),
        parts.next(),
    ) {
        (Some(ts), Some(Ok(seq)), Some(id)) if !ts.is_empty() && !id.is_empty() => {
            Ok(SessionCursor {
                ts: ts.to_string(),
                seq,
                id: id.to_string(),
            })
        }
        _ => Err(ApiError::bad_request(format!(
            "{cursor:?} is not a session cursor (the `next` of a page)"
        ))),
    }
}

/// `GET /api/sessions/ID?limit=N&after=CURSOR`: a page of `memlog show
/// SESSION --json` (`session`, `events` in order: at most `limit`, 1–500,
/// default 200, after the cursor) with `next`, the cursor of the following
/// page (`null` on the last), `summary` (the session's counts and span,
/// `null` until the index has it), `commit` (the seal, `null` while live),
/// the `tasks` it touched and the `entities` it touched or mentioned. A
/// page costs one indexed query, whatever the session's size.
fn session(site: &mut Site, id: &str, query: &Query) -> Result<Value, ApiError> {
    let limit = number(query, "limit", SESSION_PAGE, MAX_SESSION_PAGE)?;
    let after = one(query, "after").map(session_cursor).transpose()?;
    let mut rows = lookup::session_page(
        site.projections()?,
        id,
        SessionPage::After(after.as_ref(), limit + 1),
    )?;
    if rows.is_empty() && after.is_none() {
        return Err(ApiError::not_found(format!(
            "no session is named {id:?} (unknown, or forgotten)"
        )));
    }
    let more = rows.len() > limit;
    rows.truncate(limit);
    let next = rows.last().filter(|_| more).map(|s| {
        let c = SessionCursor::of(&s.event);
        format!("{}|{}|{}", c.ts, c.seq, c.id)
    });
    let summary = overview::session(site.projections()?, id)?.map(|r| {
        json!({
            "events": r.events,
            "prompts": r.prompts,
            "tool_calls": r.tool_calls,
            "first_ts": r.first_ts,
            "last_ts": r.last_ts,
        })
    });
    let seal = site.seals()?.get(id).cloned();
    let (commit, personal) = (
        seal.as_ref().map(|s| s.commit.clone()),
        seal.is_some_and(|s| s.personal),
    );
    let events = workspace::exact_events(&site.repo, rows)?;
    let entities = edges(
        site.projections()?,
        &format!("session:{id}"),
        Direction::Out,
    )?;
    // The tasks the session touched, as the fold resolved them (a reworded
    // todo matched to a task names an alias, not the task's key).
    let touched: BTreeSet<&str> = entities
        .iter()
        .filter(|e| e.rel == "mentions" && e.other.starts_with("task:"))
        .map(|e| e.other.as_str())
        .collect();
    // The fold reads every task event: only for sessions that have some.
    let tasks: Vec<TouchedTask> = if touched.is_empty() {
        Vec::new()
    } else {
        memlog_indexer::tasks::tasks(site.projections()?)?
            .into_iter()
            .filter(|t| touched.contains(t.entity_id.as_str()))
            .map(|t| TouchedTask {
                key: t.key().to_string(),
                title: t.title,
                status: t.status,
            })
            .collect()
    };
    Ok(json!({
        "session": id,
        "events": events.iter().map(|e| e.to_value(true)).collect::<Vec<_>>(),
        "next": next,
        "summary": summary,
        "commit": commit,
        "personal": personal,
        "tasks": tasks,
        "entities": entities,
    }))
}

const MAX_CONTEXT: usize = 50;

/// `GET /api/events/ID?context=N`: `memlog show ID --context N --json`.
fn event(site: &mut Site, id: &str, query: &Query) -> Result<Value, ApiError> {
    let context = match one(query, "context") {
        None => 0,
        Some(s) => match s.parse::<usize>() {
            Ok(n) if n <= MAX_CONTEXT => n,
            _ => {
                return Err(ApiError::bad_request(format!(
                    "context must be a number from 0 to {MAX_CONTEXT}"
                )));
            }
        },
    };
    let prefix = IdPrefix::parse(id).map_err(|e| ApiError::bad_request(e.to_string()))?;
    let p = site.projections.get(&site.repo)?;
    let full = ids::one_of(&prefix, ids::matching(p, &prefix, 3)?)
        .map_err(|e| ApiError::not_found(e.to_string()))?;
    Ok(event_with_context(p, &site.repo, &full, context)?)
}

const MAX_SEARCH_LIMIT: usize = 100;

/// `GET /api/search?q=…&limit=&kind=&session=&since=&until=&file=&agent=`:
/// `memlog search --json` for the same arguments (same request builder,
/// same ranking), hits with their score parts.
fn search_hits(site: &mut Site, query: &Query) -> Result<Value, ApiError> {
    let Some(q) = one(query, "q") else {
        return Err(ApiError::bad_request("q is empty: give words to look for"));
    };
    if q.len() > MAX_QUERY_BYTES {
        return Err(ApiError::bad_request(format!(
            "the query is {} bytes; keep it under {}",
            q.len(),
            MAX_QUERY_BYTES
        )));
    }
    let limit = number(query, "limit", 20, MAX_SEARCH_LIMIT)?;
    // `kind=a,b` or `kind=a&kind=b`
    let kinds: Vec<String> = query
        .get("kind")
        .into_iter()
        .flatten()
        .flat_map(|k| k.split(','))
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .map(str::to_string)
        .collect();
    let search_query = SearchQuery {
        query: q,
        limit,
        kinds: &kinds,
        session: one(query, "session"),
        since: one(query, "since"),
        until: one(query, "until"),
        file: one(query, "file"),
        agent: one(query, "agent"),
        mode: one(query, "mode"),
        ..SearchQuery::default()
    };
    let p = site.projections.get(&site.repo)?;
    // The CLI's recipe, vectors included: the query's vector comes from a
    // running `memlog watch`, else from one model this server loads once
    // for all its threads (at its first semantic search).
    let found = {
        let mut model = SERVE_MODEL.lock().unwrap_or_else(|e| e.into_inner());
        search::run(&site.repo, p, &search_query, Some(&mut model)).map_err(|e| {
            if e.is_bad_request() {
                ApiError::bad_request(chain(&e))
            } else {
                e.into()
            }
        })?
    };
    Ok(json!({
        "query": q,
        "mode": found.mode,
        "semantic": found.semantic,
        "note": found.note,
        "hits": found.hits
    }))
}

/// The embedding model of this server's searches, shared by its threads
/// (a loaded model holds about 260 MB).
static SERVE_MODEL: std::sync::Mutex<KeptModel> = std::sync::Mutex::new(KeptModel::new());

/// A task on the board: the task entity as `memlog tasks --json` prints
/// it, and its key (the entity id without `task:`).
#[derive(Serialize)]
struct BoardTask {
    key: String,
    #[serde(flatten)]
    task: memlog_indexer::tasks::TaskSummary,
}

/// `GET /api/tasks`: every task entity, most recently changed first, with
/// what blocks it.
fn tasks(site: &mut Site) -> Result<Value, ApiError> {
    let board: Vec<BoardTask> = memlog_indexer::tasks::tasks(site.projections()?)?
        .into_iter()
        .map(|task| BoardTask {
            key: task.key().to_string(),
            task,
        })
        .collect();
    Ok(json!({ "tasks": board }))
}

/// `GET /api/queue`: the review queue, decided memories included, as
/// `memlog review --all --json` lists it.
fn queue(site: &mut Site) -> Result<Value, ApiError> {
    let review = site.repo.config.learn.review;
    let p = site.projections()?;
    Ok(json!({
        "review": review,
        "items": memlog_ops::review::queue(p, true)?,
    }))
}

/// `GET /api/learned`: the rules (retired ones included) and concepts,
/// as `memlog rules --all --json` and `memlog concepts --json` list them,
/// and the candidates the last (background) reflection kept.
fn learned(site: &mut Site) -> Result<Value, ApiError> {
    let (reflected, candidates) = memlog_ops::reflect::kept(&site.repo);
    let p = site.projections()?;
    Ok(json!({
        "reflected": reflected,
        "candidates": candidates,
        "rules": memlog_ops::rules::list(p)?,
        "concepts": memlog_ops::concepts::list(p)?,
    }))
}

const MAX_EDGES: usize = 500;

fn edges(p: &Projections, id: &str, direction: Direction) -> Result<Vec<EdgeRow>, ApiError> {
    Ok(overview::edges(p, id, direction, MAX_EDGES)?)
}

/// `GET /api/entities/ID`: an entity of the graph (`file:src/x.rs`,
/// `session:…`, `issue:owner/repo#1`…) with its edges out and in.
fn entity(site: &mut Site, id: &str) -> Result<Value, ApiError> {
    let id = &workspace::entity_key(&site.repo, id);
    let p = site.projections()?;
    let found = overview::entity(p, id)?;
    let Some(entity) = found else {
        return Err(ApiError::not_found(format!("no entity is named {id:?}")));
    };
    Ok(json!({
        "entity": entity,
        "out": edges(p, id, Direction::Out)?,
        "in": edges(p, id, Direction::In)?,
    }))
}

/// `GET /api/diff?revs=A..B`: `memlog diff A..B --json` (default: what
/// the last seal or sync added).
fn review(site: &mut Site, query: &Query) -> Result<Value, ApiError> {
    let computed = diff::compute(&site.repo, one(query, "revs"))
        .map_err(|e| ApiError::bad_request(chain(&e)))?;
    Ok(serde_json::to_value(computed.document())?)
}

/// `GET /api/index`: what the stats page draws beyond `memlog stats`:
/// live events per day and kind, the index's size on disk, and how fresh
/// it is.
fn index(site: &mut Site) -> Result<Value, ApiError> {
    let tip = Log::new(&site.repo).tip()?.map(|t| t.to_string());
    let repo = &site.repo;
    let p = site.projections.get(repo)?;
    let per_day = overview::events_per_day(p)?;
    let count = |table: &str| overview::table_rows(p, table);
    let fresh = p.is_fresh(repo)?;
    Ok(json!({
        "per_day": per_day,
        "sizes": {
            "fts_bytes": dir_bytes(&IndexLayout::new(p.dir()).fts()),
            "graph_bytes": dir_bytes(p.dir()).saturating_sub(dir_bytes(&IndexLayout::new(p.dir()).fts())),
        },
        "rows": {
            "events": count("events")?,
            "sessions": count("sessions")?,
            "entities": count("entities")?,
            "edges": count("edges")?,
        },
        "freshness": {
            "tip": tip,
            "indexed_commit": p.graph().get_meta("indexed_commit")?,
            "generation": p.graph().get_meta("generation")?,
            "fresh": fresh,
        },
    }))
}

/// Bytes of the files under `dir`.
fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_bytes(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

/// `POST /api/forget`: records a forget exactly as `memlog forget` does
/// and answers what `memlog forget --json` prints.
pub fn forget(site: &mut Site, body: &Value) -> Result<Value, ApiError> {
    let text = |k: &str| body.get(k).and_then(Value::as_str).map(str::to_string);
    let ids = match body.get("ids") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| ApiError::bad_request("ids must be strings"))
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(ApiError::bad_request("ids must be a list of event ids")),
    };
    let request = ForgetRequest {
        ids,
        session: text("session"),
        before: text("before"),
        reason: text("reason"),
    };
    request
        .check()
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    site.repo.ensure_dirs()?;
    let forgotten = record_forget(&site.repo, &request)
        .map_err(|e| ApiError::bad_request(chain(&e)))?
        .ok_or_else(|| {
            ApiError::bad_request(
                "nothing to forget: no event in memory matches (forgotten already?)",
            )
        })?;
    Ok(serde_json::to_value(forgotten)?)
}
