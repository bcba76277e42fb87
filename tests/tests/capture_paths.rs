//! One session, two capture paths: what the hooks recorded while Claude
//! Code ran and what an import later reads from its transcript are one
//! memory (issue 15, item 1). Runs on the project's own fixture
//! (`fixtures/claude-code/capture/`) and the hook payloads of the same
//! session; `claude_cli.rs` checks the same with the real CLI.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use std::io::Write;
use std::path::PathBuf;
use std::process::Stdio;

use memlog_e2e::{Run, TestRepo, memlog_command};
use serde_json::{Value, json};

const SESSION: &str = "3c5e7a90-1b2d-4f6e-8a0c-2e4f6a8b0c1d";
const PROMPT: &str = "Which rounding does the payment provider use?";
const ANSWER: &str = "It rounds half up to the cent.";

fn transcript() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/claude-code/capture")
        .join(format!("{SESSION}.jsonl"))
}

/// The payloads Claude Code gives memlog's hooks for the fixture's session.
fn payloads(repo: &TestRepo) -> Vec<(&'static str, Value)> {
    let cwd = repo.path().display().to_string();
    let base = json!({
        "session_id": SESSION,
        "transcript_path": transcript().display().to_string(),
        "cwd": cwd,
        "permission_mode": "default",
    });
    let with = |event: &str, extra: Value| {
        let mut p = base.clone();
        p["hook_event_name"] = json!(event);
        for (k, v) in extra.as_object().unwrap() {
            p[k] = v.clone();
        }
        p
    };
    vec![
        (
            "SessionStart",
            with(
                "SessionStart",
                json!({"source": "startup", "model": "claude-opus-5-5"}),
            ),
        ),
        (
            "UserPromptSubmit",
            with("UserPromptSubmit", json!({ "prompt": PROMPT })),
        ),
        (
            "PostToolUse",
            with(
                "PostToolUse",
                json!({
                    "tool_name": "Read",
                    "tool_input": {"file_path": "/home/dev/acme-shop/docs/provider.md"},
                    "tool_response": {"type": "text", "file": {
                        "filePath": "/home/dev/acme-shop/docs/provider.md",
                        "content": "The provider rounds half up to the cent.\n",
                        "numLines": 2, "startLine": 1, "totalLines": 2}},
                    "tool_use_id": "toolu_01CapRd7Kx2Lm9Qw3Ez5Rt8Y",
                }),
            ),
        ),
        (
            "Stop",
            with(
                "Stop",
                json!({"stop_hook_active": false, "last_assistant_message": ANSWER}),
            ),
        ),
        ("SessionEnd", with("SessionEnd", json!({"reason": "other"}))),
    ]
}

fn hook(repo: &TestRepo, event: &str, payload: &Value) {
    let mut child = memlog_command(repo.path())
        .args(["hook", event])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn memlog hook");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.to_string().as_bytes())
        .unwrap();
    Run {
        output: child.wait_with_output().unwrap(),
    }
    .ok();
}

/// A repository whose hooks recorded the session, except `skip`ped events.
fn captured_by_hooks(skip: &[&str]) -> TestRepo {
    let repo = TestRepo::new();
    // Quiet: no context injection, only capture.
    std::fs::write(
        repo.path().join(".memlog.yaml"),
        "hooks:\n  inject: false\n",
    )
    .unwrap();
    for (event, payload) in payloads(&repo) {
        if !skip.contains(&event) {
            hook(&repo, event, &payload);
        }
    }
    repo
}

fn import_transcript(repo: &TestRepo) -> Value {
    repo.memlog(&[
        "import",
        "claude-code",
        "--json",
        transcript().to_str().unwrap(),
    ])
    .ok()
    .json()
}

fn session_events(repo: &TestRepo) -> Vec<Value> {
    repo.memlog(&["cat", "--session", SESSION])
        .ok()
        .json_lines()
}

fn of_kind<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["kind"] == kind).collect()
}

