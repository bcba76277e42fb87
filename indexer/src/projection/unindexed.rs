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
//! A missing or stale index is then never a reason to answer a prompt
//! without the latest memories either: the next session's first prompt
//! comes a second after the last one sealed, long before a background
//! `memlog index` is done, and a hook never indexes itself (no fsync, no
//! index write, no lock wait on the prompt path). What a prompt reads is
//! bounded ([`Reach::Prompt`]: at most [`MAX_PROMPT_BYTES`], newest first),
//! so that even a repository whose index was never built
//! ([`Projections::empty`]) answers within a hook's budget, from its
//! latest sessions.
//!
//! What it finds, every read of the projections consults ([`Unindexed`]):
//! the forgets not applied yet hide what they name from search, context,
//! lookups and timelines (and so from the hooks, MCP and the viewer); the
//! live events not indexed yet join searches (ranked by full text as they
//! will be once indexed; they have no vector yet), lookups by id or prefix,
//! session listings and timelines. Searches score them by BM25 on the
//! index's and their own statistics together ([`crate::fts::Fts::relevance_of`]),
//! as the index will once it holds them, and a word only they hold is not
//! taken for a typo of an indexed one ([`Unindexed::holds_term`]). After a
//! history rewrite (a purge) whose rebuild has not run yet, the purge
//! records' event ids are hidden.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock};

use memlog_format::paths::WorkRoots;
use memlog_format::visibility::Forgets;
use memlog_format::{Event, Kind, segment};
use memlog_store::log::{Log, SegmentRef};
use memlog_store::view::{Changes, View};
use memlog_store::{ObjectId, Repo, journal};
use tantivy::tokenizer::TokenStream;

use crate::derive::Derived;
use crate::fts::{Filters, event_key};
use crate::session_row::SessionRow;
use crate::{Error, Result};

use super::{JournalTail, Projections};

/// How far a read looks past the index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach<'a> {
    /// Sealed sessions and live journals, whole: what a command or a
    /// server reads, which must reflect every acknowledged write (`record`
    /// included).
    Everything,
    /// What a prompt's context is drawn from (the hooks, the warm server):
    /// live journals, then new segments, newest first (down the ref's
    /// first parents), within [`MAX_PROMPT_BYTES`]; past it only forgets
    /// are read, and the background index brings the rest (a `git pull`
    /// of a week of sessions, an index never built). The journal of the
    /// session asking, if named, is not read: its context leaves that
    /// session out, and the journal grows with every tool call.
    Prompt {
        /// The session whose prompt is answered.
        asking: Option<&'a str>,
    },
}

/// Most bytes of journals and segments a prompt's read takes whole: a few
/// thousand events, searched in a few milliseconds.
pub const MAX_PROMPT_BYTES: usize = 4 << 20;
/// Most commits walked down from the tip to put new segments newest first.
const MAX_COMMITS: usize = 256;

/// An event the log holds and the index does not yet.
#[derive(Clone, Debug)]
pub struct UnindexedEvent {
    /// The event.
    pub event: Event,
    /// [`event_key`] of its id.
    pub key: u64,
    /// What the index will derive from it: its searchable text, tool and
    /// touched files, without the references its text makes (`mentions`
    /// is empty; [`UnindexedEvent::files`] finds them when a search filters
    /// by file).
    pub derived: Derived,
    /// Its time in milliseconds.
    pub ts_ms: i64,
    /// Whether it was read from a live journal (else from a sealed
    /// segment).
    pub from_journal: bool,
    /// Its files, touched or named, when first asked for.
    files: OnceLock<Vec<String>>,
    /// How its files are named ([`Repo::work_roots`]).
    roots: Arc<WorkRoots>,
}

impl UnindexedEvent {
    /// Every file it touches or names, as the index's `files` field will
    /// hold them.
    pub fn files(&self) -> &[String] {
        self.files.get_or_init(|| {
            let mentions = crate::derive::mentions_in(&self.event, &self.derived.text, &self.roots);
            crate::derive::files_of(&self.derived.touched, &mentions)
        })
    }
}

