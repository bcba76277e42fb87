use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
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
/// The purge is recorded in the log (`purges/<name>.json`: ids and
/// hashes, no content). Run `memlog sync` next: it replaces the remote's
/// old history with the rewritten one (with a lease), and every teammate's
/// next `memlog sync` applies the same rewrite to their clone; no sync
/// merges the old history back. Personal events are purged too, locally.
#[derive(Args)]
pub struct PurgeArgs {
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn cmd_purge(dir: &Path, args: PurgeArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open_for_writing(dir)?;
    // The index applies every forget before history is rewritten: until
    // the rebuild below, readers then hide what goes by the index itself
    // (the purge records name only shared events, not personal ones).
    Projections::update(&repo)?;
    let report = purge(&repo)?;
    // What the purge did is said before the index is rebuilt: the history
    // is rewritten whatever becomes of the rebuild, and the remotes to
    // sync must be known even if it fails.
    if args.json {
        output::print_json(&report)?;
    } else {
        print_report(&report);
    }
    print_refs_holding_purged(&report.refs_holding_purged);
    if report.events_purged > 0 {
        forget_purged(&repo, &report.purged).context(
            "the history is purged (above), but the index and vectors still hold the purged \
             events: run `memlog rebuild`",
        )?;
        if !args.json {
            println!("rebuilt the index and the vectors without them");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn print_report(report: &memlog_store::purge::PurgeReport) {
    if report.events_purged == 0 {
        println!(
            "nothing to purge: no forgotten event is stored in the history (unreachable objects pruned)"
        );
        return;
    }
    if report.journal_events_purged > 0 {
        println!(
            "purged {} forgotten event(s) from the journals of live sessions (never sealed)",
            report.journal_events_purged
        );
        if report.journal_events_purged == report.events_purged {
            return;
        }
    }
    println!(
        "purged {} forgotten event(s): {} segment(s) and {} commit(s) rewritten, {} -> {}",
        report.events_purged - report.journal_events_purged,
        report.segments_rewritten,
        report.commits_rewritten,
        output::short_or_dash(report.old_tip.as_deref()),
        output::short_or_dash(report.new_tip.as_deref())
    );
    if let Some(record) = &report.record {
        println!(
            "recorded as purges/{}.json: every clone applies it at its next `memlog sync`",
            &record[..12]
        );
    }
    println!("expired memlog's reflogs and pruned unreachable objects");
    for r in &report.tracking_refs_deleted {
        println!("deleted {r} (it still reached the old history)");
    }
    if report.remotes_to_sync.is_empty() {
        println!("no remote is known to hold the old history");
    } else {
        println!("these remotes still hold the forgotten bytes; sync to replace their history:");
        for r in &report.remotes_to_sync {
            println!("  memlog sync {r}");
        }
    }
}

/// Names the refs that still hold purged bytes, and how to let them go.
fn print_refs_holding_purged(refs: &[String]) {
    if refs.is_empty() {
        return;
    }
    eprintln!(
        "warning: these refs still reach the history the purge replaced, so its bytes stay in \
         this repository and a `git push --all` (or `--tags`) shares them again:"
    );
    for r in refs {
        eprintln!("  {r}    (delete it: git update-ref -d {r})");
    }
    eprintln!("then run `memlog purge` again to prune what they held");
}

/// After events left the history (a purge here, or one a sync applied):
/// the index is rebuilt without them, and their vectors and cached
/// embeddings are dropped.
pub(crate) fn forget_purged(
    repo: &memlog_store::Repo,
    purged: &[memlog_format::Event],
) -> anyhow::Result<()> {
    // Vectors are not carried across this rebuild: their files and graph
    // would keep the purged events' embeddings.
    memlog_indexer::vectors::discard(&repo.layout().index_dir())?;
    let cache_path = memlog_ops::semantic::cache_path(repo);
    if cache_path.exists() {
        let texts: Vec<String> = purged
            .iter()
            .map(|e| memlog_indexer::derive::derive(e).text)
            .filter(|t| !t.is_empty())
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        memlog_indexer::embed_cache::EmbeddingCache::open(&cache_path)?.forget(&refs)?;
    }
    Projections::rebuild(repo)?;
    memlog_ops::semantic::catch_up_vectors(repo, None, true)?;
    Ok(())
}
