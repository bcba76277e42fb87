//! GitHub Copilot CLI, Antigravity CLI, Cursor and OpenCode without their
//! programs: `memlog install|uninstall <agent>` writes and removes the
//! agent's hook file; `memlog import <agent>` reads the project's own
//! fixtures (fixtures/<agent>/, modelled on public captures) with every
//! typed prompt and tool call, and a second import adds nothing; hook
//! payloads of the captured shapes become events of the agent, and an
//! import of the same session reconciles with them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use std::path::PathBuf;

use memlog_e2e::{TestRepo, memlog_command, run_stdin};
use serde_json::Value;

fn fixtures(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures")
        .join(path)
}

fn import(repo: &TestRepo, agent: &str, path: &str) -> Value {
    let p = fixtures(path);
    repo.memlog(&["import", agent, p.to_str().unwrap(), "--json"])
        .ok()
        .json()
}

/// The events of `session`, by kind.
fn count(events: &[Value], kind: &str) -> usize {
    events.iter().filter(|e| e["kind"] == kind).count()
}

#[test]
fn install_writes_each_agents_hook_file_and_uninstall_removes_it() {
    let repo = TestRepo::new();
    for (agent, file, marker) in [
        (
            "copilot",
            ".github/hooks/memlog.json",
            "hook --agent copilot agentStop",
        ),
        (
            "antigravity",
            ".agents/hooks.json",
            "hook --agent antigravity PreInvocation",
        ),
        (
            "cursor",
            ".cursor/hooks.json",
            "hook --agent cursor sessionStart",
        ),
        (
            "opencode",
            ".opencode/plugin/memlog.js",
            "memlog-opencode-plugin",
        ),
    ] {
        let path = repo.path().join(file);
        if agent == "antigravity" {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, r#"{"lint": {"Stop": [{"command": "./lint.sh"}]}}"#).unwrap();
        }
        repo.memlog(&["install", agent]).ok();
        repo.memlog(&["install", agent]).ok(); // again: replaces
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.matches(marker).count(), 1, "{agent}: {text}");
        repo.memlog(&["uninstall", agent]).ok();
        let left = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(!left.contains(" hook --agent "), "{agent}: {left}");
        if agent == "antigravity" {
            assert!(
                left.contains("./lint.sh"),
                "the other named hook is kept: {left}"
            );
        }
        if agent == "opencode" {
            assert!(!path.exists(), "the plugin is removed");
        }
    }
}

#[test]
fn imports_keep_every_prompt_and_call_and_add_nothing_twice() {
    // (agent, fixture, session, typed prompts, tool calls)
    for (agent, path, session, prompts, calls) in [
        (
            "copilot",
            "copilot/events.jsonl",
            "5c1e2b7a-8d3f-4e0a-9b61-2f4d7c9e1a30",
            1,
            2,
        ),
        (
            "antigravity",
            "antigravity/brain",
            "7b2e4f10-3c5d-4a8e-9f21-6d0c8b4a2e57",
            2,
            4,
        ),
        (
            "cursor",
            "cursor/agent-transcripts",
            "c0ffee00-1111-4222-8333-444455556666",
            2,
            3,
        ),
        (
            "opencode",
            "opencode",
            "ses_5f2a9c1e7ffeQx3Lr0mB8kTz1d",
            1,
            2,
        ),
    ] {
        let repo = TestRepo::new();
        let first = import(&repo, agent, path);
        let events = repo.session_events(session);
        assert_eq!(
            count(&events, "user_prompt"),
            prompts,
            "{agent}: {events:#?}"
        );
        assert_eq!(count(&events, "tool_observation"), calls, "{agent}");
        assert!(
            events.iter().all(|e| e["meta"]["client"] != "claude-code"),
            "{agent}"
        );
        assert_eq!(
            first["added"].as_u64().unwrap() as usize,
            events.len(),
            "{agent}"
        );
        let refs: Vec<&str> = events
            .iter()
            .filter_map(|e| e["meta"]["ref"].as_str())
            .collect();
        let unique: std::collections::HashSet<&&str> = refs.iter().collect();
        assert_eq!(unique.len(), refs.len(), "{agent}: no duplicates");
        let second = import(&repo, agent, path);
        assert_eq!(second["added"], 0, "{agent}: {second}");
    }
}

