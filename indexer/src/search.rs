//! Search: full-text and semantic candidates, ranked together.
//!
//! Each signal is in [0, 1] and weighted as `.memlog.yaml`'s `ranking` says
//! (DESIGN: semantic 0.4, full-text 0.25, recency 0.2, importance 0.15).
//! A signal that is not available (semantic, when there are no vectors or
//! no query vector; full text in vector mode) gives its weight to the
//! others in proportion. Full-text relevance is BM25 relative to an average
//! document that contains the whole query once, so it means the same thing
//! from one query to the next; semantic similarity is the cosine to the
//! query relative to the best candidate's. Reciprocal-rank fusion
//! (`ranking.fusion: rrf`) replaces the two relevance signals by the sum of
//! 1 / (k + rank) over the two lists.
//!
//! Then relevance spreads, depth 1 (seed 003): an event is lifted by a
//! share (`ranking.spread`) of what the best of its session neighbours
//! (when vectors take part) and the events reinforced together with it
//! have over it, and they join the candidates;
//! and reinforcement ([`crate::reinforce`]) moves each event's importance,
//! whose base is the kind's prior raised by memory level and recalls
//! ([`crate::memory`]).

use std::collections::HashMap;

use memlog_format::EventId;
use memlog_format::config::{Fusion, RankingConfig};
use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event_keys::KeyMap;
use crate::fts::Filters;
use crate::memory::importance;
use crate::projection::{Projections, Unindexed, UnindexedEvent};
use crate::reinforce::Reinforcement;
use crate::supersede::SUPERSEDED_FACTOR;
use crate::{Error, Result};

/// Which lists a search draws from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    /// Full text and vectors (full text alone when there are no vectors).
    #[default]
    Hybrid,
    Fts,
    Vector,
}

impl SearchMode {
    pub fn parse(s: &str) -> Result<SearchMode> {
        match s {
            "hybrid" => Ok(SearchMode::Hybrid),
            "fts" => Ok(SearchMode::Fts),
            "vector" => Ok(SearchMode::Vector),
            other => Err(Error::Invalid(format!(
                "unknown search mode {other:?} (expected hybrid, fts or vector)"
            ))),
        }
    }
}

/// A search.
#[derive(Clone, Debug, Default)]
pub struct SearchRequest {
    pub query: String,
    pub limit: usize,
    pub filters: Filters,
    pub mode: SearchMode,
    /// The query's embedding, made by the model the vectors were made with;
    /// without it the search is full-text only.
    pub query_vector: Option<Vec<f32>>,
    /// Overrides `ranking.fusion`.
    pub fusion: Option<Fusion>,
    /// Without a query vector, make one from the stored vectors of this
    /// many best full-text hits (pseudo-relevance feedback; 0: don't). It
    /// only scores the candidates full text and spreading found and brings
    /// none of its own, so no model is loaded and no vector search runs.
    pub feedback: usize,
    /// The query vector only scores the candidates full text and spreading
    /// found; no vector search runs (as with `feedback`).
    pub rerank_only: bool,
    /// The query vector is a distilled one
    /// ([`crate::context::distilled_query`]), whose cosines run lower than
    /// the model's: vector hits join full text's from
    /// [`DISTILLED_JOIN_MIN`] instead of [`VECTOR_JOIN_MIN`], and weigh
    /// [`DISTILLED_SEMANTIC_SHARE`] of `ranking.semantic` unless
    /// `rerank_only`.
    pub distilled: bool,
}

/// The signals behind a hit's score, each in [0, 1].
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ScoreParts {
    pub fts: f32,
    /// The cosine relative to the best candidate's; `None` when no
    /// vectors take part, or the event has none yet (it then ranks by
    /// full text alone).
    pub semantic: Option<f32>,
    /// What the event's session neighbours and reinforced partners lend it
    /// (spreading activation): a share of what the best of them has over it.
    pub spread: f32,
    pub recency: f32,
    pub importance: f32,
}

/// One result.
#[derive(Clone, Debug, Serialize)]
pub struct Hit {
    pub id: EventId,
    pub session: String,
    pub kind: String,
    pub ts: String,
    /// The event's searchable text.
    pub text: String,
    pub score: f32,
    pub parts: ScoreParts,
    /// The event's metadata (with `ref` for imported events).
    pub meta: Value,
    /// The memory that replaces this one, when one does: this one then
    /// ranks below it (crate::supersede).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<EventId>,
    /// What to know before trusting it, when it ranks lower for it: stale
    /// against the code ("src/invoice.rs changed in 2 commits since"),
    /// contradicted, or the source of a memory since replaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caveat: Option<String>,
}

impl Hit {
    /// The text on one line, cut to `max` characters; where no word of
    /// `query` shows in that, the stretch around the first one that does,
    /// as a search tool shows its match (a long answer's first words are
    /// often only its heading).
    pub fn preview(&self, query: &str, max: usize) -> String {
        memlog_format::event::preview(&self.text, query, max)
    }
}

/// The identifiers of a query, lowercased: words made of parts joined by
/// `.`, `_` or `::` (`shopcli.plugins`, `max_retries`, `store::seal`), each
/// part two characters or more and one holding a letter, so that prose
/// (`e.g.`, `3.5`, a sentence's full stop) holds none; or names that hold
/// a digit among letters: one word (`gcsout8`, `sha256sum`, five
/// characters or more), parts joined by `-` (`gcs-out-3`, `ACME-412`), or
/// a number as a joined part (`gcs_out_7`). Hyphenated prose
/// (`well-known`) holds no digit.
fn identifiers(query: &str) -> Vec<String> {
    query
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '_'))
        .filter(|w| is_identifier(w))
        .map(str::to_lowercase)
        .collect()
}

