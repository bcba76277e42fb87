//! Rewriting a history without some events: the one algorithm a purge
//! runs on the clone that makes it, and every other clone runs when its
//! sync meets the purge's record (FORMAT.md §3.2). Same record and same
//! commits in, same commits out, so clones converge on one history.
//!
//! - A segment the record names is replaced by its lines without the
//!   purged events (byte for byte otherwise; none when nothing is left),
//!   whose name must be the one the record gives.
//! - Commits are rewritten oldest first, parents mapped to their rewritten
//!   selves, authors, committers and headers kept. A commit the record
//!   lists whose rewritten self is here already (fetched with the purging
//!   clone's history) is taken as it is.
//! - Messages: a seal commit that added purged events gets a message
//!   regenerated from the events it still adds, plus `Memlog-Purged: <n>
//!   events`; a merge's list lines `- <session>: <subject>` of the purged
//!   events' sessions lose the subject (it may be the purged text); other
//!   messages stay.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use gix::ObjectId;
use gix::objs::tree::EntryKind;
use memlog_format::Event;
use memlog_format::event::sort_events;
use memlog_format::scope::Scope;
use memlog_format::segment::{self, SEGMENTS_DIR, Segment};

use crate::log::{CommitInfo, EVENTS_TRAILER, Log, SESSION_TRAILER, SegmentRef};
use crate::purge_record::PurgeRecord;
use crate::seal::commit_message;
use crate::{Error, Result};

/// Trailer of a rewritten seal commit: how many events the purge removed
/// from it.
pub const PURGED_TRAILER: &str = "Memlog-Purged";

/// What goes, and what a record says it becomes.
pub(crate) struct Rewrite<'a> {
    /// Ids of the events that go.
    pub events: HashSet<&'a str>,
    /// Their sessions.
    pub sessions: HashSet<&'a str>,
    /// Segments to replace, with the names of their replacements.
    pub segments: &'a BTreeMap<String, Vec<String>>,
    /// Commits rewritten already, with their new ids.
    pub adopt: HashMap<ObjectId, ObjectId>,
}

