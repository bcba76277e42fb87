use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::bail;
use clap::Args;
use memlog_format::id;
use memlog_ops::workspace;
use memlog_store::seal::{JournalSelection, seal_journals};

use crate::output;

/// Seal journals into commits on the memlog ref.
///
/// Each session with new events becomes one commit of content-addressed
/// segments; the ref moves by compare-and-swap, and a journal is removed only
/// after the commit is durable. Sealing twice is harmless: events already in
/// the log are skipped. HEAD, the index and the working tree are untouched.
#[derive(Args)]
pub struct SealArgs {
    /// Seal this session's journal.
    #[arg(long, conflicts_with_all = ["all", "idle"])]
    session: Option<String>,

    /// Seal every journal (running sessions included).
    #[arg(long, conflicts_with = "idle")]
    all: bool,

    /// Seal journals not written to for this long (e.g. 30m, 2h, 1d):
    /// orphans of sessions that ended without sealing. A turn left without
    /// its answer (an agent killed mid-answer) gets it from the agent's
    /// transcript, where this repository's are found.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    idle: Option<Duration>,

    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn cmd_seal(dir: &Path, args: SealArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open_for_writing(dir)?;
    let selection = match (args.session, args.all, args.idle) {
        // as recorded: a secret in the id was redacted in its journal's name
        (Some(s), _, _) => JournalSelection::Session(workspace::recorded_session(&repo, &s)),
        (None, true, _) => JournalSelection::All,
        (None, false, Some(d)) => JournalSelection::IdleFor(d),
        (None, false, None) => bail!("say what to seal: --session ID, --all or --idle DURATION"),
    };
    // orphans of agents killed mid-answer: their transcripts hold what the
    // hooks never recorded
    let backfill = match args.idle {
        Some(idle) => memlog_ops::backfill::orphans(&repo, idle),
        None => Vec::new(),
    };
    let report = seal_journals(&repo, &selection)?;
    for (agent, transcript) in backfill {
        match memlog_ops::import::agent_sessions(
            &repo,
            agent,
            std::slice::from_ref(&transcript),
            true,
        ) {
            Ok(done) if done.totals.added > 0 => eprintln!(
                "note: {} event(s) the hooks missed brought back from {}",
                done.totals.added,
                transcript.display()
            ),
            Ok(_) => {}
            Err(e) => eprintln!("warning: {}: {e}", transcript.display()),
        }
    }
    for (session, p) in &report.problems {
        if !p.message.starts_with("torn") {
            eprintln!(
                "warning: journal of {session}, line {}: {}",
                p.line, p.message
            );
        }
    }
    for q in &report.quarantined {
        eprintln!("warning: journal with bad lines kept at {}", q.display());
    }
    if args.json {
        output::print_json(&report)?;
    } else if report.sealed.is_empty() {
        println!("nothing to seal");
    } else {
        for s in &report.sealed {
            match &s.commit {
                Some(c) => println!("{}  {}  {} events", id::short(c), s.session, s.added),
                None => println!("{:12}  {}  already sealed", "-", s.session),
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `90s`, `30m`, `2h`, `1d`, or plain seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (num, unit) = text.split_at(
        text.find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len()),
    );
    let n: u64 = num
        .parse()
        .map_err(|_| format!("{text:?} is not a duration like 90s, 30m, 2h or 1d"))?;
    let secs = match unit {
        "" | "s" => n,
        "m" => n * 60,
        "h" => n * 3600,
        "d" => n * 86_400,
        _ => {
            return Err(format!(
                "{text:?}: unknown unit {unit:?} (use s, m, h or d)"
            ));
        }
    };
    Ok(Duration::from_secs(secs))
}