fn is_identifier(word: &str) -> bool {
    let alnum = |p: &&str| p.chars().all(char::is_alphanumeric);
    let has_letter = |p: &str| p.chars().any(char::is_alphabetic);
    let has_digit = |p: &str| p.chars().any(|c| c.is_ascii_digit());
    let joined: Vec<&str> = word
        .split(['.', '_', ':'])
        .filter(|p| !p.is_empty())
        .collect();
    if joined.len() > 1 && joined.iter().all(alnum) {
        // a part with a letter is a name of two characters or more; a
        // number may be one digit
        let named: Vec<&&str> = joined.iter().filter(|p| has_letter(p)).collect();
        return !named.is_empty() && named.iter().all(|p| p.chars().count() >= 2);
    }
    let hyphenated: Vec<&str> = word.split('-').collect();
    if hyphenated.len() > 1 {
        return hyphenated.iter().all(|p| !p.is_empty() && alnum(p))
            && hyphenated.iter().any(|p| has_letter(p))
            && has_digit(word);
    }
    alnum(&word) && word.chars().count() >= 5 && has_letter(word) && has_digit(word)
}

/// Whether one of `hits` holds, as written, an identifier `query` names
/// ([`identifiers`]).
pub(crate) fn names_held(query: &str, hits: &[Hit]) -> bool {
    let names = identifiers(query);
    !names.is_empty()
        && hits.iter().any(|h| {
            let text = h.text.to_lowercase();
            names.iter().any(|n| text.contains(n.as_str()))
        })
}

/// How many candidates of each list are ranked per requested hit.
const CANDIDATES_PER_HIT: usize = 4;
const MIN_CANDIDATES: usize = 40;
/// In hybrid search, a vector hit that full text did not find joins only
/// at this share of the best cosine or more, and never below the minimum.
const VECTOR_JOIN_RELATIVE: f32 = 0.7;
const VECTOR_JOIN_MIN: f32 = 0.3;
/// The same floor for a distilled query vector, whose cosines run about a
/// third lower (as the prompt gate's thresholds do, 0.30 against 0.45): on
/// LoCoMo dev 0.2 and 0.3 rank alike (hybrid R@10 0.713, 0.712), and at
/// 0.3 a paraphrase's only match in a small memory (cosine 0.24) was lost.
const DISTILLED_JOIN_MIN: f32 = 0.2;
/// Share of `ranking.semantic` a distilled query vector's cosine weighs
/// when its hits join full text's (a one-shot `memlog search`): made
/// without the model, it tells meaning apart less sharply, and at full
/// weight the events it brings crowded out full text's (LongMemEval dev
/// R@5 0.615 against full text's 0.677). Chosen on the even questions of
/// both sets (LongMemEval R@5 0.637, 0.708, 0.727, 0.735, 0.696 at 1, 0.7,
/// 0.6, 0.5, 0.4; LoCoMo 0.630 to 0.634 throughout), checked on the odd
/// ones (docs/TUNING.md). Reranking only full text's candidates (the
/// prompt hook) keeps the full weight its gate was tuned with: there the
/// half weight cost LoCoMo's local hit 0.802 → 0.794.
const DISTILLED_SEMANTIC_SHARE: f32 = 0.5;
/// The cosine at which a candidate counts as fully relevant in meaning,
/// whatever the others' (the prompt gate's thresholds: 0.45 with the
/// model's query vector, 0.30 with the distilled one).
const SEMANTIC_FULL: f32 = 0.45;
const DISTILLED_SEMANTIC_FULL: f32 = 0.30;

/// One candidate while ranking: where it stands in each list.
#[derive(Clone, Debug, Default)]
struct Candidate {
    fts: Option<f32>,
    fts_rank: Option<usize>,
    cosine: Option<f32>,
    vector_rank: Option<usize>,
}

/// A candidate's event row.
struct Row {
    id: EventId,
    session: String,
    seq: i64,
    kind: String,
    ts: String,
    ts_ms: i64,
    text: String,
    meta: String,
    memory: Option<crate::memory::MemoryRow>,
}

