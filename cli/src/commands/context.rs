use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use memlog_indexer::context::assemble;
use memlog_indexer::vectors::VectorAccess;
use memlog_ops::{warm, workspace};

use crate::output;

/// Print the memories most relevant to a prompt, as markdown for an agent.
///
/// The best matches, deduplicated and grouped by session, each cited by its
/// event id, within a token budget (about four bytes per token). Prints
/// nothing when nothing is relevant enough (`context.min_relevance` in
/// `.memlog.yaml`).
#[derive(Args)]
pub struct ContextArgs {
    /// The prompt to find memories for.
    prompt: String,

    /// Token budget (default: `context.budget_tokens`, 1500).
    #[arg(long, value_name = "TOKENS")]
    budget: Option<usize>,

    /// Leave out this session (the one asking).
    #[arg(long, value_name = "SESSION")]
    exclude_session: Option<String>,

    /// Print {"markdown", "cited", "tokens", "ranked_by"} as JSON ("ranked_by":
    /// embedded, distilled, feedback or text: what ranked the memories).
    #[arg(long)]
    json: bool,
}

pub fn cmd_context(dir: &Path, args: ContextArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open(dir)?;
    let mut projections = workspace::projections(&repo)?;
    projections.load_vectors_as(VectorAccess::Scan);
    let budget = args.budget.unwrap_or(repo.config.context.budget_tokens);
    // As a hook would: the prompt's embedding from a running `memlog
    // watch` that holds the vectors' model, else none (no model is loaded).
    let query_vector = projections.vectors().and_then(|v| {
        warm::ask_embedding(&repo, &args.prompt)
            .filter(|(model, _)| *model == v.meta.model)
            .map(|(_, vector)| vector)
    });
    let assembled = assemble(
        &projections,
        &repo.config,
        &args.prompt,
        budget,
        args.exclude_session.as_deref(),
        query_vector.as_deref(),
    )?;
    if args.json {
        output::print_json(&assembled)?;
    } else {
        print!("{}", assembled.markdown);
    }
    Ok(ExitCode::SUCCESS)
}
