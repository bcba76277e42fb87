//! Reading the log: the memlog ref, its commits, and the segments in them.
//!
//! The tree of the ref's tip holds every sealed segment (merges are unions),
//! so the live log is simply the segments of the tip tree. History is walked
//! only to tell which commit (session seal) added which segments.

use std::collections::{HashMap, HashSet};

use gix::ObjectId;
use memlog_format::scope::Scope;
use memlog_format::segment::{self, LineProblem, SEGMENTS_DIR};
use memlog_format::visibility::Forgets;
use memlog_format::{Event, event::sort_events};

use crate::{Error, Repo, Result};

/// Trailer naming the session a commit seals.
pub const SESSION_TRAILER: &str = "Memlog-Session";
/// Trailer giving the number of events a commit adds.
pub const EVENTS_TRAILER: &str = "Memlog-Events";

/// A segment as stored in a tree.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SegmentRef {
    /// blake3 of the bytes, from the file name.
    pub hash: String,
    /// The git blob holding the bytes.
    pub blob: ObjectId,
    /// The log whose tree holds it (whose store holds the blob).
    pub scope: Scope,
}

/// One commit of the memlog ref.
#[derive(Clone, Debug)]
pub struct CommitInfo {
    /// The commit.
    pub id: ObjectId,
    /// Its tree.
    pub tree: ObjectId,
    /// Its parents (two or more: a merge).
    pub parents: Vec<ObjectId>,
    /// `Memlog-Session` trailer (absent on merge commits).
    pub session: Option<String>,
    /// `Memlog-Events` trailer.
    pub events: Option<u64>,
    /// The message's first line.
    pub subject: String,
    /// The whole message.
    pub message: String,
    /// Author time: when the session started (seconds since the epoch).
    pub author_time: i64,
    /// Committer time: when it was sealed.
    pub commit_time: i64,
}

/// Segments added and removed between two trees.
#[derive(Clone, Debug, Default)]
pub struct SegmentDiff {
    /// Segments only in the new tree.
    pub added: Vec<SegmentRef>,
    /// Segments only in the old tree.
    pub removed: Vec<SegmentRef>,
}

/// A segment that failed verification.
#[derive(Clone, Debug)]
pub struct SegmentProblem {
    /// The segment's path in the tree.
    pub path: String,
    /// What is wrong with it.
    pub problem: String,
    /// Lines that did not decode.
    pub lines: Vec<LineProblem>,
}

/// The ref of this machine's personal events (FORMAT.md §9), in the
/// personal store ([`Repo::personal_store`]): a repository of its own, so
/// that no git command of the user's repository carries it.
pub const PERSONAL_REF: &str = "refs/memlog/personal";

/// Read access to one log of a repository: the shared memlog ref, or the
/// personal one.
pub struct Log<'r> {
    repo: &'r Repo,
    scope: Scope,
}

impl<'r> Log<'r> {
    /// Reads the memlog ref of `repo` (the shared log).
    pub fn new(repo: &'r Repo) -> Log<'r> {
        Log::of(repo, Scope::Shared)
    }

    /// Reads this machine's personal log ([`PERSONAL_REF`]).
    pub fn personal(repo: &'r Repo) -> Log<'r> {
        Log::of(repo, Scope::Personal)
    }

    /// Reads the log of `scope`.
    pub fn of(repo: &'r Repo, scope: Scope) -> Log<'r> {
        Log { repo, scope }
    }

    /// Which log this is.
    pub fn scope(&self) -> Scope {
        self.scope
    }

    /// The ref this log reads.
    pub fn ref_name(&self) -> &'r str {
        match self.scope {
            Scope::Shared => self.repo.ref_name(),
            Scope::Personal => PERSONAL_REF,
        }
    }

    /// The repository.
    pub fn repo(&self) -> &'r Repo {
        self.repo
    }

    /// The repository the log's ref and objects are in: the repository
    /// itself, or for the personal log its store.
    pub fn store(&self) -> &'r Repo {
        match self.scope {
            Scope::Shared => self.repo,
            Scope::Personal => self.repo.personal_store(),
        }
    }

