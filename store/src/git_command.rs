//! Running the `git` command for what gix cannot do (push, gc) or where
//! plain git is the reference behaviour (fetch into remote-tracking refs).

use std::io::Write;
use std::process::{Command, Output, Stdio};

use crate::{Error, Repo, Result};

/// `git --git-dir=<repo> <args>`; returns stdout, or an error carrying
/// git's stderr.
pub(crate) fn run(repo: &Repo, args: &[&str]) -> Result<String> {
    run_with_input(repo, args, None)
}

/// [`run`], with `input` on git's standard input (a list too long for
/// the command line).
pub(crate) fn run_with_input(repo: &Repo, args: &[&str], input: Option<&str>) -> Result<String> {
    let output = output(repo, args, input)?;
    if !output.status.success() {
        return Err(Error::GitCommand {
            command: format!("git {}", args.join(" ")),
            message: String::from_utf8_lossy(&output.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Runs git and returns what it did, failed or not (for a caller that
/// reads a failure's stdout); an error only when git could not be run.
pub(crate) fn output(repo: &Repo, args: &[&str], input: Option<&str>) -> Result<Output> {
    let could_not = |e: std::io::Error| Error::GitCommand {
        command: format!("git {}", args.join(" ")),
        message: if e.kind() == std::io::ErrorKind::NotFound {
            // everything else memlog does reads and writes the repository
            // itself; sharing it goes through git's transports
            "the git program is not on PATH: memlog needs it to fetch and push (install git)"
                .to_string()
        } else {
            format!("could not start git: {e}")
        },
    };
    let mut child = Command::new("git")
        .arg("--git-dir")
        .arg(repo.git_dir())
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(could_not)?;
    if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
        // git reads it all before it answers; a write that fails shows
        // in git's own error
        let _ = stdin.write_all(input.as_bytes());
    }
    child.wait_with_output().map_err(could_not)
}
