//! The write path: every event memlog stores passes through a [`Recorder`],
//! which applies the privacy filter and output truncation *before* the event
//! becomes bytes anywhere, and decides its scope: an event the writer
//! marked personal, or that the configured rules make personal, is marked
//! `meta.scope: personal`, and so is every later event of its session
//! (FORMAT.md §9). Sealing routes marked events to the personal ref.

use std::path::PathBuf;

use memlog_format::privacy::{PrivacyFilter, Report, cap_strings, truncate_output};
use memlog_format::{Draft, Event, Kind, scope};
use serde_json::Value;

use crate::journal::{Durability, Journal};
use crate::seal::{SealRequest, Sealed, seal_import};
use crate::{Error, Repo, Result};

/// Writes events for a repository: to a session's journal (live sessions)
/// or straight into sealed commits (imports).
pub struct Recorder<'r> {
    repo: &'r Repo,
    filter: PrivacyFilter,
    /// The agents' own memory folders outside the work tree: a tool call
    /// on a file there keeps the file, not its words
    /// ([`scope::withhold_own_memory`]).
    own_memory: Vec<PathBuf>,
    /// Whether a repeat of what the hooks just sent is dropped ([`Recorder::once`]).
    once: bool,
}

impl<'r> Recorder<'r> {
    /// A recorder for `repo`, with its configured privacy patterns and the
    /// repository's marker key (made on first use).
    pub fn new(repo: &'r Repo) -> Result<Recorder<'r>> {
        let key = crate::privacy_key::load_or_create_shared(&repo.layout(), repo.sharing())?;
        Ok(Recorder {
            repo,
            filter: PrivacyFilter::configured(&repo.config.privacy)?.keyed(&key),
            own_memory: Vec::new(),
            once: false,
        })
    }

    /// The same, for what an agent's hooks send: a tool call the journal
    /// already holds, or a prompt, answer or session start it recorded a
    /// moment ago (the hooks configured twice, [`Journal::append_once_as`]),
    /// is not recorded again.
    pub fn once(mut self) -> Recorder<'r> {
        self.once = true;
        self
    }

