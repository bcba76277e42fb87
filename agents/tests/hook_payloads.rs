//! Every hook payload in the fixtures (real captures and memlog's own
//! samples) mapped to drafts. Files are named `<Event>[.<Tool>].json`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

mod common;

use std::path::Path;

use memlog_agents::{CodeContext, HookEvent, HookOptions, drafts_at, parse_payload};
use memlog_format::{Draft, Kind};
use serde_json::Value;

const TS: &str = "2026-03-04T10:15:00.000Z";

/// Metadata every observation of `tool` must carry.
fn expected_metadata(tool: &str) -> &'static [&'static str] {
    match tool {
        "Read" | "Write" | "Edit" | "MultiEdit" => &["file_path", "line_count"],
        "NotebookEdit" => &["file_path", "cell_id"],
        "Bash" => &["command"],
        "BashOutput" | "KillShell" => &["shell_id"],
        "Grep" | "Glob" => &["pattern", "match_count"],
        "WebFetch" => &["url", "status"],
        "WebSearch" => &["query"],
        "Task" => &["description", "subagent_type"],
        "SlashCommand" => &["command"],
        _ => &[],
    }
}

fn context() -> CodeContext {
    CodeContext {
        cwd: None,
        branch: Some("main".into()),
        head: Some("4b825dc642cb6eb9a060e54bf8d69288fbee4904".into()),
    }
}

/// Maps one payload file and checks its drafts against the payload.
fn check(path: &Path) -> Vec<Draft> {
    let file = path.file_name().and_then(|n| n.to_str()).unwrap();
    let stem = file.trim_end_matches(".json");
    let (event_name, tool) = match stem.split_once('.') {
        Some((event, tool)) => (event, Some(tool)),
        None => (stem, None),
    };
    let bytes = std::fs::read(path).unwrap();
    let raw: Value = serde_json::from_slice(&bytes).unwrap();
    let payload = parse_payload(event_name, &bytes).unwrap();
    let event = HookEvent::parse(event_name).expect("files are named after known events");
    assert_eq!(payload.event, Some(event), "{file}");
    assert_eq!(payload.tool_name.as_deref(), tool, "{file}");

    let drafts = drafts_at(&payload, &context(), &HookOptions::new("fixture"), TS);
    for d in &drafts {
        assert_eq!(d.session, raw["session_id"].as_str().unwrap(), "{file}");
        assert_eq!((d.ts.as_str(), d.project.as_str()), (TS, "fixture"));
        assert_eq!(d.meta["client"], "claude-code", "{file}");
        assert_eq!(d.meta["hook"], event.as_str(), "{file}");
        assert_eq!(d.meta["cwd"], raw["cwd"], "{file}: the payload's cwd");
        assert_eq!(d.meta["branch"], "main");
        assert!(d.meta.contains_key("head"));
        assert!(!d.meta.contains_key("unknown_hook"), "{file}");
    }
    let kinds: Vec<&str> = drafts.iter().map(|d| d.kind.as_str()).collect();
    let text = |key: &str| {
        raw.get(key)
            .and_then(Value::as_str)
            .map(str::trim)
            .unwrap_or("")
    };
    match event {
        HookEvent::SessionStart => {
            assert_eq!(kinds, ["session_start"], "{file}");
            assert_eq!(drafts[0].body["source"], raw["source"]);
        }
        HookEvent::SessionEnd => {
            assert_eq!(kinds, ["session_end"], "{file}");
            assert_eq!(drafts[0].body["reason"], raw["reason"]);
        }
        HookEvent::UserPromptSubmit => {
            assert_eq!(kinds, ["user_prompt"], "{file}");
            assert_eq!(drafts[0].body["text"], raw["prompt"]);
        }
        HookEvent::PreToolUse => assert!(drafts.is_empty(), "{file}: PreToolUse records nothing"),
        HookEvent::PostToolUse | HookEvent::PostToolUseFailure => {
            let tool = tool.expect("tool events name their tool");
            if tool == "TodoWrite" {
                assert!(!drafts.is_empty(), "{file}");
                for d in &drafts {
                    assert!(
                        matches!(d.kind, Kind::TaskCreated | Kind::TaskStatusChanged),
                        "{file}: {kinds:?}"
                    );
                    let key = d.body["key"].as_str().unwrap();
                    assert!(key.starts_with("fixture::"), "{key}");
                    assert!(d.body["title"].is_string() && d.body["status"].is_string());
                }
                return drafts;
            }
            assert_eq!(kinds, ["tool_observation"], "{file}");
            let body = &drafts[0].body;
            assert_eq!(body["tool"], tool);
            assert_eq!(body["input"], raw["tool_input"]);
            assert!(body["success"].is_boolean(), "{file}");
            if event == HookEvent::PostToolUse {
                assert!(body["output"].is_string(), "{file}");
            } else {
                assert_eq!(body["success"], false);
                assert_eq!(body["error"], raw["error"]);
            }
            if let Some(id) = raw.get("tool_use_id") {
                assert_eq!(&body["tool_use_id"], id);
            }
            for field in expected_metadata(tool) {
                assert!(
                    body["metadata"].get(field).is_some(),
                    "{file}: metadata.{field} missing in {}",
                    body["metadata"]
                );
            }
        }
        HookEvent::Stop | HookEvent::SubagentStop => {
            let given = text("last_assistant_message");
            if given.is_empty() {
                // The captured transcript paths do not exist here.
                assert!(drafts.is_empty(), "{file}");
            } else {
                assert_eq!(kinds, ["agent_response"], "{file}");
                assert_eq!(drafts[0].body["text"], given);
            }
            if event == HookEvent::SubagentStop {
                for d in &drafts {
                    assert_eq!(d.meta["agent_id"], raw["agent_id"]);
                    assert_eq!(d.meta["sidechain"], true);
                }
            }
        }
        HookEvent::PreCompact => {
            let instructions = text("custom_instructions");
            if instructions.is_empty() {
                assert!(drafts.is_empty(), "{file}");
            } else {
                assert_eq!(kinds, ["user_prompt"], "{file}");
                assert_eq!(drafts[0].body["text"], format!("/compact {instructions}"));
            }
        }
    }
    drafts
}

