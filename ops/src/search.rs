//! The one search recipe: from a front-end's arguments (CLI flags, an MCP
//! tool's parameters, the viewer's query string) to ranked hits — the
//! checked request, the query's vector when semantic search is on (a kept
//! model, else a running `memlog watch`'s, else, one-shot, the distilled
//! one, else one loaded for the query),
//! the concept scope and the agent filter — so that the three give the
//! same hits for the same arguments. A one-shot command runs it with
//! [`one_shot`]; a server keeps its projections and model and calls [`run`].

use memlog_format::config::Fusion;
use memlog_format::{EventId, Kind, time};
use memlog_indexer::Projections;
use memlog_indexer::embed::ModelEmbedder;
use memlog_indexer::fts::Filters;
use memlog_indexer::search::{Hit, SearchMode, SearchRequest, search};
use memlog_indexer::vectors::VectorAccess;
use memlog_store::Repo;

use crate::bail;
use crate::error::{Error, Result};
use crate::{concepts, semantic, workspace};

/// Longest query accepted by the servers (MCP, viewer): a search is for
/// words, not documents, and the full-text query grows with every term.
pub const MAX_QUERY_BYTES: usize = 8 * 1024;

/// A search as a front-end received it (unchecked).
#[derive(Clone, Copy, Debug, Default)]
pub struct SearchQuery<'a> {
    /// What to look for.
    pub query: &'a str,
    /// Number of results.
    pub limit: usize,
    /// Only events of these kinds.
    pub kinds: &'a [String],
    /// Only events of this session.
    pub session: Option<&'a str>,
    /// Only events at or after this date or time.
    pub since: Option<&'a str>,
    /// Only events before this date or time.
    pub until: Option<&'a str>,
    /// Only events that touched or mention this file (any spelling of its
    /// path).
    pub file: Option<&'a str>,
    /// Only events of this concept's sessions and facts.
    pub concept: Option<&'a str>,
    /// Only events this agent recorded (any of its names).
    pub agent: Option<&'a str>,
    /// `hybrid` (the default), `fts` or `vector`.
    pub mode: Option<&'a str>,
    /// `weighted` or `rrf` (default: the configuration's).
    pub fusion: Option<&'a str>,
    /// The search is asked within an agent's turn (MCP, or `memlog search`
    /// run by an agent's tool): the prompts live sessions are being
    /// answered on right now are left out, as the prompt hook leaves them
    /// out of recall. The agent's own question came back as a top hit,
    /// above the note that answered it.
    pub within_a_turn: bool,
}

/// What a search found.
#[derive(Clone, Debug)]
pub struct Found {
    /// The hits, best first.
    pub hits: Vec<Hit>,
    /// The mode it ran in.
    pub mode: SearchMode,
    /// Whether the query's meaning ranked too (it had a vector).
    pub semantic: bool,
    /// Why a hybrid search was full-text only, when that should be said.
    pub note: Option<String>,
}

/// The embedding model a server keeps for its searches, loaded at the
/// first semantic search a running `memlog watch` does not answer, so that
/// later queries do not pay its load; or why there is none.
#[derive(Default)]
pub struct KeptModel(Option<Result<ModelEmbedder, String>>);

impl KeptModel {
    /// None loaded yet (for a `static`).
    pub const fn new() -> KeptModel {
        KeptModel(None)
    }
}

/// Runs one search in a one-shot process: the projections brought up to
/// date and opened for it (vectors read by scanning their rows, which
/// costs one search less than loading the graph), the query's vector from
/// a running `memlog watch`, else, in hybrid mode, from the distilled token
/// table, else from the model loaded for this query.
pub fn one_shot(repo: &Repo, query: &SearchQuery<'_>) -> Result<Found> {
    let mut projections = workspace::projections(repo)?;
    if query.mode != Some("fts") {
        projections.load_vectors_as(VectorAccess::Scan);
    }
    let found = run(repo, &projections, query, None);
    // Closing the index (SQLite, a dozen mapped files) cost a one-shot
    // search 4 % of its instructions; the process's exit does it for free.
    std::mem::forget(projections);
    found
}

