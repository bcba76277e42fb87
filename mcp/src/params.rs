//! The arguments of each MCP tool. Their doc comments become the JSON
//! schema's descriptions, which is what a model reads: they say what to
//! pass, not how memlog works inside.
//!
//! Unknown fields are refused (`deny_unknown_fields`) so that a misspelt
//! argument is an error the model sees, rather than silently ignored.

use schemars::JsonSchema;
use serde::Deserialize;

/// One string or a list of strings.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    pub fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchParams {
    /// What to look for: words, code identifiers, file names, error
    /// messages. `user` also finds `getUserById`.
    pub query: String,
    /// How many hits to return (1-50, default 10).
    #[serde(default = "default_search_limit")]
    #[schemars(range(min = 1, max = 50))]
    pub limit: usize,
    /// Only events of this kind, or of any of these kinds: user_prompt,
    /// agent_response, tool_observation, note, fact, session_summary,
    /// task_created, task_status_changed, …
    #[serde(default)]
    pub kind: Option<OneOrMany>,
    /// Only events of this session id.
    #[serde(default)]
    pub session: Option<String>,
    /// Only events at or after this date or time (2026-11-01 or RFC 3339).
    #[serde(default)]
    pub since: Option<String>,
    /// Only events before this date or time (2026-11-01 or RFC 3339).
    #[serde(default)]
    pub until: Option<String>,
    /// Only events that touched or mention this file (a path or a file name).
    #[serde(default)]
    pub file: Option<String>,
    /// Only events recorded by this coding agent: claude-code, codex or
    /// gemini-cli (short forms claude, gemini). Fewer than `limit` hits may
    /// come back.
    #[serde(default)]
    pub agent: Option<String>,
    /// hybrid (default: full text and meaning), fts (exact words only) or
    /// vector (meaning only; needs the embedding model).
    #[serde(default)]
    pub mode: Option<String>,
}

