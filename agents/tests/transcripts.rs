//! Every transcript in the fixtures converted, and checked against counts
//! made here, independently, with plain serde_json over the raw lines.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

mod common;

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use memlog_agents::HookOptions;
use memlog_agents::claude_code::transcript::{self, SidechainScope, Transcript};
use memlog_format::{Draft, Kind};
use serde_json::Value;

/// What a transcript holds, counted from its raw lines.
#[derive(Debug, Default, PartialEq)]
struct Counted {
    user_prompts: usize,
    /// Prompts a subagent was given (sidechain user text): its parent's
    /// words, recorded with the parent's Agent call and not as prompts.
    subagent_prompts: usize,
    summaries: usize,
    answers: usize,
    tool_calls: usize,
    todo_calls: usize,
    not_objects: usize,
    thinking: Vec<String>,
}

/// User-role text that Claude Code writes itself.
fn written_by_the_harness(line: &Value, text: &str) -> bool {
    let t = text.trim_start();
    line["isMeta"] == true
        || [
            "[Request interrupted by user",
            "Caveat: The messages below were generated",
            "<local-command-stdout>",
            "<local-command-stderr>",
            "<task-notification>",
            "<system-reminder>",
            "<bash-stdout>",
        ]
        .iter()
        .any(|p| t.starts_with(p))
}

fn non_blank(value: &Value) -> bool {
    value.as_str().is_some_and(|s| !s.trim().is_empty())
}

