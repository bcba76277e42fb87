//! The unindexed tail: what the log holds that the projections do not hold
//! yet — sealed segments newer than their watermark (a session sealed a
//! moment ago, sessions a `git pull` brought) and the unread part of live
//! journals — read directly and searched by one bounded full-text pass.
//!
//! A missing or stale index is then never a reason to answer without the
//! latest memories: the next session's first prompt comes a second after
//! the last one sealed, long before a background `memlog index` is done,
//! and a hook never indexes itself (no fsync, no index write, no lock wait
//! on the prompt path). [`Projections::read_tail`] reads it once per
//! process (hook, one-shot search) or per request (the warm server, MCP);
//! [`crate::search::search`] ranks its events with the indexed ones, on the
//! index's own full-text statistics, so that both score alike.
//!
//! Bounded: at most [`MAX_TAIL_BYTES`] of journals and segments, newest
//! first (journals, then segments from the ref's tip down its first
//! parents), so that even a repository whose index was never built
//! answers within a hook's budget, from its latest sessions.

use std::collections::{HashMap, HashSet};
use std::io::{Read, Seek, SeekFrom};

use memlog_format::visibility::Forgets;
use memlog_format::{Event, segment};
use memlog_store::journal;
use memlog_store::log::Log;
use memlog_store::{ObjectId, Repo};
use tantivy::query::Bm25StatisticsProvider;
use tantivy::tokenizer::TokenStream;

use crate::derive;
use crate::fts::{Filters, event_key, query_terms};
use crate::projection::Projections;
use crate::{Error, Result};

/// Most bytes of journals and segments a tail reads: a few thousand
/// events, searched in a few milliseconds.
pub const MAX_TAIL_BYTES: usize = 4 << 20;
/// Most commits walked down from the tip for the tail's segments.
const MAX_COMMITS: usize = 256;

/// BM25's parameters, as tantivy scores the index.
const K1: f32 = 1.2;
const B: f32 = 0.75;
/// Boost of a whole identifier over its parts, as in [`crate::fts`].
const WHOLE_IDENTIFIER_BOOST: f32 = 2.0;

/// One searchable event of the tail.
#[derive(Clone, Debug)]
pub struct TailDoc {
    /// The event as logged.
    pub event: Event,
    /// [`event_key`] of its id.
    pub key: u64,
    /// Its searchable text ([`derive::derive_in`]).
    pub text: String,
    /// Its time in milliseconds.
    pub ts_ms: i64,
    /// Files it touched or mentions, as the full-text filter compares
    /// them (normalised, lowercase).
    pub files: Vec<String>,
}

/// The events the projections lack, searchable.
#[derive(Clone, Debug, Default)]
pub struct Tail {
    /// Searchable events, in (session, time, seq) order.
    docs: Vec<TailDoc>,
    by_key: HashMap<u64, usize>,
    /// Every term of the docs' text, made when first asked for.
    terms: std::sync::OnceLock<HashSet<String>>,
    /// Events read (bookkeeping and hidden ones included).
    pub events: usize,
    /// Whether the bound left older unindexed events out.
    pub truncated: bool,
}

/// A full-text candidate of the tail.
#[derive(Clone, Copy, Debug)]
pub struct TailCandidate {
    /// [`event_key`] of the event.
    pub key: u64,
    /// BM25 relative to an average document containing the whole query
    /// once, capped at 1, as [`crate::fts::Candidate::relevance`].
    pub relevance: f32,
}

impl Tail {
    /// Whether it holds no searchable event.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// Its searchable events.
    pub fn docs(&self) -> &[TailDoc] {
        &self.docs
    }

    /// The searchable event of `key`, if the tail holds it.
    pub fn get(&self, key: u64) -> Option<&TailDoc> {
        self.by_key.get(&key).and_then(|i| self.docs.get(*i))
    }

    /// Whether some event of the tail holds `term` (an analyzed term of
    /// the full-text index's text field). The first call analyzes every
    /// event's text; it is asked only for query words the index lacks.
    pub fn holds_term(&self, term: &str) -> bool {
        self.terms
            .get_or_init(|| {
                let mut analyzer = crate::tokenizer::code_analyzer();
                let mut terms = HashSet::new();
                for doc in &self.docs {
                    let mut stream = analyzer.token_stream(&doc.text);
                    while let Some(tok) = stream.next() {
                        terms.insert(tok.text.clone());
                    }
                }
                terms
            })
            .contains(term)
    }

