//! # memlog-agents
//!
//! Everything memlog knows about the coding agents it captures, one folder
//! per agent behind one interface, [`Agent`]:
//!
//! - what its hooks send, read as the shared hook protocol
//!   ([`protocol`]: payloads to memlog [`Draft`](memlog_format::Draft)s),
//!   and the JSON a hook prints to inject context or keep the agent going
//!   (its Stop contract, [`StopContract`]);
//! - its version, where a payload leads to it;
//! - the hook configuration `memlog install <agent>` writes ([`settings`]:
//!   which file, which events, in what form);
//! - where its sessions live and how a session file reads as drafts
//!   ([`SessionFile`]), for `memlog import <agent>`.
//!
//! | folder | agent | hooks | session files |
//! | --- | --- | --- | --- |
//! | [`claude_code`] | Claude Code | the shared protocol (its own) | [`claude_code::transcript`] |
//! | [`codex`] | Codex CLI | the shared protocol | [`codex::rollout`] |
//! | [`gemini`] | Gemini CLI | translated ([`gemini::hooks`]) | [`gemini::chat`] |
//! | [`copilot`] | GitHub Copilot CLI | translated ([`copilot::hooks`]) | [`copilot::events`] |
//! | [`antigravity`] | Antigravity CLI | translated ([`antigravity::hooks`]) | [`antigravity::transcript`] |
//! | [`cursor`] | Cursor | translated ([`cursor::hooks`]) | [`cursor::transcript`] |
//! | [`opencode`] | OpenCode | the shared protocol, from memlog's plugin | [`opencode::export`] |
//!
//! What tool calls become is shared by hooks and session files alike
//! (`tool.rs`: observation bodies; `todo.rs`: TodoWrite lists,
//! TaskCreate and TaskUpdate calls, and the other agents' plan tools —
//! `update_plan`, `write_todos`, `todowrite`, `update_todo` — as task
//! events).
//!
//! An agent is added as one folder implementing [`Agent`] and one line in
//! [`AGENTS`]; operations (memlog-ops) find it there by name and never name
//! an agent themselves.
//!
//! This is a pure library over memlog-format: it reads the agents' files,
//! but reads no stdin, prints nothing, writes nothing and never exits; it
//! does not apply privacy filtering or output truncation either —
//! memlog-store's `Recorder` does both for every draft before any byte is
//! written. memlog-ops drives it: the hook driver, import and install.

mod agent;
mod agent_cut;
pub mod antigravity;
pub mod claude_code;
pub mod codex;
pub mod copilot;
pub mod cursor;
mod error;
pub mod gemini;
mod jsonc;
pub mod opencode;
mod options;
mod own_calls;
pub mod protocol;
mod sessions;
pub mod settings;
mod settings_order;
mod sha256;
mod todo;
mod tool;

pub use agent::{Agent, HookTrust, Scope, StopContract};
pub use error::{Error, Result};
pub use options::{CodeContext, HookOptions};
pub use protocol::{HookEvent, Payload, ToolTarget, drafts, drafts_at, hook_output, parse_payload};
pub use sessions::{SessionFile, jsonl_files};
pub use todo::TODO_TOOL;

/// Every agent memlog knows, in the order help texts list them. The first,
/// Claude Code, is the one whose hook protocol the others share, and the
/// default of `memlog hook`.
pub static AGENTS: [&dyn Agent; 7] = [
    &claude_code::ClaudeCode,
    &codex::Codex,
    &gemini::Gemini,
    &copilot::Copilot,
    &antigravity::Antigravity,
    &cursor::Cursor,
    &opencode::OpenCode,
];

/// The agent named `name`: its short name (`claude`), client name
/// (`claude-code`) or an alias, any case.
pub fn agent_named(name: &str) -> Option<&'static dyn Agent> {
    AGENTS.iter().copied().find(|a| {
        a.name().eq_ignore_ascii_case(name)
            || a.client().eq_ignore_ascii_case(name)
            || a.aliases().iter().any(|x| x.eq_ignore_ascii_case(name))
    })
}

/// The agent whose tool runs this process, by the variables it sets in
/// its tools' environment ([`Agent::tool_env`]).
pub fn running_a_tool_of() -> Option<&'static dyn Agent> {
    AGENTS
        .iter()
        .copied()
        .find(|a| a.tool_env().iter().any(|v| std::env::var_os(v).is_some()))
}

/// Every agent's short name, for messages: `claude, codex, gemini`.
pub fn agent_names() -> String {
    AGENTS
        .iter()
        .map(|a| a.name())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for agent in AGENTS {
            assert_eq!(agent_named(agent.client()), Some(agent));
            assert_eq!(agent_named(agent.name()), Some(agent));
        }
        assert_eq!(
            agent_named("Claude").map(|a| a.client()),
            Some("claude-code")
        );
        assert_eq!(
            agent_named("claudecode").map(|a| a.client()),
            Some("claude-code")
        );
        assert_eq!(agent_named("codex-cli").map(|a| a.client()), Some("codex"));
        assert_eq!(
            agent_named("GEMINI-CLI").map(|a| a.client()),
            Some("gemini-cli")
        );
        assert_eq!(agent_named("vim"), None);
        assert_eq!(AGENTS[0].unknown_session(), claude_code::UNKNOWN_SESSION);
        assert_eq!(
            agent_names(),
            "claude, codex, gemini, copilot, antigravity, cursor, opencode"
        );
    }
}
