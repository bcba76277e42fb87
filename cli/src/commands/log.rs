use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use memlog_format::event::sort_events;
use memlog_format::{Event, Kind};
use memlog_store::log::Log;
use serde::Serialize;

use crate::{output, workspace};

/// List sealed sessions, newest first: one line per session commit.
///
/// Each line shows when the session started, the session id, its event
/// counts and its first prompt. Merge commits (from sync or `git merge`) are
/// not listed; the sessions they bring in are.
#[derive(Args)]
pub struct LogArgs {
    /// Show at most N sessions.
    #[arg(short = 'n', long = "max-count", value_name = "N")]
    max_count: Option<usize>,

    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

/// One session of `memlog log --json`, and of the web viewer's timeline
/// (`/api/sessions`), which reads it from the index.
#[derive(Clone, Debug, Serialize)]
pub struct SessionLine {
    /// The commit that sealed it (`null` in the viewer for a live session,
    /// still in its journal).
    pub commit: Option<String>,
    pub session: String,
    /// Time of its first event.
    pub started: String,
    pub events: usize,
    pub prompts: usize,
    pub tool_calls: usize,
    /// First line of the first prompt, at most [`FIRST_PROMPT_CHARS`].
    pub first_prompt: Option<String>,
    /// The code's git branch when the session began (`meta.branch`).
    pub branch: Option<String>,
}

/// Characters of a session's first prompt in listings.
pub const FIRST_PROMPT_CHARS: usize = 200;

pub fn cmd_log(dir: &Path, args: LogArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open(dir)?;
    let log = Log::new(&repo);
    let mut lines = Vec::new();
    let mut shown = 0;
    for commit in log.commits()? {
        if commit.parents.len() > 1 {
            continue;
        }
        if args.max_count.is_some_and(|n| shown >= n) {
            break;
        }
        shown += 1;
        let mut events: Vec<Event> = Vec::new();
        for seg in log.added_segments(&commit)? {
            events.extend(log.read_segment(&seg, false)?.0);
        }
        sort_events(&mut events);
        let count = |k: Kind| events.iter().filter(|e| e.kind == k).count();
        let line = SessionLine {
            commit: Some(commit.id.to_string()),
            session: commit.session.clone().unwrap_or_else(|| "?".into()),
            started: events
                .first()
                .map(|e| e.ts.clone())
                .unwrap_or_else(|| output::short_time_secs(commit.author_time)),
            events: events.len(),
            prompts: count(Kind::UserPrompt),
            tool_calls: count(Kind::ToolObservation),
            first_prompt: events
                .iter()
                .find(|e| e.kind == Kind::UserPrompt)
                .map(|e| e.headline(FIRST_PROMPT_CHARS)),
            branch: events
                .iter()
                .find_map(|e| e.meta.get("branch").and_then(|b| b.as_str()))
                .map(str::to_string),
        };
        // Printed as it is read, so that the first screen (or `| head`)
        // does not wait for a long history.
        if args.json {
            lines.push(line);
        } else {
            print_line(&line);
        }
    }
    if args.json {
        output::print_json(&serde_json::json!({ "sessions": lines }))?;
        return Ok(ExitCode::SUCCESS);
    }
    if shown == 0 {
        println!(
            "no sealed sessions yet ({} does not exist)",
            repo.ref_name()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn print_line(l: &SessionLine) {
    let what = l
        .first_prompt
        .as_deref()
        .map(|p| memlog_format::event::truncate_chars(p, 60))
        .unwrap_or_default();
    println!(
        "{}  {}  {:<36}  {:>4} ev {:>3} pr {:>4} tools  {}",
        l.commit.as_deref().map_or("", |c| c.get(..10).unwrap_or(c)),
        output::short_time(&l.started),
        l.session,
        l.events,
        l.prompts,
        l.tool_calls,
        what
    );
}