    /// Keys of the searchable events just before and after `key` in its
    /// session, when the tail holds it.
    pub fn neighbours(&self, key: u64) -> Option<[Option<u64>; 2]> {
        let i = *self.by_key.get(&key)?;
        let doc = self.docs.get(i)?;
        let same = |j: usize| {
            self.docs
                .get(j)
                .filter(|d| d.event.session == doc.event.session)
                .map(|d| d.key)
        };
        Some([i.checked_sub(1).and_then(same), same(i + 1)])
    }

    /// The sessions with prompts among the tail's events, most recently
    /// active first, as the `sessions` table would list them (counted
    /// over the tail alone: a session the index holds part of is listed
    /// by the index).
    pub fn sessions(&self) -> Vec<crate::overview::SessionRow> {
        use memlog_format::Kind;
        let mut rows: Vec<(String, crate::overview::SessionRow)> = Vec::new();
        for doc in &self.docs {
            let e = &doc.event;
            let i = match rows.iter().position(|(_, r)| r.session == e.session) {
                Some(i) => i,
                None => {
                    rows.push((
                        e.ts.clone(),
                        crate::overview::SessionRow {
                            session: e.session.clone(),
                            first_ts: e.ts.clone(),
                            events: 0,
                            prompts: 0,
                            tool_calls: 0,
                            first_prompt: None,
                            branch: e
                                .meta
                                .get("branch")
                                .and_then(|b| b.as_str())
                                .map(str::to_string),
                        },
                    ));
                    rows.len() - 1
                }
            };
            let Some((last, row)) = rows.get_mut(i) else {
                continue;
            };
            *last = e.ts.clone().max(last.clone());
            row.events += 1;
            match e.kind {
                Kind::UserPrompt => {
                    row.prompts += 1;
                    row.first_prompt.get_or_insert_with(|| doc.text.clone());
                }
                Kind::ToolObservation => row.tool_calls += 1,
                _ => {}
            }
        }
        rows.retain(|(_, r)| r.prompts > 0);
        rows.sort_by(|a, b| b.0.cmp(&a.0));
        rows.into_iter().map(|(_, r)| r).collect()
    }

    /// Reads what the log holds beyond `p`'s watermark: the unread part of
    /// every journal, then the segments the ref's tip has that the indexed
    /// tree has not, newest first, within [`MAX_TAIL_BYTES`]. Forgotten
    /// events (by the index's forgets or the tail's own) and events the
    /// index holds already are left out. The journal of session `skip`,
    /// if given, is not read.
    pub fn read(repo: &Repo, p: &Projections, skip: Option<&str>) -> Result<Tail> {
        let mut budget = MAX_TAIL_BYTES;
        let mut truncated = false;
        let mut events = Vec::new();
        let marks = p.journal_marks()?;
        // Journals first: the newest events of all.
        for f in journal::list(&repo.journal_dir())? {
            if Some(f.session.as_str()) == skip {
                continue;
            }
            let start = match marks.get(&f.session) {
                Some(m) if m.id == crate::projection::file_id(&f.path) && m.offset <= f.bytes => {
                    m.offset
                }
                _ => 0,
            };
            let unread = f.bytes.saturating_sub(start) as usize;
            if unread == 0 {
                continue;
            }
            // past the budget, the journal's last part (its newest lines)
            let from = if unread > budget {
                truncated = true;
                f.bytes - budget as u64
            } else {
                start
            };
            let Some(bytes) = read_from(&f.path, from)? else {
                continue;
            };
            budget = budget.saturating_sub(bytes.len());
            // a cut start is mid-line: skip to the next whole line
            let whole = if from > start {
                bytes
                    .iter()
                    .position(|b| *b == b'\n')
                    .map_or(&bytes[..0], |i| &bytes[i + 1..])
            } else {
                &bytes[..]
            };
            let complete = whole.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
            events.extend(segment::decode(&whole[..complete]).0);
            if budget == 0 {
                break;
            }
        }
        if budget > 0 {
            truncated |= tail_segments(repo, p, &mut budget, &mut events)?;
        } else {
            truncated |= p.graph.get_meta("indexed_commit")?
                != Log::new(repo).peek_tip()?.map(|t| t.to_string());
        }
        let read = events.len();
        let mut forgets = p.load_forgets()?;
        for e in &events {
            forgets.add(e);
        }
        let mut tail = Tail::from_events(repo, p, events, &forgets, &marks)?;
        tail.events = read;
        tail.truncated = truncated;
        Ok(tail)
    }

