use std::path::Path;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use memlog_ops::{review, workspace};
use serde_json::json;

use crate::output;

/// The review queue: facts and rules proposed while `learn.review: true`
/// wait here, and are not injected into any agent's context until
/// accepted.
///
/// Without a subcommand, lists what waits (`--all`: decided ones too).
/// Accepting or rejecting records a `review` event, sealed at once, so
/// that the decision is in the log and reviewed like code.
#[derive(Args)]
pub struct ReviewArgs {
    #[command(subcommand)]
    command: Option<ReviewCommand>,

    /// List accepted and rejected memories too.
    #[arg(long)]
    all: bool,

    /// Print as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand)]
enum ReviewCommand {
    /// Accept a fact or rule: it is injected from now on.
    Accept(DecisionArgs),
    /// Reject a fact or rule: it is never injected.
    Reject(DecisionArgs),
}

#[derive(Args)]
struct DecisionArgs {
    /// The fact or rule: its id or a unique prefix (8+ hex digits).
    id: String,
    /// Why, kept in the review event.
    #[arg(long)]
    reason: Option<String>,
    /// Print {"id", "target", "decision", "commit"} as JSON.
    #[arg(long)]
    json: bool,
}

pub fn cmd_review(dir: &Path, args: ReviewArgs) -> anyhow::Result<ExitCode> {
    if let Some(ReviewCommand::Accept(d) | ReviewCommand::Reject(d)) = &args.command {
        let accept = matches!(args.command, Some(ReviewCommand::Accept(_)));
        let repo = workspace::open_for_writing(dir)?;
        let decided = review::decide(&repo, &d.id, accept, d.reason.as_deref())?;
        if d.json {
            output::print_json(&decided)?;
        } else {
            println!(
                "{}ed {} (review event {})",
                decided.decision,
                decided.target.short(),
                decided.id.short()
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let repo = workspace::open(dir)?;
    let projections = workspace::projections(&repo)?;
    let items = review::queue(&projections, args.all)?;
    if args.json {
        output::print_json(&json!({ "review": repo.config.learn.review, "items": items }))?;
        return Ok(ExitCode::SUCCESS);
    }
    if items.is_empty() {
        println!(
            "nothing waits for review{}",
            if repo.config.learn.review {
                ""
            } else {
                " (`learn.review: true` in .memlog.yaml makes agents' facts and rules wait here)"
            }
        );
    }
    for i in &items {
        println!(
            "{}  {:<8} {:<4}  {}  {}",
            i.id.short(),
            i.status,
            i.kind,
            output::short_time(&i.ts),
            i.text
        );
        if !i.twins.is_empty() {
            println!(
                "    also written as {} (decided with it)",
                i.twins
                    .iter()
                    .map(|t| t.short().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        if i.status == "pending" {
            println!(
                "    memlog review accept {0}   |   memlog review reject {0}",
                i.id.short()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
