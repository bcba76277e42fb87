//! Feeding the corpus through the real binary, every way in: the hooks
//! with Claude Code's payloads, `memlog note` and `memlog record`, `memlog
//! import jsonl` and `claude-code`, and the MCP server.

use std::path::Path;
use std::process::Command;

use memlog_e2e::McpProcess;
use serde_json::{Value, json};

use super::corpus::{Channel, Secret};
use crate::hooks::time_hook;
use crate::run;

/// Secrets per hook session (each ends with SessionEnd, which seals it).
const PER_SESSION: usize = 20;

/// Delivers every secret of the corpus into the repository at `dir`.
pub fn all(bin: &Path, dir: &Path, corpus: &[Secret]) -> anyhow::Result<()> {
    let of = |channel: Channel| -> Vec<&Secret> {
        corpus.iter().filter(|s| s.channel == channel).collect()
    };
    let hooked: Vec<&Secret> = corpus
        .iter()
        .filter(|s| {
            matches!(
                s.channel,
                Channel::Prompt | Channel::BashOutput | Channel::FileRead | Channel::Answer
            )
        })
        .collect();
    hooks(bin, dir, &hooked)?;
    for (i, s) in of(Channel::Note).into_iter().enumerate() {
        if i % 2 == 0 {
            run(bin, dir, &["note", "--", &s.text])?;
        } else {
            let text = format!("--text={}", s.text);
            let args = ["record", "--session", "bench-notes", "--kind", "note"];
            run(bin, dir, &[&args[..], &[text.as_str()]].concat())?;
        }
    }
    import_jsonl(bin, dir, &of(Channel::ImportJsonl))?;
    import_transcript(bin, dir, &of(Channel::ImportTranscript))?;
    mcp(bin, dir, &of(Channel::Mcp))
}

fn hooks(bin: &Path, dir: &Path, secrets: &[&Secret]) -> anyhow::Result<()> {
    let cwd = dir.display().to_string();
    for (n, chunk) in secrets.chunks(PER_SESSION).enumerate() {
        let session = format!("bench-secrets-{n}");
        for s in chunk {
            let (event, payload) = match s.channel {
                Channel::Prompt => (
                    "UserPromptSubmit",
                    json!({"session_id": session, "cwd": cwd, "hook_event_name": "UserPromptSubmit",
                           "prompt": s.text}),
                ),
                Channel::BashOutput => (
                    "PostToolUse",
                    json!({"session_id": session, "cwd": cwd, "hook_event_name": "PostToolUse",
                           "tool_name": "Bash", "tool_input": {"command": s.path, "description": "Show the settings"},
                           "tool_response": {"stdout": s.text, "stderr": "", "interrupted": false, "isImage": false}}),
                ),
                Channel::FileRead => (
                    "PostToolUse",
                    json!({"session_id": session, "cwd": cwd, "hook_event_name": "PostToolUse",
                           "tool_name": "Read", "tool_input": {"file_path": s.path},
                           "tool_response": {"type": "text", "file": {"filePath": s.path, "content": s.text,
                                             "numLines": s.text.lines().count(), "startLine": 1,
                                             "totalLines": s.text.lines().count()}}}),
                ),
                _ => (
                    "Stop",
                    json!({"session_id": session, "cwd": cwd, "hook_event_name": "Stop",
                           "stop_hook_active": false, "last_assistant_message": s.text}),
                ),
            };
            time_hook(bin, dir, event, &payload)?;
        }
        let end = json!({"session_id": session, "cwd": cwd, "hook_event_name": "SessionEnd", "reason": "exit"});
        time_hook(bin, dir, "SessionEnd", &end)?;
    }
    Ok(())
}

fn import_jsonl(bin: &Path, dir: &Path, secrets: &[&Secret]) -> anyhow::Result<()> {
    let mut lines = String::new();
    for (i, s) in secrets.iter().enumerate() {
        let kind = if i % 2 == 0 {
            "agent_response"
        } else {
            "user_prompt"
        };
        let line = json!({"session": format!("bench-jsonl-{}", i / PER_SESSION),
                          "ts": format!("2026-03-04T10:{:02}:{:02}Z", (i / 60) % 60, i % 60),
                          "kind": kind, "text": s.text});
        lines.push_str(&line.to_string());
        lines.push('\n');
    }
    let file = tempfile::NamedTempFile::new()?;
    std::fs::write(file.path(), lines)?;
    run(
        bin,
        dir,
        &["import", "jsonl", &file.path().to_string_lossy()],
    )?;
    Ok(())
}

