//! `memlog extract --facts`: facts an LLM produced, each aligned to the
//! words of the event it names (docs/DESIGN.md §6), or rejected.

use memlog_e2e::TestRepo;
use serde_json::{Value, json};

#[test]
fn facts_are_aligned_to_their_event_or_rejected() {
    let repo = TestRepo::new();
    let quote = "we chose Postgres for the ledger";
    let earlier = repo.record("s1", "user_prompt", &format!("Last week {quote}, right?"));
    let named = repo.record(
        "s1",
        "agent_response",
        &format!("Yes: {quote} because of its transactions."),
    );
    let korean = repo.record(
        "s1",
        "agent_response",
        "오늘 회의에서 벡터 검색을 먼저 구현하기로 결정했다.",
    );
    let facts = json!([
        // the quote is in two events: the named one is used
        {"text": "The ledger uses Postgres", "quote": quote, "event": named},
        // an LLM's slip: one letter changed
        {"text": "Postgres was chosen for transactions", "quote": "of its transactons", "event": &named[..12]},
        // Korean, one syllable changed
        {"text": "Vector search comes first", "quote": "벡터 검색을 먼저 구현하기를", "event": korean},
        // not in the event
        {"text": "We use MongoDB", "quote": "we chose MongoDB for the ledger", "event": named},
        // no such event
        {"text": "Nothing", "quote": quote, "event": "0123456789abcdef"},
        // incomplete
        {"text": "No quote", "event": named}
    ]);
    let file = repo.path().join("facts.json");
    std::fs::write(&file, facts.to_string()).unwrap();
    let out = repo
        .memlog(&["extract", "--facts", file.to_str().unwrap(), "--json"])
        .ok()
        .json();
    let recorded = out["recorded"].as_array().unwrap();
    assert_eq!(recorded.len(), 3, "{out:#}");
    assert_eq!(recorded[0]["event"], named.as_str(), "not {earlier}");
    assert_eq!(recorded[0]["match"], "exact");
    assert_eq!(
        (recorded[0]["start"].clone(), recorded[0]["end"].clone()),
        (json!(5), json!(37))
    );
    assert_eq!(recorded[1]["match"], "fuzzy");
    assert!(recorded[1]["score"].as_f64().unwrap() >= 0.85);
    assert_eq!(recorded[2]["match"], "fuzzy");
    assert_eq!(
        (recorded[2]["start"].clone(), recorded[2]["end"].clone()),
        (json!(8), json!(23))
    );
    let rejected: Vec<(u64, &str)> = out["rejected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["index"].as_u64().unwrap(), r["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(rejected.len(), 3, "{out:#}");
    assert!(
        rejected
            .iter()
            .any(|(i, r)| *i == 3 && r.contains("not in event"))
    );
    assert!(
        rejected
            .iter()
            .any(|(i, r)| *i == 4 && r.contains("no live event"))
    );
    assert!(
        rejected
            .iter()
            .any(|(i, r)| *i == 5 && r.contains("missing quote"))
    );

    let stored: Vec<Value> = repo
        .cat()
        .into_iter()
        .filter(|e| e["kind"] == "fact")
        .collect();
    assert_eq!(stored.len(), 3);
    assert_eq!(stored[0]["body"]["span"], json!([5, 37]));
    assert_eq!(stored[0]["body"]["matched_text"], quote);
    assert_eq!(
        stored[2]["body"]["matched_text"],
        "벡터 검색을 먼저 구현하기로"
    );

    // Again: nothing new.
    let again = repo
        .memlog(&["extract", "--facts", file.to_str().unwrap(), "--json"])
        .ok()
        .json();
    assert_eq!(again["recorded"].as_array().unwrap().len(), 0);
    assert_eq!(again["already_recorded"], 3);

    // Not JSON at all: an error naming the file.
    std::fs::write(&file, "facts: nope").unwrap();
    let bad = repo.memlog(&["extract", "--facts", file.to_str().unwrap()]);
    assert_eq!(bad.code(), Some(1));
    assert!(bad.stderr().contains("facts.json"), "{}", bad.stderr());
}
