//! What the log holds that the projections have not indexed yet, read at
//! query time so that every read reflects every acknowledged write.
//!
//! An index trails the log: a one-shot command updates it first, but not
//! while another process holds the writer lock (`memlog watch`, a
//! background `memlog index`), and a hook or the warm server never updates
//! it at all. So a `forget` could still be injected by the next prompt, and
//! a note just sealed could be missing from the next search. Instead of
//! waiting for the index, a read looks past its watermark: the segments the
//! log's trees have beyond the indexed ones, and (for [`Reach::Everything`])
//! the journals' tails beyond the indexed offsets. That is one ref read and
//! a stat per journal when the index is current, as [`Projections::is_fresh`]
//! already costs, and a few small reads when it is not.
//!
//! What it finds, every read of the projections consults ([`Unindexed`]):
//! the forgets not applied yet hide what they name from search, context,
//! lookups and timelines (and so from the hooks, MCP and the viewer); the
//! live events not indexed yet join searches (ranked by full text as they
//! will be once indexed; they have no vector yet), lookups by id or prefix,
//! session listings and timelines. After a history rewrite (a purge) whose
//! rebuild has not run yet, the purge records' event ids are hidden.

use std::collections::HashSet;

use memlog_format::visibility::Forgets;
use memlog_format::{Event, Kind, segment};
use memlog_store::log::Log;
use memlog_store::view::{Changes, View};
use memlog_store::{Repo, journal};

use crate::Result;
use crate::derive::Derived;
use crate::lookup::is_indexed;

use super::{JournalTail, Projections};

/// How far a read looks past the index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// Sealed sessions and live journals: what a command or a server reads,
    /// which must reflect every acknowledged write (`record` included).
    Everything,
    /// Sealed sessions: what a hook injects, memories of earlier sessions
    /// (a live session's journal is left to the index: reading its tail on
    /// every prompt would cost the hook more than the rest of its work).
    /// Past [`HOOK_SEGMENTS`] new segments only forgets are read from them.
    Sealed,
}

/// New segments a hook reads whole; past this (a `git pull` of a week of
/// sessions before the index caught up) it reads only those that hold a
/// forget, and the background index brings the rest.
pub const HOOK_SEGMENTS: usize = 64;

/// An event the log holds and the index does not yet.
#[derive(Clone, Debug)]
pub struct UnindexedEvent {
    /// The event.
    pub event: Event,
    /// What the index will derive from it (its searchable text, files).
    pub derived: Derived,
    /// Its time in milliseconds.
    pub ts_ms: i64,
}

/// What the log held beyond the projections' watermark when last read
/// ([`Projections::read_unindexed`]); empty when the index is current.
#[derive(Clone, Debug, Default)]
pub struct Unindexed {
    /// Every forget, when some are not applied to the index yet (else the
    /// index's rows need no check).
    hiding: Option<Forgets>,
    /// Live events the index lacks, none of them hidden, in log order.
    events: Vec<UnindexedEvent>,
    /// Whether sealed sessions are missing from the index.
    behind: bool,
}

impl Unindexed {
    /// Whether a forget the index has not applied yet hides `event` (a row
    /// of the index).
    pub fn hides(&self, event: &Event) -> bool {
        self.hiding.as_ref().is_some_and(|f| f.hides(event))
    }

    /// Whether some forget is not applied to the index yet: its rows must
    /// then be checked with [`Unindexed::hides`].
    pub fn hides_any(&self) -> bool {
        self.hiding.is_some()
    }

    /// Whether such a forget hides the whole of `session`.
    pub fn hides_session(&self, session: &str) -> bool {
        self.hiding
            .as_ref()
            .is_some_and(|f| f.hides_session(session))
    }

    /// The live events the index lacks.
    pub fn events(&self) -> &[UnindexedEvent] {
        &self.events
    }

    /// The one with this full id.
    pub fn event(&self, id: &str) -> Option<&UnindexedEvent> {
        self.events.iter().find(|e| e.event.id.as_str() == id)
    }

    /// Whether sealed sessions are missing from the index (a hook then
    /// starts a background `memlog index`).
    pub fn is_behind(&self) -> bool {
        self.behind
    }

    fn read(p: &Projections, repo: &Repo, reach: Reach) -> Result<Unindexed> {
        let indexed_commit = p.graph.get_meta("indexed_commit")?;
        let mut events = Vec::new();
        let mut erased: Vec<String> = Vec::new();
        let mut behind = false;
        // The ref's file first: reading it through git costs more, and the
        // index is current most of the time.
        if View::peek(repo)?.key() != indexed_commit {
            let view = View::read(repo)?;
            behind = view.key() != indexed_commit;
            if behind {
                let trees = view.trees(repo)?;
                let log = Log::new(repo);
                match trees.changes_since(repo, p.graph.get_meta("indexed_tree")?.as_deref())? {
                    Changes::Added(segments) => {
                        let whole = reach == Reach::Everything || segments.len() <= HOOK_SEGMENTS;
                        for seg in &segments {
                            let bytes = log.read_segment_bytes(seg)?;
                            if whole || memchr_forget(&bytes) {
                                events.extend(segment::decode_trusted(&bytes).0);
                            }
                        }
                    }
                    // A purge rewrote history and the rebuild has not run:
                    // what it erased is hidden by its records.
                    Changes::Rewritten(_) => {
                        if let Some(tree) = trees.shared {
                            for (_, record) in
                                memlog_store::purge_record::records_in_tree(&log, tree)?
                            {
                                erased.extend(record.events);
                            }
                        }
                    }
                }
            }
        }
        if reach == Reach::Everything {
            let marks = p.journal_marks()?;
            for f in journal::list(&repo.journal_dir())? {
                if let Some(tail) = JournalTail::read(&f, marks.get(&f.session))? {
                    events.extend(tail.events);
                }
            }
        }
        let forgetting = !erased.is_empty() || events.iter().any(|e| e.kind == Kind::Forget);
        if events.is_empty() && !forgetting {
            return Ok(Unindexed {
                behind,
                ..Unindexed::default()
            });
        }
        let mut forgets = p.load_forgets()?;
        for e in &events {
            forgets.add(e);
        }
        forgets.hide_ids(erased.iter().map(String::as_str));
        let roots = repo.work_roots();
        let mut seen = HashSet::new();
        let mut live = Vec::new();
        for e in events {
            if forgets.hides(&e) || !seen.insert(e.id.clone()) || is_indexed(p, &e.id)? {
                continue;
            }
            live.push(UnindexedEvent {
                derived: crate::derive::derive_in(&e, &roots),
                ts_ms: memlog_format::time::to_ms(&e.ts),
                event: e,
            });
        }
        Ok(Unindexed {
            hiding: forgetting.then_some(forgets),
            events: live,
            behind,
        })
    }
}

impl Projections {
    /// Reads what the log holds beyond these projections (see
    /// [`Unindexed`]); every read of them reflects it from now on, until
    /// the next call. A server calls it before each request.
    pub fn read_unindexed(&mut self, repo: &Repo, reach: Reach) -> Result<()> {
        self.unindexed = Unindexed::read(self, repo, reach)?;
        Ok(())
    }

    /// What the log held beyond these projections when last read.
    pub fn unindexed(&self) -> &Unindexed {
        &self.unindexed
    }
}

/// Whether segment bytes hold a `forget` event.
pub(super) fn memchr_forget(bytes: &[u8]) -> bool {
    memchr::memmem::find(bytes, br#""kind":"forget""#).is_some()
}
