//! Search requests: one path from a front-end's arguments (CLI flags, an
//! MCP tool's parameters, the viewer's query string) to the indexer's
//! [`SearchRequest`], with the query's vector when semantic search is on,
//! so that the three give the same hits for the same arguments.

use memlog_format::config::Fusion;
use memlog_format::{Kind, time};
use memlog_indexer::Projections;
use memlog_indexer::embed::ModelEmbedder;
use memlog_indexer::fts::Filters;
use memlog_indexer::search::{Hit, SearchMode, SearchRequest};
use memlog_store::Repo;

use crate::bail;
use crate::error::{Error, Result};

/// Longest query accepted by the servers (MCP, viewer): a search is for
/// words, not documents, and the full-text query grows with every term.
pub const MAX_QUERY_BYTES: usize = 8 * 1024;

/// The filters of a search, as a front-end received them (unchecked).
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
    /// Only events that touched or mention this file.
    pub file: Option<&'a str>,
}

/// Checks search arguments (known kinds, readable dates) and makes the
/// request.
pub fn search_request(args: SearchQuery<'_>) -> Result<SearchRequest> {
    for k in args.kinds {
        Kind::parse_known(k).map_err(Error::Invalid)?;
    }
    let ms = |d: Option<&str>| -> Result<Option<i64>> {
        d.map(|s| Ok(time::parse(s)?.as_millisecond())).transpose()
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
pub fn parse_fusion(s: &str) -> Result<Fusion> {
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
pub fn with_query_vector(
    repo: &Repo,
    projections: &Projections,
    request: &mut SearchRequest,
    mode: Option<&str>,
    warm: Option<&mut ModelEmbedder>,
) -> Result<Option<String>> {
    request.mode = match mode {
        Some(m) => SearchMode::parse(m)?,
        None => SearchMode::Hybrid,
    };
    if request.mode == SearchMode::Fts {
        return Ok(None);
    }
    match crate::semantic::query_vector(repo, projections, &request.query, warm) {
        Ok(v) => {
            request.query_vector = Some(v);
            Ok(None)
        }
        Err(reason) if request.mode == SearchMode::Vector => {
            bail!("vector search is not available: {reason}")
        }
        Err(reason) => Ok((mode.is_some() || projections.vectors().is_some()).then_some(reason)),
    }
}

/// How many times more hits a search asks the index for when it keeps only
/// one agent's: the agent filter runs on the ranked hits (the index does not
/// know agents), so a few extra give it room.
pub const AGENT_OVERFETCH: usize = 5;

/// The `meta.client` an agent filter names: an agent memlog knows, by any of
/// its names (`claude`, `codex`, `gemini`…), else the text as given.
pub fn client_name(agent: &str) -> String {
    memlog_agents::agent_named(agent)
        .map(|a| a.client().to_string())
        .unwrap_or_else(|| agent.to_string())
}

/// Keeps the hits `agent` recorded (their `meta.client`), at most `limit`.
pub fn keep_agent(hits: &mut Vec<Hit>, agent: &str, limit: usize) {
    let client = client_name(agent);
    hits.retain(|h| h.meta.get("client").and_then(|c| c.as_str()) == Some(client.as_str()));
    hits.truncate(limit);
}
