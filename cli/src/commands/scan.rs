use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use memlog_ops::scan::scan;
use memlog_ops::workspace;

use crate::output;

/// Report secret-shaped content already stored in the log.
///
/// memlog removes secrets before an event is written; a log written before a
/// rule existed, or by an earlier memlog, may still hold some. `scan` runs
/// the privacy filter's rules over every stored event (sealed segments and
/// journals, forgotten events included: their bytes stay in git history
/// until `memlog purge`) and lists, by rule, the events holding a secret.
/// It never prints a secret. Then `memlog forget --secrets` hides those
/// events and `memlog purge` erases them from history.
#[derive(Args)]
pub struct ScanArgs {
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn cmd_scan(dir: &Path, args: ScanArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open(dir)?;
    let report = scan(&repo)?;
    if args.json {
        output::print_json(&report)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!("scanned {} events", report.events_scanned);
    if report.flagged.is_empty() {
        println!("no secret-shaped content found");
        return Ok(ExitCode::SUCCESS);
    }
    for r in &report.rules {
        let ids: Vec<&str> = r.events.iter().map(|id| id.short()).collect();
        println!(
            "{:<40} {:<14} {} secret(s) in {} event(s): {}",
            r.rule,
            r.family,
            r.secrets,
            r.events.len(),
            ids.join(" ")
        );
    }
    let forgotten = report.flagged.iter().filter(|f| f.forgotten).count();
    let in_journal = report.flagged.iter().filter(|f| f.in_journal).count();
    println!(
        "{} event(s) hold secret-shaped content ({forgotten} already forgotten, {in_journal} in live journals)",
        report.flagged.len()
    );
    let seal_first = if in_journal > 0 {
        "`memlog seal --all` (for those in live journals), then "
    } else {
        ""
    };
    if report.has_live() {
        println!(
            "hide them with `memlog forget --secrets`, then erase them from history with {seal_first}`memlog purge`"
        );
    } else {
        println!("erase them from history with {seal_first}`memlog purge`");
    }
    Ok(ExitCode::SUCCESS)
}
