//! Memory levels and vitality (docs/DESIGN.md §8), which feed the
//! ranking's importance signal.
//!
//! | level | meaning | from the log |
//! | --- | --- | --- |
//! | L0 | raw event | any event |
//! | L1 | extracted knowledge | a `note`, a `session_summary`, a `fact` without evidence |
//! | L2 | evidence-aligned | a `fact` with a span in its source event (`memlog extract --facts`) |
//! | L3 | reinforced | any memory with ≥ `reinforced_successes` successes (default 10) and a success rate ≥ `reinforced_rate` (80%), from `reinforce` events |
//! | L4 | active | an L3 memory recalled (injected or cited, `recall` events) ≥ `active_recalls` times (3) |
//!
//! Vitality starts at 1 and is multiplied by `vitality_decay` (0.95) for
//! every day since the memory was last touched (recorded or recalled): it
//! decays with age and recovers with each recall.
//!
//! The `memory` table holds only counts derived from the log (the level a
//! fact starts at, the successes, failures and recalls of any event, its
//! last recall), derived again from the fact, reinforce and recall events
//! whenever some arrive or events are hidden, so a rebuild gives the same
//! rows. Notes and summaries are L1 by kind and have a row only once used. Levels and vitality are
//! computed when read, from those counts, the configuration and the time:
//! changing the thresholds needs no rebuild.

use std::collections::BTreeMap;
use std::path::Path;

use memlog_format::config::LevelsConfig;
use memlog_format::{EventId, Kind};
use rusqlite::{OptionalExtension, Transaction, params};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::derive;
use crate::{Error, Result};

/// Kinds whose arrival changes the `memory` table. Notes and summaries
/// are L1 by their kind alone ([`kind_level`], read with the event), so
/// that the table stays small and a session of notes does not fold it
/// again: at a million events it held a row per note and was rewritten by
/// every update that brought one.
pub const MEMORY_KINDS: [Kind; 3] = [Kind::Fact, Kind::Reinforce, Kind::Recall];

/// The level an event has by its kind: L1 for extracted knowledge, L2 for
/// a rule (promoted from the facts it names as evidence).
pub fn kind_level(kind: &str) -> u8 {
    match kind {
        "note" | "session_summary" | "fact" | "concept" => 1,
        // promoted by reflection from facts it names as evidence
        "rule" => 2,
        _ => 0,
    }
}

/// What the log says about one memory.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MemoryRow {
    /// 0 raw, 1 extracted, 2 evidence-aligned.
    pub base_level: u8,
    /// Times it helped.
    pub success: u32,
    /// Times it misled.
    pub failure: u32,
    /// Times it was injected or cited.
    pub recalls: u32,
    /// When it was last recalled.
    pub last_recall: Option<String>,
}

/// A memory's level and vitality at a moment.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Standing {
    /// Its level, L0 to L4 (docs/DESIGN.md §8).
    pub level: u8,
    /// Its vitality now, in [0, 1].
    pub vitality: f32,
    /// The counts it was computed from.
    #[serde(flatten)]
    pub row: MemoryRow,
}

impl MemoryRow {
    /// Successes over uses; `None` before any use.
    pub fn success_rate(&self) -> Option<f32> {
        let uses = self.success + self.failure;
        (uses > 0).then(|| self.success as f32 / uses as f32)
    }

    /// Its level under `cfg`'s thresholds.
    pub fn level(&self, cfg: &LevelsConfig) -> u8 {
        let reinforced = self.success >= cfg.reinforced_successes.max(1)
            && self
                .success_rate()
                .is_some_and(|r| r >= cfg.reinforced_rate);
        match (reinforced, self.recalls >= cfg.active_recalls) {
            (true, true) => 4,
            (true, false) => 3,
            _ => self.base_level,
        }
    }

    /// Vitality `now_ms`, for a memory recorded at `ts_ms`.
    pub fn vitality(&self, ts_ms: i64, now_ms: i64, cfg: &LevelsConfig) -> f32 {
        let touched = self
            .last_recall
            .as_deref()
            .map(memlog_format::time::to_ms)
            .unwrap_or(0)
            .max(ts_ms);
        let days = (now_ms - touched).max(0) as f64 / 86_400_000.0;
        cfg.vitality_decay.clamp(0.0, 1.0).powf(days as f32)
    }
}

