//! File-aware recall on held-out sessions (issue 31): what Claude Code's
//! PreToolUse hook injects before a Read or a Bash, measured against what
//! the sessions made here say is worth knowing, and how long the hook
//! takes (a whole process per call, as Claude Code runs it).
//!
//! Training sessions, through the real hooks, each one of: a test run that
//! fails naming the culprit file and an innocent one, a read of the
//! innocent one, an edit of the culprit and the run passing; an edit that
//! fails on a file and is then made; reads only; a failure nobody fixed;
//! a note about a file. What is worth knowing about a file: a failure on
//! it or fixed by editing it, or a note naming it; about a command: that
//! it failed and what made it pass. Held-out sessions then read every file
//! and rerun every command once; precision is the share of injections that
//! are about something worth knowing, recall the share of those injected.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::generator::Rng;
use crate::{Row, ms, percentile, run};

/// Runs one hook, returns what it printed and how long it took.
fn hook(
    bin: &Path,
    dir: &Path,
    event: &str,
    session: &str,
    mut payload: Value,
) -> anyhow::Result<(String, Duration)> {
    payload["cwd"] = json!(dir.display().to_string());
    payload["session_id"] = json!(session);
    payload["hook_event_name"] = json!(event);
    let (took, printed) = crate::hooks::hook_output(bin, dir, event, &payload)?;
    Ok((printed, took))
}

fn bash(command: &str, ok: bool, stderr: &str) -> Value {
    json!({"tool_name": "Bash", "tool_input": {"command": command},
           "tool_response": {"stdout": if ok { "test result: ok" } else { "" }, "stderr": stderr,
                             "exit_code": if ok { 0 } else { 101 }}})
}

fn read(dir: &Path, file: &str) -> Value {
    let path = dir.join(file).display().to_string();
    json!({"tool_name": "Read", "tool_input": {"file_path": path},
           "tool_response": {"type": "text", "file": {"filePath": path, "content": "fn f() {}", "numLines": 1}}})
}

/// An edit, or (with `error`) the PostToolUseFailure payload of one.
fn edit(dir: &Path, file: &str, error: Option<&str>) -> Value {
    let path = dir.join(file).display().to_string();
    match error {
        Some(e) => {
            json!({"tool_name": "Edit", "tool_input": {"file_path": path, "old_string": "a", "new_string": "b"},
                          "error": e, "is_interrupt": false})
        }
        None => {
            json!({"tool_name": "Edit", "tool_input": {"file_path": path, "old_string": "a", "new_string": "b"},
                       "tool_response": {"filePath": path}})
        }
    }
}

