use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};
use memlog_format::{Recorder, neutral};
use serde_json::json;

use crate::{output, workspace};

/// Import events from other sources into memory.
///
/// Imports are sealed directly: one commit per session. They are idempotent:
/// events already in the log (same content, same id) are skipped, so running
/// an import twice adds nothing.
#[derive(Args)]
pub struct ImportArgs {
    #[command(subcommand)]
    source: ImportSource,
}

#[derive(Subcommand)]
enum ImportSource {
    Jsonl(JsonlArgs),
}

/// Import a file in memlog's neutral format (`-` for stdin).
///
/// One JSON object per line:
/// {"session": str, "ts": RFC3339, "kind": str, "text": str,
///  "ref"?: str, "project"?: str, "meta"?: object}.
/// `ref` is an external id, kept as meta.ref. Within a session, events keep
/// file order. The whole file is checked before anything is written: an
/// invalid line stops the import and names the line.
#[derive(Args)]
struct JsonlArgs {
    /// The file to import, or `-` for stdin.
    file: PathBuf,

    /// Skip invalid lines (listed on stderr) instead of stopping.
    #[arg(long)]
    skip_invalid: bool,

    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn cmd_import(dir: &Path, args: ImportArgs) -> anyhow::Result<ExitCode> {
    match args.source {
        ImportSource::Jsonl(a) => import_jsonl(dir, a),
    }
}

fn import_jsonl(dir: &Path, args: JsonlArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open_for_writing(dir)?;
    let project = repo.project();
    let origin = args.file.display().to_string();
    let batch = if origin == "-" {
        neutral::read(
            std::io::stdin().lock(),
            "stdin",
            &project,
            args.skip_invalid,
        )?
    } else {
        let file = File::open(&args.file).with_context(|| format!("opening {origin}"))?;
        neutral::read(BufReader::new(file), &origin, &project, args.skip_invalid)?
    };
    for (line, message) in &batch.skipped {
        eprintln!("skipped {origin}, line {line}: {message}");
    }
    let sessions = batch.sessions.len();
    let recorder = Recorder::new(&repo)?;
    let (sealed, report) = recorder.import(batch.sessions)?;
    for w in &report.warnings {
        eprintln!("warning: {w}");
    }
    let added: usize = sealed.iter().map(|s| s.added).sum();
    let duplicates: usize = sealed.iter().map(|s| s.duplicates).sum();
    let commits = sealed.iter().filter(|s| s.commit.is_some()).count();
    if args.json {
        output::print_json(&json!({
            "file": origin,
            "lines": batch.lines,
            "sessions": sessions,
            "commits": commits,
            "added": added,
            "duplicates": duplicates,
            "skipped": batch.skipped.iter().map(|(l, m)| json!({"line": l, "message": m})).collect::<Vec<_>>(),
        }))?;
    } else {
        println!(
            "imported {added} new events from {origin} in {commits} commits ({sessions} sessions; {duplicates} already present)"
        );
    }
    Ok(ExitCode::SUCCESS)
}
