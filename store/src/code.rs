//! The user's code as git has it, for memories anchored to it (facts and
//! rules citing files or quoting code record the commit they were made at;
//! `memlog verify` asks how the code moved since). Read-only: nothing here
//! touches HEAD, the index or the work tree.

use std::collections::BTreeMap;

use gix::ObjectId;

use crate::repo::Repo;
use crate::{Error, Result};

/// How many commits reachable from HEAD but not from `since` changed each
/// of `paths` (compared with their first parent; a path that appears or
/// goes away counts as a change). `None` when `since` is not a commit of
/// this repository (another clone's history, or rewritten).
pub fn changes_since(
    repo: &Repo,
    since: &str,
    paths: &[String],
) -> Result<Option<BTreeMap<String, usize>>> {
    let git = repo.git()?;
    let Ok(since) = ObjectId::from_hex(since.as_bytes()) else {
        return Ok(None);
    };
    if git.find_commit(since).is_err() {
        return Ok(None);
    }
    let head = git.head_id().map_err(Error::git)?.detach();
    let mut counts: BTreeMap<String, usize> = paths.iter().map(|p| (p.clone(), 0)).collect();
    let walk = git
        .rev_walk([head])
        .with_hidden([since])
        .all()
        .map_err(Error::git)?;
    for info in walk {
        let info = info.map_err(Error::git)?;
        let commit = git.find_commit(info.id).map_err(Error::git)?;
        let tree = commit.tree().map_err(Error::git)?;
        let parent_tree = match info.parent_ids.first() {
            Some(p) => Some(
                git.find_commit(*p)
                    .map_err(Error::git)?
                    .tree()
                    .map_err(Error::git)?,
            ),
            None => None,
        };
        for (path, n) in counts.iter_mut() {
            let now = tree
                .lookup_entry_by_path(path.as_str())
                .map_err(Error::git)?
                .map(|e| e.object_id());
            let before = match &parent_tree {
                Some(t) => t
                    .lookup_entry_by_path(path.as_str())
                    .map_err(Error::git)?
                    .map(|e| e.object_id()),
                None => None,
            };
            if now != before {
                *n += 1;
            }
        }
    }
    Ok(Some(counts))
}
