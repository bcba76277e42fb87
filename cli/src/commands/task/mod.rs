pub mod list;

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};
use memlog_format::key::canonical_key;
use memlog_format::task::{BlockerMode, BlockerRef, Rejection, Status, TaskState};
use memlog_format::{Draft, Kind, time};
use memlog_indexer::{Projections, tasks};
use memlog_store::Repo;
use serde_json::{Map, Value, json};

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

fn find(p: &Projections, repo: &Repo, what: &str) -> anyhow::Result<Value> {
    tasks::find_task(p, what, &repo.project())?.with_context(|| {
        format!("no task {what:?} (see `memlog task list`; ids look like task:PROJECT::title)")
    })
}

fn show(dir: &Path, what: &str, json: bool) -> anyhow::Result<ExitCode> {
    let repo = workspace::open(dir)?;
    let p = workspace::projections(&repo)?;
    let task = find(&p, &repo, what)?;
    print_task(&task, json)?;
    Ok(ExitCode::SUCCESS)
}

fn add(dir: &Path, title: &str, priority: Option<String>, json: bool) -> anyhow::Result<ExitCode> {
    let repo = workspace::open_for_writing(dir)?;
    let project = repo.project();
    let key = canonical_key(title, Some(&project));
    if memlog_format::key::normalize(title).is_empty() {
        anyhow::bail!("the title {title:?} has no words (a task needs a name)");
    }
    // Adding a task that exists would fold as a status change back to
    // pending (refused, or silently reopening it): say it exists instead.
    {
        let p = workspace::projections(&repo)?;
        if let Some(task) = tasks::find_task(&p, &format!("task:{key}"), &project)? {
            let s = |k: &str| {
                task.get(k)
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            };
            anyhow::bail!(
                "task {} already exists (title {:?}, status {}); change it with `memlog task set`",
                s("entity_id"),
                s("title"),
                s("status")
            );
        }
    }
    let mut body = Map::new();
    body.insert("key".into(), json!(key));
    body.insert("title".into(), json!(title));
    body.insert("status".into(), json!("pending"));
    body.insert("source".into(), json!("cli"));
    if let Some(p) = priority {
        body.insert("priority".into(), json!(p));
    }
    let session = memlog_store::journal::mint_session("task");
    let draft = Draft::new(
        &session,
        time::now(),
        Kind::TaskCreated,
        repo.project(),
        body,
    );
    workspace::record(&repo, vec![draft], true)?;
    let p = workspace::projections(&repo)?;
    let task = find(&p, &repo, &format!("task:{key}"))?;
    print_task(&task, json)?;
    Ok(ExitCode::SUCCESS)
}

fn set(
    dir: &Path,
    what: &str,
    status: Option<String>,
    blocker_texts: Vec<String>,
    suggest: bool,
    json: bool,
) -> anyhow::Result<ExitCode> {
    if status.is_none() && blocker_texts.is_empty() {
        anyhow::bail!("nothing to change: give --status and/or --blocker");
    }
    let to = match status.as_deref() {
        None => None,
        Some(s) => Some(Status::parse(s).ok_or_else(|| Rejection::UnknownStatus(s.to_string()))?),
    };
    let repo = workspace::open_for_writing(dir)?;
    let project = repo.project();
    let p = workspace::projections(&repo)?;
    let task = find(&p, &repo, what)?;
    let id = task["entity_id"].as_str().unwrap_or_default().to_string();
    let title = task["title"].as_str().unwrap_or_default().to_string();
    let mut state: TaskState =
        serde_json::from_value(task.clone()).context("reading the task's folded state")?;
    let before = state.status;
    let mode = if suggest {
        BlockerMode::Suggest
    } else {
        BlockerMode::Replace
    };
    let blockers: Vec<BlockerRef> = if blocker_texts.is_empty() {
        Vec::new()
    } else {
        let open: Vec<(String, String)> = tasks::open_tasks(&p, &project)?
            .into_iter()
            .filter(|(other, _)| *other != id)
            .collect();
        tasks::resolve_blockers(&blocker_texts, &open, &project, None)
    };
    drop(p);
    // Checked in the order the events are written: blockers, then status.
    let mut outcome = Ok(());
    if !blockers.is_empty() {
        outcome = state.set_blockers(mode, blockers.clone());
    }
    if outcome.is_ok()
        && let Some(to) = to
    {
        outcome = state.set_status(to, false).map(|_| ());
    }
    let session = memlog_store::journal::mint_session("task");
    let now = time::now();
    let key = id.trim_start_matches("task:").to_string();
    let base = |extra: Value| {
        let mut body = Map::new();
        body.insert("task".into(), json!(id));
        body.insert("key".into(), json!(key));
        body.insert("title".into(), json!(title));
        body.insert("source".into(), json!("cli"));
        if let Value::Object(m) = extra {
            body.extend(m);
        }
        body
    };
    if let Err(why) = outcome {
        let body = base(json!({
            "from": before.as_str(),
            "to": to.map(Status::as_str),
            "blockers": blocker_texts,
            "rule": why.rule(),
            "reason": why.to_string(),
        }));
        let draft = Draft::new(
            &session,
            now,
            Kind::TaskTransitionRejected,
            repo.project(),
            body,
        );
        workspace::record(&repo, vec![draft], true)?;
        eprintln!("error: {id}: {why} (recorded as task_transition_rejected)");
        return Ok(ExitCode::from(1));
    }
    let mut drafts = Vec::new();
    if !blockers.is_empty() {
        let mode_name = if suggest { "suggest" } else { "replace" };
        let body = base(json!({"mode": mode_name, "blockers": blockers}));
        drafts.push(Draft::new(
            &session,
            &now,
            Kind::TaskBlockersSet,
            repo.project(),
            body,
        ));
    }
    if let Some(to) = to.filter(|to| *to != before) {
        let body = base(json!({"from": before.as_str(), "to": to.as_str(), "status": to.as_str()}));
        drafts.push(Draft::new(
            &session,
            &now,
            Kind::TaskStatusChanged,
            repo.project(),
            body,
        ));
    }
    workspace::record(&repo, drafts, true)?;
    let p = workspace::projections(&repo)?;
    print_task(&find(&p, &repo, &id)?, json)?;
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
            notes.push_str("  (implied by TodoWrite)");
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
