//! Reinforcement (docs/DESIGN.md §8, Hebbian learning): `reinforce` events say that
//! some memories helped (`success`) or misled (`failure`) together. Each
//! one moves the weight of every named event, and of every pair of them,
//! by +0.1 on success and -0.15 on failure (failure teaches more), kept in
//! [-2, 5]. An event's weight raises or lowers its importance; a pair's
//! positive weight lets relevance spread between the two like session
//! neighbours. Derived from the events table at query time, so it is the
//! same after an incremental update and after a rebuild; only reinforce
//! events in `reinforce-…` sessions (as `memlog reinforce` records them)
//! count, which keeps the read an index range.

use std::collections::HashMap;

use memlog_format::Kind;
use rusqlite::params;
use serde_json::{Map, Value};

use crate::fts::event_key;
use crate::projection::Projections;
use crate::{Error, Result};

/// Weight a success adds.
pub const SUCCESS_STEP: f32 = 0.1;
/// Weight a failure adds (it teaches more).
pub const FAILURE_STEP: f32 = -0.15;
/// Lowest weight.
pub const MIN_WEIGHT: f32 = -2.0;
/// Highest weight.
pub const MAX_WEIGHT: f32 = 5.0;

/// The weights learnt from every live `reinforce` event, by event key.
#[derive(Clone, Debug, Default)]
pub struct Reinforcement {
    /// Weight of each event, by key.
    pub events: HashMap<u64, f32>,
    /// Weight of each pair reinforced together (smaller key first).
    pub pairs: HashMap<(u64, u64), f32>,
}

fn step(weight: &mut f32, delta: f32) {
    *weight = (*weight + delta).clamp(MIN_WEIGHT, MAX_WEIGHT);
}

impl Reinforcement {
    /// The weights of every live `reinforce` event in `p`.
    pub fn load(p: &Projections) -> Result<Reinforcement> {
        let mut stmt = p
            .graph
            .conn
            .prepare_cached(
                // `memlog reinforce` records each in a session of its own,
                // named reinforce-…: a range of the session index, not a
                // scan of every event on every search.
                "SELECT body FROM events
                 WHERE session >= 'reinforce-' AND session < 'reinforce.'
                   AND kind = 'reinforce' AND body IS NOT NULL
                 ORDER BY ts, seq, id",
            )
            .map_err(|e| Error::sql(&p.dir, e))?;
        let bodies = stmt
            .query_map(params![], |r| r.get::<_, String>(0))
            .map_err(|e| Error::sql(&p.dir, e))?;
        let mut learnt = Reinforcement::default();
        for body in bodies {
            let body = body.map_err(|e| Error::sql(&p.dir, e))?;
            if let Ok(Value::Object(body)) = serde_json::from_str::<Value>(&body) {
                learnt.apply_body(&body);
            }
        }
        // then those the index has not caught up with (they are newer)
        for u in p.unindexed().events() {
            if u.event.kind == Kind::Reinforce && u.event.session.starts_with("reinforce-") {
                learnt.apply_body(&u.event.body);
            }
        }
        Ok(learnt)
    }

    /// One `reinforce` event's body: its outcome on its targets.
    fn apply_body(&mut self, body: &Map<String, Value>) {
        let delta = match body.get("outcome").and_then(Value::as_str) {
            Some("success") => SUCCESS_STEP,
            Some("failure") => FAILURE_STEP,
            _ => return,
        };
        let targets: Vec<u64> = body
            .get("targets")
            .and_then(Value::as_array)
            .map(|t| t.iter().filter_map(Value::as_str).map(event_key).collect())
            .unwrap_or_default();
        self.apply(&targets, delta);
    }

    /// One `reinforce` event: every target and every pair of targets.
    pub fn apply(&mut self, targets: &[u64], delta: f32) {
        for (i, a) in targets.iter().enumerate() {
            step(self.events.entry(*a).or_default(), delta);
            for b in &targets[i + 1..] {
                if a != b {
                    step(self.pairs.entry(ordered(*a, *b)).or_default(), delta);
                }
            }
        }
    }

    /// Importance in [0, 1] after reinforcement: a positive weight moves the
    /// prior towards 1 (all the way at the maximum weight), a negative one
    /// towards 0 (at the minimum).
    pub fn importance(&self, key: u64, prior: f32) -> f32 {
        let w = self.events.get(&key).copied().unwrap_or(0.0);
        if w >= 0.0 {
            prior + (1.0 - prior) * w / MAX_WEIGHT
        } else {
            prior * (1.0 - w / MIN_WEIGHT)
        }
    }

    /// Events reinforced together with `key`, with the share of relevance
    /// that flows between them (positive pair weights only).
    pub fn partners(&self, key: u64) -> Vec<(u64, f32)> {
        let mut out: Vec<(u64, f32)> = self
            .pairs
            .iter()
            .filter(|(_, w)| **w > 0.0)
            .filter_map(|((a, b), w)| {
                let other = if *a == key {
                    *b
                } else if *b == key {
                    *a
                } else {
                    return None;
                };
                Some((other, w / MAX_WEIGHT))
            })
            .collect();
        out.sort_by_key(|(k, _)| *k);
        out
    }

    /// Whether nothing was reinforced.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
}

fn ordered(a: u64, b: u64) -> (u64, u64) {
    if a <= b { (a, b) } else { (b, a) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hebbian_rule_within_bounds() {
        let mut r = Reinforcement::default();
        for _ in 0..100 {
            r.apply(&[1, 2], SUCCESS_STEP);
        }
        assert_eq!(r.events[&1], MAX_WEIGHT);
        assert_eq!(r.pairs[&(1, 2)], MAX_WEIGHT);
        assert!((r.importance(1, 0.6) - 1.0).abs() < 1e-6);
        assert_eq!(r.partners(2), vec![(1, 1.0)]);
        for _ in 0..100 {
            r.apply(&[2, 3], FAILURE_STEP);
        }
        assert_eq!(r.events[&2], MIN_WEIGHT);
        assert_eq!(r.importance(2, 0.6), 0.0);
        assert!(r.partners(3).is_empty());
        // one failure outweighs one success
        let mut s = Reinforcement::default();
        s.apply(&[7], SUCCESS_STEP);
        s.apply(&[7], FAILURE_STEP);
        assert!(s.importance(7, 0.5) < 0.5);
        assert_eq!(s.importance(8, 0.5), 0.5);
    }
}
