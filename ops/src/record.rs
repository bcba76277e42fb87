//! Writing what a person or a script says into memory: one event of any
//! kind into a live session's journal (`memlog record`), and notes
//! (`memlog note`). Every write goes through the store's `Recorder`, which
//! filters it for privacy first.

use memlog_format::{Draft, Event, Kind, neutral, time};
use memlog_store::{Recorder, Repo};
use serde_json::{Map, Value};

use crate::diag;
use crate::error::{Context, Error, Result};

/// One event to record, as a front-end received it.
#[derive(Clone, Debug)]
pub enum Entry {
    /// Given field by field.
    Fields {
        /// The live session it joins.
        session: String,
        /// Its kind, by name (`note`, `fact`…).
        kind: String,
        /// Its text.
        text: String,
        /// Extra metadata.
        meta: Option<Map<String, Value>>,
    },
    /// One line in the neutral import format.
    Neutral(String),
}

/// Records `entry` in its session's journal, in `project` (default: the
/// repository's); `personal` keeps it on this machine. Privacy warnings go
/// to stderr. Returns the event as stored.
pub fn event(repo: &Repo, entry: Entry, project: Option<String>, personal: bool) -> Result<Event> {
    let project = project.unwrap_or_else(|| repo.project());
    let draft = match entry {
        Entry::Neutral(line) => neutral::parse_line(line.trim(), &project)
            .map_err(|e| Error::Invalid(format!("stdin: not a neutral-format event: {e}")))?,
        Entry::Fields {
            session,
            kind,
            text,
            meta,
        } => {
            let kind = Kind::parse_known(&kind).map_err(Error::Invalid)?;
            let mut draft = Draft::text(session, time::now(), kind, project, text);
            if let Some(meta) = meta {
                draft.meta = meta;
            }
            draft
        }
    };
    let mut draft = draft;
    if personal {
        memlog_format::scope::mark_personal(&mut draft.meta);
    }
    let recorder = Recorder::new(repo)?;
    let (mut events, report) = recorder.record(vec![draft])?;
    for w in &report.warnings {
        diag::warning(w);
    }
    events.pop().context("no event was recorded")
}

/// A note written.
#[derive(Clone, Debug)]
pub struct Noted {
    /// The note as stored.
    pub event: Option<Event>,
    /// Its session.
    pub session: String,
    /// The commit it was sealed into, when it is a session of its own.
    pub commit: Option<String>,
}

/// Writes a note: into the live `session` when one is given, else as a
/// small session of its own, sealed into a commit at once; `personal`
/// keeps it on this machine.
pub fn note(repo: &Repo, text: String, session: Option<String>, personal: bool) -> Result<Noted> {
    let standalone = session.is_none();
    let session = session.unwrap_or_else(|| memlog_store::journal::mint_session("note"));
    let mut draft = Draft::text(&session, time::now(), Kind::Note, repo.project(), text);
    if personal {
        memlog_format::scope::mark_personal(&mut draft.meta);
    }
    let (events, commit) = crate::workspace::record(repo, vec![draft], standalone)?;
    Ok(Noted {
        event: events.into_iter().next(),
        session,
        commit,
    })
}