pub fn bench(bin: &Path, seed: u64, quick: bool, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    let repo = crate::fresh_repo()?;
    let dir = repo.path();
    std::fs::write(
        dir.join(".memlog.yaml"),
        "embedding:\n  enabled: false\nhooks:\n  record_budget_ms: 10000\n",
    )?;
    let mut r = Rng::new(seed ^ 0xf11e);
    let files: Vec<String> = (0..40)
        .map(|i| format!("src/{}/{}.rs", ["auth", "export", "ledger", "ui"][i % 4], i))
        .collect();
    let commands: Vec<String> = (0..8).map(|i| format!("cargo test -p crate{i}")).collect();
    let mut worth_files = BTreeSet::new();
    let mut worth_commands = BTreeSet::new();
    let training = if quick { 12 } else { 40 };
    for s in 0..training {
        let session = format!("train-{s}");
        hook(
            bin,
            dir,
            "SessionStart",
            &session,
            json!({"source": "startup"}),
        )?;
        let f = |r: &mut Rng| files[r.below(files.len())].clone();
        match r.below(5) {
            0 => {
                let (culprit, innocent) = (f(&mut r), f(&mut r));
                let command = commands[r.below(commands.len())].clone();
                let stderr = format!(
                    "error[E0308]: mismatched types\n --> {culprit}:12:5\nnote: called from {innocent}"
                );
                hook(
                    bin,
                    dir,
                    "PostToolUse",
                    &session,
                    bash(&command, false, &stderr),
                )?;
                hook(bin, dir, "PostToolUse", &session, read(dir, &innocent))?;
                hook(bin, dir, "PostToolUse", &session, edit(dir, &culprit, None))?;
                hook(bin, dir, "PostToolUse", &session, bash(&command, true, ""))?;
                worth_files.insert(culprit);
                worth_commands.insert(command);
            }
            1 => {
                let file = f(&mut r);
                hook(
                    bin,
                    dir,
                    "PostToolUseFailure",
                    &session,
                    edit(dir, &file, Some("String to replace not found in file.")),
                )?;
                hook(bin, dir, "PostToolUse", &session, read(dir, &file))?;
                hook(bin, dir, "PostToolUse", &session, edit(dir, &file, None))?;
                worth_files.insert(file);
            }
            2 => {
                for _ in 0..3 {
                    let file = f(&mut r);
                    hook(bin, dir, "PostToolUse", &session, read(dir, &file))?;
                }
            }
            3 => {
                let file = f(&mut r);
                let command = format!("cargo clippy -p crate{}", r.below(8));
                let stderr = format!("warning: unused import in {file}");
                hook(
                    bin,
                    dir,
                    "PostToolUse",
                    &session,
                    bash(&command, false, &stderr),
                )?;
            }
            _ => {
                let file = f(&mut r);
                run(
                    bin,
                    dir,
                    &[
                        "note",
                        &format!("{file} keeps the retry policy; change it with the ops team"),
                    ],
                )?;
                worth_files.insert(file);
            }
        }
        hook(bin, dir, "SessionEnd", &session, json!({"reason": "exit"}))?;
    }
    run(bin, dir, &["index"])?;

    let (mut injected, mut right, mut times) = (0usize, 0usize, Vec::new());
    let mut found = 0usize;
    let held_out = 3;
    for s in 0..held_out {
        let session = format!("held-out-{s}");
        let mut targets: Vec<(Value, bool)> = files
            .iter()
            .map(|f| (read(dir, f), worth_files.contains(f)))
            .chain(
                commands
                    .iter()
                    .map(|c| (bash(c, true, ""), worth_commands.contains(c))),
            )
            .collect();
        // a random order per session
        for i in (1..targets.len()).rev() {
            targets.swap(i, r.below(i + 1));
        }
        for (payload, worth) in targets {
            let mut pre = payload.clone();
            if let Some(m) = pre.as_object_mut() {
                m.remove("tool_response");
            }
            let (out, took) = hook(bin, dir, "PreToolUse", &session, pre)?;
            times.push(took);
            if !out.trim().is_empty() {
                injected += 1;
                right += usize::from(worth);
                found += usize::from(worth);
            } else if worth && s == 0 {
                eprintln!("file recall missed: {}", payload["tool_input"]);
            }
        }
    }
    let worth = (worth_files.len() + worth_commands.len()) * held_out;
    rows.push(Row {
        name: format!(
            "file-aware recall, PreToolUse on held-out sessions ({training} training sessions, {} reads and reruns)",
            (files.len() + commands.len()) * held_out
        ),
        value: format!(
            "precision {:.2} ({right}/{injected}), recall {:.2} ({found}/{worth})",
            right as f64 / injected.max(1) as f64,
            found as f64 / worth.max(1) as f64
        ),
        target: "precision ≥ 0.8".into(),
    });
    rows.push(Row {
        name: "`memlog hook PreToolUse` (file-aware recall), whole process".into(),
        value: format!(
            "p50 {} / p95 {}",
            ms(percentile(&mut times.clone(), 0.5)),
            ms(percentile(&mut times, 0.95))
        ),
        target: "≤ 50 ms p50 (as UserPromptSubmit)".into(),
    });
    Ok(())
}
