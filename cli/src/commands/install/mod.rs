//! `memlog install` and `memlog uninstall`: connecting memlog to Claude
//! Code (claude.rs), Codex CLI (codex.rs), Gemini CLI (gemini.rs), git's
//! diff driver (git.rs) and MCP clients (mcp.rs). An agent's file says only
//! its arguments: what its settings hold is the agent's knowledge
//! (memlog-agents), written by `memlog_ops::install`.

pub(crate) mod agent;
mod claude;
mod codex;
mod gemini;
mod git;
mod mcp;

use std::path::Path;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use self::claude::{ClaudeArgs, claude};
use self::codex::{CodexArgs, codex};
use self::gemini::{GeminiArgs, gemini};

/// Connect memlog to other tools.
#[derive(Args)]
pub struct InstallArgs {
    #[command(subcommand)]
    target: InstallTarget,
}

/// Undo `memlog install`.
#[derive(Args)]
pub struct UninstallArgs {
    #[command(subcommand)]
    target: InstallTarget,
}

#[derive(Subcommand)]
enum InstallTarget {
    Claude(ClaudeArgs),
    Codex(CodexArgs),
    Gemini(GeminiArgs),
    /// git: read memory diffs as events (`git log -p memlog`).
    ///
    /// Sets git's diff driver for segments in this repository:
    /// `diff.memlog.textconv` in `.git/config` and
    /// `segments/**/*.jsonl diff=memlog` in `.git/info/attributes`, so that
    /// `git log -p memlog` and `git show` print events (through `memlog
    /// textconv`) instead of raw JSON lines. Idempotent. `memlog` must be on
    /// the PATH git runs with.
    Git,
    Mcp(mcp::InstallMcpArgs),
}

pub fn cmd_install(dir: &Path, args: InstallArgs) -> anyhow::Result<ExitCode> {
    match args.target {
        InstallTarget::Claude(a) => claude(dir, a, true),
        InstallTarget::Codex(a) => codex(dir, a, true),
        InstallTarget::Gemini(a) => gemini(dir, a, true),
        InstallTarget::Git => git::install(dir),
        InstallTarget::Mcp(a) => mcp::install(dir, a),
    }
}

pub fn cmd_uninstall(dir: &Path, args: UninstallArgs) -> anyhow::Result<ExitCode> {
    match args.target {
        InstallTarget::Claude(a) => claude(dir, a, false),
        InstallTarget::Codex(a) => codex(dir, a, false),
        InstallTarget::Gemini(a) => gemini(dir, a, false),
        InstallTarget::Git => git::uninstall(dir),
        InstallTarget::Mcp(_) => {
            anyhow::bail!(
                "remove the \"memlog\" entry under \"mcpServers\" in .mcp.json (memlog does not edit it for you)"
            )
        }
    }
}
