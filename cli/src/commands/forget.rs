use std::path::Path;
use std::process::ExitCode;

use anyhow::bail;
use clap::Args;
use memlog_format::seal::{JournalSelection, seal_journals};
use memlog_format::{Draft, Kind, Recorder, time};
use serde_json::{Map, Value, json};

use crate::{output, workspace};

/// Hide events from memory: by id, a whole session, or everything before a date.
///
/// Appends a `forget` event (sealed at once, so it is reviewed and shared like
/// any other memory); forgotten events vanish from search, context, `cat` and
/// `show`. The bytes stay in git history until `memlog purge` rewrites it:
/// use that for a secret that leaked.
#[derive(Args)]
pub struct ForgetArgs {
    /// Event ids (or unique prefixes of at least 8 hex digits) to forget.
    ids: Vec<String>,

    /// Forget every event of this session.
    #[arg(long)]
    session: Option<String>,

    /// Forget every event before this date or time (2026-01-01, RFC 3339).
    #[arg(long, value_name = "DATE")]
    before: Option<String>,

    /// Why (kept in the forget event).
    #[arg(long)]
    reason: Option<String>,

    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn cmd_forget(dir: &Path, args: ForgetArgs) -> anyhow::Result<ExitCode> {
    if args.ids.is_empty() && args.session.is_none() && args.before.is_none() {
        bail!("say what to forget: event ids, --session ID or --before DATE");
    }
    let repo = workspace::open_for_writing(dir)?;
    let mut targets = Vec::new();
    if !args.ids.is_empty() {
        let live = workspace::live(&repo, false)?;
        for prefix in &args.ids {
            let p = prefix.to_ascii_lowercase();
            if p.len() < 8 || !p.bytes().all(|b| b.is_ascii_hexdigit()) {
                bail!("{prefix:?} is not an event id (give at least 8 hex digits)");
            }
            let matches: Vec<&str> = live
                .iter()
                .filter(|e| e.id.starts_with(&p))
                .map(|e| e.id.as_str())
                .collect();
            match matches.as_slice() {
                [one] => targets.push(Value::String(one.to_string())),
                [] => bail!("no live event has id {prefix:?}"),
                many => bail!(
                    "{prefix:?} is ambiguous ({} events); give more digits",
                    many.len()
                ),
            }
        }
    }
    let mut body = Map::new();
    if !targets.is_empty() {
        body.insert("targets".into(), Value::Array(targets.clone()));
    }
    if let Some(s) = &args.session {
        body.insert("session".into(), Value::String(s.clone()));
    }
    if let Some(b) = &args.before {
        body.insert("before".into(), Value::String(time::normalize(b)?));
    }
    if let Some(r) = &args.reason {
        body.insert("reason".into(), Value::String(r.clone()));
    }
    let session = memlog_format::journal::mint_session("forget");
    let draft = Draft {
        session: session.clone(),
        ts: time::now(),
        kind: Kind::Forget,
        project: repo.project(),
        body,
        meta: Map::new(),
    };
    let (events, _) = Recorder::new(&repo)?.record(vec![draft])?;
    let report = seal_journals(&repo, &JournalSelection::Session(session))?;
    let id = events.first().map(|e| e.id.clone()).unwrap_or_default();
    let commit = report.sealed.into_iter().find_map(|s| s.commit);
    if args.json {
        output::print_json(
            &json!({"id": id, "commit": commit, "targets": targets, "session": args.session, "before": args.before}),
        )?;
    } else {
        println!(
            "recorded forget {} ({})",
            &id[..12.min(id.len())],
            commit.as_deref().map(|c| &c[..12]).unwrap_or("-")
        );
    }
    Ok(ExitCode::SUCCESS)
}
