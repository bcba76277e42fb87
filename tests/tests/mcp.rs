//! `memlog mcp`, end to end: the reference MCP client (the Python `mcp`
//! package, installed by scripts/install-assets) against the CLI's `--json`
//! output; raw malformed, huge and concurrent requests; other processes
//! writing and rebuilding while the server runs; `memlog install mcp`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use std::path::Path;

use memlog_e2e::{McpProcess, TestRepo, python_mcp_client, run_mcp_client};
use memlog_format::{Draft, Kind};
use memlog_store::seal::{JournalSelection, seal_journals};
use memlog_store::{Recorder, Repo};
use serde_json::{Map, Value, json};

const TOOLS: [&str; 11] = [
    "memory_add_rule",
    "memory_forget",
    "memory_get",
    "memory_reinforce",
    "memory_remember",
    "memory_search",
    "memory_stats",
    "memory_task_add",
    "memory_task_update",
    "memory_tasks",
    "memory_timeline",
];

fn demo_sessions() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/demo/sessions.jsonl")
}

fn draft(session: &str, ts: &str, kind: Kind, body: Value) -> Draft {
    let Value::Object(body) = body else {
        panic!("body must be an object")
    };
    Draft {
        session: session.into(),
        ts: ts.into(),
        kind,
        project: "demo".into(),
        body,
        meta: Map::new(),
    }
}

/// The demo sessions, a session of task events (through the real write
/// path), and one live, unsealed prompt.
fn repo_with_memory() -> TestRepo {
    let repo = TestRepo::new();
    // no background index (it would hold the writer lock while the CLI's
    // answers are taken, and the server's come after it): both sides then
    // read an index brought up to date by their own first read
    repo.memlog(&[
        "import",
        "jsonl",
        "--no-index",
        demo_sessions().to_str().unwrap(),
    ])
    .ok();
    let r = Repo::discover(repo.path()).unwrap();
    r.ensure_dirs().unwrap();
    let key = |t: &str| format!("demo/{t}");
    let drafts = vec![
        // A bookkeeping event whose text the index does not keep: memory_get
        // must still give it exactly (read from the log).
        draft(
            "tasks-1",
            "2026-11-20T10:00:00Z",
            Kind::SessionStart,
            json!({"text": "startup"}),
        ),
        draft(
            "tasks-1",
            "2026-11-20T10:01:00Z",
            Kind::TaskCreated,
            json!({"key": key("round"), "title": "Round the coupon discount half up", "status": "pending"}),
        ),
        draft(
            "tasks-1",
            "2026-11-20T10:02:00Z",
            Kind::TaskCreated,
            json!({"key": key("test"), "title": "Add a regression test for 15% coupons", "status": "in_progress"}),
        ),
        draft(
            "tasks-1",
            "2026-11-20T10:03:00Z",
            Kind::TaskStatusChanged,
            json!({"key": key("test"), "title": "Add a regression test for 15% coupons", "status": "done", "from": "in_progress", "to": "done"}),
        ),
        draft(
            "tasks-1",
            "2026-11-20T10:04:00Z",
            Kind::TaskCreated,
            json!({"key": key("deploy"), "title": "Deploy the pricing fix", "status": "pending"}),
        ),
        // blocked needs a blocker (docs/DESIGN.md §5's invariant)
        draft(
            "tasks-1",
            "2026-11-20T10:04:20Z",
            Kind::TaskBlockersSet,
            json!({"key": key("deploy"), "mode": "replace", "blockers": ["the release freeze ends"]}),
        ),
        draft(
            "tasks-1",
            "2026-11-20T10:04:40Z",
            Kind::TaskStatusChanged,
            json!({"key": key("deploy"), "from": "pending", "to": "blocked"}),
        ),
        draft(
            "tasks-1",
            "2026-11-20T10:05:00Z",
            Kind::Note,
            json!({"text": "Coupons are applied after tax in the checkout flow"}),
        ),
    ];
    Recorder::new(&r).unwrap().record(drafts).unwrap();
    seal_journals(&r, &JournalSelection::Session("tasks-1".into())).unwrap();
    // a live turn, answered (a prompt still being answered is no memory)
    repo.record(
        "live-1",
        "user_prompt",
        "Why does the checkout retry the discount service twice?",
    );
    repo.record(
        "live-1",
        "agent_response",
        "It retries once on a timeout; the second call is that retry.",
    );
    repo
}

