//! The agents' own memory files (issue 31, "native memory files"):
//! CLAUDE.md, AGENTS.md and Claude Code's auto memory are read into memory
//! read-only and re-read when they change; facts that conflict with them
//! are flagged; `memlog rules export` owns one marked block in them and
//! nothing else.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use std::path::Path;

use memlog_e2e::{
    Run, TestRepo, all_objects, holds, memlog_command, remote_and_clones, run, run_stdin,
};
use serde_json::Value;

/// memlog with a home of its own, so that the machine's own agent memory
/// is never read.
fn memlog(repo: &TestRepo, home: &Path, args: &[&str]) -> Run {
    run(memlog_command(repo.path())
        .env("HOME", home)
        .env("CODEX_HOME", home.join(".codex"))
        .args(args))
}

fn search_texts(repo: &TestRepo, home: &Path, query: &str) -> Vec<String> {
    let hits = memlog(repo, home, &["search", query, "--json"]).ok().json();
    hits["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            let id = h["id"].as_str().unwrap();
            let shown = memlog(repo, home, &["show", id, "--json"]).ok().json();
            let event = if shown["event"].is_object() {
                shown["event"].clone()
            } else {
                shown
            };
            format!(
                "{}|{}",
                event["body"]["path"].as_str().unwrap_or(""),
                event["body"]["text"].as_str().unwrap_or("")
            )
        })
        .collect()
}

/// Claude Code's auto memory folder of `repo` under `home`, made.
fn claude_memory_dir(repo: &TestRepo, home: &Path) -> std::path::PathBuf {
    let work_tree = std::fs::canonicalize(repo.path()).unwrap();
    let slug: String = work_tree
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let memory = home.join(".claude/projects").join(slug).join("memory");
    std::fs::create_dir_all(&memory).unwrap();
    memory
}

#[test]
fn claude_md_lines_are_found_by_search_and_re_read_when_changed() {
    let repo = TestRepo::new();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        repo.path().join("CLAUDE.md"),
        "# Conventions\n\nMoney math goes through the ledger crate, never f64.\n\n\
         The invoice export batch size is 200 rows.\n",
    )
    .unwrap();
    // Claude Code's auto memory of this project, under the (test) home
    let memory = claude_memory_dir(&repo, home.path());
    std::fs::write(
        memory.join("MEMORY.md"),
        "- The staging database is reset every Monday at 06:00.\n",
    )
    .unwrap();

    let listed = memlog(&repo, home.path(), &["native", "--json"])
        .ok()
        .json();
    let labels: Vec<&str> = listed["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels.len(), 2, "{listed:#}");
    assert_eq!(labels[0], "CLAUDE.md");
    assert!(labels[1].ends_with("memory/MEMORY.md"), "{labels:?}");
    assert_eq!(listed["changed"], true);

    let synced = memlog(&repo, home.path(), &["native", "sync", "--json"])
        .ok()
        .json();
    assert_eq!(synced["files"][0]["added"], 2, "{synced:#}");
    let found = search_texts(&repo, home.path(), "ledger");
    assert_eq!(
        found.first().map(String::as_str),
        Some("CLAUDE.md|Money math goes through the ledger crate, never f64."),
        "{found:?}"
    );
    let found = search_texts(&repo, home.path(), "staging database reset");
    assert!(found[0].contains("every Monday"), "{found:?}");
    // nothing changed: nothing read again
    let again = memlog(&repo, home.path(), &["native", "sync", "--json"])
        .ok()
        .json();
    assert_eq!(again["files"][0]["status"], "unchanged");
    let events = repo.cat().len();

    // A changed file: the new line is found, the old one is gone, the
    // unchanged paragraph is not recorded twice.
    std::fs::write(
        repo.path().join("CLAUDE.md"),
        "# Conventions\n\nMoney math goes through the ledger crate, never f64.\n\n\
         Invoices are exported through the batch API only.\n",
    )
    .unwrap();
    let changed = memlog(&repo, home.path(), &["native", "sync", "--json"])
        .ok()
        .json();
    assert_eq!(changed["files"][0]["added"], 1, "{changed:#}");
    assert_eq!(changed["files"][0]["forgotten"], 1, "{changed:#}");
    assert!(search_texts(&repo, home.path(), "batch API")[0].contains("batch API only"));
    let old = search_texts(&repo, home.path(), "200 rows");
    assert!(!old.iter().any(|t| t.contains("200 rows")), "{old:?}");
    // one note and one forget event more
    assert_eq!(repo.cat().len(), events + 1, "the forgotten note is hidden");
}

#[test]
fn a_fact_that_conflicts_with_claude_md_is_flagged() {
    let repo = TestRepo::new();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        repo.path().join("CLAUDE.md"),
        "The invoice export batch size is 200 rows.\n",
    )
    .unwrap();
    memlog(&repo, home.path(), &["native", "sync"]).ok();
    let evidence = repo.record("s1", "note", "we tried bigger batches");
    memlog(
        &repo,
        home.path(),
        &[
            "rules",
            "add",
            "The invoice export batch size is 500 rows.",
            "--evidence",
            &evidence,
        ],
    )
    .ok();
    let listed = memlog(&repo, home.path(), &["native", "--json"])
        .ok()
        .json();
    let conflicts = listed["conflicts"].as_array().unwrap();
    assert_eq!(conflicts.len(), 1, "{listed:#}");
    assert_eq!(conflicts[0]["at"], "CLAUDE.md:1");
    assert!(conflicts[0]["text"].as_str().unwrap().contains("500 rows"));
    let text = memlog(&repo, home.path(), &["native"]).ok().stdout();
    assert!(text.contains("CONFLICT"), "{text}");
}

