//! The coding agents memlog captures, and what differs between them.
//!
//! Each agent is an adapter behind the same four jobs: its hook payloads
//! to drafts ([`crate::drafts`]), its session files to drafts
//! ([`crate::transcript`] for Claude Code, [`crate::codex`] for Codex CLI),
//! the context it injects ([`crate::hook_output`]) and the hook
//! configuration `memlog install <agent>` writes (in the CLI).
//!
//! Claude Code and Codex CLI speak the same hook protocol: the same event
//! names, the same payload fields (`session_id`, `hook_event_name`,
//! `prompt`, `tool_name`, `tool_input`, `tool_response`, `tool_use_id`,
//! `last_assistant_message`) and the same injection output
//! (`hookSpecificOutput.additionalContext`), so one payload reader serves
//! both; what differs is the name in `meta.client`, the session files, and
//! the configuration.

/// A coding agent memlog has an adapter for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Agent {
    /// Anthropic's Claude Code (checked against 2.1.328).
    #[default]
    ClaudeCode,
    /// OpenAI's Codex CLI (checked against 0.169.0).
    Codex,
}

impl Agent {
    /// Every agent, in the order help texts list them.
    pub const ALL: [Agent; 2] = [Agent::ClaudeCode, Agent::Codex];

    /// The name recorded in `meta.client` and accepted by filters.
    pub fn client(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
        }
    }

    /// The agent named by `name`: its client name, or a short form
    /// (`claude`, `codex`), any case.
    pub fn parse(name: &str) -> Option<Agent> {
        match name.to_ascii_lowercase().as_str() {
            "claude" | "claude-code" | "claudecode" => Some(Agent::ClaudeCode),
            "codex" | "codex-cli" => Some(Agent::Codex),
            _ => None,
        }
    }

    /// The session payloads without a `session_id` are recorded in.
    pub fn unknown_session(self) -> String {
        format!("{}-unknown", self.client())
    }
}

impl std::fmt::Display for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.client())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for agent in Agent::ALL {
            assert_eq!(Agent::parse(agent.client()), Some(agent));
        }
        assert_eq!(Agent::parse("Claude"), Some(Agent::ClaudeCode));
        assert_eq!(Agent::parse("vim"), None);
        assert_eq!(Agent::ClaudeCode.unknown_session(), crate::UNKNOWN_SESSION);
    }
}