fn ids(hits: &Value) -> Vec<String> {
    hits.as_array()
        .unwrap_or_else(|| panic!("not a list of hits: {hits}"))
        .iter()
        .map(|h| h["id"].as_str().unwrap().to_string())
        .collect()
}

fn structured(result: &Value) -> &Value {
    assert_eq!(result["is_error"], false, "tool call failed: {result}");
    &result["structured"]
}

#[test]
fn the_python_mcp_client_sees_what_the_cli_sees() {
    let Some(python) = python_mcp_client() else {
        return;
    };
    let repo = repo_with_memory();

    // What the CLI says, before the server changes anything.
    let searches: Vec<(Value, Vec<&str>)> = vec![
        (json!({"query": "checkout"}), vec!["checkout"]),
        (
            json!({"query": "discount", "limit": 3}),
            vec!["discount", "-n", "3"],
        ),
        (
            json!({"query": "price_cart", "kind": "tool_observation"}),
            vec!["price_cart", "--kind", "tool_observation"],
        ),
        (
            json!({"query": "coupon", "kind": ["note", "task_created"], "session": "tasks-1"}),
            vec![
                "coupon",
                "--kind",
                "note",
                "--kind",
                "task_created",
                "--session",
                "tasks-1",
            ],
        ),
        (
            json!({"query": "discount", "since": "2026-11-03", "until": "2026-12-01"}),
            vec!["discount", "--since", "2026-11-03", "--until", "2026-12-01"],
        ),
    ];
    let cli_hits: Vec<Vec<String>> = searches
        .iter()
        .map(|(_, args)| {
            let mut a = vec!["search"];
            a.extend(args.iter().copied());
            a.push("--json");
            ids(&repo.memlog(&a).ok().json()["hits"])
        })
        .collect();
    assert!(cli_hits.iter().all(|h| !h.is_empty()), "{cli_hits:?}");
    let first = cli_hits[0][0].clone();
    let stats = repo.memlog(&["stats", "--json"]).ok().json();
    let show_first = repo
        .memlog(&["show", &first, "--context", "2", "--json"])
        .ok()
        .json();
    let session_start = repo
        .cat()
        .into_iter()
        .find(|e| e["kind"] == "session_start")
        .unwrap();
    let start_id = session_start["id"].as_str().unwrap().to_string();
    let show_start = repo
        .memlog(&["show", &start_id, "--context", "2", "--json"])
        .ok()
        .json();
    let demo_session = repo.memlog(&["show", "demo-0001", "--json"]).ok().json();
    // not the fact's evidence (what rests on a forgotten event is hidden
    // with it): which event tops both searches shifts with recency, as
    // days pass
    let forget_target = cli_hits[1]
        .iter()
        .find(|id| **id != first)
        .expect("a discount hit other than the checkout one")
        .clone();

    let mut calls: Vec<Value> = searches
        .iter()
        .map(|(args, _)| json!({"tool": "memory_search", "args": args}))
        .collect();
    calls.extend([
        json!({"tool": "memory_stats"}),
        json!({"tool": "memory_get", "args": {"ids": [&first[..12]], "context": 2}}),
        json!({"tool": "memory_get", "args": {"ids": [start_id], "context": 2}}),
        json!({"tool": "memory_timeline", "args": {"session": "demo-0001", "limit": 500}}),
        json!({"tool": "memory_timeline", "args": {"since": "2026-11-20", "until": "2026-11-21", "limit": 3}}),
        json!({"tool": "memory_tasks"}),
        json!({"tool": "memory_tasks", "args": {"status": "blocked"}}),
        json!({"tool": "memory_remember", "args": {
            "text": "Coupon discounts round half up; api_key=sk-test-1234567890abcdef <private>internal note</private>",
            "kind": "fact",
            "evidence": [&first[..12]]
        }}),
        json!({"tool": "memory_search", "args": {"query": "round half up", "kind": "fact"}}),
        json!({"tool": "memory_forget", "args": {"ids": [forget_target], "reason": "wrong"}}),
        json!({"tool": "memory_search", "args": {"query": "discount", "limit": 3}}),
        // errors the model sees and can correct
        json!({"tool": "memory_get", "args": {"ids": ["0123456789ab"]}}),
        json!({"tool": "memory_search", "args": {"query": "x", "kind": "bogus"}}),
        json!({"tool": "memory_search", "args": {"query": "x", "since": "last tuesday"}}),
        json!({"tool": "memory_search", "args": {"qurey": "typo"}}),
        json!({"tool": "memory_timeline", "args": {}}),
        json!({"tool": "memory_forget", "args": {}}),
        json!({"tool": "no_such_tool"}),
    ]);
    let report = run_mcp_client(&python, repo.path(), json!({ "calls": calls }));

    // tools: all eleven, each described, each with an object schema
    let tools = report["tools"].as_array().unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort();
    assert_eq!(names, TOOLS);
    for t in tools {
        assert!(
            t["description"].as_str().is_some_and(|d| d.len() > 80),
            "{} needs a description for the model: {t}",
            t["name"]
        );
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
    }
    let search_tool = tools.iter().find(|t| t["name"] == "memory_search").unwrap();
    assert_eq!(search_tool["inputSchema"]["required"], json!(["query"]));
    assert_eq!(report["server"]["name"], "memlog");

    let results = report["results"].as_array().unwrap();
    let mut r = results.iter();

    // memory_search: the CLI's hits, same ids, same order, compact rows
    for (i, expected) in cli_hits.iter().enumerate() {
        let got = structured(r.next().unwrap());
        assert_eq!(
            &ids(&got["hits"]),
            expected,
            "search {i}: {}",
            searches[i].0
        );
        for h in got["hits"].as_array().unwrap() {
            let id = h["id"].as_str().unwrap();
            assert_eq!(h["short_id"].as_str().unwrap(), &id[..12]);
            for field in ["date", "kind", "session", "headline", "score"] {
                assert!(!h[field].is_null(), "hit without {field}: {h}");
            }
            // progressive disclosure: about 50-100 tokens (4 bytes each)
            let bytes = h.to_string().len();
            assert!(bytes <= 450, "hit of {bytes} bytes: {h}");
        }
    }
    // memory_stats: exactly `memlog stats --json`
    assert_eq!(structured(r.next().unwrap()), &stats);
    // memory_get: exactly `memlog show ID --context 2 --json`, by short id
    assert_eq!(structured(r.next().unwrap())["events"][0], show_first);
    assert_eq!(structured(r.next().unwrap())["events"][0], show_start);
    // memory_timeline of a session: the session's events in order, its
    // start and end rows left out (they padded a day's timeline)
    let timeline = structured(r.next().unwrap());
    let between: Vec<Value> = demo_session["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] != "session_start" && e["kind"] != "session_end")
        .cloned()
        .collect();
    assert_eq!(ids(&timeline["rows"]), ids(&Value::Array(between)));
    assert_eq!(timeline["more"], false);
    assert!(timeline["rows"][0].get("session").is_none());
    // a time range: the first three of tasks-1, and more to come
    let range = structured(r.next().unwrap());
    let kinds: Vec<&str> = range["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["task_created", "task_created", "task_status_changed"]
    );
    assert_eq!(range["more"], true);
    // memory_tasks: open ones only, newest first; then the blocked one
    let tasks = structured(r.next().unwrap());
    let titles: Vec<&str> = tasks["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["title"].as_str().unwrap())
        .collect();
    assert_eq!(
        titles,
        [
            "Deploy the pricing fix",
            "Round the coupon discount half up"
        ]
    );
    let blocked = structured(r.next().unwrap());
    assert_eq!(blocked["tasks"].as_array().unwrap().len(), 1);
    assert_eq!(blocked["tasks"][0]["status"], "blocked");
    // memory_remember: filtered, searchable at once
    let remembered = structured(r.next().unwrap()).clone();
    assert_eq!(remembered["kind"], "fact");
    assert_eq!(remembered["evidence"], json!([first]));
    assert_eq!(remembered["secrets_redacted"], 1);
    assert_eq!(remembered["private_spans_removed"], 1);
    let fact_id = remembered["id"].as_str().unwrap().to_string();
    let mcp_session = remembered["session"].as_str().unwrap().to_string();
    assert!(mcp_session.starts_with("mcp-"), "{mcp_session}");
    assert_eq!(
        ids(&structured(r.next().unwrap())["hits"]).first(),
        Some(&fact_id)
    );
    // memory_forget: like `memlog forget`; the event is gone from search
    let forgotten = structured(r.next().unwrap());
    assert_eq!(forgotten["targets"], json!([forget_target]));
    assert!(forgotten["commit"].is_string());
    let after = ids(&structured(r.next().unwrap())["hits"]);
    assert!(!after.contains(&forget_target), "{after:?}");

    // errors: results the model can read, naming what is wrong
    let error = |res: &Value, needle: &str| {
        assert_eq!(res["is_error"], true, "expected an error: {res}");
        let text = res["text"].as_str().unwrap();
        assert!(text.contains(needle), "{text:?} should mention {needle:?}");
    };
    error(r.next().unwrap(), "0123456789ab");
    error(r.next().unwrap(), "unknown kind \"bogus\"");
    error(r.next().unwrap(), "last tuesday");
    error(r.next().unwrap(), "qurey");
    error(r.next().unwrap(), "give a session");
    error(r.next().unwrap(), "say what to forget");
    let unknown = r.next().unwrap();
    assert!(unknown["rpc_error"]["code"].is_i64(), "{unknown}");
    assert!(r.next().is_none());

    // The client closed the connection: the server sealed its session.
    let log = repo.memlog(&["log", "--json"]).ok().stdout();
    assert!(log.contains(&mcp_session), "{log}");
    let fact = repo
        .cat()
        .into_iter()
        .find(|e| e["id"] == fact_id.as_str())
        .expect("the fact is in the log");
    let text = fact["body"]["text"].as_str().unwrap();
    assert!(
        text.contains("[REDACTED:") && text.contains("[PRIVATE]"),
        "{text}"
    );
    assert!(!text.contains("sk-test") && !text.contains("internal note"));
    assert_eq!(fact["meta"]["evidence"], json!([first]));
    assert!(
        repo.memlog(&["fsck"]).code() == Some(0),
        "fsck after the MCP session"
    );
}

#[test]
fn concurrent_calls_through_the_python_client_get_the_sequential_answers() {
    let Some(python) = python_mcp_client() else {
        return;
    };
    let repo = repo_with_memory();
    let queries = [
        "checkout",
        "discount",
        "price_cart",
        "coupon",
        "invoice",
        "rate limiting",
        "connection reset",
        "pricing",
    ];
    let calls: Vec<Value> = queries
        .iter()
        .map(|q| json!({"tool": "memory_search", "args": {"query": q, "limit": 5}}))
        .chain([
            json!({"tool": "memory_tasks"}),
            json!({"tool": "memory_stats"}),
        ])
        .collect();
    let sequential = run_mcp_client(&python, repo.path(), json!({ "calls": calls }));
    let concurrent = run_mcp_client(
        &python,
        repo.path(),
        json!({ "calls": calls, "concurrent": true }),
    );
    let hit_ids = |report: &Value| -> Vec<Vec<String>> {
        report["results"].as_array().unwrap()[..queries.len()]
            .iter()
            .map(|res| ids(&structured(res)["hits"]))
            .collect()
    };
    assert_eq!(hit_ids(&sequential), hit_ids(&concurrent));
    let n = queries.len();
    assert_eq!(
        structured(&sequential["results"][n]),
        structured(&concurrent["results"][n])
    );
    assert_eq!(
        structured(&sequential["results"][n + 1]),
        structured(&concurrent["results"][n + 1])
    );
}

#[test]
fn malformed_huge_and_concurrent_requests_leave_the_server_serving() {
    let repo = repo_with_memory();
    let mut server = McpProcess::start(repo.path());

    // Lines that are not JSON-RPC at all: dropped or answered with an
    // error, never fatal.
    for junk in [
        "this is not json",
        "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\":",
        "[]",
        "{}",
        "null",
        "\u{0}\u{1}binary",
        "{\"jsonrpc\": \"2.0\", \"id\": \"bad-params\", \"method\": \"tools/call\", \"params\": \"nope\"}",
    ] {
        server.send_raw(junk);
    }
    // An unknown method: "method not found".
    server.send(&json!({"jsonrpc": "2.0", "id": "unknown", "method": "memory/teleport"}));
    let unknown = server.response("unknown");
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    // Arguments of the wrong type: an error result naming the problem.
    server.call_tool("wrong-type", "memory_search", json!({"query": 42}));
    let wrong = server.response("wrong-type");
    assert_eq!(wrong["result"]["isError"], true, "{wrong}");
    // A 1 MB query: refused with a message, not searched.
    let huge = "checkout ".repeat((1 << 20) / 9 + 1);
    assert!(huge.len() >= 1 << 20);
    server.call_tool("huge", "memory_search", json!({"query": huge}));
    let refused = server.response("huge");
    assert_eq!(refused["result"]["isError"], true);
    let text = refused["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("bytes"), "{text}");
    // A 1 MB line that is not JSON.
    server.send_raw(&"x".repeat(1 << 20));
    // Twelve calls in flight at once.
    let queries = ["checkout", "discount", "price_cart", "coupon"];
    for i in 0..12 {
        server.call_tool(
            &format!("c{i}"),
            "memory_search",
            json!({"query": queries[i % queries.len()], "limit": 5}),
        );
    }
    for i in 0..12 {
        let r = server.response(&format!("c{i}"));
        assert_eq!(r["result"]["isError"], false, "c{i}: {r}");
        assert!(
            !r["result"]["structuredContent"]["hits"]
                .as_array()
                .unwrap()
                .is_empty()
        );
    }
    // And a final, ordinary request is answered.
    let last = server.tool("memory_search", json!({"query": "checkout"}));
    assert!(!last["hits"].as_array().unwrap().is_empty());
    server.send(&json!({"jsonrpc": "2.0", "id": "ping", "method": "ping"}));
    assert!(server.response("ping").get("result").is_some());
    assert!(server.close().success());
}

#[test]
fn new_sessions_and_rebuilds_in_other_processes_are_seen_without_restart() {
    let repo = repo_with_memory();
    let mut server = McpProcess::start(repo.path());
    let found = |server: &mut McpProcess, q: &str| -> Vec<String> {
        ids(&server.tool("memory_search", json!({"query": q}))["hits"])
    };
    assert!(found(&mut server, "zanzibar").is_empty());

    // A new live session, recorded by another process (a note: a bare
    // prompt is a turn in progress, which no search gives).
    let live = repo.record("later-1", "note", "Ship the zanzibar exporter");
    assert_eq!(found(&mut server, "zanzibar"), [live]);
    // Sealed, then a teammate's session imported.
    repo.memlog(&["seal", "--all"]).ok();
    repo.memlog_stdin(
        &["import", "jsonl", "-"],
        r#"{"session": "mate-1", "ts": "2026-11-21T08:00:00Z", "kind": "note", "text": "zanzibar exports need UTF-8 BOMs"}"#,
    )
    .ok();
    assert_eq!(found(&mut server, "zanzibar").len(), 2);
    // A rebuild swaps the index directory under the open server.
    repo.memlog(&["rebuild"]).ok();
    assert_eq!(found(&mut server, "zanzibar").len(), 2);
    repo.record("later-2", "agent_response", "zanzibar exporter done");
    assert_eq!(found(&mut server, "zanzibar").len(), 3);
    let timeline = server.tool("memory_timeline", json!({"session": "mate-1"}));
    assert_eq!(timeline["rows"].as_array().unwrap().len(), 1);
    assert!(server.close().success());
}

#[test]
fn a_killed_server_leaves_a_journal_that_seal_all_picks_up() {
    let repo = repo_with_memory();
    let mut server = McpProcess::start(repo.path());
    let remembered = server.tool(
        "memory_remember",
        json!({"text": "The staging database is reset every Monday"}),
    );
    let session = remembered["session"].as_str().unwrap().to_string();
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    drop(server);
    assert!(!repo.memlog(&["log"]).ok().stdout().contains(&session));
    repo.memlog(&["seal", "--all"]).ok();
    assert!(repo.memlog(&["log"]).ok().stdout().contains(&session));
}

#[test]
fn sigterm_stops_the_server_cleanly_and_seals_what_it_remembered() {
    let repo = repo_with_memory();
    let mut server = McpProcess::start(repo.path());
    let remembered = server.tool(
        "memory_remember",
        json!({"text": "Release branches are cut on Thursdays"}),
    );
    let session = remembered["session"].as_str().unwrap().to_string();
    let pid = server.child.id().to_string();
    assert!(
        std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let status = loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no exit after SIGTERM"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert!(status.success(), "{status:?}");
    assert!(repo.memlog(&["log"]).ok().stdout().contains(&session));
}

#[test]
fn install_mcp_prints_and_merges_the_client_configuration() {
    let repo = TestRepo::new();
    let root = std::fs::canonicalize(repo.path()).unwrap();
    let printed = repo.memlog(&["install", "mcp"]).ok().stdout();
    assert!(printed.contains("claude_desktop_config.json"), "{printed}");
    assert!(!root.join(".mcp.json").exists(), "printing writes nothing");

    let other = json!({
        "mcpServers": {"github": {"command": "gh-mcp", "args": []}},
        "someSetting": true
    });
    std::fs::write(root.join(".mcp.json"), other.to_string()).unwrap();
    repo.memlog(&["install", "mcp", "--write"]).ok();
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join(".mcp.json")).unwrap()).unwrap();
    assert_eq!(
        written["mcpServers"]["github"],
        other["mcpServers"]["github"]
    );
    assert_eq!(written["someSetting"], true);
    let entry = &written["mcpServers"]["memlog"];
    let command = entry["command"].as_str().unwrap();
    assert!(Path::new(command).is_absolute(), "{command}");
    assert_eq!(
        std::fs::canonicalize(command).unwrap(),
        std::fs::canonicalize(memlog_e2e::memlog_bin()).unwrap()
    );
    // the file is committed: the server serves the clone it starts in
    assert_eq!(entry["args"], json!(["mcp"]));
    assert!(
        printed.contains(&format!("\"{}\"", root.to_string_lossy())),
        "Claude Desktop, which starts it nowhere, is given the repository: {printed}"
    );
    // Twice is the same.
    repo.memlog(&["install", "mcp", "--write"]).ok();
    let again: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join(".mcp.json")).unwrap()).unwrap();
    assert_eq!(again, written);

    // A file that is not JSON is left alone.
    std::fs::write(root.join(".mcp.json"), "{ not json").unwrap();
    let refused = repo.memlog(&["install", "mcp", "--write"]);
    assert_eq!(refused.code(), Some(1));
    assert!(
        refused.stderr().contains("not valid JSON"),
        "{}",
        refused.stderr()
    );
    assert_eq!(
        std::fs::read_to_string(root.join(".mcp.json")).unwrap(),
        "{ not json"
    );
}

