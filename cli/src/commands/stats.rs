use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use memlog_indexer::Projections;
use memlog_store::Repo;
use memlog_store::journal;
use memlog_store::log::Log;
use rusqlite::OptionalExtension;
use serde_json::{Value, json};

use crate::{output, workspace};

/// Summarise memory: sessions, events by kind, segments, journals.
///
/// Counts are of live events (a forget hides events; they are counted
/// apart); `journal_events` are those of sessions not sealed yet.
#[derive(Args)]
pub struct StatsArgs {
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn cmd_stats(dir: &Path, args: StatsArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open(dir)?;
    let stats = stats(&repo)?;
    if args.json {
        output::print_json(&stats)?;
        return Ok(ExitCode::SUCCESS);
    }
    let num = |key: &str| stats[key].as_u64().unwrap_or(0);
    println!("project   {}", stats["project"].as_str().unwrap_or(""));
    println!(
        "ref       {} ({})",
        stats["ref"].as_str().unwrap_or(""),
        stats["tip"]
            .as_str()
            .map(|t| t.get(..12).unwrap_or(t).to_string())
            .unwrap_or_else(|| "not created yet".into())
    );
    println!("sessions  {}", num("sessions"));
    println!(
        "events    {} live ({} hidden by forget)",
        num("events"),
        num("hidden_events")
    );
    if let Some(by_kind) = stats["events_by_kind"].as_object() {
        for (k, n) in by_kind {
            println!("  {k:<26} {n}");
        }
    }
    println!(
        "commits   {} ({} session seals)",
        num("commits"),
        num("seal_commits")
    );
    println!("segments  {}", num("segments"));
    println!(
        "journals  {} open ({} events)",
        num("journals"),
        num("journal_events")
    );
    println!(
        "vectors   {}",
        crate::semantic::status_line(&stats["vectors"])
    );
    if let (Some(f), Some(l)) = (stats["first_event"].as_str(), stats["last_event"].as_str()) {
        println!(
            "span      {} .. {}",
            output::short_time(f),
            output::short_time(l)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The numbers `memlog stats --json` prints and the MCP tool
/// `memory_stats` returns: one function so that the two always agree.
///
/// Events are counted in the index (brought up to date first), which holds
/// every live event and remembers those a forget hides: at a million
/// events this takes milliseconds where reading the log took seconds.
pub fn stats(repo: &Repo) -> anyhow::Result<Value> {
    let p = workspace::projections(repo)?;
    stats_of(repo, &p)
}

/// [`stats`] with projections the caller has open.
pub fn stats_of(repo: &Repo, p: &Projections) -> anyhow::Result<Value> {
    let log = Log::new(repo);
    let tip = log.tip()?;
    let commits = log.commits()?;
    let seal_commits = commits.iter().filter(|c| c.parents.len() <= 1).count();
    let segments = match tip {
        Some(t) => log.segments_at(t)?.len(),
        None => 0,
    };
    let journals = journal::list(&repo.journal_dir())?;
    let sql = |e: rusqlite::Error| anyhow::anyhow!("reading the index: {e}");
    let conn = &p.graph.conn;
    let count = |query: &str| -> anyhow::Result<u64> {
        conn.query_row(query, [], |r| r.get::<_, i64>(0))
            .map(|n| n.max(0) as u64)
            .map_err(sql)
    };
    // Read off the index on (kind, source): no table scan, no sort.
    let mut by_kind: BTreeMap<String, u64> = BTreeMap::new();
    let (mut events, mut journal_events) = (0u64, 0u64);
    {
        let mut stmt = conn
            .prepare("SELECT kind, source = 'journal', count(*) FROM events GROUP BY kind, source")
            .map_err(sql)?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, bool>(1)?,
                    r.get::<_, i64>(2)?,
                ))
            })
            .map_err(sql)?;
        for row in rows {
            let (kind, journal, n) = row.map_err(sql)?;
            let n = n.max(0) as u64;
            *by_kind.entry(kind).or_default() += n;
            events += n;
            if journal {
                journal_events += n;
            }
        }
    }
    let edge = |order: &str| -> anyhow::Result<Option<String>> {
        conn.query_row(
            &format!("SELECT ts FROM events ORDER BY ts_ms {order}, ts {order} LIMIT 1"),
            [],
            |r| r.get(0),
        )
        .optional()
        .map_err(sql)
    };
    let (first, last) = (edge("ASC")?, edge("DESC")?);
    Ok(json!({
        "ref": repo.ref_name(),
        "tip": tip.map(|t| t.to_string()),
        "project": repo.project(),
        "sessions": count("SELECT count(*) FROM sessions")?,
        "commits": commits.len(),
        "seal_commits": seal_commits,
        "segments": segments,
        "events": events,
        "sealed_events": events - journal_events,
        "hidden_events": count("SELECT count(*) FROM hidden")?,
        "events_by_kind": by_kind,
        "journals": journals.len(),
        "journal_events": journal_events,
        "journal_bytes": journals.iter().map(|j| j.bytes).sum::<u64>(),
        "first_event": first,
        "last_event": last,
        "vectors": crate::semantic::status(repo),
    }))
}
