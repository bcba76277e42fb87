//! Bounded fuzzing of what Claude Code hands memlog: hook payloads, for
//! every hook event and every tool memlog maps, and transcript lines. Each
//! gets arbitrary bytes, byte-level mutations of the real fixtures and
//! fields replaced by values of the wrong type; parsing and mapping to
//! drafts may refuse, never panic. Bounded so the whole run takes seconds
//! (cargo-fuzz needs a nightly toolchain).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

mod common;
#[path = "../../format/tests/mutation/mod.rs"]
mod mutation;

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use memlog_agents::claude_code::transcript;
use memlog_agents::{CodeContext, HookEvent, HookOptions, drafts_at, hook_output, parse_payload};
use mutation::{edits, json_value, mutate, replace_node};
use proptest::prelude::*;
use serde_json::Value;

const CASES: u32 = 300;

const EVENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "Notification",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "SessionEnd",
    "NoSuchEvent",
];

const TOOLS: &[&str] = &[
    "Read",
    "Write",
    "Edit",
    "MultiEdit",
    "NotebookEdit",
    "Bash",
    "BashOutput",
    "KillShell",
    "Grep",
    "Glob",
    "WebFetch",
    "WebSearch",
    "Task",
    "SlashCommand",
    "TodoWrite",
    "TodoRead",
    "ExitPlanMode",
    "mcp__memlog__memory_search",
    "",
];

/// Files under `dir` (recursively) whose names end with `ext` and that are
/// small enough to write out once per case.
fn samples(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            samples(&path, ext, out);
        } else if path.to_string_lossy().ends_with(ext)
            && e.metadata().is_ok_and(|m| m.len() <= 64 << 10)
        {
            out.push(path);
        }
    }
}

/// The recorded payloads, memlog's own and the shared real captures when
/// present: (event name, bytes).
fn payloads() -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    samples(&common::own("hooks"), ".json", &mut files);
    if let Some(shared) = common::shared("hooks") {
        samples(&shared, ".json", &mut files);
    }
    files.sort();
    let out: Vec<(String, Vec<u8>)> = files
        .iter()
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let event = name.split('.').next().unwrap_or_default().to_string();
            (event, std::fs::read(path).unwrap())
        })
        .collect();
    assert!(!out.is_empty());
    out
}

static PAYLOADS: LazyLock<Vec<(String, Vec<u8>)>> = LazyLock::new(payloads);
static TRANSCRIPTS: LazyLock<Vec<Vec<u8>>> = LazyLock::new(transcripts);

/// Parses a payload and maps it as the hook driver does.
fn run_hook(event: &str, bytes: &[u8]) {
    let Ok(payload) = parse_payload(event, bytes) else {
        return;
    };
    let context = CodeContext {
        cwd: Some("/repo".into()),
        branch: Some("main".into()),
        head: None,
    };
    for d in drafts_at(
        &payload,
        &context,
        &HookOptions::new("fuzz"),
        "2026-03-04T10:15:00.000Z",
    ) {
        let _ = d.into_event(0).canonical_line();
    }
    if let Some(e) = HookEvent::parse(event) {
        let _ = hook_output(e, Some("memories"));
    }
}

/// The transcripts (main and subagent files), memlog's own and the shared
/// real ones when present.
fn transcripts() -> Vec<Vec<u8>> {
    let mut files = Vec::new();
    samples(&common::own("transcripts"), ".jsonl", &mut files);
    if let Some(shared) = common::shared("transcripts") {
        samples(&shared, ".jsonl", &mut files);
    }
    files.sort();
    assert!(!files.is_empty());
    files.iter().map(|f| std::fs::read(f).unwrap()).collect()
}

/// Reads transcript bytes from a file, as `memlog import claude-code` does.
fn read_transcript(bytes: &[u8]) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fuzz.jsonl");
    std::fs::write(&path, bytes).unwrap();
    if let Ok(t) = transcript::read(&path, &HookOptions::new("fuzz")) {
        for (seq, (_, d)) in t.drafts.into_iter().enumerate() {
            let _ = d.into_event(seq as u64).canonical_line();
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_payloads_never_panic(which in any::<usize>(), event in any::<usize>(), edits in edits()) {
        let all = &*PAYLOADS;
        let (name, bytes) = &all[which % all.len()];
        run_hook(name, &mutate(bytes, &edits));
        // the same bytes under another event's name
        run_hook(EVENTS[event % EVENTS.len()], bytes);
    }

    #[test]
    fn payload_fields_of_the_wrong_type_never_panic(
        which in any::<usize>(),
        event in any::<usize>(),
        tool in any::<usize>(),
        path in prop::collection::vec(any::<usize>(), 1..4),
        with in json_value(),
    ) {
        let all = &*PAYLOADS;
        let (_, bytes) = &all[which % all.len()];
        let mut value: Value = serde_json::from_slice(bytes).unwrap();
        value["tool_name"] = Value::String(TOOLS[tool % TOOLS.len()].to_string());
        replace_node(&mut value, &path, with);
        let event = EVENTS[event % EVENTS.len()];
        if let Value::Object(m) = &mut value {
            m.insert("hook_event_name".into(), Value::String(event.to_string()));
        }
        run_hook(event, value.to_string().as_bytes());
    }

    #[test]
    fn arbitrary_payload_bytes_never_panic(event in any::<usize>(), noise in prop::collection::vec(any::<u8>(), 0..256)) {
        run_hook(EVENTS[event % EVENTS.len()], &noise);
    }

    #[test]
    fn mutated_transcripts_never_panic(which in any::<usize>(), edits in edits()) {
        let all = &*TRANSCRIPTS;
        read_transcript(&mutate(&all[which % all.len()], &edits));
    }

    #[test]
    fn transcript_fields_of_the_wrong_type_never_panic(
        which in any::<usize>(),
        line in any::<usize>(),
        path in prop::collection::vec(any::<usize>(), 1..5),
        with in json_value(),
    ) {
        let all = &*TRANSCRIPTS;
        let text = String::from_utf8_lossy(&all[which % all.len()]).into_owned();
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let i = line % lines.len();
        if let Ok(mut value) = serde_json::from_str::<Value>(&lines[i]) {
            replace_node(&mut value, &path, with);
            lines[i] = value.to_string();
        }
        read_transcript(lines.join("\n").as_bytes());
    }
}