#[test]
fn antigravity_hook_payloads_become_its_events_and_its_transcript_reconciles() {
    let repo = TestRepo::new();
    repo.memlog(&["install", "antigravity"]).ok();
    let cwd = repo.path().display().to_string();
    let payload = |name: &str| {
        std::fs::read_to_string(fixtures(&format!("antigravity/hooks/{name}.json")))
            .unwrap()
            .replace("/work/shop", &cwd)
    };
    for (event, name) in [
        ("PreInvocation", "pre_invocation_first"),
        ("PreInvocation", "pre_invocation_later"),
        ("Stop", "stop"),
    ] {
        let run = repo.memlog_stdin(&["hook", "--agent", "antigravity", event], &payload(name));
        assert_eq!(run.code(), Some(0), "{}", run.stderr());
    }
    let session = "7b2e4f10-3c5d-4a8e-9f21-6d0c8b4a2e57";
    let hooked = repo.session_events(session);
    assert_eq!(hooked.len(), 1, "{hooked:#?}");
    assert_eq!(hooked[0]["kind"], "session_start");
    assert_eq!(hooked[0]["meta"]["client"], "antigravity");
    assert_eq!(hooked[0]["meta"]["hook"], "SessionStart");

    let first = import(&repo, "antigravity", "antigravity/brain");
    let events = repo.session_events(session);
    assert_eq!(events.len(), 9, "{events:#?}");
    assert_eq!(first["added"], 8);
    assert!(events.iter().all(|e| e["meta"]["client"] == "antigravity"));
    assert_eq!(
        import(&repo, "antigravity", "antigravity/brain")["added"],
        0
    );
}

#[test]
fn copilot_hooks_and_its_session_file_record_each_thing_once() {
    let repo = TestRepo::new();
    let cwd = repo.path().display().to_string();
    let session = "5c1e2b7a-8d3f-4e0a-9b61-2f4d7c9e1a30";
    let events_file = fixtures("copilot/events.jsonl");
    let payloads = [
        (
            "sessionStart",
            serde_json::json!({"sessionId": session, "cwd": cwd, "source": "new"}),
        ),
        (
            "userPromptSubmitted",
            serde_json::json!({"sessionId": session, "cwd": cwd,
            "prompt": "When is the freeze? Check notes.txt and run the tests"}),
        ),
        (
            "postToolUse",
            serde_json::json!({"sessionId": session, "cwd": cwd, "toolName": "bash",
            "toolArgs": {"command": "cat notes.txt", "description": "read notes"},
            "toolResult": {"resultType": "success", "textResultForLlm": "freeze: Wednesday\n<shellId: 0 completed with exit code 0>"}}),
        ),
        (
            "postToolUse",
            serde_json::json!({"sessionId": session, "cwd": cwd, "toolName": "bash",
            "toolArgs": {"command": "npm test", "description": "run tests"},
            "toolResult": {"resultType": "failure", "textResultForLlm": "1 failing: cart total"}}),
        ),
        (
            "agentStop",
            serde_json::json!({"sessionId": session, "cwd": cwd,
            "transcriptPath": events_file, "stopReason": "end_turn"}),
        ),
    ];
    for (event, payload) in payloads {
        let run = repo.memlog_stdin(&["hook", "--agent", "copilot", event], &payload.to_string());
        assert_eq!(run.code(), Some(0), "{}", run.stderr());
    }
    let hooked = repo.session_events(session);
    // what it said before its calls, from events.jsonl, and its answer
    assert_eq!(count(&hooked, "agent_response"), 2, "{hooked:#?}");
    assert!(hooked.iter().all(|e| e["meta"]["client"] == "copilot-cli"));
    let imported = import(&repo, "copilot", "copilot/events.jsonl");
    let events = repo.session_events(session);
    assert_eq!(count(&events, "user_prompt"), 1, "{events:#?}");
    assert_eq!(count(&events, "tool_observation"), 2, "{events:#?}");
    assert_eq!(count(&events, "agent_response"), 2, "{events:#?}");
    assert_eq!(imported["added"], 0, "{imported}");
}