/// At most this many more hits are asked for, to make up for memories
/// withheld for review.
const MAX_WITHHELD_OVERFETCH: usize = 50;

/// Runs one search over open projections; `model` is the one a server
/// keeps (see [`KeptModel`]), `None` in a one-shot process. Memories
/// withheld for review are left out.
pub fn run(
    repo: &Repo,
    projections: &Projections,
    query: &SearchQuery<'_>,
    model: Option<&mut KeptModel>,
) -> Result<Found> {
    if query.query.trim().is_empty() {
        return Err(Error::Invalid(
            "query is empty: give words to look for".into(),
        ));
    }
    if query.limit == 0 {
        return Err(Error::Invalid(
            "limit is 0: ask for 1 result or more".into(),
        ));
    }
    let file = query.file.map(|f| workspace::file_name(repo, f));
    let mut request = search_request(&SearchQuery {
        file: file.as_deref(),
        ..*query
    })?;
    request.fusion = query.fusion.map(parse_fusion).transpose()?;
    let scope = match query.concept {
        Some(name) => {
            request.limit = query.limit.saturating_mul(concepts::SCOPE_OVERSAMPLE);
            Some(concepts::Scope::of(projections, name)?)
        }
        None => None,
    };
    if query.agent.is_some() {
        request.limit = request.limit.saturating_mul(AGENT_OVERFETCH);
    }
    // Memories held for review, or rejected, are given to no agent, and an
    // agent searches too (MCP, or `memlog search` in its shell): they are
    // left out, as from injection; `memlog review` lists them.
    let mut withheld = memlog_indexer::review::withheld(projections)?;
    if query.within_a_turn {
        withheld.extend(prompts_in_progress(repo)?);
    }
    request.limit = request
        .limit
        .saturating_add(withheld.len().min(MAX_WITHHELD_OVERFETCH));
    let note = with_query_vector(repo, projections, &mut request, query.mode, model)?;
    let mut hits = search(projections, &repo.config.ranking, &request)?;
    hits.retain(|h| !withheld.contains(&h.id));
    if let Some(scope) = &scope {
        hits.retain(|h| scope.contains(&h.id, &h.session));
        hits.truncate(query.limit);
    }
    if let Some(agent) = query.agent {
        keep_agent(&mut hits, agent, query.limit);
    }
    hits.truncate(query.limit);
    Ok(Found {
        hits,
        mode: request.mode,
        semantic: note.is_none() && request.query_vector.is_some(),
        note,
    })
}

/// The ids of the prompts live sessions are being answered on right now.
fn prompts_in_progress(repo: &Repo) -> Result<Vec<EventId>> {
    let mut asked = Vec::new();
    for journal in memlog_store::journal::list(&repo.journal_dir())? {
        for id in memlog_store::journal::prompts_in_progress(&journal)? {
            asked.extend(EventId::parse(&id).ok());
        }
    }
    Ok(asked)
}

/// Checks search arguments (known kinds, readable dates) and makes the
/// request; `file` as the projections name it.
fn search_request(args: &SearchQuery<'_>) -> Result<SearchRequest> {
    for k in args.kinds {
        Kind::parse_known(k).map_err(Error::Invalid)?;
    }
    let ms = |d: Option<&str>| -> Result<Option<i64>> {
        d.map(|s| Ok(time::parse_given(s)?.as_millisecond()))
            .transpose()
    };
    Ok(SearchRequest {
        query: args.query.to_string(),
        limit: args.limit,
        filters: Filters {
            kinds: args.kinds.to_vec(),
            session: args.session.map(str::to_string),
            since_ms: ms(args.since)?,
            until_ms: ms(args.until)?,
            file: args.file.map(str::to_string),
            exclude_session: None,
        },
        ..Default::default()
    })
}

/// `weighted` or `rrf`.
fn parse_fusion(s: &str) -> Result<Fusion> {
    match s {
        "weighted" => Ok(Fusion::Weighted),
        "rrf" => Ok(Fusion::Rrf),
        other => bail!("unknown fusion {other:?} (expected weighted or rrf)"),
    }
}

