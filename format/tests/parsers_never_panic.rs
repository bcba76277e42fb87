//! Bounded fuzzing of the parsers input reaches in this crate: segment and
//! journal lines, the neutral import format and `.memlog.yaml`. Each gets
//! arbitrary bytes and structured mutations of a real sample (a golden
//! segment, the demo import file, the README's configuration); none may
//! panic. The case counts keep the whole run to seconds, so it runs with
//! every `cargo test` (cargo-fuzz needs a nightly toolchain).

use std::path::Path;

mod mutation;

use memlog_format::{Config, Event, neutral, segment};
use mutation::{edits, mutate};
use proptest::prelude::*;

const CASES: u32 = 1000;

const SEGMENT: &str = include_str!("../../fixtures/golden/segment-v1.jsonl");
const NEUTRAL: &str = include_str!("../../fixtures/demo/sessions.jsonl");
const CONFIG: &str = r#"ref: refs/heads/memlog
project: acme-shop
sync:
  remotes: [origin]
privacy:
  patterns: ["ACME-[0-9]{6}"]
tools:
  exclude: [TodoRead]
  max_output_bytes: 10000
  max_output_lines: 100
ranking:
  semantic: 0.4
  fts: 0.25
  recency: 0.2
  importance: 0.15
  half_life_days: 30
  levels:
    reinforced_successes: 10
    reinforced_rate: 0.8
    active_recalls: 3
    vitality_decay: 0.95
  fusion: weighted
  rrf_k: 60
  spread: 0.3
embedding:
  enabled: true
  model_dir: ~/models/minilm
  batch_size: 16
context:
  budget_tokens: 1500
  min_relevance: 0.3
hooks:
  inject: true
  inject_budget_ms: 300
  record_budget_ms: 100
  seal_idle_minutes: 120
  briefing_sessions: 5
"#;

/// Decodes segment bytes and uses every event that came out, as readers do.
fn decode_segment(bytes: &[u8]) {
    for trusted in [false, true] {
        let (events, problems) = if trusted {
            segment::decode_trusted(bytes)
        } else {
            segment::decode(bytes)
        };
        for e in &events {
            let line = e.canonical_line();
            let _ = Event::from_line(&line);
            let _ = e.headline(72);
        }
        for p in problems {
            let _ = p.message.len();
        }
    }
    let _ = segment::ids(bytes);
}

fn read_neutral(bytes: &[u8]) {
    for skip in [false, true] {
        if let Ok(batch) = neutral::read(bytes, "fuzz.jsonl", "fuzz", skip) {
            for (_, drafts) in batch.sessions {
                for (seq, d) in drafts.into_iter().enumerate() {
                    let _ = d.into_event(seq as u64).canonical_line();
                }
            }
        }
    }
}

fn parse_config(bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    let _ = Config::parse(&text, Path::new(".memlog.yaml"));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn segment_lines_never_panic(edits in edits(), noise in prop::collection::vec(any::<u8>(), 0..512)) {
        decode_segment(&mutate(SEGMENT.as_bytes(), &edits));
        decode_segment(&noise);
    }

    #[test]
    fn neutral_lines_never_panic(edits in edits(), noise in prop::collection::vec(any::<u8>(), 0..512)) {
        read_neutral(&mutate(NEUTRAL.as_bytes(), &edits));
        read_neutral(&noise);
    }

    #[test]
    fn configurations_never_panic(edits in edits(), noise in prop::collection::vec(any::<u8>(), 0..512)) {
        parse_config(&mutate(CONFIG.as_bytes(), &edits));
        parse_config(&noise);
    }
}

#[test]
fn the_samples_parse_before_they_are_mutated() {
    let (events, problems) = segment::decode(SEGMENT.as_bytes());
    assert!(!events.is_empty() && problems.is_empty(), "{problems:?}");
    let batch = neutral::read(NEUTRAL.as_bytes(), "demo", "demo", false);
    assert!(batch.is_ok_and(|b| !b.sessions.is_empty()));
    assert!(Config::parse(CONFIG, Path::new(".memlog.yaml")).is_ok());
}
