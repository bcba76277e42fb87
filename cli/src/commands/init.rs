use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use serde_json::json;

use memlog_ops::workspace;

use crate::output;

/// Prepare memlog in this git repository (or worktree).
///
/// Creates `<git common dir>/memlog/` for journals and indexes. Memory is
/// keyed by the git common dir, so all worktrees of a repository share it.
/// Nothing is written to the working tree, the index or HEAD. Recording
/// commands do this by themselves; `init` shows where things will go.
#[derive(Args)]
pub struct InitArgs {
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn cmd_init(dir: &Path, args: InitArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open_for_writing(dir)?;
    let info = json!({
        "git_dir": repo.common_dir,
        "memlog_dir": repo.memlog_dir,
        "ref": repo.ref_name(),
        "project": repo.project(),
    });
    if args.json {
        output::print_json(&info)?;
    } else {
        println!("memlog ready in {}", repo.memlog_dir.display());
        println!("  project: {}", repo.project());
        println!("  sessions are sealed on {}", repo.ref_name());
    }
    Ok(ExitCode::SUCCESS)
}