pub fn search(p: &Projections, ranking: &RankingConfig, req: &SearchRequest) -> Result<Vec<Hit>> {
    let _snapshot = p.graph.snapshot()?;
    let want = req.limit.max(1);
    let depth = (want * CANDIDATES_PER_HIT).max(MIN_CANDIDATES);
    let use_fts = req.mode != SearchMode::Vector;
    let mut candidates: KeyMap<Candidate> = KeyMap::default();
    let mut best_fts_keys = Vec::new();
    if use_fts {
        // (a word only events not indexed yet hold is no typo)
        let unindexed = |term: &str| p.unindexed().holds_term(term);
        for (rank, c) in p
            .fts
            .search_beside(&req.query, &req.filters, depth, &unindexed)?
            .into_iter()
            .enumerate()
        {
            if rank < req.feedback {
                best_fts_keys.push(c.key);
            }
            let e = candidates.entry(c.key).or_default();
            e.fts = Some(c.relevance);
            e.fts_rank = Some(rank);
        }
    }
    let feedback = match (&req.query_vector, &p.vectors) {
        (None, Some(v)) if req.mode != SearchMode::Fts && !best_fts_keys.is_empty() => {
            mean_direction(v.vectors_of(&best_fts_keys)?.into_values())
        }
        _ => None,
    };
    let rerank_only = req.rerank_only || feedback.is_some();
    let vectors = match (req.query_vector.as_ref().or(feedback.as_ref()), &p.vectors) {
        (Some(q), Some(v)) if req.mode != SearchMode::Fts && q.len() == v.meta.dim => Some((q, v)),
        _ => None,
    };
    let semantic_on = vectors.is_some();
    if let Some((query, index)) = vectors.filter(|_| !rerank_only) {
        let keys = allowed_keys(p, &req.filters)?;
        let found = index.search(query, depth, keys.as_deref())?;
        // Beside full text, only close vectors bring new candidates: a query
        // for a rare word should not return every event. (On LoCoMo dev this
        // floor costs nothing; vector mode has none.)
        let floor = if use_fts {
            found.first().map_or(0.0, |best| {
                let min = if req.distilled {
                    DISTILLED_JOIN_MIN
                } else {
                    VECTOR_JOIN_MIN
                };
                (best.cosine * VECTOR_JOIN_RELATIVE).max(min)
            })
        } else {
            f32::MIN
        };
        for (rank, h) in found.into_iter().enumerate() {
            if h.cosine < floor && !candidates.contains_key(&h.key) {
                continue;
            }
            let e = candidates.entry(h.key).or_default();
            e.cosine = Some(h.cosine);
            e.vector_rank = Some(rank);
        }
    }

    // A key the database no longer has was forgotten after the search
    // index was read: it is left out.
    let keys: Vec<u64> = candidates.keys().copied().collect();
    let mut rows = event_rows(p, &keys)?;
    drop_hidden(p, &mut rows)?;
    // (the vector search does not filter by excluded session: see
    // `allowed_keys`)
    candidates.retain(|k, _| {
        rows.get(k).is_some_and(|r| {
            req.filters
                .exclude_session
                .as_ref()
                .is_none_or(|s| *s != r.session)
        })
    });
    if use_fts {
        add_unindexed(p, req, &mut candidates, &mut rows)?;
    }

    // Spreading activation (seed 003), depth 1 along the session: the
    // events just before and after a candidate share in its relevance (the
    // answer follows the question it matched). Neighbours join the
    // candidates when they pass the filters.
    let spread = if req.mode == SearchMode::Fts {
        0.0
    } else {
        ranking.spread.max(0.0)
    };
    // Both queries below were a few percent of a one-shot search, and
    // find nothing in most memories.
    // (a reinforcement or link the index has not seen yet counts at once:
    // an acknowledged write is read by the next search)
    let links = p.graph.get_meta(crate::graph::RANKING_LINKS)?.as_deref() != Some("absent")
        || p.unindexed()
            .events()
            .iter()
            .any(|u| read_by_ranking(&u.event));
    let learnt = if links {
        Reinforcement::load(p)?
    } else {
        Reinforcement::default()
    };
    // Along sessions only when vectors take part: the neighbours cost two
    // index queries per candidate (which tripled the hooks' injection
    // time), and without vectors a search ranks as full text does. Along
    // reinforced pairs (kept in memory) always.
    let along_sessions = semantic_on;
    let mut neighbours: KeyMap<Vec<(u64, f32)>> = KeyMap::default();
    if spread > 0.0 && (along_sessions || !learnt.is_empty()) {
        let seeds: Vec<u64> = candidates.keys().copied().collect();
        let mut joining: Vec<u64> = Vec::new();
        let mut reverse: Vec<(u64, u64, f32)> = Vec::new();
        for key in &seeds {
            let Some(row) = rows.get(key) else { continue };
            let linked = linked_events(p, &learnt, *key, row, along_sessions)?;
            for (n, share) in &linked {
                reverse.push((*n, *key, *share));
                if !rows.contains_key(n) && !joining.contains(n) {
                    joining.push(*n);
                }
            }
            neighbours.insert(*key, linked);
        }
        // Neighbours join when they pass the filters, checked on their rows:
        // listing every allowed key instead (a search that excludes the
        // current session allows nearly all) cost a scan of the table on
        // every prompt's injection.
        let mut joined = event_rows(p, &joining)?;
        drop_hidden(p, &mut joined)?;
        for key in &joining {
            if let Some(u) = p.unindexed().get(*key)
                && !joined.contains_key(key)
                && Unindexed::passes(&p.fts, u, &req.filters)
            {
                rows.insert(*key, unindexed_row(u));
                candidates.insert(*key, Candidate::default());
            }
        }
        for (n, r) in joined {
            if passes(p, &r, &req.filters)? {
                rows.insert(n, r);
                candidates.insert(n, Candidate::default());
            }
        }
        // The neighbours that joined receive from their seeds in turn: the
        // links are symmetric, so the seeds' lists say it without a query.
        for (n, seed, share) in reverse {
            if candidates.contains_key(&n) && !seeds.contains(&n) {
                neighbours.entry(n).or_default().push((seed, share));
            }
        }
    }
    count_unindexed_uses(p, &mut rows);
    if let Some((query, index)) = vectors {
        // candidates the vector list missed still have a vector
        let missing: Vec<u64> = candidates
            .iter()
            .filter(|(_, c)| c.cosine.is_none())
            .map(|(k, _)| *k)
            .collect();
        for (key, v) in index.vectors_of(&missing)? {
            if let Some(c) = candidates.get_mut(&key) {
                c.cosine = Some(crate::embed::dot(query, &v));
            }
        }
    }

    let best_cosine = candidates
        .values()
        .filter_map(|c| c.cosine)
        .fold(0f32, f32::max);
    let best_fts = candidates
        .values()
        .filter_map(|c| c.fts)
        .fold(0f32, f32::max);
    // Semantic relevance is the cosine relative to the best candidate's,
    // but, where vector hits join full text's, never to less than a cosine
    // that means relevant: when no event means what the query asks (a rare
    // word, an identifier), the best of a weak lot took the whole semantic
    // weight and outranked the only event holding the word. (A rerank of
    // full text's candidates, the prompt hook's, keeps the scale its gate
    // was tuned on: there the floor let three more foreign or abstention
    // questions through on LongMemEval, docs/TUNING.md.)
    let semantic_scale = if rerank_only {
        best_cosine
    } else {
        best_cosine.max(if req.distilled {
            DISTILLED_SEMANTIC_FULL
        } else {
            SEMANTIC_FULL
        })
    };
    let now_ms = jiff::Timestamp::now().as_millisecond();
    let half_life_ms = (ranking.half_life_days.max(0.001) as f64) * 86_400_000.0;
    let ws = if !semantic_on {
        0.0
    } else if req.distilled && !rerank_only {
        ranking.semantic * DISTILLED_SEMANTIC_SHARE
    } else {
        ranking.semantic
    };
    let wf = if use_fts { ranking.fts } else { 0.0 };
    let total = ws + wf + ranking.recency + ranking.importance;
    let (ws, wf, wr, wi) = if total > 0.0 {
        (
            ws / total,
            wf / total,
            ranking.recency / total,
            ranking.importance / total,
        )
    } else {
        (0.0, 1.0, 0.0, 0.0)
    };
    let fusion = req.fusion.unwrap_or(ranking.fusion);
    let k = ranking.rrf_k.max(0.0);
    let lists = usize::from(use_fts) + usize::from(semantic_on);

    let identifiers = identifiers(&req.query);
    // Relevance of each candidate to the query, before spreading.
    let relevance: KeyMap<(f32, Option<f32>)> = candidates
        .iter()
        .map(|(key, c)| {
            let semantic = semantic_on.then(|| {
                if best_cosine > 0.0 {
                    (c.cosine.unwrap_or(0.0).max(0.0) / semantic_scale).min(1.0)
                } else {
                    0.0
                }
            });
            // With two lists, each is taken relative to its best candidate
            // so that neither dominates by scale; alone, full text keeps its
            // absolute meaning (weak matches stay weak against recency).
            let fts = c.fts.unwrap_or(0.0);
            let fts_rel = if semantic_on && best_fts > 0.0 {
                fts / best_fts
            } else {
                fts
            };
            // An event waiting for its vector (embedding trails indexing,
            // and events not indexed yet have none) ranks by full text alone,
            // as it would in a memory without vectors: counted as no
            // meaning at all, a note just saved sank below every embedded
            // event that shares a word with the query.
            let awaiting = semantic_on
                && c.cosine.is_none()
                && rows
                    .get(key)
                    .is_some_and(|r| crate::derive::is_worth_embedding(&r.kind));
            // An event that holds an identifier of the query as written
            // means what the query asks, whatever its embedding says: a long
            // answer naming `shopcli.plugins` once is diluted, and a short
            // prompt about shopcli's plugins outranked it.
            let names_it = !identifiers.is_empty()
                && rows.get(key).is_some_and(|r| {
                    let text = r.text.to_lowercase();
                    identifiers.iter().any(|i| text.contains(i.as_str()))
                });
            let ranked_semantic = if awaiting {
                Some(fts_rel)
            } else if names_it {
                semantic.map(|s| s.max(fts_rel))
            } else {
                semantic
            };
            let r = match fusion {
                Fusion::Weighted => ws * ranked_semantic.unwrap_or(0.0) + wf * fts_rel,
                Fusion::Rrf => {
                    let rr = |rank: Option<usize>| rank.map_or(0.0, |r| 1.0 / (k + r as f32 + 1.0));
                    let best = lists as f32 / (k + 1.0);
                    let fused = rr(c.fts_rank) + if semantic_on { rr(c.vector_rank) } else { 0.0 };
                    (ws + wf) * if best > 0.0 { fused / best } else { 0.0 }
                }
            };
            (*key, (r, if awaiting { None } else { semantic }))
        })
        .collect();

    let mut hits = Vec::with_capacity(candidates.len());
    for (key, c) in &candidates {
        let Some(row) = rows.remove(key) else {
            continue;
        };
        let (own, semantic) = relevance.get(key).copied().unwrap_or((0.0, None));
        // lifted toward its best neighbour, never past it: an event as
        // relevant as its neighbours gains nothing from them (added on top,
        // a long answer beside the turn that matched outranked the other
        // turns that did)
        let spread_part = neighbours.get(key).map_or(0.0, |linked| {
            let best = linked
                .iter()
                .filter_map(|(n, share)| relevance.get(n).map(|r| r.0 * share))
                .fold(0f32, f32::max);
            (best - own).max(0.0) * spread
        });
        let age = (now_ms - row.ts_ms).max(0) as f64;
        let parts = ScoreParts {
            fts: c.fts.unwrap_or(0.0),
            semantic,
            spread: spread_part,
            recency: 0.5f64.powf(age / half_life_ms) as f32,
            // the kind's prior raised by memory level and recalls, scaled
            // by success rate (crate::memory), then moved by the learnt
            // reinforcement weights (crate::reinforce)
            importance: learnt.importance(
                *key,
                importance(
                    &row.kind,
                    row.memory.as_ref(),
                    row.ts_ms,
                    now_ms,
                    &ranking.levels,
                ),
            ),
        };
        let score = own + spread_part + wr * parts.recency + wi * parts.importance;
        hits.push((row.ts_ms, *key, hit_of(row, score, parts)));
    }
    if links {
        demote_superseded(p, &mut hits)?;
    }
    demote_stale(p, &mut hits);
    hits.sort_by(|a, b| {
        b.2.score
            .total_cmp(&a.2.score)
            .then_with(|| b.0.cmp(&a.0))
            .then_with(|| a.1.cmp(&b.1))
    });
    hits.truncate(want);
    Ok(hits.into_iter().map(|(_, _, h)| h).collect())
}