/// Copilot CLI also runs the hooks in Claude Code's settings (with
/// `COPILOT_CLI=1`, as 1.0.102 does): where memlog's Copilot hooks are
/// installed, those record the session and Claude Code's hooks step aside,
/// else a Copilot session would be recorded twice, once as Claude Code's.
#[test]
fn claude_code_hooks_run_by_copilot_step_aside_for_its_own() {
    let repo = TestRepo::new();
    let prompt = |session: &str| {
        let payload = serde_json::json!({"hook_event_name": "UserPromptSubmit",
            "session_id": session, "cwd": repo.path(), "prompt": "When is the freeze?"});
        let run = run_stdin(
            memlog_command(repo.path())
                .env("COPILOT_CLI", "1")
                .args(["hook", "UserPromptSubmit"]),
            &payload.to_string(),
        );
        assert_eq!(run.code(), Some(0), "{}", run.stderr());
        repo.session_events(session)
    };
    // Only Claude Code's hooks: they are the only record of the session.
    let alone = prompt("s1");
    assert_eq!(count(&alone, "user_prompt"), 1, "{alone:#?}");
    repo.memlog(&["install", "copilot"]).ok();
    assert!(prompt("s2").is_empty());
    // Claude Code itself (no COPILOT_CLI) is recorded as ever.
    let payload = serde_json::json!({"session_id": "s3", "cwd": repo.path(), "prompt": "Hi"});
    repo.memlog_stdin(&["hook", "UserPromptSubmit"], &payload.to_string());
    assert_eq!(count(&repo.session_events("s3"), "user_prompt"), 1);
}

/// A Cursor session its hooks recorded, then its transcript imported: each
/// call is kept once, though hooks name a Write's file and text `file_path`
/// and `content` and the transcript `path` and `contents`.
#[test]
fn cursor_hooks_and_its_transcript_record_each_call_once() {
    let repo = TestRepo::new();
    let session = "c0ffee00-1111-4222-8333-444455556666";
    let root = repo.path().display().to_string();
    for (event, file) in [
        ("beforeSubmitPrompt", "before_submit_prompt"),
        ("postToolUse", "post_tool_use"),
        ("afterAgentResponse", "after_agent_response"),
        ("postToolUse", "post_tool_use_write"),
    ] {
        let text = std::fs::read_to_string(fixtures(&format!("cursor/hooks/{file}.json"))).unwrap();
        let mut payload: Value = serde_json::from_str(&text).unwrap();
        payload["workspace_roots"] = serde_json::json!([root]);
        payload["cwd"] = Value::from(root.as_str());
        let run = repo.memlog_stdin(&["hook", "--agent", "cursor", event], &payload.to_string());
        assert_eq!(run.code(), Some(0), "{}", run.stderr());
    }
    let hooked = repo.session_events(session);
    assert_eq!(count(&hooked, "tool_observation"), 2, "{hooked:#?}");
    let imported = import(&repo, "cursor", "cursor/agent-transcripts");
    let events = repo.session_events(session);
    let writes: Vec<&Value> = events
        .iter()
        .filter(|e| e["body"]["tool"] == "Write")
        .collect();
    assert_eq!(writes.len(), 1, "{events:#?}");
    assert_eq!(
        writes[0]["body"]["input"]["file_path"],
        "/work/shop/test/freeze.test.js"
    );
    // The transcript's other calls and turn came in: `npm test`, the second
    // prompt and its answer.
    assert_eq!(count(&events, "tool_observation"), 3, "{events:#?}");
    assert_eq!(count(&events, "user_prompt"), 2, "{events:#?}");
    assert_eq!(imported["added"], 3, "{imported}");
}
