//! Repositories git leaves incomplete on purpose: a partial clone (`git
//! clone --filter`) holds the commits but not every blob or tree, and git
//! fetches the rest from its promisor remote when it needs them; a shallow
//! clone (`git clone --depth`) holds history only down to a depth.
//!
//! memlog reads objects with gix, which does not fetch them on demand, so
//! a read that finds an object absent says why and what brings it
//! ([`missing_object`]); `memlog sync` brings the memlog ref whole
//! ([`crate::sync`]).

use gix::ObjectId;
use gix::objs::Kind;

use crate::{Error, Repo};

/// The remote a partial clone fetches left-out objects from: the one
/// `extensions.partialClone` names (older git), else the first with
/// `remote.<name>.promisor = true`; `None` when the repository is whole.
pub(crate) fn promisor_remote(git: &gix::Repository) -> Option<String> {
    let config = git.config_snapshot();
    if let Some(name) = config.string("extensions.partialClone") {
        return Some(name.to_string());
    }
    git.remote_names()
        .into_iter()
        .map(|name| name.to_string())
        .find(|name| config.boolean(format!("remote.{name}.promisor").as_str()) == Some(true))
}

/// Whether git cut this repository's history at a depth (its `shallow`
/// file lists commits whose parents are not here).
pub(crate) fn is_shallow(git: &gix::Repository) -> bool {
    git.is_shallow().unwrap_or(false)
}

/// The error of a failed read of `id` (a `kind` the log needs): when the
/// object is absent because the clone left it out, says so and names the
/// fix, instead of gix's bare "could not be found"; any other failure is
/// gix's.
pub(crate) fn missing_object(
    repo: &Repo,
    id: ObjectId,
    kind: Kind,
    e: impl std::fmt::Display,
) -> Error {
    let Ok(git) = repo.git() else {
        return Error::git(e);
    };
    if git.has_object(id) {
        return Error::git(e);
    }
    let shallow = is_shallow(git);
    // A filter leaves out blobs and trees, never commits; a depth leaves
    // out commits (and what only they reach).
    if !(shallow && kind == Kind::Commit)
        && let Some(remote) = promisor_remote(git)
    {
        return Error::PartialClone {
            id: id.to_string(),
            remote,
        };
    }
    if shallow {
        return Error::Shallow {
            id: id.to_string(),
            remote: only_remote(git).unwrap_or_else(|| "<remote>".to_string()),
        };
    }
    Error::git(e)
}

/// The repository's remote, when it has exactly one.
fn only_remote(git: &gix::Repository) -> Option<String> {
    let mut names = git.remote_names().into_iter();
    match (names.next(), names.next()) {
        (Some(name), None) => Some(name.to_string()),
        _ => None,
    }
}