/// The session's answers are what Claude Code's Stop hook records of the
/// turn: what it said before its call, then the answer.
fn assert_said_before_and_answered(events: &[Value]) {
    let answers: Vec<&Value> = of_kind(events, "agent_response")
        .into_iter()
        .map(|e| &e["body"]["text"])
        .collect();
    assert_eq!(
        answers,
        [&json!("Let me check the provider notes."), &json!(ANSWER)]
    );
}

#[test]
fn the_transcript_of_a_hook_captured_session_adds_nothing() {
    let repo = captured_by_hooks(&[]);
    let before = session_events(&repo);
    assert_eq!(repo.memlog_commits().len(), 1);
    // read from the transcript by the Stop hook
    assert_said_before_and_answered(&before);

    let report = import_transcript(&repo);
    assert_eq!(report["added"], 0, "{report}");
    assert_eq!(report["commits"], 0, "{report}");
    assert_eq!(session_events(&repo), before);
    assert_eq!(repo.memlog_commits().len(), 1);
}

/// A Stop hook that never ran (killed, timed out) is completed by the
/// import with all the turn said, as the Stop hook records it: the import
/// brought the last answer alone, and what the agent said between its
/// calls was lost for good (a field test).
#[test]
fn a_missed_stop_is_completed_by_the_import_once() {
    let repo = captured_by_hooks(&["Stop"]);
    let before = session_events(&repo);
    assert!(of_kind(&before, "agent_response").is_empty());

    let report = import_transcript(&repo);
    assert_eq!(report["added"], 2, "{report}");
    let after = session_events(&repo);
    assert_eq!(after.len(), before.len() + 2);
    assert_said_before_and_answered(&after);
    assert_eq!(of_kind(&after, "user_prompt").len(), 1);
    assert_eq!(of_kind(&after, "tool_observation").len(), 1);

    assert_eq!(import_transcript(&repo)["added"], 0);
    assert_eq!(session_events(&repo).len(), after.len());
}

#[test]
fn importing_into_a_running_session_adds_what_its_journal_lacks() {
    // The session is still running (no SessionEnd yet: its events are in a
    // journal), and its Stop hook has not run.
    let repo = captured_by_hooks(&["Stop", "SessionEnd"]);
    let report = import_transcript(&repo);
    assert_eq!(report["added"], 2, "{report}");
    // The session ends: its journal is sealed beside the import.
    let end = payloads(&repo).pop().unwrap();
    hook(&repo, end.0, &end.1);
    let events = session_events(&repo);
    assert_eq!(of_kind(&events, "user_prompt").len(), 1, "{events:?}");
    assert_eq!(of_kind(&events, "tool_observation").len(), 1);
    assert_eq!(of_kind(&events, "agent_response").len(), 2);
}

/// An import while the session's hooks are recording it, in the middle of
/// a tool call (the transcript ends at the call): the call is left to its
/// PostToolUse hook, which records it with its result. The import sealed
/// it without one for good, beside the hook's (field test 12a).
#[test]
fn an_import_leaves_a_call_still_running_to_its_hooks() {
    let repo = TestRepo::new();
    std::fs::write(
        repo.path().join(".memlog.yaml"),
        "hooks:\n  inject: false\n",
    )
    .unwrap();
    let all = payloads(&repo);
    for (event, payload) in all.iter().take(2) {
        hook(&repo, event, payload);
    }
    // the transcript as Claude Code has written it so far: up to the call
    let whole = std::fs::read_to_string(transcript()).unwrap();
    let cut: String = whole
        .lines()
        .take_while(|l| !l.contains("tool_result"))
        .map(|l| format!("{l}\n"))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let partial = dir.path().join(format!("{SESSION}.jsonl"));
    std::fs::write(&partial, cut).unwrap();
    let report = repo
        .memlog(&["import", "claude-code", "--json", partial.to_str().unwrap()])
        .ok()
        .json();
    assert_eq!(report["files"][0]["running_calls"], 1, "{report}");
    for (event, payload) in all.iter().skip(2) {
        hook(&repo, event, payload);
    }
    let events = session_events(&repo);
    let calls = of_kind(&events, "tool_observation");
    assert_eq!(calls.len(), 1, "{calls:#?}");
    assert_eq!(calls[0]["body"]["success"], true, "{calls:#?}");
}

