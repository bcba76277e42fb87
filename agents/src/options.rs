//! What every agent's paths to drafts share: where the user's code was,
//! and the options that decide what becomes a draft (hooks and session
//! import alike).

use crate::Agent;

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

/// How an agent's data becomes drafts (hooks and session import alike).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookOptions {
    /// The project drafts belong to; also the namespace of task keys.
    pub project: String,
    /// Tools whose calls are not recorded at all (`tools.exclude` in
    /// `.memlog.yaml`): no `tool_observation`, and for `TodoWrite` (or
    /// another plan tool) no task events either.
    pub excluded_tools: Vec<String>,
    /// Record PreToolUse as a `tool_observation` without output, marked
    /// `meta.pre_tool_use = true`. Off by default: PostToolUse carries the
    /// same input and the output.
    pub record_pre_tool_use: bool,
    /// The agent whose data this is (`meta.client`).
    pub agent: &'static dyn Agent,
    /// The agent's version, when known (`meta.agent_version`).
    pub agent_version: Option<String>,
}

impl Default for HookOptions {
    /// The first agent's data (Claude Code's), for no project, nothing
    /// excluded.
    fn default() -> HookOptions {
        HookOptions {
            project: String::new(),
            excluded_tools: Vec::new(),
            record_pre_tool_use: false,
            agent: crate::AGENTS[0],
            agent_version: None,
        }
    }
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
