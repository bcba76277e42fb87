//! Personal data and size, on the write path every event takes: with
//! `privacy.pii: true`, emails, phone numbers, IP addresses and the
//! configured names never reach a byte under `.git` (hooks, notes,
//! records; sealed and indexed), while ordinary text comes through as it
//! was; without it they are kept. A hook's text is capped (64 KB by
//! default, configurable): a 10 MB prompt is stored as its head and tail
//! with the cut marked; a tool's binary output is stored as its size.
#![allow(clippy::unwrap_used)] // a test fails loudly

use memlog_e2e::{TestRepo, git_command, run};
use memlog_format::privacy::TRUNCATION_MARKER;
use serde_json::{Value, json};

/// Runs `memlog hook EVENT` with `payload` (its `cwd`, `session_id` and
/// `hook_event_name` filled in); a hook always exits 0.
fn hook(repo: &TestRepo, event: &str, session: &str, mut payload: Value) {
    payload["cwd"] = json!(repo.path().display().to_string());
    payload["session_id"] = json!(session);
    payload["hook_event_name"] = json!(event);
    repo.memlog_stdin(&["hook", event], &payload.to_string())
        .ok();
}

/// Every byte under `.git`: git objects decompressed, and every file.
fn everything_on_disk(repo: &TestRepo) -> Vec<u8> {
    let mut bytes =
        run(git_command(repo.path()).args(["cat-file", "--batch-all-objects", "--batch"]))
            .ok()
            .output
            .stdout;
    let mut dirs = vec![repo.path().join(".git")];
    // a background index or seal may remove a file of its own meanwhile
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if let Ok(file) = std::fs::read(path) {
                bytes.extend(file);
            }
        }
    }
    bytes
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

const PERSONAL: [&str; 8] = [
    "jane.doe@acme-corp.io",
    "+1 415 555 0123",
    "010-1234-5678",
    "10.20.0.7",
    "2001:db8::8a2e:370:7334",
    "Jane Doe",
    "김민수",
    "minsu.kim@univ.ac.kr",
];

/// Text that looks a little like personal data and is not.
const ORDINARY: &str = "Bumped lodash@4.17.21 to 1.22.3 on 2026-03-04T10:15:00Z; the server \
    listens on 0.0.0.0:8080 and 127.0.0.1:3000, std::fmt::Display is fine, \
    see admin@example.com, commit 8bb2aab, issue #1234, 3 passed in 1.38s.";

fn with_config(config: &str) -> TestRepo {
    let repo = TestRepo::new();
    std::fs::write(repo.path().join(".memlog.yaml"), config).unwrap();
    repo
}

fn send_personal_data(repo: &TestRepo) {
    let prompt = format!(
        "Ping {} or {}; the office is {}. The VM is {}, the proxy {}. {} and {}가 agreed.",
        PERSONAL[0], PERSONAL[1], PERSONAL[2], PERSONAL[3], PERSONAL[4], PERSONAL[5], PERSONAL[6]
    );
    hook(repo, "UserPromptSubmit", "s1", json!({"prompt": prompt}));
    let log = format!(
        "commit 8bb2aab\nAuthor: Min-su Kim <{}>\n\n    Fix login from {}\n",
        PERSONAL[7], PERSONAL[3]
    );
    hook(
        repo,
        "PostToolUse",
        "s1",
        json!({"tool_name": "Bash", "tool_input": {"command": "git log -1"},
               "tool_response": {"stdout": log, "stderr": "", "interrupted": false, "isImage": false}}),
    );
    hook(
        repo,
        "Stop",
        "s1",
        json!({"stop_hook_active": false, "last_assistant_message": format!("I wrote to {} ({}).", PERSONAL[0], PERSONAL[5])}),
    );
    hook(repo, "SessionEnd", "s1", json!({"reason": "exit"}));
    repo.memlog(&[
        "note",
        &format!("call jane: {} / {}", PERSONAL[1], PERSONAL[2]),
    ])
    .ok();
    repo.record("s2", "note", ORDINARY);
    repo.memlog(&["seal", "--all"]).ok();
    repo.memlog(&["index"]).ok();
}

