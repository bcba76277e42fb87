use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use memlog_format::journal;
use memlog_format::log::{Log, live_events};
use serde_json::json;

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
    let log = Log::new(&repo);
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
    let journal_events = memlog_format::log::journal_events(&repo)?;
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
    let stats = json!({
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
    });
    if args.json {
        output::print_json(&stats)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!("project   {}", repo.project());
    println!(
        "ref       {} ({})",
        repo.ref_name(),
        tip.map(|t| t.to_string()[..12].to_string())
            .unwrap_or_else(|| "not created yet".into())
    );
    println!("sessions  {}", sessions.len());
    println!(
        "events    {} live ({} hidden by forget)",
        live.len(),
        total_recorded - live.len()
    );
    for (k, n) in &by_kind {
        println!("  {k:<26} {n}");
    }
    println!(
        "commits   {} ({} session seals)",
        commits.len(),
        seal_commits
    );
    println!("segments  {segments}");
    println!(
        "journals  {} open ({} events)",
        journals.len(),
        journal_total
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
