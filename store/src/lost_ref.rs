//! The shared memlog ref, put back after it was deleted by hand.
//!
//! `git branch -D memlog` (a slip, or a script that clears local branches)
//! deletes the log's ref and its reflog. The commits stay in the object
//! store until a gc prunes them, but nothing names them: the next seal
//! starts a new history and the next sync takes the remote's, and every
//! session this clone had not pushed is gone from memory without a word.
//! So each move of the ref writes its new place (and the ref's name) to
//! `.git/memlog/tip`, and a ref found missing while that commit is still in
//! the store is put back: by every command as it opens the repository
//! (`memlog_ops::workspace::open`, which says so), and by a seal and a
//! SessionStart hook, which open it their own way.
//! Memory is taken out with `memlog forget` and `memlog purge`, never by
//! deleting the ref.

use gix::ObjectId;

use crate::{Repo, Result};

/// Notes that the shared ref now names `tip` (best-effort: without the
/// note, only the put-back is lost).
pub(crate) fn remember(repo: &Repo, ref_name: &str, tip: ObjectId) {
    if ref_name != repo.ref_name() || repo.is_personal_store() {
        return;
    }
    let path = repo.layout().last_tip();
    let fresh = path.with_extension(format!("{}.tmp", std::process::id()));
    // the ref's name too: a log moved to another ref (`ref:` in
    // .memlog.yaml) starts empty there, and must not be given this one
    let noted = format!("{tip} {ref_name}\n");
    let written = std::fs::write(&fresh, noted).and_then(|()| repo.sharing().apply(&fresh));
    if written.is_ok() && std::fs::rename(&fresh, &path).is_err() {
        let _ = std::fs::remove_file(&fresh);
    }
}

/// Puts the shared ref back where this clone last moved it, when the ref
/// is gone and that commit is still in the store; returns the commit put
/// back. Nothing happens when the ref exists, when nothing was noted, or
/// when the commit was pruned.
pub fn put_back(repo: &Repo) -> Result<Option<ObjectId>> {
    let log = crate::log::Log::new(repo);
    if log.tip()?.is_some() {
        return Ok(None);
    }
    let Ok(noted) = std::fs::read_to_string(repo.layout().last_tip()) else {
        return Ok(None);
    };
    let (tip, ref_name) = noted.trim().split_once(' ').unwrap_or((noted.trim(), ""));
    if ref_name != repo.ref_name() {
        return Ok(None);
    }
    let Ok(tip) = ObjectId::from_hex(tip.as_bytes()) else {
        return Ok(None);
    };
    if repo.git()?.find_commit(tip).is_err() {
        return Ok(None);
    }
    let nothing = gix::odb::memory::Storage::default();
    match crate::seal::publish(
        repo,
        repo.ref_name(),
        &nothing,
        None,
        tip,
        "memlog: put back the ref deleted by hand",
    ) {
        Ok(()) => Ok(Some(tip)),
        // another process put it back, or sealed, first
        Err(e) if crate::seal::is_contention(&e) => Ok(None),
        Err(e) => Err(e),
    }
}
