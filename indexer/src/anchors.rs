//! Memories anchored to code, as `memlog verify` last found them (issue
//! 31): a fact or rule that cites files or quotes code records the commit
//! it was made at; verifying it against the current tree says whether it
//! still holds. What is not fresh is kept in `<memlog dir>/verified.json`
//! beside the index (so a rebuild keeps it), and ranking reads it: a stale
//! memory keeps [`STALE_FACTOR`] of its score, a broken one (its quote or
//! file gone) [`BROKEN_FACTOR`], and both are injected with their marker
//! ("src/invoice.rs changed in 2 commits since").

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{Error, Projections, Result};

/// Share of its score a stale memory keeps (its files changed since).
pub const STALE_FACTOR: f32 = 0.6;
/// Share of its score a broken memory keeps (its quote or file is gone).
pub const BROKEN_FACTOR: f32 = 0.3;

/// How a memory stands against the code, when it is not fresh.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Staleness {
    /// `stale` or `broken`.
    pub status: String,
    /// What changed, in words, as injected.
    pub marker: String,
}

impl Staleness {
    /// The share of its score the memory keeps.
    pub fn factor(&self) -> f32 {
        if self.status == "broken" {
            BROKEN_FACTOR
        } else {
            STALE_FACTOR
        }
    }
}

/// The last verification: the code's HEAD it ran at, and the memories
/// found stale or broken, by event id.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Verified {
    /// The code's HEAD when it ran.
    pub head: Option<String>,
    /// Memories that are not fresh.
    pub items: BTreeMap<String, Staleness>,
}

/// `<memlog dir>/verified.json`.
pub fn path_in(memlog_dir: &Path) -> PathBuf {
    memlog_dir.join("verified.json")
}

/// The last verification beside these projections (none: nothing known).
pub fn load(p: &Projections) -> Verified {
    p.dir
        .parent()
        .map(path_in)
        .and_then(|path| std::fs::read(path).ok())
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

/// The last verification in `memlog_dir` (none: nothing known).
pub fn load_in(memlog_dir: &Path) -> Verified {
    std::fs::read(path_in(memlog_dir))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

/// Replaces the verification in `memlog_dir` (atomically).
pub fn save(memlog_dir: &Path, verified: &Verified) -> Result<()> {
    let path = path_in(memlog_dir);
    let tmp = path.with_extension("json.tmp");
    let bytes = serde_json::to_vec_pretty(verified)
        .map_err(|e| Error::Invalid(format!("serialising {}: {e}", path.display())))?;
    std::fs::write(&tmp, bytes)
        .and_then(|()| memlog_store::shared::Sharing::of_memlog_dir(memlog_dir).apply(&tmp))
        .map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, &path).map_err(|e| Error::io(&path, e))?;
    Ok(())
}
