//! Sync: exchanging the log with a git remote.
//!
//! `sync(repo, remote)` fetches the remote's memlog ref into its
//! remote-tracking ref (`refs/remotes/<remote>/memlog`), checks that it is
//! a memlog log ([`check`]: a code branch of the same name is refused,
//! untouched), applies the purges either side recorded and the other has
//! not ([`purges`]), joins it with the local ref, and pushes the result
//! back:
//!
//! - no local ref: the local ref takes the remote's tip;
//! - one side contains the other: fast-forward (no merge commit);
//! - diverged: one merge commit whose tree is the union of both trees
//!   (segment paths are content hashes, so a union never conflicts) and
//!   whose message ends in the `Memlog-Merge: <remote>` trailer.
//!
//! The local ref moves by compare-and-swap through the same path as a seal
//! ([`crate::seal::publish`]). Fetch uses gix (falling back to `git fetch`
//! for transports this build of gix lacks, such as http; a partial clone
//! fetches with git, without its filter, and then fetches whatever of the
//! log the clone left out, as memlog reads with gix, which does not fetch
//! on demand; a shallow clone fetches with git, deepening the memlog ref
//! alone to its whole history); push runs the `git` command, as gix has no push. A push
//! rejected because the remote's ref moved meanwhile starts the round over
//! (fetch, join, push); any other refusal (the user's pre-push hook, a
//! protected branch, credentials) is reported once, as git gave it. A
//! remote whose old history a purge replaced gets the rewritten one with
//! `--force-with-lease`, so nothing pushed there meanwhile is lost (the
//! next round merges it). Only the memlog ref is pushed, never the personal
//! one, and a push that would carry a personal event, a damaged segment or
//! a commit not memlog's is refused ([`check::fit_to_push`]).
//!
//! Memory can hold private context, so a remote is used only when the user
//! named it or listed it in `.memlog.yaml` (`sync.remotes`, where a URL of
//! a repository kept for memory may stand): see [`remotes_to_sync`].

pub(crate) mod check;
mod purges;

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use gix::ObjectId;
use gix::objs::tree::EntryKind;
use memlog_format::segment;
use serde::Serialize;

use crate::log::{CommitInfo, Log};
use crate::purge_record::PURGES_DIR;
use crate::remote::{is_url, purged_commits, tracking_ref, tracking_refs};
use crate::seal::{backoff, identity, publish, signature};
use crate::sessions::SessionCommits;
use crate::{Error, Repo, Result, git_command};

/// Trailer of a merge commit made by `memlog sync`: the remote merged.
pub const MERGE_TRAILER: &str = "Memlog-Merge";

/// How often a sync starts over when the remote or the local ref moved
/// under it.
const MAX_ROUNDS: u32 = 5;

/// What sync did to the local ref.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncAction {
    /// Both sides were already the same (or both empty).
    UpToDate,
    /// The local ref did not exist and took the remote's tip.
    TookRemote,
    /// The local ref moved forward to the remote's tip.
    FastForward,
    /// The remote had nothing the local ref lacks (it may get a push).
    LocalAhead,
    /// A merge commit joined the two.
    Merged,
}

/// The result of syncing with one remote.
#[derive(Clone, Debug, Serialize)]
pub struct SyncReport {
    /// The remote.
    pub remote: String,
    /// What the sync did to the local ref.
    pub action: SyncAction,
    /// Local tip before and after.
    pub before: Option<String>,
    /// Local tip after.
    pub after: Option<String>,
    /// The remote's tip as fetched (none: it had no memlog ref yet).
    pub remote_tip: Option<String>,
    /// The merge commit, when one was made.
    pub merge_commit: Option<String>,
    /// Sessions and events that came from the remote.
    pub sessions_received: usize,
    /// Events that came from the remote.
    pub events_received: u64,
    /// Whether the remote's ref was created or moved by the push.
    pub pushed: bool,
    /// Whether the remote had no memlog ref before this sync.
    pub created_on_remote: bool,
    /// Purge records this sync applied (to the local history, the
    /// remote's, or both).
    pub purges_applied: Vec<String>,
    /// Whether the remote's old history was replaced by the rewritten one
    /// (a purge it had not had).
    pub rewrote_remote: bool,
    /// Events the applied purges took out of the local history, for the
    /// caller to clear what it derived from them.
    #[serde(skip)]
    pub purged: Vec<memlog_format::Event>,
}