#[test]
fn personal_data_never_reaches_disk_when_asked() {
    let repo = with_config(
        "privacy:\n  pii: true\n  names: [\"Jane Doe\", \"김민수\"]\nembedding:\n  enabled: false\n",
    );
    send_personal_data(&repo);
    let disk = everything_on_disk(&repo);
    for p in PERSONAL {
        assert!(!contains(&disk, p), "{p} is on disk");
    }
    // masked, not dropped: the marker says what was there
    let texts: Vec<String> = repo
        .cat()
        .iter()
        .filter_map(|e| e["body"]["text"].as_str().map(str::to_string))
        .collect();
    let all = texts.join("\n");
    for rule in ["email", "phone-number", "ip-address", "name"] {
        assert!(all.contains(&format!("[REDACTED:{rule}:")), "{rule}: {all}");
    }
    assert!(texts.iter().any(|t| t == ORDINARY), "{all}");
}

#[test]
fn personal_data_is_kept_by_default() {
    let repo = with_config("embedding:\n  enabled: false\n");
    send_personal_data(&repo);
    let all: Vec<String> = repo.cat().iter().map(Value::to_string).collect();
    let all = all.join("\n");
    for p in [PERSONAL[0], PERSONAL[1], PERSONAL[3], PERSONAL[7]] {
        assert!(all.contains(p), "{p} was altered");
    }
}

#[test]
fn a_10_mb_prompt_is_stored_capped() {
    let repo = with_config("embedding:\n  enabled: false\n");
    let head = "Why does the build fail? Here is the whole log:\n";
    let tail = "\nerror: could not compile `app` (bin) due to 1 previous error";
    let prompt = format!(
        "{head}{}{tail}",
        "warning: unused variable `x`\n".repeat(360_000)
    );
    assert!(prompt.len() > 10_000_000);
    hook(&repo, "UserPromptSubmit", "big", json!({"prompt": prompt}));
    let events = repo.session_events("big");
    let text = events[0]["body"]["text"].as_str().unwrap();
    assert!(
        text.len() <= 64 * 1024 + TRUNCATION_MARKER.len(),
        "{}",
        text.len()
    );
    assert!(text.starts_with(head) && text.ends_with(tail));
    assert!(text.contains(TRUNCATION_MARKER));
    assert_eq!(events[0]["body"]["truncated"], true);
    let journal = repo.path().join(".git/memlog/journal/big.jsonl");
    assert!(std::fs::metadata(journal).unwrap().len() < 80 * 1024);

    // the cap is configurable, and applies to record too; short texts are
    // not marked
    let repo = with_config("hooks:\n  max_text_bytes: 1000\nembedding:\n  enabled: false\n");
    repo.record("s", "note", &"é".repeat(5000));
    repo.record("s", "note", "short");
    let events = repo.session_events("s");
    let text = events[0]["body"]["text"].as_str().unwrap();
    assert!(text.len() <= 1000 + TRUNCATION_MARKER.len() && text.contains(TRUNCATION_MARKER));
    assert_eq!(events[0]["body"]["truncated"], true);
    assert_eq!(events[1]["body"]["text"], "short");
    assert!(events[1]["body"].get("truncated").is_none());
}

/// A key block is a note's text like any other: given as the argument (it
/// starts with `-`) or on standard input (`memlog note -`), it is stored
/// redacted.
#[test]
fn a_key_block_can_be_noted_and_is_stored_redacted() {
    let repo = TestRepo::new();
    let block = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAq7BFUpkGp3+LQmlQYx2eqzDV+xeG8kx/sQFV18S5JhzGeIJN\n-----END RSA PRIVATE KEY-----\n";
    repo.memlog(&["note", block]).ok();
    repo.memlog_stdin(&["note", "-"], block).ok();
    let texts = repo.memlog(&["cat"]).ok().stdout();
    assert_eq!(texts.matches("[REDACTED:private-key").count(), 2, "{texts}");
    assert!(!texts.contains("MIIEpAIBAAKCAQEAq7BFUpkGp3"), "{texts}");
}

