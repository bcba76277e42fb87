//! Memory levels are a pure function of the log: an index updated step by
//! step and one rebuilt from scratch hold the same `memory` rows, and the
//! levels read from them follow the thresholds.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use std::process::Command;

use memlog_format::config::LevelsConfig;
use memlog_format::{Draft, Kind};
use memlog_indexer::{Projections, standing};
use memlog_store::{Recorder, Repo};
use serde_json::{Map, Value, json};

fn repo() -> (tempfile::TempDir, Repo) {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        vec!["init", "-q", "-b", "main"],
        vec![
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "init",
        ],
    ] {
        let status = Command::new("git")
            .args(&args)
            .current_dir(dir.path())
            .status()
            .unwrap();
        assert!(status.success());
    }
    let repo = Repo::discover(dir.path()).unwrap();
    repo.ensure_dirs().unwrap();
    (dir, repo)
}

fn body(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap()
}

type Row = (String, i64, i64, i64, i64, Option<String>);

fn dump(repo: &Repo) -> Vec<Row> {
    let p = Projections::open(repo).unwrap();
    let mut stmt = p
        .graph()
        .conn
        .prepare(
            "SELECT event_id, base_level, success, failure, recalls, last_recall FROM memory ORDER BY event_id",
        )
        .unwrap();
    stmt.query_map([], |r| {
        Ok((
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            r.get(5)?,
        ))
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

#[test]
fn rebuilt_levels_equal_incremental_ones() {
    let (_dir, repo) = repo();
    let recorder = Recorder::new(&repo).unwrap();
    let ts = |n: u32| format!("2026-01-01T00:{n:02}:00.000Z");
    let note = Draft::text(
        "s1",
        ts(0),
        Kind::Note,
        "p",
        "Deploys go through the staging cluster",
    );
    let fact = Draft::new(
        "s1",
        ts(1),
        Kind::Fact,
        "p",
        body(json!({"text": "Staging first", "event": "x", "span": [0, 7], "match": "exact"})),
    );
    let prompt = Draft::text("s1", ts(2), Kind::UserPrompt, "p", "how do we deploy?");
    recorder
        .import(vec![("s1".into(), vec![note, fact, prompt])])
        .unwrap();
    Projections::update(&repo).unwrap();
    let ids: Vec<String> = {
        let p = Projections::open(&repo).unwrap();
        let mut stmt = p
            .graph()
            .conn
            .prepare("SELECT id FROM events WHERE session = 's1' ORDER BY seq")
            .unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    let (note_id, fact_id, prompt_id) = (&ids[0], &ids[1], &ids[2]);

    // Eleven uses of the fact (ten successes), then recalls of it and of
    // the prompt, in sessions indexed one after the other.
    let reinforce: Vec<Draft> = (0..11u32)
        .map(|n| {
            let outcome = if n == 0 { "failure" } else { "success" };
            Draft::new(
                "s2",
                ts(10 + n),
                Kind::Reinforce,
                "p",
                body(json!({"targets": [fact_id], "outcome": outcome})),
            )
        })
        .collect();
    recorder.import(vec![("s2".into(), reinforce)]).unwrap();
    Projections::update(&repo).unwrap();
    let mut drafts: Vec<Draft> = (0..3u32)
        .map(|n| {
            Draft::new(
                "s3",
                ts(30 + n),
                Kind::Recall,
                "p",
                body(json!({"targets": [fact_id, prompt_id], "query": "deploy"})),
            )
        })
        .collect();
    // the other shape announced for `reinforce`: one target, a flag
    drafts.push(Draft::new(
        "s3",
        ts(40),
        Kind::Reinforce,
        "p",
        body(json!({"target": note_id, "success": false})),
    ));
    recorder.import(vec![("s3".into(), drafts)]).unwrap();
    Projections::update(&repo).unwrap();

    let incremental = dump(&repo);
    assert_eq!(incremental.len(), 3, "{incremental:?}");
    Projections::rebuild(&repo).unwrap();
    assert_eq!(dump(&repo), incremental);

    let cfg = LevelsConfig::default();
    let p = Projections::open(&repo).unwrap();
    let standing = |id: &str| standing::standing(&p, id, &cfg).unwrap().unwrap();
    let fact = standing(fact_id);
    assert_eq!(
        (
            fact.level,
            fact.row.success,
            fact.row.failure,
            fact.row.recalls
        ),
        (4, 10, 1, 3)
    );
    assert_eq!(standing(note_id).level, 1);
    assert_eq!(standing(note_id).row.failure, 1);
    assert_eq!(
        standing(prompt_id).level,
        0,
        "recalls alone do not raise a level"
    );
    let strict = LevelsConfig {
        reinforced_successes: 20,
        ..LevelsConfig::default()
    };
    let fact = standing::standing(&p, fact_id, &strict).unwrap().unwrap();
    assert_eq!(fact.level, 2);
}
