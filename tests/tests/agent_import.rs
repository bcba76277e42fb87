//! `memlog import gemini` on what older Gemini CLI versions saved, and what
//! any import says of lines it could not read: Gemini CLI 0.2x kept a chat
//! as one `session-*.json` object (which read as hundreds of malformed
//! lines, and nothing else, with nothing printed without --json) in a
//! folder named by the SHA-256 of the project's path. Where `memlog import
//! claude-code` looks without paths, and a byte order mark before a file's
//! first line. No agent CLI needed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use memlog_e2e::{TestRepo, all_objects, holds, memlog_command, remote_and_clones, run};

const CHAT: &str = include_str!("../../fixtures/gemini/chat-0.24.json");

#[test]
fn a_whole_file_gemini_chat_imports_from_its_hashed_folder() {
    let repo = TestRepo::new();
    let home = tempfile::tempdir().unwrap();
    // Gemini 0.2x: ~/.gemini/tmp/<sha256 of the project's path>/chats/.
    let root = repo.path().display().to_string();
    let hashed = {
        let out = std::process::Command::new("sha256sum")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write;
                c.stdin.take().unwrap().write_all(root.as_bytes())?;
                c.wait_with_output()
            });
        match out {
            Ok(o) => String::from_utf8(o.stdout).unwrap()[..64].to_string(),
            Err(e) => {
                eprintln!("skipped: sha256sum cannot run ({e})");
                return;
            }
        }
    };
    let chats = home.path().join(".gemini/tmp").join(&hashed).join("chats");
    std::fs::create_dir_all(&chats).unwrap();
    std::fs::write(chats.join("session-2026-03-02T10-00-7c1e55d0.json"), CHAT).unwrap();

    let out = run(memlog_command(repo.path())
        .env("HOME", home.path())
        .args(["import", "gemini"]))
    .ok();
    assert!(
        out.stdout()
            .contains("session 7c1e55d0-24a0-4b7e-9c51-0a24c0ffee24 (4 events)"),
        "{}",
        out.stdout()
    );
    let events = repo.cat();
    assert_eq!(events.len(), 4);
    let failed = events
        .iter()
        .find(|e| e["body"]["input"]["command"] == "npm test")
        .unwrap();
    assert_eq!(failed["body"]["metadata"]["exit_code"], 1);
    assert_eq!(failed["body"]["success"], false);
    // Again: nothing new.
    let again = repo.memlog(&["import", "gemini", "--json", chats.to_str().unwrap()]);
    assert_eq!(again.ok().json()["added"], 0);
}

/// Field test 12a: a Gemini CLI session ran `memlog search` in its shell,
/// which printed a personal note; `memlog import gemini` kept the output in
/// a shared event, and `memlog sync` pushed the note's words to origin.
#[test]
fn an_imported_read_of_personal_memory_stays_on_this_machine() {
    const SECRET: &str = "heliotrope-4471";
    let (remote, clones) = remote_and_clones(1);
    let me = &clones[0];
    me.memlog(&[
        "note",
        "--personal",
        &format!("salary review, codeword {SECRET}"),
    ])
    .ok();
    let shown = format!("40af8f2ab7  note  (personal) salary review, codeword {SECRET}");
    let call = serde_json::json!({"id": "c1", "name": "run_shell_command",
        "args": {"command": "memlog search codeword"},
        "result": [{"functionResponse": {"id": "c1", "name": "run_shell_command",
            "response": {"output": format!("Output: {shown}\nExit Code: 0")}}}],
        "status": "success", "timestamp": "2026-11-27T10:00:03.000Z", "resultDisplay": shown});
    let lines = [
        serde_json::json!({"sessionId": "g-own", "startTime": "2026-11-27T10:00:00.000Z"}),
        serde_json::json!({"id": "u1", "timestamp": "2026-11-27T10:00:01.000Z", "type": "user",
            "content": [{"text": "what was my codeword?"}]}),
        serde_json::json!({"id": "g1", "timestamp": "2026-11-27T10:00:02.000Z", "type": "gemini",
            "content": "Searching memory.", "toolCalls": [call]}),
        serde_json::json!({"id": "g2", "timestamp": "2026-11-27T10:00:04.000Z", "type": "gemini",
            "content": format!("Your codeword is {SECRET}.")}),
    ];
    let dir = tempfile::tempdir().unwrap();
    let chat = dir.path().join("session-2026-11-27T10-00-g-own.jsonl");
    let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    std::fs::write(&chat, text.join("\n")).unwrap();
    me.memlog(&["import", "gemini", chat.to_str().unwrap()])
        .ok();
    me.memlog(&["sync", "origin"]).ok();
    let on_remote = all_objects(remote.path());
    assert!(
        holds(&on_remote, "what was my codeword?"),
        "the prompt is shared"
    );
    assert!(
        !holds(&on_remote, SECRET),
        "the personal note reached origin"
    );
    let call = me
        .cat()
        .into_iter()
        .find(|e| e["kind"] == "tool_observation")
        .unwrap();
    assert_eq!(call["body"]["withheld"], true, "{call}");
    assert_eq!(call["meta"]["scope"], "personal", "{call}");
}