impl<'a> Rewrite<'a> {
    /// The rewrite a record describes.
    pub fn of(record: &'a PurgeRecord) -> Rewrite<'a> {
        Rewrite {
            events: record.events.iter().map(String::as_str).collect(),
            sessions: record.sessions.iter().map(String::as_str).collect(),
            segments: &record.segments,
            adopt: record
                .commits
                .iter()
                .filter_map(|(old, new)| {
                    Some((
                        ObjectId::from_hex(old.as_bytes()).ok()?,
                        ObjectId::from_hex(new.as_bytes()).ok()?,
                    ))
                })
                .collect(),
        }
    }
}

/// A rewritten history.
pub(crate) struct Rewritten {
    /// The new tip.
    pub tip: ObjectId,
    /// Each commit rewritten (old id, new id).
    pub commits: BTreeMap<String, String>,
    /// The events taken out, each once.
    pub purged: Vec<Event>,
    /// Where the new objects are staged (in memory, over the repository).
    pub staging: gix::Repository,
}

/// A segment's replacement, once computed.
struct Replacement {
    blobs: Vec<(String, ObjectId)>,
    removed: usize,
}

/// Rewrites the history of `tip` (see the module documentation).
pub(crate) fn rewrite_history(log: &Log, tip: ObjectId, rw: &Rewrite) -> Result<Rewritten> {
    let mut run = Run {
        staging: log.git()?.clone().with_object_memory(),
        scope: log.scope(),
        rw,
        replacements: HashMap::new(),
        dirs: HashMap::new(),
        trees: HashMap::new(),
        purged: Vec::new(),
        seen_purged: HashSet::new(),
    };
    let affected: BTreeSet<&str> = rw.segments.keys().map(|h| &h[..2.min(h.len())]).collect();
    let mut map: HashMap<ObjectId, ObjectId> = HashMap::new();
    let mut commits = BTreeMap::new();
    for c in oldest_first(log, tip)? {
        if let Some(new) = rw.adopt.get(&c.id)
            && run.staging.find_commit(*new).is_ok()
        {
            map.insert(c.id, *new);
            commits.insert(c.id.to_string(), new.to_string());
            continue;
        }
        let tree = run.tree(c.tree, &affected)?;
        let parents: Vec<ObjectId> = c
            .parents
            .iter()
            .map(|p| map.get(p).copied().unwrap_or(*p))
            .collect();
        if tree == c.tree && parents == c.parents {
            map.insert(c.id, c.id);
            continue;
        }
        let mut commit = run
            .staging
            .find_commit(c.id)
            .map_err(Error::git)?
            .decode()
            .map_err(Error::git)?
            .into_owned()
            .map_err(Error::git)?;
        let message = if c.parents.len() > 1 {
            scrub_merge(&c.message, &rw.sessions)
        } else {
            let removed = run.removed_by(log, &c)?;
            if removed > 0 {
                let parent_tree = match parents.first() {
                    Some(p) => Some(
                        run.staging
                            .find_commit(*p)
                            .map_err(Error::git)?
                            .tree_id()
                            .map_err(Error::git)?
                            .detach(),
                    ),
                    None => None,
                };
                seal_message(&run.staging, &c, parent_tree, tree, removed)?
            } else {
                c.message.clone()
            }
        };
        commit.message = message.into();
        commit.tree = tree;
        commit.parents = parents.into_iter().collect();
        let id = run
            .staging
            .write_object(&commit)
            .map_err(Error::git)?
            .detach();
        map.insert(c.id, id);
        commits.insert(c.id.to_string(), id.to_string());
    }
    Ok(Rewritten {
        tip: map.get(&tip).copied().unwrap_or(tip),
        commits,
        purged: run.purged,
        staging: run.staging,
    })
}

struct Run<'r, 'a> {
    staging: gix::Repository,
    /// The log being rewritten.
    scope: Scope,
    rw: &'r Rewrite<'a>,
    /// Replacements by old segment name.
    replacements: HashMap<String, Replacement>,
    /// For each `segments/<aa>` sub-tree met: the segments to replace in it.
    dirs: HashMap<ObjectId, Vec<SegmentRef>>,
    /// Rewritten root trees.
    trees: HashMap<ObjectId, ObjectId>,
    purged: Vec<Event>,
    seen_purged: HashSet<String>,
}

impl Run<'_, '_> {
    /// The root tree without the purged segments, their replacements in.
    fn tree(&mut self, tree: ObjectId, affected: &BTreeSet<&str>) -> Result<ObjectId> {
        if let Some(t) = self.trees.get(&tree) {
            return Ok(*t);
        }
        let mut present: Vec<SegmentRef> = Vec::new();
        let segments_dir = self
            .staging
            .find_tree(tree)
            .map_err(Error::git)?
            .lookup_entry_by_path(SEGMENTS_DIR)
            .map_err(Error::git)?
            .map(|e| e.object_id());
        if let Some(dir) = segments_dir {
            let subdirs: Vec<(String, ObjectId)> = self
                .staging
                .find_tree(dir)
                .map_err(Error::git)?
                .decode()
                .map_err(Error::git)?
                .entries
                .iter()
                .filter(|e| e.mode.is_tree())
                .map(|e| (e.filename.to_string(), e.oid.to_owned()))
                .collect();
            for (name, sub) in subdirs {
                if !affected.contains(name.as_str()) {
                    continue;
                }
                if !self.dirs.contains_key(&sub) {
                    let found = self.to_replace_in(sub)?;
                    self.dirs.insert(sub, found);
                }
                present.extend(self.dirs.get(&sub).into_iter().flatten().cloned());
            }
        }
        if present.is_empty() {
            self.trees.insert(tree, tree);
            return Ok(tree);
        }
        let mut edits = Vec::new();
        for seg in &present {
            let replacement = self.replacement(seg)?;
            edits.push((segment::path_for(&seg.hash), replacement.blobs.clone()));
        }
        let mut editor = self.staging.edit_tree(tree).map_err(Error::git)?;
        for (old, new) in edits {
            editor.remove(old.as_str()).map_err(Error::git)?;
            for (path, blob) in new {
                editor
                    .upsert(path.as_str(), EntryKind::Blob, blob)
                    .map_err(Error::git)?;
            }
        }
        let new = editor.write().map_err(Error::git)?.detach();
        self.trees.insert(tree, new);
        Ok(new)
    }

    /// The segments of a `segments/<aa>` sub-tree that the rewrite replaces.
    fn to_replace_in(&self, dir: ObjectId) -> Result<Vec<SegmentRef>> {
        let dir = self.staging.find_tree(dir).map_err(Error::git)?;
        Ok(dir
            .decode()
            .map_err(Error::git)?
            .entries
            .iter()
            .filter_map(|e| {
                let name = e.filename.to_string();
                let hash = segment::hash_from_name(&name)?;
                self.rw.segments.contains_key(hash).then(|| SegmentRef {
                    hash: hash.to_string(),
                    blob: e.oid.to_owned(),
                    scope: self.scope,
                })
            })
            .collect())
    }

