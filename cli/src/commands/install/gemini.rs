//! `memlog install gemini`: memlog's hooks merged into Gemini CLI's
//! `settings.json`, and removed again.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use memlog_ops::workspace;

use super::claude::{HookStyle, update_hooks_file};

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

/// Gemini hook events memlog listens to, with whether they take a tool
/// matcher (Gemini CLI 0.61.0).
const HOOKED: [(&str, bool); 6] = [
    ("SessionStart", false),
    ("BeforeAgent", false),
    ("AfterTool", true),
    ("AfterAgent", false),
    ("PreCompress", false),
    ("SessionEnd", false),
];

/// Milliseconds; matchers are regular expressions; a failing command must
/// not read as a block.
const STYLE: HookStyle = HookStyle {
    agent_flag: "--agent gemini ",
    suffix: " 2>/dev/null || true",
    timeout: 10_000,
    any_tool: ".*",
};

fn hooks_path(dir: &Path, args: &GeminiArgs) -> anyhow::Result<PathBuf> {
    if args.user {
        let home = std::env::var_os("HOME").context("HOME is not set")?;
        return Ok(PathBuf::from(home).join(".gemini/settings.json"));
    }
    let repo = workspace::open(dir)?;
    let root = repo
        .work_tree
        .context("this repository has no working tree; use --user")?;
    Ok(root.join(".gemini/settings.json"))
}

pub(super) fn gemini(dir: &Path, args: GeminiArgs, install: bool) -> anyhow::Result<ExitCode> {
    let path = hooks_path(dir, &args)?;
    let Some(removed) = update_hooks_file(&path, &HOOKED, &STYLE, install, args.dry_run)? else {
        return Ok(ExitCode::SUCCESS);
    };
    if install {
        println!(
            "memlog hooks installed in {} ({} events)",
            path.display(),
            HOOKED.len()
        );
    } else {
        println!("removed {removed} memlog hook(s) from {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}
