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

/// The purge records of both sides, by name, and which each side lacks.
pub(super) struct Pending {
    records: BTreeMap<String, PurgeRecord>,
    local_has: HashSet<String>,
    remote_has: HashSet<String>,
}

impl Pending {
    /// The records in the trees of the two tips.
    pub fn of(log: &Log, local: Option<ObjectId>, remote: Option<ObjectId>) -> Result<Pending> {
        let mut pending = Pending {
            records: BTreeMap::new(),
            local_has: HashSet::new(),
            remote_has: HashSet::new(),
        };
        for (tip, has) in [
            (local, &mut pending.local_has),
            (remote, &mut pending.remote_has),
        ] {
            let Some(tip) = tip else { continue };
            for (name, record) in records_in_tree(log, log.commit(tip)?.tree)? {
                has.insert(name.clone());
                pending.records.insert(name, record);
            }
        }
        Ok(pending)
    }

    /// Whether one side lacks a record the other has.
    pub fn any(&self) -> bool {
        self.records
            .keys()
            .any(|n| !self.local_has.contains(n) || !self.remote_has.contains(n))
    }

    /// Records a side lacks, oldest first.
    fn lacked_by<'a>(&'a self, has: &'a HashSet<String>) -> Vec<(&'a str, &'a PurgeRecord)> {
        let mut out: Vec<(&str, &PurgeRecord)> = self
            .records
            .iter()
            .filter(|(n, _)| !has.contains(*n))
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
        for (name, record) in pending.lacked_by(&pending.local_has) {
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
        for (name, record) in pending.lacked_by(&pending.remote_has) {
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
