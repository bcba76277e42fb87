//! A session as the `sessions` table holds it: what the briefing's list
//! and the overview read, from the index or from events it has not seen
//! yet (kept apart from both, which read each other's types).

/// A session of the `sessions` table.
#[derive(Clone, Debug)]
pub struct SessionRow {
    /// The session id.
    pub session: String,
    /// Time of its first event.
    pub first_ts: String,
    /// Time of its last event.
    pub last_ts: String,
    /// Its live events.
    pub events: u64,
    /// Its prompts.
    pub prompts: u64,
    /// Its tool calls.
    pub tool_calls: u64,
    /// Text of its first prompt.
    pub first_prompt: Option<String>,
    /// The code's git branch when it began.
    pub branch: Option<String>,
}