/// The remotes a sync may use: the one named on the command line, else the
/// configured `sync.remotes`. With neither, refuses: there is no default
/// remote, so memory is never pushed somewhere by accident.
pub fn remotes_to_sync(repo: &Repo, named: Option<&str>) -> Result<Vec<String>> {
    if let Some(name) = named {
        return Ok(vec![name.to_string()]);
    }
    if repo.config.sync.remotes.is_empty() {
        return Err(Error::NoSyncRemote);
    }
    Ok(repo.config.sync.remotes.clone())
}

/// Fetches `remote`'s memlog ref, joins it with the local one and pushes
/// the result back (see the module documentation).
pub fn sync(repo: &Repo, remote: &str) -> Result<SyncReport> {
    check_remote(repo, remote)?;
    let log = Log::new(repo);
    // the user's own branch of the log's name is neither merged into nor
    // pushed as memory
    log.check_ours()?;
    let before = log.tip()?;
    let tracking = tracking_ref(repo, remote);
    let mut last_error = None;
    // A push git refused for another reason than a moved remote ref.
    let mut refused = None;
    // What earlier rounds applied, should their push have failed.
    let mut records: Vec<String> = Vec::new();
    let mut purged = Vec::new();
    for round in 0..MAX_ROUNDS {
        if round > 0 {
            std::thread::sleep(backoff(round));
        }
        let tracked = tracking_tip(repo, &tracking)?;
        let remote_tip = fetch(repo, remote)?;
        if let Some(tip) = remote_tip {
            let accepted = accept(repo, &log, remote, tip);
            if accepted.is_err() {
                // as it was before this sync: the refused ref is not kept
                restore_ref(repo, &tracking, tracked);
            }
            accepted?;
        }
        let pending = purges::Pending::of(repo, &log, log.tip()?, remote_tip)?;
        // Rewriting history and pruning need every other writer out.
        let _history = if pending.any() {
            crate::history_lock::exclusive(repo)?
        } else {
            crate::history_lock::shared(repo)?
        };
        let applied = if pending.any() {
            purges::apply(repo, &log, &pending, remote_tip)?
        } else {
            purges::Applied::default()
        };
        let joined = applied.remote.or(remote_tip);
        for r in &applied.records {
            if !records.contains(r) {
                records.push(r.clone());
            }
        }
        purged.extend(applied.purged);
        let mut report = join(repo, remote, joined)?;
        report.before = before.map(|b| b.to_string());
        report.remote_tip = remote_tip.map(|t| t.to_string());
        let local = log.tip()?;
        report.after = local.map(|t| t.to_string());
        let rewritten = applied.remote.is_some();
        let needs_push = local.is_some() && (local != remote_tip);
        let pushed = match local {
            Some(local) if needs_push => {
                check::fit_to_push(repo, &log, remote, local, joined)?;
                push(repo, remote, local, remote_tip, rewritten)
            }
            _ => Ok(Pushed::Nothing),
        };
        for keep in &applied.keep {
            // the ref reaches the objects now (or they may go)
            let _ = std::fs::remove_file(keep);
        }
        match pushed {
            Ok(done @ (Pushed::Done | Pushed::Nothing)) => {
                let pushed = matches!(done, Pushed::Done);
                report.pushed = pushed;
                report.created_on_remote = pushed && remote_tip.is_none();
                report.rewrote_remote = pushed && rewritten;
                if !records.is_empty() {
                    if let Some(local) = local {
                        let _ =
                            git_command::run(repo, &["update-ref", &tracking, &local.to_string()]);
                    }
                    drop_old_tracking_refs(repo, &log, remote)?;
                    crate::purge::prune(repo)?;
                }
                report.purges_applied = records;
                report.purged = purged;
                return Ok(report);
            }
            // Someone pushed meanwhile: fetch and join again.
            Ok(Pushed::RemoteMoved(why)) => last_error = Some(why),
            // Anything else (a hook, auth, a protected branch, the
            // network) fails the same way again: retrying would only run
            // the user's pre-push hook once more per round.
            Err(e) => {
                refused = Some(e);
                break;
            }
        }
    }
    if !records.is_empty() {
        // The purge holds here even though the remote could not be updated.
        let _history = crate::history_lock::exclusive(repo)?;
        crate::purge::prune(repo)?;
    }
    Err(refused.unwrap_or_else(|| Error::Sync {
        remote: remote.to_string(),
        message: format!(
            "the remote kept moving; gave up after {MAX_ROUNDS} rounds ({})",
            last_error.unwrap_or_default()
        ),
    }))
}

/// How a push went, when git did not refuse it for good.
enum Pushed {
    /// The remote's ref now holds the local tip.
    Done,
    /// There was nothing to push.
    Nothing,
    /// The remote's ref moved since it was fetched (git's words): fetch,
    /// join and push again.
    RemoteMoved(String),
}

