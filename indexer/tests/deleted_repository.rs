//! A background `memlog index` (a session's end starts one) may still run
//! when the user deletes the project. It must fail, not make a ghost
//! `.git/memlog/index` where the project was: `create_dir_all` would have
//! made the whole chain again (hundreds of such folders piled up in `/tmp`
//! from the project's own tests).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

mod common;

use memlog_format::{Draft, Kind};
use memlog_indexer::Projections;
use memlog_store::Recorder;

#[test]
fn an_index_whose_repository_was_deleted_fails_and_makes_no_ghost_folder() {
    let (dir, repo) = common::repo();
    let note = Draft::text("s1", "2026-01-01T00:00:00.000Z", Kind::Note, "p", "alpha");
    Recorder::new(&repo).unwrap().record(vec![note]).unwrap();
    let project = dir.path().to_path_buf();
    std::fs::remove_dir_all(&project).unwrap();
    assert!(Projections::update(&repo).is_err());
    assert!(Projections::rebuild(&repo).is_err());
    assert!(repo.ensure_dirs().is_err());
    assert!(!project.exists(), "{} was made again", project.display());
}
