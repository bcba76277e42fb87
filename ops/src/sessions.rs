//! Session listings: one line per sealed session, as `memlog log` prints
//! them and the viewer's timeline pages them.

use memlog_format::event::{first_line, sort_events, truncate_chars};
use memlog_format::{Event, Kind, time};
use memlog_indexer::Projections;
use memlog_indexer::overview::{SessionRow, sessions_page};
use memlog_store::log::{CommitInfo, Log};
use serde::Serialize;

use crate::error::Result;

/// One session of `memlog log --json`, and of the web viewer's timeline
/// (`/api/sessions`), which reads it from the index.
#[derive(Clone, Debug, Serialize)]
pub struct SessionLine {
    /// The commit that sealed it (`null` in the viewer for a live session,
    /// still in its journal).
    pub commit: Option<String>,
    /// The session id.
    pub session: String,
    /// Time of its first event.
    pub started: String,
    /// Its live events.
    pub events: usize,
    /// Its prompts.
    pub prompts: usize,
    /// Its tool calls.
    pub tool_calls: usize,
    /// First line of the first prompt, at most [`FIRST_PROMPT_CHARS`].
    pub first_prompt: Option<String>,
    /// The code's git branch when the session began (`meta.branch`).
    pub branch: Option<String>,
    /// The agents that recorded its events (`meta.client`), in order of
    /// appearance; left out when unknown (rows read from the index).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<String>,
    /// The sealing commit's subject: what a session without a prompt (a
    /// note, a forget, a purge) is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// Whether it is personal: sealed in the personal store, kept on this
    /// machine.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub personal: bool,
}

/// Characters of a session's first prompt in listings.
pub const FIRST_PROMPT_CHARS: usize = 200;

/// The line of a session-sealing commit, from the events it added;
/// `visible` tells which of them no forget hides: a hidden prompt is not
/// its first prompt, and a commit whose subject came from a hidden event
/// (its first prompt or text, FORMAT.md) is described by its kinds.
pub fn session_line(
    log: &Log,
    commit: &CommitInfo,
    visible: &dyn Fn(&Event) -> bool,
) -> Result<SessionLine> {
    let mut events: Vec<Event> = Vec::new();
    for seg in log.added_segments(commit)? {
        events.extend(log.read_segment(&seg, false)?.0);
    }
    sort_events(&mut events);
    // the event the seal took the commit's subject from
    let subject_from = events
        .iter()
        .find(|e| e.is_users_prompt())
        .or_else(|| events.iter().find(|e| e.text().is_some()));
    let subject = match subject_from {
        Some(e) if !visible(e) => None,
        _ => Some(commit.subject.clone()).filter(|s| !s.is_empty()),
    };
    // what a forget hides is not counted either (the index's counts, the
    // viewer's, leave it out too)
    let shown: Vec<&Event> = events.iter().filter(|e| visible(e)).collect();
    let count = |k: Kind| shown.iter().filter(|e| e.kind == k).count();
    Ok(SessionLine {
        commit: Some(commit.id.to_string()),
        // a commit without a session (a purge's record) has none
        session: commit.session.clone().unwrap_or_else(|| "-".into()),
        started: events
            .first()
            .map(|e| e.ts.clone())
            .unwrap_or_else(|| time::from_secs(commit.author_time)),
        events: shown.len(),
        prompts: shown.iter().filter(|e| e.is_users_prompt()).count(),
        tool_calls: count(Kind::ToolObservation),
        first_prompt: events
            .iter()
            .find(|e| e.is_users_prompt() && visible(e))
            .map(|e| e.headline(FIRST_PROMPT_CHARS)),
        branch: events
            .iter()
            .find_map(|e| e.meta.get("branch").and_then(|b| b.as_str()))
            .map(str::to_string),
        agents: events.iter().fold(Vec::new(), |mut agents, e| {
            if let Some(client) = e.meta.get("client").and_then(|c| c.as_str())
                && !agents.iter().any(|a| a == client)
            {
                agents.push(client.to_string());
            }
            agents
        }),
        subject,
        personal: log.scope() == memlog_format::scope::Scope::Personal,
    })
}

/// A page of the timeline read from the index (live sessions included,
/// `commit` left `None` for the caller to fill in): up to `limit` sessions
/// before the cursor `(started, session)`, and whether more follow.
pub fn page(
    p: &Projections,
    before: Option<(&str, &str)>,
    limit: usize,
) -> Result<(Vec<SessionLine>, bool)> {
    let mut rows = sessions_page(p, before, limit + 1)?;
    let more = rows.len() > limit;
    rows.truncate(limit);
    Ok((rows.into_iter().map(line_of_row).collect(), more))
}

fn line_of_row(r: SessionRow) -> SessionLine {
    SessionLine {
        commit: None,
        session: r.session,
        started: r.first_ts,
        events: r.events as usize,
        prompts: r.prompts as usize,
        tool_calls: r.tool_calls as usize,
        first_prompt: r
            .first_prompt
            .map(|t| truncate_chars(first_line(&t), FIRST_PROMPT_CHARS)),
        branch: r.branch,
        agents: Vec::new(),
        subject: None,
        personal: false,
    }
}