    /// The store's git repository.
    pub fn git(&self) -> Result<&'r gix::Repository> {
        self.store().git()
    }

    /// Fails when the ref exists and is not a memlog log (the user's own
    /// branch of that name: its tip holds code), naming what gives it away:
    /// memlog writes nothing on such a ref.
    pub fn check_ours(&self) -> Result<()> {
        match self.tip()? {
            Some(t) => crate::sync::check::local_tip_is_memlogs(self, t),
            None => Ok(()),
        }
    }

    /// The working tree that has the log's ref checked out, if one does:
    /// memlog moves no branch under a working tree, so nothing is sealed
    /// until it is switched away.
    pub fn checked_out(&self) -> Option<std::path::PathBuf> {
        crate::ref_lock::checked_out(self.store(), self.ref_name())
    }

    /// The commit the ref points to, if it exists.
    pub fn tip(&self) -> Result<Option<ObjectId>> {
        let name = self.ref_name();
        let store = self.store();
        // a store not made yet holds no log (and reading must not make it)
        if store.is_personal_store() && !store.git_dir().join("HEAD").exists() {
            return Ok(None);
        }
        let found = store.git()?.try_find_reference(name).map_err(Error::git)?;
        let Some(mut reference) = found else {
            return Ok(None);
        };
        let id = reference.peel_to_id().map_err(Error::git)?;
        Ok(Some(id.detach()))
    }

    /// Whether the ref's latest update created it, as its reflog says (the
    /// latest entry has no previous value): a clone's first sync, a fetch
    /// into a new ref. `false` when there is no reflog to tell.
    pub fn created_by_last_update(&self) -> Result<bool> {
        let Some(reference) = self
            .git()?
            .try_find_reference(self.ref_name())
            .map_err(Error::git)?
        else {
            return Ok(false);
        };
        let mut platform = reference.log_iter();
        let Some(mut lines) = platform.rev().map_err(Error::git)? else {
            return Ok(false);
        };
        match lines.next() {
            Some(Ok(latest)) => Ok(latest.previous_oid.is_null()),
            Some(Err(e)) => Err(Error::git(e)),
            None => Ok(false),
        }
    }

    /// The tip as the ref's files say, without opening the repository (the
    /// freshness check of every search and prompt hook), else as
    /// [`Log::tip`] finds it. A ref being rewritten meanwhile may read as
    /// its previous value: fine for asking whether an index is behind, not
    /// for writing.
    pub fn peek_tip(&self) -> Result<Option<ObjectId>> {
        let store = self.store();
        match crate::locate::reference(store.git_dir(), &store.common_dir, self.ref_name()) {
            Some(None) => Ok(None),
            Some(Some(id)) => match ObjectId::from_hex(id.as_bytes()) {
                Ok(id) => Ok(Some(id)),
                Err(_) => self.tip(),
            },
            None => self.tip(),
        }
    }

    /// Resolves a revision (`memlog`, `memlog~2`, a commit id…) to a commit.
    pub fn resolve(&self, rev: &str) -> Result<ObjectId> {
        let id = self.git()?.rev_parse_single(rev).map_err(|e| {
            // gix's words for `memlog~999` name its traversal, not the cause
            let said = e.to_string();
            let why = if said.contains("NthAncestor") {
                "the log has fewer commits than that before it".to_string()
            } else {
                said
            };
            Error::invalid(format!("revision {rev:?}"), why)
        })?;
        let object = id.object().map_err(Error::git)?;
        let commit = object
            .peel_to_commit()
            .map_err(|e| Error::invalid(format!("revision {rev:?}"), e.to_string()))?;
        Ok(commit.id)
    }

    /// Reads one commit.
    pub fn commit(&self, id: ObjectId) -> Result<CommitInfo> {
        let commit = self
            .git()?
            .find_commit(id)
            .map_err(|e| self.missing(id, gix::objs::Kind::Commit, e))?;
        let decoded = commit.decode().map_err(Error::git)?;
        let message = decoded.message.to_string();
        let trailers = trailers(&message);
        let author_time = decoded.author().map(|a| a.seconds()).unwrap_or(0);
        let commit_time = decoded.committer().map(|c| c.seconds()).unwrap_or(0);
        Ok(CommitInfo {
            id,
            tree: decoded.tree(),
            parents: decoded.parents().collect(),
            session: trailers.get(SESSION_TRAILER).cloned(),
            events: trailers.get(EVENTS_TRAILER).and_then(|n| n.parse().ok()),
            subject: message.lines().next().unwrap_or("").to_string(),
            message,
            author_time,
            commit_time,
        })
    }

    /// Every commit reachable from `tip`, newest first (committer time,
    /// then a commit before its parents: seals a second apart share a
    /// time; then author time and id, for a stable order).
    pub fn commits_from(&self, tip: ObjectId) -> Result<Vec<CommitInfo>> {
        let mut seen = HashSet::new();
        let mut stack = vec![tip];
        let mut out = Vec::new();
        while let Some(id) = stack.pop() {
            if !seen.insert(id) {
                continue;
            }
            let info = self.commit(id)?;
            stack.extend(info.parents.iter().copied());
            out.push(info);
        }
        let depth = depths(&out);
        out.sort_by(|a, b| {
            (b.commit_time, depth.get(&b.id), b.author_time, b.id).cmp(&(
                a.commit_time,
                depth.get(&a.id),
                a.author_time,
                a.id,
            ))
        });
        Ok(out)
    }

    /// Every commit of the memlog ref, newest first; empty if there is none.
    pub fn commits(&self) -> Result<Vec<CommitInfo>> {
        match self.tip()? {
            Some(tip) => self.commits_from(tip),
            None => Ok(Vec::new()),
        }
    }

    /// Entries of the subtree at `segments/` of `tree`: (dir name, tree id).
    fn segment_dirs(&self, tree: ObjectId) -> Result<Vec<(String, ObjectId)>> {
        let Some(segments) = self.subtree(tree, SEGMENTS_DIR)? else {
            return Ok(Vec::new());
        };
        self.tree_entries(segments, true)
    }

    fn subtree(&self, tree: ObjectId, name: &str) -> Result<Option<ObjectId>> {
        Ok(self
            .tree_entries(tree, true)?
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, id)| id))
    }

    /// Entries of a tree: sub-trees when `trees` is true, else blobs.
    fn tree_entries(&self, tree: ObjectId, trees: bool) -> Result<Vec<(String, ObjectId)>> {
        let tree = self
            .git()?
            .find_tree(tree)
            .map_err(|e| self.missing(tree, gix::objs::Kind::Tree, e))?;
        let decoded = tree.decode().map_err(Error::git)?;
        Ok(decoded
            .entries
            .iter()
            .filter(|e| e.mode.is_tree() == trees)
            .map(|e| (e.filename.to_string(), e.oid.to_owned()))
            .collect())
    }

    /// All segments in the tree of `commit`.
    pub fn segments_at(&self, commit: ObjectId) -> Result<Vec<SegmentRef>> {
        let tree = self.commit(commit)?.tree;
        self.segments_in_tree(tree)
    }

    /// All segments in a root tree.
    pub fn segments_in_tree(&self, tree: ObjectId) -> Result<Vec<SegmentRef>> {
        let mut out = Vec::new();
        for (_, dir) in self.segment_dirs(tree)? {
            out.extend(self.segments_in_dir(dir)?);
        }
        Ok(out)
    }

    fn segments_in_dir(&self, dir: ObjectId) -> Result<Vec<SegmentRef>> {
        Ok(self
            .tree_entries(dir, false)?
            .into_iter()
            .filter_map(|(name, blob)| {
                segment::hash_from_name(&name).map(|h| SegmentRef {
                    hash: h.to_string(),
                    blob,
                    scope: self.scope,
                })
            })
            .collect())
    }

    /// Segments in `commit`'s tree that are not in its first parent's tree:
    /// what the commit added. Only sub-trees whose ids differ are read.
    pub fn added_segments(&self, commit: &CommitInfo) -> Result<Vec<SegmentRef>> {
        let Some(parent) = commit.parents.first() else {
            return self.segments_in_tree(commit.tree);
        };
        let parent_tree = self.commit(*parent)?.tree;
        self.added_between(parent_tree, commit.tree)
    }

    /// Segments in tree `new` that are not in tree `old`.
    pub fn added_between(&self, old: ObjectId, new: ObjectId) -> Result<Vec<SegmentRef>> {
        Ok(self.diff_trees(old, new)?.added)
    }

    /// Segments added and removed between two root trees. Only sub-trees
    /// whose ids differ are read. A segment is its name and its blob: other
    /// bytes under the same name (a damaged or hand-edited log) count as
    /// removed and added, so that whoever reads what was added verifies
    /// them ([`Log::read_segment_bytes`]).
    pub fn diff_trees(&self, old: ObjectId, new: ObjectId) -> Result<SegmentDiff> {
        let mut diff = SegmentDiff::default();
        if old == new {
            return Ok(diff);
        }
        let mut old_dirs: HashMap<String, ObjectId> = self.segment_dirs(old)?.into_iter().collect();
        for (name, dir) in self.segment_dirs(new)? {
            match old_dirs.remove(&name) {
                Some(old_dir) if old_dir == dir => {}
                Some(old_dir) => {
                    let before = self.segments_in_dir(old_dir)?;
                    let after = self.segments_in_dir(dir)?;
                    let key = |s: &SegmentRef| (s.hash.clone(), s.blob);
                    let before_set: HashSet<(String, ObjectId)> = before.iter().map(key).collect();
                    let after_set: HashSet<(String, ObjectId)> = after.iter().map(key).collect();
                    diff.removed.extend(
                        before
                            .iter()
                            .filter(|s| !after_set.contains(&key(s)))
                            .cloned(),
                    );
                    diff.added.extend(
                        after
                            .iter()
                            .filter(|s| !before_set.contains(&key(s)))
                            .cloned(),
                    );
                }
                None => diff.added.extend(self.segments_in_dir(dir)?),
            }
        }
        for (_, old_dir) in old_dirs {
            diff.removed.extend(self.segments_in_dir(old_dir)?);
        }
        Ok(diff)
    }

    /// Whether `id` names a tree that exists in the repository.
    pub fn has_tree(&self, id: ObjectId) -> bool {
        self.git().is_ok_and(|g| g.find_tree(id).is_ok())
    }

    /// The bytes of a blob.
    pub fn read_blob(&self, blob: ObjectId) -> Result<Vec<u8>> {
        let mut b = self
            .git()?
            .find_blob(blob)
            .map_err(|e| self.missing(blob, gix::objs::Kind::Blob, e))?;
        Ok(b.take_data())
    }

    /// The error of a read of `id` that failed. The log's commits, trees
    /// and segments are all read through here, so an object a partial or
    /// shallow clone left out is explained in one place for every command
    /// (log, search, fsck, sync, the hooks).
    fn missing(&self, id: ObjectId, kind: gix::objs::Kind, e: impl std::fmt::Display) -> Error {
        crate::incomplete::missing_object(self.store(), id, kind, e)
    }

    /// The bytes of a segment, unverified, from the store of the log that
    /// listed it (whichever log this is).
    pub fn segment_blob(&self, seg: &SegmentRef) -> Result<Vec<u8>> {
        Log::of(self.repo, seg.scope).read_blob(seg.blob)
    }

    /// The bytes of a segment, verified: bytes that do not hash to the
    /// segment's name are [`Error::DamagedSegment`], naming it.
    pub fn read_segment_bytes(&self, seg: &SegmentRef) -> Result<Vec<u8>> {
        let bytes = self.segment_blob(seg)?;
        let actual = blake3::hash(&bytes).to_hex();
        if actual.as_str() != seg.hash {
            return Err(Error::DamagedSegment {
                path: segment::path_for(&seg.hash),
                actual: actual.to_string(),
            });
        }
        Ok(bytes)
    }

    /// Reads and verifies a segment. With `verify_ids`, every event's id is
    /// recomputed too (slower; fsck does). Lines that do not decode are
    /// skipped and reported.
    ///
    /// A segment whose bytes do not hash to its name is read with every id
    /// checked: its events that are still whole are kept, the rest is
    /// reported. One damaged segment then costs its damaged lines, not the
    /// whole memory of every command.
    pub fn read_segment(
        &self,
        seg: &SegmentRef,
        verify_ids: bool,
    ) -> Result<(Vec<Event>, Option<SegmentProblem>)> {
        let (bytes, damaged) = match self.read_segment_bytes(seg) {
            Ok(bytes) => (bytes, None),
            Err(Error::DamagedSegment { actual, .. }) => (self.segment_blob(seg)?, Some(actual)),
            Err(e) => return Err(e),
        };
        let (events, lines) = if verify_ids || damaged.is_some() {
            segment::decode(&bytes)
        } else {
            segment::decode_trusted(&bytes)
        };
        let problem = match damaged {
            Some(actual) => Some(SegmentProblem {
                path: segment::path_for(&seg.hash),
                problem: format!(
                    "damaged: its bytes hash to {actual}, not to its name; {} whole event(s) \
                     read, {} line(s) left out",
                    events.len(),
                    lines.len()
                ),
                lines,
            }),
            None => (!lines.is_empty()).then(|| SegmentProblem {
                path: segment::path_for(&seg.hash),
                problem: format!("{} bad line(s)", lines.len()),
                lines,
            }),
        };
        Ok((events, problem))
    }

    /// Every sealed event at `commit` (forgotten ones included), with the
    /// problems of segments that failed verification.
    pub fn events_at(&self, commit: ObjectId) -> Result<(Vec<Event>, Vec<SegmentProblem>)> {
        let mut events = Vec::new();
        let mut problems = Vec::new();
        for seg in self.segments_at(commit)? {
            let (evs, problem) = self.read_segment(&seg, false)?;
            events.extend(evs);
            problems.extend(problem);
        }
        Ok((events, problems))
    }

    /// Every sealed event at the tip; empty when the ref does not exist.
    pub fn events(&self) -> Result<(Vec<Event>, Vec<SegmentProblem>)> {
        match self.tip()? {
            Some(tip) => self.events_at(tip),
            None => Ok((Vec::new(), Vec::new())),
        }
    }
}