#[test]
fn lines_an_import_cannot_read_are_counted_without_json() {
    let repo = TestRepo::new();
    let file = repo.path().join("rollout-broken.jsonl");
    let rollout = include_str!("../../fixtures/codex/rollout-0.60.jsonl");
    std::fs::write(&file, format!("{rollout}not json\n{{cut off\n")).unwrap();
    let out = repo
        .memlog(&["import", "codex", file.to_str().unwrap()])
        .ok();
    assert!(
        out.stdout()
            .contains("(13 events, 2 malformed lines left out)"),
        "{}",
        out.stdout()
    );
    // A file of which nothing could be read is named on stderr.
    let junk = repo.path().join("rollout-junk.jsonl");
    std::fs::write(&junk, "<html>\n</html>\n").unwrap();
    let out = repo
        .memlog(&["import", "codex", junk.to_str().unwrap()])
        .ok();
    assert!(
        out.stdout()
            .contains("(0 events, 2 malformed lines left out)")
    );
    assert!(
        out.stderr()
            .contains("nothing read: 2 lines are not what memlog reads in a Codex CLI session"),
        "{}",
        out.stderr()
    );
}

/// `~/.claude/projects` given for import holds one folder per project and
/// no transcript of its own: memlog says so and names the folders, rather
/// than importing nothing and saying it imported nothing (a field test),
/// or every project's sessions into this repository's memory.
#[test]
fn a_folder_of_project_folders_is_refused_naming_them() {
    let repo = TestRepo::new();
    let projects = tempfile::tempdir().unwrap();
    let project = projects.path().join("-home-me-shop");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("0b7c3f0e-1111-4222-8333-944445555666.jsonl"),
        "{\"type\":\"user\",\"sessionId\":\"s\",\"timestamp\":\"2026-01-01T00:00:00Z\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
    )
    .unwrap();
    let out = repo.memlog(&["import", "claude-code", projects.path().to_str().unwrap()]);
    assert!(!out.output.status.success());
    let err = out.stderr();
    assert!(err.contains("-home-me-shop"), "{err}");
    // the project's folder imports
    repo.memlog(&["import", "claude-code", project.to_str().unwrap()])
        .ok();
}

/// A session file saved again by a Windows editor starts with a UTF-8 byte
/// order mark: its first line, a transcript's first prompt, was left out
/// as malformed (field test 8a). Every JSONL import reads past it.
#[test]
fn a_byte_order_mark_costs_no_line() {
    const BOM: &str = "\u{feff}";
    let repo = TestRepo::new();
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();

    let session = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d";
    let line = |uuid: &str, kind: &str, content: serde_json::Value| {
        serde_json::json!({"type": kind, "uuid": uuid, "sessionId": session,
            "timestamp": "2026-11-27T09:00:00Z", "cwd": repo.path(),
            "message": {"role": kind, "content": content}})
    };
    let transcript = format!(
        "{BOM}{}\n{}\n",
        line("u1", "user", serde_json::json!("/init")),
        line(
            "a1",
            "assistant",
            serde_json::json!([{"type": "text", "text": "Wrote CLAUDE.md."}])
        ),
    );
    std::fs::write(path("claude.jsonl"), transcript).unwrap();
    let out = repo
        .memlog(&["import", "claude-code", "--json", &path("claude.jsonl")])
        .ok()
        .json();
    assert_eq!(out["files"][0]["malformed_lines"], 0, "{out}");
    assert_eq!(out["added"], 2, "{out}");
    let prompts: Vec<_> = repo
        .session_events(session)
        .into_iter()
        .filter(|e| e["kind"] == "user_prompt")
        .map(|e| e["body"]["text"].clone())
        .collect();
    assert_eq!(prompts, ["/init"]);

    let rollout = include_str!("../../fixtures/codex/rollout-0.60.jsonl");
    std::fs::write(path("rollout-bom.jsonl"), format!("{BOM}{rollout}")).unwrap();
    let out = repo
        .memlog(&["import", "codex", "--json", &path("rollout-bom.jsonl")])
        .ok()
        .json();
    assert_eq!(out["files"][0]["malformed_lines"], 0, "{out}");
    assert_eq!(out["files"][0]["events"], 13, "{out}");

    let neutral = r#"{"session":"bom-neutral","ts":"2026-11-27T09:00:00Z","kind":"note","text":"first line"}"#;
    std::fs::write(path("neutral.jsonl"), format!("{BOM}{neutral}\n")).unwrap();
    let out = repo
        .memlog(&["import", "jsonl", "--json", &path("neutral.jsonl")])
        .ok()
        .json();
    assert_eq!(out["added"], 1, "{out}");
}