/// Pushes the local tip; a rewritten history replaces the remote's old one
/// only if the remote is still where it was fetched (a lease). A push
/// refused for another reason than a moved remote ref is an error, with
/// git's words.
fn push(
    repo: &Repo,
    remote: &str,
    local: ObjectId,
    remote_tip: Option<ObjectId>,
    rewritten: bool,
) -> Result<Pushed> {
    let refspec = format!("{local}:{}", repo.ref_name());
    let lease = match (rewritten, remote_tip) {
        (true, Some(old)) => Some(format!("--force-with-lease={}:{old}", repo.ref_name())),
        _ => None,
    };
    // --porcelain: a status line per ref on stdout, in words git does not
    // translate, which tell a moved remote ref from anything else.
    let mut args = vec!["push", "--porcelain", "--quiet"];
    if let Some(l) = &lease {
        args.push(l);
    }
    args.extend([remote, refspec.as_str()]);
    let out = git_command::output(repo, &args, None)?;
    if out.status.success() {
        return Ok(Pushed::Done);
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
    let rejections: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("!\t"))
        .filter_map(|l| l.split('\t').nth(1))
        .collect();
    if rejections.iter().any(|r| remote_moved(r, &stderr)) {
        return Ok(Pushed::RemoteMoved(stderr));
    }
    Err(push_refused(repo, remote, &rejections, &stderr, rewritten))
}

/// Whether a rejection in `git push --porcelain` says the remote's ref
/// moved since it was fetched: behind it (non-fast-forward, or "fetch
/// first": it holds commits not here), a lease that no longer holds
/// (stale info), or a concurrent push that moved or locked the remote's
/// ref while this one was under way (the remote then says only "failed to
/// update ref", and why on stderr: "cannot lock ref …: is at … but
/// expected …"; a server speaking another language is reported once, and
/// the next sync joins what it got).
fn remote_moved(rejection: &str, stderr: &str) -> bool {
    match rejection {
        "[rejected] (non-fast-forward)"
        | "[rejected] (fetch first)"
        | "[rejected] (stale info)" => true,
        "[remote rejected] (failed to update ref)" => stderr.contains("cannot lock ref"),
        _ => false,
    }
}

/// The error of a push git refused for good: what refused it, where memlog
/// can tell, what to do, then git's own words.
fn push_refused(
    repo: &Repo,
    remote: &str,
    rejections: &[&str],
    stderr: &str,
    rewritten: bool,
) -> Error {
    let ref_name = repo.ref_name();
    // git's closing "failed to push some refs" repeats what the rest says
    let said: Vec<&str> = stderr
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty() && !l.starts_with("error: failed to push some refs"))
        .collect();
    let said = said.join("\n  ");
    let what = if said.contains("--mirror can't be combined with refspecs") {
        // git refuses before it connects: a push mirror takes every ref
        format!(
            "{remote} is a push mirror (`remote.{remote}.mirror`): git pushes it every ref at \
             once and takes no single ref, so memlog cannot sync with it; your `git push \
             {remote}` carries {ref_name} with the rest (leave it out of `sync.remotes`)"
        )
    } else if rejections.is_empty()
        && let Some(hook) = pre_push_hook(repo)
    {
        // git runs the hook before it sends anything: no ref was rejected.
        // The hook is the user's to satisfy or skip, never memlog's.
        format!(
            "your pre-push hook ({}) refused the push; memlog does not skip your hooks: fix \
             what it reports and sync again (pushing the log without it, `git push --no-verify \
             {remote} {ref_name}`, is your choice)",
            hook.display()
        )
    } else if rejections
        .iter()
        .any(|r| STORAGE_FAILURES.iter().any(|why| r.contains(why)))
        || said.contains("No space left on device")
    {
        // the remote could not store what it was sent: its disk, or its
        // repository, not its policy
        format!(
            "the remote could not store the push ({}): its disk is full or its repository is \
             damaged (`git fsck` there says which); when its {ref_name} names a missing commit \
             (a `git gc --prune=now` there), deleting that ref on the remote (`git update-ref \
             -d {ref_name}`) lets the next sync of each clone push its memory again",
            rejections.join(", ")
        )
    } else if rewritten
        && rejections
            .iter()
            .any(|r| r.starts_with("[remote rejected]") && r.contains("non-fast-forward"))
    {
        // it took every push before: this one replaces history
        format!(
            "the remote refuses to replace history ({}): a purge rewrote the log's history, \
             and the remote takes no forced push (`receive.denyNonFastForwards`, or a branch \
             protection), so it still holds the purged bytes and this clone cannot sync with it; \
             ask whoever runs it to allow one forced push of {ref_name} (on a self-hosted \
             remote, `git config receive.denyNonFastForwards false`), then sync again",
            rejections.join(", ")
        )
    } else if rejections
        .iter()
        .any(|r| r.starts_with("[remote rejected]"))
    {
        format!(
            "the remote refused the push ({}): its server does not take {ref_name} (a \
             protected branch, or a hook of the server); ask whoever runs it to allow that ref, \
             or keep memory where it is taken (`ref:` or `sync.remotes` in .memlog.yaml)",
            rejections.join(", ")
        )
    } else if rejections.is_empty() {
        "`git push` failed".to_string()
    } else {
        format!("`git push` failed ({})", rejections.join(", "))
    };
    Error::Sync {
        remote: remote.to_string(),
        message: format!("{what}. git said:\n  {said}"),
    }
}

