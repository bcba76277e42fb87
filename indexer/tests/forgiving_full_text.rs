//! Full text that forgives: other forms of a word (stemming) and a typo in
//! a word that matches nothing (one edit), while an exact identifier still
//! ranks first.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use memlog_indexer::fts::{Filters, Fts, FtsDoc};

/// Indexes `(id, text)` pairs in a new index.
fn index(texts: &[(&str, &str)]) -> (tempfile::TempDir, Fts) {
    let dir = tempfile::tempdir().expect("tempdir");
    let fts = Fts::create(&dir.path().join("fts")).expect("create");
    let writer = fts.writer(15_000_000).expect("writer");
    for (id, text) in texts {
        fts.add(
            &writer,
            &FtsDoc {
                id,
                text,
                kind: "note",
                session: "s1",
                ts_ms: 0,
                tool: None,
                files: &[],
            },
        )
        .expect("add");
    }
    let mut writer = writer;
    writer.commit().expect("commit");
    (dir, fts)
}

/// The ids (first 16 hex digits as keys) found for `query`, best first.
fn found(fts: &Fts, query: &str) -> Vec<u64> {
    fts.search(query, &Filters::default(), 10)
        .expect("search")
        .into_iter()
        .map(|c| c.key)
        .collect()
}

fn key(id: &str) -> u64 {
    memlog_indexer::fts::event_key(id)
}

const DEPLOY: &str = "1111111111111111";
const KUBECTL: &str = "2222222222222222";
const OTHER: &str = "3333333333333333";
const EXACT: &str = "4444444444444444";
const PARTS: &str = "5555555555555555";

#[test]
fn another_form_of_a_word_finds_it() {
    let (_d, fts) = index(&[
        (DEPLOY, "We deploy with a blue-green switch on Fridays"),
        (OTHER, "The parser reads segments line by line"),
    ]);
    assert_eq!(found(&fts, "deployment"), [key(DEPLOY)]);
    assert_eq!(found(&fts, "deploying"), [key(DEPLOY)]);
    let (_d, fts) = index(&[(DEPLOY, "the deployments failed twice")]);
    assert_eq!(found(&fts, "deploy"), [key(DEPLOY)]);
}

#[test]
fn a_typo_in_an_unknown_word_is_forgiven() {
    let (_d, fts) = index(&[
        (KUBECTL, "ran kubectl apply -f deploy.yaml"),
        (OTHER, "The parser reads segments line by line"),
    ]);
    assert_eq!(found(&fts, "kubctl"), [key(KUBECTL)]);
    assert_eq!(found(&fts, "kubectl"), [key(KUBECTL)]);
    // a short word is not guessed at
    assert!(found(&fts, "prs").is_empty());
    // a known word is taken as written
    let hits = fts
        .search("parser", &Filters::default(), 10)
        .expect("search");
    assert_eq!(hits.len(), 1);
}

#[test]
fn an_exact_identifier_still_ranks_first() {
    let (_d, fts) = index(&[
        (PARTS, "get the user by their id from the users table"),
        (EXACT, "getUserById returns None for deleted users"),
        (OTHER, "user ids are stable"),
    ]);
    let hits = found(&fts, "getUserById");
    assert_eq!(hits.first(), Some(&key(EXACT)), "{hits:?}");
}

/// Also in a long text: length normalisation took the whole identifier's
/// weight, and short texts holding only its parts came first (field test
/// 9b: the one design doc naming `shopcli.plugins` ranked fourth).
#[test]
fn an_exact_identifier_in_a_long_text_ranks_first() {
    let filler = "the loader reads the manifest and the registry keeps each version. ".repeat(150);
    let long = format!("{filler} Plugins use the entry point group shopcli.plugins. {filler}");
    let mut texts = vec![
        (
            PARTS,
            "Which entry point group do shopcli plugins register under?",
        ),
        (EXACT, long.as_str()),
        (OTHER, "How do we release shopcli?"),
    ];
    // the rest of a small memory: short answers
    let ids: Vec<String> = (0..8).map(|i| format!("{:016x}", 0xa0 + i)).collect();
    texts.extend(ids.iter().map(|id| (id.as_str(), "OK, noted.")));
    let (_d, fts) = index(&texts);
    let hits = found(&fts, "shopcli.plugins");
    assert_eq!(hits.first(), Some(&key(EXACT)), "{hits:?}");
    // the tail of the log not indexed yet scores it the same way
    let tail = fts
        .relevance_of(
            "shopcli.plugins",
            &["Which shopcli plugins are there?", long.as_str()],
        )
        .expect("relevance");
    assert!(tail[1] > tail[0], "{tail:?}");
}

