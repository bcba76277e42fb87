//! Fidelity of `memlog import codex` on real rollouts of every Codex CLI
//! version memlog reads (`../shared/fixtures/codex`, or the folder
//! `MEMLOG_CODEX_ROLLOUTS` names; see its SOURCES.md): public sessions of
//! 0.60.1 and 0.104.0-alpha.1, and sessions the real CLIs 0.60.1 to 0.169.0
//! wrote offline. What the files hold is counted here, straight from their
//! lines, and compared with what the import stored: at least 95 % of typed
//! prompts and of tool calls by call id (edits included, recorded as
//! `apply_patch`), the exit codes the files hold, no call recorded twice,
//! and a second import that adds nothing. Skipped (with a message) when
//! the files are absent.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use memlog_e2e::{TestRepo, shared_dir};
use serde_json::Value;

/// What a set of rollouts holds, read straight from their lines.
#[derive(Default)]
struct Truth {
    prompts: usize,
    /// Every model tool call, by call id.
    calls: HashSet<String>,
    /// Calls that edit files.
    edits: HashSet<String>,
    /// Shell calls whose exit code the file says.
    exit_codes: HashMap<String, i64>,
}

const SHELLS: [&str; 4] = ["exec_command", "shell", "shell_command", "container.exec"];

/// The exit code in a shell output text (`Exit code: N`, `Process exited
/// with code N`, or a JSON object's `metadata.exit_code`).
fn exit_in(text: &str) -> Option<i64> {
    if let Ok(Value::Object(o)) = serde_json::from_str::<Value>(text) {
        return o.get("metadata")?.get("exit_code")?.as_i64();
    }
    text.lines().take(6).find_map(|l| {
        l.strip_prefix("Exit code: ")
            .or_else(|| l.strip_prefix("Process exited with code "))
            .and_then(|n| n.trim().parse().ok())
    })
}

fn read_truth(files: &[PathBuf]) -> Truth {
    let mut truth = Truth::default();
    for file in files {
        let lines: Vec<Value> = std::fs::read_to_string(file)
            .unwrap()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let payload = |l: &Value| l["payload"].clone();
        let is = |l: &Value, kind: &str, t: &str| l["type"] == kind && l["payload"]["type"] == t;
        // A subagent's file may repeat its parent's history: only its own
        // thread's items and turns count (as `codex` itself shows them).
        let thread = lines
            .iter()
            .find(|l| l["type"] == "session_meta")
            .map(|l| l["payload"]["id"].clone())
            .unwrap_or(Value::Null);
        let replay = lines
            .iter()
            .skip(1)
            .position(|l| l["type"] == "session_meta" && l["payload"]["id"] != thread);
        let own_turns: HashSet<String> = lines
            .iter()
            .filter(|l| l["payload"]["thread_id"] == thread)
            .filter_map(|l| l["payload"]["turn_id"].as_str().map(str::to_string))
            .collect();
        let own = |l: &Value, i: usize| {
            let Some(replay) = replay else { return true };
            if i <= replay {
                return true;
            }
            let turn = l["payload"]["turn_id"].as_str().or_else(|| {
                l["payload"]["internal_chat_message_metadata_passthrough"]["turn_id"].as_str()
            });
            turn.is_some_and(|t| own_turns.contains(t))
        };
        let paginated = lines.iter().any(|l| {
            is(l, "event_msg", "item_completed") && l["payload"]["item"]["type"] == "UserMessage"
        });
        let mut outcomes: HashMap<String, Value> = HashMap::new();
        let mut outputs: HashMap<String, String> = HashMap::new();
        for l in &lines {
            let p = payload(l);
            if is(l, "event_msg", "item_completed") {
                if let Some(id) = p["item"]["id"].as_str() {
                    outcomes.insert(id.into(), p["item"].clone());
                }
            } else if is(l, "event_msg", "exec_command_end")
                || is(l, "event_msg", "patch_apply_end")
            {
                outcomes.insert(p["call_id"].as_str().unwrap_or("").into(), p.clone());
            } else if l["type"] == "response_item"
                && matches!(
                    p["type"].as_str(),
                    Some("function_call_output" | "custom_tool_call_output")
                )
                && let (Some(id), Some(out)) = (p["call_id"].as_str(), p["output"].as_str())
            {
                outputs.insert(id.into(), out.into());
            }
        }
        for (i, l) in lines.iter().enumerate() {
            if !own(l, i) {
                continue;
            }
            let p = payload(l);
            let typed = |t: &str| {
                let t = t.trim();
                !t.is_empty()
                    && !t.starts_with("<environment_context>")
                    && !t.starts_with("<user_instructions>")
            };
            if is(l, "event_msg", "user_message")
                && !paginated
                && p["kind"].as_str().is_none_or(|k| k == "plain")
                && typed(p["message"].as_str().unwrap_or(""))
            {
                truth.prompts += 1;
            }
            if is(l, "event_msg", "item_completed") && p["item"]["type"] == "UserMessage" {
                truth.prompts += 1;
            }
            if l["type"] != "response_item" {
                continue;
            }
            let kind = p["type"].as_str().unwrap_or("");
            if !matches!(
                kind,
                "function_call" | "custom_tool_call" | "local_shell_call"
            ) {
                continue;
            }
            let Some(id) = p["call_id"].as_str() else {
                continue;
            };
            truth.calls.insert(id.into());
            let name = p["name"].as_str().unwrap_or("");
            let outcome = outcomes.get(id);
            let command: String =
                serde_json::from_str::<Value>(p["arguments"].as_str().unwrap_or("{}"))
                    .ok()
                    .and_then(|a| {
                        a.get("cmd")
                            .or_else(|| a.get("command"))
                            .and_then(Value::as_str)
                            .map(str::to_string)
                    })
                    .unwrap_or_default();
            let edit = name == "apply_patch"
                || outcome.is_some_and(|o| o.get("changes").is_some())
                || (SHELLS.contains(&name)
                    && command.contains("apply_patch")
                    && command.contains("*** Begin Patch"));
            if edit {
                truth.edits.insert(id.into());
            } else if SHELLS.contains(&name) {
                let code = outcome
                    .and_then(|o| o["exit_code"].as_i64())
                    .or_else(|| outputs.get(id).and_then(|o| exit_in(o)));
                if let Some(code) = code {
                    truth.exit_codes.insert(id.into(), code);
                }
            }
        }
    }
    truth
}

