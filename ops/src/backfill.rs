//! What a session's hooks missed, brought back from the agent's own
//! transcript: the answers of a turn whose Stop hook was killed or timed
//! out, or whose agent was killed mid-answer. The import reads the
//! transcript and adds only what the log lacks ([`crate::import`]).
//!
//! Two moments find such a turn without the user: a session's end (its
//! payload names the transcript) and the sealing of an orphaned journal
//! (an agent killed before its end), whose transcript is looked for where
//! the agent keeps this repository's.

use std::path::PathBuf;
use std::time::Duration;

use memlog_agents::{AGENTS, Agent};
use memlog_format::Kind;
use memlog_store::Repo;
use memlog_store::journal::{self, Journal};
use serde_json::Value;

/// Whether a turn of `session`'s journal has a prompt and no answer after
/// it, as when its Stop hook was killed or timed out.
pub fn unanswered_turn(repo: &Repo, session: &str) -> bool {
    let Ok(journal) = Journal::new(&repo.journal_dir(), session) else {
        return false;
    };
    let Ok((events, _)) = journal.read() else {
        return false;
    };
    let mut asked = false;
    for e in &events {
        match e.kind {
            Kind::UserPrompt if asked => return true,
            Kind::UserPrompt => asked = true,
            Kind::AgentResponse => asked = false,
            _ => {}
        }
    }
    asked
}

/// The journals not written for `idle` (what `memlog seal --idle` seals)
/// whose sessions left a turn unanswered, each with its agent and the
/// transcript of it that agent keeps for this repository, where one is
/// found.
pub fn orphans(repo: &Repo, idle: Duration) -> Vec<(&'static dyn Agent, PathBuf)> {
    let Some(work_tree) = &repo.work_tree else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for j in journal::list(&repo.journal_dir()).unwrap_or_default() {
        let orphaned = j
            .modified
            .and_then(|m| m.elapsed().ok())
            .is_some_and(|age| age >= idle);
        if !orphaned || !unanswered_turn(repo, &j.session) {
            continue;
        }
        let Some(agent) = agent_of(repo, &j.session) else {
            continue;
        };
        let transcript = agent
            .default_session_paths(work_tree)
            .unwrap_or_default()
            .into_iter()
            .flat_map(|p| match p.is_file() {
                true => vec![p],
                false => agent.session_files(&p).unwrap_or_default(),
            })
            .find(|f| f.file_stem().is_some_and(|s| s == j.session.as_str()));
        if let Some(t) = transcript {
            out.push((agent, t));
        }
    }
    out
}

/// The agent that recorded `session`'s journal (its events' `client`), if
/// its transcripts can be imported.
fn agent_of(repo: &Repo, session: &str) -> Option<&'static dyn Agent> {
    let (events, _) = Journal::new(&repo.journal_dir(), session)
        .ok()?
        .read()
        .ok()?;
    let client = events
        .iter()
        .find_map(|e| e.meta.get("client").and_then(Value::as_str))?;
    AGENTS
        .iter()
        .copied()
        .find(|a| a.client() == client && a.transcript_import().is_some())
}
