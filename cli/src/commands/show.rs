use std::path::Path;
use std::process::ExitCode;

use anyhow::bail;
use clap::Args;
use memlog_format::event::sort_events;
use memlog_format::{Event, canonical};
use memlog_indexer::Projections;
use memlog_indexer::lookup;
use memlog_store::Repo;
use memlog_store::log::Log;
use serde_json::{Value, json};

use crate::{output, workspace};

/// Show an event, a session, or a commit of the memlog ref.
///
/// NAME is tried as, in order: a session id; an event id or a unique prefix
/// of one (at least 4 hex digits); a revision of the memlog ref (commit id,
/// `memlog~1`, …). Forgotten events are not shown.
#[derive(Args)]
pub struct ShowArgs {
    /// Event id (or prefix), session id, or commit.
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

    let session = lookup::session_events(&p, name)?;
    if !session.is_empty() {
        let events = workspace::exact_events(&repo, session)?;
        return show_session(name, &events, args.json);
    }

    if name.len() >= lookup::MIN_PREFIX && name.bytes().all(|b| b.is_ascii_hexdigit()) {
        let ids = lookup::ids_with_prefix(&p, name, 3)?;
        match ids.as_slice() {
            [] => {}
            [id] => return show_event(&p, &repo, id, args.context, args.json),
            several => bail!(
                "{name:?} is ambiguous: several events start with it (e.g. {}); give more digits",
                several
                    .iter()
                    .map(|id| &id[..16])
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    if let Some(code) = show_commit(&repo, &p, name, args.json)? {
        return Ok(code);
    }
    bail!("no event, session or memlog commit is named {name:?} (forgotten events are hidden)")
}

/// The event with this full id and up to `context` events before and
/// after it in its session, exactly as logged: `(neighbours, position of
/// the event among them)`.
fn with_context(
    p: &Projections,
    repo: &Repo,
    id: &str,
    context: usize,
) -> anyhow::Result<(Vec<Event>, usize)> {
    let Some(target) = lookup::event(p, id)? else {
        bail!("no event has id {id:?} (unknown, or forgotten)");
    };
    let session = lookup::session_events(p, &target.event.session)?;
    let pos = session
        .iter()
        .position(|s| s.event.id == id)
        .unwrap_or_default();
    let from = pos.saturating_sub(context);
    let to = (pos + context + 1).min(session.len());
    let neighbours = workspace::exact_events(repo, session[from..to].to_vec())?;
    if neighbours.get(pos - from).is_none_or(|e| e.id != id) {
        bail!("event {id} is missing from its session in the index (run `memlog rebuild`)");
    }
    Ok((neighbours, pos - from))
}

/// `{"event", "context"}`, as `memlog show ID --context N --json` prints
/// it (and the MCP tool `memory_get` and the viewer's `/api/events/ID`).
pub fn event_with_context(
    p: &Projections,
    repo: &Repo,
    id: &str,
    context: usize,
) -> anyhow::Result<Value> {
    let (neighbours, at) = with_context(p, repo, id, context)?;
    Ok(json!({
        "event": neighbours[at].to_value(true),
        "context": neighbours
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != at)
            .map(|(_, e)| e.to_value(true))
            .collect::<Vec<_>>(),
    }))
}

fn show_event(
    p: &Projections,
    repo: &Repo,
    id: &str,
    context: usize,
    json: bool,
) -> anyhow::Result<ExitCode> {
    if json {
        output::print_json(&event_with_context(p, repo, id, context)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let (neighbours, at) = with_context(p, repo, id, context)?;
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

fn show_commit(
    repo: &Repo,
    p: &Projections,
    name: &str,
    json: bool,
) -> anyhow::Result<Option<ExitCode>> {
    let log = Log::new(repo);
    if log.tip()?.is_none() {
        return Ok(None);
    }
    let Ok(id) = log.resolve(name) else {
        return Ok(None);
    };
    let commit = log.commit(id)?;
    let mut events = Vec::new();
    for seg in log.added_segments(&commit)? {
        events.extend(log.read_segment(&seg, false)?.0);
    }
    // Forgotten events are not in the index.
    let mut live = Vec::with_capacity(events.len());
    for e in events {
        if lookup::event(p, &e.id)?.is_some() {
            live.push(e);
        }
    }
    let mut events = live;
    sort_events(&mut events);
    if json {
        output::print_json(&json!({
            "commit": commit.id.to_string(),
            "session": commit.session,
            "parents": commit.parents.iter().map(|p| p.to_string()).collect::<Vec<_>>(),
            "message": commit.message,
            "events": events.iter().map(|e| e.to_value(true)).collect::<Vec<_>>(),
        }))?;
        return Ok(Some(ExitCode::SUCCESS));
    }
    println!("commit {}", commit.id);
    println!();
    for line in commit.message.trim_end().lines() {
        println!("    {line}");
    }
    println!();
    for e in &events {
        println!("  {}", compact(e));
    }
    Ok(Some(ExitCode::SUCCESS))
}

/// `id12  time  kind  headline`
fn compact(e: &Event) -> String {
    format!(
        "{}  {}  {:<16}  {}",
        &e.id[..12],
        output::short_time(&e.ts),
        e.kind.as_str(),
        e.headline(80)
    )
}

fn print_event(e: &Event) {
    println!("event    {}", e.id);
    println!("kind     {}", e.kind);
    println!("session  {}  (seq {})", e.session, e.seq);
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