/// How git names a push the remote received but could not store.
const STORAGE_FAILURES: [&str; 2] = ["(unpacker error)", "(missing necessary objects)"];

/// The pre-push hook git runs when this repository pushes, if there is
/// one: in `core.hooksPath` (relative to the work tree, where git runs
/// hooks), else in the hooks directory.
fn pre_push_hook(repo: &Repo) -> Option<std::path::PathBuf> {
    let git = repo.git().ok()?;
    let dir = match git.config_snapshot().trusted_path("core.hooksPath") {
        Ok(Some(dir)) if dir.is_relative() => git.workdir().unwrap_or(git.git_dir()).join(dir),
        Ok(Some(dir)) => dir,
        _ => git.common_dir().join("hooks"),
    };
    let hook = dir.join("pre-push");
    is_executable(&hook).then(|| std::fs::canonicalize(&hook).unwrap_or(hook))
}

/// Whether git would run `path` as a hook: a file it may execute.
fn is_executable(path: &std::path::Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        meta.is_file()
    }
}

/// Checks a fetched remote tip: a memlog log, and none of the old history
/// an earlier, unrecorded purge replaced here.
fn accept(repo: &Repo, log: &Log, remote: &str, tip: ObjectId) -> Result<()> {
    let known = match log.tip()? {
        Some(local) => Some(SessionCommits::at(repo, log, local)?),
        None => None,
    };
    check::memlog_log(log, remote, tip, &|id| {
        known.as_ref().is_some_and(|k| k.contains(id))
    })?;
    check::segments_whole(log, remote, tip, log.tip()?)?;
    refuse_purged_history(repo, remote, tip)
}

/// Puts a ref back where it was (deleting it if it did not exist).
fn restore_ref(repo: &Repo, name: &str, to: Option<ObjectId>) {
    let _ = match to {
        Some(id) => git_command::run(repo, &["update-ref", name, &id.to_string()]),
        None => git_command::run(repo, &["update-ref", "-d", name]),
    };
}

/// After a purge was applied: other remotes' tracking refs that still
/// reach the old history are deleted (a later sync with them fetches
/// again and rewrites what they hold).
fn drop_old_tracking_refs(repo: &Repo, log: &Log, remote: &str) -> Result<()> {
    let tip_tree = match log.tip()? {
        Some(t) => log.commit(t)?.tree,
        None => return Ok(()),
    };
    let records = crate::purge_record::records_in_tree(log, tip_tree)?;
    let old: HashSet<ObjectId> = records.iter().flat_map(|(_, r)| r.old_commits()).collect();
    let own = tracking_ref(repo, remote);
    for (_, r) in tracking_refs(repo)? {
        if r == own {
            continue;
        }
        let Some(tip) = tracking_tip(repo, &r)? else {
            continue;
        };
        let mut stack = vec![tip];
        let mut seen = HashSet::new();
        while let Some(id) = stack.pop() {
            if old.contains(&id) {
                git_command::run(repo, &["update-ref", "-d", &r])?;
                break;
            }
            if seen.insert(id)
                && let Ok(c) = log.commit(id)
            {
                stack.extend(c.parents);
            }
        }
    }
    Ok(())
}

