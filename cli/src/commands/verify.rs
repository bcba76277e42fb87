use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use memlog_ops::{anchor, workspace};
use serde_json::json;

use crate::output;

/// Check facts and rules anchored to code against the current tree.
///
/// A fact or rule that cites files of the work tree (or quotes code in
/// backticks) records the commit it was made at. Each is checked again:
/// is each quote still in its files (else `broken`), did the files change
/// in commits since (`stale`)? What is not fresh ranks lower and is
/// injected with a marker ("src/invoice.rs changed in 2 commits since").
/// SessionStart runs this in the background when HEAD moved.
#[derive(Args)]
pub struct VerifyArgs {
    /// Print every check as JSON: {"head", "checks": [{"id", "status",
    /// "marker", "files", "missing", …}]}.
    #[arg(long)]
    json: bool,

    /// Read the index as it is, without bringing it up to date (what
    /// SessionStart runs in the background).
    #[arg(long, hide = true)]
    as_is: bool,
}

pub fn cmd_verify(dir: &Path, args: VerifyArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open(dir)?;
    let checks = if args.as_is {
        anchor::verify_as_is(&repo)?
    } else {
        anchor::verify(&repo, &workspace::projections(&repo)?)?
    };
    if args.json {
        output::print_json(&json!({
            "head": repo.code_position().1,
            "checks": checks,
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    if checks.is_empty() {
        println!("no fact or rule cites a file of the work tree");
    }
    for c in &checks {
        println!(
            "{:<6}  {}  {}{}",
            c.status,
            c.id.short(),
            memlog_format::event::one_line(&c.text, 80),
            c.marker
                .as_ref()
                .map(|m| format!("\n        {m}"))
                .unwrap_or_default()
        );
    }
    Ok(ExitCode::SUCCESS)
}
