use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use memlog_ops::forget::{ForgetRequest, plan, record};
use memlog_ops::workspace;

use crate::output;

/// Hide events from memory: by id, a whole session, or everything before a date.
///
/// Appends a `forget` event (sealed at once, so it is reviewed and shared like
/// any other memory); forgotten events vanish from search, context, `cat` and
/// `show`, and so do the events derived from them: facts aligned to them,
/// memories giving them as evidence, summaries and recalls quoting their
/// words (a recall that only cites an id keeps it). The bytes stay in git
/// history until `memlog purge` rewrites it: use that for a secret that
/// leaked; `memlog scan` finds those.
#[derive(Args)]
pub struct ForgetArgs {
    /// Event ids (or unique prefixes of at least 8 hex digits) to forget.
    ids: Vec<String>,

    /// Forget every event this session recorded so far (what it records
    /// later, resumed under the same id, is remembered).
    #[arg(long)]
    session: Option<String>,

    /// Forget every event before this date or time (2026-01-01, RFC 3339).
    #[arg(long, value_name = "DATE")]
    before: Option<String>,

    /// Why (kept in the forget event).
    #[arg(long)]
    reason: Option<String>,

    /// Forget every event `memlog scan` finds secret-shaped content in.
    #[arg(long)]
    secrets: bool,

    /// List what would be hidden (named and derived events) and record
    /// nothing.
    #[arg(long)]
    dry_run: bool,

    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn cmd_forget(dir: &Path, args: ForgetArgs) -> anyhow::Result<ExitCode> {
    let mut request = ForgetRequest {
        ids: args.ids,
        session: args.session,
        before: args.before,
        reason: args.reason,
    };
    if args.secrets {
        let flagged = memlog_ops::scan::flagged_ids(&workspace::open(dir)?)?;
        let nothing_else =
            request.ids.is_empty() && request.session.is_none() && request.before.is_none();
        if flagged.is_empty() && nothing_else {
            println!("`memlog scan` finds no secret-shaped content to forget");
            return Ok(ExitCode::SUCCESS);
        }
        request.ids.extend(flagged);
        request
            .reason
            .get_or_insert_with(|| "secret-shaped content (memlog scan)".into());
    }
    request.check()?;
    if args.dry_run {
        let repo = workspace::open(dir)?;
        let plan = plan(&repo, &request)?;
        if args.json {
            output::print_json(&plan)?;
            return Ok(ExitCode::SUCCESS);
        }
        for h in &plan.hidden {
            println!(
                "{}  {}  {:<16} {}  {}{}",
                h.id.short(),
                output::short_time(&h.ts),
                h.kind,
                h.session,
                h.headline,
                if h.derived { "  (derived)" } else { "" }
            );
        }
        let derived = plan.hidden.iter().filter(|h| h.derived).count();
        println!(
            "would hide {} event(s), {derived} of them derived; nothing recorded",
            plan.hidden.len()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let repo = workspace::open_for_writing(dir)?;
    // forgetting what is forgotten already is done: nothing to record
    let plan = plan(&repo, &request)?;
    if plan.hidden.is_empty() {
        if args.json {
            output::print_json(&serde_json::json!({"forgotten": null, "hidden": 0}))?;
        } else {
            println!("nothing to forget: no event in memory matches (forgotten already?)");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let forgotten = record(&repo, &request, plan)?;
    if args.json {
        output::print_json(&forgotten)?;
    } else {
        println!(
            "recorded forget {} ({})",
            forgotten.id.short(),
            output::short_or_dash(forgotten.commit.as_deref())
        );
        if !forgotten.derived.is_empty() {
            println!(
                "with {} derived event(s): {}",
                forgotten.derived.len(),
                forgotten
                    .derived
                    .iter()
                    .map(|id| id.short().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        if args.secrets {
            println!("their bytes stay in git history: erase them with `memlog purge`");
        } else {
            // hidden is not erased: a user who forgets a leak must know
            // the next push still carries it
            println!(
                "hidden from search, recall and every clone that syncs; the bytes stay in git \
                 history (and go out with a push) until `memlog purge` erases them"
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
