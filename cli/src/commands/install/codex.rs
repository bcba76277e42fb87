//! `memlog install codex`: memlog's hooks merged into Codex CLI's
//! `hooks.json`, and removed again.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use memlog_ops::workspace;

use super::claude::{HookStyle, update_hooks_file};

/// Codex CLI: memlog's hooks in Codex's hooks.json.
///
/// Merges `memlog hook --agent codex <Event>` commands for SessionStart,
/// UserPromptSubmit, PostToolUse, Stop, PreCompact and SessionEnd into the
/// project's `.codex/hooks.json` (or, with --user, `$CODEX_HOME/hooks.json`,
/// else `~/.codex/hooks.json`), keeping every other hook. Installing again
/// replaces memlog's entries; `memlog uninstall codex` removes them.
///
/// Codex runs a new or changed hook only once it is trusted: review them
/// in Codex (`/hooks`), or, for automation that vetted them, run
/// `codex exec --dangerously-bypass-hook-trust`. Project hooks also need
/// the project to be trusted by Codex.
#[derive(Args)]
pub(super) struct CodexArgs {
    /// Your Codex hooks ($CODEX_HOME/hooks.json), for every project.
    #[arg(long)]
    user: bool,

    /// Print the resulting hooks.json instead of writing it.
    #[arg(long)]
    dry_run: bool,
}

/// Codex hook events memlog listens to, with whether they take a tool
/// matcher (Codex CLI 0.169.0).
const HOOKED: [(&str, bool); 6] = [
    ("SessionStart", false),
    ("UserPromptSubmit", false),
    ("PostToolUse", true),
    ("Stop", false),
    ("PreCompact", false),
    ("SessionEnd", false),
];

/// Seconds, like Claude Code.
const STYLE: HookStyle = HookStyle {
    agent_flag: "--agent codex ",
    suffix: "",
    timeout: 10,
    any_tool: "*",
};

fn hooks_path(dir: &Path, args: &CodexArgs) -> anyhow::Result<PathBuf> {
    if args.user {
        if let Some(home) = std::env::var_os("CODEX_HOME").filter(|h| !h.is_empty()) {
            return Ok(PathBuf::from(home).join("hooks.json"));
        }
        let home = std::env::var_os("HOME").context("HOME is not set")?;
        return Ok(PathBuf::from(home).join(".codex/hooks.json"));
    }
    let repo = workspace::open(dir)?;
    let root = repo
        .work_tree
        .context("this repository has no working tree; use --user")?;
    Ok(root.join(".codex/hooks.json"))
}

pub(super) fn codex(dir: &Path, args: CodexArgs, install: bool) -> anyhow::Result<ExitCode> {
    let path = hooks_path(dir, &args)?;
    let Some(removed) = update_hooks_file(&path, &HOOKED, &STYLE, install, args.dry_run)? else {
        return Ok(ExitCode::SUCCESS);
    };
    if install {
        println!(
            "memlog hooks installed in {} ({} events); Codex runs them once you trust them (/hooks in Codex)",
            path.display(),
            HOOKED.len()
        );
    } else {
        println!("removed {removed} memlog hook(s) from {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}
