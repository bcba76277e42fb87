//! Changing tasks by hand (`memlog task add|set`) or by an agent (MCP's
//! `memory_task_add` and `memory_task_update`): task events in a small
//! session of their own, sealed at once, checked first against the state
//! machine of docs/DESIGN.md §5. A refused change is recorded too, as a
//! `task_transition_rejected` event, so that the log says what was tried.

use memlog_format::key::canonical_key;
use memlog_format::task::{BlockerMode, BlockerRef, Rejection, Status, TaskState};
use memlog_format::{Draft, Kind, time};
use memlog_indexer::{Projections, tasks};
use memlog_store::Repo;
use memlog_store::record::Recorder;
use serde_json::{Map, Value, json};

use crate::bail;
use crate::error::{Context, Error, Result};
use crate::workspace;

/// The task `what` names (its id `task:PROJECT::title`, a key, or its
/// title), as the task projection folds it.
pub fn find(p: &Projections, repo: &Repo, what: &str) -> Result<Value> {
    find_recorded(p, repo, what)?.context(format_args!(
        "no task {what:?} (see `memlog task list`; ids look like task:PROJECT::title)"
    ))
}

/// The task `what` names, looked up as typed, then as recorded: a title
/// holding a secret was stored (and keyed) with the secret redacted.
fn find_recorded(p: &Projections, repo: &Repo, what: &str) -> Result<Option<Value>> {
    let project = repo.project();
    if let Some(task) = tasks::find_task(p, what, &project)? {
        return Ok(Some(task));
    }
    let recorded = Recorder::new(repo)?.redact(what);
    if recorded == what {
        return Ok(None);
    }
    Ok(tasks::find_task(p, &recorded, &project)?)
}

/// Adds a pending task titled `title`, unless a task with its key exists;
/// `source` says who asked (`cli`, `mcp`). Returns the task as folded.
pub fn add(repo: &Repo, title: &str, priority: Option<String>, source: &str) -> Result<Value> {
    let project = repo.project();
    let key = canonical_key(title, Some(&project));
    if memlog_format::key::normalize(title).is_empty() {
        bail!("the title {title:?} has no words (a task needs a name)");
    }
    // Adding a task that exists would fold as a status change back to
    // pending (refused, or silently reopening it): say it exists instead.
    {
        let p = workspace::projections(repo)?;
        if let Some(task) = find_recorded(&p, repo, title)? {
            let s = |k: &str| {
                task.get(k)
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            };
            bail!(
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
    body.insert("source".into(), json!(source));
    if let Some(p) = priority {
        body.insert("priority".into(), json!(p));
    }
    let session = memlog_store::journal::mint_session("task");
    let draft = Draft::new(&session, time::now(), Kind::TaskCreated, project, body);
    let (recorded, _) = workspace::record(repo, vec![draft], true)?;
    // the key as stored: a secret in the title is redacted in both
    let key = recorded
        .first()
        .and_then(|e| e.body.get("key"))
        .and_then(Value::as_str)
        .unwrap_or(&key)
        .to_string();
    let p = workspace::projections(repo)?;
    find(&p, repo, &format!("task:{key}"))
}

/// A change of a task's status and/or blockers.
#[derive(Clone, Debug, Default)]
pub struct Change<'a> {
    /// The task: its id, a key, or its title.
    pub task: &'a str,
    /// The new status, by name.
    pub status: Option<&'a str>,
    /// What blocks it (replacing its blockers), each resolved to an
    /// artifact, an open task or a condition.
    pub blockers: &'a [String],
    /// Record the blockers as suggestions only.
    pub suggest: bool,
    /// Who asked (`cli`, `mcp`), kept in the events.
    pub source: &'a str,
}

/// What became of a change.
#[derive(Clone, Debug)]
pub enum Changed {
    /// Made: the task as folded now.
    Done(Value),
    /// Refused by the state machine, and recorded as a
    /// `task_transition_rejected` event: the task's id and why.
    Refused {
        /// The task.
        task: String,
        /// Why the state machine refused it.
        reason: String,
    },
}

/// Changes a task's status and/or blockers. Checked in the order the events
/// are written: blockers, then status.
pub fn set(repo: &Repo, change: &Change<'_>) -> Result<Changed> {
    if change.status.is_none() && change.blockers.is_empty() {
        bail!("nothing to change: give --status and/or --blocker");
    }
    let to =
        match change.status {
            None => None,
            Some(s) => Some(Status::parse(s).ok_or_else(|| {
                Error::Invalid(Rejection::UnknownStatus(s.to_string()).to_string())
            })?),
        };
    let project = repo.project();
    let p = workspace::projections(repo)?;
    let task = find(&p, repo, change.task)?;
    let id = task["entity_id"].as_str().unwrap_or_default().to_string();
    let title = task["title"].as_str().unwrap_or_default().to_string();
    let mut state: TaskState =
        serde_json::from_value(task.clone()).context("reading the task's folded state")?;
    let before = state.status;
    let mode = if change.suggest {
        BlockerMode::Suggest
    } else {
        BlockerMode::Replace
    };
    let blockers: Vec<BlockerRef> = if change.blockers.is_empty() {
        Vec::new()
    } else {
        let open: Vec<(String, String)> = tasks::open_tasks(&p, &project)?
            .into_iter()
            .filter(|(other, _)| *other != id)
            .collect();
        tasks::resolve_blockers(change.blockers, &open, &project, None)
    };
    drop(p);
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
        body.insert("source".into(), json!(change.source));
        if let Value::Object(m) = extra {
            body.extend(m);
        }
        body
    };
    if let Err(why) = outcome {
        let body = base(json!({
            "from": before.as_str(),
            "to": to.map(Status::as_str),
            "blockers": change.blockers,
            "rule": why.rule(),
            "reason": why.to_string(),
        }));
        let draft = Draft::new(&session, now, Kind::TaskTransitionRejected, project, body);
        workspace::record(repo, vec![draft], true)?;
        return Ok(Changed::Refused {
            task: id,
            reason: why.to_string(),
        });
    }
    let mut drafts = Vec::new();
    if !blockers.is_empty() {
        let mode_name = if change.suggest { "suggest" } else { "replace" };
        let body = base(json!({"mode": mode_name, "blockers": blockers}));
        drafts.push(Draft::new(
            &session,
            &now,
            Kind::TaskBlockersSet,
            project.clone(),
            body,
        ));
    }
    if let Some(to) = to.filter(|to| *to != before) {
        let body = base(json!({"from": before.as_str(), "to": to.as_str(), "status": to.as_str()}));
        drafts.push(Draft::new(
            &session,
            &now,
            Kind::TaskStatusChanged,
            project,
            body,
        ));
    }
    workspace::record(repo, drafts, true)?;
    let p = workspace::projections(repo)?;
    Ok(Changed::Done(find(&p, repo, &id)?))
}
