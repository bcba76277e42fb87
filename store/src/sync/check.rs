//! What sync accepts from a remote, and what it sends.
//!
//! A remote ref is merged only when it is a memlog log (FORMAT.md §3.3):
//! every commit the local log lacks is a seal (`Memlog-Session` and
//! `Memlog-Events` trailers), a purge record (`Memlog-Purge`) or a merge;
//! a root commit is a seal; and the tip's tree holds nothing but
//! `segments/<aa>/<64 hex>.jsonl` (in the directory of its first two
//! digits) and `purges/<64 hex>.json`. A code branch that happens to be
//! named `memlog` fails at once (its tree holds code), and is neither
//! merged nor pushed to.
//!
//! What is pushed passes the same test (a hand edit of the local log is
//! stopped here, not on every teammate's next sync), and neither side's
//! segments are taken damaged: the bytes of every segment the other side
//! lacks must hash to its name. Nothing personal is pushed: before a push,
//! the segments the remote lacks are checked for events marked
//! `meta.scope: personal` (FORMAT.md §9). Sealing never puts one there;
//! this is the last guard.

use std::collections::HashSet;

use gix::ObjectId;
use memlog_format::scope;
use memlog_format::segment::{self, SEGMENTS_DIR};

use crate::log::{EVENTS_TRAILER, Log, SESSION_TRAILER, SegmentRef, trailers};
use crate::purge_record::{self, PURGE_TRAILER, PURGES_DIR};
use crate::{Error, Result};

/// Refuses `tip` (fetched from `remote`) unless it is a memlog log; the
/// commits in `known` (the local history) are not looked at again.
pub(super) fn memlog_log(
    log: &Log,
    remote: &str,
    tip: ObjectId,
    known: &dyn Fn(&ObjectId) -> bool,
) -> Result<()> {
    let refuse = |why: String| Error::NotAMemlogLog {
        remote: remote.to_string(),
        ref_name: log.ref_name().to_string(),
        why,
        advice: advice(log, remote, tip),
    };
    let tip_tree = log.commit(tip)?.tree;
    if let Some(why) = tree_problem(log, tip_tree)? {
        return Err(refuse(why));
    }
    let mut stack = vec![tip];
    let mut seen = HashSet::new();
    while let Some(id) = stack.pop() {
        if known(&id) || !seen.insert(id) {
            continue;
        }
        let c = log.commit(id)?;
        let t = trailers(&c.message);
        let seal = t.contains_key(SESSION_TRAILER) && t.contains_key(EVENTS_TRAILER);
        let record = t.contains_key(PURGE_TRAILER);
        let short = &id.to_string()[..12];
        match c.parents.len() {
            0 if !seal => {
                return Err(refuse(format!(
                    "its root commit {short} ({:?}) is not a memlog seal (no {SESSION_TRAILER} \
                     trailer)",
                    c.subject
                )));
            }
            1 if !seal && !record => {
                return Err(refuse(format!(
                    "commit {short} ({:?}) is neither a memlog seal nor a purge record (no \
                     {SESSION_TRAILER} or {PURGE_TRAILER} trailer)",
                    c.subject
                )));
            }
            _ => {}
        }
        stack.extend(c.parents);
    }
    Ok(())
}

/// What to do about a remote ref memlog refuses. When it was memlog's log
/// up to some commit and something else committed on top (a README added
/// by hand, a tool's commit), how to put it back there; else, where else
/// memory can live (a code branch named like the log).
fn advice(log: &Log, remote: &str, tip: ObjectId) -> String {
    let ref_name = log.ref_name();
    match last_memlog_commit(log, tip) {
        Some((good, after)) if after > 0 => {
            let short = &good.to_string()[..12];
            format!(
                "It was memlog's log up to commit {short}; the {after} commit(s) after it \
                 were made by something else. If they are a mistake, put the log back (this \
                 drops them; keep their files elsewhere first): `git push \
                 --force-with-lease={ref_name}:{tip} {remote} {short}:{ref_name}`, then sync \
                 again"
            )
        }
        _ => "Keep memory on a ref of its own (`ref: refs/heads/agent-memory` in \
              .memlog.yaml) or in a repository of its own (`sync: { remotes: [URL] }`)"
            .to_string(),
    }
}

