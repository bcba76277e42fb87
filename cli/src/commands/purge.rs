use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use memlog_indexer::Projections;
use memlog_store::purge::purge;

use memlog_ops::workspace;

use crate::output;

/// Erase forgotten events from git history (for secrets that leaked).
///
/// `memlog forget` hides events; their bytes stay in every commit of the
/// memlog ref. `purge` rewrites that history without them: segments holding
/// forgotten events are rewritten (new content hashes), commits are rebuilt
/// oldest first with the same authors and a `Memlog-Purged` note, the ref
/// moves, remote-tracking refs of memlog are deleted, reflogs are expired,
/// the object store is pruned (`git gc --prune=now`), the search index is
/// rebuilt, and the vectors are made again without the purged events, whose
/// embeddings also leave the embedding cache. The forget events stay (they
/// name ids, not content).
///
/// Remotes still hold the old history: purge names them; push there with
/// `git push --force REMOTE refs/heads/memlog` before the next `memlog sync`,
/// or the sync would merge the old history back.
#[derive(Args)]
pub struct PurgeArgs {
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn cmd_purge(dir: &Path, args: PurgeArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open_for_writing(dir)?;
    let report = purge(&repo)?;
    if report.events_purged > 0 {
        // Vectors are not carried across this rebuild: their files and
        // graph would keep the purged events' embeddings.
        memlog_indexer::vectors::discard(&repo.layout().index_dir())?;
        let cache_path = memlog_ops::semantic::cache_path(&repo);
        if cache_path.exists() {
            let texts: Vec<String> = report
                .purged
                .iter()
                .map(|e| memlog_indexer::derive::derive(e).text)
                .filter(|t| !t.is_empty())
                .collect();
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            memlog_indexer::embed_cache::EmbeddingCache::open(&cache_path)?.forget(&refs)?;
        }
        Projections::rebuild(&repo)?;
        memlog_ops::semantic::catch_up_vectors(&repo, None, true)?;
    }
    if args.json {
        output::print_json(&report)?;
        return Ok(ExitCode::SUCCESS);
    }
    if report.events_purged == 0 {
        println!(
            "nothing to purge: no forgotten event is stored in the history (unreachable objects pruned)"
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "purged {} forgotten event(s): {} segment(s) and {} commit(s) rewritten, {} -> {}",
        report.events_purged,
        report.segments_rewritten,
        report.commits_rewritten,
        output::short_or_dash(report.old_tip.as_deref()),
        output::short_or_dash(report.new_tip.as_deref())
    );
    println!("expired reflogs, pruned unreachable objects and rebuilt the index");
    for r in &report.tracking_refs_deleted {
        println!("deleted {r} (it still reached the old history)");
    }
    if report.remotes_to_force_push.is_empty() {
        println!("no remote is known to hold the old history");
    } else {
        println!("these remotes still hold the forgotten bytes; force-push before syncing again:");
        for r in &report.remotes_to_force_push {
            println!("  git push --force {r} {0}:{0}", repo.ref_name());
        }
    }
    Ok(ExitCode::SUCCESS)
}