    /// The replacement of a segment: its lines without the purged events,
    /// checked against the names the rewrite expects.
    fn replacement(&mut self, seg: &SegmentRef) -> Result<&Replacement> {
        if !self.replacements.contains_key(&seg.hash) {
            let bytes = self
                .staging
                .find_blob(seg.blob)
                .map_err(Error::git)?
                .take_data();
            if blake3::hash(&bytes).to_hex().as_str() != seg.hash {
                return Err(Error::DamagedSegment {
                    path: segment::path_for(&seg.hash),
                    actual: blake3::hash(&bytes).to_hex().to_string(),
                });
            }
            let (kept, removed) = segment::split_out(&bytes, |id| self.rw.events.contains(id));
            for line in &removed {
                if let Ok(text) = std::str::from_utf8(line)
                    && let Ok(e) = Event::from_line(text)
                    && self.seen_purged.insert(e.id.to_string())
                {
                    self.purged.push(e);
                }
            }
            let mut blobs = Vec::new();
            let mut names = Vec::new();
            if !kept.is_empty() {
                let new = Segment::from_bytes(kept);
                let blob = self
                    .staging
                    .write_blob(&new.bytes)
                    .map_err(Error::git)?
                    .detach();
                names.push(new.hash.clone());
                blobs.push((new.path(), blob));
            }
            let expected = self.rw.segments.get(&seg.hash);
            if expected.is_some_and(|e| *e != names) {
                return Err(Error::invalid(
                    format!("purge of segment {}", segment::path_for(&seg.hash)),
                    format!(
                        "rewriting it gives {names:?}, the purge record says {:?}",
                        expected.cloned().unwrap_or_default()
                    ),
                ));
            }
            self.replacements.insert(
                seg.hash.clone(),
                Replacement {
                    blobs,
                    removed: removed.len(),
                },
            );
        }
        self.replacements
            .get(&seg.hash)
            .ok_or_else(|| Error::invalid("purge", "a replacement went missing"))
    }

    /// Purged events among those a commit added to its first parent.
    fn removed_by(&self, log: &Log, commit: &CommitInfo) -> Result<usize> {
        Ok(log
            .added_segments(commit)?
            .iter()
            .filter_map(|s| self.replacements.get(&s.hash))
            .map(|r| r.removed)
            .sum())
    }
}

/// Commits reachable from `tip`, every parent before its children.
pub(crate) fn oldest_first(log: &Log, tip: ObjectId) -> Result<Vec<CommitInfo>> {
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

/// A merge message whose list lines name a purged session: the subject
/// after `- <session>: ` becomes `[purged]`.
fn scrub_merge(message: &str, sessions: &HashSet<&str>) -> String {
    let mut out = String::with_capacity(message.len());
    for line in message.split_inclusive('\n') {
        let named = line
            .strip_prefix("- ")
            .and_then(|rest| rest.split_once(": "))
            .filter(|(session, _)| sessions.contains(session));
        match named {
            Some((session, _)) => {
                out.push_str(&format!("- {session}: [purged]"));
                if line.ends_with('\n') {
                    out.push('\n');
                }
            }
            None => out.push_str(line),
        }
    }
    out
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
            "Purged session {session}\n\nEvery event this commit sealed was forgotten and purged.\n\n{SESSION_TRAILER}: {session}\n{EVENTS_TRAILER}: 0\n",
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
        Some(t) => segments_of(git, t)?
            .into_iter()
            .map(|(hash, _)| hash)
            .collect(),
        None => HashSet::new(),
    };
    let mut out = Vec::new();
    for (hash, blob) in segments_of(git, tree)? {
        if before.contains(&hash) {
            continue;
        }
        let bytes = git.find_blob(blob).map_err(Error::git)?.take_data();
        out.extend(segment::decode_trusted(&bytes).0);
    }
    sort_events(&mut out);
    Ok(out)
}

/// Segments of a root tree, read through `git`: (hash, blob).
fn segments_of(git: &gix::Repository, tree: ObjectId) -> Result<Vec<(String, ObjectId)>> {
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
                out.push((h.to_string(), e.oid.to_owned()));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_lines_of_purged_sessions_lose_their_subject() {
        let sessions: HashSet<&str> = ["s-leak"].into_iter().collect();
        let message = "Merge memlog from origin: 2 session(s), 4 event(s)\n\n- s-leak: the token is X\n- s-ok: fine\n1 segment(s) joined from origin.\n\nMemlog-Merge: origin\n";
        let scrubbed = scrub_merge(message, &sessions);
        assert!(scrubbed.contains("- s-leak: [purged]\n- s-ok: fine\n"));
        assert!(!scrubbed.contains("token"));
        assert!(scrubbed.ends_with("Memlog-Merge: origin\n"));
    }
}
