//! Purge: erasing forgotten events from the history of the memlog ref, on
//! this clone and, through a record in the log, on every other.
//!
//! A `forget` only hides events; their bytes stay in every commit that
//! holds their segments. `purge` rewrites the history so that no commit
//! reachable from the ref holds them ([`crate::rewrite`]: segments without
//! the events, commits rewritten oldest first with the same authors,
//! seal messages regenerated, `Memlog-Purged: <n> events`; commits before
//! the first forgotten event keep their ids). Then:
//!
//! - on the shared ref, one more commit adds the purge's record
//!   (`purges/<name>.json`, [`crate::purge_record`]), so that every clone's
//!   next `memlog sync` applies the same rewrite to its own history and
//!   never merges the old one back; `memlog sync` here force-pushes the
//!   rewritten history (with a lease) to remotes that hold the old one;
//! - the personal ref (FORMAT.md §9) is purged the same way, without a
//!   record: it never leaves this machine;
//! - the ref moves by compare-and-swap ([`crate::seal::publish`]);
//! - remote-tracking refs of the log (`refs/remotes/*/memlog`) still reach
//!   the old commits: they are deleted, and the remotes named;
//! - the reflogs of memlog's refs are expired and the object store pruned
//!   (`git reflog expire`, `git gc --prune=now`: gix has no gc).
//!
//! The forget events themselves stay: they name ids, not content.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use gix::ObjectId;
use gix::objs::tree::EntryKind;
use memlog_format::Event;
use memlog_format::scope::Scope;
use memlog_format::segment::{self, Segment};
use memlog_format::visibility::Forgets;
use serde::Serialize;

use crate::log::Log;
use crate::purge_record::{self, PURGE_TRAILER, PurgeRecord};
use crate::remote::tracking_refs;
use crate::rewrite::{Rewrite, oldest_first, rewrite_history};
use crate::seal::{identity, publish, signature};
use crate::view::View;
use crate::{Error, Repo, Result, git_command};

pub use crate::rewrite::PURGED_TRAILER;

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
    /// The record committed on the shared ref (`purges/<name>.json`), which
    /// every clone applies at its next sync.
    pub record: Option<String>,
    /// Events purged from the personal ref (counted in `events_purged`).
    pub personal_events_purged: usize,
    /// Events purged from the journals of live sessions, before they were
    /// sealed (counted in `events_purged`).
    pub journal_events_purged: usize,
    /// Remote-tracking refs deleted (they reached the old history).
    pub tracking_refs_deleted: Vec<String>,
    /// Remotes whose memlog branch still holds the old history: `memlog
    /// sync` with each replaces it.
    pub remotes_to_sync: Vec<String>,
    /// Other refs that still reach the old history ([`refs_holding_purged`]).
    pub refs_holding_purged: Vec<String>,
    /// The events purged, for the caller to clear what it derived from
    /// them (the embedding cache keeps vectors by text).
    #[serde(skip)]
    pub purged: Vec<Event>,
}

/// What purging one log found and did.
struct Purged {
    events: usize,
    segments: usize,
    commits: usize,
    old_tip: ObjectId,
    new_tip: ObjectId,
    record: Option<String>,
    purged: Vec<Event>,
}

