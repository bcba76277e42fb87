use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use memlog_format::task::Status;
use memlog_indexer::tasks::{self, TaskSummary};

use memlog_ops::workspace;

use crate::output;

/// List tasks: the task entities folded from task events (an agent's
/// TodoWrite, TaskCreate and TaskUpdate calls, the other agents' plan
/// tools — Codex's `update_plan`, Gemini's `write_todos`, OpenCode's
/// `todowrite`, Copilot's `update_todo` — and `memlog task`), most
/// recently changed first.
///
/// A task is one entity across sessions (same canonical key, an alias, or
/// a title the matcher confirmed). See `memlog task show KEY` for one
/// task's history and blockers. (`memlog tasks` is the old spelling.)
#[derive(Args)]
pub struct ListArgs {
    /// Only tasks in this status: pending, in_progress, blocked, done,
    /// cancelled; `open` for the first three.
    #[arg(long, value_name = "STATUS")]
    status: Option<String>,

    /// Only open tasks that wait on blockers: blocked ones, and those an
    /// agent said wait on others (Claude Code's `addBlockedBy`).
    #[arg(long)]
    blocked: bool,

    /// Print the tasks as a JSON array.
    #[arg(long)]
    json: bool,
}

pub fn cmd_list(dir: &Path, args: ListArgs) -> anyhow::Result<ExitCode> {
    let wanted = match args.status.as_deref() {
        None | Some("open") => None,
        Some(s) => Some(Status::parse(s).ok_or_else(|| {
            anyhow::anyhow!(
                "unknown status {s:?}; use pending, in_progress, blocked, done, cancelled or open"
            )
        })?),
    };
    let open_only = args.status.as_deref() == Some("open");
    let repo = workspace::open(dir)?;
    let projections = workspace::projections(&repo)?;
    let list: Vec<TaskSummary> = tasks::tasks(&projections)?
        .into_iter()
        .filter(|t| {
            let status = Status::parse(&t.status);
            wanted.is_none_or(|w| status == Some(w))
                && (!open_only || t.is_open())
                && (!args.blocked
                    || status == Some(Status::Blocked)
                    || (t.is_open() && t.blockers > 0))
        })
        .collect();
    if args.json {
        output::print_json(&list)?;
        return Ok(ExitCode::SUCCESS);
    }
    if list.is_empty() {
        println!("no tasks");
    }
    for t in &list {
        let blockers = if t.blockers > 0 {
            format!(
                "  [{} blocker{}]",
                t.blockers,
                if t.blockers == 1 { "" } else { "s" }
            )
        } else {
            String::new()
        };
        println!(
            "{:<11}  {}  {}{}  ({})",
            t.status,
            output::short_time(&t.updated),
            t.title,
            blockers,
            t.entity_id
        );
    }
    Ok(ExitCode::SUCCESS)
}