/// A remote whose history still holds commits a purge replaced would bring
/// the purged bytes back: refuse, drop the fetched tracking ref, and say how
/// to fix the remote.
fn refuse_purged_history(repo: &Repo, remote: &str, remote_tip: ObjectId) -> Result<()> {
    let purged = purged_commits(repo)?;
    if purged.is_empty() {
        return Ok(());
    }
    let log = Log::new(repo);
    let local = match log.tip()? {
        Some(t) => Some(SessionCommits::at(repo, &log, t)?),
        None => None,
    };
    let remote_only = ancestors(&log, remote_tip, &|id| {
        local.as_ref().is_some_and(|l| l.contains(id))
    })?;
    if remote_only.keys().any(|id| purged.contains(id)) {
        let tracking = tracking_ref(repo, remote);
        let _ = git_command::run(repo, &["update-ref", "-d", &tracking]);
        return Err(Error::Sync {
            remote: remote.to_string(),
            message: format!(
                "it still holds history that `memlog purge` removed here; merging it would \
                 bring the forgotten bytes back. Replace it first: git push --force {remote} \
                 {0}:{0} (then run `memlog purge` again to drop what this fetch brought in)",
                repo.ref_name()
            ),
        });
    }
    Ok(())
}

/// A remote must be one of the repository's git remotes, or a URL listed
/// in `sync.remotes` (a repository kept for memory): a URL or path typed on
/// the command line by mistake (a fork, a public mirror) is not pushed to.
fn check_remote(repo: &Repo, remote: &str) -> Result<()> {
    if is_url(remote) && repo.config.sync.remotes.iter().any(|r| r == remote) {
        return Ok(());
    }
    let valid_name = !remote.is_empty()
        && !remote.starts_with('-')
        && gix::validate::reference::name(format!("refs/remotes/{remote}/x").as_str().into())
            .is_ok();
    let known = valid_name && repo.git().is_ok_and(|g| g.find_remote(remote).is_ok());
    if !known {
        return Err(Error::Sync {
            remote: remote.to_string(),
            message: "not a remote of this repository (see `git remote -v`; add it with \
                      `git remote add NAME URL`, or list a URL kept for memory in \
                      .memlog.yaml as `sync: { remotes: [URL] }`)"
                .into(),
        });
    }
    Ok(())
}

/// Fetches the remote's memlog ref into its remote-tracking ref; returns
/// the remote's tip, or `None` when the remote has no memlog ref. Uses gix;
/// transports this build of gix lacks (http) fall back to `git fetch`.
///
/// A partial or shallow clone fetches with git, which keeps its
/// bookkeeping of what the clone left out ([`CloneShape`]). A partial
/// clone then fetches what the clone or a filtered `git fetch` left out of
/// the local and the fetched log: memlog reads with gix, which does not
/// fetch those on demand.
fn fetch(repo: &Repo, remote: &str) -> Result<Option<ObjectId>> {
    let git = repo.git()?;
    let clone = CloneShape {
        partial: crate::incomplete::promisor_remote(git).is_some(),
        shallow: crate::incomplete::is_shallow(git),
    };
    let tip = if clone.partial || clone.shallow {
        fetch_with_git(repo, remote, clone)?
    } else {
        match fetch_with_gix(repo, remote) {
            Ok(tip) => tip,
            Err(_) => fetch_with_git(repo, remote, clone)?,
        }
    };
    if clone.partial {
        fetch_left_out(repo, remote, tip)?;
    }
    Ok(tip)
}

/// What git left out of this repository on purpose, which a fetch of the
/// memlog ref must undo for that ref alone.
#[derive(Clone, Copy)]
struct CloneShape {
    /// A partial clone: a plain `git fetch` applies its filter to the
    /// memlog ref too, leaving the segments out.
    partial: bool,
    /// A shallow clone: a plain `git fetch` keeps an already shallow
    /// memlog ref shallow, and sync walks its whole history.
    shallow: bool,
}

/// The depth that deepens a shallow memlog ref to its whole history, and
/// only that ref: git takes 2147483647 for `--unshallow`, which the server
/// applies to every shallow branch of the clone, so one less.
const WHOLE_HISTORY_DEPTH: &str = "--depth=2147483646";