fn count(path: &Path) -> Counted {
    let mut c = Counted::default();
    let mut queued: Vec<String> = Vec::new();
    // The last prompt counted was a slash command the model has not
    // answered: one Claude Code ran itself is followed by its output and
    // is no prompt.
    let mut command_counted = false;
    let content = std::fs::read_to_string(path).unwrap();
    // Calls whose result is an error (a failed TodoWrite is a plain call).
    let failed: HashSet<String> = content
        .lines()
        .filter_map(|raw| serde_json::from_str::<Value>(raw).ok())
        .filter_map(|line| line["message"]["content"].as_array().cloned())
        .flatten()
        .filter(|b| b["type"] == "tool_result" && b["is_error"] == true)
        .filter_map(|b| b["tool_use_id"].as_str().map(str::to_string))
        .collect();
    for raw in content.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(line) = serde_json::from_str::<Value>(raw) else {
            c.not_objects += 1;
            continue;
        };
        if !line.is_object() {
            c.not_objects += 1;
            continue;
        }
        let content = &line["message"]["content"];
        if line["type"] == "assistant" {
            command_counted = false;
        }
        match line["type"].as_str() {
            Some("queue-operation") => {
                if line["operation"] == "enqueue"
                    && let Some(text) = line["content"].as_str()
                    && !text.trim().is_empty()
                    && !written_by_the_harness(&line, text)
                {
                    c.user_prompts += 1;
                    command_counted = text.trim_start().starts_with('/');
                    queued.push(text.trim().to_string());
                }
            }
            Some("summary") if non_blank(&line["summary"]) => c.summaries += 1,
            Some("user") => {
                let text = match content {
                    Value::String(s) => s.clone(),
                    Value::Array(blocks) => blocks
                        .iter()
                        .filter(|b| b["type"] == "text")
                        .filter_map(|b| b["text"].as_str())
                        .collect::<Vec<_>>()
                        .join("\n\n"),
                    _ => continue,
                };
                if text.trim().is_empty() {
                    continue;
                }
                if let Some(at) = queued.iter().position(|q| q == text.trim()) {
                    queued.remove(at);
                } else if line["isCompactSummary"] == true
                    || text
                        .trim_start()
                        .starts_with("This session is being continued")
                {
                    c.summaries += 1;
                } else if line["isSidechain"] == true {
                    c.subagent_prompts += 1;
                } else if !written_by_the_harness(&line, &text) {
                    c.user_prompts += 1;
                    command_counted = text.contains("<command-name>");
                } else if text.trim_start().starts_with("<local-command-std") && command_counted {
                    c.user_prompts -= 1;
                    command_counted = false;
                }
            }
            Some("assistant") => match content {
                Value::String(s) if !s.trim().is_empty() => c.answers += 1,
                Value::Array(blocks) => {
                    for block in blocks {
                        match block["type"].as_str() {
                            Some("text") if non_blank(&block["text"]) => c.answers += 1,
                            Some("thinking") => {
                                if let Some(t) = block["thinking"].as_str() {
                                    c.thinking.push(t.trim().to_string());
                                }
                            }
                            Some("tool_use") => {
                                let failed_call =
                                    block["id"].as_str().is_some_and(|id| failed.contains(id));
                                if block["name"] == "TodoWrite"
                                    && block["input"]["todos"].is_array()
                                    && !failed_call
                                {
                                    c.todo_calls += 1;
                                } else if block["name"].as_str().is_some_and(|n| !n.is_empty()) {
                                    c.tool_calls += 1;
                                }
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }
    c
}

fn kinds(drafts: &[(String, Draft)]) -> BTreeMap<String, usize> {
    let mut by_kind = BTreeMap::new();
    for (_, d) in drafts {
        *by_kind.entry(d.kind.as_str().to_string()).or_insert(0) += 1;
    }
    by_kind
}

/// Converts one transcript and checks it against the independent count and
/// the invariants every conversion keeps.
fn check(path: &Path) -> Transcript {
    let name = path.display().to_string();
    let options = HookOptions::new("fixture");
    let t = transcript::read(path, &options).unwrap();
    let expected = count(path);
    let by_kind = kinds(&t.drafts);
    let n = |kind: &str| by_kind.get(kind).copied().unwrap_or(0);
    assert_eq!(
        n("user_prompt"),
        expected.user_prompts,
        "{name}: user prompts"
    );
    assert_eq!(
        n("session_summary"),
        expected.summaries,
        "{name}: summaries"
    );
    assert_eq!(
        n("agent_response"),
        expected.answers,
        "{name}: assistant texts"
    );
    assert_eq!(
        n("tool_observation"),
        expected.tool_calls,
        "{name}: tool calls"
    );
    if expected.todo_calls > 0 {
        assert!(n("task_created") > 0, "{name}: TodoWrite calls give tasks");
    }
    assert!(t.malformed >= expected.not_objects, "{name}");

    let mut refs = HashSet::new();
    for (reference, d) in &t.drafts {
        assert!(
            refs.insert(reference.clone()),
            "{name}: duplicate ref {reference}"
        );
        assert_eq!(d.meta["ref"], reference.as_str());
        assert_eq!(d.meta["client"], "claude-code");
        assert_eq!(d.session, t.session_id);
        assert_eq!(d.project, "fixture");
        assert_eq!(
            memlog_format::time::normalize(&d.ts).unwrap(),
            d.ts,
            "{name}: ts in memlog's form"
        );
        if let Some(text) = d.body.get("text").and_then(Value::as_str) {
            assert!(!text.trim().is_empty(), "{name}: {reference} is blank");
            assert!(
                !expected.thinking.iter().any(|t| t == text.trim()),
                "{name}: thinking recorded at {reference}"
            );
        }
        match d.kind {
            Kind::ToolObservation => {
                assert!(d.body["tool"].is_string() && d.body["input"].is_object())
            }
            Kind::TaskCreated | Kind::TaskStatusChanged => {
                assert!(d.body["key"].as_str().unwrap().starts_with("fixture::"))
            }
            _ => {}
        }
    }
    // Reading again gives exactly the same drafts: re-import adds nothing.
    assert_eq!(transcript::read(path, &options).unwrap(), t, "{name}");
    check_prefix_stability(path, &t);
    t
}

/// The first half of a transcript converts to the first drafts of the whole
/// (same references, same content except tool calls whose result is in the
/// second half), so that importing a transcript that grew adds only what
/// is new.
fn check_prefix_stability(path: &Path, full: &Transcript) {
    let content = std::fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = content.lines().collect();
    if lines.len() < 4 {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let prefix_path = dir.path().join(path.file_name().unwrap());
    std::fs::write(&prefix_path, lines[..lines.len() / 2].join("\n") + "\n").unwrap();
    let prefix = transcript::read(&prefix_path, &HookOptions::new("fixture")).unwrap();
    assert!(prefix.drafts.len() <= full.drafts.len());
    for ((pref, pd), (fref, fd)) in prefix.drafts.iter().zip(&full.drafts) {
        assert_eq!(pref, fref, "{}", path.display());
        if !matches!(pd.kind, Kind::ToolObservation | Kind::SessionSummary) {
            assert_eq!(pd, fd, "{}: {pref}", path.display());
        }
    }
}

#[test]
fn every_real_transcript_converts_to_the_counted_drafts() {
    let Some(dir) = common::shared("transcripts") else {
        return;
    };
    let files = common::files_under(&dir, ".jsonl");
    assert!(files.len() >= 9, "{} transcripts", files.len());
    for file in &files {
        let t = check(file);
        println!(
            "{}: {:?} skipped {} ignored {} malformed {}",
            file.display(),
            kinds(&t.drafts),
            t.skipped,
            t.ignored,
            t.malformed
        );
    }
}

#[test]
fn real_transcripts_hold_what_their_sources_say() {
    let Some(dir) = common::shared("transcripts") else {
        return;
    };
    // A v2.1 session with a compaction: its continuation is a summary.
    let session = dir.join("v2.1-spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl");
    let t = check(&session);
    assert_eq!(t.session_id, "258c7280-ae70-4798-800f-63464d01a85d");
    assert_eq!(kinds(&t.drafts)["session_summary"], 1);
    assert_eq!(kinds(&t.drafts)["tool_observation"], 186);
    assert!(
        t.ignored > 1300,
        "progress lines are ignored: {}",
        t.ignored
    );
    let prompts: Vec<&str> = t
        .drafts
        .iter()
        .filter(|(_, d)| d.kind == Kind::UserPrompt)
        .map(|(_, d)| d.body["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        prompts,
        [
            "Implement spotter-gqc",
            "check again",
            "new beads for the epic were added. tackle them",
            "did you push?"
        ],
        "prompts typed while the agent worked exist only as queue operations"
    );
    let (_, first) = &t.drafts[0];
    assert_eq!(first.body["text"], "Implement spotter-gqc");
    assert_eq!(first.meta["branch"], "spotter-gqc");

    // Edge cases: three lines that are not objects, one without a type, a
    // failing tool, a TodoWrite with a broken entry.
    let edge = check(&dir.join("synthetic/daaain-edge_cases.jsonl"));
    assert_eq!(edge.skipped, 1);
    assert!(edge.malformed >= 3);
    let failing = edge
        .drafts
        .iter()
        .map(|(_, d)| d)
        .find(|d| d.body.get("tool").and_then(Value::as_str) == Some("FailingTool"))
        .unwrap();
    assert_eq!(failing.body["success"], false);
    assert!(
        failing.body["error"]
            .as_str()
            .unwrap()
            .contains("Command not found")
    );

    // v1.0 inline subagents are marked as sidechains; slash commands are
    // recorded as typed.
    let old =
        check(&dir.join("v1.0-kimuson-sample-project/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"));
    assert!(
        old.drafts
            .iter()
            .any(|(_, d)| d.meta.get("sidechain") == Some(&Value::Bool(true)))
    );
    let (_, command) = old
        .drafts
        .iter()
        .find(|(_, d)| d.kind == Kind::UserPrompt)
        .unwrap();
    assert_eq!(
        command.body["text"],
        "/orchestrator create TODO app by Next.js"
    );
    assert_eq!(command.meta["slash_command"], "/orchestrator");

    // TodoWrite with ids and priorities (Claude Code 1.0.24).
    let todos = check(&dir.join("synthetic/daaain-todowrite_examples.jsonl"));
    let created = todos
        .drafts
        .iter()
        .map(|(_, d)| d)
        .find(|d| d.kind == Kind::TaskCreated)
        .unwrap();
    assert_eq!(
        created.body["key"],
        "fixture::design the feature architecture"
    );
    assert_eq!(created.body["priority"], "high");
    assert_eq!(created.body["todo_id"], "1");
    assert!(
        todos
            .drafts
            .iter()
            .any(|(_, d)| d.kind == Kind::TaskStatusChanged)
    );
}

#[test]
fn subagent_transcripts_join_their_session() {
    let Some(dir) = common::shared("transcripts/v2.1-spotter") else {
        return;
    };
    let main = dir.join("258c7280-ae70-4798-800f-63464d01a85d.jsonl");
    let alone = transcript::read(&main, &HookOptions::new("fixture")).unwrap();
    let merged = transcript::read_with_subagents(&main, &HookOptions::new("fixture")).unwrap();
    let agent =
        count(&dir.join("258c7280-ae70-4798-800f-63464d01a85d/subagents/agent-a881341.jsonl"));
    let from_agent: Vec<&Draft> = merged
        .drafts
        .iter()
        .map(|(_, d)| d)
        .filter(|d| d.meta.get("agent_id").and_then(Value::as_str) == Some("a881341"))
        .collect();
    // its prompt is the parent's words (the Agent call's input), not a
    // user_prompt
    assert!(agent.subagent_prompts > 0);
    assert_eq!(from_agent.len(), agent.answers + agent.tool_calls);
    assert!(from_agent.iter().all(|d| d.kind != Kind::UserPrompt));
    assert_eq!(
        merged.drafts.len(),
        alone.drafts.len() + from_agent.len(),
        "no compaction sidechain"
    );
    assert!(
        from_agent
            .iter()
            .all(|d| d.session == merged.session_id && d.meta["sidechain"] == true)
    );
    let fetch = from_agent
        .iter()
        .find(|d| d.body.get("tool").is_some())
        .unwrap();
    assert_eq!(fetch.body["tool"], "WebFetch");
    assert!(
        fetch.body["metadata"]["url"]
            .as_str()
            .unwrap()
            .starts_with("https://code.claude.com/")
    );
    assert!(
        fetch.body["output"]
            .as_str()
            .unwrap()
            .contains("Documentation")
    );
}

/// The answer a Stop hook would record, computed forwards over the whole
/// file: the text of the last assistant message (by message id) after the
/// last thing the user said.
fn last_answer(path: &Path, sidechain: bool) -> Option<String> {
    let content = std::fs::read_to_string(path).unwrap();
    let mut current: Option<(Value, Vec<String>)> = None;
    for raw in content.lines() {
        let Ok(line) = serde_json::from_str::<Value>(raw) else {
            continue;
        };
        if (line["isSidechain"] == true) != sidechain {
            continue;
        }
        let content = &line["message"]["content"];
        match line["type"].as_str() {
            Some("user") => {
                let text = match content {
                    Value::String(s) => s.clone(),
                    Value::Array(blocks) => blocks
                        .iter()
                        .filter(|b| b["type"] == "text")
                        .filter_map(|b| b["text"].as_str())
                        .collect::<Vec<_>>()
                        .join("\n\n"),
                    _ => continue,
                };
                if !text.trim().is_empty() && !written_by_the_harness(&line, &text) {
                    current = None;
                }
            }
            Some("assistant") => {
                let texts: Vec<String> = content
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|b| b["type"] == "text")
                    .filter_map(|b| b["text"].as_str())
                    .map(|t| t.trim().to_string())
                    .filter(|t| !t.is_empty())
                    .collect();
                if texts.is_empty() {
                    continue;
                }
                let id = line["message"]["id"].clone();
                match &mut current {
                    Some((current_id, collected)) if *current_id == id => collected.extend(texts),
                    _ => current = Some((id, texts)),
                }
            }
            _ => {}
        }
    }
    current.map(|(_, texts)| texts.join("\n\n"))
}

#[test]
fn stop_reads_the_last_answer_of_real_transcripts() {
    let Some(dir) = common::shared("transcripts") else {
        return;
    };
    let mut answered = 0;
    for file in common::files_under(&dir, ".jsonl") {
        let is_subagent_file = file.to_string_lossy().contains("/subagents/");
        let (scope, sidechain) = if is_subagent_file {
            (SidechainScope::Any, true)
        } else {
            (SidechainScope::MainOnly, false)
        };
        let expected = last_answer(&file, sidechain);
        assert_eq!(
            transcript::last_assistant_text(&file, scope),
            expected,
            "{}",
            file.display()
        );
        answered += usize::from(expected.is_some());
    }
    assert!(answered >= 5, "{answered} transcripts end with an answer");
}

#[test]
fn own_sample_transcript_converts_to_the_expected_drafts() {
    let path = common::own("transcripts/9b1f6c2e-4d3a-4e8b-a1c7-5f2e8d9c0b14.jsonl");
    let t = check(&path);
    assert_eq!(t.session_id, "9b1f6c2e-4d3a-4e8b-a1c7-5f2e8d9c0b14");
    assert_eq!((t.skipped, t.ignored, t.malformed), (0, 6, 0));
    let summary: Vec<(&str, String)> = t
        .drafts
        .iter()
        .map(|(_, d)| {
            let what = ["text", "tool", "title"]
                .iter()
                .find_map(|k| d.body.get(*k).and_then(Value::as_str))
                .unwrap_or("")
                .chars()
                .take(40)
                .collect();
            (d.kind.as_str(), what)
        })
        .collect();
    let expected: Vec<(&str, &str)> = vec![
        (
            "session_summary",
            "Coupon rounding fix: discount now rounds",
        ),
        ("user_prompt", "The checkout total is off by one cent fo"),
        ("agent_response", "I'll look for where coupons are applied "),
        ("tool_observation", "Grep"),
        ("tool_observation", "Task"),
        ("task_created", "Find where the coupon discount is rounde"),
        ("task_created", "Round the discount half up"),
        ("tool_observation", "Edit"),
        ("tool_observation", "Read"),
        ("tool_observation", "Edit"),
        (
            "task_status_changed",
            "Find where the coupon discount is rounde",
        ),
        ("task_status_changed", "Round the discount half up"),
        ("task_created", "Add a regression test for 15% coupons"),
        ("tool_observation", "Bash"),
        ("user_prompt", "also check the refund path in src/admin"),
        ("user_prompt", "/review src/cart"),
        // the continuation's summary, without its boilerplate
        (
            "session_summary",
            "1. The user reported that checkout total",
        ),
        ("agent_response", "The regression test is the last open ite"),
        ("agent_response", "Summary: the discount was truncated by i"),
    ];
    let got: Vec<(&str, &str)> = summary.iter().map(|(k, w)| (*k, w.as_str())).collect();
    assert_eq!(got, expected);

    let draft = |i: usize| &t.drafts[i].1;
    assert_eq!(
        draft(0).ts,
        "2026-03-04T10:16:09.368Z",
        "the summary takes its leaf's time"
    );
    assert_eq!(draft(3).body["metadata"]["match_count"], 2);
    assert_eq!(draft(4).body["metadata"]["agent_id"], "b7e21c4");
    assert_eq!(draft(7).body["success"], false);
    assert_eq!(
        draft(7).body["error"],
        "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>"
    );
    assert_eq!(draft(8).body["metadata"]["line_count"], 10);
    assert_eq!(draft(9).body["metadata"]["line_count"], 11);
    assert_eq!(draft(10).body["from"], "in_progress");
    assert_eq!(draft(10).body["to"], "done");
    assert_eq!(draft(13).body["success"], true);
    assert_eq!(
        draft(13).ts,
        "2026-03-04T10:15:34.073Z",
        "observed when the result came"
    );
    assert_eq!(draft(14).meta["queued"], true);
    assert_eq!(draft(15).meta["slash_command"], "/review");
    assert_eq!(draft(1).meta["branch"], "fix/coupon-rounding");

    let stop = transcript::last_assistant_text(&path, SidechainScope::MainOnly).unwrap();
    assert!(stop.starts_with("The regression test") && stop.ends_with("the coupon tests pass."));

    let merged = transcript::read_with_subagents(&path, &HookOptions::new("fixture")).unwrap();
    let sub: Vec<&str> = merged.drafts[t.drafts.len()..]
        .iter()
        .map(|(_, d)| d.kind.as_str())
        .collect();
    // the subagent's prompt is its parent's words, not a user_prompt
    assert_eq!(sub, ["tool_observation", "agent_response"]);
    assert!(
        merged.drafts[t.drafts.len()..]
            .iter()
            .all(|(_, d)| d.meta["agent_id"] == "b7e21c4" && d.meta["sidechain"] == true)
    );
}