/// How much a level weighs in importance.
const LEVEL_SCORE: [f32; 5] = [0.0, 0.6, 0.8, 0.9, 1.0];
/// The largest share of the remaining importance a fresh recall adds.
const RECALL_BOOST: f32 = 0.3;

/// The importance signal of an event, in [0, 1]: its kind's prior (facts
/// over notes over conversation over tool output), raised to its level's
/// score, scaled by its success rate once it has been used (a memory that
/// misled loses weight), and lifted toward 1 by recent recalls (vitality).
/// An event the log says nothing more about keeps its kind's prior.
pub fn importance(
    kind: &str,
    row: Option<&MemoryRow>,
    ts_ms: i64,
    now_ms: i64,
    cfg: &LevelsConfig,
) -> f32 {
    let prior = derive::importance(kind);
    let Some(row) = row else {
        return prior;
    };
    let mut score = prior.max(LEVEL_SCORE[usize::from(row.level(cfg).min(4))]);
    if let Some(rate) = row.success_rate() {
        score *= 0.5 + 0.5 * rate;
    }
    if row.recalls > 0 {
        score += (1.0 - score) * RECALL_BOOST * row.vitality(ts_ms, now_ms, cfg);
    }
    score.clamp(0.0, 1.0)
}

fn sql_err(e: rusqlite::Error) -> Error {
    Error::sql(Path::new("graph.sqlite"), e)
}

/// The event ids a `reinforce` or `recall` body names: `targets` (a list)
/// or `target` (one id).
pub(crate) fn targets(body: &Map<String, Value>) -> Vec<EventId> {
    let mut out = crate::supersede::ids_in(body, "targets");
    out.extend(crate::supersede::ids_in(body, "target"));
    out.sort();
    out.dedup();
    out
}

/// Whether a `reinforce` body reports a success: `outcome: "success"` or
/// `success: true` (`failure` / `false` otherwise); `None` if it says
/// neither.
pub(crate) fn outcome(body: &Map<String, Value>) -> Option<bool> {
    match body.get("outcome").and_then(Value::as_str) {
        Some("success") => return Some(true),
        Some("failure") => return Some(false),
        _ => {}
    }
    if let Some(b) = body.get("success").and_then(Value::as_bool) {
        return Some(b);
    }
    match body.get("result").and_then(Value::as_str) {
        Some("success") => Some(true),
        Some("failure") => Some(false),
        _ => None,
    }
}

/// Derives the `memory` table again from the live events.
pub fn refold(tx: &Transaction) -> Result<()> {
    let mut rows: BTreeMap<String, MemoryRow> = BTreeMap::new();
    {
        let mut stmt = tx
            .prepare(
                "SELECT id, kind, body FROM events
                 WHERE kind IN ('fact', 'reinforce', 'recall')
                 ORDER BY ts, session, seq, id",
            )
            .map_err(sql_err)?;
        // by key: `id` alone is not indexed (SCHEMA.md)
        let mut ts_of = tx
            .prepare("SELECT ts FROM events WHERE key = ?1 AND id = ?2")
            .map_err(sql_err)?;
        let key = |id: &str| crate::fts::event_key(id) as i64;
        let events = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, Option<String>>(2)?,
                ))
            })
            .map_err(sql_err)?
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(sql_err)?;
        for (id, kind, body) in events {
            let body: Map<String, Value> = body
                .and_then(|b| serde_json::from_str(&b).ok())
                .unwrap_or_default();
            match kind.as_str() {
                "reinforce" | "recall" => {
                    for target in targets(&body) {
                        // only live memories count: a forgotten one is gone
                        let live: Option<String> = ts_of
                            .query_row(params![key(&target), target.as_str()], |r| r.get(0))
                            .optional()
                            .map_err(sql_err)?;
                        if live.is_none() {
                            continue;
                        }
                        let row = rows.entry(target.into_string()).or_default();
                        if kind == "recall" {
                            row.recalls += 1;
                            let ts: Option<String> = ts_of
                                .query_row(params![key(&id), id], |r| r.get(0))
                                .optional()
                                .map_err(sql_err)?;
                            row.last_recall = row.last_recall.take().max(ts);
                        } else {
                            match outcome(&body) {
                                Some(true) => row.success += 1,
                                Some(false) => row.failure += 1,
                                None => {}
                            }
                        }
                    }
                }
                _ => {
                    let aligned = kind == "fact" && body.get("span").is_some();
                    rows.entry(id).or_default().base_level = if aligned { 2 } else { 1 };
                }
            }
        }
    }
    tx.execute("DELETE FROM memory", []).map_err(sql_err)?;
    let mut insert = tx
        .prepare(
            "INSERT INTO memory(event_id, base_level, success, failure, recalls, last_recall)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )
        .map_err(sql_err)?;
    for (id, r) in rows {
        insert
            .execute(params![
                id,
                r.base_level,
                r.success,
                r.failure,
                r.recalls,
                r.last_recall
            ])
            .map_err(sql_err)?;
    }
    Ok(())
}

