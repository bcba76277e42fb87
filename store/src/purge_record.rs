//! Purge records: a purge written into the log itself, so that every clone
//! learns it (FORMAT.md §3.2).
//!
//! `memlog purge` rewrites the history of the memlog ref on one clone. The
//! others still hold the old history, and a sync used to merge it back.
//! So a purge also commits a record, `purges/<blake3 of its bytes>.json`
//! in the tree, naming what went: the events (by id), their sessions, each
//! segment rewritten with the names of its replacements, and each commit
//! rewritten with its new id. It holds ids and hashes, never content.
//!
//! Trees are unions, so a record travels with the log. A sync that meets a
//! history the record has not been applied to (one that still reaches a
//! commit the record replaced) rewrites it the same way before joining
//! (`crate::rewrite`), and never merges or pushes the old history.

use std::collections::BTreeMap;

use gix::ObjectId;
use serde::{Deserialize, Serialize};

use crate::log::Log;
use crate::{Error, Result};

/// The tree directory that holds purge records.
pub const PURGES_DIR: &str = "purges";

/// Trailer of the commit that adds a purge record: the record's name.
pub const PURGE_TRAILER: &str = "Memlog-Purge";

/// A purge, as recorded in the log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PurgeRecord {
    /// Format version, 1.
    pub v: u64,
    /// When the purge was made (RFC 3339 UTC, milliseconds).
    pub ts: String,
    /// Ids of the events whose bytes were removed, sorted.
    pub events: Vec<String>,
    /// The sessions those events belonged to, sorted: merge messages that
    /// list them lose their subjects.
    pub sessions: Vec<String>,
    /// Each segment that held some of the events, with the segments that
    /// replace it (none when every event in it went).
    pub segments: BTreeMap<String, Vec<String>>,
    /// Each commit the purge rewrote, with its new id.
    pub commits: BTreeMap<String, String>,
}

impl PurgeRecord {
    /// The record's bytes (canonical JSON and a newline) and its name, the
    /// blake3 of the bytes.
    pub fn encode(&self) -> Result<(String, Vec<u8>)> {
        let value = serde_json::to_value(self)
            .map_err(|e| Error::invalid("purge record", e.to_string()))?;
        let mut text = memlog_format::canonical::to_string(&value);
        text.push('\n');
        let name = blake3::hash(text.as_bytes()).to_hex().to_string();
        Ok((name, text.into_bytes()))
    }

    /// Reads a record's bytes.
    pub fn decode(name: &str, bytes: &[u8]) -> Result<PurgeRecord> {
        serde_json::from_slice(bytes)
            .map_err(|e| Error::invalid(format!("purge record {}", path_for(name)), e.to_string()))
    }

    /// The commits it replaced, as ids.
    pub fn old_commits(&self) -> impl Iterator<Item = ObjectId> + '_ {
        self.commits
            .keys()
            .filter_map(|k| ObjectId::from_hex(k.as_bytes()).ok())
    }
}

/// `purges/<name>.json`.
pub fn path_for(name: &str) -> String {
    format!("{PURGES_DIR}/{name}.json")
}

/// The record name in a file name of `purges/`, if it is one.
pub fn name_from_file(file: &str) -> Option<&str> {
    let name = file.strip_suffix(".json")?;
    (name.len() == 64 && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
        .then_some(name)
}

/// The purge records in a root tree, by name, in the order they were made
/// (time, then name). Each record's bytes are checked against its name.
pub fn records_in_tree(log: &Log, tree: ObjectId) -> Result<Vec<(String, PurgeRecord)>> {
    let git = log.git()?;
    let root = git.find_tree(tree).map_err(Error::git)?;
    let Some(dir) = root.lookup_entry_by_path(PURGES_DIR).map_err(Error::git)? else {
        return Ok(Vec::new());
    };
    let dir = git.find_tree(dir.object_id()).map_err(Error::git)?;
    let mut out = Vec::new();
    for entry in dir.decode().map_err(Error::git)?.entries.iter() {
        let file = entry.filename.to_string();
        let Some(name) = name_from_file(&file) else {
            continue;
        };
        let bytes = log.read_blob(entry.oid.to_owned())?;
        if blake3::hash(&bytes).to_hex().as_str() != name {
            return Err(Error::invalid(
                format!("purge record {}", path_for(name)),
                "its bytes do not hash to its name",
            ));
        }
        out.push((name.to_string(), PurgeRecord::decode(name, &bytes)?));
    }
    out.sort_by(|a, b| (&a.1.ts, &a.0).cmp(&(&b.1.ts, &b.0)));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_is_named_by_its_canonical_bytes() {
        let mut record = PurgeRecord {
            v: 1,
            ts: "2026-11-22T05:27:21.123Z".into(),
            events: vec!["e1".into()],
            sessions: vec!["s".into()],
            segments: BTreeMap::new(),
            commits: BTreeMap::new(),
        };
        record.segments.insert("a".repeat(64), vec!["b".repeat(64)]);
        let (name, bytes) = record.encode().unwrap();
        assert_eq!(name, blake3::hash(&bytes).to_hex().to_string());
        assert!(bytes.starts_with(b"{\"commits\":{},\"events\":[\"e1\"]"));
        assert_eq!(PurgeRecord::decode(&name, &bytes).unwrap(), record);
        assert_eq!(name_from_file(&format!("{name}.json")), Some(name.as_str()));
        assert_eq!(name_from_file("notes.json"), None);
    }
}
