//! What `memlog sync` and `memlog purge` both know about remotes: where a
//! remote's memlog ref is tracked (a remote's name, or a URL listed in
//! `sync.remotes`), and which commits purges made before purges were
//! recorded in the log replaced (a sync refuses to merge them back).

use std::collections::HashSet;

use gix::ObjectId;

use crate::{Error, Repo, Result, git_command};

/// The remote-tracking ref that holds a remote's memlog ref:
/// `refs/remotes/<remote>/<branch>` (`refs/remotes/origin/memlog`). A URL
/// (a repository for memory only, listed in `sync.remotes`) is tracked as
/// `refs/remotes/memlog-<12 hex digits of its hash>/<branch>`.
pub fn tracking_ref(repo: &Repo, remote: &str) -> String {
    let name = repo.ref_name();
    let short = name.strip_prefix("refs/heads/").unwrap_or(name);
    if is_url(remote) {
        let hash = blake3::hash(remote.as_bytes()).to_hex();
        return format!("refs/remotes/memlog-{}/{short}", &hash[..12]);
    }
    format!("refs/remotes/{remote}/{short}")
}

/// Whether `remote` is a URL (`https://…`, `git@host:path`) or a path
/// (`/srv/memory.git`, `../memory.git`) rather than a remote's name.
pub fn is_url(remote: &str) -> bool {
    remote.contains(':') || remote.starts_with('/') || remote.starts_with('.')
}

/// Commits replaced by purges of this repository made before purges were
/// recorded in the log (`Layout::purged_commits`, no longer written).
pub fn purged_commits(repo: &Repo) -> Result<HashSet<ObjectId>> {
    let path = repo.layout().purged_commits();
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashSet::new()),
        Err(e) => return Err(Error::io(&path, e)),
    };
    Ok(text
        .lines()
        .filter_map(|l| ObjectId::from_hex(l.trim().as_bytes()).ok())
        .collect())
}

/// `(remote, ref)` for every remote-tracking ref of the memlog ref.
pub fn tracking_refs(repo: &Repo) -> Result<Vec<(String, String)>> {
    let listed = git_command::run(
        repo,
        &["for-each-ref", "--format=%(refname)", "refs/remotes/"],
    )?;
    let short = repo
        .ref_name()
        .strip_prefix("refs/heads/")
        .unwrap_or(repo.ref_name())
        .to_string();
    // A URL's tracking ref is named by its hash: name it by the URL.
    let urls: Vec<(String, &String)> = repo
        .config
        .sync
        .remotes
        .iter()
        .filter(|r| is_url(r))
        .map(|u| (tracking_ref(repo, u), u))
        .collect();
    Ok(listed
        .lines()
        .filter_map(|r| {
            if let Some((_, url)) = urls.iter().find(|(t, _)| t == r) {
                return Some((url.to_string(), r.to_string()));
            }
            let rest = r.strip_prefix("refs/remotes/")?;
            let remote = rest.strip_suffix(&format!("/{short}"))?;
            (tracking_ref(repo, remote) == r).then(|| (remote.to_string(), r.to_string()))
        })
        .collect())
}

/// The tracking refs of the memlog log ([`tracking_refs`]) that hold
/// memory the local log lacks: every one when there is no local log (a
/// fresh clone, whose `git clone` fetched the team's memory and took none
/// of it), else those whose tip the local tip does not reach (a clone
/// whose first session sealed before any sync).
pub fn unmerged_tracking_refs(repo: &Repo) -> Result<Vec<(String, String)>> {
    let refs = tracking_refs(repo)?;
    let Some(local) = crate::log::Log::new(repo).tip()? else {
        return Ok(refs);
    };
    let local = local.to_string();
    Ok(refs
        .into_iter()
        .filter(|(_, tracking)| {
            // exit 1: not an ancestor; an error says nothing
            git_command::output(
                repo,
                &["merge-base", "--is-ancestor", tracking, &local],
                None,
            )
            .is_ok_and(|out| out.status.code() == Some(1))
        })
        .collect())
}