/// Sets the request's mode (`None`: hybrid) and, unless it is fts, the
/// query's vector. Returns why a hybrid search is full-text only, when
/// that should be said: an explicit hybrid, or vectors that exist but
/// cannot be used. Vector mode without vectors is an error.
fn with_query_vector(
    repo: &Repo,
    projections: &Projections,
    request: &mut SearchRequest,
    mode: Option<&str>,
    model: Option<&mut KeptModel>,
) -> Result<Option<String>> {
    request.mode = match mode {
        Some(m) => SearchMode::parse(m)?,
        None => SearchMode::Hybrid,
    };
    if request.mode == SearchMode::Fts {
        return Ok(None);
    }
    match query_vector(repo, projections, request, model) {
        Ok((v, distilled)) => {
            request.query_vector = Some(v);
            request.distilled = distilled;
            Ok(None)
        }
        Err(reason) if request.mode == SearchMode::Vector => {
            bail!("vector search is not available: {reason}")
        }
        Err(reason) => Ok((mode.is_some() || projections.vectors().is_some()).then_some(reason)),
    }
}

/// The query's vector for `request` over `p`, or why the search must do
/// without: no vectors, no model, or a model other than the one that made
/// the vectors. The kept model when it is loaded; else a running `memlog
/// watch`'s; else, in a one-shot hybrid search, the distilled one the hook
/// ranks with (loading the model would cost it half a second); else the
/// model, loaded and kept (or, one-shot, loaded for this query). Says
/// whether the vector is the distilled one.
fn query_vector(
    repo: &Repo,
    p: &Projections,
    request: &SearchRequest,
    kept: Option<&mut KeptModel>,
) -> Result<(Vec<f32>, bool), String> {
    let query = request.query.as_str();
    let Some(vectors) = p.vectors() else {
        return Err(semantic::off_reason(repo));
    };
    let loaded_already = matches!(&kept, Some(KeptModel(Some(Ok(_)))));
    if !loaded_already
        && let Some((model, v)) = crate::warm::ask_embedding(repo, query)
        && model == vectors.meta.model
    {
        return Ok((v, false));
    }
    // `--mode vector` asks for the model's own ranking; a hybrid search
    // also ranks by full text, and the distilled vector ranks as well there
    // (the LoCoMo bench's hybrid-distilled row).
    if kept.is_none()
        && request.mode == SearchMode::Hybrid
        && let Ok(Some(v)) = memlog_indexer::context::distilled_query(p, query)
    {
        return Ok((v, true));
    }
    // a model kept between queries leaves its arena off (see
    // `ModelEmbedder::load_kept`)
    let load = |kept: bool| {
        let loaded = if kept {
            semantic::load_model_kept(repo)
        } else {
            semantic::load_model(repo)
        };
        match loaded {
            Ok(Some(m)) => Ok(m),
            Ok(None) => Err(semantic::off_reason(repo)),
            Err(e) => Err(crate::error::chain(&e)),
        }
    };
    let mut one_shot;
    let model: &mut ModelEmbedder = match kept {
        Some(KeptModel(slot)) => match slot.get_or_insert_with(|| load(true)) {
            Ok(m) => m,
            Err(reason) => return Err(reason.clone()),
        },
        None => {
            one_shot = load(false)?;
            &mut one_shot
        }
    };
    semantic::embed_query(model, &vectors.meta.model, query).map(|v| (v, false))
}

/// How many times more hits a search asks the index for when it keeps only
/// one agent's: the agent filter runs on the ranked hits (the index does not
/// know agents), so a few extra give it room.
const AGENT_OVERFETCH: usize = 5;

/// The `meta.client` an agent filter names: an agent memlog knows, by any of
/// its names (`claude`, `codex`, `gemini`…), else the text as given.
pub fn client_name(agent: &str) -> String {
    memlog_agents::agent_named(agent)
        .map(|a| a.client().to_string())
        .unwrap_or_else(|| agent.to_string())
}

/// Keeps the hits `agent` recorded (their `meta.client`), at most `limit`.
fn keep_agent(hits: &mut Vec<Hit>, agent: &str, limit: usize) {
    let client = client_name(agent);
    hits.retain(|h| h.meta.get("client").and_then(|c| c.as_str()) == Some(client.as_str()));
    hits.truncate(limit);
}