/// In a partial clone: fetches every object of the local log and of the
/// remote's `tip` that is not here. They are asked for by id and without
/// negotiation, as git's own on-demand fetch does: the remote would
/// otherwise leave out whatever the commits held here reach.
fn fetch_left_out(repo: &Repo, remote: &str, tip: Option<ObjectId>) -> Result<()> {
    let tips: Vec<String> = [Log::new(repo).tip()?, tip]
        .into_iter()
        .flatten()
        .map(|t| t.to_string())
        .collect();
    if tips.is_empty() {
        return Ok(());
    }
    // `--missing=print` lists absent objects and fetches none of them.
    let mut args = vec!["rev-list", "--objects", "--missing=print"];
    args.extend(tips.iter().map(String::as_str));
    let listed = git_command::run(repo, &args)?;
    let missing: Vec<&str> = listed.lines().filter_map(|l| l.strip_prefix('?')).collect();
    if missing.is_empty() {
        return Ok(());
    }
    git_command::run_with_input(
        repo,
        &[
            "-c",
            "fetch.negotiationAlgorithm=noop",
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            "--recurse-submodules=no",
            "--no-filter",
            "--stdin",
            remote,
        ],
        Some(&missing.join("\n")),
    )
    .map_err(|e| Error::Sync {
        remote: remote.to_string(),
        message: format!(
            "this partial clone lacks {} object(s) of the log, and fetching them failed: {e}",
            missing.len()
        ),
    })?;
    Ok(())
}

fn fetch_with_gix(repo: &Repo, remote: &str) -> Result<Option<ObjectId>> {
    use gix::remote::Direction;
    let url = if is_url(remote) {
        gix::url::parse(gix::bstr::BStr::new(remote)).map_err(Error::git)?
    } else {
        let configured = repo.git()?.find_remote(remote).map_err(Error::git)?;
        configured
            .url(Direction::Fetch)
            .cloned()
            .ok_or_else(|| Error::Sync {
                remote: remote.to_string(),
                message: "the remote has no fetch URL".into(),
            })?
    };
    let tracking = tracking_ref(repo, remote);
    let refspec = format!("+{}:{tracking}", repo.ref_name());
    // Only this refspec: the remote's configured ones would fetch every branch.
    let prepared = repo
        .git()?
        .remote_at(url)
        .map_err(Error::git)?
        .with_refspecs([refspec.as_str()], Direction::Fetch)
        .map_err(Error::git)?
        .connect(Direction::Fetch)
        .map_err(Error::git)?
        .prepare_fetch(gix::progress::Discard, Default::default())
        .map_err(Error::git)?;
    if prepared.ref_map().mappings.is_empty() {
        return Ok(None);
    }
    prepared
        .with_reflog_message(gix::remote::fetch::RefLogMessage::Override {
            message: format!("memlog sync: fetch {remote}").into(),
        })
        .receive(
            gix::progress::Discard,
            &std::sync::atomic::AtomicBool::new(false),
        )
        .map_err(Error::git)?;
    tracking_tip(repo, &tracking)
}

fn tracking_tip(repo: &Repo, tracking: &str) -> Result<Option<ObjectId>> {
    let found = repo
        .git()?
        .try_find_reference(tracking)
        .map_err(Error::git)?;
    match found {
        Some(mut r) => Ok(Some(r.peel_to_id().map_err(Error::git)?.detach())),
        None => Ok(None),
    }
}

fn fetch_with_git(repo: &Repo, remote: &str, clone: CloneShape) -> Result<Option<ObjectId>> {
    let listed = git_command::run(repo, &["ls-remote", remote, repo.ref_name()])?;
    let exists = listed
        .lines()
        .any(|l| l.split_whitespace().nth(1) == Some(repo.ref_name()));
    if !exists {
        return Ok(None);
    }
    let tracking = tracking_ref(repo, remote);
    let refspec = format!("+{}:{tracking}", repo.ref_name());
    let mut args = vec!["fetch", "--quiet", "--no-tags", "--no-write-fetch-head"];
    if clone.partial {
        args.push("--no-filter");
    }
    if clone.shallow {
        args.push(WHOLE_HISTORY_DEPTH);
    }
    args.extend([remote, refspec.as_str()]);
    git_command::run(repo, &args)?;
    tracking_tip(repo, &tracking)
}

