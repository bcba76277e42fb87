//! An update commits the full-text half, then the database. A reader that
//! opens the index in between (an update by `memlog watch` is always
//! running somewhere) reads it as the database says; only when no writer
//! is at work do halves from different runs mean an interrupted update.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

mod common;

use memlog_format::{Draft, Kind};
use memlog_indexer::lookup;
use memlog_indexer::projection::WriterLock;
use memlog_indexer::{Error, Projections};
use memlog_store::Recorder;

#[test]
fn a_reader_between_an_update_s_two_commits_is_not_told_the_index_is_damaged() {
    let (_dir, repo) = common::repo();
    let note = Draft::text("s1", "2026-01-01T00:00:00.000Z", Kind::Note, "p", "alpha");
    let (events, _) = Recorder::new(&repo).unwrap().record(vec![note]).unwrap();
    Projections::update(&repo).unwrap();
    // the full-text half of a run is committed, the database's is not yet
    let db = repo.layout().index_dir().join("graph.sqlite");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE meta SET value = 'next-run' WHERE key = 'generation'",
            [],
        )
        .unwrap();
    let writer = WriterLock::acquire(&repo).unwrap();
    let p = Projections::open(&repo).expect("readable while the writer commits");
    assert!(lookup::event(&p, &events[0].id).unwrap().is_some());
    drop((p, writer));
    // nobody is writing: the run was interrupted
    assert!(matches!(
        Projections::open(&repo),
        Err(Error::Corrupt { .. })
    ));
}
