//! `memlog install claude`: memlog's hooks merged into Claude Code's
//! settings, and removed again.

use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use memlog_agents::Scope;
use memlog_agents::claude_code::ClaudeCode;

use super::agent::hooks;

/// Claude Code: memlog's hooks in Claude Code's settings.
///
/// Merges `memlog hook <Event>` commands for SessionStart, UserPromptSubmit,
/// PreToolUse (file-aware recall), PostToolUse, PostToolUseFailure, Stop,
/// SubagentStop, PreCompact and SessionEnd into the settings file, keeping
/// every other hook. Installing again replaces memlog's entries (e.g. after
/// moving the binary, whatever its name: `memlog`, `memlog-<target>`);
/// `memlog uninstall claude` removes them. Claude Code reads the project's
/// settings in the folder it starts in: start it at the repository's root,
/// or install with `--user`.
#[derive(Args)]
pub(super) struct ClaudeArgs {
    /// The project's `.claude/settings.json` (the default).
    #[arg(long, conflicts_with_all = ["user", "local"])]
    project: bool,

    /// The project's `.claude/settings.local.json` (not meant to be
    /// committed).
    #[arg(long, conflicts_with = "user")]
    local: bool,

    /// Your `~/.claude/settings.json`, for every project.
    #[arg(long)]
    user: bool,

    /// Print the resulting settings instead of writing them.
    #[arg(long)]
    dry_run: bool,
}

pub(super) fn claude(dir: &Path, args: ClaudeArgs, install: bool) -> anyhow::Result<ExitCode> {
    let scope = if args.user {
        Scope::User
    } else if args.local {
        Scope::Local
    } else {
        Scope::Project
    };
    let written = hooks(dir, &ClaudeCode, scope, install, args.dry_run)?;
    if install && !args.dry_run {
        let repo = memlog_ops::workspace::open(dir).ok();
        if repo.is_some_and(|r| r.config.hooks.warm_watcher_idle_minutes == 0) {
            println!(
                "tip: prompts are ranked by their own meaning while `memlog watch` runs (it keeps the model loaded);\n     \
                 to have SessionStart start one that exits when idle, set in .memlog.yaml:\n       \
                 hooks:\n         warm_watcher_idle_minutes: 30"
            );
        }
    }
    Ok(written)
}
