//! `memlog install claude`: memlog's hooks merged into Claude Code's
//! settings, and removed again.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;
use serde_json::{Map, Value, json};

use memlog_ops::workspace;

/// Claude Code: memlog's hooks in Claude Code's settings.
///
/// Merges `memlog hook <Event>` commands for SessionStart, UserPromptSubmit,
/// PostToolUse, PostToolUseFailure, Stop, SubagentStop, PreCompact and
/// SessionEnd into the settings file, keeping every other hook. Installing
/// again replaces memlog's entries (e.g. after moving the binary);
/// `memlog uninstall claude` removes them.
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

/// Hook events memlog listens to, with whether they take a tool matcher.
const HOOKED: [(&str, bool); 8] = [
    ("SessionStart", false),
    ("UserPromptSubmit", false),
    ("PostToolUse", true),
    ("PostToolUseFailure", true),
    ("Stop", false),
    ("SubagentStop", false),
    ("PreCompact", false),
    ("SessionEnd", false),
];

/// Seconds Claude Code waits for a hook before killing it; memlog keeps to
/// its own budget far below this.
const HOOK_TIMEOUT_SECS: u64 = 10;

fn settings_path(dir: &Path, args: &ClaudeArgs) -> anyhow::Result<PathBuf> {
    if args.user {
        let home = std::env::var_os("HOME").context("HOME is not set")?;
        return Ok(PathBuf::from(home).join(".claude/settings.json"));
    }
    let repo = workspace::open(dir)?;
    let root = repo
        .work_tree
        .context("this repository has no working tree; use --user")?;
    let name = if args.local {
        "settings.local.json"
    } else {
        "settings.json"
    };
    Ok(root.join(".claude").join(name))
}

pub(super) fn claude(dir: &Path, args: ClaudeArgs, install: bool) -> anyhow::Result<ExitCode> {
    let path = settings_path(dir, &args)?;
    let mut settings: Value = match std::fs::read_to_string(&path) {
        Ok(text) if !text.trim().is_empty() => serde_json::from_str(&text)
            .with_context(|| format!("{} is not valid JSON; fix it first", path.display()))?,
        Ok(_) => json!({}),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => json!({}),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let Value::Object(root) = &mut settings else {
        bail!("{} is not a JSON object", path.display());
    };
    let exe = std::env::current_exe().context("locating the memlog binary")?;
    let removed = remove_memlog_hooks(root);
    if install {
        add_memlog_hooks(root, &exe, &HOOKED, &CLAUDE_STYLE);
    }
    if let Some(Value::Object(h)) = root.get("hooks")
        && h.is_empty()
    {
        root.remove("hooks");
    }
    let text = serde_json::to_string_pretty(&settings)? + "\n";
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
        let repo = memlog_ops::workspace::open(dir).ok();
        if repo.is_some_and(|r| r.config.hooks.warm_watcher_idle_minutes == 0) {
            println!(
                "tip: prompts are ranked by their own meaning while `memlog watch` runs (it keeps the model loaded);\n     \
                 to have SessionStart start one that exits when idle, set in .memlog.yaml:\n       \
                 hooks:\n         warm_watcher_idle_minutes: 30"
            );
        }
    } else {
        println!("removed {removed} memlog hook(s) from {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether a hook command is one of memlog's (`… memlog hook <Event>`).
pub(super) fn is_memlog_command(command: &str) -> bool {
    let mut words = command.split_whitespace();
    let Some(program) = words.next() else {
        return false;
    };
    let program = program.trim_matches(['"', '\'']);
    let name = Path::new(program)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("");
    (name == "memlog" || name == "memlog.exe") && words.next() == Some("hook")
}

/// Removes memlog's hook commands (and groups or events left empty);
/// returns how many were removed.
pub(super) fn remove_memlog_hooks(root: &mut Map<String, Value>) -> usize {
    let Some(Value::Object(events)) = root.get_mut("hooks") else {
        return 0;
    };
    let mut removed = 0;
    for groups in events.values_mut() {
        let Value::Array(groups) = groups else {
            continue;
        };
        for group in groups.iter_mut() {
            if let Some(Value::Array(hooks)) = group.get_mut("hooks") {
                let before = hooks.len();
                hooks.retain(|h| {
                    !h.get("command")
                        .and_then(Value::as_str)
                        .is_some_and(is_memlog_command)
                });
                removed += before - hooks.len();
            }
        }
        groups.retain(|g| {
            g.get("hooks")
                .and_then(Value::as_array)
                .is_none_or(|h| !h.is_empty())
        });
    }
    events.retain(|_, groups| groups.as_array().is_none_or(|g| !g.is_empty()));
    removed
}

/// How an agent wants its hook commands written.
pub(super) struct HookStyle {
    /// Between `hook` and the event (`--agent codex `).
    pub agent_flag: &'static str,
    /// After the event (Gemini: a failing command must not block).
    pub suffix: &'static str,
    /// The `timeout` value, in the agent's unit.
    pub timeout: u64,
    /// The matcher for every tool.
    pub any_tool: &'static str,
}

/// Claude Code's: seconds, `*`.
pub(super) const CLAUDE_STYLE: HookStyle = HookStyle {
    agent_flag: "",
    suffix: "",
    timeout: HOOK_TIMEOUT_SECS,
    any_tool: "*",
};

/// Adds `<exe> hook <agent_flag><Event><suffix>` for each of `hooked`
/// (event, takes a tool matcher) under `root.hooks`, in the shape Claude
/// Code's settings, Codex's hooks.json and Gemini CLI's settings share.
pub(super) fn add_memlog_hooks(
    root: &mut Map<String, Value>,
    exe: &Path,
    hooked: &[(&str, bool)],
    style: &HookStyle,
) {
    let program = exe.display().to_string();
    let program = if program.contains(' ') {
        format!("\"{program}\"")
    } else {
        program
    };
    let events = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    if !events.is_object() {
        *events = Value::Object(Map::new());
    }
    let Value::Object(events) = events else {
        return;
    };
    for &(event, takes_matcher) in hooked {
        let mut group = Map::new();
        if takes_matcher {
            group.insert("matcher".into(), Value::String(style.any_tool.into()));
        }
        group.insert(
            "hooks".into(),
            json!([{
                "type": "command",
                "command": format!("{program} hook {}{event}{}", style.agent_flag, style.suffix),
                "timeout": style.timeout,
            }]),
        );
        let list = events
            .entry(event)
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(list) = list {
            list.push(Value::Object(group));
        }
    }
}
