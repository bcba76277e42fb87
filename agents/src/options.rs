//! What every Claude Code adapter path shares: the client name and the
//! session of payloads without one, where the user's code was, and the
//! options that decide what becomes a draft (hooks and transcript import
//! alike).

use crate::Agent;

/// The client name memlog records in `meta.client` for Claude Code.
pub const CLIENT: &str = "claude-code";

/// The session a payload without a `session_id` is recorded in.
pub const UNKNOWN_SESSION: &str = "claude-code-unknown";

/// Where the user's code was when the hook ran. The CLI fills it from the
/// git repository the hook runs in; every draft carries it in `meta`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CodeContext {
    /// The working directory (falls back to the payload's `cwd`).
    pub cwd: Option<String>,
    /// The checked-out branch, if any.
    pub branch: Option<String>,
    /// The commit HEAD points to, if any.
    pub head: Option<String>,
}

/// How an agent's data becomes drafts (hooks and transcript import alike).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HookOptions {
    /// The project drafts belong to; also the namespace of task keys.
    pub project: String,
    /// Tools whose calls are not recorded at all (`tools.exclude` in
    /// `.memlog.yaml`): no `tool_observation`, and for `TodoWrite` no task
    /// events either.
    pub excluded_tools: Vec<String>,
    /// Record PreToolUse as a `tool_observation` without output, marked
    /// `meta.pre_tool_use = true`. Off by default: PostToolUse carries the
    /// same input and the output.
    pub record_pre_tool_use: bool,
    /// The agent whose data this is (`meta.client`).
    pub agent: Agent,
    /// The agent's version, when known (`meta.agent_version`).
    pub agent_version: Option<String>,
}

impl HookOptions {
    /// Options for `project` with nothing excluded.
    pub fn new(project: impl Into<String>) -> HookOptions {
        HookOptions {
            project: project.into(),
            ..HookOptions::default()
        }
    }

    /// Whether calls of `tool` are left out.
    pub fn excludes(&self, tool: &str) -> bool {
        self.excluded_tools.iter().any(|t| t == tool)
    }
}
