//! Facts anchored to code (issue 31): a fact citing a file records the
//! commit it was made at; `memlog verify` finds it stale when the file
//! changed in later commits (broken when its quoted code is gone); a stale
//! fact ranks below an unchanged one and is injected with its marker. A
//! replaced fact's source loses rank with it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use memlog_e2e::TestRepo;
use serde_json::{Value, json};

fn commit_file(repo: &TestRepo, path: &str, text: &str) {
    let full = repo.path().join(path);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(full, text).unwrap();
    repo.git(&["add", path]).ok();
    repo.git(&["commit", "-q", "-m", &format!("change {path}")])
        .ok();
}

/// Records `answer` and a fact quoting it; returns the fact's id.
fn fact(repo: &TestRepo, session: &str, answer: &str, text: &str, quote: &str) -> (String, String) {
    let source = repo.record(session, "agent_response", answer);
    let out = repo
        .memlog_stdin(
            &["extract", "--facts", "-", "--json"],
            &json!([{"text": text, "quote": quote, "event": source}]).to_string(),
        )
        .ok()
        .json();
    let id = out["recorded"][0]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{out:#}"))
        .to_string();
    (source, id)
}

fn hits(repo: &TestRepo, query: &str) -> Vec<Value> {
    repo.memlog(&["search", query, "--mode", "fts", "--json"])
        .ok()
        .json()["hits"]
        .as_array()
        .unwrap()
        .clone()
}

fn position(hits: &[Value], id: &str) -> usize {
    hits.iter()
        .position(|h| h["id"] == id)
        .unwrap_or_else(|| panic!("{id} not in {hits:#?}"))
}

#[test]
fn a_fact_whose_file_changed_is_stale_ranks_lower_and_is_injected_with_its_marker() {
    let repo = TestRepo::new();
    commit_file(
        &repo,
        "src/invoice.rs",
        "pub const BATCH_SIZE: usize = 500;\n",
    );
    commit_file(
        &repo,
        "src/ledger.rs",
        "pub const ROUNDING: &str = \"bankers\";\n",
    );
    let (invoice_source, invoice) = fact(
        &repo,
        "s1",
        "I checked: BATCH_SIZE is defined in src/invoice.rs for the export.",
        "The export setting lives in src/invoice.rs as `BATCH_SIZE`",
        "BATCH_SIZE is defined in src/invoice.rs",
    );
    let (_, ledger) = fact(
        &repo,
        "s2",
        "I checked: ROUNDING is defined in src/ledger.rs for the export.",
        "The export setting lives in src/ledger.rs as `ROUNDING`",
        "ROUNDING is defined in src/ledger.rs",
    );
    let head = repo
        .git(&["rev-parse", "HEAD"])
        .ok()
        .stdout()
        .trim()
        .to_string();
    let stored = repo
        .cat()
        .into_iter()
        .find(|e| e["id"] == invoice.as_str())
        .unwrap();
    assert_eq!(
        stored["body"]["anchor"],
        json!({"commit": head, "files": ["src/invoice.rs"], "quotes": ["BATCH_SIZE"]})
    );
    let fresh = repo.memlog(&["verify", "--json"]).ok().json();
    assert!(
        fresh["checks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["status"] == "fresh"),
        "{fresh:#}"
    );
    let before = hits(&repo, "export setting lives");
    let score_before = before[position(&before, &invoice)]["score"]
        .as_f64()
        .unwrap();

    // the file changes in a later commit (the quoted code stays)
    commit_file(
        &repo,
        "src/invoice.rs",
        "// rows per request\npub const BATCH_SIZE: usize = 200;\n",
    );
    let checked = repo.memlog(&["verify", "--json"]).ok().json();
    let checks = checked["checks"].as_array().unwrap();
    let stale = checks.iter().find(|c| c["id"] == invoice.as_str()).unwrap();
    assert_eq!(stale["status"], "stale", "{checked:#}");
    assert_eq!(stale["marker"], "src/invoice.rs changed in 1 commit since");
    assert_eq!(stale["files"][0]["changes"], 1);
    let unchanged = checks.iter().find(|c| c["id"] == ledger.as_str()).unwrap();
    assert_eq!(unchanged["status"], "fresh");

    let after = hits(&repo, "export setting lives");
    let (at_stale, at_fresh) = (position(&after, &invoice), position(&after, &ledger));
    assert!(at_fresh < at_stale, "{after:#?}");
    let score_after = after[at_stale]["score"].as_f64().unwrap();
    assert!(
        score_after < score_before * 0.7,
        "{score_before} → {score_after}"
    );
    assert_eq!(
        after[at_stale]["caveat"],
        "src/invoice.rs changed in 1 commit since"
    );
    // the answer it was quoted from says the same stale thing
    let source = &after[position(&after, &invoice_source)];
    assert_eq!(source["caveat"], "src/invoice.rs changed in 1 commit since");
    let context = repo
        .memlog(&["context", "export setting lives", "--json"])
        .ok()
        .json();
    let markdown = context["markdown"].as_str().unwrap();
    assert!(
        markdown.contains(&format!(
            "[{}] fact (src/invoice.rs changed in 1 commit since)",
            &invoice[..12]
        )),
        "{markdown}"
    );

    // the quoted code goes away: broken
    commit_file(&repo, "src/invoice.rs", "pub const ROWS: usize = 200;\n");
    let checked = repo.memlog(&["verify", "--json"]).ok().json();
    let broken = &checked["checks"][0];
    assert_eq!(broken["id"], invoice.as_str());
    assert_eq!(broken["status"], "broken");
    assert_eq!(broken["missing"], json!(["BATCH_SIZE"]));
    assert!(
        broken["marker"].as_str().unwrap().starts_with(
            "`BATCH_SIZE` is no longer in src/invoice.rs; src/invoice.rs changed in 2 commits since"
        ),
        "{broken:#}"
    );
}

#[test]
fn a_replaced_facts_source_ranks_below_the_fact_that_replaced_it() {
    let repo = TestRepo::new();
    let (old_source, old) = fact(
        &repo,
        "v1",
        "The export batch size is 500 rows per request.",
        "The export batch size is 500 rows per request",
        "The export batch size is 500 rows per request",
    );
    let before = hits(&repo, "export batch size rows per request");
    let old_rank = position(&before, &old_source);
    let (_, new) = fact(
        &repo,
        "v2",
        "We lowered it: the export batch size is now 200 rows per request.",
        "The export batch size is 200 rows per request",
        "the export batch size is now 200 rows per request",
    );
    let stored = repo
        .cat()
        .into_iter()
        .find(|e| e["id"] == new.as_str())
        .unwrap();
    assert_eq!(stored["body"]["supersedes"], json!([old]), "detected");
    let after = hits(&repo, "export batch size rows per request");
    let (at_new, at_source) = (position(&after, &new), position(&after, &old_source));
    assert!(at_new < at_source, "{after:#?}");
    assert!(at_source > old_rank, "the source lost rank: {after:#?}");
    assert_eq!(
        after[at_source]["caveat"],
        format!("source of [{}], since replaced", &old[..12])
    );
    let top_two: Vec<&str> = after[..2]
        .iter()
        .map(|h| h["id"].as_str().unwrap())
        .collect();
    assert!(!top_two.contains(&old_source.as_str()), "{after:#?}");

    // a contradicted fact loses rank too
    let src = repo.record(
        "v3",
        "agent_response",
        "Ops said the export retries 3 times.",
    );
    let c1 = repo
        .memlog_stdin(
            &["extract", "--facts", "-", "--json"],
            &json!([{"text": "The export retries 3 times", "quote": "the export retries 3 times", "event": src}]).to_string(),
        )
        .ok()
        .json()["recorded"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let src2 = repo.record("v4", "agent_response", "Wrong: the export never retries.");
    repo.memlog_stdin(
        &["extract", "--facts", "-", "--json"],
        &json!([{"text": "The export never retries", "quote": "the export never retries", "event": src2, "contradicts": [c1]}]).to_string(),
    )
    .ok();
    let found = hits(&repo, "export retries");
    let at = position(&found, &c1);
    assert!(
        found[at]["caveat"]
            .as_str()
            .unwrap()
            .starts_with("contradicted by ["),
        "{found:#?}"
    );
}
