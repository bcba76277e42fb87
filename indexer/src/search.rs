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

use std::collections::HashMap;

use memlog_format::config::{Fusion, RankingConfig};
use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::derive::importance;
use crate::fts::Filters;
use crate::projection::Projections;
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
}

/// The signals behind a hit's score, each in [0, 1].
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ScoreParts {
    pub fts: f32,
    pub semantic: Option<f32>,
    pub recency: f32,
    pub importance: f32,
}

/// One result.
#[derive(Clone, Debug, Serialize)]
pub struct Hit {
    pub id: String,
    pub session: String,
    pub kind: String,
    pub ts: String,
    /// The event's searchable text.
    pub text: String,
    pub score: f32,
    pub parts: ScoreParts,
    /// The event's metadata (with `ref` for imported events).
    pub meta: Value,
}

impl Hit {
    /// First non-empty line of the text.
    pub fn headline(&self, max: usize) -> String {
        let line = self
            .text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("");
        memlog_format::event::truncate_chars(line, max)
    }
}

/// How many candidates of each list are ranked per requested hit.
const CANDIDATES_PER_HIT: usize = 4;
const MIN_CANDIDATES: usize = 40;

/// One candidate while ranking: where it stands in each list.
#[derive(Clone, Debug, Default)]
struct Candidate {
    fts: Option<f32>,
    fts_rank: Option<usize>,
    cosine: Option<f32>,
    vector_rank: Option<usize>,
}

pub fn search(p: &Projections, ranking: &RankingConfig, req: &SearchRequest) -> Result<Vec<Hit>> {
    let want = req.limit.max(1);
    let depth = (want * CANDIDATES_PER_HIT).max(MIN_CANDIDATES);
    let use_fts = req.mode != SearchMode::Vector;
    let vectors = match (&req.query_vector, &p.vectors) {
        (Some(q), Some(v)) if req.mode != SearchMode::Fts && q.len() == v.meta.dim => Some((q, v)),
        _ => None,
    };
    let mut candidates: HashMap<u64, Candidate> = HashMap::new();
    if use_fts {
        for (rank, c) in p
            .fts
            .search(&req.query, &req.filters, depth)?
            .into_iter()
            .enumerate()
        {
            let e = candidates.entry(c.key).or_default();
            e.fts = Some(c.relevance);
            e.fts_rank = Some(rank);
        }
    }
    if let Some((query, index)) = vectors {
        let allowed = allowed_keys(p, &req.filters)?;
        for (rank, h) in index
            .search(query, depth, allowed.as_deref())?
            .into_iter()
            .enumerate()
        {
            let e = candidates.entry(h.key).or_default();
            e.cosine = Some(h.cosine);
            e.vector_rank = Some(rank);
        }
        // full-text candidates the vector list missed still have a vector
        for (key, c) in candidates.iter_mut() {
            if c.cosine.is_none()
                && let Some(v) = index.vector_of(*key)?
            {
                c.cosine = Some(crate::embed::dot(query, &v));
            }
        }
    }
    let semantic_on = vectors.is_some();
    let best_cosine = candidates
        .values()
        .filter_map(|c| c.cosine)
        .fold(0f32, f32::max);

    let now_ms = jiff::Timestamp::now().as_millisecond();
    let half_life_ms = (ranking.half_life_days.max(0.001) as f64) * 86_400_000.0;
    let ws = if semantic_on { ranking.semantic } else { 0.0 };
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

    let mut stmt = p
        .graph
        .conn
        .prepare_cached(
            "SELECT id, session, kind, ts, ts_ms, text, meta FROM events WHERE key = ?1 ORDER BY id LIMIT 1",
        )
        .map_err(|e| Error::sql(&p.dir, e))?;
    let mut hits = Vec::with_capacity(candidates.len());
    let mut order: Vec<(u64, Candidate)> = candidates.into_iter().collect();
    order.sort_by_key(|(key, _)| *key);
    for (key, c) in order {
        let row = stmt
            .query_row(params![key as i64], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, i64>(4)?,
                    r.get::<_, String>(5)?,
                    r.get::<_, String>(6)?,
                ))
            })
            .optional()
            .map_err(|e| Error::sql(&p.dir, e))?;
        // A key the database no longer has was forgotten after the search
        // index was read: leave it out.
        let Some((id, session, kind, ts, ts_ms, text, meta)) = row else {
            continue;
        };
        let age = (now_ms - ts_ms).max(0) as f64;
        let parts = ScoreParts {
            fts: c.fts.unwrap_or(0.0),
            semantic: semantic_on.then(|| {
                if best_cosine > 0.0 {
                    (c.cosine.unwrap_or(0.0).max(0.0) / best_cosine).min(1.0)
                } else {
                    0.0
                }
            }),
            recency: 0.5f64.powf(age / half_life_ms) as f32,
            importance: importance(&kind),
        };
        let relevance = match fusion {
            Fusion::Weighted => ws * parts.semantic.unwrap_or(0.0) + wf * parts.fts,
            Fusion::Rrf => {
                let rr = |rank: Option<usize>| rank.map_or(0.0, |r| 1.0 / (k + r as f32 + 1.0));
                let best = lists as f32 / (k + 1.0);
                let fused = rr(c.fts_rank) + if semantic_on { rr(c.vector_rank) } else { 0.0 };
                (ws + wf) * if best > 0.0 { fused / best } else { 0.0 }
            }
        };
        let score = relevance + wr * parts.recency + wi * parts.importance;
        hits.push((
            ts_ms,
            key,
            Hit {
                id,
                session,
                kind,
                ts,
                text,
                score,
                parts,
                meta: serde_json::from_str(&meta).unwrap_or(Value::Null),
            },
        ));
    }
    hits.sort_by(|a, b| {
        b.2.score
            .total_cmp(&a.2.score)
            .then_with(|| b.0.cmp(&a.0))
            .then_with(|| a.1.cmp(&b.1))
    });
    hits.truncate(want);
    Ok(hits.into_iter().map(|(_, _, h)| h).collect())
}

/// Keys of the events that pass `filters`, for the vector search; `None`
/// when nothing is filtered.
fn allowed_keys(p: &Projections, f: &Filters) -> Result<Option<Vec<u64>>> {
    let unfiltered = f.kinds.is_empty()
        && f.session.is_none()
        && f.since_ms.is_none()
        && f.until_ms.is_none()
        && f.file.is_none()
        && f.exclude_session.is_none();
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
    if let Some(s) = &f.exclude_session {
        sql.push_str(" AND e.session != ?");
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
        sql.push_str(
            " AND EXISTS (SELECT 1 FROM edges g WHERE g.evidence = e.id AND (g.dst_id = 'file:' || ? OR g.dst_id LIKE '%/' || ?))",
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