#[test]
fn rules_export_owns_one_block_and_leaves_the_users_text_alone() {
    let repo = TestRepo::new();
    let home = tempfile::tempdir().unwrap();
    let user = "# Agents\n\nRun `cargo test -p export` before pushing.\n\n## Style\nNo unwrap in libraries.";
    std::fs::write(repo.path().join("AGENTS.md"), user).unwrap();
    let evidence = repo.record("s1", "note", "export tests caught it twice");
    let rule = memlog(
        &repo,
        home.path(),
        &[
            "rules",
            "add",
            "Run the export tests before touching the batch code.",
            "--evidence",
            &evidence,
        ],
    )
    .ok()
    .stdout();
    let rule = rule.trim();

    let first = memlog(
        &repo,
        home.path(),
        &["rules", "export", "--to", "AGENTS.md", "--json"],
    )
    .ok()
    .json();
    assert_eq!(
        (first["rules"].as_u64(), &first["changed"]),
        (Some(1), &Value::Bool(true))
    );
    let once = std::fs::read_to_string(repo.path().join("AGENTS.md")).unwrap();
    let second = memlog(
        &repo,
        home.path(),
        &["rules", "export", "--to", "AGENTS.md", "--json"],
    )
    .ok()
    .json();
    assert_eq!(second["changed"], false);
    let twice = std::fs::read_to_string(repo.path().join("AGENTS.md")).unwrap();
    assert_eq!(once, twice, "idempotent");
    assert_eq!(twice.matches("<!-- BEGIN memlog rules").count(), 1);
    assert_eq!(twice.matches("<!-- END memlog rules -->").count(), 1);
    assert!(
        twice.starts_with(user),
        "the user's text is untouched:\n{twice}"
    );
    assert!(
        twice.contains(&format!("(memlog {})", &rule[..12])),
        "{twice}"
    );

    // The user edits around the block; a new rule changes the block only.
    let edited = twice.replace("# Agents", "# Agents of this repo") + "\nA line after the block.\n";
    std::fs::write(repo.path().join("AGENTS.md"), &edited).unwrap();
    memlog(
        &repo,
        home.path(),
        &[
            "rules",
            "add",
            "Keep invoice rounding in the ledger crate.",
            "--evidence",
            &evidence,
        ],
    )
    .ok();
    memlog(
        &repo,
        home.path(),
        &["rules", "export", "--to", "AGENTS.md"],
    )
    .ok();
    let third = std::fs::read_to_string(repo.path().join("AGENTS.md")).unwrap();
    assert!(third.starts_with("# Agents of this repo\n"), "{third}");
    assert!(third.ends_with("\nA line after the block.\n"), "{third}");
    assert!(third.contains("Keep invoice rounding"), "{third}");
    assert_eq!(third.matches("<!-- BEGIN memlog rules").count(), 1);

    // The block is memlog's own: reading AGENTS.md leaves it out.
    memlog(&repo, home.path(), &["native", "sync"]).ok();
    let natives: Vec<Value> = repo
        .cat()
        .into_iter()
        .filter(|e| e["body"]["source"] == "native")
        .collect();
    assert!(
        natives
            .iter()
            .all(|e| !e["body"]["text"].as_str().unwrap().contains("memlog")),
        "{natives:#?}"
    );
    assert!(
        natives
            .iter()
            .any(|e| e["body"]["text"] == "A line after the block.")
    );
}