/// Each commit's distance from the root along its longest parent chain:
/// a commit is deeper than each of its parents.
fn depths(commits: &[CommitInfo]) -> HashMap<ObjectId, usize> {
    let parents: HashMap<ObjectId, &[ObjectId]> = commits
        .iter()
        .map(|c| (c.id, c.parents.as_slice()))
        .collect();
    let mut depth: HashMap<ObjectId, usize> = HashMap::with_capacity(commits.len());
    for c in commits {
        // iteratively: a long history would overflow a recursion
        let mut stack = vec![c.id];
        while let Some(&id) = stack.last() {
            if depth.contains_key(&id) {
                stack.pop();
                continue;
            }
            let ps = parents.get(&id).copied().unwrap_or(&[]);
            let pending: Vec<ObjectId> = ps
                .iter()
                .filter(|p| parents.contains_key(*p) && !depth.contains_key(*p))
                .copied()
                .collect();
            if pending.is_empty() {
                let d = ps
                    .iter()
                    .filter_map(|p| depth.get(p))
                    .max()
                    .map_or(0, |d| d + 1);
                depth.insert(id, d);
                stack.pop();
            } else {
                stack.extend(pending);
            }
        }
    }
    depth
}

/// Every event in the journals of running (unsealed) sessions.
pub fn journal_events(repo: &Repo) -> Result<Vec<Event>> {
    let dir = repo.journal_dir();
    let mut out = Vec::new();
    for j in crate::journal::list(&dir)? {
        let (events, _) = crate::journal::Journal::new(&dir, &j.session)?.read()?;
        out.extend(events);
    }
    Ok(out)
}

/// Events of all sources merged and with forgotten ones removed, ordered by
/// (ts, session, seq, id), each id once.
pub fn live_events(mut events: Vec<Event>) -> Vec<Event> {
    let forgets = Forgets::from_events(events.iter());
    let mut seen = HashSet::new();
    events.retain(|e| !forgets.hides(e) && seen.insert(e.id.clone()));
    sort_events(&mut events);
    events
}

/// Trailers of a commit message: `Key: value` lines of its last paragraph.
pub fn trailers(message: &str) -> HashMap<String, String> {
    let last = message.trim_end().rsplit("\n\n").next().unwrap_or("");
    last.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(": ")?;
            (!k.is_empty() && !k.contains(' ')).then(|| (k.to_string(), v.trim().to_string()))
        })
        .collect()
}
