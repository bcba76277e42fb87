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
//! merges what that ref reaches into the store (made if need be), then
//! deletes the ref. An earlier memlog still running beside this one may
//! write the ref again: it is merged again the same way.

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
    let stored = dir.join("HEAD").exists();
    // The common case costs two file checks. An earlier memlog still
    // running beside this one (another agent's hooks, its watcher) writes
    // the legacy ref again after the move: that is merged in too.
    if stored && !repo.common_dir.join(PERSONAL_REF).exists() {
        return Some(repo.store_at(dir));
    }
    match crate::locate::reference(repo.git_dir(), &repo.common_dir, PERSONAL_REF) {
        // nothing to move: the store is made by the first personal seal
        Some(None) => Some(repo.store_at(dir)),
        Some(Some(hex)) => {
            let tip = ObjectId::from_hex(hex.as_bytes()).ok()?;
            let merged = merge_legacy(repo, &dir, tip).is_ok();
            // Merged here or by another process at the same time (which
            // deleted the ref first), the store is the personal log; a
            // store made by a merge that failed is not, while the ref
            // holds what it lacks.
            let left = matches!(
                crate::locate::reference(repo.git_dir(), &repo.common_dir, PERSONAL_REF),
                Some(Some(_))
            );
            (dir.join("HEAD").exists() && (merged || stored || !left)).then(|| repo.store_at(dir))
        }
        None => stored.then(|| repo.store_at(dir)),
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
        let git = gix::init_bare(dir).map_err(|e| git_error(e.to_string()))?;
        // made with the umask's modes; in a shared repository every user's
        // hooks seal their personal events here
        if let Some(memlog_dir) = dir.parent() {
            crate::shared::Sharing::of_memlog_dir(memlog_dir).apply_tree(dir);
        }
        git
    };
    git.committer_or_set_fallback(crate::repo::FALLBACK_NAME, crate::repo::FALLBACK_EMAIL)
        .map_err(Error::git)?;
    Ok(git)
}

/// Merges the legacy ref's history (tip `tip`) into the store at `dir`,
/// made if need be (its ref: the legacy tip, a fast-forward, or a merge
/// whose tree is the union of both, a segment's path being its content's
/// hash), then deletes the ref. Retried while a seal moves the store's ref
/// meanwhile.
fn merge_legacy(repo: &Repo, dir: &Path, tip: ObjectId) -> Result<()> {
    let store = repo.store_at(dir.to_path_buf());
    let mut attempt = 0;
    loop {
        attempt += 1;
        let mut staging = store.git()?.clone().with_object_memory();
        copy_reachable(repo.git()?, &staging, tip)?;
        let ours = crate::log::Log::personal(&store).tip()?;
        let new = match ours {
            None => tip,
            Some(o) if reaches(&staging, o, tip)? => o,
            Some(o) if reaches(&staging, tip, o)? => tip,
            Some(o) => union_commit(&mut staging, o, tip)?,
        };
        let objects = staging.objects.take_object_memory().unwrap_or_default();
        if Some(new) != ours {
            let published = crate::seal::publish(
                &store,
                PERSONAL_REF,
                &objects,
                ours,
                new,
                "memlog: personal memory an earlier memlog sealed in the repository",
            );
            match published {
                Err(e) if crate::seal::is_contention(&e) && attempt < 5 => continue,
                other => other?,
            }
        }
        return delete_legacy_ref(repo, tip);
    }
}

/// Whether `from`'s history holds `target`.
fn reaches(git: &gix::Repository, from: ObjectId, target: ObjectId) -> Result<bool> {
    let mut stack = vec![from];
    let mut seen = HashSet::new();
    while let Some(id) = stack.pop() {
        if id == target {
            return Ok(true);
        }
        if seen.insert(id) {
            let commit = git.find_commit(id).map_err(Error::git)?;
            stack.extend(commit.parent_ids().map(|p| p.detach()));
        }
    }
    Ok(false)
}

/// A commit of `ours` and `theirs` whose tree is `ours`' with every
/// segment and purge record of `theirs` added.
fn union_commit(
    staging: &mut gix::Repository,
    ours: ObjectId,
    theirs: ObjectId,
) -> Result<ObjectId> {
    use gix::objs::tree::EntryKind;
    let tree_of = |id: ObjectId| -> Result<ObjectId> {
        Ok(staging
            .find_commit(id)
            .map_err(Error::git)?
            .tree_id()
            .map_err(Error::git)?
            .detach())
    };
    let (our_tree, their_tree) = (tree_of(ours)?, tree_of(theirs)?);
    let mut files = Vec::new();
    blobs_under(staging, their_tree, "", &mut files)?;
    let mut editor = staging.edit_tree(our_tree).map_err(Error::git)?;
    for (path, blob) in &files {
        editor
            .upsert(path.as_str(), EntryKind::Blob, *blob)
            .map_err(Error::git)?;
    }
    let tree = editor.write().map_err(Error::git)?.detach();
    let (name, email) = crate::seal::identity(staging);
    let now = jiff::Timestamp::now().as_second();
    let commit = gix::objs::Commit {
        tree,
        parents: vec![ours, theirs].into(),
        author: crate::seal::signature(&name, &email, now),
        committer: crate::seal::signature(&name, &email, now),
        encoding: None,
        message: "Merge personal memory an earlier memlog sealed in the repository\n".into(),
        extra_headers: Vec::new(),
    };
    Ok(staging.write_object(&commit).map_err(Error::git)?.detach())
}

/// Every blob under `tree`, with its path.
fn blobs_under(
    git: &gix::Repository,
    tree: ObjectId,
    prefix: &str,
    out: &mut Vec<(String, ObjectId)>,
) -> Result<()> {
    let tree = git.find_tree(tree).map_err(Error::git)?;
    for e in tree.decode().map_err(Error::git)?.entries.iter() {
        let path = format!("{prefix}{}", e.filename);
        if e.mode.is_tree() {
            blobs_under(git, e.oid.to_owned(), &format!("{path}/"), out)?;
        } else if e.mode.is_blob() {
            out.push((path, e.oid.to_owned()));
        }
    }
    Ok(())
}

/// Copies every object `tip`'s history reaches from `from` into `to`.
fn copy_reachable(from: &gix::Repository, to: &gix::Repository, tip: ObjectId) -> Result<()> {
    let mut seen = HashSet::new();
    let walk = from.rev_walk([tip]).all().map_err(Error::git)?;
    for info in walk {
        let commit = info.map_err(Error::git)?.id;
        copy_object(from, to, commit, &mut seen)?;
        let tree = from
            .find_commit(commit)
            .map_err(Error::git)?
            .tree_id()
            .map_err(Error::git)?
            .detach();
        copy_object(from, to, tree, &mut seen)?;
    }
    Ok(())
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