/// A session id holding a token (a script's `--session "$JOB-$TOKEN"`, a
/// pasted value): the id is redacted in its journal's name, the commit
/// trailers and every event, and the session is still sealed at its end
/// by its own hooks.
#[test]
fn a_secret_in_a_session_id_reaches_disk_in_no_form() {
    let repo = TestRepo::new();
    let token = "ghp_hGAkWvj7FAc9QeWJKY40uvSwMFLZDe1f8rES";
    let hooked = format!("deploy-{token}");
    hook(&repo, "SessionStart", &hooked, json!({"source": "startup"}));
    hook(
        &repo,
        "UserPromptSubmit",
        &hooked,
        json!({"prompt": "rotate the staging keys"}),
    );
    let scripted = format!("ci-{token}");
    repo.memlog(&["note", "--session", &scripted, "the job ran"])
        .ok();
    hook(&repo, "SessionEnd", &hooked, json!({"reason": "other"}));
    let log = repo.memlog(&["log", "--json"]).ok().json();
    let sessions = log["sessions"].as_array().unwrap();
    assert!(
        sessions.iter().any(|s| {
            s["session"]
                .as_str()
                .is_some_and(|id| id.starts_with("deploy-") && id.contains("REDACTED"))
                && s["prompts"] == 1
        }),
        "sealed at its end: {log:#}"
    );
    // sealed by the id as typed (field test 7: "nothing to seal")
    let sealed = repo.memlog(&["seal", "--session", &scripted]).ok().stdout();
    assert!(
        sealed.contains("REDACTED") && sealed.contains("1 events"),
        "{sealed}"
    );
    assert!(
        !contains(&everything_on_disk(&repo), "hGAkWvj7FAc9QeWJKY40"),
        "the token is on disk"
    );
    let texts = repo.memlog(&["cat"]).ok().stdout();
    assert!(texts.contains("the job ran"), "{texts}");
    // every command given the id as typed finds the session (field test 7)
    let shown = repo.memlog(&["show", &scripted]).ok().stdout();
    assert!(shown.contains("the job ran"), "{shown}");
    let of_session = repo.memlog(&["cat", "--session", &scripted]).ok().stdout();
    assert!(of_session.contains("the job ran"), "{of_session}");
    let found = repo
        .memlog(&["search", "job", "--session", &scripted])
        .ok()
        .stdout();
    assert!(found.contains("the job ran"), "{found}");
    repo.memlog(&["forget", "--session", &scripted]).ok();
    let texts = repo.memlog(&["cat"]).ok().stdout();
    assert!(!texts.contains("the job ran"), "{texts}");
}

/// A command that printed binary reaches the hook with every byte that is
/// not UTF-8 replaced by U+FFFD: cut to its head and tail it was still 5 KB
/// of U+FFFD and NUL characters, stored and indexed (field test 8a). It is
/// stored as its size; a text output beside it is kept as it was.
#[test]
fn a_tools_binary_output_is_stored_as_its_size() {
    let repo = with_config("embedding:\n  enabled: false\n");
    let binary: String = (0..30_000u32)
        .map(|i| match i % 4 {
            0 | 1 => '\u{fffd}',
            2 => '\0',
            _ => char::from(b'a' + (i % 26) as u8),
        })
        .collect();
    for (id, command, stdout) in [
        (
            "toolu_bin",
            "cat blob.bin | head -c 2000000",
            binary.as_str(),
        ),
        ("toolu_txt", "echo ok", "ok"),
    ] {
        hook(
            &repo,
            "PostToolUse",
            "bin",
            json!({"tool_name": "Bash", "tool_use_id": id,
                   "tool_input": {"command": command},
                   "tool_response": {"stdout": stdout, "stderr": "", "interrupted": false}}),
        );
    }
    let events = repo.session_events("bin");
    let output = |id: &str| {
        events
            .iter()
            .find(|e| e["body"]["tool_use_id"] == id)
            .map(|e| e["body"].clone())
            .unwrap()
    };
    let stored = output("toolu_bin");
    assert_eq!(
        stored["output"],
        format!("[binary output, {} bytes]", binary.len())
    );
    assert_eq!(stored["truncated"], true);
    assert_eq!(output("toolu_txt")["output"], "ok");
}