#[test]
fn every_real_payload_maps_to_the_expected_drafts() {
    let Some(dir) = common::shared("hooks") else {
        return;
    };
    let files = common::files_under(&dir, ".json");
    assert!(files.len() >= 30, "{} payloads", files.len());
    for file in &files {
        check(file);
    }
}

#[test]
fn real_payloads_give_the_values_they_hold() {
    let Some(dir) = common::shared("hooks/chrisbarrett-captured") else {
        return;
    };
    let one = |name: &str| {
        let drafts = check(&dir.join(name));
        assert_eq!(drafts.len(), 1, "{name}");
        drafts.into_iter().next().unwrap()
    };
    let bash = one("PostToolUse.Bash.json");
    assert_eq!(bash.body["output"], "/test/project");
    assert_eq!(bash.body["metadata"]["command"], "pwd");
    assert_eq!(bash.body["metadata"]["interrupted"], false);
    assert_eq!(bash.body["success"], true);

    let read = one("PostToolUse.Read.json");
    assert_eq!(read.body["metadata"]["file_path"], "/test/project/mod.ts");
    assert_eq!(read.body["metadata"]["line_count"], 487);
    assert!(
        read.body["output"]
            .as_str()
            .unwrap()
            .starts_with("/**\n * Type-safe Deno library")
    );

    let edit = one("PostToolUse.Edit.json");
    assert_eq!(edit.body["metadata"]["line_count"], 1);
    assert_eq!(
        edit.body["output"],
        "@@ -1,1 +1,1 @@\n-{\"greeting\": \"hello\"}\n+{\"greeting\": \"world\"}"
    );

    let write = one("PostToolUse.Write.json");
    assert_eq!(write.body["output"], "created /tmp/test-write-output.txt");
    assert_eq!(write.body["metadata"]["line_count"], 1);

    assert_eq!(
        one("PostToolUse.Glob.json").body["metadata"]["match_count"],
        26
    );
    assert_eq!(
        one("PostToolUse.Grep.json").body["metadata"]["match_count"],
        13
    );

    let fetch = one("PostToolUse.WebFetch.json");
    assert_eq!(fetch.body["metadata"]["url"], "https://example.com");
    assert_eq!(fetch.body["metadata"]["status"], 200);
    assert!(
        fetch.body["output"]
            .as_str()
            .unwrap()
            .contains("Example Domain")
    );

    let search = one("PostToolUse.WebSearch.json");
    assert_eq!(
        search.body["metadata"]["query"],
        "Claude Code hooks documentation"
    );
    assert!(search.body["output"].as_str().unwrap().contains(
        "Hooks reference - Claude Docs — https://docs.claude.com/en/docs/claude-code/hooks"
    ));

    let task = one("PostToolUse.Task.json");
    assert!(
        task.body["output"]
            .as_str()
            .unwrap()
            .starts_with("2 + 2 = 4")
    );
    assert_eq!(task.body["metadata"]["agent_id"], "ca8e0ee5");

    let notebook = one("PostToolUse.NotebookEdit.json");
    assert_eq!(notebook.body["success"], true, "an empty error is no error");
    assert_eq!(
        notebook.body["metadata"]["file_path"],
        "/tmp/test-notebook-edit.ipynb"
    );

    assert_eq!(
        one("PostToolUse.BashOutput.json").body["metadata"]["status"],
        "running"
    );
    assert!(
        one("PostToolUse.KillShell.json").body["output"]
            .as_str()
            .unwrap()
            .starts_with("Successfully killed shell")
    );

    let todo = one("PostToolUse.TodoWrite.json");
    assert_eq!(todo.kind, Kind::TaskCreated);
    assert_eq!(todo.body["key"], "fixture::test task");
    assert_eq!(todo.body["status"], "pending");
    assert_eq!(todo.body["active_form"], "Testing task");
}

#[test]
fn own_sample_payloads_map_to_the_expected_drafts() {
    let dir = common::own("hooks");
    let files = common::files_under(&dir, ".json");
    assert!(
        files.len() >= 10,
        "{} samples in {}",
        files.len(),
        dir.display()
    );
    for file in &files {
        check(file);
    }
    let todo = check(&dir.join("PostToolUse.TodoWrite.json"));
    let summary: Vec<(&str, &str)> = todo
        .iter()
        .map(|d| (d.kind.as_str(), d.body["title"].as_str().unwrap()))
        .collect();
    assert_eq!(
        summary,
        [
            (
                "task_status_changed",
                "Find where the coupon discount is rounded"
            ),
            ("task_status_changed", "Round the discount half up"),
            ("task_created", "Add a regression test for 15% coupons"),
        ]
    );
    assert_eq!(todo[0].body["to"], "done");
    let failure = check(&dir.join("PostToolUseFailure.Bash.json"));
    assert_eq!(
        failure[0].body["metadata"]["command"],
        "cargo clippy -p cart -- -D warnings"
    );
    let grep = check(&dir.join("PostToolUse.Grep.json"));
    assert_eq!(grep[0].body["metadata"]["match_count"], 2);
    let edit = check(&dir.join("PostToolUse.Edit.json"));
    assert_eq!(edit[0].body["metadata"]["line_count"], 11);
    assert_eq!(edit[0].body["metadata"]["lines_added"], 2);
}