/// Joins `remote_tip` into the local ref (take, fast-forward or merge),
/// retrying on a local ref that moved meanwhile (a concurrent seal).
fn join(repo: &Repo, remote: &str, remote_tip: Option<ObjectId>) -> Result<SyncReport> {
    let log = Log::new(repo);
    let mut report = SyncReport {
        remote: remote.to_string(),
        action: SyncAction::UpToDate,
        before: None,
        after: None,
        remote_tip: remote_tip.map(|t| t.to_string()),
        merge_commit: None,
        sessions_received: 0,
        events_received: 0,
        pushed: false,
        created_on_remote: false,
        purges_applied: Vec::new(),
        rewrote_remote: false,
        purged: Vec::new(),
    };
    let Some(remote_tip) = remote_tip else {
        if log.tip()?.is_some() {
            report.action = SyncAction::LocalAhead;
        }
        return Ok(report);
    };
    // The caller holds the history lock.
    let started = Instant::now();
    let mut attempt = 0u32;
    loop {
        if attempt > 0 {
            std::thread::sleep(backoff(attempt));
        }
        attempt += 1;
        crate::ref_lock::remove_stale(repo, repo.ref_name());
        let local = log.tip()?;
        let plan = plan_join(repo, &log, local, remote_tip)?;
        report.sessions_received = plan.received_sessions.len();
        report.events_received = plan.received_events;
        let (action, new_tip, objects) = match plan.relation {
            Relation::Same => (SyncAction::UpToDate, None, None),
            Relation::RemoteBehind => (SyncAction::LocalAhead, None, None),
            Relation::NoLocal => (SyncAction::TookRemote, Some(remote_tip), None),
            Relation::LocalBehind => (SyncAction::FastForward, Some(remote_tip), None),
            Relation::Diverged(local) => {
                let (commit, objects) = merge_commit(repo, remote, local, remote_tip, &plan)?;
                (SyncAction::Merged, Some(commit), Some(objects))
            }
        };
        report.action = action;
        let Some(new_tip) = new_tip else {
            return Ok(report);
        };
        let objects = objects.unwrap_or_default();
        let message = format!("memlog: sync with {remote} ({action:?})");
        match publish(repo, repo.ref_name(), &objects, local, new_tip, &message) {
            Ok(()) => {
                if action == SyncAction::Merged {
                    report.merge_commit = Some(new_tip.to_string());
                }
                return Ok(report);
            }
            // Retry only on contention: a concurrent seal moved the ref or
            // holds its lock.
            Err(e) if started.elapsed().as_secs() < 20 && crate::seal::is_contention(&e) => {
                continue;
            }
            Err(e) => return Err(e),
        }
    }
}

/// How the local and the remote tips relate.
enum Relation {
    Same,
    NoLocal,
    /// The remote tip is in the local history.
    RemoteBehind,
    /// The local tip is in the remote history.
    LocalBehind,
    /// Neither contains the other; carries the local tip.
    Diverged(ObjectId),
}

struct Plan {
    relation: Relation,
    /// Remote commits the local history lacks, with their sessions.
    received_sessions: Vec<(String, String)>,
    received_events: u64,
}

fn plan_join(repo: &Repo, log: &Log, local: Option<ObjectId>, remote: ObjectId) -> Result<Plan> {
    let mut plan = Plan {
        relation: Relation::Same,
        received_sessions: Vec::new(),
        received_events: 0,
    };
    let Some(local) = local else {
        plan.relation = Relation::NoLocal;
        let commits = log.commits_from(remote)?;
        add_received(&mut plan, commits.iter());
        return Ok(plan);
    };
    if local == remote {
        return Ok(plan);
    }
    // Every commit of the local history, from the sessions cache (a walk
    // of only what is new since it was last brought up to date).
    let local_history = SessionCommits::at(repo, log, local)?;
    if local_history.contains(&remote) {
        plan.relation = Relation::RemoteBehind;
        return Ok(plan);
    }
    // Remote commits not in the local history (the walk stops at it).
    let remote_only = ancestors(log, remote, &|id| local_history.contains(id))?;
    let mut received: Vec<&CommitInfo> = remote_only.values().collect();
    received.sort_by_key(|c| (c.commit_time, c.author_time, c.id));
    add_received(&mut plan, received.into_iter());
    let remote_history_has_local = remote_only.values().any(|c| c.parents.contains(&local));
    plan.relation = if remote_history_has_local {
        Relation::LocalBehind
    } else {
        Relation::Diverged(local)
    };
    Ok(plan)
}

fn add_received<'a>(plan: &mut Plan, commits: impl Iterator<Item = &'a CommitInfo>) {
    for c in commits {
        if c.parents.len() > 1 {
            continue;
        }
        if let Some(s) = &c.session {
            plan.received_sessions.push((s.clone(), c.subject.clone()));
        }
        plan.received_events += c.events.unwrap_or(0);
    }
}

/// Commits reachable from `tip`, not walking past commits `stop` names.
pub(super) fn ancestors(
    log: &Log,
    tip: ObjectId,
    stop: &dyn Fn(&ObjectId) -> bool,
) -> Result<HashMap<ObjectId, CommitInfo>> {
    let mut out = HashMap::new();
    let mut stack = vec![tip];
    while let Some(id) = stack.pop() {
        if stop(&id) || out.contains_key(&id) {
            continue;
        }
        let info = log.commit(id)?;
        stack.extend(info.parents.iter().copied());
        out.insert(id, info);
    }
    Ok(out)
}

