//! Running the `git` command for what gix cannot do (push, gc) or where
//! plain git is the reference behaviour (fetch into remote-tracking refs).

use std::process::Command;

use crate::{Error, Repo, Result};

/// `git --git-dir=<repo> <args>`; returns stdout, or an error carrying
/// git's stderr.
pub(crate) fn run(repo: &Repo, args: &[&str]) -> Result<String> {
    let output = Command::new("git")
        .arg("--git-dir")
        .arg(repo.git_dir())
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .map_err(|e| Error::GitCommand {
            command: format!("git {}", args.join(" ")),
            message: format!("could not start git: {e}"),
        })?;
    if !output.status.success() {
        return Err(Error::GitCommand {
            command: format!("git {}", args.join(" ")),
            message: String::from_utf8_lossy(&output.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}