    /// The same, withholding the words of tool calls on files under
    /// `dirs` (the agents' own memory, which the caller knows).
    pub fn withholding(mut self, dirs: Vec<PathBuf>) -> Recorder<'r> {
        self.own_memory = dirs;
        self
    }

    /// `text` as this recorder would store it (secrets and private spans
    /// redacted): what to look a recorded title up by.
    pub fn redact(&self, text: &str) -> String {
        self.filter.filter_text(text).0
    }

    /// `session` as it may be stored: a secret in it (an id a script made
    /// of a job id and a token) is redacted as in any text, the marker's
    /// brackets becoming `-` so that the id still names a journal file. It
    /// names the journal, stands in commit trailers and goes to every
    /// teammate (field test 4, B-F5).
    pub fn session_id(&self, session: &str) -> String {
        let (filtered, _) = self.filter.filter_text(session);
        if filtered == session {
            return filtered;
        }
        filtered
            .chars()
            .map(|c| {
                if memlog_format::session_id::is_allowed(c) {
                    c
                } else {
                    '-'
                }
            })
            .take(memlog_format::session_id::MAX_LEN)
            .collect()
    }

    /// The repository it records into.
    pub fn repo(&self) -> &Repo {
        self.repo
    }

    /// Withholds the words of a call on the agents' own memory; applies
    /// privacy (body, meta and project); for tool observations, cuts
    /// `body.output` to the configured size (or, when it is binary, notes
    /// only its size: [`truncate_output`]); then caps every text at
    /// `hooks.max_text_bytes` (either cut marks `body.truncated`).
    pub fn prepare(&self, mut draft: Draft) -> (Draft, Report) {
        draft.session = self.session_id(&draft.session);
        scope::withhold_own_memory(&mut draft, &self.own_memory);
        let mut body = Value::Object(std::mem::take(&mut draft.body));
        let mut report = self.filter.filter_value(&mut body);
        let mut meta = Value::Object(std::mem::take(&mut draft.meta));
        report.absorb(self.filter.filter_value(&mut meta));
        // the project is a folder's or a remote's name, which can be
        // anything (field test 9a: a folder named by a token reached every
        // event and commit message)
        let (project, r) = self.filter.filter_text(&draft.project);
        report.absorb(r);
        draft.project = project;
        let mut truncated = false;
        if draft.kind == Kind::ToolObservation
            && let Some(Value::String(out)) = body.get_mut("output")
        {
            let tools = &self.repo.config.tools;
            let (cut, was_cut) =
                truncate_output(out, tools.max_output_bytes, tools.max_output_lines);
            if was_cut {
                *out = cut;
                truncated = true;
            }
        }
        let cap = self.repo.config.hooks.max_text_bytes;
        truncated |= cap_strings(&mut body, cap) | cap_strings(&mut meta, cap);
        if let (Value::Object(mut b), Value::Object(m)) = (body, meta) {
            if truncated {
                b.insert("truncated".into(), Value::Bool(true));
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

    /// Marks `draft` personal when its writer did, the configured rules
    /// say so, or its session is personal already (`session_personal`,
    /// which it then sets).
    fn scope(&self, draft: &mut Draft, session_personal: &mut bool) {
        if *session_personal
            || scope::is_personal(&draft.meta)
            || scope::rules_make_personal(draft, &self.repo.config.personal)
        {
            scope::mark_personal(&mut draft.meta);
            *session_personal = true;
        }
    }

    /// Whether `session` recorded a personal event before (its marker).
    fn is_personal_session(&self, session: &str) -> bool {
        self.repo.layout().is_personal_session(session)
    }

    /// Remembers that `session` recorded a personal event: the rest of it,
    /// a resumed session included, stays personal.
    fn remember_personal_session(&self, session: &str) -> Result<()> {
        let dir = self.repo.layout().personal_sessions();
        let sharing = self.repo.sharing();
        sharing
            .create_dir_all(&dir)
            .map_err(|e| Error::io(&dir, e))?;
        let path = dir.join(session);
        std::fs::write(&path, b"")
            .and_then(|()| sharing.apply(&path))
            .map_err(|e| Error::io(&path, e))
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
        let Some(session) = drafts.first().map(|d| self.session_id(&d.session)) else {
            return Ok((Vec::new(), Report::default()));
        };
        let journal = Journal::new(&self.repo.journal_dir(), &session)?.shared(self.repo.sharing());
        let mut report = Report::default();
        let mut prepared = Vec::with_capacity(drafts.len());
        let was_personal = self.is_personal_session(&session);
        let mut personal = was_personal;
        for d in drafts {
            let (mut d, r) = self.prepare(d);
            self.scope(&mut d, &mut personal);
            report.absorb(r);
            prepared.push(d);
        }
        if personal && !was_personal {
            // before the events: a crash in between leaves the session
            // personal, never a personal event in a shared session
            self.remember_personal_session(&session)?;
        }
        let events = if self.once {
            journal.append_once_as(prepared, durability)?
        } else {
            journal.append_all_as(prepared, durability)?
        };
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
        mut sessions: Vec<(String, Vec<(u64, Draft)>)>,
    ) -> Result<(Vec<Sealed>, Report)> {
        // sealed oldest first: the commits of one import share a second,
        // and `memlog log` lists them newest first in the order they were
        // sealed (files are read in name order, not time order)
        sessions.sort_by_cached_key(|(_, drafts)| {
            drafts
                .iter()
                .map(|(_, d)| d.ts.clone())
                .min()
                .unwrap_or_default()
        });
        let mut report = Report::default();
        let mut requests = Vec::with_capacity(sessions.len());
        // what a forget here hid stays out, whatever ids it is given now
        let forgotten = crate::forgotten::Forgotten::load(self.repo)?;
        let mut left_out = 0;
        for (session, drafts) in sessions {
            let session = self.session_id(&session);
            crate::journal::validate_session(&session)?;
            let was_personal = self.is_personal_session(&session);
            let mut personal = was_personal;
            let mut events = Vec::with_capacity(drafts.len());
            for (seq, d) in drafts {
                let (mut d, r) = self.prepare(d);
                if forgotten.holds(&d) {
                    left_out += 1;
                    continue;
                }
                self.scope(&mut d, &mut personal);
                report.absorb(r);
                events.push(d.into_event(seq));
            }
            if personal && !was_personal {
                self.remember_personal_session(&session)?;
            }
            requests.push(SealRequest { session, events });
        }
        if left_out > 0 {
            report.warnings.push(format!(
                "left out {left_out} event(s) that a forget on this machine hid before"
            ));
        }
        Ok((seal_import(self.repo, &requests)?, report))
    }
}