/// Adds to the rows' memory counts the reinforcements and recalls the
/// index has not caught up with (it folds them into its `memory` table
/// when it does): an acknowledged `memlog reinforce` moves the next
/// search's ranking, even while another process holds the index.
fn count_unindexed_uses(p: &Projections, rows: &mut KeyMap<Row>) {
    use memlog_format::Kind;
    for u in p.unindexed().events() {
        let (kind, body) = (&u.event.kind, &u.event.body);
        if !matches!(kind, Kind::Reinforce | Kind::Recall) {
            continue;
        }
        for target in crate::memory::targets(body) {
            let Some(row) = rows.get_mut(&crate::fts::event_key(target.as_str())) else {
                continue;
            };
            if row.id != target {
                continue;
            }
            let level = crate::memory::kind_level(&row.kind);
            let m = row.memory.get_or_insert_with(|| crate::memory::MemoryRow {
                base_level: level,
                ..Default::default()
            });
            if *kind == Kind::Recall {
                m.recalls += 1;
                m.last_recall = m.last_recall.take().max(Some(u.event.ts.clone()));
            } else {
                match crate::memory::outcome(body) {
                    Some(true) => m.success += 1,
                    Some(false) => m.failure += 1,
                    None => {}
                }
            }
        }
    }
}

/// Whether search reads `e` besides its hits, on every query: a
/// reinforcement ([`Reinforcement::load`]) or a fact or rule superseding
/// or contradicting another ([`crate::supersede::links`]). The indexer records whether
/// the log holds any ([`crate::graph::RANKING_LINKS`]), so that a memory
/// without them skips both queries.
pub(crate) fn read_by_ranking(e: &memlog_format::Event) -> bool {
    use memlog_format::Kind;
    e.kind == Kind::Reinforce
        || (matches!(e.kind, Kind::Fact | Kind::Rule)
            && (e.body.contains_key("supersedes") || e.body.contains_key("contradicts")))
}

