//! Task entities end to end (the task design's required test cases, docs/DESIGN.md §5; "필수 테스트
//! 케이스"): identity across sessions, refused transitions, idempotent
//! reprocessing, blocker resolution; rebuild == incremental for the entity
//! tables; and the real transcripts' todos, counted independently.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use memlog_e2e::{McpProcess, TestRepo, shared_dir};
use serde_json::{Value, json};

/// Writes a Claude Code transcript of one session whose assistant calls
/// TodoWrite once per list, a minute apart.
fn todo_transcript(dir: &Path, session: &str, day: u32, lists: &[&[(&str, &str)]]) -> PathBuf {
    let mut lines = vec![json!({
        "type": "user", "uuid": format!("{session}-u"), "parentUuid": null,
        "sessionId": session, "timestamp": format!("2026-01-{day:02}T09:00:00Z"),
        "message": {"role": "user", "content": "Let's plan the work"}
    })];
    let mut parent = format!("{session}-u");
    for (i, list) in lists.iter().enumerate() {
        let uuid = format!("{session}-a{i}");
        let todos: Vec<Value> = list
            .iter()
            .map(|(content, status)| json!({"content": content, "status": status, "activeForm": content}))
            .collect();
        lines.push(json!({
            "type": "assistant", "uuid": uuid, "parentUuid": parent, "sessionId": session,
            "timestamp": format!("2026-01-{day:02}T09:{:02}:00Z", i + 1),
            "message": {"role": "assistant", "content": [
                {"type": "tool_use", "id": format!("toolu_{session}_{i}"), "name": "TodoWrite", "input": {"todos": todos}}
            ]}
        }));
        parent = uuid;
    }
    let path = dir.join(format!("{session}.jsonl"));
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

fn tasks(repo: &TestRepo) -> Vec<Value> {
    repo.memlog(&["tasks", "--json"])
        .ok()
        .json()
        .as_array()
        .cloned()
        .unwrap()
}

fn by_title(list: &[Value]) -> BTreeMap<String, Value> {
    list.iter()
        .map(|t| (t["title"].as_str().unwrap().to_string(), t.clone()))
        .collect()
}

fn sql(repo: &TestRepo, query: &str) -> Value {
    repo.memlog(&["sql", "--json", query]).ok().json()
}

#[test]
fn a_task_named_in_several_sessions_is_one_entity_and_reprocessing_adds_nothing() {
    let repo = TestRepo::new();
    let dir = tempfile::tempdir().unwrap();
    let first = todo_transcript(
        dir.path(),
        "s1",
        1,
        &[
            &[
                ("Fix the login redirect loop", "pending"),
                ("Write docs", "pending"),
            ],
            // pending -> completed: the implied start is recorded
            &[
                ("Fix the login redirect loop", "in_progress"),
                ("Write docs", "completed"),
            ],
        ],
    );
    let second = todo_transcript(
        dir.path(),
        "s2",
        2,
        &[
            // same title, other punctuation: same key
            &[("Fix the login redirect loop!", "in_progress")],
        ],
    );
    let third = todo_transcript(
        dir.path(),
        "s3",
        3,
        // reworded: the matcher confirms it (one letter in 28; it is still
        // open, and closed tasks are never matched)
        &[&[("Fix the login redirect loops", "completed")]],
    );
    let paths = [&first, &second, &third].map(|p| p.to_str().unwrap().to_string());
    let mut args = vec!["import", "claude-code", "--json"];
    args.extend(paths.iter().map(String::as_str));
    repo.memlog(&args).ok();

    let list = tasks(&repo);
    assert_eq!(list.len(), 2, "{list:#?}");
    let titles = by_title(&list);
    let login = &titles["Fix the login redirect loop"];
    // finished in s3 under its reworded title
    assert_eq!(login["status"], "done");
    let id = login["entity_id"].as_str().unwrap();
    let shown = repo.memlog(&["task", "show", id, "--json"]).ok().json();
    assert_eq!(shown["sessions"].as_array().unwrap().len(), 3, "{shown:#}");
    assert_eq!(shown["aliases"].as_array().unwrap().len(), 1, "{shown:#}");
    let docs = repo
        .memlog(&["task", "show", "Write docs", "--json"])
        .ok()
        .json();
    let steps: Vec<(Value, Value, bool)> = docs["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["from"].clone(),
                h["status"].clone(),
                h["implied"].as_bool().unwrap_or(false),
            )
        })
        .collect();
    assert_eq!(
        steps,
        [
            (Value::Null, json!("pending"), false),
            (json!("pending"), json!("in_progress"), true),
            (json!("in_progress"), json!("done"), false),
        ],
        "the hooks wrote the implied start as its own event, marked: {docs:#}"
    );
    let implied = repo
        .cat()
        .into_iter()
        .filter(|e| e["body"]["implied"] == true)
        .count();
    assert_eq!(implied, 1);

    // Reprocessing: no new events, no new edges.
    let edges = sql(&repo, "SELECT count(*) AS n FROM edges")[0]["n"].clone();
    let events = sql(&repo, "SELECT count(*) AS n FROM events")[0]["n"].clone();
    let again = repo.memlog(&args).ok().json();
    assert_eq!(again["added"], 0, "{again}");
    repo.memlog(&["index"]).ok();
    assert_eq!(sql(&repo, "SELECT count(*) AS n FROM edges")[0]["n"], edges);
    assert_eq!(
        sql(&repo, "SELECT count(*) AS n FROM events")[0]["n"],
        events
    );
    assert_eq!(tasks(&repo), list);
}

