//! Purge: erasing forgotten events from the history of the memlog ref.
//!
//! A `forget` only hides events; their bytes stay in every commit that
//! holds their segments. `purge` rewrites the history so that no commit
//! reachable from the ref holds them:
//!
//! - each segment holding forgotten events is re-encoded without them (new
//!   bytes, so a new content hash and path; a segment left empty
//!   disappears);
//! - every commit whose tree held such a segment is rewritten, oldest first,
//!   with its parents mapped to their rewritten selves, the same author and
//!   committer, and a message regenerated from the events it still adds
//!   (its subject could be the forgotten text) plus a
//!   `Memlog-Purged: <n> events` trailer; `Memlog-Events` stays exact, so
//!   fsck stays clean. Commits before the first forgotten event keep their
//!   ids;
//! - the ref moves by compare-and-swap ([`crate::seal::publish`]);
//! - remote-tracking refs of the log (`refs/remotes/*/memlog`) still reach
//!   the old commits: they are deleted, and the remotes named;
//! - reflogs are expired and the object store pruned (`git reflog expire`,
//!   `git gc --prune=now`: gix has no gc).
//!
//! The forget events themselves stay: they name ids, not content.

use std::collections::{BTreeSet, HashMap, HashSet};

use gix::ObjectId;
use gix::objs::tree::EntryKind;
use memlog_format::Event;
use memlog_format::event::sort_events;
use memlog_format::segment::{self, Segment};
use memlog_format::visibility::Forgets;
use serde::Serialize;

use crate::log::{CommitInfo, Log, SegmentRef};
use crate::remote::{remember_purged, tracking_refs};
use crate::seal::{commit_message, publish, remove_stale_lock};
use crate::{Error, Repo, Result, git_command};

/// Trailer of a rewritten commit: how many events the purge removed from it.
pub const PURGED_TRAILER: &str = "Memlog-Purged";

/// What a purge did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PurgeReport {
    /// Forgotten events whose bytes were removed.
    pub events_purged: usize,
    /// Segments written again without them.
    pub segments_rewritten: usize,
    /// Commits of the history rewritten.
    pub commits_rewritten: usize,
    /// The ref's tip before the purge.
    pub old_tip: Option<String>,
    /// The ref's tip after it.
    pub new_tip: Option<String>,
    /// Remote-tracking refs deleted (they reached the old history).
    pub tracking_refs_deleted: Vec<String>,
    /// Remotes whose memlog branch still holds the old history: they need
    /// `git push --force`.
    pub remotes_to_force_push: Vec<String>,
    /// The events purged, for the caller to clear what it derived from
    /// them (the embedding cache keeps vectors by text).
    #[serde(skip)]
    pub purged: Vec<Event>,
}

/// How a segment is purged: the segments that replace it (none when every
/// event in it was forgotten) and how many events went.
struct Replacement {
    segments: Vec<Segment>,
    removed: usize,
}

