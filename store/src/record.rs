//! The write path: every event memlog stores passes through a [`Recorder`],
//! which applies the privacy filter and output truncation *before* the event
//! becomes bytes anywhere.

use memlog_format::privacy::{PrivacyFilter, Report, truncate_output};
use memlog_format::{Draft, Event, Kind};
use serde_json::Value;

use crate::journal::{Durability, Journal};
use crate::seal::{SealRequest, Sealed, seal_import};
use crate::{Repo, Result};

/// Writes events for a repository: to a session's journal (live sessions)
/// or straight into sealed commits (imports).
pub struct Recorder<'r> {
    repo: &'r Repo,
    filter: PrivacyFilter,
}

impl<'r> Recorder<'r> {
    /// A recorder for `repo`, with its configured privacy patterns compiled.
    pub fn new(repo: &'r Repo) -> Result<Recorder<'r>> {
        Ok(Recorder {
            repo,
            filter: PrivacyFilter::new(&repo.config.privacy.patterns)?,
        })
    }

    /// The repository it records into.
    pub fn repo(&self) -> &Repo {
        self.repo
    }

    /// Applies privacy (body and meta) and, for tool observations, cuts
    /// `body.output` to the configured size (marking `body.truncated`).
    pub fn prepare(&self, mut draft: Draft) -> (Draft, Report) {
        let mut body = Value::Object(std::mem::take(&mut draft.body));
        let mut report = self.filter.filter_value(&mut body);
        let mut meta = Value::Object(std::mem::take(&mut draft.meta));
        report.absorb(self.filter.filter_value(&mut meta));
        if let (Value::Object(mut b), Value::Object(m)) = (body, meta) {
            if draft.kind == Kind::ToolObservation
                && let Some(Value::String(out)) = b.get("output")
            {
                let tools = &self.repo.config.tools;
                let (cut, was_cut) =
                    truncate_output(out, tools.max_output_bytes, tools.max_output_lines);
                if was_cut {
                    b.insert("output".into(), Value::String(cut));
                    b.insert("truncated".into(), Value::Bool(true));
                }
            }
            draft.body = b;
            draft.meta = m;
        }
        (draft, report)
    }

    /// Whether calls of `tool` are excluded from recording by configuration.
    pub fn excludes_tool(&self, tool: &str) -> bool {
        self.repo.config.tools.exclude.iter().any(|t| t == tool)
    }

    /// Filters and appends drafts (all of one session) to its journal.
    pub fn record(&self, drafts: Vec<Draft>) -> Result<(Vec<Event>, Report)> {
        self.record_as(drafts, Durability::Synced)
    }

    /// [`Recorder::record`], synced to disk or not as `durability` says
    /// (see [`Durability`]).
    pub fn record_as(
        &self,
        drafts: Vec<Draft>,
        durability: Durability,
    ) -> Result<(Vec<Event>, Report)> {
        let Some(session) = drafts.first().map(|d| d.session.clone()) else {
            return Ok((Vec::new(), Report::default()));
        };
        let journal = Journal::new(&self.repo.journal_dir(), &session)?;
        let mut report = Report::default();
        let mut prepared = Vec::with_capacity(drafts.len());
        for d in drafts {
            let (d, r) = self.prepare(d);
            report.absorb(r);
            prepared.push(d);
        }
        let events = journal.append_all_as(prepared, durability)?;
        Ok((events, report))
    }

    /// Filters sessions of drafts, numbers them in order and seals each as
    /// one commit; events already in the log are skipped.
    pub fn import(&self, sessions: Vec<(String, Vec<Draft>)>) -> Result<(Vec<Sealed>, Report)> {
        self.import_numbered(
            sessions
                .into_iter()
                .map(|(s, drafts)| {
                    (
                        s,
                        drafts
                            .into_iter()
                            .enumerate()
                            .map(|(i, d)| (i as u64, d))
                            .collect(),
                    )
                })
                .collect(),
        )
    }

    /// Like [`Recorder::import`], with each draft's `seq` given by the
    /// caller (for sources whose order is not one stream, such as a
    /// transcript and its subagents' files: numbering each stream on its
    /// own keeps ids stable when one of them grows).
    pub fn import_numbered(
        &self,
        sessions: Vec<(String, Vec<(u64, Draft)>)>,
    ) -> Result<(Vec<Sealed>, Report)> {
        let mut report = Report::default();
        let mut requests = Vec::with_capacity(sessions.len());
        for (session, drafts) in sessions {
            let mut events = Vec::with_capacity(drafts.len());
            for (seq, d) in drafts {
                let (d, r) = self.prepare(d);
                report.absorb(r);
                events.push(d.into_event(seq));
            }
            requests.push(SealRequest { session, events });
        }
        Ok((seal_import(self.repo, &requests)?, report))
    }
}
