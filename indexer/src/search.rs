//! Search: full-text candidates re-ranked with recency and importance (the
//! kind's prior, raised by memory level and recalls, scaled by success
//! rate: [`crate::memory`]).
//!
//! Each signal is in [0, 1] and weighted as `.memlog.yaml`'s `ranking` says
//! (DESIGN: semantic 0.4, full-text 0.25, recency 0.2, importance 0.15).
//! A signal that is not available (semantic, until vectors exist) gives its
//! weight to the others in proportion. Full-text relevance is BM25 relative
//! to an average document that contains the whole query once, so it means
//! the same thing from one query to the next.

use memlog_format::config::RankingConfig;
use rusqlite::{OptionalExtension, params};
use serde::Serialize;
use serde_json::Value;

use crate::fts::Filters;
use crate::memory::importance;
use crate::projection::Projections;
use crate::{Error, Result};

/// A search.
#[derive(Clone, Debug, Default)]
pub struct SearchRequest {
    pub query: String,
    pub limit: usize,
    pub filters: Filters,
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

/// How many full-text candidates are re-ranked per requested hit.
const CANDIDATES_PER_HIT: usize = 4;
const MIN_CANDIDATES: usize = 40;

pub fn search(p: &Projections, ranking: &RankingConfig, req: &SearchRequest) -> Result<Vec<Hit>> {
    let want = req.limit.max(1);
    let candidates = p.fts.search(
        &req.query,
        &req.filters,
        (want * CANDIDATES_PER_HIT).max(MIN_CANDIDATES),
    )?;
    let now_ms = jiff::Timestamp::now().as_millisecond();
    let half_life_ms = (ranking.half_life_days.max(0.001) as f64) * 86_400_000.0;
    // No vectors yet: the semantic weight is shared out.
    let total = ranking.fts + ranking.recency + ranking.importance;
    let (wf, wr, wi) = if total > 0.0 {
        (
            ranking.fts / total,
            ranking.recency / total,
            ranking.importance / total,
        )
    } else {
        (1.0, 0.0, 0.0)
    };
    let mut scored: Vec<(f32, ScoreParts, crate::fts::Candidate)> =
        Vec::with_capacity(candidates.len());
    for c in candidates {
        let age = (now_ms - c.ts_ms).max(0) as f64;
        let recency = 0.5f64.powf(age / half_life_ms) as f32;
        // memory level, success rate and recall vitality (crate::memory)
        let row = crate::memory::row_by_key(p, c.key as i64)?;
        let parts = ScoreParts {
            fts: c.relevance,
            semantic: None,
            recency,
            importance: importance(&c.kind, row.as_ref(), c.ts_ms, now_ms, &ranking.levels),
        };
        let score = wf * parts.fts + wr * parts.recency + wi * parts.importance;
        scored.push((score, parts, c));
    }
    scored.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| b.2.ts_ms.cmp(&a.2.ts_ms))
            .then_with(|| a.2.key.cmp(&b.2.key))
    });
    scored.truncate(want);
    let mut stmt = p
        .graph
        .conn
        .prepare_cached("SELECT id, session, kind, ts, text, meta FROM events WHERE key = ?1 ORDER BY id LIMIT 1")
        .map_err(|e| Error::sql(&p.dir, e))?;
    let mut hits = Vec::with_capacity(scored.len());
    for (score, parts, c) in scored {
        let row = stmt
            .query_row(params![c.key as i64], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                ))
            })
            .optional()
            .map_err(|e| Error::sql(&p.dir, e))?;
        // A key the database no longer has was forgotten after the search
        // index was read: leave it out.
        let Some((id, session, kind, ts, text, meta)) = row else {
            continue;
        };
        hits.push(Hit {
            id,
            session,
            kind,
            ts,
            text,
            score,
            parts,
            meta: serde_json::from_str(&meta).unwrap_or(Value::Null),
        });
    }
    Ok(hits)
}