const MINE: &str = "PRSNL-NATIVE-3317";
const MINE_TOO: &str = "PRSNL-CODEX-5802";
const MINE_WRITTEN: &str = "PRSNL-WRITE-2291";

/// The user's own agent memory (Claude Code's project memory, Codex's
/// memories: outside the work tree) is searched here and never synced;
/// CLAUDE.md, in the work tree, is shared. Read by `memlog native sync`
/// and by SessionStart in the background, recalled into an agent's
/// (shared) session by a prompt.
#[test]
fn the_users_own_agent_memory_is_found_here_and_never_synced() {
    let (remote, clones) = remote_and_clones(1);
    let repo = &clones[0];
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        repo.path().join("CLAUDE.md"),
        "Money math goes through the ledger crate, never f64.\n",
    )
    .unwrap();
    std::fs::write(
        claude_memory_dir(repo, home.path()).join("MEMORY.md"),
        format!("- My parking spot is {MINE}, level two of the garage.\n"),
    )
    .unwrap();
    let codex = home.path().join(".codex/memories");
    std::fs::create_dir_all(&codex).unwrap();
    std::fs::write(
        codex.join("me.md"),
        format!("My locker combination is {MINE_TOO}.\n"),
    )
    .unwrap();
    let hook = |event: &str, payload: serde_json::Value| {
        let mut payload = payload;
        payload["cwd"] = serde_json::json!(repo.path().display().to_string());
        payload["session_id"] = serde_json::json!("s-work");
        payload["hook_event_name"] = serde_json::json!(event);
        let out = run_stdin(
            memlog_command(repo.path())
                .env("HOME", home.path())
                .env("CODEX_HOME", home.path().join(".codex"))
                .args(["hook", event]),
            &payload.to_string(),
        );
        assert_eq!(out.code(), Some(0), "{}", out.stderr());
        out.stdout()
    };
    // SessionStart reads them in the background; `native sync` waits for it
    hook(
        "SessionStart",
        serde_json::json!({"transcript_path": "/nonexistent.jsonl", "source": "startup"}),
    );
    memlog(repo, home.path(), &["native", "sync"]).ok();
    for (query, marker) in [
        ("parking spot garage", MINE),
        ("locker combination", MINE_TOO),
    ] {
        let found = search_texts(repo, home.path(), query);
        assert!(
            found.iter().any(|t| t.contains(marker)),
            "{query}: {found:?}"
        );
    }
    assert!(search_texts(repo, home.path(), "ledger")[0].starts_with("CLAUDE.md|"));
    // recalled into an agent's session, which stays shared
    let injected = hook(
        "UserPromptSubmit",
        serde_json::json!({"prompt": "where is my parking spot in the garage?"}),
    );
    assert!(injected.contains(MINE), "{injected}");
    // the agent writes its own memory (Claude Code's auto memory does so
    // with its Write tool): the call is recorded, its words are not
    let memory_file = claude_memory_dir(repo, home.path()).join("MEMORY.md");
    let written = format!("- My parking spot is {MINE}, level two.\n- Badge {MINE_WRITTEN}.\n");
    hook(
        "PostToolUse",
        serde_json::json!({
            "tool_name": "Write",
            "tool_input": {"file_path": memory_file.display().to_string(), "content": written},
            "tool_response": {"type": "create", "filePath": memory_file.display().to_string(), "content": written},
        }),
    );
    hook(
        "Stop",
        serde_json::json!({"transcript_path": "/nonexistent.jsonl", "stop_hook_active": false}),
    );
    memlog(repo, home.path(), &["seal", "--all"]).ok();
    let here = all_objects(&repo.path().join(".git/memlog/personal.git"));
    assert!(holds(&here, MINE), "kept here, in the personal store");

    memlog(repo, home.path(), &["sync", "origin"]).ok();
    let on_remote = all_objects(remote.path());
    assert!(holds(&on_remote, "ledger crate"), "CLAUDE.md is shared");
    assert!(
        holds(&on_remote, "where is my parking spot"),
        "so is the session"
    );
    for marker in [MINE, MINE_TOO, MINE_WRITTEN] {
        assert!(!holds(&on_remote, marker), "{marker} reached the remote");
    }
}
