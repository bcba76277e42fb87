//! `memlog install gemini`: memlog's hooks merged into Gemini CLI's
//! `settings.json`, and removed again.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;
use serde_json::{Value, json};

use memlog_ops::workspace;

use super::claude::{HookStyle, add_memlog_hooks, remove_memlog_hooks};

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
            "memlog hooks installed in {} ({} events)",
            path.display(),
            HOOKED.len()
        );
    } else {
        println!("removed {removed} memlog hook(s) from {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}