/// A superseded memory keeps [`SUPERSEDED_FACTOR`] of its score and
/// always ranks below its successor when both are hits. A contradicted
/// memory, and the sources of a replaced one, keep that share too, with a
/// caveat saying why.
fn demote_superseded(p: &Projections, hits: &mut [(i64, u64, Hit)]) -> Result<()> {
    let superseding = crate::supersede::links(p, "supersedes")?;
    let contradicting = crate::supersede::links(p, "contradicts")?;
    if superseding.is_empty() && contradicting.is_empty() {
        return Ok(());
    }
    let successors: HashMap<EventId, EventId> = superseding.iter().cloned().collect();
    let contradicted: HashMap<EventId, EventId> = contradicting.iter().cloned().collect();
    let replaced: Vec<(EventId, EventId)> = superseding.into_iter().chain(contradicting).collect();
    let sources = crate::supersede::replaced_sources(p, &replaced)?;
    let scores: HashMap<EventId, f32> = hits
        .iter()
        .map(|(_, _, h)| (h.id.clone(), h.score))
        .collect();
    let short = |id: &EventId| id.as_str().chars().take(12).collect::<String>();
    for (_, _, h) in hits.iter_mut() {
        if let Some(next) = successors.get(&h.id) {
            h.score *= SUPERSEDED_FACTOR;
            if let Some(s) = scores.get(next) {
                h.score = h.score.min(s * SUPERSEDED_FACTOR);
            }
            h.superseded_by = Some(next.clone());
        } else if let Some(next) = contradicted.get(&h.id) {
            h.score *= SUPERSEDED_FACTOR;
            h.caveat = Some(format!("contradicted by [{}]", short(next)));
        } else if let Some(old) = sources.get(&h.id) {
            h.score *= SUPERSEDED_FACTOR;
            h.caveat = Some(format!("source of [{}], since replaced", short(old)));
        }
    }
    Ok(())
}

/// A memory `memlog verify` found stale or broken against the code keeps
/// its share of its score ([`crate::anchors`]) and says why.
fn demote_stale(p: &Projections, hits: &mut [(i64, u64, Hit)]) {
    let verified = crate::anchors::load(p);
    if verified.items.is_empty() {
        return;
    }
    for (_, _, h) in hits.iter_mut() {
        if let Some(s) = verified.items.get(h.id.as_str()) {
            h.score *= s.factor();
            h.caveat = Some(s.marker.clone());
        }
    }
}

