//! Leaving a session out of a full-text search (what every prompt's recall
//! does with the live session) gives the best events of the others, in the
//! same order as a search of every session, whether the left-out session
//! has fewer documents in the index than the search fetches or more.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use memlog_indexer::fts::{Filters, Fts, FtsDoc};

/// An index of `others` events of session "other" and `own` of session
/// "live", every one about caches, with texts of varied length so that
/// their scores differ.
fn index(others: usize, own: usize) -> (tempfile::TempDir, Fts) {
    let dir = tempfile::tempdir().expect("tempdir");
    let fts = Fts::create(&dir.path().join("fts")).expect("create");
    let mut writer = fts.writer(15_000_000).expect("writer");
    for (i, session) in std::iter::repeat_n("other", others)
        .chain(std::iter::repeat_n("live", own))
        .enumerate()
    {
        let id = format!("{:016x}", i + 1);
        let text = format!(
            "the cache warms slowly{} (note {i})",
            " and then some more words".repeat(i % 7)
        );
        fts.add(
            &writer,
            &FtsDoc {
                id: &id,
                text: &text,
                kind: "note",
                session,
                ts_ms: i as i64,
                tool: None,
                files: &[],
            },
        )
        .expect("add");
    }
    writer.commit().expect("commit");
    (dir, fts)
}

fn keys(fts: &Fts, filters: &Filters, limit: usize) -> Vec<u64> {
    fts.search("why is the cache slow", filters, limit)
        .expect("search")
        .into_iter()
        .map(|c| c.key)
        .collect()
}

/// The best `limit` of session "other", found by searching every session
/// deep enough and dropping the live one's.
fn expected(fts: &Fts, others: usize, limit: usize) -> Vec<u64> {
    let all = keys(fts, &Filters::default(), 10_000);
    all.into_iter()
        .filter(|k| *k as usize <= others)
        .take(limit)
        .collect()
}

fn excluding_live() -> Filters {
    Filters {
        exclude_session: Some("live".into()),
        ..Filters::default()
    }
}

#[test]
fn a_session_is_left_out_whatever_its_size() {
    for own in [30, 600] {
        let (_d, fts) = index(120, own);
        let got = keys(&fts, &excluding_live(), 40);
        assert_eq!(got.len(), 40, "{own} live documents");
        assert_eq!(got, expected(&fts, 120, 40), "{own} live documents");
    }
}

#[test]
fn a_session_the_index_lacks_changes_nothing() {
    let (_d, fts) = index(120, 0);
    let filters = Filters {
        exclude_session: Some("nowhere".into()),
        ..Filters::default()
    };
    assert_eq!(
        keys(&fts, &filters, 40),
        keys(&fts, &Filters::default(), 40)
    );
}
