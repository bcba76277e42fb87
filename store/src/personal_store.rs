//! Where this machine's personal log is kept: a bare repository of memlog's
//! own, `<common dir>/memlog/personal.git` (FORMAT.md §9).
//!
//! A ref of the user's repository, even one outside `refs/heads/`, is
//! carried by every way git has of copying all refs: `git push --mirror`,
//! `git push origin 'refs/*:refs/*'`, `git bundle create --all`, a
//! teammate's `git fetch` from this machine, `git clone --mirror`. A
//! repository of its own is reached by none of them, nor by a local clone,
//! which copies the user's `objects/` only.
//!
//! Logs made before kept personal events on the repository's
//! `refs/memlog/personal`; the first process that opens the personal log
//! moves them: it copies what that ref reaches into a new store, puts the
//! store in place with one rename (so a reader sees no store or a whole
//! one) and deletes the old ref.

use std::collections::HashSet;
use std::path::Path;

use gix::ObjectId;

use crate::log::PERSONAL_REF;
use crate::{Error, Repo, Result};

/// The personal store of `repo`, or `None` when its personal log is on the
/// legacy ref and could not be moved (a read-only repository): it is then
/// read, and written, where it is.
pub(crate) fn place(repo: &Repo) -> Option<Repo> {
    let dir = repo.layout().personal_store();
    if dir.exists() {
        return Some(repo.store_at(dir));
    }
    match crate::locate::reference(repo.git_dir(), &repo.common_dir, PERSONAL_REF) {
        // nothing to move: the store is made by the first personal seal
        Some(None) => Some(repo.store_at(dir)),
        Some(Some(hex)) => {
            let tip = ObjectId::from_hex(hex.as_bytes()).ok()?;
            // Whoever moved it (this process or another at the same
            // time), once the store is in place it is the personal log.
            let _ = move_legacy(repo, &dir, tip);
            dir.join("HEAD").exists().then(|| repo.store_at(dir))
        }
        None => None,
    }
}

/// Opens the store at `dir`, making it on first use.
pub(crate) fn open_or_init(dir: &Path) -> Result<gix::Repository> {
    let git_error = |e: String| Error::GitOpen {
        path: dir.to_path_buf(),
        message: e,
    };
    let mut git = if dir.join("HEAD").exists() {
        gix::open(dir).map_err(|e| git_error(e.to_string()))?
    } else {
        gix::init_bare(dir).map_err(|e| git_error(e.to_string()))?
    };
    git.committer_or_set_fallback(crate::repo::FALLBACK_NAME, crate::repo::FALLBACK_EMAIL)
        .map_err(Error::git)?;
    Ok(git)
}

/// Copies the history of the legacy ref (tip `tip`) into a new store at
/// `dir`, then deletes the ref.
fn move_legacy(repo: &Repo, dir: &Path, tip: ObjectId) -> Result<()> {
    let parent = dir.parent().unwrap_or(dir);
    std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    let staging_dir = parent.join(format!("personal.git.moving-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging_dir);
    let copied = copy_history(repo, &staging_dir, tip);
    let placed = copied.and_then(|()| match std::fs::rename(&staging_dir, dir) {
        Ok(()) => Ok(()),
        // another process moved it first: its store is the same history
        Err(_) if dir.join("HEAD").exists() => Ok(()),
        Err(e) => Err(Error::io(dir, e)),
    });
    let _ = std::fs::remove_dir_all(&staging_dir);
    placed?;
    delete_legacy_ref(repo, tip)
}

fn copy_history(repo: &Repo, staging_dir: &Path, tip: ObjectId) -> Result<()> {
    let from = repo.git()?;
    let store = repo.store_at(staging_dir.to_path_buf());
    let mut staging = store.git()?.clone().with_object_memory();
    let mut seen = HashSet::new();
    let walk = from.rev_walk([tip]).all().map_err(Error::git)?;
    for info in walk {
        let commit = info.map_err(Error::git)?.id;
        copy_object(from, &staging, commit, &mut seen)?;
        let tree = from
            .find_commit(commit)
            .map_err(Error::git)?
            .tree_id()
            .map_err(Error::git)?
            .detach();
        copy_object(from, &staging, tree, &mut seen)?;
    }
    let objects = staging.objects.take_object_memory().unwrap_or_default();
    crate::seal::publish(
        &store,
        PERSONAL_REF,
        &objects,
        None,
        tip,
        "memlog: personal log moved out of the repository",
    )
}

/// Copies one object, and a tree's entries with it.
fn copy_object(
    from: &gix::Repository,
    to: &gix::Repository,
    id: ObjectId,
    seen: &mut HashSet<ObjectId>,
) -> Result<()> {
    if !seen.insert(id) {
        return Ok(());
    }
    let object = from.find_object(id).map_err(Error::git)?;
    let kind = object.kind;
    let children: Vec<ObjectId> = if kind == gix::objs::Kind::Tree {
        object
            .clone()
            .into_tree()
            .decode()
            .map_err(Error::git)?
            .entries
            .iter()
            .filter(|e| !e.mode.is_commit())
            .map(|e| e.oid.to_owned())
            .collect()
    } else {
        Vec::new()
    };
    use gix::objs::Write as _;
    to.objects
        .write_buf(kind, &object.data)
        .map_err(Error::git)?;
    for child in children {
        copy_object(from, to, child, seen)?;
    }
    Ok(())
}

/// Deletes the legacy ref, if it still points where it was copied from.
fn delete_legacy_ref(repo: &Repo, tip: ObjectId) -> Result<()> {
    use gix::refs::transaction::{Change, PreviousValue, RefEdit, RefLog};
    let edit = RefEdit {
        change: Change::Delete {
            expected: PreviousValue::MustExistAndMatch(gix::refs::Target::Object(tip)),
            log: RefLog::AndReference,
        },
        name: PERSONAL_REF.try_into().map_err(Error::git)?,
        deref: false,
    };
    repo.git()?.edit_reference(edit).map_err(Error::git)?;
    Ok(())
}
