use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use memlog_indexer::IndexReport;
use memlog_indexer::vectors::CatchUpReport;
use memlog_ops::index::{Embedding, Indexed};

use memlog_ops::workspace;

use crate::output;

/// Bring the search projections up to date with the log.
///
/// Indexes only what is new since the last run: segments the memlog ref
/// gained (seals, imports, `git pull` of a teammate's sessions) and the
/// unread part of live journals. Read commands do this by themselves when
/// the index lags; this command is for scripts. If another process is
/// indexing, it waits for it.
///
/// Then, when the embedding model is installed, it embeds the new events
/// worth recalling for semantic search (full-text search is ready before).
#[derive(Args)]
pub struct IndexArgs {
    /// Skip embedding: full-text and graph projections only.
    #[arg(long)]
    no_vectors: bool,

    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn cmd_index(dir: &Path, args: IndexArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open_for_writing(dir)?;
    let embedding = if args.no_vectors {
        Embedding::Off
    } else {
        Embedding::Now
    };
    let indexed = memlog_ops::index::update(&repo, embedding, args.json)?;
    if args.json {
        return output::print_json(&indexed).map(|_| ExitCode::SUCCESS);
    }
    print_report(&indexed.report, false)?;
    print_vectors(indexed.vectors.as_ref());
    Ok(ExitCode::SUCCESS)
}

/// What an index run at the end of `install` or `import` did, in a line
/// or two.
pub fn print_indexed(indexed: Option<&Indexed>) {
    let Some(indexed) = indexed else {
        return;
    };
    let r = &indexed.report;
    for w in &r.warnings {
        eprintln!("warning: {w}");
    }
    if r.rebuilt {
        println!(
            "index built: {} events ({} segments)",
            r.events_added, r.segments
        );
    } else {
        println!("index: {} new events indexed", r.events_added);
    }
    if indexed.embedding_in_background {
        println!(
            "vectors: embedding in the background (`memlog doctor` shows how far); meanwhile new events rank by full text"
        );
    }
}

/// One line on what embedding did.
pub fn print_vectors(vectors: Option<&CatchUpReport>) {
    if let Some(v) = vectors {
        if let Some(why) = &v.restarted {
            println!("vectors: made again ({why})");
        }
        let kept = if v.kept > 0 {
            format!(", {} kept from before the rebuild", v.kept)
        } else {
            String::new()
        };
        println!(
            "vectors: {} events embedded ({} by the model, {} from the cache){kept}, {} in all",
            v.pending, v.embedded, v.cached, v.rows
        );
    }
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