#[test]
fn a_neutral_file_of_captured_data_adds_nothing() {
    let repo = captured_by_hooks(&[]);
    let before = session_events(&repo).len();
    let lines = [
        json!({"session": SESSION, "ts": "2026-11-24T09:00:00.100Z", "kind": "user_prompt", "text": PROMPT}),
        json!({"session": SESSION, "ts": "2026-11-24T09:00:02.000Z", "kind": "agent_response", "text": ANSWER}),
    ];
    let file = repo.path().join("export.jsonl");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let report = repo
        .memlog(&["import", "jsonl", "--json", file.to_str().unwrap()])
        .ok()
        .json();
    assert_eq!(report["added"], 0, "{report}");
    assert_eq!(report["commits"], 0, "{report}");
    assert_eq!(session_events(&repo).len(), before);
}

#[test]
fn a_forgotten_event_does_not_come_back_with_the_import() {
    let repo = captured_by_hooks(&[]);
    let events = session_events(&repo);
    let prompt = of_kind(&events, "user_prompt")[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    repo.memlog(&["forget", &prompt]).ok();
    let report = import_transcript(&repo);
    assert_eq!(report["added"], 0, "{report}");
    assert!(of_kind(&session_events(&repo), "user_prompt").is_empty());
}

/// A hooked session that ran a subagent, and its transcript: the import
/// adds nothing, and the subagent's prompt (its parent's words, the
/// Agent call's `prompt`) is never a `user_prompt` — the hooks see no
/// prompt of a subagent, and a field test's import added it as the user's,
/// in a commit of its own whose subject it became and in the compaction
/// recap's "Last prompts".
#[test]
fn a_subagents_prompt_is_not_imported_as_the_users() {
    const SUB: &str = "4b7d1c2e-6f8a-4c0e-9a2b-3d5f7e9a1c3e";
    const AGENT: &str = "a952194e90ce6f6f3";
    const SUBTASK: &str = "SUBTASK: find where coupons are validated and report the function.";
    let repo = TestRepo::new();
    std::fs::write(
        repo.path().join(".memlog.yaml"),
        "hooks:\n  inject: false\n",
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join(format!("{SUB}.jsonl"));
    let line = |uuid: &str, parent: Option<&str>, ts: &str, kind: &str, content: Value| {
        json!({"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": SUB,
               "timestamp": format!("2026-11-27T06:00:{ts}Z"), "cwd": repo.path(),
               "isSidechain": false, "message": {"role": kind, "content": content}})
    };
    let sub = |mut l: Value| {
        l["isSidechain"] = json!(true);
        l["agentId"] = json!(AGENT);
        l
    };
    let write = |path: &std::path::Path, lines: &[Value]| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(path, text).unwrap();
    };
    write(
        &main,
        &[
            line("u1", None, "00.000", "user", json!(PROMPT)),
            line(
                "a1",
                Some("u1"),
                "01.000",
                "assistant",
                json!([
                {"type": "tool_use", "id": "toolu_agent", "name": "Agent",
                 "input": {"description": "Find coupon validation", "prompt": SUBTASK}}]),
            ),
            line(
                "u2",
                Some("a1"),
                "05.000",
                "user",
                json!([
                {"type": "tool_result", "tool_use_id": "toolu_agent",
                 "content": [{"type": "text", "text": "validate_coupon"}]}]),
            ),
            line(
                "a2",
                Some("u2"),
                "06.000",
                "assistant",
                json!([{"type": "text", "text": ANSWER}]),
            ),
        ],
    );
    write(
        &dir.path()
            .join(SUB)
            .join("subagents")
            .join(format!("agent-{AGENT}.jsonl")),
        &[
            sub(line("s1", None, "02.000", "user", json!(SUBTASK))),
            sub(line(
                "s2",
                Some("s1"),
                "03.000",
                "assistant",
                json!([
                {"type": "tool_use", "id": "toolu_grep", "name": "Bash",
                 "input": {"command": "grep -rn coupon ."}}]),
            )),
            sub(line(
                "s3",
                Some("s2"),
                "03.500",
                "user",
                json!([
                {"type": "tool_result", "tool_use_id": "toolu_grep", "content": "def validate_coupon(code): pass"}]),
            )),
            sub(line(
                "s4",
                Some("s3"),
                "04.000",
                "assistant",
                json!([
                {"type": "text", "text": "Coupons are validated by validate_coupon()."}]),
            )),
        ],
    );
    let payload = |event: &str, extra: Value| {
        let mut p = json!({"session_id": SUB, "transcript_path": main, "cwd": repo.path(),
                           "hook_event_name": event});
        for (k, v) in extra.as_object().unwrap() {
            p[k] = v.clone();
        }
        p
    };
    let subagent = json!({"agent_id": AGENT, "agent_type": "general-purpose"});
    let with_agent = |mut extra: Value| {
        for (k, v) in subagent.as_object().unwrap() {
            extra[k] = v.clone();
        }
        extra
    };
    for (event, extra) in [
        ("SessionStart", json!({"source": "startup"})),
        ("UserPromptSubmit", json!({"prompt": PROMPT})),
        (
            "PostToolUse",
            with_agent(json!({"tool_name": "Bash", "tool_use_id": "toolu_grep",
            "tool_input": {"command": "grep -rn coupon ."},
            "tool_response": {"stdout": "def validate_coupon(code): pass", "stderr": "", "interrupted": false}})),
        ),
        (
            "SubagentStop",
            with_agent(json!({"stop_hook_active": false,
            "last_assistant_message": "Coupons are validated by validate_coupon()."})),
        ),
        (
            "PostToolUse",
            json!({"tool_name": "Agent", "tool_use_id": "toolu_agent",
            "tool_input": {"description": "Find coupon validation", "prompt": SUBTASK},
            "tool_response": {"content": [{"type": "text", "text": "validate_coupon"}]}}),
        ),
        (
            "Stop",
            json!({"stop_hook_active": false, "last_assistant_message": ANSWER}),
        ),
        ("SessionEnd", json!({"reason": "other"})),
    ] {
        hook(&repo, event, &payload(event, extra));
    }
    let prompts = |events: &[Value]| -> Vec<String> {
        of_kind(events, "user_prompt")
            .into_iter()
            .map(|e| e["body"]["text"].as_str().unwrap().to_string())
            .collect()
    };
    let events = |repo: &TestRepo| repo.memlog(&["cat", "--session", SUB]).ok().json_lines();
    let before = events(&repo);
    assert_eq!(prompts(&before), [PROMPT]);

    let report = repo
        .memlog(&["import", "claude-code", "--json", main.to_str().unwrap()])
        .ok()
        .json();
    let after = events(&repo);
    assert_eq!(prompts(&after), [PROMPT], "{report}");
    assert_eq!(report["added"], 0, "{report}");
    assert_eq!(repo.memlog_commits().len(), 1, "{report}");

    // read alone, the transcript gives the subagent's work, not its prompt
    let alone = TestRepo::new();
    alone
        .memlog(&["import", "claude-code", main.to_str().unwrap()])
        .ok();
    let imported = events(&alone);
    assert_eq!(prompts(&imported), [PROMPT]);
    assert!(
        imported
            .iter()
            .any(|e| e["meta"]["agent_id"] == AGENT && e["kind"] == "tool_observation"),
        "{imported:#?}"
    );
}

/// Claude Code 1.0.98 and 2.0.15 give PostToolUse no `tool_use_id` (their
/// transcripts have it) and write what the prompt hook added, memlog's
/// memories, into the transcript as a user message. A field test (8a)
/// imported a session their hooks recorded: every call twice, and the
/// memories as a prompt, injected again later, nested.
#[test]
fn an_older_claude_codes_hooked_session_imports_nothing_new() {
    const OLD: &str = "5d2c8e41-7a3b-4f90-b6e2-1c9d0a7f3e58";
    const COMMAND: &str = "echo tool-ran";
    let repo = TestRepo::new();
    std::fs::write(
        repo.path().join(".memlog.yaml"),
        "hooks:\n  inject: false\n",
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join(format!("{OLD}.jsonl"));
    let line = |uuid: &str, ts: &str, kind: &str, content: Value| {
        json!({"type": kind, "uuid": uuid, "sessionId": OLD, "version": "2.0.15",
               "timestamp": format!("2026-11-27T09:06:{ts}Z"), "cwd": repo.path(),
               "isSidechain": false, "message": {"role": kind, "content": content}})
    };
    let input = json!({"command": COMMAND, "description": "step"});
    let lines = [
        line("u1", "00.000", "user", json!(PROMPT)),
        line(
            "u2",
            "00.100",
            "user",
            json!(
                "<user-prompt-submit-hook>## Memory from earlier sessions (memlog)\n\
                   - [80f17ced5be2] note: the provider rounds half up\n</user-prompt-submit-hook>"
            ),
        ),
        line(
            "a1",
            "01.000",
            "assistant",
            json!([{"type": "text", "text": "Running step."}]),
        ),
        line(
            "a2",
            "01.100",
            "assistant",
            json!([{"type": "tool_use", "id": "toolu_old_1", "name": "Bash", "input": input}]),
        ),
        line(
            "u3",
            "01.500",
            "user",
            json!([{"type": "tool_result", "tool_use_id": "toolu_old_1",
                    "content": "tool-ran", "is_error": false}]),
        ),
        line(
            "a3",
            "02.000",
            "assistant",
            json!([{"type": "text", "text": ANSWER}]),
        ),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&transcript, text).unwrap();
    let payload = |event: &str, extra: Value| {
        let mut p = json!({"session_id": OLD, "transcript_path": transcript,
                           "cwd": repo.path(), "hook_event_name": event});
        for (k, v) in extra.as_object().unwrap() {
            p[k] = v.clone();
        }
        p
    };
    for (event, extra) in [
        ("SessionStart", json!({"source": "startup"})),
        ("UserPromptSubmit", json!({"prompt": PROMPT})),
        // no tool_use_id
        (
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_input": input,
                   "tool_response": {"stdout": "tool-ran", "stderr": "", "interrupted": false}}),
        ),
        // no last_assistant_message either: read from the transcript
        ("Stop", json!({"stop_hook_active": false})),
        ("SessionEnd", json!({"reason": "other"})),
    ] {
        hook(&repo, event, &payload(event, extra));
    }
    let events = |repo: &TestRepo| repo.memlog(&["cat", "--session", OLD]).ok().json_lines();
    let before = events(&repo);
    assert_eq!(of_kind(&before, "tool_observation").len(), 1);

    let report = repo
        .memlog(&[
            "import",
            "claude-code",
            "--json",
            transcript.to_str().unwrap(),
        ])
        .ok()
        .json();
    let after = events(&repo);
    let prompts: Vec<&Value> = of_kind(&after, "user_prompt")
        .into_iter()
        .map(|e| &e["body"]["text"])
        .collect();
    assert_eq!(prompts, [&json!(PROMPT)], "{report}");
    assert_eq!(of_kind(&after, "tool_observation").len(), 1, "{after:#?}");
    assert_eq!(report["added"], 0, "{report}");
    assert_eq!(after, before);
}
