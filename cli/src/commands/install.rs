use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use memlog_format::Repo;

use crate::workspace;

/// Set up an integration; `git`: read memory diffs as events in git itself.
///
/// `memlog install git` sets git's diff driver for segments, so that
/// `git log -p memlog` and `git show` print events (through `memlog
/// textconv`) instead of raw JSON lines: it sets `diff.memlog.textconv` in
/// the repository's `.git/config` and adds `segments/**/*.jsonl diff=memlog`
/// to `.git/info/attributes`. Running it again changes nothing; `memlog
/// uninstall git` undoes it. `memlog` must be on the PATH git runs with.
#[derive(Args)]
pub struct InstallArgs {
    /// What to install.
    target: Integration,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Integration {
    /// The diff driver for segments in this repository.
    Git,
}

/// The line memlog adds to `info/attributes`.
pub const ATTRIBUTES_LINE: &str = "segments/**/*.jsonl diff=memlog";
/// The diff driver's textconv command.
const TEXTCONV: &str = "memlog textconv";

pub fn cmd_install(dir: &Path, args: InstallArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open(dir)?;
    match args.target {
        Integration::Git => {
            git(&repo, &["config", "diff.memlog.textconv", TEXTCONV])?;
            let path = attributes_path(&repo);
            let current = read_or_empty(&path)?;
            if current.lines().any(|l| l.trim() == ATTRIBUTES_LINE) {
                println!("git diff driver already installed ({})", path.display());
            } else {
                let mut text = current;
                if !text.is_empty() && !text.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str(ATTRIBUTES_LINE);
                text.push('\n');
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent)
                        .with_context(|| format!("creating {}", parent.display()))?;
                }
                std::fs::write(&path, text)
                    .with_context(|| format!("writing {}", path.display()))?;
                println!(
                    "installed the git diff driver: diff.memlog.textconv = {TEXTCONV:?}, {} in {}",
                    ATTRIBUTES_LINE,
                    path.display()
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `<common git dir>/info/attributes`.
pub fn attributes_path(repo: &Repo) -> PathBuf {
    repo.common_dir.join("info").join("attributes")
}

pub fn read_or_empty(path: &Path) -> anyhow::Result<String> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// Runs `git --git-dir=<repo> args`; `allowed` exit codes are not errors.
pub fn git_with(repo: &Repo, args: &[&str], allowed: &[i32]) -> anyhow::Result<()> {
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(&repo.common_dir)
        .args(args)
        .output()
        .context("running git")?;
    let code = out.status.code().unwrap_or(-1);
    if !out.status.success() && !allowed.contains(&code) {
        bail!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

fn git(repo: &Repo, args: &[&str]) -> anyhow::Result<()> {
    git_with(repo, args, &[])
}
