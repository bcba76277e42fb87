use std::path::Path;
use std::process::ExitCode;

use anyhow::bail;
use clap::Args;
use memlog_format::log::{Log, sort_events};
use memlog_format::{Event, Repo, canonical};
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
    let events = workspace::live(&repo, false)?;
    let name = args.name.trim();

    let session: Vec<&Event> = events.iter().filter(|e| e.session == name).collect();
    if !session.is_empty() {
        return show_session(name, &session, args.json);
    }

    if name.len() >= 4 && name.bytes().all(|b| b.is_ascii_hexdigit()) {
        let lower = name.to_ascii_lowercase();
        let matches: Vec<&Event> = events.iter().filter(|e| e.id.starts_with(&lower)).collect();
        match matches.len() {
            0 => {}
            1 => return show_event(matches[0], &events, args.context, args.json),
            n => bail!(
                "{name:?} is ambiguous: {n} events start with it (e.g. {}); give more digits",
                matches
                    .iter()
                    .take(3)
                    .map(|e| &e.id[..16])
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    if let Some(code) = show_commit(&repo, name, &events, args.json)? {
        return Ok(code);
    }
    bail!("no event, session or memlog commit is named {name:?} (forgotten events are hidden)")
}

fn show_event(
    event: &Event,
    all: &[Event],
    context: usize,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let mut session: Vec<&Event> = all.iter().filter(|e| e.session == event.session).collect();
    session.sort_by(|a, b| (&a.ts, a.seq, &a.id).cmp(&(&b.ts, b.seq, &b.id)));
    let pos = session.iter().position(|e| e.id == event.id).unwrap_or(0);
    let from = pos.saturating_sub(context);
    let to = (pos + context + 1).min(session.len());
    let neighbours = &session[from..to];
    if json {
        output::print_json(&json!({
            "event": event.to_value(true),
            "context": neighbours.iter().filter(|e| e.id != event.id).map(|e| e.to_value(true)).collect::<Vec<_>>(),
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    if context > 0 {
        for e in &neighbours[..pos - from] {
            println!("  {}", compact(e));
        }
    }
    print_event(event);
    if context > 0 {
        for e in &neighbours[pos - from + 1..] {
            println!("  {}", compact(e));
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn show_session(name: &str, events: &[&Event], json: bool) -> anyhow::Result<ExitCode> {
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
    name: &str,
    live: &[Event],
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
    let live_ids: std::collections::HashSet<&str> = live.iter().map(|e| e.id.as_str()).collect();
    let mut events = Vec::new();
    for seg in log.added_segments(&commit)? {
        events.extend(log.read_segment(&seg, false)?.0);
    }
    events.retain(|e| live_ids.contains(e.id.as_str()));
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