/// Claude Code transcripts: the secret in a prompt, an answer or a tool's
/// result, in turn.
fn import_transcript(bin: &Path, dir: &Path, secrets: &[&Secret]) -> anyhow::Result<()> {
    let folder = tempfile::tempdir()?;
    for (n, chunk) in secrets.chunks(PER_SESSION).enumerate() {
        let session = format!("5e55{n:04}-0000-4000-8000-00000000bench");
        let mut lines = Vec::new();
        let mut parent = Value::Null;
        for (i, s) in chunk.iter().enumerate() {
            let line = |kind: &str, message: Value, parent: &Value, k: usize| {
                json!({"isSidechain": false, "userType": "external", "cwd": dir.display().to_string(),
                       "sessionId": session, "version": "2.1.39", "type": kind, "message": message,
                       "uuid": format!("{n:04}{i:04}-{k:04}-4000-8000-000000000000"),
                       "timestamp": format!("2026-03-05T10:{:02}:{:02}.000Z", i % 60, k * 10),
                       "parentUuid": parent})
            };
            let mut events = Vec::new();
            match i % 3 {
                0 => events.push(("user", json!({"role": "user", "content": s.text}))),
                1 => events.push((
                    "assistant",
                    json!({"role": "assistant", "type": "message", "model": "claude-sonnet-4-5",
                           "id": format!("msg_{n}_{i}"), "content": [{"type": "text", "text": s.text}]}),
                )),
                _ => {
                    let tool = format!("toolu_bench_{n}_{i}");
                    events.push((
                        "assistant",
                        json!({"role": "assistant", "type": "message", "model": "claude-sonnet-4-5",
                               "id": format!("msg_{n}_{i}"),
                               "content": [{"type": "tool_use", "id": tool, "name": "Bash",
                                            "input": {"command": "cat .env"}}]}),
                    ));
                    events.push((
                        "user",
                        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool,
                                                             "content": s.text}]}),
                    ));
                }
            }
            for (k, (kind, message)) in events.into_iter().enumerate() {
                let v = line(kind, message, &parent, k);
                parent = v["uuid"].clone();
                lines.push(v.to_string());
            }
        }
        std::fs::write(
            folder.path().join(format!("{session}.jsonl")),
            lines.join("\n") + "\n",
        )?;
    }
    run(
        bin,
        dir,
        &["import", "claude-code", &folder.path().to_string_lossy()],
    )?;
    Ok(())
}

fn mcp(bin: &Path, dir: &Path, secrets: &[&Secret]) -> anyhow::Result<()> {
    let mut command = Command::new(bin);
    command.current_dir(dir).arg("mcp");
    let mut server = McpProcess::spawn(command);
    for s in secrets {
        server.tool("memory_remember", json!({"text": s.text}));
    }
    let status = server.close();
    if !status.success() {
        anyhow::bail!("memlog mcp exited with {status}");
    }
    Ok(())
}

/// Hook payloads that fail with an error quoting the secret (a session id
/// holding it among words), which the hook writes to `hooks.log`: every
/// single-line sample of `secrets`. Returns the secrets sent.
pub fn failing_hooks<'c>(
    bin: &Path,
    dir: &Path,
    secrets: &'c [Secret],
) -> anyhow::Result<Vec<&'c Secret>> {
    let cwd = dir.display().to_string();
    let sent: Vec<&Secret> = secrets
        .iter()
        .filter(|s| !s.sample.text.contains('\n'))
        .collect();
    for s in &sent {
        let payload = json!({"session_id": format!("session with {} in it", s.sample.text), "cwd": cwd,
                             "hook_event_name": "UserPromptSubmit", "prompt": "hello"});
        time_hook(bin, dir, "UserPromptSubmit", &payload)?;
    }
    Ok(sent)
}