/// Rewrites the history of the memlog ref without the bytes of forgotten
/// events, then expires reflogs and prunes the object store.
pub fn purge(repo: &Repo) -> Result<PurgeReport> {
    // no seal or sync writes objects while this one prunes them
    let _history = crate::history_lock::exclusive(repo)?;
    let log = Log::new(repo);
    let mut report = PurgeReport::default();
    let Some(tip) = log.tip()? else {
        return Ok(report);
    };
    report.old_tip = Some(tip.to_string());
    report.new_tip = Some(tip.to_string());
    let (events, _) = log.events_at(tip)?;
    let forgets = Forgets::from_events(events.iter());

    let commits = oldest_first(&log, tip)?;
    // Every segment of the history, each read once.
    let mut replacements: HashMap<String, Replacement> = HashMap::new();
    let mut clean: HashSet<String> = HashSet::new();
    let mut hidden_headlines: BTreeSet<String> = BTreeSet::new();
    let mut seen_trees = HashSet::new();
    for c in &commits {
        if !seen_trees.insert(c.tree) {
            continue;
        }
        for seg in log.segments_in_tree(c.tree)? {
            if clean.contains(&seg.hash) || replacements.contains_key(&seg.hash) {
                continue;
            }
            let (events, _) = log.read_segment(&seg, false)?;
            let (hidden, kept): (Vec<&Event>, Vec<&Event>) =
                events.iter().partition(|e| forgets.hides(e));
            if hidden.is_empty() {
                clean.insert(seg.hash);
                continue;
            }
            report.purged.extend(hidden.iter().map(|e| (*e).clone()));
            hidden_headlines.extend(
                hidden
                    .iter()
                    .map(|e| e.headline(72))
                    .filter(|h| h.chars().count() >= 4),
            );
            replacements.insert(
                seg.hash,
                Replacement {
                    segments: Segment::encode(kept),
                    removed: hidden.len(),
                },
            );
        }
    }
    let mut remotes = tracking_refs(repo)?;
    if replacements.is_empty() {
        if !forgets.is_empty() {
            // History is clean, but objects fetched or left from before
            // (a refused sync) may still hold forgotten bytes.
            prune(repo)?;
        }
        return Ok(report);
    }
    report.segments_rewritten = replacements.len();
    report.events_purged = replacements.values().map(|r| r.removed).sum();

    let mut staging = repo.git()?.clone().with_object_memory();
    // Blobs of the replacement segments.
    let mut blobs: HashMap<String, Vec<(String, ObjectId)>> = HashMap::new();
    for (old, r) in &replacements {
        let mut written = Vec::new();
        for s in &r.segments {
            let blob = staging.write_blob(&s.bytes).map_err(Error::git)?.detach();
            written.push((s.path(), blob));
        }
        blobs.insert(old.clone(), written);
    }

    let mut rewritten: HashMap<ObjectId, ObjectId> = HashMap::new();
    let mut new_trees: HashMap<ObjectId, ObjectId> = HashMap::new();
    for c in &commits {
        let tree = match new_trees.get(&c.tree) {
            Some(t) => *t,
            None => {
                let t = rewrite_tree(&staging, c.tree, &replacements, &blobs)?;
                new_trees.insert(c.tree, t);
                t
            }
        };
        let parents: Vec<ObjectId> = c
            .parents
            .iter()
            .map(|p| rewritten.get(p).copied().unwrap_or(*p))
            .collect();
        if tree == c.tree && parents == c.parents {
            rewritten.insert(c.id, c.id);
            continue;
        }
        let original = repo.git()?.find_commit(c.id).map_err(Error::git)?;
        let mut commit = original
            .decode()
            .map_err(Error::git)?
            .into_owned()
            .map_err(Error::git)?;
        let removed = removed_by(&log, c, &replacements)?;
        commit.message = if c.parents.len() > 1 {
            scrub(&c.message, &hidden_headlines).into()
        } else if removed > 0 {
            let parent_tree = match parents.first() {
                Some(p) => Some(
                    staging
                        .find_commit(*p)
                        .map_err(Error::git)?
                        .tree_id()
                        .map_err(Error::git)?
                        .detach(),
                ),
                None => None,
            };
            seal_message(&staging, c, parent_tree, tree, removed)?.into()
        } else {
            scrub(&c.message, &hidden_headlines).into()
        };
        commit.tree = tree;
        commit.parents = parents.into_iter().collect();
        let id = staging.write_object(&commit).map_err(Error::git)?.detach();
        rewritten.insert(c.id, id);
        report.commits_rewritten += 1;
    }
    let new_tip = rewritten.get(&tip).copied().unwrap_or(tip);
    let objects = staging.objects.take_object_memory().unwrap_or_default();
    remove_stale_lock(repo, repo.ref_name());
    publish(repo, repo.ref_name(), &objects, Some(tip), new_tip, "memlog: purge")?;
    report.new_tip = Some(new_tip.to_string());
    remember_purged(
        repo,
        rewritten
            .iter()
            .filter(|(old, new)| old != new)
            .map(|(old, _)| *old),
    )?;

    for r in &remotes {
        git_command::run(repo, &["update-ref", "-d", &r.1])?;
        report.tracking_refs_deleted.push(r.1.clone());
    }
    for configured in &repo.config.sync.remotes {
        if !remotes.iter().any(|(name, _)| name == configured) {
            remotes.push((configured.clone(), String::new()));
        }
    }
    report.remotes_to_force_push = remotes.into_iter().map(|(name, _)| name).collect();
    report.remotes_to_force_push.sort();
    report.remotes_to_force_push.dedup();

    prune(repo)?;
    Ok(report)
}

/// Expires every reflog and deletes unreachable objects (gix has no gc).
fn prune(repo: &Repo) -> Result<()> {
    git_command::run(
        repo,
        &[
            "reflog",
            "expire",
            "--expire=now",
            "--expire-unreachable=now",
            "--all",
        ],
    )?;
    git_command::run(repo, &["gc", "--quiet", "--prune=now"])?;
    Ok(())
}

/// Commits reachable from `tip`, every parent before its children.
fn oldest_first(log: &Log, tip: ObjectId) -> Result<Vec<CommitInfo>> {
    let mut infos: HashMap<ObjectId, CommitInfo> = HashMap::new();
    let mut order = Vec::new();
    let mut done = HashSet::new();
    // (commit, parents pushed?)
    let mut stack = vec![(tip, false)];
    while let Some((id, expanded)) = stack.pop() {
        if done.contains(&id) {
            continue;
        }
        if expanded {
            done.insert(id);
            order.push(id);
            continue;
        }
        let info = match infos.get(&id) {
            Some(i) => i.clone(),
            None => {
                let i = log.commit(id)?;
                infos.insert(id, i.clone());
                i
            }
        };
        stack.push((id, true));
        for p in info.parents.iter().rev() {
            if !done.contains(p) {
                stack.push((*p, false));
            }
        }
    }
    Ok(order
        .into_iter()
        .filter_map(|id| infos.remove(&id))
        .collect())
}