/// Drops the rows that a forget the index has not applied yet hides
/// ([`crate::projection::Unindexed`]); nothing to do, and no query, when
/// every forget is applied.
fn drop_hidden(p: &Projections, rows: &mut KeyMap<Row>) -> Result<()> {
    if !p.unindexed().hides_any() {
        return Ok(());
    }
    let mut hidden = Vec::new();
    for (key, row) in rows.iter() {
        if crate::lookup::event(p, &row.id)?.is_none() {
            hidden.push(*key);
        }
    }
    for key in hidden {
        rows.remove(&key);
    }
    Ok(())
}

/// Events the log holds and the index does not yet join the full-text
/// candidates, scored as the index will score them, on its statistics and
/// theirs together ([`crate::fts::Fts::relevance_of`]); they have no vector
/// yet, and the full-text ranks are taken again over both.
fn add_unindexed(
    p: &Projections,
    req: &SearchRequest,
    candidates: &mut KeyMap<Candidate>,
    rows: &mut KeyMap<Row>,
) -> Result<()> {
    let fresh: Vec<&UnindexedEvent> = p.unindexed().searchable().collect();
    if fresh.is_empty() {
        return Ok(());
    }
    let texts: Vec<&str> = fresh.iter().map(|u| u.derived.text.as_str()).collect();
    let relevance = p.fts.relevance_of(&req.query, &texts)?;
    let mut added = false;
    for (u, r) in fresh.into_iter().zip(relevance) {
        if r <= 0.0 || !Unindexed::passes(&p.fts, u, &req.filters) {
            continue;
        }
        rows.insert(u.key, unindexed_row(u));
        candidates.insert(
            u.key,
            Candidate {
                fts: Some(r),
                ..Candidate::default()
            },
        );
        added = true;
    }
    if added {
        let mut ranked: Vec<(f32, usize, u64)> = candidates
            .iter()
            .filter_map(|(k, c)| Some((c.fts?, c.fts_rank.unwrap_or(usize::MAX), *k)))
            .collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        for (rank, (_, _, key)) in ranked.into_iter().enumerate() {
            if let Some(c) = candidates.get_mut(&key) {
                c.fts_rank = Some(rank);
            }
        }
    }
    Ok(())
}

/// The row of an event not indexed yet, as the database will hold it (no
/// memory row: its recalls and level are not counted yet).
fn unindexed_row(u: &UnindexedEvent) -> Row {
    let e = &u.event;
    let mut meta = String::new();
    memlog_format::canonical::write_map(&mut meta, &e.meta);
    Row {
        id: e.id.clone(),
        session: e.session.clone(),
        seq: e.seq as i64,
        kind: e.kind.as_str().to_string(),
        ts: e.ts.clone(),
        ts_ms: u.ts_ms,
        text: u.derived.text.clone(),
        meta,
        memory: None,
    }
}

/// The normalised mean of `vectors`; `None` when there are none.
fn mean_direction(vectors: impl Iterator<Item = Vec<f32>>) -> Option<Vec<f32>> {
    let mut sum: Vec<f32> = Vec::new();
    for v in vectors {
        if sum.is_empty() {
            sum = vec![0.0; v.len()];
        }
        if v.len() == sum.len() {
            for (s, x) in sum.iter_mut().zip(&v) {
                *s += x;
            }
        }
    }
    let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
    (norm > 0.0).then(|| sum.iter().map(|x| x / norm).collect())
}

/// The event rows of `keys` (those the database still has), with their
/// memory: one cached statement, a lookup per key. (A single `key IN (…)`
/// query cost more: SQLite parsed its hundreds of placeholders afresh for
/// each list length and built a temporary b-tree of them.)
fn event_rows(p: &Projections, keys: &[u64]) -> Result<KeyMap<Row>> {
    let err = |e| Error::sql(&p.dir, e);
    let mut out = KeyMap::with_capacity_and_hasher(keys.len(), Default::default());
    if keys.is_empty() {
        return Ok(out);
    }
    let mut stmt = p
        .graph
        .conn
        .prepare_cached(&format!(
            "SELECT e.id, e.session, e.seq, e.kind, e.ts, e.ts_ms, e.text, e.meta, {}
             FROM events e LEFT JOIN memory m ON m.event_id = e.id
             WHERE e.key = ?1",
            crate::memory::MEMORY_COLUMNS
        ))
        .map_err(err)?;
    for key in keys {
        let row = stmt
            .query_row([*key as i64], |r| {
                let kind: String = r.get(3)?;
                Ok(Row {
                    memory: crate::memory::memory_row(&kind, r, 8)?,
                    id: EventId::unchecked(r.get(0)?),
                    session: r.get(1)?,
                    seq: r.get(2)?,
                    kind,
                    ts: r.get(4)?,
                    ts_ms: r.get(5)?,
                    text: r.get(6)?,
                    meta: r.get(7)?,
                })
            })
            .optional()
            .map_err(err)?;
        if let Some(row) = row {
            out.insert(*key, row);
        }
    }
    Ok(out)
}