/// Rewrites the history of the memlog ref (and of the personal ref)
/// without the bytes of forgotten events, records the purge in the log,
/// then expires memlog's reflogs and prunes the object store.
pub fn purge(repo: &Repo) -> Result<PurgeReport> {
    // no seal or sync writes objects while this one prunes them
    let _history = crate::history_lock::exclusive(repo)?;
    // so no seal is under way: a pack one kept is a killed seal's
    crate::objects::release_stale_keeps(repo)?;
    let personal = Log::personal(repo);
    if personal.store().is_personal_store() {
        crate::objects::release_stale_keeps(personal.store())?;
    }
    // never rewrite the user's own branch of the log's name
    Log::new(repo).check_ours()?;
    let mut report = PurgeReport::default();
    // Forgets of both logs: a personal forget may name a shared event.
    let (events, _) = View::read(repo)?.events(repo)?;
    let forgets = Forgets::from_events(events.iter());
    if let Some(tip) = Log::new(repo).tip()? {
        report.old_tip = Some(tip.to_string());
        report.new_tip = Some(tip.to_string());
    }
    if forgets.is_empty() {
        return Ok(report);
    }
    // a live session's forgotten events, before its seal carries them
    let dir = repo.journal_dir();
    for j in crate::journal::list(&dir)? {
        let removed = crate::journal::Journal::new(&dir, &j.session)?
            .shared(repo.sharing())
            .remove_where(&|e| forgets.hides(e))?;
        report.journal_events_purged += removed.len();
        report.events_purged += removed.len();
        report.purged.extend(removed);
    }
    let mut purged_any = false;
    for scope in [Scope::Shared, Scope::Personal] {
        let log = Log::of(repo, scope);
        let Some(done) = purge_log(&log, &forgets, scope == Scope::Shared)? else {
            continue;
        };
        purged_any = true;
        report.events_purged += done.events;
        report.segments_rewritten += done.segments;
        report.commits_rewritten += done.commits;
        report.purged.extend(done.purged);
        if scope == Scope::Shared {
            report.old_tip = Some(done.old_tip.to_string());
            report.new_tip = Some(done.new_tip.to_string());
            report.record = done.record;
        } else {
            report.personal_events_purged = done.events;
        }
    }
    if purged_any {
        let mut remotes = tracking_refs(repo)?;
        for (_, r) in &remotes {
            git_command::run(repo, &["update-ref", "-d", r])?;
            report.tracking_refs_deleted.push(r.clone());
        }
        for configured in &repo.config.sync.remotes {
            if !remotes.iter().any(|(name, _)| name == configured) {
                remotes.push((configured.clone(), String::new()));
            }
        }
        if report.record.is_some() {
            report.remotes_to_sync = remotes.into_iter().map(|(name, _)| name).collect();
            report.remotes_to_sync.sort();
            report.remotes_to_sync.dedup();
        }
    }
    // Even with a clean history, objects fetched or left from before (a
    // refused sync) may still hold forgotten bytes.
    prune(repo)?;
    report.refs_holding_purged = refs_holding_purged(repo)?;
    Ok(report)
}

/// Purges one log; `None` when its history holds no forgotten event.
/// With `record`, a commit adding the purge's record goes on top.
fn purge_log(log: &Log, forgets: &Forgets, record: bool) -> Result<Option<Purged>> {
    let Some(tip) = log.tip()? else {
        return Ok(None);
    };
    let Some(mut plan) = plan(log, tip, forgets)? else {
        return Ok(None);
    };
    let rw = Rewrite {
        events: plan.events.iter().map(String::as_str).collect(),
        sessions: plan.sessions.iter().map(String::as_str).collect(),
        segments: &plan.segments,
        adopt: HashMap::new(),
    };
    let rewritten = rewrite_history(log, tip, &rw)?;
    let mut new_tip = rewritten.tip;
    let mut staging = rewritten.staging;
    plan.record.commits = rewritten.commits;
    let record_name = if record {
        let (name, commit) = record_commit(&staging, new_tip, &plan.record)?;
        new_tip = commit;
        Some(name)
    } else {
        None
    };
    let objects = staging.objects.take_object_memory().unwrap_or_default();
    crate::ref_lock::remove_stale(log.store(), log.ref_name());
    publish(
        log.store(),
        log.ref_name(),
        &objects,
        Some(tip),
        new_tip,
        "memlog: purge",
    )?;
    Ok(Some(Purged {
        events: rewritten.purged.len(),
        segments: plan.segments.len(),
        commits: plan.record.commits.len(),
        old_tip: tip,
        new_tip,
        record: record_name,
        purged: rewritten.purged,
    }))
}