/// The rollouts, one set per folder that holds some.
fn sets(root: &Path) -> Vec<(String, Vec<PathBuf>)> {
    let mut out = Vec::new();
    for group in ["public", "generated"] {
        let Ok(entries) = std::fs::read_dir(root.join(group)) else {
            continue;
        };
        let mut dirs: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        for dir in dirs {
            let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
                .collect();
            files.sort();
            if !files.is_empty() {
                out.push((
                    format!("{group}/{}", dir.file_name().unwrap().to_string_lossy()),
                    files,
                ));
            }
        }
    }
    out
}

fn percent(found: usize, of: usize) -> f64 {
    if of == 0 {
        100.0
    } else {
        100.0 * found as f64 / of as f64
    }
}

#[test]
fn every_version_imports_faithfully() {
    let root = match std::env::var_os("MEMLOG_CODEX_ROLLOUTS") {
        Some(dir) => PathBuf::from(dir),
        None => match shared_dir("fixtures/codex") {
            Some(dir) => dir,
            None => return,
        },
    };
    let sets = sets(&root);
    assert!(!sets.is_empty(), "no rollouts under {}", root.display());
    eprintln!(
        "| rollouts | files | prompts | tool calls by id | edits | exit codes | duplicates | 2nd import |"
    );
    for (name, files) in sets {
        let truth = read_truth(&files);
        let repo = TestRepo::new();
        let paths: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        let mut args = vec!["import", "codex", "--json"];
        args.extend(paths.iter().map(String::as_str));
        let first = repo.memlog(&args).ok().json();
        let second = repo.memlog(&args).ok().json();
        let events = repo.cat();
        let prompts = events.iter().filter(|e| e["kind"] == "user_prompt").count();
        let mut by_id: HashMap<&str, Vec<&Value>> = HashMap::new();
        for e in events.iter().filter(|e| e["kind"] == "tool_observation") {
            if let Some(id) = e["body"]["tool_use_id"].as_str() {
                by_id.entry(id).or_default().push(e);
            }
        }
        let calls = truth
            .calls
            .iter()
            .filter(|id| by_id.contains_key(id.as_str()))
            .count();
        let edits = truth
            .edits
            .iter()
            .filter(|id| {
                by_id
                    .get(id.as_str())
                    .is_some_and(|e| e[0]["body"]["tool"] == "apply_patch")
            })
            .count();
        let codes = truth
            .exit_codes
            .iter()
            .filter(|(id, code)| {
                by_id
                    .get(id.as_str())
                    .is_some_and(|e| e[0]["body"]["metadata"]["exit_code"].as_i64() == Some(**code))
            })
            .count();
        let duplicates: usize = by_id.values().map(|e| e.len() - 1).sum();
        eprintln!(
            "| {name} | {} | {prompts}/{} | {calls}/{} | {edits}/{} | {codes}/{} | {duplicates} | +{} |",
            files.len(),
            truth.prompts,
            truth.calls.len(),
            truth.edits.len(),
            truth.exit_codes.len(),
            second["added"]
        );
        assert!(first["added"].as_u64().unwrap() > 0, "{name}: {first}");
        assert!(
            percent(prompts.min(truth.prompts), truth.prompts) >= 95.0,
            "{name}: prompts {prompts}/{}",
            truth.prompts
        );
        assert!(
            prompts <= truth.prompts,
            "{name}: {prompts} prompts, {} typed",
            truth.prompts
        );
        assert!(percent(calls, truth.calls.len()) >= 95.0, "{name}: calls");
        assert!(percent(edits, truth.edits.len()) >= 95.0, "{name}: edits");
        assert!(
            percent(codes, truth.exit_codes.len()) >= 95.0,
            "{name}: exit codes"
        );
        assert_eq!(duplicates, 0, "{name}");
        assert_eq!(second["added"], 0, "{name}: {second}");
        for f in first["files"].as_array().unwrap() {
            assert_eq!(f["malformed_lines"], 0, "{name}: {f}");
        }
    }
}
