use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use memlog_ops::forget::reinforce;
use memlog_ops::workspace;

use crate::output;

/// Say that memories helped, or misled, so that search learns from it.
///
/// Records a `reinforce` event naming the events and the outcome, sealed at
/// once. Each success raises the weight of every named event, and of every
/// pair of them, by 0.1; each failure lowers it by 0.15 (a Hebbian rule,
/// weights kept in [-2, 5]; docs/DESIGN.md §8). An event's weight moves its importance in
/// ranking; a pair's positive weight makes the two events lend each other
/// relevance, like neighbours in a session.
#[derive(Args)]
#[command(group(clap::ArgGroup::new("outcome").required(true).args(["success", "failure"])))]
pub struct ReinforceArgs {
    /// Event ids (or unique prefixes of at least 8 hex digits).
    #[arg(required = true, value_name = "ID")]
    ids: Vec<String>,

    /// The memories helped.
    #[arg(long)]
    success: bool,

    /// The memories were wrong or misleading.
    #[arg(long)]
    failure: bool,

    /// Print {"id", "targets", "outcome", "commit"} as JSON.
    #[arg(long)]
    json: bool,
}

pub fn cmd_reinforce(dir: &Path, args: ReinforceArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open_for_writing(dir)?;
    let reinforced = reinforce(&repo, &args.ids, args.success)?;
    if args.json {
        output::print_json(&reinforced)?;
    } else {
        println!("{}", reinforced.id);
    }
    Ok(ExitCode::SUCCESS)
}
