//! `memlog install gemini`: memlog's hooks merged into Gemini CLI's
//! `settings.json`, and removed again.

use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use memlog_agents::Scope;
use memlog_agents::gemini::Gemini;

use super::agent::hooks;

/// Gemini CLI: memlog's hooks in Gemini's settings.json.
///
/// Merges `memlog hook --agent gemini <Event>` commands for SessionStart,
/// BeforeAgent, AfterTool, AfterAgent, PreCompress and SessionEnd into the
/// project's `.gemini/settings.json` (or, with --user,
/// `~/.gemini/settings.json`), keeping every other setting and hook. Gemini
/// treats a hook that exits non-zero with stderr as a block, so the command
/// ends in `2>/dev/null || true`. Installing again replaces memlog's
/// entries; `memlog uninstall gemini` removes them. Gemini runs project
/// hooks only in a trusted folder.
#[derive(Args)]
pub(super) struct GeminiArgs {
    /// Your Gemini settings (~/.gemini/settings.json), for every project.
    #[arg(long)]
    user: bool,

    /// Print the resulting settings.json instead of writing it.
    #[arg(long)]
    dry_run: bool,
}

pub(super) fn gemini(dir: &Path, args: GeminiArgs, install: bool) -> anyhow::Result<ExitCode> {
    let scope = if args.user {
        Scope::User
    } else {
        Scope::Project
    };
    hooks(dir, &Gemini, scope, install, args.dry_run)
}