/// A `.mcp.json` an earlier memlog wrote names one clone's path with `-C`:
/// committed, it made every teammate's agent search and write that clone's
/// memory (a field test: bob's note was sealed into dev's repository).
/// Doctor names it and fails; installing again fixes it.
#[test]
fn doctor_names_an_mcp_server_of_another_clone() {
    let (_origin, dev, bob) = TestRepo::teammates();
    let dev_root = std::fs::canonicalize(dev.path()).unwrap();
    let old = json!({"mcpServers": {"memlog": {
        "command": memlog_e2e::memlog_bin().to_string_lossy(),
        "args": ["-C", dev_root.to_string_lossy(), "mcp"]}}});
    std::fs::write(bob.path().join(".mcp.json"), old.to_string()).unwrap();
    let doctor = bob.memlog(&["doctor"]);
    assert_eq!(doctor.code(), Some(1), "{}", doctor.stdout());
    let said = doctor.stdout();
    assert!(
        said.contains("not this clone") && said.contains(&*dev_root.to_string_lossy()),
        "{said}"
    );
    bob.memlog(&["install", "mcp", "--write"]).ok();
    let doctor = bob.memlog(&["doctor", "--json"]).json();
    assert_eq!(doctor["ok"], true, "{doctor:#}");
    assert!(
        !doctor["mcp_problems"]
            .to_string()
            .contains("not this clone"),
        "{doctor:#}"
    );
}