#[test]
fn refused_transitions_exit_non_zero_say_why_and_are_recorded() {
    let repo = TestRepo::new();
    let added = repo
        .memlog(&["task", "add", "Ship the release", "--json"])
        .ok()
        .json();
    assert_eq!(added["status"], "pending");
    let id = added["entity_id"].as_str().unwrap().to_string();

    let refused = repo.memlog(&["task", "set", &id, "--status", "done"]);
    assert_eq!(refused.code(), Some(1), "{}", refused.stderr());
    assert!(
        refused.stderr().contains("start it first"),
        "{}",
        refused.stderr()
    );
    let refused = repo.memlog(&["task", "set", &id, "--status", "blocked"]);
    assert_eq!(refused.code(), Some(1));
    assert!(
        refused.stderr().contains("at least one blocker"),
        "{}",
        refused.stderr()
    );

    let recorded: Vec<Value> = repo
        .cat()
        .into_iter()
        .filter(|e| e["kind"] == "task_transition_rejected")
        .collect();
    assert_eq!(recorded.len(), 2);
    assert_eq!(recorded[0]["body"]["rule"], "pending_to_done");
    assert_eq!(recorded[1]["body"]["rule"], "blocked_without_blockers");

    let shown = repo.memlog(&["task", "show", &id, "--json"]).ok().json();
    assert_eq!(shown["status"], "pending", "a refusal changes nothing");
    let rejected = shown["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["rejected"].is_string())
        .count();
    assert_eq!(rejected, 2);

    // The allowed path.
    repo.memlog(&["task", "set", &id, "--status", "in_progress"])
        .ok();
    let done = repo
        .memlog(&["task", "set", &id, "--status", "done", "--json"])
        .ok()
        .json();
    assert_eq!(done["status"], "done");
    // an unknown status is a usage error, not a transition
    let bad = repo.memlog(&["task", "set", &id, "--status", "finished"]);
    assert_eq!(bad.code(), Some(1));
    assert!(
        bad.stderr().contains("unknown task status"),
        "{}",
        bad.stderr()
    );
    let missing = repo.memlog(&["task", "show", "no such task"]);
    assert!(missing.stderr().contains("no task"), "{}", missing.stderr());

    // Adding it again says it exists and records nothing.
    let events = repo.cat().len();
    let again = repo.memlog(&["task", "add", "ship the release!"]);
    assert_eq!(again.code(), Some(1), "{}", again.stderr());
    assert!(
        again
            .stderr()
            .contains(&format!("task {id} already exists"))
            && again.stderr().contains("status done"),
        "{}",
        again.stderr()
    );
    assert_eq!(repo.cat().len(), events);
}

#[test]
fn blockers_become_artifacts_tasks_or_conditions_with_candidates() {
    let repo = TestRepo::new();
    let deploy = repo
        .memlog(&["task", "add", "Deploy the billing service", "--json"])
        .ok()
        .json();
    let deploy = deploy["entity_id"].as_str().unwrap().to_string();
    let migrate = repo
        .memlog(&["task", "add", "Migrate the invoices table", "--json"])
        .ok()
        .json();
    let migrate = migrate["entity_id"].as_str().unwrap().to_string();
    repo.memlog(&["task", "add", "Rotate the billing API keys"])
        .ok();
    repo.memlog(&["task", "set", &deploy, "--status", "in_progress"])
        .ok();

    let url = "https://github.com/acme/billing/pull/42";
    let blocked = repo
        .memlog(&[
            "task",
            "set",
            &deploy,
            "--status",
            "blocked",
            "--blocker",
            url,
            "--blocker",
            "ACME-412",
            "--blocker",
            "Migrate the invoices table",
            "--blocker",
            "Rotate billing keys",
            "--json",
        ])
        .ok()
        .json();
    assert_eq!(blocked["status"], "blocked");
    let blockers = blocked["blockers"].as_array().unwrap();
    let kinds: Vec<(&str, &str)> = blockers
        .iter()
        .map(|b| {
            (
                b["kind"].as_str().unwrap(),
                b["entity_id"].as_str().unwrap(),
            )
        })
        .collect();
    // sha1 of the URL, as docs/DESIGN.md §4 keys it
    let sha1 = "art:url:".to_string() + &sha1_hex(url);
    assert_eq!(kinds[0], ("artifact", sha1.as_str()));
    assert_eq!(kinds[1], ("artifact", "art:jira:ACME-412"));
    assert_eq!(
        kinds[2],
        ("task", migrate.as_str()),
        "a confident match is the task"
    );
    assert_eq!(kinds[3].0, "condition", "no confident match: a condition");
    let candidates = blockers[3]["candidates"].as_array().unwrap();
    assert!(
        candidates
            .iter()
            .any(|c| c["title"] == "Rotate the billing API keys"),
        "{candidates:?}"
    );

    let artifact = repo
        .memlog(&["entity", "show", &sha1, "--json"])
        .ok()
        .json();
    assert_eq!(artifact["entity_type"], "artifact");
    assert_eq!(artifact["title"], url);
    assert_eq!(artifact["incoming"][0]["rel_type"], "blocked_by");
    assert_eq!(artifact["incoming"][0]["other"], deploy.as_str());

    let condition_id = kinds[3].1.to_string();
    let condition = repo
        .memlog(&["entity", "show", &condition_id, "--json"])
        .ok()
        .json();
    assert_eq!(condition["entity_type"], "condition");
    assert!(condition["current"]["resolved_to"].is_null());

    // Suggestions do not block and use their own edge type.
    repo.memlog(&[
        "task",
        "set",
        &deploy,
        "--blocker",
        "acme/billing#7",
        "--suggest",
    ])
    .ok();
    let suggested = sql(
        &repo,
        "SELECT dst_id FROM edges WHERE rel_type = 'blocked_by_suggested'",
    );
    assert_eq!(suggested[0]["dst_id"], "art:gh_issue:acme/billing:7");

    // The condition later resolves to a task named like it.
    repo.memlog(&["task", "add", "Rotate billing keys"]).ok();
    let neighbors = repo
        .memlog(&["graph", "neighbors", &condition_id, "--json"])
        .ok()
        .json();
    let rels: Vec<(&str, &str)> = neighbors
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["rel_type"].as_str().unwrap(),
                n["direction"].as_str().unwrap(),
            )
        })
        .collect();
    assert!(rels.contains(&("resolves_to", "out")), "{neighbors:#}");
    assert!(rels.contains(&("blocked_by", "in")), "{neighbors:#}");
    let deep = repo
        .memlog(&["graph", "neighbors", &deploy, "--depth", "2", "--json"])
        .ok()
        .json();
    assert!(
        deep.as_array()
            .unwrap()
            .iter()
            .any(|n| n["depth"] == 2 && n["rel_type"] == "resolves_to"),
        "{deep:#}"
    );

    let listed = repo.memlog(&["tasks", "--blocked", "--json"]).ok().json();
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(listed[0]["blockers"], 4);
}