/// How many commits to look back for the last commit of memlog's on a
/// refused ref.
const LOOK_BACK: usize = 100;

/// The newest commit on `tip`'s first-parent line that is memlog's (a
/// seal, a purge record or a merge, over a memlog tree), and how many
/// commits come after it.
fn last_memlog_commit(log: &Log, tip: ObjectId) -> Option<(ObjectId, usize)> {
    let mut id = tip;
    for after in 0..LOOK_BACK {
        let c = log.commit(id).ok()?;
        let t = trailers(&c.message);
        let ours = c.parents.len() > 1
            || (t.contains_key(SESSION_TRAILER) && t.contains_key(EVENTS_TRAILER))
            || t.contains_key(PURGE_TRAILER);
        if ours && matches!(tree_problem(log, c.tree), Ok(None)) {
            return Some((id, after));
        }
        id = *c.parents.first()?;
    }
    None
}

/// Refuses to write on the local ref when its tip's tree holds anything
/// but `segments/` and `purges/` (the user's own branch of that name, with
/// code): the top level only, which a seal can afford every time.
pub(crate) fn local_tip_is_memlogs(log: &Log, tip: ObjectId) -> Result<()> {
    let git = log.git()?;
    let tree = log.commit(tip)?.tree;
    let t = git.find_tree(tree).map_err(Error::git)?;
    let entries: Vec<(String, bool)> = t
        .decode()
        .map_err(Error::git)?
        .entries
        .iter()
        .map(|e| (e.filename.to_string(), e.mode.is_tree()))
        .collect();
    match foreign_entries(&entries) {
        Some(why) => Err(Error::ForeignRef {
            ref_name: log.ref_name().to_string(),
            why,
        }),
        None => Ok(()),
    }
}

/// What a memlog log's top level never holds, named (a few of them).
fn foreign_entries(entries: &[(String, bool)]) -> Option<String> {
    let foreign: Vec<String> = entries
        .iter()
        .filter(|(name, is_tree)| !(*is_tree && (name == SEGMENTS_DIR || name == PURGES_DIR)))
        .map(|(name, is_tree)| {
            if *is_tree {
                format!("{name}/")
            } else {
                name.clone()
            }
        })
        .collect();
    if foreign.is_empty() {
        return None;
    }
    let more = foreign.len().saturating_sub(4);
    Some(format!(
        "its tree holds {}{}, which a memlog log never has (only {SEGMENTS_DIR}/ and \
         {PURGES_DIR}/)",
        foreign[..foreign.len().min(4)].join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    ))
}

/// What is wrong with a root tree for a memlog log, if anything.
fn tree_problem(log: &Log, tree: ObjectId) -> Result<Option<String>> {
    let git = log.git()?;
    let entries = |id: ObjectId| -> Result<Vec<(String, bool, ObjectId)>> {
        let t = git.find_tree(id).map_err(Error::git)?;
        Ok(t.decode()
            .map_err(Error::git)?
            .entries
            .iter()
            .map(|e| (e.filename.to_string(), e.mode.is_tree(), e.oid.to_owned()))
            .collect())
    };
    let mut top = Vec::new();
    for (name, is_tree, id) in entries(tree)? {
        match (name.as_str(), is_tree) {
            (SEGMENTS_DIR, true) => {
                for (dir, is_dir, dir_id) in entries(id)? {
                    if !is_dir || dir.len() != 2 || !is_hex(&dir) {
                        return Ok(Some(format!(
                            "{SEGMENTS_DIR}/{dir} is not a segment directory"
                        )));
                    }
                    for (file, is_sub_tree, _) in entries(dir_id)? {
                        let ok = !is_sub_tree
                            && segment::hash_from_name(&file).is_some_and(|h| h.starts_with(&dir));
                        if !ok {
                            return Ok(Some(format!(
                                "{SEGMENTS_DIR}/{dir}/{file} is not a segment \
                                 (<64 hex digits>.jsonl)"
                            )));
                        }
                    }
                }
            }
            (PURGES_DIR, true) => {
                for (file, is_sub_tree, _) in entries(id)? {
                    if is_sub_tree || purge_record::name_from_file(&file).is_none() {
                        return Ok(Some(format!("{PURGES_DIR}/{file} is not a purge record")));
                    }
                }
            }
            _ => top.push((name, is_tree)),
        }
    }
    Ok(foreign_entries(&top))
}

