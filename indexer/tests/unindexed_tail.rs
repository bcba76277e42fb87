//! What the log holds beyond the index (a session sealed after the last
//! update, lines a journal gained, everything when there is no index) is
//! searched with the index, scored as the index would score it, with
//! forgotten events left out and the read bounded.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

mod common;

use memlog_format::{Config, Draft, Kind};
use memlog_indexer::Projections;
use memlog_indexer::fts::Filters;
use memlog_indexer::projection::{MAX_PROMPT_BYTES, Reach, Unindexed};
use memlog_indexer::search::{Hit, SearchRequest, search};
use memlog_store::{Recorder, Repo};
use serde_json::json;

use common::repo;

/// What a prompt reads past the index, as a hook does.
fn read(p: &mut Projections, repo: &Repo) -> usize {
    p.read_unindexed(repo, Reach::Prompt { asking: None })
        .unwrap();
    searchable(p.unindexed())
}

/// How many events a search ranks beside the index.
fn searchable(u: &Unindexed) -> usize {
    u.searchable().count()
}

fn ts(n: usize) -> String {
    format!("2026-01-01T{:02}:{:02}:00.000Z", n / 60, n % 60)
}

/// Sessions of notes about unrelated chores, sealed (one commit each).
fn background(repo: &Repo, sessions: usize) {
    let chores = [
        "rotate the staging certificates before friday",
        "the build cache lives on the second disk",
        "release notes go out with every tag",
        "lint warnings fail the pipeline since march",
    ];
    let recorder = Recorder::new(repo).unwrap();
    let batch = (0..sessions)
        .map(|s| {
            let id = format!("old{s}");
            let drafts = (0..4)
                .map(|i| Draft::text(&id, ts(s * 4 + i), Kind::Note, "p", chores[(s + i) % 4]))
                .collect();
            (id, drafts)
        })
        .collect();
    recorder.import(batch).unwrap();
}

fn seal(repo: &Repo, session: &str, at: usize, texts: &[&str]) {
    let drafts = texts
        .iter()
        .enumerate()
        .map(|(i, t)| Draft::text(session, ts(at + i), Kind::AgentResponse, "p", *t))
        .collect();
    Recorder::new(repo)
        .unwrap()
        .import(vec![(session.to_string(), drafts)])
        .unwrap();
}

fn find(p: &Projections, query: &str) -> Vec<Hit> {
    search(
        p,
        &Config::default().ranking,
        &SearchRequest {
            query: query.into(),
            limit: 5,
            ..Default::default()
        },
    )
    .unwrap()
}

const ANSWER: &str = "The zebrafish telemetry lives in src/telemetry.rs, one line per reading.";

/// Five indexed sessions, then one sealed after the update that says
/// [`ANSWER`].
fn answer_sealed_after_the_index() -> (tempfile::TempDir, Repo) {
    let (d, repo) = repo();
    background(&repo, 5);
    Projections::update(&repo).unwrap();
    seal(&repo, "new", 100, &["Let me look.", ANSWER]);
    (d, repo)
}

#[test]
fn a_session_sealed_after_the_index_is_found_with_it() {
    let (_d, repo) = answer_sealed_after_the_index();
    let mut p = Projections::open(&repo).unwrap();
    assert!(
        find(&p, "zebrafish telemetry").is_empty(),
        "not indexed yet"
    );
    assert_eq!(read(&mut p, &repo), 2);
    assert!(!p.unindexed().is_truncated());
    let hits = find(&p, "zebrafish telemetry");
    assert_eq!(hits.first().map(|h| h.text.as_str()), Some(ANSWER));
    assert_eq!(hits[0].session, "new");

    // once indexed, the tail is empty and the hit the same
    Projections::update(&repo).unwrap();
    let mut p = Projections::open(&repo).unwrap();
    assert_eq!(read(&mut p, &repo), 0);
    assert_eq!(find(&p, "zebrafish telemetry")[0].text, ANSWER);
}

#[test]
fn the_tail_is_filtered_by_the_files_its_texts_name() {
    let (_d, repo) = answer_sealed_after_the_index();
    let mut p = Projections::open(&repo).unwrap();
    assert_eq!(read(&mut p, &repo), 2);
    let by_file = |file: &str| {
        search(
            &p,
            &Config::default().ranking,
            &SearchRequest {
                query: "zebrafish telemetry".into(),
                limit: 5,
                filters: Filters {
                    file: Some(file.into()),
                    ..Default::default()
                },
                ..Default::default()
            },
        )
        .unwrap()
    };
    assert_eq!(
        by_file("src/telemetry.rs").first().map(|h| h.text.as_str()),
        Some(ANSWER)
    );
    assert!(by_file("src/billing.rs").is_empty());
}

