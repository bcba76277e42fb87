use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use clap::Args;
use memlog_indexer::Projections;

use crate::commands::index::{print_report, print_vectors};
use memlog_ops::workspace;

use crate::output;

/// Delete the search projections and derive them again from the log.
///
/// The new index is built beside the old one and swapped in when complete,
/// so searches keep working meanwhile. Use it after changing ranking-related
/// settings, or to check that the projections are a pure function of the
/// log. Vectors are kept: each is checked against its event's text and only
/// what is missing is embedded, from the embedding cache where it can (a
/// rebuild keeps the cache). `--fresh-vectors` lays them out again too.
#[derive(Args)]
pub struct RebuildArgs {
    /// Also print how long it took, the rate, and how many texts the model
    /// embedded versus took from the cache.
    #[arg(long)]
    stats: bool,

    /// Skip embedding: full-text and graph projections only.
    #[arg(long)]
    no_vectors: bool,

    /// Make the vectors again too (from the embedding cache, so the model
    /// only embeds texts it never saw) and build their HNSW graph anew,
    /// rather than keep the ones checked against the log.
    #[arg(long, conflicts_with = "no_vectors")]
    fresh_vectors: bool,

    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn cmd_rebuild(dir: &Path, args: RebuildArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open_for_writing(dir)?;
    let started = Instant::now();
    if args.fresh_vectors {
        memlog_indexer::vectors::discard(&repo.layout().index_dir())?;
    }
    let report = Projections::rebuild(&repo)?;
    let indexed = started.elapsed().as_secs_f64();
    let vectors = if args.no_vectors {
        None
    } else {
        memlog_ops::semantic::catch_up_vectors(&repo, None, args.json)?
    };
    let secs = started.elapsed().as_secs_f64();
    if args.json {
        let mut value = serde_json::to_value(&report)?;
        value["vectors"] = serde_json::to_value(&vectors)?;
        if args.stats {
            value["seconds"] = serde_json::json!(secs);
            value["index_seconds"] = serde_json::json!(indexed);
        }
        output::print_json(&value)?;
        return Ok(ExitCode::SUCCESS);
    }
    print_report(&report, false)?;
    print_vectors(vectors.as_ref());
    if args.stats {
        println!(
            "took {:.2} s ({:.0} events/s; full text and graph {:.2} s)",
            secs,
            report.events_added as f64 / secs.max(1e-9),
            indexed
        );
        match &vectors {
            Some(v) => println!(
                "embedded {} texts, {} from the cache, {} vectors kept ({})",
                v.embedded, v.cached, v.kept, v.model
            ),
            None if args.no_vectors => println!("embedded 0 texts: --no-vectors"),
            None if memlog_ops::semantic::model_available(&repo) => {
                println!("embedded 0 texts here: another process (memlog watch?) is embedding")
            }
            None => println!(
                "embedded 0 texts: vectors are off ({})",
                memlog_ops::semantic::off_reason(&repo)
            ),
        }
    }
    Ok(ExitCode::SUCCESS)
}