/// The events `row` lends relevance to and receives it from, with the share:
/// its session neighbours (whole; if `along_sessions`) and the events
/// reinforced together with it (by the pair's weight).
fn linked_events(
    p: &Projections,
    learnt: &Reinforcement,
    key: u64,
    row: &Row,
    along_sessions: bool,
) -> Result<Vec<(u64, f32)>> {
    let mut linked: Vec<(u64, f32)> = Vec::new();
    if along_sessions {
        linked.extend(
            session_neighbours(p, row)?
                .into_iter()
                .flatten()
                .map(|k| (k, 1.0)),
        );
    }
    if !learnt.is_empty() {
        linked.extend(learnt.partners(key));
    }
    Ok(linked)
}

/// Keys of the searchable events just before and after `row` in its session
/// (row-value comparisons: a range of the session index, not a scan).
fn session_neighbours(p: &Projections, row: &Row) -> Result<[Option<u64>; 2]> {
    if let Some(around) = p.unindexed().neighbours(crate::fts::event_key(&row.id)) {
        return Ok(around);
    }
    // Comparisons, not `NOT IN (…)`: a constant list makes SQLite build a
    // temporary b-tree at every run, and these run twice per ranked event.
    static SEARCHABLE: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        let kinds: Vec<String> = crate::derive::BOOKKEEPING_KINDS
            .iter()
            .map(|k| format!("kind <> '{}'", k.as_str()))
            .collect();
        kinds.join(" AND ")
    });
    let err = |e| Error::sql(&p.dir, e);
    let mut before = p
        .graph
        .conn
        .prepare_cached(&format!(
            "SELECT key FROM events WHERE session = ?1 AND (ts, seq) < (?2, ?3) AND {}
             ORDER BY session DESC, ts DESC, seq DESC LIMIT 1",
            *SEARCHABLE
        ))
        .map_err(err)?;
    let prev: Option<i64> = before
        .query_row(params![row.session, row.ts, row.seq], |r| r.get(0))
        .optional()
        .map_err(err)?;
    let mut after = p
        .graph
        .conn
        .prepare_cached(&format!(
            "SELECT key FROM events WHERE session = ?1 AND (ts, seq) > (?2, ?3) AND {}
             ORDER BY session, ts, seq LIMIT 1",
            *SEARCHABLE
        ))
        .map_err(err)?;
    let next: Option<i64> = after
        .query_row(params![row.session, row.ts, row.seq], |r| r.get(0))
        .optional()
        .map_err(err)?;
    Ok([prev.map(|k| k as u64), next.map(|k| k as u64)])
}

/// Longest text an agent's words before a tool call have to count as
/// narration ("Reproducing.") rather than as something it found.
const NARRATION_CHARS: usize = 120;

/// What the turns of hits make of them, for injection ([`turns`]).
#[derive(Debug, Default)]
pub struct Turns {
    /// The answer of each prompt among the hits: the last `agent_response`
    /// of its turn, as a hit of the prompt's score.
    pub answers: Vec<Hit>,
    /// The hits that are an agent's short words before a tool call: a
    /// later `agent_response` of the same turn answers it.
    pub narration: std::collections::HashSet<EventId>,
}

/// The turns of `hits`: a prompt shown without its answer told the agent
/// what was asked and not what was found, and the line right after a
/// prompt is often only what the agent said before its first tool call,
/// which took the prompt's place (a field test: a fifth of the lines
/// injected over a month of coding sessions, and the right session shown
/// without its answer).
pub fn turns(p: &Projections, hits: &[Hit]) -> Result<Turns> {
    let mut out = Turns::default();
    for h in hits {
        let narrating =
            h.kind == "agent_response" && h.text.trim().chars().count() <= NARRATION_CHARS;
        if h.kind != "user_prompt" && !narrating {
            continue;
        }
        let key = crate::fts::event_key(&h.id);
        let later = match p.unindexed().turn_answer(key) {
            Some(found) => found,
            None => match row_of(p, key)? {
                Some(row) => turn_answer(p, &row)?.map(|k| k as u64),
                None => None,
            },
        };
        let Some(later) = later else { continue };
        if narrating {
            out.narration.insert(h.id.clone());
        } else if let Some(row) = row_of(p, later)? {
            out.answers.push(hit_of(row, h.score, h.parts.clone()));
        }
    }
    Ok(out)
}

/// The hit an event row makes at `score`.
fn hit_of(row: Row, score: f32, parts: ScoreParts) -> Hit {
    Hit {
        id: row.id,
        session: row.session,
        kind: row.kind,
        ts: row.ts,
        text: row.text,
        score,
        parts,
        meta: serde_json::from_str(&row.meta).unwrap_or(Value::Null),
        superseded_by: None,
        caveat: None,
    }
}

/// The live row of the event `key`, indexed or not; `None` when it is
/// gone or forgotten.
fn row_of(p: &Projections, key: u64) -> Result<Option<Row>> {
    if let Some(u) = p.unindexed().get(key) {
        return Ok(Some(unindexed_row(u)));
    }
    let mut rows = event_rows(p, &[key])?;
    drop_hidden(p, &mut rows)?;
    Ok(rows.remove(&key))
}