#[test]
fn a_blocker_named_by_task_id_is_that_task_and_closing_it_unblocks() {
    let repo = TestRepo::new();
    let id = |v: Value| v["entity_id"].as_str().unwrap().to_string();
    let migrate = id(repo
        .memlog(&["task", "add", "Migrate the invoices table", "--json"])
        .ok()
        .json());
    let deploy = id(repo
        .memlog(&["task", "add", "Deploy the billing service", "--json"])
        .ok()
        .json());
    repo.memlog(&["task", "set", &migrate, "--status", "in_progress"])
        .ok();
    repo.memlog(&["task", "set", &deploy, "--status", "in_progress"])
        .ok();
    let blocked = repo
        .memlog(&[
            "task",
            "set",
            &deploy,
            "--status",
            "blocked",
            "--blocker",
            &migrate,
            "--json",
        ])
        .ok()
        .json();
    assert_eq!(blocked["status"], "blocked");
    assert_eq!(blocked["blockers"][0]["kind"], "task", "{blocked:#}");
    assert_eq!(blocked["blockers"][0]["entity_id"], migrate.as_str());
    let conditions = sql(
        &repo,
        "SELECT entity_id FROM entities WHERE entity_type = 'condition'",
    );
    assert_eq!(
        conditions,
        json!([]),
        "the id was not mangled into a condition"
    );

    // Finishing the blocker sends the blocked task back to work.
    repo.memlog(&["task", "set", &migrate, "--status", "done"])
        .ok();
    let after = repo
        .memlog(&["task", "show", &deploy, "--json"])
        .ok()
        .json();
    assert_eq!(after["status"], "in_progress", "{after:#}");
    assert_eq!(after["blockers"], json!([]));
    let last = after["history"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["kind"], "unblocked");
    assert_eq!(last["from"], "blocked");
    // and the blocked_by edge is gone
    let edges = sql(
        &repo,
        "SELECT dst_id FROM edges WHERE rel_type = 'blocked_by'",
    );
    assert_eq!(edges, json!([]));
}

