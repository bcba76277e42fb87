use std::path::Path;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use memlog_ops::{native, workspace};
use serde_json::json;

use crate::output;

/// The coding agents' own memory files: CLAUDE.md, AGENTS.md, Claude
/// Code's auto memory (MEMORY.md) and Codex's memories.
///
/// memlog reads them into memory read-only (each paragraph a note, found
/// by `memlog search` and recall) and re-reads them when they change
/// (`memlog watch`, or in the background at SessionStart). Without a
/// subcommand, lists the files found and the memlog facts or rules that
/// conflict with them (same subject, another value).
#[derive(Args)]
pub struct NativeArgs {
    #[command(subcommand)]
    command: Option<NativeCommand>,

    /// Print as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand)]
enum NativeCommand {
    /// Read the files that changed since they were last read: new
    /// paragraphs are recorded, vanished ones forgotten.
    Sync {
        /// Print what was read as JSON.
        #[arg(long)]
        json: bool,
    },
}

pub fn cmd_native(dir: &Path, args: NativeArgs) -> anyhow::Result<ExitCode> {
    if let Some(NativeCommand::Sync { json }) = args.command {
        let repo = workspace::open_for_writing(dir)?;
        let report = native::refresh(&repo)?;
        if json {
            output::print_json(&json!({ "files": report }))?;
        } else if report.is_empty() {
            println!("no agent memory files (CLAUDE.md, AGENTS.md, MEMORY.md) found");
        }
        for f in report.iter().filter(|_| !json) {
            println!(
                "{:<9}  {}  (+{} paragraphs, -{})",
                f.status, f.label, f.added, f.forgotten
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let repo = workspace::open(dir)?;
    let files = native::files(&repo);
    let projections = workspace::projections(&repo)?;
    let conflicts = native::conflicts(&projections)?;
    if args.json {
        output::print_json(&json!({
            "files": files,
            "changed": native::changed(&repo),
            "conflicts": conflicts,
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    if files.is_empty() {
        println!("no agent memory files (CLAUDE.md, AGENTS.md, MEMORY.md) found");
    }
    for f in &files {
        println!("{:<12}  {}", f.agent, f.label);
    }
    if native::changed(&repo) {
        println!("(changed since last read: `memlog native sync` reads them)");
    }
    for c in &conflicts {
        println!(
            "CONFLICT  {}  {:?}\n          {} says {:?}",
            c.id.short(),
            c.text,
            c.at,
            c.native_text
        );
    }
    Ok(ExitCode::SUCCESS)
}
