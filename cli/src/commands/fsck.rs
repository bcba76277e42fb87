use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use memlog_store::fsck;

use memlog_ops::workspace;

use crate::output;

/// Verify the log: segment hashes, event ids, commit trailers, journals.
///
/// Every segment reachable from the memlog ref must hash to its name and hold
/// valid canonical events whose ids match their content; every seal commit
/// must name its session and its event count; every journal line must
/// decode. Problems are reported, never fixed. Exits 1 if there are any.
#[derive(Args)]
pub struct FsckArgs {
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn cmd_fsck(dir: &Path, args: FsckArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open(dir)?;
    let report = fsck::check(&repo)?;
    if args.json {
        output::print_json(&report)?;
    } else {
        println!(
            "checked {} commits, {} segments, {} events, {} journals ({} events)",
            report.commits, report.segments, report.events, report.journals, report.journal_events
        );
        for n in &report.notes {
            println!("note: {}: {}", n.place, n.message);
        }
        for p in &report.problems {
            println!("problem: {}: {}", p.place, p.message);
        }
        if report.is_clean() {
            println!("ok");
        } else {
            println!("{} problem(s)", report.problems.len());
        }
    }
    Ok(if report.is_clean() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
