//! The task entity tables are a projection: whatever task events arrive, in
//! whatever batches, with forgets among them, updating incrementally gives
//! the rows a rebuild gives (property test over the real projection code).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

mod common;

use memlog_format::{Draft, Kind};
use memlog_indexer::Projections;
use memlog_store::{Recorder, Repo};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

use common::repo;

const TITLES: [&str; 4] = [
    "Fix the login redirect loop",
    "Fix the login redirect loops",
    "Write the migration guide",
    "Deploy to staging",
];
const STATUSES: [&str; 6] = [
    "pending",
    "in_progress",
    "blocked",
    "done",
    "cancelled",
    "completed",
];
const BLOCKERS: [&str; 4] = [
    "https://example.com/issue/1",
    "ACME-7",
    "staging is green",
    "Write the migration guide",
];

/// One step: a batch of task events in a new session, or a forget of an
/// earlier event; then maybe an incremental update.
#[derive(Clone, Debug)]
enum Step {
    Session(Vec<(usize, usize, usize, bool)>, bool),
    Forget(usize, bool),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (proptest::collection::vec((0..4usize, 0..4usize, 0..6usize, any::<bool>()), 1..5), any::<bool>())
            .prop_map(|(events, update)| Step::Session(events, update)),
        1 => (any::<usize>(), any::<bool>()).prop_map(|(n, update)| Step::Forget(n, update)),
    ]
}

fn body(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap()
}

fn task_draft(session: &str, n: usize, event: (usize, usize, usize, bool)) -> Draft {
    let (kind, title, status, todo) = event;
    let ts = format!("2026-01-01T00:{:02}:{:02}.000Z", n / 60 % 60, n % 60);
    let key = memlog_format::key::canonical_key(TITLES[title], Some("p"));
    let source = if todo { "TodoWrite" } else { "cli" };
    let (kind, fields) = match kind {
        0 => (
            Kind::TaskCreated,
            json!({"key": key, "title": TITLES[title], "status": STATUSES[status], "source": source}),
        ),
        1 | 2 => (
            Kind::TaskStatusChanged,
            json!({"key": key, "to": STATUSES[status], "source": source}),
        ),
        _ => (
            Kind::TaskBlockersSet,
            json!({"key": key, "mode": if todo { "replace" } else { "suggest" },
                   "blockers": [BLOCKERS[status % 4]]}),
        ),
    };
    Draft::new(session, ts, kind, "p", body(fields))
}

fn dump(repo: &Repo) -> Vec<Vec<String>> {
    let p = Projections::open(repo).unwrap();
    [
        "SELECT entity_id || '|' || entity_type || '|' || title || '|' || stage || '|' || current_json || '|' || created_at || '|' || updated_at FROM entities WHERE entity_type IN ('task', 'condition') ORDER BY entity_id",
        "SELECT entity_type || '|' || canonical_key || '|' || entity_id || '|' || is_primary || '|' || created_at FROM entity_aliases ORDER BY 1",
        "SELECT src_id || '|' || rel_type || '|' || dst_id || '|' || evidence || '|' || ts FROM edges WHERE rel_type != 'touches' ORDER BY 1",
        "SELECT entity_id FROM entities WHERE entity_type = 'artifact' ORDER BY 1",
    ]
    .iter()
    .map(|q| {
        let mut stmt = p.graph().conn.prepare(q).unwrap();
        stmt.query_map([], |r| r.get::<_, String>(0))
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap()
    })
    .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn incremental_task_rows_equal_rebuilt_ones(steps in proptest::collection::vec(step(), 1..8)) {
        let (_dir, repo) = repo();
        let recorder = Recorder::new(&repo).unwrap();
        let mut n = 0usize;
        let mut ids: Vec<String> = Vec::new();
        for (i, s) in steps.iter().enumerate() {
            let update = match s {
                Step::Session(events, update) => {
                    let session = format!("s{i}");
                    let drafts: Vec<Draft> = events
                        .iter()
                        .map(|e| {
                            n += 1;
                            task_draft(&session, n, *e)
                        })
                        .collect();
                    // import numbers a session's drafts from 0; nothing here
                    // is changed by the privacy filter, so ids are known
                    ids.extend(
                        drafts
                            .iter()
                            .enumerate()
                            .map(|(seq, d)| d.clone().into_event(seq as u64).id.into_string()),
                    );
                    recorder.import(vec![(session, drafts)]).unwrap();
                    *update
                }
                Step::Forget(k, update) => {
                    if !ids.is_empty() {
                        let target = ids[k % ids.len()].clone();
                        n += 1;
                        let forget = Draft::new(
                            format!("f{i}"),
                            format!("2026-02-01T00:00:{:02}.000Z", n % 60),
                            Kind::Forget,
                            "p",
                            body(json!({"targets": [target]})),
                        );
                        recorder.import(vec![(format!("f{i}"), vec![forget])]).unwrap();
                    }
                    *update
                }
            };
            if update {
                Projections::update(&repo).unwrap();
            }
        }
        Projections::update(&repo).unwrap();
        let incremental = dump(&repo);
        Projections::rebuild(&repo).unwrap();
        prop_assert_eq!(dump(&repo), incremental);
    }
}