/// The key of the last `agent_response` after `row` in its turn: after
/// it, before the session's next prompt.
fn turn_answer(p: &Projections, row: &Row) -> Result<Option<i64>> {
    let err = |e| Error::sql(&p.dir, e);
    let mut next_prompt = p
        .graph
        .conn
        .prepare_cached(
            "SELECT ts, seq FROM events WHERE session = ?1 AND (ts, seq) > (?2, ?3)
               AND kind = 'user_prompt'
             ORDER BY session, ts, seq LIMIT 1",
        )
        .map_err(err)?;
    // past the session's last prompt, up to its end (no stored time sorts
    // after `~`)
    let (until_ts, until_seq): (String, i64) = next_prompt
        .query_row(params![row.session, row.ts, row.seq], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()
        .map_err(err)?
        .unwrap_or_else(|| ("~".to_string(), i64::MAX));
    let mut answer = p
        .graph
        .conn
        .prepare_cached(
            "SELECT key FROM events WHERE session = ?1 AND (ts, seq) > (?2, ?3)
               AND (ts, seq) < (?4, ?5) AND kind = 'agent_response'
             ORDER BY session DESC, ts DESC, seq DESC LIMIT 1",
        )
        .map_err(err)?;
    answer
        .query_row(
            params![row.session, row.ts, row.seq, until_ts, until_seq],
            |r| r.get(0),
        )
        .optional()
        .map_err(err)
}

/// Whether an event row passes the filters: for the neighbours spreading
/// brings in (full-text and vector candidates were filtered by their
/// index).
fn passes(p: &Projections, row: &Row, f: &Filters) -> Result<bool> {
    if (!f.kinds.is_empty() && !f.kinds.contains(&row.kind))
        || f.session.as_ref().is_some_and(|s| *s != row.session)
        || f.exclude_session
            .as_ref()
            .is_some_and(|s| *s == row.session)
        || f.since_ms.is_some_and(|ms| row.ts_ms < ms)
        || f.until_ms.is_some_and(|ms| row.ts_ms >= ms)
    {
        return Ok(false);
    }
    let Some(file) = &f.file else {
        return Ok(true);
    };
    // as the full-text filter and the edges take paths
    let file = memlog_format::refs::normalize_path(file);
    p.graph
        .conn
        .prepare_cached(
            "SELECT 1 FROM edges WHERE src_id = ?1 AND evidence = ?2
               AND (dst_id = 'file:' || ?3 OR dst_id LIKE '%/' || ?3) LIMIT 1",
        )
        .and_then(|mut st| {
            st.query_row(
                params![format!("session:{}", row.session), row.id.as_str(), file],
                |_| Ok(()),
            )
            .optional()
        })
        .map(|found| found.is_some())
        .map_err(|e| Error::sql(&p.dir, e))
}

/// Keys of the events that pass `filters`, for the vector search; `None`
/// when nothing is filtered. An excluded session is not listed here (that
/// would list nearly every event): the caller drops its events.
fn allowed_keys(p: &Projections, f: &Filters) -> Result<Option<Vec<u64>>> {
    let unfiltered = f.kinds.is_empty()
        && f.session.is_none()
        && f.since_ms.is_none()
        && f.until_ms.is_none()
        && f.file.is_none();
    if unfiltered {
        return Ok(None);
    }
    let mut sql = String::from("SELECT e.key FROM events e WHERE 1");
    let mut args: Vec<rusqlite::types::Value> = Vec::new();
    if !f.kinds.is_empty() {
        sql.push_str(" AND e.kind IN (");
        for (i, k) in f.kinds.iter().enumerate() {
            sql.push_str(if i == 0 { "?" } else { ", ?" });
            args.push(k.clone().into());
        }
        sql.push(')');
    }
    if let Some(s) = &f.session {
        sql.push_str(" AND e.session = ?");
        args.push(s.clone().into());
    }
    if let Some(ms) = f.since_ms {
        sql.push_str(" AND e.ts_ms >= ?");
        args.push(ms.into());
    }
    if let Some(ms) = f.until_ms {
        sql.push_str(" AND e.ts_ms < ?");
        args.push(ms.into());
    }
    if let Some(file) = &f.file {
        let file = memlog_format::refs::normalize_path(file);
        sql.push_str(
            " AND EXISTS (SELECT 1 FROM edges g WHERE g.src_id = 'session:' || e.session AND g.evidence = e.id AND (g.dst_id = 'file:' || ? OR g.dst_id LIKE '%/' || ?))",
        );
        args.push(file.clone().into());
        args.push(file.clone().into());
    }
    let mut stmt = p
        .graph
        .conn
        .prepare(&sql)
        .map_err(|e| Error::sql(&p.dir, e))?;
    let keys = stmt
        .query_map(rusqlite::params_from_iter(args), |r| r.get::<_, i64>(0))
        .map_err(|e| Error::sql(&p.dir, e))?
        .map(|k| k.map(|k| k as u64))
        .collect::<std::result::Result<Vec<u64>, _>>()
        .map_err(|e| Error::sql(&p.dir, e))?;
    Ok(Some(keys))
}

#[cfg(test)]
mod tests {
    use super::identifiers;

    #[test]
    fn identifiers_are_joined_parts_and_prose_holds_none() {
        assert_eq!(
            identifiers("why does Shopcli.Plugins load before max_retries, store::seal?"),
            ["shopcli.plugins", "max_retries", "store::seal"]
        );
        assert_eq!(
            identifiers("where is gcsout8, gcs-out-3, gcs_out_7 and ACME-412?"),
            ["gcsout8", "gcs-out-3", "gcs_out_7", "acme-412"]
        );
        for prose in [
            "e.g. this",
            "version 3.5 is out.",
            "U.S. trip",
            "__init__",
            "a_b",
            "a well-known long-term fix",
            "on 2023-05-07 at 10am",
            "utf8 and mp3",
            "a_1",
        ] {
            assert!(identifiers(prose).is_empty(), "{prose}");
        }
    }
}
