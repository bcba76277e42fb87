use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use memlog_indexer::{IndexReport, Projections};

use crate::{output, workspace};

/// Bring the search projections up to date with the log.
///
/// Indexes only what is new since the last run: segments the memlog ref
/// gained (seals, imports, `git pull` of a teammate's sessions) and the
/// unread part of live journals. Read commands do this by themselves when
/// the index lags; this command is for scripts. If another process is
/// indexing, it waits for it.
#[derive(Args)]
pub struct IndexArgs {
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn cmd_index(dir: &Path, args: IndexArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open_for_writing(dir)?;
    let report = Projections::update(&repo)?;
    print_report(&report, args.json)?;
    Ok(ExitCode::SUCCESS)
}

pub fn print_report(report: &IndexReport, json: bool) -> anyhow::Result<()> {
    if json {
        return output::print_json(report);
    }
    for w in &report.warnings {
        eprintln!("warning: {w}");
    }
    if report.rebuilt {
        println!(
            "rebuilt the index ({}): {} segments, {} events, {} from journals, {} hidden",
            report.reason.as_deref().unwrap_or("requested"),
            report.segments,
            report.events_added,
            report.journal_events,
            report.events_hidden
        );
    } else {
        println!(
            "indexed {} new events ({} segments, {} from journals), {} hidden",
            report.events_added, report.segments, report.journal_events, report.events_hidden
        );
    }
    Ok(())
}
