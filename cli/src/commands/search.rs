use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use memlog_format::{Kind, time};
use memlog_indexer::fts::Filters;
use memlog_indexer::search::{SearchRequest, search};
use serde_json::json;

use crate::{output, workspace};

/// Search memory.
///
/// Full-text search over every live event (sealed or still in a journal),
/// code-aware (`user` finds `getUserById`, exact identifiers rank first),
/// re-ranked by recency and importance as `.memlog.yaml` says. Rows are
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

    /// Print {"query", "hits": [...]} as JSON.
    #[arg(long)]
    json: bool,
}

pub fn cmd_search(dir: &Path, args: SearchArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open(dir)?;
    let request = search_request(
        &args.query,
        args.limit,
        &args.kind,
        args.session.as_deref(),
        args.since.as_deref(),
        args.until.as_deref(),
        args.file.as_deref(),
    )?;
    let projections = workspace::projections(&repo)?;
    let hits = search(&projections, &repo.config.ranking, &request)?;
    if args.json {
        output::print_json(&json!({ "query": args.query, "hits": hits }))?;
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
    })
}
