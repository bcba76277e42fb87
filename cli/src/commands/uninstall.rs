use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use super::install::{ATTRIBUTES_LINE, Integration, attributes_path, git_with, read_or_empty};
use crate::workspace;

/// Undo `memlog install`: `git` removes the diff driver for segments.
#[derive(Args)]
pub struct UninstallArgs {
    /// What to uninstall.
    target: Integration,
}

pub fn cmd_uninstall(dir: &Path, args: UninstallArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open(dir)?;
    match args.target {
        Integration::Git => {
            // exit code 5: the key was not set
            git_with(&repo, &["config", "--unset", "diff.memlog.textconv"], &[5])?;
            let path = attributes_path(&repo);
            let current = read_or_empty(&path)?;
            if current.lines().any(|l| l.trim() == ATTRIBUTES_LINE) {
                let kept: String = current
                    .lines()
                    .filter(|l| l.trim() != ATTRIBUTES_LINE)
                    .map(|l| format!("{l}\n"))
                    .collect();
                std::fs::write(&path, kept)
                    .with_context(|| format!("writing {}", path.display()))?;
            }
            println!("removed the git diff driver");
        }
    }
    Ok(ExitCode::SUCCESS)
}
