use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use memlog_format::config::Fusion;
use memlog_format::{Kind, time};
use memlog_indexer::Projections;
use memlog_indexer::embed::ModelEmbedder;
use memlog_indexer::fts::Filters;
use memlog_indexer::search::{SearchMode, SearchRequest, search};
use memlog_store::Repo;
use serde_json::json;

use crate::{output, workspace};

/// Search memory.
///
/// Hybrid search over every live event (sealed or still in a journal):
/// full text, code-aware (`user` finds `getUserById`, exact identifiers rank
/// first), and, when the embedding model is installed, semantic similarity
/// (a paraphrase finds what it means), ranked with recency and importance
/// as `.memlog.yaml` says. Without the model it is full-text search. Rows are
/// compact — id, date, kind, session, first line, score; `memlog show ID`
/// gives the whole event and its neighbours.
#[derive(Args)]
pub struct SearchArgs {
    /// What to look for.
    query: String,

    /// Number of results.
    #[arg(short = 'n', long, default_value_t = 10)]
    limit: usize,

    /// Only events of this kind (repeatable).
    #[arg(long)]
    kind: Vec<String>,

    /// Only events of this session.
    #[arg(long)]
    session: Option<String>,

    /// Only events at or after this date or time (2026-11-01, RFC 3339).
    #[arg(long, value_name = "DATE")]
    since: Option<String>,

    /// Only events before this date or time.
    #[arg(long, value_name = "DATE")]
    until: Option<String>,

    /// Only events that touched or mention this file (full path or name).
    #[arg(long, value_name = "PATH")]
    file: Option<String>,

    /// hybrid (full text and vectors), fts (full text only) or vector
    /// (semantic only). Default: hybrid.
    #[arg(long, value_name = "MODE")]
    mode: Option<String>,

    /// How full-text and semantic relevance combine: weighted (the ranking
    /// weights) or rrf (reciprocal-rank fusion). Default: `ranking.fusion`.
    #[arg(long, value_name = "FUSION")]
    fusion: Option<String>,

    /// Print {"query", "hits": [...]} as JSON.
    #[arg(long)]
    json: bool,
}

pub fn cmd_search(dir: &Path, args: SearchArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open(dir)?;
    let mut request = search_request(
        &args.query,
        args.limit,
        &args.kind,
        args.session.as_deref(),
        args.since.as_deref(),
        args.until.as_deref(),
        args.file.as_deref(),
    )?;
    request.fusion = args.fusion.as_deref().map(parse_fusion).transpose()?;
    let mut projections = workspace::projections(&repo)?;
    if args.mode.as_deref() != Some("fts") {
        // one search: scanning the rows costs less than loading the graph
        projections.load_vectors_as(memlog_indexer::vectors::VectorAccess::Scan);
    }
    let semantic = with_query_vector(
        &repo,
        &projections,
        &mut request,
        args.mode.as_deref(),
        None,
    )?;
    if let Some(note) = &semantic {
        eprintln!("note: full-text search only: {note}");
    }
    let hits = search(&projections, &repo.config.ranking, &request)?;
    if args.json {
        output::print_json(&json!({
            "query": args.query,
            "mode": request.mode,
            "semantic": semantic.is_none() && request.query_vector.is_some(),
            "hits": hits
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    if hits.is_empty() {
        println!("no matches for {:?}", args.query);
    }
    for h in &hits {
        println!(
            "{}  {}  {:<16}  {:<20}  {:.3}  {}",
            &h.id[..12],
            output::short_time(&h.ts),
            h.kind,
            memlog_format::event::truncate_chars(&h.session, 20),
            h.score,
            h.headline(90)
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn parse_fusion(s: &str) -> anyhow::Result<Fusion> {
    match s {
        "weighted" => Ok(Fusion::Weighted),
        "rrf" => Ok(Fusion::Rrf),
        other => anyhow::bail!("unknown fusion {other:?} (expected weighted or rrf)"),
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
) -> anyhow::Result<Option<String>> {
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
            anyhow::bail!("vector search is not available: {reason}")
        }
        Err(reason) => Ok((mode.is_some() || projections.vectors.is_some()).then_some(reason)),
    }
}

/// Checks search arguments (known kinds, readable dates) and makes the
/// request: shared by `memlog search` and the MCP tool `memory_search`, so
/// that the two give the same hits for the same arguments.
pub fn search_request(
    query: &str,
    limit: usize,
    kinds: &[String],
    session: Option<&str>,
    since: Option<&str>,
    until: Option<&str>,
    file: Option<&str>,
) -> anyhow::Result<SearchRequest> {
    for k in kinds {
        Kind::parse_known(k).map_err(anyhow::Error::msg)?;
    }
    let ms = |d: Option<&str>| -> anyhow::Result<Option<i64>> {
        d.map(|s| Ok(time::parse(s)?.as_millisecond())).transpose()
    };
    Ok(SearchRequest {
        query: query.to_string(),
        limit,
        filters: Filters {
            kinds: kinds.to_vec(),
            session: session.map(str::to_string),
            since_ms: ms(since)?,
            until_ms: ms(until)?,
            file: file.map(str::to_string),
            exclude_session: None,
        },
        ..Default::default()
    })
}