/// The project name is the remote's or the folder's name, which can be
/// anything: a repository whose remote is named by a token put it in every
/// event and every commit message (field test 9a).
#[test]
fn a_project_named_by_a_secret_is_redacted_like_any_text() {
    let repo = TestRepo::new();
    let body = "Q8vT2mZk9XyLpR4wEeT7uI0oPaSdFgHjKl12";
    let token = format!("ghp_{body}");
    repo.git(&[
        "remote",
        "add",
        "origin",
        &format!("https://example.com/acme/{token}.git"),
    ])
    .ok();
    repo.memlog(&["note", "the deploy runs on Fridays"]).ok();
    repo.memlog(&["seal", "--all"]).ok();
    // (git's own config holds the remote's URL: memlog's log is what is
    // shared)
    let events = repo.memlog(&["cat"]).ok().stdout();
    let messages = repo
        .git(&["log", "--format=%B", "refs/heads/memlog"])
        .ok()
        .stdout();
    for (what, text) in [("events", &events), ("commit messages", &messages)] {
        assert!(!text.contains(&body[..12]), "{what}: {text}");
    }
    assert!(events.contains("the deploy runs on Fridays"), "{events}");
    assert!(messages.contains("[REDACTED:"), "{messages}");
}

/// A concept named with a token is stored, found again and echoed with the
/// token redacted: `concepts add` printed the name as typed, and a second
/// filing under the same name made a second concept.
#[test]
fn a_concept_named_by_a_secret_is_redacted_and_found_again() {
    let repo = TestRepo::new();
    let token = "ghp_hGAkWvj7FAc9QeWJKY40uvSwMFLZDe1f8rES";
    repo.memlog(&["note", "--session", "s1", "rotated the staging keys"])
        .ok();
    let name = format!("staging keys {token}");
    let add = |json: bool| {
        let mut args = vec!["concepts", "add", name.as_str(), "--session", "s1"];
        if json {
            args.push("--json");
        }
        repo.memlog(&args).ok().stdout()
    };
    let first = add(false);
    assert!(!first.contains("hGAkWvj7FAc9QeWJKY40"), "{first}");
    assert!(first.contains("new concept"), "{first}");
    let again: serde_json::Value = serde_json::from_str(&add(true)).unwrap();
    assert_eq!(again["created"], false, "{again}");
    assert!(
        !contains(&everything_on_disk(&repo), "hGAkWvj7FAc9QeWJKY40"),
        "the token is on disk"
    );
}

/// A prompt with an unclosed private tag is kept as typed (the seed's
/// rule), and the user is told through the agent: the hook's context says
/// so, and hooks.log too. A field test found the prompt synced to every
/// teammate with no word anywhere; only `memlog note` warned.
#[test]
fn an_unclosed_private_tag_in_a_prompt_is_told_to_the_user() {
    let repo = TestRepo::new();
    let mut payload = json!({
        "prompt": "deploy notes <private>UNCLOSEDZZ1 the staging root password is tiger-lily",
        "session_id": "s1",
        "hook_event_name": "UserPromptSubmit",
    });
    payload["cwd"] = json!(repo.path().display().to_string());
    let out = repo
        .memlog_stdin(&["hook", "UserPromptSubmit"], &payload.to_string())
        .ok()
        .stdout();
    assert!(out.contains("unclosed private tag"), "{out}");
    assert!(out.contains("tell the user"), "{out}");
    // what they can do about it, now that it is recorded
    assert!(out.contains("`memlog forget "), "{out}");
    assert!(!out.contains("UNCLOSEDZZ1"), "{out}");
    let log = std::fs::read_to_string(repo.path().join(".git/memlog/hooks.log")).unwrap();
    assert!(log.contains("unclosed private tag"), "{log}");
    // kept as typed
    let events = repo.session_events("s1");
    assert!(
        events[0]["body"]["text"]
            .as_str()
            .unwrap()
            .contains("UNCLOSEDZZ1")
    );
}
