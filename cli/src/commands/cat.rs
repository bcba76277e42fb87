use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use memlog_format::Kind;

use memlog_ops::workspace;

/// Stream every live event as canonical JSONL.
///
/// Sealed events and those still in journals, ordered by time; events hidden
/// by `forget` are left out. The lines are the stored bytes, so they can be
/// piped into another memlog with `memlog import` or read by any JSON tool.
#[derive(Args)]
pub struct CatArgs {
    /// Only events of this session.
    #[arg(long)]
    session: Option<String>,

    /// Only events of this kind.
    #[arg(long)]
    kind: Option<String>,

    /// Only events recorded by this agent (`meta.client`: claude-code,
    /// codex, gemini-cli; or claude, gemini).
    #[arg(long, value_name = "AGENT")]
    agent: Option<String>,

    /// Only sealed events (leave out journals of running sessions).
    #[arg(long)]
    sealed: bool,

    /// Accepted like every read command's: the output is JSON lines
    /// already.
    #[arg(long)]
    json: bool,
}

pub fn cmd_cat(dir: &Path, args: CatArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open(dir)?;
    let kind = args
        .kind
        .as_deref()
        .map(Kind::parse_known)
        .transpose()
        .map_err(anyhow::Error::msg)?;
    let agent = args.agent.as_deref().map(memlog_ops::search::client_name);
    let session = args
        .session
        .as_deref()
        .map(|s| workspace::recorded_session(&repo, s));
    let events = workspace::live(&repo, args.sealed)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut printed_personal = false;
    for e in events {
        if session.as_ref().is_some_and(|s| *s != e.session) {
            continue;
        }
        if kind.as_ref().is_some_and(|k| *k != e.kind) {
            continue;
        }
        if agent
            .as_deref()
            .is_some_and(|a| e.meta.get("client").and_then(|c| c.as_str()) != Some(a))
        {
            continue;
        }
        if !printed_personal && memlog_format::scope::is_personal(&e.meta) {
            printed_personal = true;
            memlog_ops::shown::mark(&repo);
        }
        if writeln!(out, "{}", e.canonical_line()).is_err() {
            // A closed pipe (`memlog cat | head`) is not an error.
            return Ok(ExitCode::SUCCESS);
        }
    }
    let _ = out.flush();
    Ok(ExitCode::SUCCESS)
}
