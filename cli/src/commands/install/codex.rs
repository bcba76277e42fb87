//! `memlog install codex`: memlog's hooks merged into Codex CLI's
//! `hooks.json`, and removed again.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;
use serde_json::{Value, json};

use memlog_ops::workspace;

use super::claude::{HookStyle, add_memlog_hooks, remove_memlog_hooks};

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
    let mut config: Value = match std::fs::read_to_string(&path) {
        Ok(text) if !text.trim().is_empty() => serde_json::from_str(&text)
            .with_context(|| format!("{} is not valid JSON; fix it first", path.display()))?,
        Ok(_) => json!({}),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => json!({}),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let Value::Object(root) = &mut config else {
        bail!("{} is not a JSON object", path.display());
    };
    let exe = std::env::current_exe().context("locating the memlog binary")?;
    let removed = remove_memlog_hooks(root);
    if install {
        add_memlog_hooks(root, &exe, &HOOKED, &STYLE);
    }
    if let Some(Value::Object(h)) = root.get("hooks")
        && h.is_empty()
    {
        root.remove("hooks");
    }
    let text = serde_json::to_string_pretty(&config)? + "\n";
    if args.dry_run {
        print!("{text}");
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    let tmp = path.with_extension("json.memlog-tmp");
    std::fs::write(&tmp, &text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, &path).with_context(|| format!("writing {}", path.display()))?;
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
