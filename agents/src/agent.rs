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
    /// Google's Gemini CLI (checked against 0.61.0): its own event names
    /// and two payload shapes, translated by [`crate::gemini`].
    Gemini,
}

impl Agent {
    /// Every agent, in the order help texts list them.
    pub const ALL: [Agent; 3] = [Agent::ClaudeCode, Agent::Codex, Agent::Gemini];

    /// The name recorded in `meta.client` and accepted by filters.
    pub fn client(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini-cli",
        }
    }

    /// The agent named by `name`: its client name, or a short form
    /// (`claude`, `codex`), any case.
    pub fn parse(name: &str) -> Option<Agent> {
        match name.to_ascii_lowercase().as_str() {
            "claude" | "claude-code" | "claudecode" => Some(Agent::ClaudeCode),
            "codex" | "codex-cli" => Some(Agent::Codex),
            "gemini" | "gemini-cli" => Some(Agent::Gemini),
            _ => None,
        }
    }

    /// Reads a hook payload of this agent for the event it was installed
    /// for (`event_name`, the agent's own name for it).
    pub fn parse_payload(self, event_name: &str, bytes: &[u8]) -> crate::Result<crate::Payload> {
        if self != Agent::Gemini {
            return crate::parse_payload(event_name, bytes);
        }
        let raw: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|source| crate::Error::MalformedPayload {
                event: event_name.to_string(),
                source,
            })?;
        let (name, common) = crate::gemini::to_common(event_name, raw);
        Ok(crate::Payload::from_value(&name, common))
    }

    /// What the hook prints to inject `context` at `event`, in this agent's
    /// form.
    pub fn hook_output(self, event: crate::HookEvent, context: Option<&str>) -> Option<String> {
        let output = crate::hook_output(event, context)?;
        Some(match self {
            Agent::Gemini => crate::gemini::rename_output(output, event),
            _ => output,
        })
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
