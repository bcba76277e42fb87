use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use memlog_ops::stats::stats;
use memlog_ops::{semantic, workspace};

use crate::output;

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
            .map(|t| memlog_format::id::short(t).to_string())
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
    let levels = &stats["memory_levels"];
    println!(
        "memories  L1 {}  L2 {}  L3 {}  L4 {} (extracted, evidence-aligned, reinforced, active)",
        levels["L1"], levels["L2"], levels["L3"], levels["L4"]
    );
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
    println!("vectors   {}", semantic::status_line(&stats["vectors"]));
    if let (Some(f), Some(l)) = (stats["first_event"].as_str(), stats["last_event"].as_str()) {
        println!(
            "span      {} .. {}",
            output::short_time(f),
            output::short_time(l)
        );
    }
    Ok(ExitCode::SUCCESS)
}
