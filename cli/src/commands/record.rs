use std::io::Read;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;
use memlog_ops::record::{self, Entry};
use serde_json::{Map, Value};

use memlog_ops::workspace;

use crate::output;

/// Append one event to a live session's journal.
///
/// The event is filtered for privacy (private tags, secrets) before it is
/// written, then appended under a lock and fsynced to
/// `.git/memlog/journal/<session>.jsonl`. It is searchable right away and
/// becomes part of a commit when the session is sealed (`memlog seal`).
/// Prints the event's id.
#[derive(Args)]
pub struct RecordArgs {
    /// Session id (e.g. Claude Code's session_id).
    #[arg(long, required_unless_present = "json")]
    session: Option<String>,

    /// Event kind: user_prompt, agent_response, note, fact, …
    #[arg(long, required_unless_present = "json")]
    kind: Option<String>,

    /// The event's text; `-` reads it from stdin.
    #[arg(long, required_unless_present = "json")]
    text: Option<String>,

    /// Extra metadata as a JSON object.
    #[arg(long, value_name = "JSON")]
    meta: Option<String>,

    /// Project name (default: from .memlog.yaml or the repository name).
    #[arg(long)]
    project: Option<String>,

    /// Read one event in the neutral import format from stdin instead:
    /// {"session", "ts", "kind", "text", "ref"?, "project"?, "meta"?}.
    #[arg(long, conflicts_with_all = ["session", "kind", "text", "meta"])]
    json: bool,

    /// Print the recorded event as JSON instead of its id.
    #[arg(long)]
    print_event: bool,

    /// Keep the event on this machine, and the rest of its session: never
    /// synced or pushed (sealed in .git/memlog/personal.git).
    #[arg(long)]
    personal: bool,
}

pub fn cmd_record(dir: &Path, args: RecordArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open(dir)?;
    let entry = if args.json {
        let mut line = String::new();
        std::io::stdin()
            .read_to_string(&mut line)
            .context("reading the event from stdin")?;
        Entry::Neutral(line)
    } else {
        let (Some(session), Some(kind), Some(text)) = (args.session, args.kind, args.text) else {
            bail!("--session, --kind and --text are required (or use --json)");
        };
        let text = if text == "-" {
            let mut t = String::new();
            std::io::stdin()
                .read_to_string(&mut t)
                .context("reading --text from stdin")?;
            t
        } else {
            text
        };
        let meta = args
            .meta
            .map(|m| parse_object(&m).context("--meta"))
            .transpose()?;
        Entry::Fields {
            session,
            kind,
            text,
            meta,
        }
    };
    let event = record::event(&repo, entry, args.project, args.personal)?;
    if args.print_event {
        output::print_json(&event.to_value(true))?;
    } else {
        println!("{}", event.id);
    }
    Ok(ExitCode::SUCCESS)
}

/// Parses a JSON object given on the command line.
pub fn parse_object(text: &str) -> anyhow::Result<Map<String, Value>> {
    match serde_json::from_str(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => bail!("expected a JSON object, got {text:?}"),
        Err(e) => bail!("not valid JSON ({e}): {text:?}"),
    }
}