    /// The searchable events among `events`, each once, neither hidden by
    /// `forgets` nor indexed already (only sessions whose journal the index
    /// read can have both: their segment repeats what it holds).
    fn from_events(
        repo: &Repo,
        p: &Projections,
        events: Vec<Event>,
        forgets: &Forgets,
        marks: &HashMap<String, crate::projection::JournalMark>,
    ) -> Result<Tail> {
        let roots = repo.work_roots();
        let mut seen = HashSet::new();
        let mut docs = Vec::new();
        for e in events {
            let key = event_key(&e.id);
            if forgets.hides(&e) || !seen.insert(key) || !derive::is_searchable(&e.kind) {
                continue;
            }
            if marks.contains_key(&e.session) && p.holds(key)? {
                continue;
            }
            let d = derive::derive_in(&e, &roots);
            if d.text.is_empty() {
                continue;
            }
            let files = d
                .files()
                .iter()
                .map(|f| memlog_format::refs::normalize_path(f).to_lowercase())
                .collect();
            docs.push(TailDoc {
                key,
                ts_ms: memlog_format::time::to_ms(&e.ts),
                text: d.text,
                files,
                event: e,
            });
        }
        docs.sort_by(|a, b| {
            (&a.event.session, &a.event.ts, a.event.seq).cmp(&(
                &b.event.session,
                &b.event.ts,
                b.event.seq,
            ))
        });
        let by_key = docs.iter().enumerate().map(|(i, d)| (d.key, i)).collect();
        Ok(Tail {
            docs,
            by_key,
            terms: std::sync::OnceLock::new(),
            events: 0,
            truncated: false,
        })
    }

    /// The best `limit` events of the tail for `text` under `filters`, by
    /// BM25 on the statistics of the index and the tail together (so that
    /// a word only the tail holds is as rare as it is), scored as the
    /// index scores its own ([`crate::fts::Fts::search`]).
    pub fn search(
        &self,
        p: &Projections,
        text: &str,
        filters: &Filters,
        limit: usize,
    ) -> Result<Vec<TailCandidate>> {
        if self.docs.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let fts = p.fts();
        let terms: Vec<(String, bool)> = query_terms(&fts.index, fts.fields.text, text)
            .into_iter()
            .filter_map(|(t, whole)| t.value().as_str().map(|s| (s.to_string(), whole)))
            .collect();
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let slot: HashMap<&str, usize> = terms
            .iter()
            .enumerate()
            .map(|(i, (t, _))| (t.as_str(), i))
            .collect();
        // Each document's length and the frequency of each query term.
        let mut analyzer = fts
            .index
            .tokenizers()
            .get(crate::tokenizer::CODE)
            .unwrap_or_else(crate::tokenizer::code_analyzer);
        let mut tail_df = vec![0u64; terms.len()];
        let mut tail_tokens = 0u64;
        let mut counted: Vec<Counted> = Vec::new();
        for (i, doc) in self.docs.iter().enumerate() {
            let mut len = 0u32;
            let mut tf: Vec<(usize, u32)> = Vec::new();
            let mut stream = analyzer.token_stream(&doc.text);
            while let Some(tok) = stream.next() {
                len += 1;
                if let Some(&s) = slot.get(tok.text.as_str()) {
                    match tf.iter_mut().find(|(t, _)| *t == s) {
                        Some((_, n)) => *n += 1,
                        None => tf.push((s, 1)),
                    }
                }
            }
            tail_tokens += u64::from(len);
            for (s, _) in &tf {
                tail_df[*s] += 1;
            }
            if !tf.is_empty() && passes(doc, filters) {
                counted.push(Counted { doc: i, len, tf });
            }
        }
        let searcher = fts.searcher()?;
        let err = |e| Error::fts(std::path::Path::new("full-text index"), e);
        let index_docs = searcher.num_docs();
        let index_tokens = searcher.total_num_tokens(fts.fields.text).map_err(err)?;
        let n = (index_docs + self.docs.len() as u64) as f32;
        let average = ((index_tokens + tail_tokens) as f32 / n.max(1.0)).max(1.0);
        let mut idf = Vec::with_capacity(terms.len());
        let mut ideal = 0.0f32;
        for (i, (term, whole)) in terms.iter().enumerate() {
            let indexed = searcher
                .doc_freq(&tantivy::Term::from_field_text(fts.fields.text, term))
                .map_err(err)?;
            let df = (indexed + tail_df[i]) as f32;
            let boost = if *whole { WHOLE_IDENTIFIER_BOOST } else { 1.0 };
            let w = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            if df > 0.0 {
                ideal += boost * w;
            } else if !whole {
                ideal += (1.0 + (n - 0.5) / 1.5).ln();
            }
            idf.push(boost * w);
        }
        let mut scored: Vec<(f32, u64)> = counted
            .into_iter()
            .filter_map(|Counted { doc: i, len, tf }| {
                let norm = K1 * (1.0 - B + B * len as f32 / average);
                let score: f32 = tf
                    .iter()
                    .map(|(s, f)| {
                        let f = *f as f32;
                        idf.get(*s).copied().unwrap_or(0.0) * (1.0 + K1) * f / (f + norm)
                    })
                    .sum();
                self.docs.get(i).map(|d| (score, d.key))
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.truncate(limit);
        Ok(scored
            .into_iter()
            .map(|(score, key)| TailCandidate {
                key,
                relevance: if ideal > 0.0 {
                    (score / ideal).min(1.0)
                } else {
                    0.0
                },
            })
            .collect())
    }
}

/// A document's length in tokens and the frequency of the query's terms
/// in it (by their place in the query).
struct Counted {
    doc: usize,
    len: u32,
    tf: Vec<(usize, u32)>,
}

/// Whether a tail event passes the filters, as the full-text filters take
/// them.
pub fn passes(doc: &TailDoc, f: &Filters) -> bool {
    let e = &doc.event;
    (f.kinds.is_empty() || f.kinds.iter().any(|k| k == e.kind.as_str()))
        && f.session.as_ref().is_none_or(|s| *s == e.session)
        && f.exclude_session.as_ref().is_none_or(|s| *s != e.session)
        && f.since_ms.is_none_or(|ms| doc.ts_ms >= ms)
        && f.until_ms.is_none_or(|ms| doc.ts_ms < ms)
        && f.file.as_ref().is_none_or(|file| {
            let file = memlog_format::refs::normalize_path(file).to_lowercase();
            doc.files.contains(&file)
        })
}

/// The bytes of `path` from `offset` on; `None` when it is gone (sealed
/// meanwhile: its events are in a segment now).
fn read_from(path: &std::path::Path, offset: u64) -> Result<Option<Vec<u8>>> {
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(path, e)),
    };
    let mut bytes = Vec::new();
    file.seek(SeekFrom::Start(offset))
        .and_then(|_| file.read_to_end(&mut bytes))
        .map_err(|e| Error::io(path, e))?;
    Ok(Some(bytes))
}