#[test]
fn mcp_creates_and_updates_tasks_through_the_same_state_machine() {
    let repo = TestRepo::new();
    let mut server = McpProcess::start(repo.path());
    let migrate = server.tool(
        "memory_task_add",
        json!({"title": "Migrate the invoices table"}),
    );
    let migrate = migrate["entity_id"].as_str().unwrap().to_string();
    let deploy = server.tool(
        "memory_task_add",
        json!({"title": "Deploy the billing service", "priority": "high"}),
    );
    assert_eq!(deploy["status"], "pending");
    assert_eq!(deploy["priority"], "high");
    let deploy = deploy["entity_id"].as_str().unwrap().to_string();
    // pending → done is refused, as an error the model can read
    server.call_tool(
        "refused",
        "memory_task_update",
        json!({"task": deploy, "status": "done"}),
    );
    let refused = server.response("refused");
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let text = refused["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("start it first"), "{text}");
    server.tool(
        "memory_task_update",
        json!({"task": migrate, "status": "in_progress"}),
    );
    server.tool(
        "memory_task_update",
        json!({"task": deploy, "status": "in_progress"}),
    );
    // the key, as memory_tasks lists it, names the task too
    let key = migrate.trim_start_matches("task:");
    let blocked = server.tool(
        "memory_task_update",
        json!({"task": deploy, "status": "blocked", "blockers": [key]}),
    );
    assert_eq!(blocked["blockers"][0]["kind"], "task", "{blocked:#}");
    let listed = server.tool("memory_tasks", json!({"status": "blocked"}));
    assert_eq!(listed["tasks"][0]["title"], "Deploy the billing service");
    server.tool(
        "memory_task_update",
        json!({"task": "Migrate the invoices table", "status": "done"}),
    );
    let open = server.tool("memory_tasks", json!({}));
    let statuses: Vec<(&str, &str)> = open["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["title"].as_str().unwrap(), t["status"].as_str().unwrap()))
        .collect();
    assert_eq!(statuses, [("Deploy the billing service", "in_progress")]);
    assert!(server.close().success());
    // the events say who made them, and the CLI sees the same tasks
    let sources: Vec<Value> = repo
        .cat()
        .into_iter()
        .filter(|e| e["kind"].as_str().unwrap().starts_with("task_"))
        .map(|e| e["body"]["source"].clone())
        .collect();
    assert!(sources.iter().all(|s| s == "mcp"), "{sources:?}");
    let shown = repo
        .memlog(&["task", "show", &deploy, "--json"])
        .ok()
        .json();
    assert_eq!(shown["status"], "in_progress");
}

/// SHA-1 by `sha1sum`, so the test does not share memlog's implementation.
fn sha1_hex(text: &str) -> String {
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("printf '%s' \"$0\" | sha1sum | cut -d' ' -f1")
        .arg(text)
        .output()
        .expect("sh and sha1sum");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// The entity tables as a comparable dump.
fn entity_dump(repo: &TestRepo) -> Vec<Value> {
    [
        "SELECT entity_id, entity_type, title, stage, current_json, created_at, updated_at FROM entities WHERE entity_type IN ('task', 'condition') ORDER BY entity_id",
        "SELECT entity_type, canonical_key, entity_id, is_primary, created_at FROM entity_aliases ORDER BY entity_type, canonical_key",
        "SELECT src_id, rel_type, dst_id, evidence, ts FROM edges ORDER BY src_id, rel_type, dst_id, evidence",
        "SELECT entity_id, title FROM entities WHERE entity_type = 'artifact' ORDER BY entity_id",
    ]
    .iter()
    .map(|q| sql(repo, q))
    .collect()
}

#[test]
fn rebuilding_gives_the_entity_tables_incremental_updates_gave() {
    let titles = [
        "Fix the login redirect loop",
        "Fix the login redirect loops",
        "Write the migration guide",
        "Deploy to staging",
    ];
    let statuses = ["pending", "in_progress", "blocked", "done", "cancelled"];
    let blockers = [
        "https://example.com/issue/1",
        "ACME-7",
        "Write the migration guide",
        "staging is green",
    ];
    let mut recorded: std::collections::BTreeSet<String> = Default::default();
    for seed in [3u64, 11, 29] {
        let repo = TestRepo::new();
        let mut x = seed;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut ids: Vec<String> = Vec::new();
        for step in 0..16 {
            let title = titles[(next() % 4) as usize];
            match next() % 5 {
                0 | 1 => {
                    // may exist already (then refused, nothing recorded)
                    let _ = repo.memlog(&["task", "add", title]);
                }
                2 => {
                    let status = statuses[(next() % 5) as usize];
                    let blocker = blockers[(next() % 4) as usize];
                    // may be refused (then recorded); may name no task yet
                    let _ = repo.memlog(&[
                        "task",
                        "set",
                        title,
                        "--status",
                        status,
                        "--blocker",
                        blocker,
                    ]);
                }
                3 => {
                    let status = statuses[(next() % 5) as usize];
                    let _ = repo.memlog(&["task", "set", title, "--status", status]);
                }
                _ => {
                    if let Some(id) = ids.get((next() as usize) % ids.len().max(1)) {
                        let _ = repo.memlog(&["forget", id]);
                    }
                }
            }
            ids = repo
                .cat()
                .iter()
                .filter(|e| e["kind"].as_str().unwrap().starts_with("task_"))
                .map(|e| e["id"].as_str().unwrap().to_string())
                .collect();
            if step % 4 == 3 {
                repo.memlog(&["index"]).ok();
            }
        }
        repo.memlog(&["index"]).ok();
        let incremental = entity_dump(&repo);
        repo.memlog(&["rebuild"]).ok();
        let rebuilt = entity_dump(&repo);
        assert_eq!(incremental, rebuilt, "seed {seed}");
        assert!(
            incremental[0].as_array().is_some_and(|a| !a.is_empty()),
            "seed {seed}: some tasks exist"
        );
        recorded.extend(
            repo.cat()
                .iter()
                .filter_map(|e| e["kind"].as_str().map(str::to_string)),
        );
    }
    // the `task set` calls above, whose exit codes are not checked (they
    // may be refused), did record changes and refusals
    for kind in [
        "task_status_changed",
        "task_blockers_set",
        "task_transition_rejected",
        "forget",
    ] {
        assert!(recorded.contains(kind), "no {kind} recorded: {recorded:?}");
    }
}

/// Independent count of the todos of Claude Code transcripts: the last
/// status of each todo (by normalised content) in time order, skipping
/// TodoWrite calls whose result was an error.
fn count_todos(dir: &Path) -> BTreeMap<String, String> {
    fn files(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let p = entry.path();
            if p.is_dir() {
                files(&p, out);
            } else if p.extension().is_some_and(|e| e == "jsonl") {
                out.push(p);
            }
        }
    }
    let mut paths = Vec::new();
    files(dir, &mut paths);
    let mut calls: Vec<(String, Vec<Value>)> = Vec::new();
    for path in paths {
        let lines: Vec<Value> = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let blocks = |line: &Value| -> Vec<Value> {
            line["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        };
        let failed: Vec<String> = lines
            .iter()
            .flat_map(blocks)
            .filter(|b| b["type"] == "tool_result" && b["is_error"] == true)
            .filter_map(|b| b["tool_use_id"].as_str().map(str::to_string))
            .collect();
        for line in &lines {
            for b in blocks(line) {
                let id = b["id"].as_str().unwrap_or_default().to_string();
                if b["type"] == "tool_use"
                    && b["name"] == "TodoWrite"
                    && !failed.contains(&id)
                    && let Some(todos) = b["input"]["todos"].as_array()
                {
                    let ts = line["timestamp"].as_str().unwrap_or_default().to_string();
                    calls.push((ts, todos.clone()));
                }
            }
        }
    }
    calls.sort_by(|a, b| a.0.cmp(&b.0));
    let mut last = BTreeMap::new();
    for (_, todos) in calls {
        for t in todos {
            let (Some(content), status) = (t["content"].as_str(), t["status"].as_str()) else {
                continue;
            };
            // lowercase, keep letters/digits/_/spaces, collapse spaces
            let kept: String = content
                .to_lowercase()
                .chars()
                .filter(|c| c.is_alphanumeric() || *c == '_' || c.is_whitespace())
                .collect();
            let key = kept.split_whitespace().collect::<Vec<_>>().join(" ");
            if key.is_empty() {
                continue;
            }
            let status = match status {
                Some("completed") => "done",
                Some(s) => s,
                None => "pending",
            };
            last.insert(key, status.to_string());
        }
    }
    last
}

#[test]
fn real_transcripts_give_one_task_per_todo_with_its_last_status() {
    let Some(dir) = shared_dir("fixtures/claude-code/transcripts") else {
        return;
    };
    let expected = count_todos(&dir);
    assert!(expected.len() > 10, "{expected:?}");
    let repo = TestRepo::new();
    let paths: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.path().display().to_string())
        .collect();
    let mut args = vec!["import", "claude-code"];
    args.extend(paths.iter().map(String::as_str));
    repo.memlog(&args).ok();
    let list = tasks(&repo);
    let project_prefix = |id: &str| id.split_once("::").map(|(_, k)| k.to_string());
    let got: BTreeMap<String, String> = list
        .iter()
        .map(|t| {
            (
                project_prefix(t["entity_id"].as_str().unwrap()).unwrap(),
                t["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(got, expected);
    let open = repo
        .memlog(&["tasks", "--status", "open", "--json"])
        .ok()
        .json();
    let expected_open = expected.values().filter(|s| *s != "done").count();
    assert_eq!(open.as_array().unwrap().len(), expected_open);
}

/// Teammates' clones sit in directories of any name: a task one adds is
/// the same task in the other's clone after a sync, found by its title and
/// not added twice (the project comes from `origin`'s name; found by a
/// field test, where clones `alice/` and `bob/` keyed tasks apart).
#[test]
fn a_teammates_task_is_the_same_task_in_every_clone() {
    let (_remote, clones) = memlog_e2e::remote_and_clones(2);
    let (alice, bob) = (&clones[0], &clones[1]);
    let added = alice
        .memlog(&["task", "add", "Rotate the staging keys", "--json"])
        .ok()
        .json();
    alice.memlog(&["sync", "origin"]).ok();
    bob.memlog(&["sync", "origin"]).ok();
    let shown = bob
        .memlog(&["task", "show", "Rotate the staging keys", "--json"])
        .ok()
        .json();
    assert_eq!(shown["entity_id"], added["entity_id"], "{shown}");
    let again = bob.memlog(&["task", "add", "rotate the staging keys"]);
    assert_eq!(again.code(), Some(1), "{}", again.stderr());
    assert!(
        again.stderr().contains("already exists"),
        "{}",
        again.stderr()
    );
}

/// A task created again where the first creation was not seen stays as it
/// was: a teammate's own `task add` of a task already finished, merged by a
/// sync, and a later session's todo of the same title leave it done on
/// every clone (found by a field test: both reopened it as pending).
#[test]
fn a_second_creation_of_a_finished_task_leaves_it_done() {
    let (_remote, clones) = memlog_e2e::remote_and_clones(2);
    let (alice, bob) = (&clones[0], &clones[1]);
    let title = "Upgrade Node to 22";
    alice.memlog(&["task", "add", title]).ok();
    for status in ["in_progress", "done"] {
        alice
            .memlog(&["task", "set", title, "--status", status])
            .ok();
    }
    bob.memlog(&["task", "add", title]).ok();
    alice.memlog(&["sync", "origin"]).ok();
    bob.memlog(&["sync", "origin"]).ok();
    alice.memlog(&["sync", "origin"]).ok();
    for clone in [alice, bob] {
        let shown = clone.memlog(&["task", "show", title, "--json"]).ok().json();
        assert_eq!(shown["status"], "done", "{shown:#}");
        // bob's creation is in the history, as no change
        let last = shown["history"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(last["kind"], "task_created", "{shown:#}");
        assert!(last.get("from").is_none(), "{shown:#}");
    }

    // a later session's TodoWrite with a todo of that title
    alice.hook(
        "PostToolUse",
        "tw1",
        json!({"tool_name": "TodoWrite", "tool_use_id": "tu1",
               "tool_input": {"todos": [{"content": title, "status": "pending", "activeForm": "Upgrading Node"}]},
               "tool_response": {}}),
    );
    alice.hook("SessionEnd", "tw1", json!({"reason": "other"}));
    let shown = alice.memlog(&["task", "show", title, "--json"]).ok().json();
    assert_eq!(shown["status"], "done", "{shown:#}");
    let list = tasks(alice);
    assert_eq!(list.len(), 1, "{list:#?}");
}

/// A teammate's start of a task written before he saw it finished never
/// reopens it at the sync: his change is kept in the history as refused,
/// and says why (a field test: bob's TaskUpdate from pending reopened the
/// task alice had finished, and the history showed done → in_progress,
/// which nobody did).
#[test]
fn a_change_written_before_the_task_was_finished_elsewhere_does_not_reopen_it() {
    let (_remote, clones) = memlog_e2e::remote_and_clones(2);
    let (alice, bob) = (&clones[0], &clones[1]);
    let title = "Deploy the billing service";
    alice.memlog(&["task", "add", title]).ok();
    bob.memlog(&["task", "add", title]).ok();
    for status in ["in_progress", "done"] {
        alice
            .memlog(&["task", "set", title, "--status", status])
            .ok();
    }
    // later than alice's done, written against pending
    std::thread::sleep(std::time::Duration::from_millis(20));
    bob.memlog(&["task", "set", title, "--status", "in_progress"])
        .ok();
    alice.memlog(&["sync", "origin"]).ok();
    // bob is told what became of his task
    let synced = bob.memlog(&["sync", "origin"]).ok().stdout();
    assert!(
        synced.contains(&format!("task {title:?}: in_progress -> done")),
        "{synced}"
    );
    alice.memlog(&["sync", "origin"]).ok();
    for clone in [alice, bob] {
        let shown = clone.memlog(&["task", "show", title, "--json"]).ok().json();
        assert_eq!(shown["status"], "done", "{shown:#}");
        let last = shown["history"].as_array().unwrap().last().unwrap().clone();
        assert!(
            last["rejected"]
                .as_str()
                .unwrap_or_default()
                .contains("written when the task was pending"),
            "{shown:#}"
        );
    }
    // seen done, a reopen is the user's to make
    alice
        .memlog(&["task", "set", title, "--status", "in_progress"])
        .ok();
    let shown = alice.memlog(&["task", "show", title, "--json"]).ok().json();
    assert_eq!(shown["status"], "in_progress", "{shown:#}");
}

/// `memlog diff` shows a task as `memlog task show` has it: a task its
/// blocker's end unblocked is shown back in progress (found by a field
/// test: the diff had its own fold, without the unblocking).
#[test]
fn the_diff_shows_a_task_unblocked_by_its_blockers_end() {
    let repo = TestRepo::new();
    repo.memlog(&["task", "add", "Ship the build"]).ok();
    repo.memlog(&["task", "add", "Write the release notes"])
        .ok();
    let set = |title: &str, args: &[&str]| {
        let mut all = vec!["task", "set", title];
        all.extend(args);
        repo.memlog(&all).ok();
    };
    set("Write the release notes", &["--status", "in_progress"]);
    set(
        "Write the release notes",
        &["--status", "blocked", "--blocker", "Ship the build"],
    );
    set("Ship the build", &["--status", "in_progress"]);
    set("Ship the build", &["--status", "done"]);
    let shown = repo
        .memlog(&["task", "show", "Write the release notes", "--json"])
        .ok()
        .json();
    assert_eq!(shown["status"], "in_progress", "{shown}");
    let diff = repo.memlog(&["diff", "--json"]).ok().json();
    let notes = diff["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["title"] == "Write the release notes")
        .unwrap_or_else(|| panic!("{diff}"));
    assert_eq!(notes["after"]["status"], "in_progress", "{notes}");
}

/// The project's name follows the repository (`origin`'s name once there
/// is one), and a task made before it changed is still the same task.
#[test]
fn a_task_made_before_origin_was_added_is_still_found_by_its_title() {
    let repo = TestRepo::new();
    repo.memlog(&["task", "add", "Deploy the billing service"])
        .ok();
    repo.git(&["remote", "add", "origin", "git@example.com:acme/shop.git"])
        .ok();
    repo.memlog(&[
        "task",
        "set",
        "Deploy the billing service",
        "--status",
        "in_progress",
    ])
    .ok();
    let again = repo.memlog(&["task", "add", "Deploy the billing service"]);
    assert_ne!(again.code(), Some(0), "a duplicate was made");
    assert!(
        again.stderr().contains("already exists"),
        "{}",
        again.stderr()
    );
    let list = repo.memlog(&["task", "list", "--json"]).ok().json();
    let tasks = list
        .as_array()
        .cloned()
        .unwrap_or_else(|| list["tasks"].as_array().cloned().unwrap_or_default());
    assert_eq!(tasks.len(), 1, "{list}");
    assert_eq!(tasks[0]["status"], "in_progress", "{list}");
}

/// A secret in a task's title reaches disk in none of its forms: the title
/// is redacted, and so is the key made from it (lower-cased and stripped of
/// punctuation, the key hid the secret from every rule: a field test found
/// Twilio and AWS keys in the log and the graph), whether the task came
/// from `task add` or an agent's todo list. The task is still found by the
/// title as typed.
#[test]
fn a_secret_in_a_task_title_reaches_disk_in_no_form() {
    let repo = TestRepo::new();
    let twilio = "SKeaed46725a2a7b860dcd6c8a1f8b4628";
    let aws = "2hpChYgCfrL1spNxnyVmihA+2O76UMFxFkM+R5Kj";
    let stripe = "sk_live_lBYOvfZ8UzDzV8fUkkibjL5D";
    let typed = format!("fix deploy: AWS_SECRET_ACCESS_KEY={aws} STRIPE_SECRET_KEY={stripe}");
    repo.memlog(&["task", "add", &format!("rotate twilio key {twilio}")])
        .ok();
    repo.memlog(&["task", "add", &typed]).ok();
    repo.memlog(&["task", "set", &typed, "--status", "in_progress"])
        .ok();
    let again = repo.memlog(&["task", "add", &typed]);
    assert!(!again.output.status.success(), "refused as a duplicate");
    // and an agent's todo list, through the import of its transcript
    let dir = tempfile::tempdir().unwrap();
    let transcript = todo_transcript(
        dir.path(),
        "todo-secret",
        3,
        &[&[(
            &format!("Rotate AWS key AKIAUJZDEGXDNCF32EPF and twilio {twilio}"),
            "pending",
        )]],
    );
    repo.memlog(&["import", "claude-code", transcript.to_str().unwrap()])
        .ok();
    repo.memlog(&["index"]).ok();

    let list = tasks(&repo);
    assert_eq!(list.len(), 3, "{list:#?}");
    let status: Vec<&str> = list.iter().filter_map(|t| t["status"].as_str()).collect();
    assert!(status.contains(&"in_progress"), "{list:#?}");
    let objects = memlog_e2e::all_objects(repo.path());
    let graph = std::fs::read(repo.path().join(".git/memlog/index/graph.sqlite")).unwrap();
    for secret in [twilio, aws, stripe, "AKIAUJZDEGXDNCF32EPF"] {
        // the key's form: lower-case, no punctuation
        let keyed = memlog_format::key::normalize(secret);
        for (what, bytes) in [("the log", &objects), ("the graph", &graph)] {
            for form in [secret, keyed.as_str()] {
                assert!(!memlog_e2e::holds(bytes, form), "{form} is in {what}");
            }
        }
    }
}
