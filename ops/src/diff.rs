//! `memlog diff` (and the viewer's review page): what memory changed over
//! a range of the memlog ref, as a [`MemoryDiff`] of the events at both
//! ends.

use memlog_format::Event;
use std::collections::HashSet;

use memlog_store::log::{Log, SegmentRef};
use memlog_store::{ObjectId, Repo};
use serde::Serialize;

use crate::bail;
use crate::diag;
use crate::error::{Context, Result};
use crate::memory_diff::{self, BothEnds, MemoryDiff, NamedBefore, PurgeAdded};

/// `memlog diff --json`, and the viewer's `/api/diff`.
#[derive(Serialize)]
pub struct DiffDocument<'a> {
    /// The commit compared from (`null`: from nothing).
    from: Option<String>,
    /// The commit compared to.
    to: String,
    #[serde(flatten)]
    diff: &'a MemoryDiff,
}

/// What changed in memory over a range of the memlog ref.
pub struct Computed {
    /// `None`: from nothing.
    pub from: Option<ObjectId>,
    /// The end of the range.
    pub to: ObjectId,
    /// What changed.
    pub diff: MemoryDiff,
}

impl Computed {
    /// The JSON document of the diff.
    pub fn document(&self) -> DiffDocument<'_> {
        DiffDocument {
            from: self.from.map(|f| f.to_string()),
            to: self.to.to_string(),
            diff: &self.diff,
        }
    }
}

/// Resolves `revs` as `memlog diff` does (`A..B`, `A..`, one commit, or
/// by default what the last seal or sync added) and computes
/// the memory diff of that range.
pub fn compute(repo: &Repo, revs: Option<&str>) -> Result<Computed> {
    let log = Log::new(repo);
    let Some(tip) = log.tip()? else {
        bail!("no memory yet: {} does not exist", repo.ref_name());
    };
    let (from, to) = resolve_range(repo, &log, tip, revs)?;
    let (before, after, named) = match from {
        Some(f) => both_ends(&log, f, to)?,
        None => (Vec::new(), events_at(&log, to)?, Default::default()),
    };
    let mut diff = memory_diff::diff_naming(&before, &after, &named);
    diff.purges = purges_added(&log, from, to)?;
    Ok(Computed { from, to, diff })
}

/// The purges recorded at `to` and not at `from`: a purge's commit adds
/// only its record, and the history it rewrote no longer holds what it
/// erased, so the events alone would show no change.
fn purges_added(log: &Log, from: Option<ObjectId>, to: ObjectId) -> Result<Vec<PurgeAdded>> {
    let records = |commit: ObjectId| -> Result<_> {
        let tree = log.commit(commit)?.tree;
        Ok(memlog_store::purge_record::records_in_tree(log, tree)?)
    };
    let known: Vec<String> = match from {
        Some(f) => records(f)?.into_iter().map(|(name, _)| name).collect(),
        None => Vec::new(),
    };
    Ok(records(to)?
        .into_iter()
        .filter(|(name, _)| !known.contains(name))
        .map(|(name, r)| PurgeAdded {
            name,
            ts: r.ts,
            events: r.events,
            sessions: r.sessions,
            segments_rewritten: r.segments.len(),
            commits_rewritten: r.commits.len(),
        })
        .collect())
}

fn events_at(log: &Log, commit: ObjectId) -> Result<Vec<Event>> {
    let segments = log
        .segments_at(commit)
        .context(format_args!("reading the log at {commit}"))?;
    let mut events = Vec::new();
    for_each_event(log, &segments, |e| events.push(e))?;
    Ok(events)
}

/// The events at `from` and at `to`. What the range changed is read whole;
/// the events of the segments both ends share (most of memory, in a diff of
/// the last sessions) are read one segment at a time and kept as much as a
/// diff reads of them ([`BothEnds`]): the two ends of a year of memory no
/// longer sit whole in memory twice.
fn both_ends(
    log: &Log,
    from: ObjectId,
    to: ObjectId,
) -> Result<(Vec<Event>, Vec<Event>, NamedBefore)> {
    let context = || format!("reading the log at {from} and {to}");
    let from_tree = log.commit(from).context(context())?.tree;
    let to_tree = log.commit(to).context(context())?.tree;
    let changed = log.diff_trees(from_tree, to_tree).context(context())?;
    let mut removed = Vec::new();
    for_each_event(log, &changed.removed, |e| removed.push(e))?;
    let mut added = Vec::new();
    for_each_event(log, &changed.added, |e| added.push(e))?;
    let gone: HashSet<(&str, ObjectId)> = changed
        .removed
        .iter()
        .map(|s| (s.hash.as_str(), s.blob))
        .collect();
    let shared: Vec<SegmentRef> = log
        .segments_in_tree(from_tree)
        .context(context())?
        .into_iter()
        .filter(|s| !gone.contains(&(s.hash.as_str(), s.blob)))
        .collect();
    let mut kept = BothEnds::new(&added);
    let mut both = Vec::new();
    for_each_event(log, &shared, |e| both.push(kept.keep(e)))?;
    let mut before = both.clone();
    before.extend(removed);
    both.extend(added);
    Ok((before, both, kept.named()))
}

/// Reads `segments` one at a time, handing each event to `f`; a segment
/// that fails verification is named in a warning.
fn for_each_event(log: &Log, segments: &[SegmentRef], mut f: impl FnMut(Event)) -> Result<()> {
    for seg in segments {
        let (events, problem) = log
            .read_segment(seg, false)
            .context(format_args!("reading segment {}", seg.hash))?;
        if let Some(p) = problem {
            diag::warning(format_args!(
                "segment {}: {} (run `memlog fsck`)",
                p.path, p.problem
            ));
        }
        events.into_iter().for_each(&mut f);
    }
    Ok(())
}

/// `(A, B)` commits of the range; `A` is `None` for "nothing before".
fn resolve_range(
    repo: &Repo,
    log: &Log,
    tip: ObjectId,
    revs: Option<&str>,
) -> Result<(Option<ObjectId>, ObjectId)> {
    let first_parent =
        |id: ObjectId| -> Result<Option<ObjectId>> { Ok(log.commit(id)?.parents.first().copied()) };
    match revs {
        None => {
            let previous = log
                .resolve(&format!("{}@{{1}}", repo.ref_name()))
                .ok()
                .filter(|p| *p != tip);
            let from = match previous {
                Some(p) => Some(p),
                // a ref the last sync or fetch created brought all of it
                None if log.created_by_last_update()? => None,
                None => first_parent(tip)?,
            };
            Ok((from, tip))
        }
        Some(spec) => match spec.split_once("..") {
            Some((a, b)) => {
                let from = if a.is_empty() {
                    None
                } else {
                    Some(log.resolve(a)?)
                };
                let to = if b.is_empty() { tip } else { log.resolve(b)? };
                Ok((from, to))
            }
            None => {
                let to = log.resolve(spec)?;
                Ok((first_parent(to)?, to))
            }
        },
    }
}