/// Builds (in memory) the merge commit of `local` and `remote`: the local
/// tree plus every segment of the remote tree it lacks.
fn merge_commit(
    repo: &Repo,
    remote_name: &str,
    local: ObjectId,
    remote: ObjectId,
    plan: &Plan,
) -> Result<(ObjectId, gix::odb::memory::Storage)> {
    let log = Log::new(repo);
    let local_tree = log.commit(local)?.tree;
    let remote_tree = log.commit(remote)?.tree;
    let missing = log.diff_trees(local_tree, remote_tree)?.added;
    let mut staging = repo.git()?.clone().with_object_memory();
    let mut editor = staging.edit_tree(local_tree).map_err(Error::git)?;
    for seg in &missing {
        editor
            .upsert(
                segment::path_for(&seg.hash).as_str(),
                EntryKind::Blob,
                seg.blob,
            )
            .map_err(Error::git)?;
    }
    // Purge records are part of the union too.
    for (path, blob) in purge_files(&staging, remote_tree)? {
        editor
            .upsert(path.as_str(), EntryKind::Blob, blob)
            .map_err(Error::git)?;
    }
    let tree = editor.write().map_err(Error::git)?.detach();
    let (name, email) = identity(&staging);
    let now = jiff::Timestamp::now().as_second();
    let commit = gix::objs::Commit {
        tree,
        parents: vec![local, remote].into(),
        author: signature(&name, &email, now),
        committer: signature(&name, &email, now),
        encoding: None,
        message: merge_message(remote_name, plan, missing.len()).into(),
        extra_headers: Vec::new(),
    };
    let id = staging.write_object(&commit).map_err(Error::git)?.detach();
    let objects = staging.objects.take_object_memory().unwrap_or_default();
    Ok((id, objects))
}

/// The files of a root tree's `purges/` directory, with their blobs.
fn purge_files(git: &gix::Repository, tree: ObjectId) -> Result<Vec<(String, ObjectId)>> {
    let root = git.find_tree(tree).map_err(Error::git)?;
    let Some(dir) = root.lookup_entry_by_path(PURGES_DIR).map_err(Error::git)? else {
        return Ok(Vec::new());
    };
    let dir = git.find_tree(dir.object_id()).map_err(Error::git)?;
    Ok(dir
        .decode()
        .map_err(Error::git)?
        .entries
        .iter()
        .filter(|e| !e.mode.is_tree())
        .map(|e| (format!("{PURGES_DIR}/{}", e.filename), e.oid.to_owned()))
        .collect())
}

/// `Merge memlog from origin: 3 sessions, 41 events`, a list of the
/// sessions received, and the `Memlog-Merge` trailer.
fn merge_message(remote: &str, plan: &Plan, segments: usize) -> String {
    let sessions = &plan.received_sessions;
    let mut body = Vec::new();
    for (session, subject) in sessions.iter().take(20) {
        body.push(format!("- {session}: {subject}"));
    }
    if sessions.len() > 20 {
        body.push(format!("- … and {} more sessions", sessions.len() - 20));
    }
    body.push(format!("{segments} segment(s) joined from {remote}."));
    format!(
        "Merge memlog from {remote}: {} session(s), {} event(s)\n\n{}\n\n{MERGE_TRAILER}: {remote}\n",
        sessions.len(),
        plan.received_events,
        body.join("\n")
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    /// A remote that could not store the push (its disk full, its ref at a
    /// commit a `git gc --prune=now` deleted) is not called a protected
    /// branch: a field test was sent to ask for a permission it had.
    #[test]
    fn a_remote_that_could_not_store_the_push_is_said_so() {
        let dir = tempfile::tempdir().unwrap();
        let ok = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(dir.path())
            .status()
            .unwrap();
        assert!(ok.success());
        let repo = Repo::discover(dir.path()).unwrap();
        let said = |rejection: &str, stderr: &str| {
            push_refused(&repo, "origin", &[rejection], stderr, false).to_string()
        };
        let unpacker = said(
            "[remote rejected] (unpacker error)",
            "remote: fatal: pack has 46 unresolved deltas\nerror: remote unpack failed",
        );
        assert!(
            unpacker.contains("could not store") && !unpacker.contains("protected"),
            "{unpacker}"
        );
        let full = said(
            "[remote rejected] (failed)",
            "remote: fatal: unable to write loose object file: No space left on device",
        );
        assert!(full.contains("disk is full"), "{full}");
        let policy = said(
            "[remote rejected] (pre-receive hook declined)",
            "remote: denied",
        );
        assert!(policy.contains("protected branch"), "{policy}");
    }
}