/// What the log held beyond the projections' watermark when last read
/// ([`Projections::read_unindexed`]); empty when the index is current.
#[derive(Clone, Debug, Default)]
pub struct Unindexed {
    /// Every forget, when some are not applied to the index yet (else the
    /// index's rows need no check).
    hiding: Option<Forgets>,
    /// Live events the index lacks, none of them hidden, in (session,
    /// time, seq) order.
    events: Vec<UnindexedEvent>,
    /// Where each key's event is in `events`.
    by_key: HashMap<u64, usize>,
    /// Every term of the searchable events' text, made when first asked
    /// for ([`Unindexed::holds_term`]).
    terms: OnceLock<HashSet<String>>,
    /// Whether sealed sessions are missing from the index.
    behind: bool,
    /// Whether the bound of [`Reach::Prompt`] left older unindexed events
    /// out.
    truncated: bool,
    /// For [`Reach::Prompt`]: the prompts other live sessions are being
    /// answered on right now ([`journal::prompts_in_progress`]), which a
    /// prompt's context leaves out, indexed or not.
    in_progress: HashSet<String>,
}

impl Unindexed {
    /// Whether `id` is a prompt another live session is being answered on
    /// right now (read for a prompt's context only).
    pub fn in_progress(&self, id: &str) -> bool {
        self.in_progress.contains(id)
    }

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
        self.get(event_key(id))
            .filter(|e| e.event.id.as_str() == id)
    }

    /// The one of this [`event_key`].
    pub fn get(&self, key: u64) -> Option<&UnindexedEvent> {
        self.by_key.get(&key).and_then(|i| self.events.get(*i))
    }

    /// The events a search ranks: searchable kinds with a text.
    pub fn searchable(&self) -> impl Iterator<Item = &UnindexedEvent> {
        self.events
            .iter()
            .filter(|u| !u.derived.text.is_empty() && crate::derive::is_searchable(&u.event.kind))
    }

    /// Whether a searchable event holds `term` (an analyzed term of the
    /// full-text index's text field). The first call analyzes every such
    /// event's text; it is asked only for query words the index lacks.
    pub fn holds_term(&self, term: &str) -> bool {
        self.terms
            .get_or_init(|| {
                let mut analyzer = crate::tokenizer::code_analyzer();
                let mut terms = HashSet::new();
                for u in self.searchable() {
                    let mut stream = analyzer.token_stream(&u.derived.text);
                    while let Some(tok) = stream.next() {
                        terms.insert(tok.text.clone());
                    }
                }
                terms
            })
            .contains(term)
    }

    /// Keys of the searchable events just before and after `key` in its
    /// session, when the event is one of these.
    pub fn neighbours(&self, key: u64) -> Option<[Option<u64>; 2]> {
        let i = *self.by_key.get(&key)?;
        let session = &self.events.get(i)?.event.session;
        // sorted by session: its other events are on either side
        let nearest = |mut side: Box<dyn Iterator<Item = &UnindexedEvent> + '_>| {
            side.find(|u| {
                u.event.session != *session || crate::derive::is_searchable(&u.event.kind)
            })
            .filter(|u| u.event.session == *session)
            .map(|u| u.key)
        };
        Some([
            nearest(Box::new(self.events.get(..i)?.iter().rev())),
            nearest(Box::new(self.events.get(i + 1..)?.iter())),
        ])
    }

    /// For an event among these: the key of the last `agent_response`
    /// after it in its turn (before its session's next prompt), if any;
    /// `None` when the event is not among these.
    pub fn turn_answer(&self, key: u64) -> Option<Option<u64>> {
        let i = *self.by_key.get(&key)?;
        let session = &self.events.get(i)?.event.session;
        Some(
            self.events
                .get(i + 1..)?
                .iter()
                .take_while(|u| {
                    u.event.session == *session && u.event.kind != memlog_format::Kind::UserPrompt
                })
                .filter(|u| u.event.kind == memlog_format::Kind::AgentResponse)
                .last()
                .map(|u| u.key),
        )
    }

    /// Whether `u` passes a search's filters, as the full-text filters
    /// take them (`fts` matches the file filter as its `files` field does).
    pub fn passes(fts: &crate::fts::Fts, u: &UnindexedEvent, f: &Filters) -> bool {
        let e = &u.event;
        (f.kinds.is_empty() || f.kinds.iter().any(|k| k == e.kind.as_str()))
            && f.session.as_ref().is_none_or(|s| *s == e.session)
            && f.exclude_session.as_ref().is_none_or(|s| *s != e.session)
            && f.since_ms.is_none_or(|ms| u.ts_ms >= ms)
            && f.until_ms.is_none_or(|ms| u.ts_ms < ms)
            && f.file
                .as_ref()
                .is_none_or(|file| fts.names_file(u.files(), file))
    }

    /// The sessions with prompts among these events, most recently active
    /// first, as the `sessions` table would list them (counted over these
    /// events alone: a session the index holds part of is listed by the
    /// index).
    pub fn sessions(&self) -> Vec<SessionRow> {
        let mut rows: Vec<SessionRow> = Vec::new();
        for u in &self.events {
            let e = &u.event;
            let i = match rows.iter().position(|r| r.session == e.session) {
                Some(i) => i,
                None => {
                    rows.push(SessionRow {
                        session: e.session.clone(),
                        first_ts: e.ts.clone(),
                        last_ts: e.ts.clone(),
                        events: 0,
                        prompts: 0,
                        tool_calls: 0,
                        first_prompt: None,
                        branch: e
                            .meta
                            .get("branch")
                            .and_then(|b| b.as_str())
                            .map(str::to_string),
                    });
                    rows.len() - 1
                }
            };
            let Some(row) = rows.get_mut(i) else {
                continue;
            };
            if e.ts > row.last_ts {
                row.last_ts = e.ts.clone();
            }
            row.events += 1;
            match e.kind {
                Kind::UserPrompt => {
                    row.prompts += 1;
                    row.first_prompt
                        .get_or_insert_with(|| u.derived.text.clone());
                }
                Kind::ToolObservation => row.tool_calls += 1,
                _ => {}
            }
        }
        rows.retain(|r| r.prompts > 0);
        rows.sort_by(|a, b| b.last_ts.cmp(&a.last_ts));
        rows
    }

    /// Whether the bound of [`Reach::Prompt`] left older unindexed events
    /// out.
    pub fn is_truncated(&self) -> bool {
        self.truncated
    }

    /// Whether sealed sessions are missing from the index (a hook then
    /// starts a background `memlog index`).
    pub fn is_behind(&self) -> bool {
        self.behind
    }

    fn read(p: &Projections, repo: &Repo, reach: Reach) -> Result<Unindexed> {
        let (mut budget, asking) = match reach {
            Reach::Everything => (usize::MAX, None),
            Reach::Prompt { asking } => (MAX_PROMPT_BYTES, asking),
        };
        let mut truncated = false;
        let mut events = Vec::new();
        // Journals first: the newest events of all.
        let marks = p.journal_marks()?;
        let mut in_progress = HashSet::new();
        for f in journal::list(&repo.journal_dir())? {
            if matches!(reach, Reach::Prompt { .. }) && asking != Some(f.session.as_str()) {
                in_progress.extend(journal::prompts_in_progress(&f)?);
            }
            if asking == Some(f.session.as_str()) || budget == 0 {
                continue;
            }
            if let Some(tail) = JournalTail::read(&f, marks.get(&f.session), budget as u64)? {
                truncated |= tail.cut;
                budget = budget.saturating_sub(tail.bytes);
                events.extend(tail.events);
            }
        }
        // (journals' events come first in `events`)
        let journal_events = events.len();
        let indexed_commit = p.graph.get_meta("indexed_commit")?;
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
                let indexed_tree = p.graph.get_meta("indexed_tree")?;
                match trees.changes_since(repo, indexed_tree.as_deref())? {
                    Changes::Added(segments) => {
                        let segments = match reach {
                            Reach::Everything => segments,
                            Reach::Prompt { .. } => newest_first(&log, &view, segments)?,
                        };
                        // Past the budget only forgets matter, and only to
                        // an index that holds what they name.
                        let forgets_matter = indexed_tree.is_some();
                        for seg in &segments {
                            if budget == 0 && !forgets_matter {
                                truncated = true;
                                break;
                            }
                            let bytes = match log.read_segment_bytes(seg) {
                                Ok(bytes) => bytes,
                                // damaged: only its lines whose ids still
                                // match their content (fsck names it)
                                Err(memlog_store::Error::DamagedSegment { .. }) => {
                                    events.extend(log.read_segment(seg, true)?.0);
                                    continue;
                                }
                                Err(e) => return Err(e.into()),
                            };
                            if bytes.len() <= budget {
                                budget -= bytes.len();
                                events.extend(segment::decode_trusted(&bytes).0);
                            } else if memchr_forget(&bytes) {
                                truncated = true;
                                budget = 0;
                                let (all, _) = segment::decode_trusted(&bytes);
                                events.extend(all.into_iter().filter(|e| e.kind == Kind::Forget));
                            } else {
                                truncated = true;
                                // its newest lines, as many as the budget holds
                                let rest = bytes.get(bytes.len() - budget..).unwrap_or_default();
                                events.extend(segment::decode_trusted(after_first_line(rest)).0);
                                budget = 0;
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
        let forgetting = !erased.is_empty() || events.iter().any(|e| e.kind == Kind::Forget);
        if events.is_empty() && !forgetting {
            return Ok(Unindexed {
                behind,
                truncated,
                in_progress,
                ..Unindexed::default()
            });
        }
        let mut forgets = p.load_forgets()?;
        for e in &events {
            forgets.add(e);
        }
        forgets.hide_ids(erased.iter().map(String::as_str));
        let roots = Arc::new(repo.work_roots());
        let mut seen = HashSet::new();
        let mut live = Vec::new();
        for (i, e) in events.into_iter().enumerate() {
            if forgets.hides(&e) || !seen.insert(e.id.clone()) || is_indexed(p, &e.id)? {
                continue;
            }
            live.push(UnindexedEvent {
                key: event_key(&e.id),
                derived: crate::derive::derive_unreferenced_in(&e, &roots),
                ts_ms: memlog_format::time::to_ms(&e.ts),
                from_journal: i < journal_events,
                event: e,
                files: OnceLock::new(),
                roots: Arc::clone(&roots),
            });
        }
        live.sort_by(|a, b| {
            let a = &a.event;
            let b = &b.event;
            (&a.session, &a.ts, a.seq).cmp(&(&b.session, &b.ts, b.seq))
        });
        let by_key = live.iter().enumerate().map(|(i, u)| (u.key, i)).collect();
        Ok(Unindexed {
            hiding: forgetting.then_some(forgets),
            events: live,
            by_key,
            terms: OnceLock::new(),
            behind,
            truncated,
            in_progress,
        })
    }
}

/// `segments` (new ones of `view`), those the shared ref's tip and its
/// first parents added newest first, then the rest (the personal ref's,
/// merged ones, those past [`MAX_COMMITS`]) as they came.
fn newest_first(log: &Log, view: &View, segments: Vec<SegmentRef>) -> Result<Vec<SegmentRef>> {
    if segments.len() < 2 {
        return Ok(segments);
    }
    let mut wanted: HashMap<String, (usize, SegmentRef)> = segments
        .into_iter()
        .enumerate()
        .map(|(i, s)| (s.hash.clone(), (i, s)))
        .collect();
    let mut ordered = Vec::with_capacity(wanted.len());
    let mut commit: Option<ObjectId> = view.shared;
    for _ in 0..MAX_COMMITS {
        let Some(id) = commit.filter(|_| !wanted.is_empty()) else {
            break;
        };
        let info = log.commit(id)?;
        for seg in log.added_segments(&info)? {
            if let Some((_, s)) = wanted.remove(&seg.hash) {
                ordered.push(s);
            }
        }
        commit = info.parents.first().copied();
    }
    let mut rest: Vec<(usize, SegmentRef)> = wanted.into_values().collect();
    rest.sort_by_key(|(i, _)| *i);
    ordered.extend(rest.into_iter().map(|(_, s)| s));
    Ok(ordered)
}

/// `bytes` from their second line on: a cut start is mid-line.
pub(super) fn after_first_line(bytes: &[u8]) -> &[u8] {
    bytes
        .iter()
        .position(|b| *b == b'\n')
        .map_or(&bytes[..0], |i| &bytes[i + 1..])
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

/// Whether the index holds the event with this full id.
fn is_indexed(p: &Projections, id: &str) -> Result<bool> {
    let sql = |e| Error::sql(std::path::Path::new("graph.sqlite"), e);
    let mut stmt = p
        .graph
        .conn
        .prepare_cached("SELECT 1 FROM events WHERE key = ?1 AND id = ?2")
        .map_err(sql)?;
    stmt.exists(rusqlite::params![event_key(id) as i64, id])
        .map_err(sql)
}
