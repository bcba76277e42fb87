use std::io::{Read, Write};
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Instant;

use clap::Args;
use memlog_agents::Agent;
use memlog_ops::error::chain;
use memlog_ops::hook;
use memlog_store::Layout;

/// Handle an agent's hook: record the event, and inject memories.
///
/// Reads the hook's JSON payload on stdin (Claude Code's; with `--agent
/// codex` Codex CLI's, the same protocol; with `--agent gemini` Gemini
/// CLI's, translated). Records prompts, tool calls (TodoWrite and the
/// other agents' plan tools as task events), answers and session
/// boundaries into the session's journal; SessionEnd seals the session
/// into its commit. At
/// SessionStart it prints a briefing (recent sessions, open tasks), at
/// UserPromptSubmit the memories most relevant to the prompt, each cited
/// by event id, as Claude Code's `additionalContext`.
///
/// A hook never hurts the agent: any internal error is logged to
/// `.git/memlog/hooks.log` and the hook exits 0, printing nothing; past its
/// time budget (`hooks.inject_budget_ms`, default 300 ms) injection is
/// skipped and the event is still recorded. It never loads an embedding
/// model and never indexes in the foreground: a stale index is refreshed by
/// a background `memlog index`.
#[derive(Args)]
pub struct HookArgs {
    /// The hook event: SessionStart, UserPromptSubmit, PreToolUse,
    /// PostToolUse, PostToolUseFailure, Stop, SubagentStop, PreCompact or
    /// SessionEnd.
    event: String,

    /// The agent running the hook: claude (Claude Code, the default), codex
    /// (Codex CLI), gemini (Gemini CLI, whose event names are its own:
    /// BeforeAgent, AfterTool, AfterAgent, PreCompress…), copilot (GitHub
    /// Copilot CLI, camelCase events), cursor, antigravity or opencode
    /// (the plugin `memlog install opencode` writes). Recorded as the
    /// events' `meta.client`. Another name is a usage error, which exits 1
    /// rather than 2: an agent reads a hook's exit status 2 as "block".
    #[arg(long, default_value = "claude", value_parser = agent_named)]
    agent: &'static dyn Agent,
}

/// The agent `--agent` names, or a usage error listing the known names.
fn agent_named(name: &str) -> Result<&'static dyn Agent, String> {
    memlog_agents::agent_named(name).ok_or_else(|| {
        format!(
            "unknown agent {name:?}; known agents: {}",
            memlog_agents::agent_names()
        )
    })
}

/// Largest payload read from stdin.
const MAX_PAYLOAD: u64 = 64 << 20;

static PANIC_MESSAGE: Mutex<Option<String>> = Mutex::new(None);

pub fn cmd_hook(dir: &Path, args: HookArgs) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    // A panic must not print a backtrace into the agent's session.
    std::panic::set_hook(Box::new(|info| {
        if let Ok(mut m) = PANIC_MESSAGE.lock() {
            *m = Some(info.to_string());
        }
    }));
    let mut input = Vec::new();
    let _ = std::io::stdin()
        .lock()
        .take(MAX_PAYLOAD)
        .read_to_end(&mut input);
    let mut layout: Option<Layout> = None;
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| {
        hook::run(args.agent, dir, &args.event, &input, started, &mut layout)
    }));
    let error = match outcome {
        Ok(Ok(Some(output))) => {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{output}");
            let _ = out.flush();
            None
        }
        Ok(Ok(None)) => None,
        Ok(Err(e)) => Some(chain(&e)),
        Err(_) => Some(format!(
            "panic: {}",
            PANIC_MESSAGE
                .lock()
                .ok()
                .and_then(|m| m.clone())
                .unwrap_or_default()
        )),
    };
    if let Some(message) = error {
        hook::log_error(layout.as_ref(), &args.event, &message, started);
    }
    Ok(ExitCode::SUCCESS)
}