/// Adds to `events` the segments the ref's tip has and the indexed tree
/// has not, newest first (walking down the tip's first parents), while
/// `budget` lasts. Returns whether some were left out.
fn tail_segments(
    repo: &Repo,
    p: &Projections,
    budget: &mut usize,
    events: &mut Vec<Event>,
) -> Result<bool> {
    let log = Log::new(repo);
    let Some(tip) = log.peek_tip()? else {
        return Ok(false);
    };
    let indexed_commit = p.graph.get_meta("indexed_commit")?;
    if indexed_commit.as_deref() == Some(tip.to_string().as_str()) {
        return Ok(false);
    }
    let store = |e: memlog_store::Error| Error::Invalid(format!("reading the memlog ref: {e}"));
    let tip_tree = log.commit(tip).map_err(store)?.tree;
    // The segments to read, when the index has a tree to compare with:
    // else every segment of the tip is unindexed.
    let mut wanted: Option<HashSet<String>> = match p
        .graph
        .get_meta("indexed_tree")?
        .and_then(|t| ObjectId::from_hex(t.as_bytes()).ok())
    {
        Some(old) if log.has_tree(old) => Some(
            log.diff_trees(old, tip_tree)
                .map_err(store)?
                .added
                .into_iter()
                .map(|s| s.hash)
                .collect(),
        ),
        _ => None,
    };
    let mut commit = tip;
    for _ in 0..MAX_COMMITS {
        if wanted.as_ref().is_some_and(HashSet::is_empty)
            || indexed_commit.as_deref() == Some(commit.to_string().as_str())
        {
            return Ok(false);
        }
        let info = log.commit(commit).map_err(store)?;
        for seg in log.added_segments(&info).map_err(store)? {
            if let Some(w) = wanted.as_mut()
                && !w.remove(&seg.hash)
            {
                continue;
            }
            let bytes = log.read_blob(seg.blob).map_err(store)?;
            if bytes.len() > *budget {
                // the segment's newest lines, as many as the budget holds
                let from = bytes.len() - *budget;
                let rest = &bytes[from..];
                let whole = rest
                    .iter()
                    .position(|b| *b == b'\n')
                    .map_or(&rest[..0], |i| &rest[i + 1..]);
                events.extend(segment::decode_trusted(whole).0);
                *budget = 0;
                return Ok(true);
            }
            *budget -= bytes.len();
            // Trusted: git checked the blob; `memlog fsck` checks names.
            let evs = segment::decode_trusted(&bytes).0;
            events.extend(evs);
        }
        match info.parents.first() {
            Some(parent) => commit = *parent,
            None => return Ok(false),
        }
    }
    Ok(wanted.is_none_or(|w| !w.is_empty()))
}