#[test]
fn word_rarity_tells_unseen_words_from_punctuation() {
    let (_d, fts) = index(&[
        (DEPLOY, "We deploy with a blue-green switch on Fridays"),
        (OTHER, "The parser reads segments line by line"),
        (EXACT, "The parser was rewritten"),
    ]);
    let words: Vec<String> = ["parser", "deployment", "zebrafish", "?"]
        .iter()
        .map(|w| w.to_string())
        .collect();
    let rarity = fts.word_rarity(&words).expect("rarity");
    let (parser, deployment) = (rarity[0].expect("analyzed"), rarity[1].expect("analyzed"));
    // rarer in the memory weighs more; another form of a word is that word
    assert!(deployment > parser && parser > 0.0, "{rarity:?}");
    // a word no event contains weighs nothing, punctuation is no word
    assert_eq!(rarity[2], Some(0.0));
    assert_eq!(rarity[3], None);
}

#[test]
fn a_text_not_indexed_yet_scores_as_it_will_once_indexed() {
    let texts = [
        (DEPLOY, "We deploy with a blue-green switch on Fridays"),
        (OTHER, "The parser reads segments line by line"),
        (
            KUBECTL,
            "kubectl rollout restart deployment/api after a config change",
        ),
    ];
    let new = (EXACT, "Deploy the parser fix with kubectl on Fridays only");
    let (_d, before) = index(&texts);
    let (_d2, after) = index(&[texts[0], texts[1], texts[2], new]);
    for query in [
        "deploy parser",
        "kubectl fridays",
        "parser",
        "nothing matches",
    ] {
        let guessed = before.relevance_of(query, &[new.1]).expect("relevance")[0];
        let indexed = after
            .search(query, &Filters::default(), 10)
            .expect("search")
            .into_iter()
            .find(|c| c.key == key(EXACT))
            .map_or(0.0, |c| c.relevance);
        assert!(
            (guessed - indexed).abs() < 0.02,
            "{query:?}: {guessed} before indexing, {indexed} after"
        );
    }
    // a word only the new text holds is not taken for its neighbour
    let (_d, fts) = index(&[(OTHER, "the kubectx helper switches contexts")]);
    let relevance = fts
        .relevance_of("kubectl", &["kubectl drains the node"])
        .unwrap();
    assert!(relevance[0] > 0.9, "{relevance:?}");
}

#[test]
fn a_passage_holding_the_query_together_covers_it_more_than_scattered_words() {
    let (_d, fts) = index(&[
        (DEPLOY, "We deploy with a blue-green switch on Fridays"),
        (OTHER, "The parser reads segments line by line"),
        (EXACT, "The parser was rewritten"),
    ]);
    let query = "when do we deploy the parser";
    let together = "we deploy the parser on Fridays";
    let scattered = "we deploy on Fridays, after lunch, once the tests, the review and \
                     the sign-off are through and everyone agrees; later that month the \
                     parser was looked at again";
    let covered = fts
        .passage_coverage(query, &[together, scattered, "nothing of it"], 16)
        .expect("coverage");
    assert!((covered[0] - 1.0).abs() < 1e-6, "{covered:?}");
    assert!(covered[1] < covered[0] && covered[1] > 0.0, "{covered:?}");
    assert_eq!(covered[2], 0.0);
    // a word no event contains counts against the coverage
    let unseen = fts
        .passage_coverage("deploy the zebrafish", &[together], 16)
        .expect("coverage");
    assert!(unseen[0] < 0.5, "{unseen:?}");
}
