//! `memlog install git` / `memlog uninstall git`: git's diff driver for
//! segments, so that `git log -p memlog` and `git show` print events
//! (through `memlog textconv`) instead of raw JSON lines.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, bail};
use memlog_store::Repo;

use memlog_ops::workspace;

/// The line memlog adds to `info/attributes`.
pub const ATTRIBUTES_LINE: &str = "segments/**/*.jsonl diff=memlog";
/// The diff driver's textconv command.
const TEXTCONV: &str = "memlog textconv";

/// Sets `diff.memlog.textconv` in `.git/config` and adds the attributes
/// line to `.git/info/attributes`; running it again changes nothing.
pub fn install(dir: &Path) -> anyhow::Result<ExitCode> {
    let repo = workspace::open(dir)?;
    git(&repo, &["config", "diff.memlog.textconv", TEXTCONV])?;
    let path = attributes_path(&repo);
    let current = read_or_empty(&path)?;
    if current.lines().any(|l| l.trim() == ATTRIBUTES_LINE) {
        println!("git diff driver already installed ({})", path.display());
        return Ok(ExitCode::SUCCESS);
    }
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
    std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    println!(
        "installed the git diff driver: diff.memlog.textconv = {TEXTCONV:?}, {} in {}",
        ATTRIBUTES_LINE,
        path.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Removes what [`install`] set.
pub fn uninstall(dir: &Path) -> anyhow::Result<ExitCode> {
    let repo = workspace::open(dir)?;
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
        std::fs::write(&path, kept).with_context(|| format!("writing {}", path.display()))?;
    }
    println!("removed the git diff driver");
    Ok(ExitCode::SUCCESS)
}

/// `<common git dir>/info/attributes`.
fn attributes_path(repo: &Repo) -> PathBuf {
    repo.common_dir.join("info").join("attributes")
}

fn read_or_empty(path: &Path) -> anyhow::Result<String> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// Runs `git --git-dir=<repo> args`; `allowed` exit codes are not errors.
fn git_with(repo: &Repo, args: &[&str], allowed: &[i32]) -> anyhow::Result<()> {
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
