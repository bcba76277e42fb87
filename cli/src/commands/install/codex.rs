//! `memlog install codex`: memlog's hooks merged into Codex CLI's
//! `hooks.json`, and removed again.

use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use memlog_agents::Scope;
use memlog_agents::codex::Codex;

use super::agent::hooks;

/// Codex CLI: memlog's hooks in Codex's hooks.json.
///
/// Merges `memlog hook --agent codex <Event>` commands for SessionStart,
/// UserPromptSubmit, PostToolUse, Stop, SubagentStop, PreCompact and
/// SessionEnd (3 s, the most Codex gives it) into the project's
/// `.codex/hooks.json` (or, with --user, `$CODEX_HOME/hooks.json`, else
/// `~/.codex/hooks.json`), keeping every other hook. Installing again
/// replaces memlog's entries; `memlog uninstall codex` removes them.
///
/// Codex runs a new or changed hook only once it is trusted, and skips the
/// others without a word: review them in Codex (`/hooks`), or, for
/// automation that vetted them, run `codex exec
/// --dangerously-bypass-hook-trust`. Project hooks also need the project
/// to be trusted by Codex. install says which are not trusted yet, and so
/// does `memlog doctor`, as long as they are not.
#[derive(Args)]
pub(super) struct CodexArgs {
    /// Your Codex hooks ($CODEX_HOME/hooks.json), for every project.
    #[arg(long)]
    user: bool,

    /// Print the resulting hooks.json instead of writing it.
    #[arg(long)]
    dry_run: bool,
}

pub(super) fn codex(dir: &Path, args: CodexArgs, install: bool) -> anyhow::Result<ExitCode> {
    let scope = if args.user {
        Scope::User
    } else {
        Scope::Project
    };
    hooks(dir, &Codex, scope, install, args.dry_run)
}