#[test]
fn the_tail_scores_as_the_index_does() {
    let (_d, indexed) = repo();
    let (_e, tailed) = repo();
    for r in [&indexed, &tailed] {
        background(r, 20);
    }
    Projections::update(&tailed).unwrap();
    for r in [&indexed, &tailed] {
        seal(
            r,
            "new",
            500,
            &[ANSWER, "The certificates rotate on friday."],
        );
    }
    Projections::update(&indexed).unwrap();
    let full = Projections::open(&indexed).unwrap();
    let mut partial = Projections::open(&tailed).unwrap();
    read(&mut partial, &tailed);
    for query in [
        "zebrafish telemetry",
        "where do the readings of the zebrafish go",
        "when do certificates rotate",
    ] {
        let a = find(&full, query);
        let b = find(&partial, query);
        let texts = |h: &[Hit]| h.iter().take(2).map(|h| h.text.clone()).collect::<Vec<_>>();
        assert_eq!(texts(&a), texts(&b), "{query}");
        for (x, y) in a.iter().zip(&b).take(2) {
            assert!(
                (x.parts.fts - y.parts.fts).abs() < 0.05,
                "{query}: {} indexed, {} read directly ({})",
                x.parts.fts,
                y.parts.fts,
                x.text
            );
        }
    }
}

#[test]
fn without_an_index_the_log_is_searched_directly() {
    let (_d, repo) = repo();
    background(&repo, 3);
    seal(&repo, "new", 100, &[ANSWER]);
    assert!(matches!(
        Projections::open(&repo),
        Err(memlog_indexer::Error::NotBuilt(_))
    ));
    let mut p = Projections::empty().unwrap();
    assert_eq!(read(&mut p, &repo), 13);
    let hits = find(&p, "which file holds the zebrafish telemetry");
    assert_eq!(hits[0].text, ANSWER);
    let sessions = memlog_indexer::overview::recent_sessions(&p, "", 10).unwrap();
    assert!(sessions.is_empty(), "notes and answers only: no prompts");
}

#[test]
fn journal_lines_past_the_watermark_are_read_and_forgotten_ones_hidden() {
    let (_d, repo) = repo();
    background(&repo, 2);
    let recorder = Recorder::new(&repo).unwrap();
    let prompt = Draft::text("live", ts(200), Kind::UserPrompt, "p", "Plot the zebrafish");
    recorder.record(vec![prompt]).unwrap();
    Projections::update(&repo).unwrap();
    let (events, _) = recorder
        .record(vec![
            Draft::text("live", ts(201), Kind::AgentResponse, "p", ANSWER),
            Draft::text(
                "live",
                ts(202),
                Kind::Note,
                "p",
                "zebrafish tanks are cleaned on monday",
            ),
        ])
        .unwrap();
    let mut p = Projections::open(&repo).unwrap();
    assert_eq!(
        read(&mut p, &repo),
        2,
        "the indexed prompt is not read again"
    );
    assert_eq!(find(&p, "zebrafish").len(), 3);
    // the session's journal gets a forget of the answer
    let forget = Draft::new(
        "live",
        ts(203),
        Kind::Forget,
        "p",
        json!({"targets": [events[0].id.as_str()]})
            .as_object()
            .cloned()
            .unwrap(),
    );
    recorder.record(vec![forget]).unwrap();
    read(&mut p, &repo);
    let hits = find(&p, "zebrafish");
    assert_eq!(hits.len(), 2);
    assert!(hits.iter().all(|h| h.text != ANSWER));
    // session neighbours and filters apply to the tail too
    let only_notes = search(
        &p,
        &Config::default().ranking,
        &SearchRequest {
            query: "zebrafish".into(),
            limit: 5,
            filters: Filters {
                kinds: vec!["note".into()],
                ..Filters::default()
            },
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(only_notes.len(), 1);
    assert_eq!(only_notes[0].kind, "note");
}

#[test]
fn a_tail_past_the_bound_keeps_its_newest_events() {
    let (_d, repo) = repo();
    Projections::update(&repo).unwrap();
    let filler = "x".repeat(8_000);
    let drafts: Vec<Draft> = (0..(MAX_PROMPT_BYTES / 8_000 + 50))
        .map(|i| Draft::text("big", ts(i), Kind::Note, "p", format!("{filler} step {i}")))
        .chain([Draft::text("big", ts(3_000), Kind::Note, "p", ANSWER)])
        .collect();
    Recorder::new(&repo)
        .unwrap()
        .import(vec![("big".into(), drafts)])
        .unwrap();
    let mut p = Projections::open(&repo).unwrap();
    assert!(read(&mut p, &repo) < MAX_PROMPT_BYTES / 8_000);
    assert!(p.unindexed().is_truncated());
    assert_eq!(find(&p, "zebrafish")[0].text, ANSWER);
}

#[test]
fn a_word_only_the_tail_holds_is_not_taken_for_a_typo() {
    let (_d, repo) = repo();
    background(&repo, 3);
    seal(
        &repo,
        "k",
        50,
        &["The klokakax dashboard reads the metrics store."],
    );
    Projections::update(&repo).unwrap();
    // one letter from an indexed word, and only in the tail
    seal(
        &repo,
        "m",
        60,
        &["The mlokakax dashboard reads the vault store."],
    );
    let mut p = Projections::open(&repo).unwrap();
    read(&mut p, &repo);
    let hits = find(&p, "where does mlokakax read from");
    assert_eq!(hits[0].session, "m", "{hits:#?}");
    // a word nobody holds is still corrected
    assert_eq!(find(&p, "klokakex")[0].session, "k");
}
