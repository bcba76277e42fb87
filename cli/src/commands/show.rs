use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use memlog_format::{Event, canonical};
use memlog_indexer::Projections;
use memlog_ops::show::{self, CommitView, Named};
use memlog_ops::workspace;
use memlog_store::Repo;
use serde_json::{Value, json};

use crate::output;

/// Show an event, a session, or a commit of the memlog ref.
///
/// NAME is tried as, in order: a session id; an event id or a unique prefix
/// of one (at least 8 hex digits); a revision of the memlog ref (commit id,
/// `memlog~1`, …); the start of one session's id (at least 4 characters).
/// Forgotten events are not shown.
#[derive(Args)]
pub struct ShowArgs {
    /// Event id (or prefix), session id (or its start), or commit.
    name: String,

    /// With an event: also show up to N events before and after it in its
    /// session.
    #[arg(long, value_name = "N", default_value_t = 0)]
    context: usize,

    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn cmd_show(dir: &Path, args: ShowArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open(dir)?;
    // Read from the index (brought up to date first): an indexed query,
    // where reading the log took seconds at a million events.
    let p = workspace::projections(&repo)?;
    let name = args.name.trim();
    match show::named(&repo, &p, name)? {
        Named::Session(events) => {
            memlog_ops::shown::note(&repo, &events);
            show_session(name, &events, args.json)
        }
        Named::Event(id) => show_event(&p, &repo, &id, args.context, args.json),
        Named::Commit(view) => {
            memlog_ops::shown::note(&repo, &view.events);
            show_commit(&view, args.json)
        }
    }
}

fn show_event(
    p: &Projections,
    repo: &Repo,
    id: &str,
    context: usize,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let (neighbours, at) = show::with_context(p, repo, id, context)?;
    memlog_ops::shown::note(repo, &neighbours);
    if json {
        output::print_json(&show::event_with_context(p, repo, id, context)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    for e in &neighbours[..at] {
        println!("  {}", compact(e));
    }
    print_event(&neighbours[at]);
    for e in &neighbours[at + 1..] {
        println!("  {}", compact(e));
    }
    Ok(ExitCode::SUCCESS)
}

fn show_session(name: &str, events: &[Event], json: bool) -> anyhow::Result<ExitCode> {
    if json {
        output::print_json(&json!({
            "session": name,
            "events": events.iter().map(|e| e.to_value(true)).collect::<Vec<_>>(),
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    println!("session {name}: {} events", events.len());
    for e in events {
        println!("  {}", compact(e));
    }
    Ok(ExitCode::SUCCESS)
}

fn show_commit(view: &CommitView, json: bool) -> anyhow::Result<ExitCode> {
    let CommitView { commit, events } = view;
    if json {
        output::print_json(&json!({
            "commit": commit.id.to_string(),
            "session": commit.session,
            "parents": commit.parents.iter().map(|p| p.to_string()).collect::<Vec<_>>(),
            "message": commit.message,
            "events": events.iter().map(|e| e.to_value(true)).collect::<Vec<_>>(),
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    println!("commit {}", commit.id);
    println!();
    for line in commit.message.trim_end().lines() {
        println!("    {line}");
    }
    println!();
    for e in events {
        println!("  {}", compact(e));
    }
    Ok(ExitCode::SUCCESS)
}

/// `id12  time  kind  headline`
fn compact(e: &Event) -> String {
    // labelled, so that an agent's hook reading this back knows
    let personal = if memlog_format::scope::is_personal(&e.meta) {
        format!("{} ", memlog_format::scope::PERSONAL_LABEL)
    } else {
        String::new()
    };
    format!(
        "{}  {}  {:<16}  {personal}{}",
        e.id.short(),
        output::short_time(&e.ts),
        e.kind.as_str(),
        e.headline(80)
    )
}

fn print_event(e: &Event) {
    println!("event    {}", e.id);
    println!("kind     {}", e.kind);
    println!("session  {}  (seq {})", e.session, e.seq);
    if memlog_format::scope::is_personal(&e.meta) {
        println!(
            "scope    {}: kept on this machine",
            memlog_format::scope::PERSONAL_LABEL
        );
    }
    println!("time     {}", e.ts);
    println!("project  {}", e.project);
    if let Some(r) = e.external_ref() {
        println!("ref      {r}");
    }
    let meta: serde_json::Map<String, Value> = e
        .meta
        .iter()
        .filter(|(k, _)| k.as_str() != "ref")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if !meta.is_empty() {
        println!("meta     {}", canonical::to_string(&Value::Object(meta)));
    }
    println!();
    match e.text() {
        Some(text) => println!("{text}"),
        None => {
            for (k, v) in &e.body {
                match v {
                    Value::String(s) if s.contains('\n') => println!("{k}:\n{s}"),
                    Value::String(s) => println!("{k}: {s}"),
                    other => println!(
                        "{k}: {}",
                        serde_json::to_string_pretty(other).unwrap_or_default()
                    ),
                }
            }
        }
    }
}
