//! Bounded fuzzing of journal tails: a journal whose end was torn, cut or
//! overwritten with anything (a crash mid-append, a disk that lied) is
//! read without panicking, and the next append still lands as one whole
//! event that reads back. Bounded so the run takes seconds (cargo-fuzz
//! needs a nightly toolchain).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

#[path = "../../format/tests/mutation/mod.rs"]
mod mutation;

use memlog_format::{Draft, Kind};
use memlog_store::journal::Journal;
use mutation::{edits, mutate};
use proptest::prelude::*;

fn draft(text: &str) -> Draft {
    Draft::text("s1", "2026-03-04T10:15:00.000Z", Kind::Note, "p", text)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn any_tail_reads_and_the_next_append_lands_whole(
        texts in prop::collection::vec(".{0,40}", 1..5),
        keep in any::<usize>(),
        edits in edits(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::new(dir.path(), "s1").unwrap();
        journal.append_all(texts.iter().map(|t| draft(t)).collect()).unwrap();
        let bytes = std::fs::read(journal.path()).unwrap();
        // the edits fall in the tail: everything before `keep` stays
        let keep = keep % (bytes.len() + 1);
        let mut torn = bytes[..keep].to_vec();
        torn.extend(mutate(&bytes[keep..], &edits));
        std::fs::write(journal.path(), &torn).unwrap();

        let (before, _) = journal.read().unwrap();
        let appended = journal.append(draft("after the tear")).unwrap();
        let (after, _) = journal.read().unwrap();
        prop_assert!(after.iter().any(|e| e.id == appended.id), "the append reads back");
        prop_assert!(after.len() >= before.len().min(1));
        if let Some(locked) = journal.lock_for_seal().unwrap() {
            prop_assert!(locked.events.iter().any(|e| e.id == appended.id));
            let _ = locked.has_bad_lines();
        }
    }
}
