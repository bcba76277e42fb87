use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use memlog_indexer::Projections;
use memlog_store::sync::{SyncAction, SyncReport, remotes_to_sync, sync};

use memlog_ops::workspace;

use crate::output;

/// Share memory with a git remote: fetch its memlog ref, join it with yours, push.
///
/// Fetches REMOTE's memlog branch into `refs/remotes/REMOTE/memlog`, then
/// fast-forwards the local memlog ref or, when both sides sealed sessions,
/// makes one merge commit whose tree is the union of both (segments are
/// content-addressed, so this never conflicts). Pushes the result, creating
/// the branch on a remote that never had it, and updates the search index.
/// Running it again changes nothing.
///
/// A remote ref that is not a memlog log (a code branch named `memlog`) is
/// refused and left untouched. A purge recorded on either side is applied
/// to the other's history first: the old history is never merged back, and
/// a remote still holding it gets the rewritten one (with a lease).
/// Personal events are never pushed.
///
/// Memory can hold private context: memlog only talks to a remote named here
/// or listed in `.memlog.yaml` (`sync: { remotes: [origin] }`; a URL there
/// names a repository kept for memory), and never picks one by itself.
#[derive(Args)]
pub struct SyncArgs {
    /// A git remote of this repository (default: the configured sync.remotes).
    remote: Option<String>,

    /// Do not update the search index afterwards.
    #[arg(long)]
    no_index: bool,

    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn cmd_sync(dir: &Path, args: SyncArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open_for_writing(dir)?;
    let remotes = remotes_to_sync(&repo, args.remote.as_deref())?;
    let tasks_before = task_statuses(&repo);
    let mut reports = Vec::new();
    let mut purged = false;
    let mut failed = Vec::new();
    for remote in &remotes {
        let report = match sync(&repo, remote) {
            Ok(report) => report,
            // one remote that refuses (a mirror's hook, a server down) does
            // not keep the others from syncing
            Err(e) if remotes.len() > 1 => {
                output::print_error(&anyhow::Error::from(e));
                failed.push(remote.as_str());
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        // said before the index is rebuilt: the sync is done whatever
        // becomes of the rebuild
        if !args.json {
            print_report(&report);
        }
        if !report.purged.is_empty() {
            super::purge::forget_purged(&repo, &report.purged).context(
                "the sync applied a purge to the history, but the index and vectors still hold \
                 the purged events: run `memlog rebuild`",
            )?;
            purged = true;
        }
        reports.push(report);
    }
    if !args.no_index && !purged {
        let indexed = Projections::update(&repo)?;
        for w in &indexed.warnings {
            eprintln!("warning: {w}");
        }
        if !args.json {
            print_task_changes(&tasks_before, &task_statuses(&repo));
        }
    }
    if args.json {
        output::print_json(&reports)?;
    }
    if !failed.is_empty() {
        eprintln!(
            "not synced with {} of {} remote(s): {}",
            failed.len(),
            remotes.len(),
            failed.join(", ")
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// Each task's title and status, by entity id; empty when the index
/// cannot be read (the sync goes on without saying what tasks did).
fn task_statuses(repo: &memlog_store::Repo) -> BTreeMap<String, (String, String)> {
    workspace::projections(repo)
        .and_then(|p| Ok(memlog_indexer::tasks::tasks(&p)?))
        .map(|tasks| {
            tasks
                .into_iter()
                .map(|t| (t.entity_id, (t.title, t.status)))
                .collect()
        })
        .unwrap_or_default()
}

/// The tasks whose status the sync changed here: a teammate's change
/// taken, or one made here refused by the state machine once both met
/// (`memlog task show` says why).
fn print_task_changes(
    before: &BTreeMap<String, (String, String)>,
    after: &BTreeMap<String, (String, String)>,
) {
    for (id, (title, status)) in after {
        match before.get(id) {
            Some((_, was)) if was != status => {
                println!("task {title:?}: {was} -> {status} (`memlog task show` says why)")
            }
            _ => {}
        }
    }
}

fn print_report(r: &SyncReport) {
    let received = format!(
        "{} session(s), {} event(s) from {}",
        r.sessions_received, r.events_received, r.remote
    );
    let what = match r.action {
        SyncAction::UpToDate if r.before.is_none() => {
            "nothing to sync: no memory here or there".to_string()
        }
        SyncAction::UpToDate => format!("already in sync with {}", r.remote),
        SyncAction::TookRemote => format!("took {received}"),
        SyncAction::FastForward => format!("fast-forwarded: {received}"),
        SyncAction::LocalAhead => format!("{} has nothing new", r.remote),
        SyncAction::Merged => format!(
            "merged {received} ({})",
            output::short_or_dash(r.merge_commit.as_deref())
        ),
    };
    println!("{what}");
    if !r.purges_applied.is_empty() {
        println!(
            "applied {} purge(s) recorded in the log: the old history is gone here{}",
            r.purges_applied.len(),
            if r.rewrote_remote {
                format!(" and on {}", r.remote)
            } else {
                String::new()
            }
        );
    }
    if r.pushed {
        if r.created_on_remote {
            println!(
                "pushed {} to {} (created its memlog branch)",
                output::short_or_dash(r.after.as_deref()),
                r.remote
            );
        } else {
            println!(
                "pushed {} to {}",
                output::short_or_dash(r.after.as_deref()),
                r.remote
            );
        }
    }
}
