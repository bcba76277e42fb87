//! `memlog stats` (and the MCP tool `memory_stats`, the viewer's stats
//! page): one function so that they always agree.

use memlog_indexer::Projections;
use memlog_indexer::overview::event_counts;
use memlog_store::Repo;
use memlog_store::journal;
use memlog_store::log::Log;
use serde_json::{Value, json};

use crate::error::Result;
use crate::{semantic, workspace};

/// The numbers `memlog stats --json` prints and the MCP tool
/// `memory_stats` returns: one function so that the two always agree.
///
/// Events are counted in the index (brought up to date first), which holds
/// every live event and remembers those a forget hides: at a million
/// events this takes milliseconds where reading the log took seconds.
pub fn stats(repo: &Repo) -> Result<Value> {
    let p = workspace::projections(repo)?;
    stats_of(repo, &p)
}

/// [`stats`] with projections the caller has open.
pub fn stats_of(repo: &Repo, p: &Projections) -> Result<Value> {
    let log = Log::new(repo);
    let tip = log.tip()?;
    let commits = log.commits()?;
    let seal_commits = commits.iter().filter(|c| c.parents.len() <= 1).count();
    let segments = match tip {
        Some(t) => log.segments_at(t)?.len(),
        None => 0,
    };
    let journals = journal::list(&repo.journal_dir())?;
    // read once, and only while a forget waits for the index
    let pending = memlog_indexer::lookup::hidden_by_pending_forgets(p)?;
    let counts = event_counts(p, &pending)?;
    let levels = memlog_indexer::standing::level_counts(p, &repo.config.ranking.levels, &pending)?;
    Ok(json!({
        "ref": repo.ref_name(),
        "tip": tip.map(|t| t.to_string()),
        "project": repo.project(),
        "sessions": counts.sessions,
        "commits": commits.len(),
        "seal_commits": seal_commits,
        "segments": segments,
        "events": counts.events,
        "sealed_events": counts.events - counts.journal_events,
        "hidden_events": counts.hidden,
        "events_by_kind": counts.by_kind,
        "journals": journals.len(),
        "journal_events": counts.journal_events,
        "journal_bytes": journals.iter().map(|j| j.bytes).sum::<u64>(),
        "first_event": counts.first_ts,
        "last_event": counts.last_ts,
        "vectors": semantic::status(repo),
        // memories by level (docs/DESIGN.md §8); plain events are L0 and not counted
        "memory_levels": {
            "L0": levels[0], "L1": levels[1], "L2": levels[2], "L3": levels[3], "L4": levels[4],
        },
    }))
}