/// A model may not empty the memory: `memory_forget` refuses a date in the
/// future (which would hide every session to come) and anything that hides
/// more than 20 events, naming the count and the command a person runs; a
/// forget of a few ids still works (a field test: one call with
/// `before: 2999-01-01` took a memory from 41 live events to 1).
#[test]
fn a_model_cannot_forget_the_whole_memory() {
    let repo = TestRepo::new();
    for i in 0..25 {
        repo.record("old", "note", &format!("deploy fact number {i}"));
    }
    repo.memlog(&["seal", "--all"]).ok();
    let mut mcp = McpProcess::start(repo.path());
    for (id, args) in [
        (
            "future",
            json!({"before": "2999-01-01", "reason": "housekeeping"}),
        ),
        ("many", json!({"session": "old"})),
    ] {
        mcp.call_tool(id, "memory_forget", args);
        let response = mcp.response(id);
        assert_eq!(response["result"]["isError"], true, "{response}");
        let text = response.to_string();
        assert!(
            text.contains("memlog forget") || text.contains("future"),
            "{text}"
        );
    }
    let one = repo
        .memlog(&["search", "number 7", "--mode", "fts", "--json"])
        .ok()
        .json()["hits"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    mcp.tool("memory_forget", json!({"ids": [one], "reason": "wrong"}));
    assert!(mcp.close().success());
    let live = repo.memlog(&["cat"]).ok().stdout();
    assert_eq!(live.matches("deploy fact number").count(), 24, "{live}");
    // and a person is told the same of a future date
    let cli = repo.memlog(&["forget", "--before", "2999-01-01"]);
    assert!(!cli.output.status.success());
    assert!(cli.stderr().contains("future"), "{}", cli.stderr());
    // a forget of nothing is no commit for every clone to receive
    let commits = repo.memlog_commits().len();
    let none = repo.memlog(&["forget", "--before", "2001-01-01"]).ok();
    assert!(
        none.stdout().contains("nothing to forget"),
        "{}",
        none.stdout()
    );
    assert_eq!(repo.memlog_commits().len(), commits);
}

/// `memlog mcp --help` and the README name every tool the server lists (a
/// field test: the help named 7 of 11, the README 9).
#[test]
fn the_help_and_the_readme_name_every_tool() {
    let repo = TestRepo::new();
    let mut server = memlog_e2e::McpProcess::start(repo.path());
    server.send(&json!({"jsonrpc": "2.0", "id": "list", "method": "tools/list"}));
    let listed = server.response("list");
    let names: Vec<String> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert!(names.len() >= 11, "{listed}");
    let help = repo.memlog(&["mcp", "--help"]).ok().stdout();
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"))
            .unwrap();
    for name in &names {
        assert!(help.contains(name.as_str()), "help lacks {name}: {help}");
        assert!(readme.contains(&format!("`{name}`")), "README lacks {name}");
    }
}

/// The prompt a session is being answered on is no memory: an agent that
/// searched within its turn got its own question back as a top hit, above
/// the note that answered it (a field test with the real Codex).
#[test]
fn memory_search_leaves_out_the_prompt_being_answered() {
    let repo = TestRepo::new();
    let note = repo.record(
        "earlier",
        "note",
        "Totals are printed with the currency code after the amount (12.50 EUR)",
    );
    repo.memlog(&["seal", "--all"]).ok();
    repo.hook(
        "UserPromptSubmit",
        "now",
        json!({"prompt": "Check the display convention for totals and close the task"}),
    );
    let mut server = memlog_e2e::McpProcess::start(repo.path());
    let found = server.tool(
        "memory_search",
        json!({"query": "display convention for totals"}),
    );
    let kinds: Vec<&str> = found["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["kind"].as_str().unwrap())
        .collect();
    assert!(!kinds.contains(&"user_prompt"), "{found:#}");
    assert_eq!(found["hits"][0]["id"], note.as_str(), "{found:#}");
}
