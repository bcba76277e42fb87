use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use memlog_format::scope::Scope;
use memlog_ops::sessions::{SessionLine, session_line};
use memlog_ops::workspace;
use memlog_store::log::Log;

use crate::output;

/// List sealed sessions, newest first: one line per session commit.
///
/// Each line shows when the session started, the session id, its event
/// counts and its first prompt; personal sessions (kept on this machine)
/// are listed too, marked "(personal)". Merge commits (from sync or `git merge`) are
/// not listed; the sessions they bring in are.
#[derive(Args)]
pub struct LogArgs {
    /// Show at most N sessions.
    #[arg(short = 'n', long = "max-count", value_name = "N")]
    max_count: Option<usize>,

    /// Only sessions recorded by this agent (its `meta.client`:
    /// claude-code, codex, gemini-cli; or claude, gemini).
    #[arg(long, value_name = "AGENT")]
    agent: Option<String>,

    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn cmd_log(dir: &Path, args: LogArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open(dir)?;
    let log = Log::new(&repo);
    let mut lines = Vec::new();
    let agent = args.agent.as_deref().map(memlog_ops::search::client_name);
    let mut shown = 0;
    // what a forget hides is not shown (the index knows; it reads the log
    // beyond itself)
    let projections = workspace::projections(&repo)?;
    let visible = |e: &memlog_format::Event| {
        memlog_indexer::lookup::event(&projections, e.id.as_str())
            .map(|found| found.is_some())
            .unwrap_or(true)
    };
    // both logs, newest first: the personal one's sessions too, labelled
    let personal = Log::of(&repo, Scope::Personal);
    let mut commits: Vec<(&Log, _)> = log.commits()?.into_iter().map(|c| (&log, c)).collect();
    commits.extend(personal.commits()?.into_iter().map(|c| (&personal, c)));
    commits.sort_by_key(|(_, c)| std::cmp::Reverse(c.commit_time));
    for (of, commit) in commits {
        if commit.parents.len() > 1 {
            continue;
        }
        if args.max_count.is_some_and(|n| shown >= n) {
            break;
        }
        let line = session_line(of, &commit, &visible)?;
        if line.personal {
            memlog_ops::shown::mark(&repo);
        }
        if agent
            .as_deref()
            .is_some_and(|a| !line.agents.iter().any(|x| x == a))
        {
            continue;
        }
        shown += 1;
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
        match (&args.agent, log.tip()?) {
            (Some(a), Some(_)) => println!("no sealed session of agent {a}"),
            (_, Some(_)) => println!("no sealed session"),
            (_, None) => {
                println!(
                    "no sealed sessions yet ({} does not exist)",
                    repo.ref_name()
                );
                // a fresh clone: the team's memory is one sync away
                for (remote, tracking) in memlog_store::remote::tracking_refs(&repo)? {
                    println!("{remote} has memory ({tracking}): `memlog sync {remote}` brings it");
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn print_line(l: &SessionLine) {
    let what = l
        .first_prompt
        .as_deref()
        .or(l.subject.as_deref())
        .map(|p| memlog_format::event::truncate_chars(p, 60))
        .unwrap_or_default();
    let personal = if l.personal {
        format!("{} ", memlog_format::scope::PERSONAL_LABEL)
    } else {
        String::new()
    };
    println!(
        "{}  {}  {:<36}  {:>4} ev {:>3} pr {:>4} tools  {personal}{}",
        l.commit.as_deref().map_or("", |c| c.get(..10).unwrap_or(c)),
        output::short_time(&l.started),
        l.session,
        l.events,
        l.prompts,
        l.tool_calls,
        what
    );
}