/// What a purge of one history removes.
struct Plan {
    events: BTreeSet<String>,
    sessions: BTreeSet<String>,
    segments: BTreeMap<String, Vec<String>>,
    record: PurgeRecord,
}

/// Every segment of the history (each read once) that holds a forgotten
/// event, with the name of its replacement.
fn plan(log: &Log, tip: ObjectId, forgets: &Forgets) -> Result<Option<Plan>> {
    let mut events = BTreeSet::new();
    let mut sessions = BTreeSet::new();
    let mut segments: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut seen_trees = HashSet::new();
    for c in oldest_first(log, tip)? {
        if !seen_trees.insert(c.tree) {
            continue;
        }
        for seg in log.segments_in_tree(c.tree)? {
            if !seen.insert(seg.hash.clone()) {
                continue;
            }
            let bytes = log.read_segment_bytes(&seg)?;
            let (found, _) = segment::decode_trusted(&bytes);
            let hidden: HashSet<&str> = found
                .iter()
                .filter(|e| forgets.hides(e))
                .map(|e| {
                    sessions.insert(e.session.clone());
                    e.id.as_str()
                })
                .collect();
            if hidden.is_empty() {
                continue;
            }
            events.extend(hidden.iter().map(|id| id.to_string()));
            let (kept, _) = segment::split_out(&bytes, |id| hidden.contains(id));
            let replacement = if kept.is_empty() {
                Vec::new()
            } else {
                vec![Segment::from_bytes(kept).hash]
            };
            segments.insert(seg.hash, replacement);
        }
    }
    if segments.is_empty() {
        return Ok(None);
    }
    let record = PurgeRecord {
        v: 1,
        ts: memlog_format::time::now(),
        events: events.iter().cloned().collect(),
        sessions: sessions.iter().cloned().collect(),
        segments: segments.clone(),
        commits: BTreeMap::new(),
    };
    Ok(Some(Plan {
        events,
        sessions,
        segments,
        record,
    }))
}

/// Writes the commit that adds `record` on top of `parent` (into
/// `staging`); returns the record's name and the commit.
fn record_commit(
    staging: &gix::Repository,
    parent: ObjectId,
    record: &PurgeRecord,
) -> Result<(String, ObjectId)> {
    let (name, bytes) = record.encode()?;
    let blob = staging.write_blob(&bytes).map_err(Error::git)?.detach();
    let parent_tree = staging
        .find_commit(parent)
        .map_err(Error::git)?
        .tree_id()
        .map_err(Error::git)?
        .detach();
    let mut editor = staging.edit_tree(parent_tree).map_err(Error::git)?;
    editor
        .upsert(
            purge_record::path_for(&name).as_str(),
            EntryKind::Blob,
            blob,
        )
        .map_err(Error::git)?;
    let tree = editor.write().map_err(Error::git)?.detach();
    let (who, email) = identity(staging);
    let now = jiff::Timestamp::now().as_second();
    let message = format!(
        "Purge {} forgotten event(s) from {} segment(s)\n\n\
         The history was rewritten without them ({} commit(s)). Every clone\n\
         applies the same rewrite to its own history at its next `memlog sync`;\n\
         the record lists ids and hashes only.\n\n\
         Record: {}\n\n{PURGE_TRAILER}: {name}\n",
        record.events.len(),
        record.segments.len(),
        record.commits.len(),
        purge_record::path_for(&name),
    );
    let commit = gix::objs::Commit {
        tree,
        parents: vec![parent].into(),
        author: signature(&who, &email, now),
        committer: signature(&who, &email, now),
        encoding: None,
        message: message.into(),
        extra_headers: Vec::new(),
    };
    let id = staging.write_object(&commit).map_err(Error::git)?.detach();
    Ok((name, id))
}

