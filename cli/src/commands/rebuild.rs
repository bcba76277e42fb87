use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use clap::Args;
use memlog_indexer::Projections;

use crate::commands::index::print_report;
use crate::workspace;

/// Delete the search projections and derive them again from the log.
///
/// The new index is built beside the old one and swapped in when complete,
/// so searches keep working meanwhile. Use it after changing ranking-related
/// settings, or to check that the projections are a pure function of the
/// log.
#[derive(Args)]
pub struct RebuildArgs {
    /// Also print how long it took and the rate.
    #[arg(long)]
    stats: bool,

    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn cmd_rebuild(dir: &Path, args: RebuildArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open_for_writing(dir)?;
    let started = Instant::now();
    let report = Projections::rebuild(&repo)?;
    print_report(&report, args.json)?;
    if args.stats && !args.json {
        let secs = started.elapsed().as_secs_f64();
        println!(
            "took {:.2} s ({:.0} events/s)",
            secs,
            report.events_added as f64 / secs.max(1e-9)
        );
    }
    Ok(ExitCode::SUCCESS)
}