/// The `memory` columns [`memory_row`] reads, for a query that joins
/// `memory m` to `events e`.
pub(crate) const MEMORY_COLUMNS: &str =
    "m.base_level, m.success, m.failure, m.recalls, m.last_recall";

/// An event's memory from a row whose columns from `at` on are
/// [`MEMORY_COLUMNS`]: its `memory` row with the level its kind gives, or
/// for an event with no row, a row of that level alone (`None` for a raw
/// event).
pub(crate) fn memory_row(
    kind: &str,
    r: &rusqlite::Row,
    at: usize,
) -> rusqlite::Result<Option<MemoryRow>> {
    let by_kind = kind_level(kind);
    let stored: Option<u8> = r.get(at)?;
    Ok(match stored {
        Some(base) => Some(MemoryRow {
            base_level: base.max(by_kind),
            success: r.get(at + 1)?,
            failure: r.get(at + 2)?,
            recalls: r.get(at + 3)?,
            last_recall: r.get(at + 4)?,
        }),
        None => (by_kind > 0).then(|| MemoryRow {
            base_level: by_kind,
            ..MemoryRow::default()
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = 86_400_000;

    #[test]
    fn levels_follow_the_thresholds() {
        let cfg = LevelsConfig::default();
        let mut r = MemoryRow {
            base_level: 2,
            ..Default::default()
        };
        assert_eq!(r.level(&cfg), 2);
        r.success = 9;
        assert_eq!(r.level(&cfg), 2, "nine successes are not enough");
        r.success = 10;
        r.failure = 3;
        assert_eq!(r.level(&cfg), 2, "10 of 13 is 77%, below 80%");
        r.failure = 2;
        assert_eq!(r.level(&cfg), 3, "10 of 12 is 83%");
        r.recalls = 3;
        assert_eq!(r.level(&cfg), 4, "and recalled three times: active");
        r.success = 0;
        r.failure = 0;
        assert_eq!(r.level(&cfg), 2, "recalls alone do not reinforce");
    }

    #[test]
    fn vitality_decays_and_recovers_with_recall() {
        let cfg = LevelsConfig::default();
        let mut r = MemoryRow::default();
        let v = r.vitality(0, 10 * DAY, &cfg);
        assert!((v - 0.95f32.powi(10)).abs() < 1e-4, "{v}");
        r.last_recall = Some("1970-01-10T00:00:00.000Z".into());
        let v = r.vitality(0, 10 * DAY, &cfg);
        assert!((v - 0.95).abs() < 1e-4, "a recall a day ago: {v}");
    }

    #[test]
    fn importance_rewards_success_and_recall() {
        let cfg = LevelsConfig::default();
        let now = 100 * DAY;
        let plain = importance("agent_response", None, 0, now, &cfg);
        assert_eq!(plain, derive::importance("agent_response"));
        let aligned = MemoryRow {
            base_level: 2,
            ..Default::default()
        };
        // the level raises a kind whose prior is lower, and never lowers one
        assert_eq!(
            importance("agent_response", Some(&aligned), 0, now, &cfg),
            0.8
        );
        assert_eq!(importance("note", Some(&aligned), 0, now, &cfg), 0.9);
        let misled = MemoryRow {
            base_level: 1,
            success: 1,
            failure: 9,
            ..Default::default()
        };
        assert!(importance("note", Some(&misled), 0, now, &cfg) < 0.6);
        let recalled = MemoryRow {
            recalls: 1,
            last_recall: Some("1970-04-10T00:00:00.000Z".into()),
            ..Default::default()
        };
        assert!(importance("agent_response", Some(&recalled), 0, now, &cfg) > plain + 0.1);
    }
}
