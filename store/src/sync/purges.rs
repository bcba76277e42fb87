//! Purges a sync applies (FORMAT.md §3.2): the records one side's tree
//! holds and the other's lacks. A side that lacks a record and still
//! reaches a commit the record replaced is rewritten the way the record
//! says ([`crate::rewrite`]) before the two are joined, so the old history
//! is never merged, and never pushed. The local side's rewrite moves the
//! local ref; the remote side's becomes what is joined, and pushed back
//! with a lease in place of the remote's old history.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

use gix::ObjectId;
use memlog_format::Event;

use crate::log::Log;
use crate::objects;
use crate::purge_record::{PurgeRecord, records_in_tree};
use crate::rewrite::{Rewrite, rewrite_history};
use crate::seal::publish;
use crate::sessions::SessionCommits;
use crate::{Repo, Result};

/// The purge records of both sides, by name, and which each side's history
/// still needs: it reaches a commit the record replaced. A side may hold a
/// record and still reach the old history (a teammate's plain `git merge
/// --allow-unrelated-histories` of a history from before the purge, pushed
/// as a fast-forward): the record is applied to it again.
pub(super) struct Pending {
    records: BTreeMap<String, PurgeRecord>,
    local_needs: HashSet<String>,
    remote_needs: HashSet<String>,
}

impl Pending {
    /// The records in the trees of the two tips, and what each side needs.
    pub fn of(
        repo: &Repo,
        log: &Log,
        local: Option<ObjectId>,
        remote: Option<ObjectId>,
    ) -> Result<Pending> {
        let mut records = BTreeMap::new();
        for tip in [local, remote].into_iter().flatten() {
            records.extend(records_in_tree(log, log.commit(tip)?.tree)?);
        }
        let mut pending = Pending {
            records,
            local_needs: HashSet::new(),
            remote_needs: HashSet::new(),
        };
        if pending.records.is_empty() {
            return Ok(pending);
        }
        let history = local
            .map(|t| SessionCommits::at(repo, log, t))
            .transpose()?;
        let in_local = |id: &ObjectId| history.as_ref().is_some_and(|h| h.contains(id));
        // what only the remote's history holds (usually a few sessions)
        let remote_only = match remote {
            Some(r) => super::ancestors(log, r, &in_local)?,
            None => Default::default(),
        };
        for (name, record) in &pending.records {
            let here = record.old_commits().any(|c| in_local(&c));
            if here {
                pending.local_needs.insert(name.clone());
            }
            let there = record.old_commits().any(|c| remote_only.contains_key(&c))
                || (here && remote.map_or(Ok(false), |r| reaches_any(log, r, record))?);
            if there {
                pending.remote_needs.insert(name.clone());
            }
        }
        Ok(pending)
    }

    /// Whether either side's history needs a record applied.
    pub fn any(&self) -> bool {
        !self.local_needs.is_empty() || !self.remote_needs.is_empty()
    }

    /// Records a side needs, oldest first.
    fn needed<'a>(&'a self, needs: &'a HashSet<String>) -> Vec<(&'a str, &'a PurgeRecord)> {
        let mut out: Vec<(&str, &PurgeRecord)> = self
            .records
            .iter()
            .filter(|(n, _)| needs.contains(*n))
            .map(|(n, r)| (n.as_str(), r))
            .collect();
        out.sort_by(|a, b| (&a.1.ts, a.0).cmp(&(&b.1.ts, b.0)));
        out
    }
}

/// What applying purges did.
#[derive(Default)]
pub(super) struct Applied {
    /// Records applied to either side.
    pub records: Vec<String>,
    /// Whether the local history was rewritten (the ref moved).
    pub local: bool,
    /// The remote's history, rewritten, when it was.
    pub remote: Option<ObjectId>,
    /// Events taken out of the local history.
    pub purged: Vec<Event>,
    /// Pack `.keep` files of the rewritten objects, removed once a ref
    /// reaches them.
    pub keep: Vec<PathBuf>,
}

/// Applies pending records to the local ref and to the fetched remote tip
/// (the caller holds the history lock exclusively).
pub(super) fn apply(
    repo: &Repo,
    log: &Log,
    pending: &Pending,
    remote_tip: Option<ObjectId>,
) -> Result<Applied> {
    let mut applied = Applied::default();
    if let Some(local) = log.tip()? {
        let history = SessionCommits::at(repo, log, local)?;
        let mut tip = local;
        for (name, record) in pending.needed(&pending.local_needs) {
            let reached = if tip == local {
                record.old_commits().any(|c| history.contains(&c))
            } else {
                reaches_any(log, tip, record)?
            };
            if !reached {
                continue;
            }
            let out = rewrite(repo, log, tip, record, &mut applied)?;
            applied.purged.extend(out.1);
            tip = out.0;
            applied.records.push(name.to_string());
        }
        if tip != local {
            let none = gix::odb::memory::Storage::default();
            publish(
                repo,
                log.ref_name(),
                &none,
                Some(local),
                tip,
                "memlog: sync applies a purge",
            )?;
            applied.local = true;
        }
    }
    if let Some(remote) = remote_tip {
        let mut tip = remote;
        for (name, record) in pending.needed(&pending.remote_needs) {
            if !reaches_any(log, tip, record)? {
                continue;
            }
            tip = rewrite(repo, log, tip, record, &mut applied)?.0;
            if !applied.records.iter().any(|r| r == name) {
                applied.records.push(name.to_string());
            }
        }
        if tip != remote {
            applied.remote = Some(tip);
        }
    }
    Ok(applied)
}

/// Rewrites the history of `tip` as `record` says and makes the new
/// objects durable (unreferenced until the caller moves a ref).
fn rewrite(
    repo: &Repo,
    log: &Log,
    tip: ObjectId,
    record: &PurgeRecord,
    applied: &mut Applied,
) -> Result<(ObjectId, Vec<Event>)> {
    let mut out = rewrite_history(log, tip, &Rewrite::of(record))?;
    let objects = out.staging.objects.take_object_memory().unwrap_or_default();
    applied.keep.extend(objects::persist(repo, &objects)?);
    Ok((out.tip, out.purged))
}

/// Whether the history of `tip` reaches a commit `record` replaced.
fn reaches_any(log: &Log, tip: ObjectId, record: &PurgeRecord) -> Result<bool> {
    let old: HashSet<ObjectId> = record.old_commits().collect();
    if old.is_empty() {
        return Ok(false);
    }
    let mut stack = vec![tip];
    let mut seen = HashSet::new();
    while let Some(id) = stack.pop() {
        if old.contains(&id) {
            return Ok(true);
        }
        if !seen.insert(id) {
            continue;
        }
        stack.extend(log.commit(id)?.parents);
    }
    Ok(false)
}
