use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use memlog_format::Repo;
use memlog_format::journal;
use memlog_format::log::{Log, live_events};
use serde_json::{Value, json};

use crate::{output, workspace};

/// Summarise memory: sessions, events by kind, segments, journals.
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
pub fn stats(repo: &Repo) -> anyhow::Result<Value> {
    let log = Log::new(repo);
    let tip = log.tip()?;
    let commits = log.commits()?;
    let seal_commits = commits.iter().filter(|c| c.parents.len() <= 1).count();
    let (sealed, _) = log.events()?;
    let sealed_total = sealed.len();
    let segments = match tip {
        Some(t) => log.segments_at(t)?.len(),
        None => 0,
    };
    let journals = journal::list(&repo.journal_dir())?;
    let journal_events = memlog_format::log::journal_events(repo)?;
    let journal_total = journal_events.len();
    let mut all = sealed;
    all.extend(journal_events);
    let total_recorded = all.len();
    let live = live_events(all);
    let sessions: HashSet<&str> = live.iter().map(|e| e.session.as_str()).collect();
    let mut by_kind: BTreeMap<String, usize> = BTreeMap::new();
    for e in &live {
        *by_kind.entry(e.kind.to_string()).or_default() += 1;
    }
    let first = live.first().map(|e| e.ts.clone());
    let last = live.last().map(|e| e.ts.clone());
    Ok(json!({
        "ref": repo.ref_name(),
        "tip": tip.map(|t| t.to_string()),
        "project": repo.project(),
        "sessions": sessions.len(),
        "commits": commits.len(),
        "seal_commits": seal_commits,
        "segments": segments,
        "events": live.len(),
        "sealed_events": sealed_total,
        "hidden_events": total_recorded - live.len(),
        "events_by_kind": by_kind,
        "journals": journals.len(),
        "journal_events": journal_total,
        "journal_bytes": journals.iter().map(|j| j.bytes).sum::<u64>(),
        "first_event": first,
        "last_event": last,
        "vectors": crate::semantic::status(repo),
    }))
}