/// The tree with each purged segment replaced by its replacements.
fn rewrite_tree(
    git: &gix::Repository,
    tree: ObjectId,
    replacements: &HashMap<String, Replacement>,
    blobs: &HashMap<String, Vec<(String, ObjectId)>>,
) -> Result<ObjectId> {
    let current = git.find_tree(tree).map_err(Error::git)?;
    let mut editor = None;
    for old in replacements.keys() {
        let path = segment::path_for(old);
        if current
            .lookup_entry_by_path(&path)
            .map_err(Error::git)?
            .is_none()
        {
            continue;
        }
        let editor = match &mut editor {
            Some(e) => e,
            None => editor.insert(git.edit_tree(tree).map_err(Error::git)?),
        };
        editor.remove(path.as_str()).map_err(Error::git)?;
        for (new_path, blob) in blobs.get(old).into_iter().flatten() {
            editor
                .upsert(new_path.as_str(), EntryKind::Blob, *blob)
                .map_err(Error::git)?;
        }
    }
    match editor {
        Some(mut e) => Ok(e.write().map_err(Error::git)?.detach()),
        None => Ok(tree),
    }
}

/// Forgotten events among those a commit added to its first parent.
fn removed_by(
    log: &Log,
    commit: &CommitInfo,
    replacements: &HashMap<String, Replacement>,
) -> Result<usize> {
    Ok(log
        .added_segments(commit)?
        .iter()
        .filter_map(|s| replacements.get(&s.hash))
        .map(|r| r.removed)
        .sum())
}

/// The message of a rewritten seal commit: regenerated from the events it
/// still adds, with the `Memlog-Purged` trailer.
fn seal_message(
    git: &gix::Repository,
    commit: &CommitInfo,
    parent_tree: Option<ObjectId>,
    tree: ObjectId,
    removed: usize,
) -> Result<String> {
    let session = commit.session.clone().unwrap_or_default();
    let added = added_events(git, parent_tree, tree)?;
    let base = if added.is_empty() {
        format!(
            "Purged session {session}\n\nEvery event this commit sealed was forgotten and purged.\n\n{}: {session}\n{}: 0\n",
            crate::log::SESSION_TRAILER,
            crate::log::EVENTS_TRAILER
        )
    } else {
        let refs: Vec<&Event> = added.iter().collect();
        commit_message(&session, &refs)
    };
    Ok(format!("{base}{PURGED_TRAILER}: {removed} events\n"))
}

/// Events in the segments of `tree` that are not in `parent_tree`, read
/// from `git` (which sees the staged objects).
fn added_events(
    git: &gix::Repository,
    parent_tree: Option<ObjectId>,
    tree: ObjectId,
) -> Result<Vec<Event>> {
    let before: HashSet<String> = match parent_tree {
        Some(t) => segments_of(git, t)?.into_iter().map(|s| s.hash).collect(),
        None => HashSet::new(),
    };
    let mut out = Vec::new();
    for seg in segments_of(git, tree)? {
        if before.contains(&seg.hash) {
            continue;
        }
        let bytes = git.find_blob(seg.blob).map_err(Error::git)?.take_data();
        out.extend(segment::decode_trusted(&bytes).0);
    }
    sort_events(&mut out);
    Ok(out)
}

/// Segments of a root tree, read through `git`.
fn segments_of(git: &gix::Repository, tree: ObjectId) -> Result<Vec<SegmentRef>> {
    let mut out = Vec::new();
    let root = git.find_tree(tree).map_err(Error::git)?;
    let Some(dir) = root
        .lookup_entry_by_path(segment::SEGMENTS_DIR)
        .map_err(Error::git)?
    else {
        return Ok(out);
    };
    let dir = git.find_tree(dir.object_id()).map_err(Error::git)?;
    for sub in dir.decode().map_err(Error::git)?.entries.iter() {
        if !sub.mode.is_tree() {
            continue;
        }
        let sub = git.find_tree(sub.oid.to_owned()).map_err(Error::git)?;
        for e in sub.decode().map_err(Error::git)?.entries.iter() {
            if let Some(h) = segment::hash_from_name(&e.filename.to_string()) {
                out.push(SegmentRef {
                    hash: h.to_string(),
                    blob: e.oid.to_owned(),
                });
            }
        }
    }
    Ok(out)
}

/// Replaces the headlines of forgotten events in a message by `[purged]`.
fn scrub(message: &str, hidden_headlines: &BTreeSet<String>) -> String {
    let mut out = message.to_string();
    for h in hidden_headlines {
        out = out.replace(h.as_str(), "[purged]");
    }
    out
}