fn default_search_limit() -> usize {
    10
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetParams {
    /// Event ids from memory_search or memory_timeline: full ids or unique
    /// prefixes of at least 8 hex digits (the 12-digit short ids work). At
    /// most 20.
    pub ids: Vec<String>,
    /// Also return up to this many events before and after each one in its
    /// session (0-20, default 1).
    #[serde(default = "default_get_context")]
    #[schemars(range(max = 20))]
    pub context: usize,
}

fn default_get_context() -> usize {
    1
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimelineParams {
    /// A session id: its events in order.
    #[serde(default)]
    pub session: Option<String>,
    /// Events at or after this date or time (2026-11-01 or RFC 3339).
    #[serde(default)]
    pub since: Option<String>,
    /// Events before this date or time. With `until` and no `since`, the
    /// latest events before it are returned.
    #[serde(default)]
    pub until: Option<String>,
    /// Only events of this kind, or of any of these kinds.
    #[serde(default)]
    pub kind: Option<OneOrMany>,
    /// How many rows at most (1-500, default 50).
    #[serde(default = "default_timeline_limit")]
    #[schemars(range(min = 1, max = 500))]
    pub limit: usize,
}

fn default_timeline_limit() -> usize {
    50
}

/// What a remembered event is.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RememberKind {
    /// Something worth knowing later: a decision, a pitfall, a convention.
    #[default]
    Note,
    /// A verified statement about the project, ideally with evidence.
    Fact,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RememberParams {
    /// The note or fact, self-contained: it is read later without this
    /// conversation.
    pub text: String,
    /// `note` (default) or `fact`.
    #[serde(default)]
    pub kind: RememberKind,
    /// Ids of events that support it (from memory_search or memory_get;
    /// prefixes of at least 8 hex digits work).
    #[serde(default)]
    pub evidence: Vec<String>,
    /// For a fact: the exact words of the first evidence event that prove
    /// it. memlog aligns them (exactly, else at a similarity of 0.85) and
    /// rejects the fact when they are not there.
    #[serde(default)]
    pub quote: Option<String>,
    /// Ids of older memories this one replaces: they then rank below it.
    #[serde(default)]
    pub supersedes: Vec<String>,
    /// Ids of older memories this one contradicts.
    #[serde(default)]
    pub contradicts: Vec<String>,
    /// Keep it on this machine: searched and injected here like the
    /// rest, never synced or pushed (for what concerns only this person).
    #[serde(default)]
    pub personal: bool,
}

/// Whether memories helped.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// They helped: the answer relied on them and they were right.
    Success,
    /// They misled: wrong, outdated or irrelevant.
    Failure,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReinforceParams {
    /// Ids of the memories (full ids or prefixes of at least 8 hex digits).
    pub ids: Vec<String>,
    /// `success` or `failure`.
    pub outcome: Outcome,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForgetParams {
    /// Ids of events to forget (full ids or prefixes of at least 8 hex
    /// digits).
    #[serde(default)]
    pub ids: Vec<String>,
    /// Forget every event of this session.
    #[serde(default)]
    pub session: Option<String>,
    /// Forget every event before this date or time (2026-01-01 or RFC 3339).
    #[serde(default)]
    pub before: Option<String>,
    /// Why; kept with the forget event for reviewers.
    #[serde(default)]
    pub reason: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TasksParams {
    /// Only tasks with this status (e.g. `blocked`, `in_progress`,
    /// `pending`); default: every task that is not done or cancelled.
    #[serde(default)]
    pub status: Option<String>,
    /// How many tasks at most (1-200, default 50), most recently updated
    /// first.
    #[serde(default = "default_tasks_limit")]
    #[schemars(range(min = 1, max = 200))]
    pub limit: usize,
}

fn default_tasks_limit() -> usize {
    50
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskAddParams {
    /// The task's title, as a todo list would say it.
    pub title: String,
    /// low, medium, high or critical.
    #[serde(default)]
    pub priority: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskUpdateParams {
    /// The task: its key (from memory_tasks), its id `task:KEY`, or its
    /// title.
    pub task: String,
    /// The new status: pending, in_progress, blocked, done or cancelled.
    /// A blocked task needs blockers; a pending task is started
    /// (in_progress) before it is done.
    #[serde(default)]
    pub status: Option<String>,
    /// What blocks the task, replacing its blockers: another task's key,
    /// id or title, a URL, an issue (owner/repo#12, JIRA-123), or a
    /// condition in words. A task unblocks when its blocking tasks are done.
    #[serde(default)]
    pub blockers: Vec<String>,
    /// Record the blockers as suggestions only (they do not block).
    #[serde(default)]
    pub suggest: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatsParams {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddRuleParams {
    /// The rule, in a sentence or two, valid beyond this session.
    pub text: String,
    /// `rule` (a principle), `solution` (a recurring problem's fix) or
    /// `core_logic` (a core implementation pattern); default `rule`.
    #[serde(default = "default_rule_kind")]
    pub kind: String,
    /// Ids of the facts or events that prove it (at least one).
    pub evidence: Vec<String>,
    /// Ids of older rules or facts it replaces.
    #[serde(default)]
    pub supersedes: Vec<String>,
    /// Ids of older rules or facts it contradicts.
    #[serde(default)]
    pub contradicts: Vec<String>,
}

fn default_rule_kind() -> String {
    "rule".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bounds a client validates against are the ones the server
    /// enforces (a model called `memory_search` with `limit: 0`, which the
    /// schema allowed and the server refused).
    #[test]
    fn schemas_bound_limits_as_the_server_does() {
        let bounds = |schema: schemars::Schema, field: &str| {
            let v = serde_json::to_value(schema).unwrap_or_default();
            let p = &v["properties"][field];
            (p["minimum"].as_u64(), p["maximum"].as_u64())
        };
        assert_eq!(
            bounds(schemars::schema_for!(SearchParams), "limit"),
            (Some(1), Some(50))
        );
        assert_eq!(
            bounds(schemars::schema_for!(TimelineParams), "limit"),
            (Some(1), Some(500))
        );
        assert_eq!(
            bounds(schemars::schema_for!(TasksParams), "limit"),
            (Some(1), Some(200))
        );
        assert_eq!(
            bounds(schemars::schema_for!(GetParams), "context"),
            (Some(0), Some(20))
        );
    }
}
