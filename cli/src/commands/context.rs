use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use memlog_ops::context::{self, PromptContext};
use memlog_ops::workspace;

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

    /// Token budget (default: `context.budget_tokens`, 1000).
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
    // as `memlog search ""` says: an empty prompt asks for nothing
    if args.prompt.trim().is_empty() {
        anyhow::bail!("the prompt is empty: give the words the agent was asked");
    }
    let repo = workspace::open(dir)?;
    let assembled = context::one_shot(
        &repo,
        &PromptContext {
            prompt: &args.prompt,
            budget: args.budget,
            exclude_session: args.exclude_session.as_deref(),
        },
    )?;
    if assembled.personal {
        memlog_ops::shown::mark(&repo);
    }
    if args.json {
        output::print_json(&assembled)?;
    } else {
        print!("{}", assembled.markdown);
    }
    Ok(ExitCode::SUCCESS)
}