fn is_hex(s: &str) -> bool {
    s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The segments of `tip` that `base` lacks (all of them without a base).
fn segments_new(log: &Log, tip: ObjectId, base: Option<ObjectId>) -> Result<Vec<SegmentRef>> {
    let tree = log.commit(tip)?.tree;
    match base {
        Some(b) => log.added_between(log.commit(b)?.tree, tree),
        None => log.segments_in_tree(tree),
    }
}

/// Refuses `tip` (fetched from `remote`) when a segment the local log
/// (at `local`) lacks is damaged: bytes that do not hash to its name, which
/// merging would spread into this log (and from it, to every clone).
pub(super) fn segments_whole(
    log: &Log,
    remote: &str,
    tip: ObjectId,
    local: Option<ObjectId>,
) -> Result<()> {
    for seg in segments_new(log, tip, local)? {
        if let Err(Error::DamagedSegment { path, actual }) = log.read_segment_bytes(&seg) {
            return Err(Error::NotAMemlogLog {
                remote: remote.to_string(),
                ref_name: log.ref_name().to_string(),
                why: format!(
                    "its segment {path} is damaged (its bytes hash to {}, not to its name)",
                    &actual[..12]
                ),
                advice: advice(log, remote, tip),
            });
        }
    }
    Ok(())
}

/// Refuses to push `tip` to `remote` (whose tip is `remote_tip`) unless
/// what the remote lacks is memlog's: every commit a seal, a purge record
/// or a merge; every segment whole (its bytes hash to its name); none
/// holding a personal event. A hand edit of the local log stops here, not
/// on every teammate's next sync.
pub(super) fn fit_to_push(
    repo: &crate::Repo,
    log: &Log,
    remote: &str,
    tip: ObjectId,
    remote_tip: Option<ObjectId>,
) -> Result<()> {
    let refuse = |why: String| Error::Sync {
        remote: remote.to_string(),
        message: format!("refusing to push {}: {why}", log.ref_name()),
    };
    let mut range = vec!["rev-list".to_string(), tip.to_string()];
    if let Some(r) = remote_tip {
        range.extend(["--not".to_string(), r.to_string()]);
    }
    let args: Vec<&str> = range.iter().map(String::as_str).collect();
    let unpushed: HashSet<String> = crate::git_command::run(repo, &args)?
        .lines()
        .map(str::to_string)
        .collect();
    if let Err(Error::NotAMemlogLog { why, .. }) =
        memlog_log(log, remote, tip, &|id| !unpushed.contains(&id.to_string()))
    {
        return Err(refuse(format!(
            "{why}; `memlog fsck` checks the log, and `git reset` of the ref to its last good \
             commit undoes a hand edit"
        )));
    }
    let new = segments_new(log, tip, remote_tip)?;
    let marker = format!("\"{}\":\"{}\"", scope::SCOPE_KEY, scope::PERSONAL);
    let finder = memchr::memmem::Finder::new(marker.as_bytes());
    for seg in new {
        let bytes = match log.read_segment_bytes(&seg) {
            Err(Error::DamagedSegment { path, actual }) => {
                return Err(refuse(format!(
                    "its segment {path} is damaged (its bytes hash to {}, not to its name); \
                     `memlog fsck` checks the log",
                    &actual[..12]
                )));
            }
            other => other?,
        };
        if finder.find(&bytes).is_none() {
            continue;
        }
        let (events, _) = segment::decode_trusted(&bytes);
        if let Some(e) = events.iter().find(|e| scope::is_personal(&e.meta)) {
            return Err(Error::Sync {
                remote: remote.to_string(),
                message: format!(
                    "refusing to push: segment {} of {} holds the personal event {} \
                     (personal events never leave this machine; `memlog fsck` lists them)",
                    segment::path_for(&seg.hash),
                    log.ref_name(),
                    &e.id.as_str()[..12.min(e.id.as_str().len())]
                ),
            });
        }
    }
    Ok(())
}
