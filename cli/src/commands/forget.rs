use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use memlog_ops::forget::{ForgetRequest, forget};
use memlog_ops::workspace;

use crate::output;

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
    let request = ForgetRequest {
        ids: args.ids,
        session: args.session,
        before: args.before,
        reason: args.reason,
    };
    request.check()?;
    let repo = workspace::open_for_writing(dir)?;
    let forgotten = forget(&repo, &request)?;
    if args.json {
        output::print_json(&forgotten)?;
    } else {
        println!(
            "recorded forget {} ({})",
            forgotten.id.short(),
            output::short_or_dash(forgotten.commit.as_deref())
        );
    }
    Ok(ExitCode::SUCCESS)
}
