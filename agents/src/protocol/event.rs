//! The Claude Code hook events memlog listens to.

use std::fmt;
use std::str::FromStr;

use crate::Error;

/// A Claude Code hook event, named as Claude Code names it in
/// `hook_event_name`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HookEvent {
    /// A session starts, resumes, is cleared or was compacted (`source`).
    SessionStart,
    /// The user submitted a prompt (`prompt`); may inject context.
    UserPromptSubmit,
    /// A tool is about to run (`tool_name`, `tool_input`).
    PreToolUse,
    /// A tool ran (`tool_name`, `tool_input`, `tool_response`).
    PostToolUse,
    /// A tool failed (`tool_name`, `tool_input`, `error`, `is_interrupt`).
    PostToolUseFailure,
    /// The main agent finished answering.
    Stop,
    /// A subagent finished (`agent_id`, `agent_type`, `agent_transcript_path`).
    SubagentStop,
    /// The context is about to be compacted (`trigger`, `custom_instructions`).
    PreCompact,
    /// The session ends (`reason`).
    SessionEnd,
}

impl HookEvent {
    /// Every event, in the order of a session's life.
    pub const ALL: [HookEvent; 9] = [
        HookEvent::SessionStart,
        HookEvent::UserPromptSubmit,
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::PostToolUseFailure,
        HookEvent::Stop,
        HookEvent::SubagentStop,
        HookEvent::PreCompact,
        HookEvent::SessionEnd,
    ];

    /// The name Claude Code uses (`hook_event_name`, settings keys).
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::PostToolUseFailure => "PostToolUseFailure",
            HookEvent::Stop => "Stop",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::SessionEnd => "SessionEnd",
        }
    }

    /// Reads an event name as Claude Code writes it (`UserPromptSubmit`) or
    /// as a command line would (`user-prompt-submit`, `user_prompt_submit`,
    /// `userpromptsubmit`): case, `-`, `_` and spaces are ignored.
    pub fn parse(name: &str) -> Option<HookEvent> {
        let folded: String = name
            .chars()
            .filter(|c| !matches!(c, '-' | '_' | ' '))
            .flat_map(char::to_lowercase)
            .collect();
        HookEvent::ALL
            .into_iter()
            .find(|event| event.as_str().to_lowercase() == folded)
    }

    /// Whether Claude Code reads context to inject from this hook's output.
    pub fn injects_context(self) -> bool {
        matches!(self, HookEvent::SessionStart | HookEvent::UserPromptSubmit)
    }
}

impl fmt::Display for HookEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for HookEvent {
    type Err = Error;

    fn from_str(name: &str) -> Result<HookEvent, Error> {
        HookEvent::parse(name).ok_or_else(|| Error::UnknownHookEvent {
            name: name.to_string(),
            known: HookEvent::ALL.map(HookEvent::as_str).join(", "),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_claude_and_command_line_spellings() {
        for event in HookEvent::ALL {
            assert_eq!(HookEvent::parse(event.as_str()), Some(event));
            assert_eq!(event.as_str().parse::<HookEvent>().ok(), Some(event));
        }
        assert_eq!(
            HookEvent::parse("user-prompt-submit"),
            Some(HookEvent::UserPromptSubmit)
        );
        assert_eq!(
            HookEvent::parse("SESSION_START"),
            Some(HookEvent::SessionStart)
        );
        assert_eq!(
            HookEvent::parse("posttooluse"),
            Some(HookEvent::PostToolUse)
        );
        assert_eq!(HookEvent::parse("Notification"), None);
        let err = "Notification".parse::<HookEvent>().unwrap_err();
        assert!(err.to_string().contains("SessionEnd"), "{err}");
    }
}
