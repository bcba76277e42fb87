//! The index knows whether the log holds what search reads on every query
//! besides its hits (reinforcements, superseding facts and rules): absent
//! after a rebuild that met none, present from the first one indexed, so
//! that search skips those queries only when they would find nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

mod common;

use memlog_format::{Draft, Kind};
use memlog_indexer::Projections;
use memlog_indexer::graph::RANKING_LINKS;
use memlog_store::{Recorder, Repo};
use serde_json::json;

use common::repo;

fn marker(repo: &Repo) -> Option<String> {
    Projections::open(repo)
        .unwrap()
        .graph()
        .get_meta(RANKING_LINKS)
        .unwrap()
}

#[test]
fn absent_until_a_superseding_fact_is_indexed_then_present_after_rebuilds() {
    let (_dir, repo) = repo();
    let recorder = Recorder::new(&repo).unwrap();
    let ts = |n: u32| format!("2026-01-01T00:{n:02}:00.000Z");
    let note = Draft::text("s1", ts(0), Kind::Note, "p", "Staging first");
    // a fact without `supersedes` is not read by every search
    let fact = Draft::new(
        "s1",
        ts(1),
        Kind::Fact,
        "p",
        json!({"text": "Staging first"})
            .as_object()
            .cloned()
            .unwrap(),
    );
    recorder
        .import(vec![("s1".into(), vec![note, fact])])
        .unwrap();
    Projections::update(&repo).unwrap();
    assert_eq!(marker(&repo).as_deref(), Some("absent"));

    // an incremental update that indexes one turns it on
    let newer = Draft::new(
        "s2",
        ts(2),
        Kind::Fact,
        "p",
        json!({"text": "Production first", "supersedes": ["abc"]})
            .as_object()
            .cloned()
            .unwrap(),
    );
    recorder.import(vec![("s2".into(), vec![newer])]).unwrap();
    Projections::update(&repo).unwrap();
    assert_eq!(marker(&repo).as_deref(), Some("present"));

    // and a rebuild finds it again
    Projections::rebuild(&repo).unwrap();
    assert_eq!(marker(&repo).as_deref(), Some("present"));
}
