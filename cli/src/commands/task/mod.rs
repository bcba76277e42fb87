pub mod list;

use std::path::Path;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use memlog_ops::tasks::{self, Change, Changed};
use serde_json::Value;

use memlog_ops::workspace;

use crate::output;

/// Tasks: list them, show one, add one, change its status or blockers.
///
/// Changes are task events in a small session of their own, sealed at once.
/// The state machine of docs/DESIGN.md §5 applies: a blocked task needs a blocker, a
/// done task has none, and a pending task cannot be done without being
/// started. A refused change exits non-zero, says why, and is recorded as
/// a `task_transition_rejected` event.
#[derive(Args)]
pub struct TaskArgs {
    #[command(subcommand)]
    command: TaskCommand,
}

#[derive(Subcommand)]
enum TaskCommand {
    List(list::ListArgs),
    /// Show a task: state, blockers, aliases and its history of events.
    Show {
        /// The task: its id (`task:PROJECT::title`), a key, or its title.
        task: String,
        /// Print the task as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Add a task (pending). A task with the same key is an error (it
    /// exists: use `task set`); a title the matcher confirms as an open
    /// task of another session becomes an alias of it.
    Add {
        title: String,
        /// low, medium, high or critical.
        #[arg(long)]
        priority: Option<String>,
        /// Print the task as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Change a task's status and/or blockers.
    ///
    /// Each --blocker is resolved: a URL, JIRA key or owner/repo#N is an
    /// artifact; a title an open task matches for sure is that task;
    /// anything else is a condition, with the tasks it came close to.
    Set {
        /// The task: its id, a key, or its title.
        task: String,
        /// pending, in_progress, blocked, done or cancelled.
        #[arg(long)]
        status: Option<String>,
        /// What blocks the task (repeatable); replaces its blockers.
        #[arg(long = "blocker", value_name = "TEXT")]
        blockers: Vec<String>,
        /// Record the blockers as suggestions only (they do not block).
        #[arg(long)]
        suggest: bool,
        /// Print the task as JSON.
        #[arg(long)]
        json: bool,
    },
}

pub fn cmd_task(dir: &Path, args: TaskArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        TaskCommand::List(args) => list::cmd_list(dir, args),
        TaskCommand::Show { task, json } => show(dir, &task, json),
        TaskCommand::Add {
            title,
            priority,
            json,
        } => add(dir, &title, priority, json),
        TaskCommand::Set {
            task,
            status,
            blockers,
            suggest,
            json,
        } => set(dir, &task, status, blockers, suggest, json),
    }
}

fn show(dir: &Path, what: &str, json: bool) -> anyhow::Result<ExitCode> {
    let repo = workspace::open(dir)?;
    let p = workspace::projections(&repo)?;
    print_task(&tasks::find(&p, &repo, what)?, json)?;
    Ok(ExitCode::SUCCESS)
}

fn add(dir: &Path, title: &str, priority: Option<String>, json: bool) -> anyhow::Result<ExitCode> {
    let repo = workspace::open_for_writing(dir)?;
    print_task(&tasks::add(&repo, title, priority, "cli")?, json)?;
    Ok(ExitCode::SUCCESS)
}

fn set(
    dir: &Path,
    what: &str,
    status: Option<String>,
    blockers: Vec<String>,
    suggest: bool,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let change = Change {
        task: what,
        status: status.as_deref(),
        blockers: &blockers,
        suggest,
        source: "cli",
    };
    let repo = workspace::open_for_writing(dir)?;
    match tasks::set(&repo, &change)? {
        Changed::Done(task) => print_task(&task, json)?,
        Changed::Refused { task, reason } => {
            eprintln!("error: {task}: {reason} (recorded as task_transition_rejected)");
            return Ok(ExitCode::from(1));
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn print_task(task: &Value, json: bool) -> anyhow::Result<()> {
    if json {
        return output::print_json(task);
    }
    let s = |k: &str| task.get(k).and_then(Value::as_str).unwrap_or("");
    println!("{}", s("entity_id"));
    println!("  title: {}", s("title"));
    let priority = task
        .get("priority")
        .and_then(Value::as_str)
        .map(|p| format!("  priority: {p}"))
        .unwrap_or_default();
    println!("  status: {}{priority}", s("status"));
    let list = |k: &str| -> Vec<Value> {
        task.get(k)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let names = |k: &str| -> Vec<String> {
        list(k)
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    };
    println!("  sessions: {}", names("sessions").join(", "));
    let aliases = names("aliases");
    if !aliases.is_empty() {
        println!("  aliases: {}", aliases.join(", "));
    }
    for (label, field) in [
        ("blockers", "blockers"),
        ("suggested blockers", "suggestions"),
    ] {
        let items = list(field);
        if items.is_empty() {
            continue;
        }
        println!("  {label}:");
        for b in items {
            let get = |k: &str| b.get(k).and_then(Value::as_str).unwrap_or("");
            println!(
                "    - [{}] {}  {:?} ({})",
                get("kind"),
                get("entity_id"),
                get("raw_text"),
                get("confidence")
            );
            for c in b
                .get("candidates")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                println!(
                    "        candidate {} ({:.2})",
                    c.get("entity_id").and_then(Value::as_str).unwrap_or(""),
                    c.get("score").and_then(Value::as_f64).unwrap_or(0.0)
                );
            }
        }
    }
    println!("  history:");
    for h in list("history") {
        let get = |k: &str| h.get(k).and_then(Value::as_str).unwrap_or("");
        let step = match h.get("from").and_then(Value::as_str) {
            Some(from) => format!("{from} → {}", get("status")),
            None => get("status").to_string(),
        };
        let mut notes = String::new();
        if h.get("implied").and_then(Value::as_bool) == Some(true) {
            notes.push_str("  (implied: the agent's task tool marked it done unstarted)");
        }
        if let Some(score) = h.get("matched").and_then(Value::as_f64) {
            notes.push_str(&format!("  (title matched, {score:.2})"));
        }
        if let Some(why) = h.get("rejected").and_then(Value::as_str) {
            notes.push_str(&format!("  REJECTED: {why}"));
        }
        println!(
            "    {}  {:<24} {step}{notes}  [event {}]",
            output::short_time(get("ts")),
            get("kind"),
            memlog_format::id::short(get("event"))
        );
    }
    Ok(())
}