/// A folder's name as Claude Code gives it under `~/.claude/projects`.
fn claude_folder(path: &std::path::Path) -> String {
    path.to_str()
        .unwrap()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// A transcript of one prompt and its answer, the session started in `cwd`,
/// written to `~/.claude/projects/<folder>/` under `home`.
fn claude_transcript(home: &std::path::Path, folder: &str, cwd: &std::path::Path, prompt: &str) {
    let dir = home.join(".claude/projects").join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    let session = format!("{:08x}-1111-4222-8333-944445555666", prompt.len());
    let line = |uuid: &str, kind: &str, content: serde_json::Value| {
        serde_json::json!({"type": kind, "uuid": uuid, "sessionId": session,
            "timestamp": "2026-11-27T09:00:00Z", "cwd": cwd,
            "message": {"role": kind, "content": content}})
    };
    let text = format!(
        "{}\n{}\n",
        line("u1", "user", serde_json::json!(prompt)),
        line(
            "a1",
            "assistant",
            serde_json::json!([{"type": "text", "text": "Looking."}])
        )
    );
    std::fs::write(dir.join(format!("{session}.jsonl")), text).unwrap();
}

fn prompts_of(repo_events: &[serde_json::Value]) -> Vec<String> {
    let mut prompts: Vec<String> = repo_events
        .iter()
        .filter(|e| e["kind"] == "user_prompt")
        .map(|e| e["body"]["text"].as_str().unwrap().to_string())
        .collect();
    prompts.sort();
    prompts
}

/// Claude Code names a session's folder after where it started: one
/// started in `packages/api` has a folder of its own, which `memlog import
/// claude-code` without paths missed (field test 8a). A sibling whose name
/// escapes alike (`<repo>-b`) is not this repository's.
#[test]
fn claude_sessions_started_in_a_subdirectory_are_imported_by_default() {
    let repo = TestRepo::new();
    let home = tempfile::tempdir().unwrap();
    let folder = claude_folder(repo.path());
    claude_transcript(
        home.path(),
        &format!("{folder}-packages-api"),
        &repo.path().join("packages/api"),
        "why does the api crash on boot?",
    );
    let sibling = std::path::PathBuf::from(format!("{}-b", repo.path().display()));
    claude_transcript(
        home.path(),
        &format!("{folder}-b"),
        &sibling,
        "a question of another repository",
    );
    run(memlog_command(repo.path())
        .env("HOME", home.path())
        .args(["import", "claude-code"]))
    .ok();
    assert_eq!(prompts_of(&repo.cat()), ["why does the api crash on boot?"]);

    // with nothing of this repository, the error names where it looked
    let other = TestRepo::new();
    let out = run(memlog_command(other.path())
        .env("HOME", home.path())
        .args(["import", "claude-code"]));
    assert!(!out.output.status.success());
    let looked = format!(".claude/projects/{}*", claude_folder(other.path()));
    assert!(out.stderr().contains(&looked), "{}", out.stderr());
}

/// Claude Code shortens a folder name over 200 characters to its first
/// 200, `-` and a hash: `memlog import claude-code` looked for the whole
/// name and found nothing (field test 8a).
#[test]
fn claude_sessions_of_a_long_path_are_imported_by_default() {
    let base = tempfile::tempdir().unwrap();
    let mut root = base.path().to_path_buf();
    for n in 1..=7 {
        root.push(format!("very-long-directory-name-segment-{n:02}"));
    }
    root.push("repo");
    std::fs::create_dir_all(&root).unwrap();
    for args in [
        &["init", "-q", "-b", "main"][..],
        &["commit", "-q", "--allow-empty", "-m", "init"],
    ] {
        run(memlog_e2e::git_command(&root).args(args)).ok();
    }
    let folder = claude_folder(&root);
    assert!(folder.len() > 200);
    let home = tempfile::tempdir().unwrap();
    claude_transcript(
        home.path(),
        &format!("{}-4dqqtr", &folder[..200]),
        &root,
        "long path question",
    );
    // the same first 200 characters, another path
    claude_transcript(
        home.path(),
        &format!("{}-1x2y3z", &folder[..200]),
        &root.with_file_name("other"),
        "a question of another repository",
    );
    run(memlog_command(&root)
        .env("HOME", home.path())
        .args(["import", "claude-code"]))
    .ok();
    let events = run(memlog_command(&root).args(["cat"])).ok().json_lines();
    assert_eq!(prompts_of(&events), ["long path question"]);
}

/// Another agent's file (a Codex rollout given to the Claude Code
/// importer, Gemini's saved checkpoint) reads as no event: the import says
/// so, where it printed "0 events" as for an empty session (field test 12a).
#[test]
fn a_file_of_another_agent_is_said_to_hold_nothing() {
    let repo = TestRepo::new();
    let rollout = repo.path().join("rollout-2026-01-01.jsonl");
    std::fs::write(
        &rollout,
        "{\"timestamp\":\"2026-01-01T00:00:00Z\",\"type\":\"session_meta\",\"payload\":{\"id\":\"x\"}}\n",
    )
    .unwrap();
    let out = repo
        .memlog(&["import", "claude-code", rollout.to_str().unwrap()])
        .ok();
    assert!(
        out.stderr().contains("nothing read") && out.stderr().contains("another agent's file"),
        "{}",
        out.stderr()
    );
}
