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
    for k in &args.kind {
        Kind::parse_known(k).map_err(anyhow::Error::msg)?;
    }
    let ms = |d: &Option<String>| -> anyhow::Result<Option<i64>> {
        Ok(match d {
            Some(s) => Some(time::parse(s)?.as_millisecond()),
            None => None,
        })
    };
    let request = SearchRequest {
        query: args.query.clone(),
        limit: args.limit,
        filters: Filters {
            kinds: args.kind.clone(),
            session: args.session.clone(),
            since_ms: ms(&args.since)?,
            until_ms: ms(&args.until)?,
            file: args.file.clone(),
            exclude_session: None,
        },
    };
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