/// Refs other than memlog's own that reach a commit a purge recorded in
/// the log replaced: a backup branch (`git branch backup memlog`), a tag.
/// They hold the erased bytes here, the object store keeps them for their
/// sake, and a `git push --all` or `--tags` shares them again. memlog does
/// not delete a ref the user made; it names it.
pub fn refs_holding_purged(repo: &Repo) -> Result<Vec<String>> {
    let log = Log::new(repo);
    let Some(tip) = log.tip()? else {
        return Ok(Vec::new());
    };
    let tree = log.commit(tip)?.tree;
    let old: HashSet<ObjectId> = purge_record::records_in_tree(&log, tree)?
        .iter()
        .flat_map(|(_, r)| r.old_commits())
        .collect();
    // The first replaced commits of each line of history (those whose
    // parents were not replaced): a ref reaching any replaced commit
    // reaches one of them. Those gone from the object store are reached
    // by nothing.
    let mut roots: Vec<String> = old
        .iter()
        .filter_map(|id| log.commit(*id).ok())
        .filter(|c| !c.parents.iter().any(|p| old.contains(p)))
        .map(|c| c.id.to_string())
        .collect();
    // as git sees the object store: this process's view may predate the
    // prune that just took them (git then refuses `--contains` of them)
    let listed = roots.join("\n") + "\n";
    let checked = git_command::run_with_input(repo, &["cat-file", "--batch-check"], Some(&listed))?;
    roots.retain(|r| {
        checked
            .lines()
            .any(|l| l.starts_with(r.as_str()) && !l.ends_with("missing"))
    });
    if roots.is_empty() {
        return Ok(Vec::new());
    }
    roots.sort();
    let mut args = vec!["for-each-ref", "--format=%(refname)"];
    for r in &roots {
        args.push("--contains");
        args.push(r);
    }
    let personal = Log::personal(repo);
    let ours: Vec<String> = tracking_refs(repo)?
        .into_iter()
        .map(|(_, r)| r)
        .chain([log.ref_name().to_string(), personal.ref_name().to_string()])
        .collect();
    Ok(git_command::run(repo, &args)?
        .lines()
        .filter(|r| !r.is_empty() && !ours.iter().any(|o| o == r))
        .map(str::to_string)
        .collect())
}

/// Expires the reflogs of memlog's refs (they reach the old history) and
/// deletes every object no ref reaches (gix has no gc). Reflogs of the
/// user's own branches are left alone.
pub(crate) fn prune(repo: &Repo) -> Result<()> {
    let mut refs = Vec::new();
    let shared = Log::new(repo);
    if shared.tip()?.is_some() {
        refs.push(shared.ref_name().to_string());
    }
    refs.extend(tracking_refs(repo)?.into_iter().map(|(_, r)| r));
    // the personal log is in a store of its own, unless it is still on
    // the repository's legacy ref
    let personal = Log::personal(repo);
    let personal_here = !personal.store().is_personal_store();
    if personal_here && personal.tip()?.is_some() {
        refs.push(personal.ref_name().to_string());
    }
    expire_and_gc(repo, &refs)?;
    if !personal_here && personal.tip()?.is_some() {
        expire_and_gc(personal.store(), &[personal.ref_name().to_string()])?;
    }
    Ok(())
}

fn expire_and_gc(repo: &Repo, refs: &[String]) -> Result<()> {
    // git refuses to expire a reflog that does not exist (a bare store's)
    let logs = repo.common_dir.join("logs");
    let refs: Vec<&String> = refs.iter().filter(|r| logs.join(r).exists()).collect();
    if !refs.is_empty() {
        let mut args = vec![
            "reflog",
            "expire",
            "--expire=now",
            "--expire-unreachable=now",
        ];
        args.extend(refs.iter().map(|r| r.as_str()));
        git_command::run(repo, &args)?;
    }
    git_command::run(repo, &["gc", "--quiet", "--prune=now"])?;
    Ok(())
}
