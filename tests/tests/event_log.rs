//! The git-backed event log, end to end: sealing, the user's repository left
//! alone, idempotent imports, worktrees and error handling.

use std::collections::HashSet;

use memlog_e2e::{TestRepo, git_command, run};

fn state_of_user_repo(repo: &TestRepo) -> Vec<String> {
    vec![
        repo.git(&["status", "--porcelain=v2", "--branch"])
            .ok()
            .stdout(),
        repo.git(&["diff", "--cached"]).ok().stdout(),
        repo.git(&["diff"]).ok().stdout(),
        repo.git(&["rev-parse", "HEAD"]).ok().stdout(),
        repo.git(&["symbolic-ref", "-q", "HEAD"]).stdout(),
        repo.git(&["ls-files", "--stage"]).ok().stdout(),
        std::fs::read(repo.path().join(".git/index"))
            .map(|b| format!("{:?}", blake3_like(&b)))
            .unwrap_or_default(),
    ]
}

/// A cheap fingerprint of bytes (no extra dependency needed here).
fn blake3_like(bytes: &[u8]) -> (usize, u64) {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in bytes {
        h = (h ^ *b as u64).wrapping_mul(0x100000001b3);
    }
    (bytes.len(), h)
}

#[test]
fn seal_makes_one_commit_per_session() {
    let repo = TestRepo::new();
    for s in ["s-a", "s-b", "s-c"] {
        repo.record(s, "user_prompt", &format!("prompt of {s}"));
        repo.record(s, "agent_response", &format!("answer of {s}"));
    }
    repo.memlog(&["seal", "--all"]).ok();
    let commits = repo.memlog_commits();
    assert_eq!(commits.len(), 3, "{commits:?}");
    let messages = repo
        .git(&["log", "--format=%B%x00", "refs/heads/memlog"])
        .ok()
        .stdout();
    for s in ["s-a", "s-b", "s-c"] {
        assert!(
            messages.contains(&format!("Memlog-Session: {s}\nMemlog-Events: 2")),
            "{messages}"
        );
        assert!(messages.contains(&format!("prompt of {s}")));
    }
    // sealing again changes nothing
    repo.memlog(&["seal", "--all"]).ok();
    assert_eq!(repo.memlog_commits().len(), 3);
    assert!(repo.git(&["fsck", "--strict"]).output.status.success());
    let fsck = repo.memlog(&["fsck", "--json"]).ok().json();
    assert_eq!(fsck["events"], 6);
    assert_eq!(fsck["problems"].as_array().map(Vec::len), Some(0));
}

/// Stored times are UTC; listings show the user's local time (`TZ`, else
/// the system's), as `git log` does: in Seoul a session sealed at 06:13 UTC
/// is listed at 15:13.
#[test]
fn listings_show_local_time() {
    let repo = TestRepo::new();
    repo.memlog_stdin(
        &["record", "--json"],
        r#"{"session": "s1", "ts": "2026-11-27T06:13:12.389Z", "kind": "user_prompt", "text": "when was this"}"#,
    )
    .ok();
    repo.memlog(&["seal", "--all"]).ok();
    let in_seoul = memlog_e2e::run(
        memlog_e2e::memlog_command(repo.path())
            .env("TZ", "Asia/Seoul")
            .arg("log"),
    )
    .ok()
    .stdout();
    assert!(in_seoul.contains("2026-11-27 15:13"), "{in_seoul}");
    let in_utc = repo.memlog(&["log"]).ok().stdout();
    assert!(in_utc.contains("2026-11-27 06:13"), "{in_utc}");
    let json = repo.memlog(&["log", "--json"]).ok().json();
    assert_eq!(json["sessions"][0]["started"], "2026-11-27T06:13:12.389Z");
    // a bare date a person gives is a local day too: 20:00 UTC on the 26th
    // is listed on the 27th in Seoul, and found since the 27th there
    repo.memlog_stdin(
        &["record", "--json"],
        r#"{"session": "s2", "ts": "2026-11-26T20:00:00.000Z", "kind": "note", "text": "early morning in Seoul"}"#,
    )
    .ok();
    let since = |tz: &str| {
        memlog_e2e::run(memlog_e2e::memlog_command(repo.path()).env("TZ", tz).args([
            "search",
            "early morning",
            "--since",
            "2026-11-27",
        ]))
        .ok()
        .stdout()
    };
    assert!(since("Asia/Seoul").contains("early morning in Seoul"));
    assert!(!since("UTC").contains("early morning in Seoul"));
}

/// A memlog branch checked out (to browse it, or to `git pull` it, in the
/// main working tree or a `git worktree`) is never moved under it: a seal
/// there left the tree's index on the old commit, and the user's next
/// `git commit` deleted the new memory (field test 6). The session waits
/// in its journal, doctor says why, and the next seal after switching
/// away, whichever session it is for, takes it (field test 7).
#[test]
fn a_checked_out_memlog_branch_is_never_moved() {
    let repo = TestRepo::new();
    let elsewhere = tempfile::tempdir().unwrap();
    let browse = elsewhere.path().join("browse");
    let browse_arg = browse.display().to_string();
    repo.memlog(&["note", "first note"]).ok();
    for in_worktree in [false, true] {
        let tip = repo.git(&["rev-parse", "memlog"]).ok().stdout();
        let tree = if in_worktree {
            repo.git(&["worktree", "add", "-q", &browse_arg, "memlog"])
                .ok();
            browse.clone()
        } else {
            repo.git(&["checkout", "-q", "memlog"]).ok();
            repo.path().to_path_buf()
        };
        let sealed = repo.memlog(&["note", "the fraud threshold is 500 EUR"]);
        assert_eq!(sealed.code(), Some(1));
        assert!(
            sealed.stderr().contains("is checked out in"),
            "{}",
            sealed.stderr()
        );
        assert_eq!(repo.git(&["rev-parse", "memlog"]).ok().stdout(), tip);
        let doctor = repo.memlog(&["doctor", "--json"]);
        assert_eq!(doctor.code(), Some(1));
        assert!(
            doctor.json()["log"]
                .as_str()
                .unwrap_or("")
                .contains("checked out in"),
            "{}",
            doctor.stdout()
        );
        // the tree that has it checked out stays clean
        let status = run(git_command(&tree).args(["status", "--porcelain"]))
            .ok()
            .stdout();
        assert_eq!(status, "", "{tree:?}");
        if in_worktree {
            repo.git(&["worktree", "remove", "--force", &browse_arg])
                .ok();
        } else {
            repo.git(&["checkout", "-q", "-"]).ok();
        }
        // the next seal, of another session, takes the one that waited
        repo.memlog(&["note", "switched away"]).ok();
        let sealed = repo.memlog(&["cat", "--sealed"]).ok().stdout();
        assert!(sealed.contains("fraud threshold"), "{sealed}");
        assert_ne!(repo.git(&["rev-parse", "memlog"]).ok().stdout(), tip);
        let journals = std::fs::read_dir(repo.path().join(".git/memlog/journal"))
            .map(|d| d.count())
            .unwrap_or(0);
        assert_eq!(journals, 0);
    }
}

/// A subagent's prompt (`meta.sidechain`: the parent agent's words, as
/// Codex records it) is not the user's: the commit subject, the prompt
/// count and the first prompt of `memlog log` are the user's.
#[test]
fn a_subagents_prompt_is_not_counted_as_the_users() {
    let repo = TestRepo::new();
    for (ts, text, sidechain) in [
        (
            "2026-11-27T06:00:00.000Z",
            "SUBTASK: find where coupons are validated",
            true,
        ),
        ("2026-11-27T06:00:01.000Z", "fix the coupon rounding", false),
    ] {
        let line = serde_json::json!({"session": "s1", "ts": ts, "kind": "user_prompt",
            "text": text, "meta": {"sidechain": sidechain}});
        repo.memlog_stdin(&["record", "--json"], &line.to_string())
            .ok();
    }
    repo.memlog(&["seal", "--all"]).ok();
    let log = repo.memlog(&["log", "--json"]).ok().json();
    let s = &log["sessions"][0];
    assert_eq!(s["prompts"], 1, "{log:#}");
    assert_eq!(s["first_prompt"], "fix the coupon rounding", "{log:#}");
    let subject = repo
        .git(&["log", "-1", "--format=%s", "memlog"])
        .ok()
        .stdout();
    assert_eq!(subject.trim(), "fix the coupon rounding");
}

#[test]
fn user_repository_is_untouched_with_staged_changes() {
    let repo = TestRepo::new();
    std::fs::write(repo.path().join("staged.txt"), "staged\n").unwrap();
    repo.git(&["add", "staged.txt"]).ok();
    std::fs::write(repo.path().join("README.md"), "modified, not staged\n").unwrap();
    std::fs::write(repo.path().join("untracked.txt"), "x\n").unwrap();
    let before = state_of_user_repo(&repo);
    repo.record("s1", "user_prompt", "hello");
    repo.memlog(&["note", "a standalone note"]).ok();
    repo.memlog(&["seal", "--all"]).ok();
    assert_eq!(state_of_user_repo(&repo), before);
    assert_eq!(repo.memlog_commits().len(), 2);
}

#[test]
fn user_repository_is_untouched_with_detached_head() {
    let repo = TestRepo::new();
    std::fs::write(repo.path().join("second.txt"), "2\n").unwrap();
    repo.git(&["add", "second.txt"]).ok();
    repo.git(&["commit", "-q", "-m", "second"]).ok();
    repo.git(&["checkout", "-q", "--detach", "HEAD~1"]).ok();
    let before = state_of_user_repo(&repo);
    repo.record("s1", "user_prompt", "while detached");
    repo.memlog(&["seal", "--session", "s1"]).ok();
    assert_eq!(state_of_user_repo(&repo), before);
    assert_eq!(repo.memlog_commits().len(), 1);
}

#[test]
fn record_then_cat_show_log_and_stats() {
    let repo = TestRepo::new();
    let id = repo.record("s1", "user_prompt", "Fix getUserById in src/user.rs");
    assert_eq!(id.len(), 64);
    // visible before sealing
    let events = repo.cat();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["id"], id.as_str());
    repo.record("s1", "agent_response", "Fixed it.");
    repo.memlog(&["seal", "--session", "s1"]).ok();

    let shown = repo
        .memlog(&["show", &id[..10], "--json", "--context", "1"])
        .ok()
        .json();
    assert_eq!(
        shown["event"]["body"]["text"],
        "Fix getUserById in src/user.rs"
    );
    assert_eq!(shown["context"].as_array().map(Vec::len), Some(1));
    let session = repo.memlog(&["show", "s1", "--json"]).ok().json();
    assert_eq!(session["events"].as_array().map(Vec::len), Some(2));
    let commit = repo.memlog_commits()[0]
        .split(' ')
        .next()
        .unwrap()
        .to_string();
    let by_commit = repo.memlog(&["show", &commit, "--json"]).ok().json();
    assert_eq!(by_commit["session"], "s1");
    assert_eq!(by_commit["events"].as_array().map(Vec::len), Some(2));
    let text = repo.memlog(&["show", &id]).ok().stdout();
    assert!(
        text.contains("Fix getUserById") && text.contains("user_prompt"),
        "{text}"
    );

    let log = repo.memlog(&["log", "--json"]).ok().json();
    let s = &log["sessions"][0];
    assert_eq!(
        (
            s["session"].as_str(),
            s["events"].as_u64(),
            s["prompts"].as_u64()
        ),
        (Some("s1"), Some(2), Some(1))
    );
    assert_eq!(s["first_prompt"], "Fix getUserById in src/user.rs");
    assert!(
        repo.memlog(&["log"])
            .ok()
            .stdout()
            .contains("Fix getUserById")
    );

    let stats = repo.memlog(&["stats", "--json"]).ok().json();
    assert_eq!(stats["events"], 2);
    assert_eq!(stats["sessions"], 1);
    assert_eq!(stats["events_by_kind"]["user_prompt"], 1);
}

#[test]
fn import_is_idempotent_and_keeps_refs() {
    let repo = TestRepo::new();
    let file = repo.path().join("import.jsonl");
    std::fs::write(
        &file,
        concat!(
            r#"{"session":"conv-1","ts":"2023-05-08T13:56:00Z","kind":"user_prompt","text":"Hey, how are you?","ref":"conv:D1:1"}"#, "\n",
            r#"{"session":"conv-1","ts":"2023-05-08T13:56:01Z","kind":"agent_response","text":"Fine, thanks.","ref":"conv:D1:2"}"#, "\n",
            r#"{"session":"conv-2","ts":"2023-05-09T10:00:00Z","kind":"note","text":"second session","ref":"conv:D2:1"}"#, "\n",
        ),
    )
    .unwrap();
    let first = repo
        .memlog(&["import", "jsonl", "import.jsonl", "--json"])
        .ok()
        .json();
    assert_eq!(
        (first["added"].as_u64(), first["commits"].as_u64()),
        (Some(3), Some(2))
    );
    let tip = repo.git(&["rev-parse", "refs/heads/memlog"]).ok().stdout();
    let second = repo
        .memlog(&["import", "jsonl", "import.jsonl", "--json"])
        .ok()
        .json();
    assert_eq!(
        (second["added"].as_u64(), second["commits"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(second["duplicates"], 3);
    assert_eq!(
        repo.git(&["rev-parse", "refs/heads/memlog"]).ok().stdout(),
        tip
    );
    let events = repo.cat();
    assert_eq!(events.len(), 3);
    assert_eq!(events[0]["meta"]["ref"], "conv:D1:1");
    assert_eq!(events[0]["ts"], "2023-05-08T13:56:00.000Z");
    let shown = repo
        .memlog(&["show", events[0]["id"].as_str().unwrap()])
        .ok()
        .stdout();
    assert!(shown.contains("conv:D1:1"), "{shown}");

    // a file that grew adds only the new part, as one more commit
    let mut grown = std::fs::read_to_string(&file).unwrap();
    grown.push_str(r#"{"session":"conv-1","ts":"2023-05-08T13:57:00Z","kind":"user_prompt","text":"And later?","ref":"conv:D1:3"}"#);
    grown.push('\n');
    std::fs::write(&file, grown).unwrap();
    let third = repo
        .memlog(&["import", "jsonl", "import.jsonl", "--json"])
        .ok()
        .json();
    assert_eq!(
        (third["added"].as_u64(), third["commits"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(repo.cat().len(), 4);
}

#[test]
fn import_rejects_a_bad_file_without_writing() {
    let repo = TestRepo::new();
    let good =
        "{\"session\":\"a\",\"ts\":\"2023-05-08T13:56:00Z\",\"kind\":\"note\",\"text\":\"ok\"}";
    // A line that is not JSON, and a session id every other path refuses.
    for (bad, names) in [
        ("{\"session\": \"a\", \"ts\": oops}", "line 2"),
        (
            "{\"session\":\"../evil\",\"ts\":\"2023-05-08T13:56:00Z\",\"kind\":\"note\",\"text\":\"x\"}",
            "line 2: session id \"../evil\"",
        ),
    ] {
        std::fs::write(repo.path().join("bad.jsonl"), format!("{good}\n{bad}\n")).unwrap();
        let out = repo.memlog(&["import", "jsonl", "bad.jsonl"]);
        assert_eq!(out.code(), Some(1));
        let err = out.stderr();
        assert!(err.contains(&format!("bad.jsonl, {names}")), "{err}");
        assert!(repo.memlog_commits().is_empty());
    }
    let skipped = repo
        .memlog(&["import", "jsonl", "bad.jsonl", "--skip-invalid", "--json"])
        .ok()
        .json();
    assert_eq!(skipped["added"], 1);
}

/// A segment whose bytes do not hash to its name is damaged: its lines
/// whose ids no longer match their content are left out and named, and the
/// rest of the memory, its own whole lines included, stays readable.
#[test]
fn a_damaged_segment_costs_its_damaged_lines_not_the_whole_memory() {
    let repo = TestRepo::new();
    let id = repo.record("s1", "note", "Emails are stored lowercased");
    let kept = repo.record("s1", "note", "Invoices are numbered per tenant");
    repo.memlog(&["seal", "--all"]).ok();
    let other = repo.record("s2", "note", "The queue retries five times");
    repo.memlog(&["seal", "--all"]).ok();
    let tree = repo
        .git(&["ls-tree", "-r", "--name-only", "refs/heads/memlog"])
        .ok()
        .stdout();
    let path = tree
        .lines()
        .find(|p| {
            repo.git(&["cat-file", "blob", &format!("refs/heads/memlog:{p}")])
                .ok()
                .stdout()
                .contains("lowercased")
        })
        .unwrap()
        .to_string();
    let original = repo
        .git(&["cat-file", "blob", &format!("refs/heads/memlog:{path}")])
        .ok()
        .stdout();
    // Same events, one word changed: a valid line under the wrong name.
    repo.tamper(
        &path,
        &original.replace("lowercased", "uppercased"),
        "tampered",
    );
    let cat = repo.memlog(&["cat"]).ok();
    let err = cat.stderr();
    assert!(
        err.contains(&path) && err.contains("damaged") && err.contains("fsck"),
        "{err}"
    );
    let out = cat.stdout();
    assert!(!out.contains("uppercased") && !out.contains(&id), "{out}");
    assert!(out.contains(&kept) && out.contains(&other), "{out}");
    let found = repo.memlog(&["search", "uppercased"]);
    assert!(
        !found.stdout().contains("stored uppercased"),
        "{}",
        found.stdout()
    );
    let shown = repo.memlog(&["show", &kept]).ok();
    assert!(shown.stdout().contains("numbered per tenant"));
    assert!(
        repo.memlog(&["search", "queue retries"])
            .ok()
            .stdout()
            .contains("five times")
    );
    // fsck still names it, and a sync still refuses to share it.
    let fsck = repo.memlog(&["fsck"]);
    assert_eq!(fsck.code(), Some(1));
    assert!(fsck.stdout().contains(&path), "{}", fsck.stdout());
}

#[test]
fn record_json_reads_a_neutral_event_from_stdin() {
    let repo = TestRepo::new();
    let out = repo
        .memlog_stdin(
            &["record", "--json"],
            r#"{"session":"s9","ts":"2026-01-02T03:04:05Z","kind":"fact","text":"the API uses OAuth","ref":"ext-7"}"#,
        )
        .ok();
    let id = out.stdout().trim().to_string();
    let events = repo.cat();
    assert_eq!(events[0]["id"], id.as_str());
    assert_eq!(events[0]["kind"], "fact");
    assert_eq!(events[0]["meta"]["ref"], "ext-7");
    let bad = repo.memlog_stdin(&["record", "--json"], "{not json");
    assert_eq!(bad.code(), Some(1));
    assert!(bad.stderr().contains("neutral"), "{}", bad.stderr());
}

#[test]
fn clear_errors_never_panics() {
    let not_git = tempfile::tempdir().unwrap();
    let out = run(memlog_e2e::memlog_command(not_git.path()).args(["cat"]));
    assert_eq!(out.code(), Some(1));
    assert!(
        out.stderr().contains("not inside a git repository"),
        "{}",
        out.stderr()
    );

    let repo = TestRepo::new();
    for (args, needle) in [
        (
            vec!["show", "deadbeef"],
            "no event, session or memlog commit",
        ),
        (
            vec!["record", "--session", "s", "--kind", "dream", "--text", "x"],
            "unknown kind",
        ),
        (
            vec![
                "record",
                "--session",
                "../evil",
                "--kind",
                "note",
                "--text",
                "x",
            ],
            "session id",
        ),
        (
            vec![
                "record",
                "--session",
                "s",
                "--kind",
                "note",
                "--text",
                "x",
                "--meta",
                "[1]",
            ],
            "JSON object",
        ),
        (vec!["import", "jsonl", "missing.jsonl"], "missing.jsonl"),
        (vec!["seal"], "--session ID, --all or --idle"),
    ] {
        let out = repo.memlog(&args);
        assert_eq!(out.code(), Some(1), "{args:?}: {}", out.stderr());
        assert!(out.stderr().contains(needle), "{args:?}: {}", out.stderr());
        assert!(!out.stderr().contains("panicked"), "{args:?}");
    }
    std::fs::write(
        repo.path().join(".memlog.yaml"),
        "privacy:\n  patterns: ['(']\n",
    )
    .unwrap();
    let out = repo.memlog(&["record", "--session", "s", "--kind", "note", "--text", "x"]);
    assert_eq!(out.code(), Some(1));
    assert!(out.stderr().contains(".memlog.yaml"), "{}", out.stderr());
}

#[test]
fn worktrees_share_one_memory() {
    let repo = TestRepo::new();
    let (_wt, wt_path) = repo.linked_worktree("feature");
    let out = memlog_e2e::run(memlog_e2e::memlog_command(&wt_path).args([
        "record",
        "--session",
        "from-worktree",
        "--kind",
        "note",
        "--text",
        "written in a worktree",
    ]));
    assert!(out.output.status.success(), "{}", out.stderr());
    let events = repo.cat();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["session"], "from-worktree");
    // the project is named after the main repository in both places
    let main_project = repo.memlog(&["init", "--json"]).ok().json()["project"].clone();
    assert_eq!(events[0]["project"], main_project);
}

#[test]
fn private_tags_and_secrets_never_reach_git_objects_or_journals() {
    let repo = TestRepo::new();
    let secret = "sk-ant-api03-Zq9xSECRETvalue0123456789abcdef";
    repo.record(
        "s1",
        "user_prompt",
        &format!("use <private>{secret}</private> and password=hunter2 please"),
    );
    repo.memlog(&["seal", "--all"]).ok();
    // a second session stays in its journal, unsealed
    repo.record(
        "s2",
        "user_prompt",
        &format!("again {secret} token=hunter2"),
    );
    let objects = repo
        .git(&["cat-file", "--batch-all-objects", "--batch"])
        .ok()
        .output
        .stdout;
    let objects = String::from_utf8_lossy(&objects);
    assert!(objects.contains("[PRIVATE]") && objects.contains("[REDACTED:"));
    for needle in ["Zq9xSECRETvalue", "hunter2"] {
        assert!(!objects.contains(needle), "{needle} found in git objects");
        let grep = git_command(repo.path())
            .args(["grep", "--no-index", "-r", "-a", "-l", needle, ".git"])
            .output()
            .unwrap();
        assert!(
            grep.stdout.is_empty(),
            "{needle} found in {}",
            String::from_utf8_lossy(&grep.stdout)
        );
    }
}

#[test]
fn events_are_unique_by_id_after_repeated_seals() {
    let repo = TestRepo::new();
    let mut ids = HashSet::new();
    for i in 0..5 {
        ids.insert(repo.record("s1", "note", &format!("n{i}")));
        repo.memlog(&["seal", "--all"]).ok();
    }
    let events = repo.cat();
    let seen: HashSet<String> = events
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(seen, ids);
    assert_eq!(events.len(), 5);
}

#[test]
fn a_large_import_is_written_as_one_valid_pack() {
    let repo = TestRepo::new();
    let mut text = String::new();
    for s in 0..120 {
        for i in 0..5 {
            text.push_str(&format!(
                "{{\"session\":\"bulk-{s}\",\"ts\":\"2024-01-01T00:{:02}:{:02}Z\",\"kind\":\"note\",\"text\":\"bulk {s} {i}\"}}\n",
                s % 60,
                i
            ));
        }
    }
    std::fs::write(repo.path().join("bulk.jsonl"), text).unwrap();
    let out = repo
        .memlog(&["import", "jsonl", "bulk.jsonl", "--json"])
        .ok()
        .json();
    assert_eq!(
        (out["added"].as_u64(), out["commits"].as_u64()),
        (Some(600), Some(120))
    );
    let packs: Vec<_> = std::fs::read_dir(repo.path().join(".git/objects/pack"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "idx"))
        .collect();
    assert_eq!(packs.len(), 1, "one pack for the whole import");
    assert!(
        !std::fs::read_dir(repo.path().join(".git/objects/pack"))
            .unwrap()
            .any(|e| e.unwrap().path().extension().is_some_and(|x| x == "keep")),
        "the .keep file is removed once the ref points at the pack"
    );
    let verify = repo
        .git(&["verify-pack", "-v", packs[0].path().to_str().unwrap()])
        .ok();
    assert!(
        verify.stdout().contains("non delta: 600") || verify.stdout().contains("ok"),
        "{}",
        verify.stdout()
    );
    repo.git(&["fsck", "--strict", "--no-dangling"]).ok();
    assert_eq!(repo.memlog(&["fsck", "--json"]).ok().json()["events"], 600);
    // later single-session seals go on top, as loose objects
    repo.record("live", "user_prompt", "after the bulk import");
    repo.memlog(&["seal", "--all"]).ok();
    repo.git(&["fsck", "--strict", "--no-dangling"]).ok();
    assert_eq!(repo.cat().len(), 601);
}

#[test]
fn a_rewritten_history_is_not_mistaken_for_the_old_one() {
    // repo A imports a file; then its memlog ref is replaced by an unrelated
    // history (as a purge or a force-fetch would); importing the same file
    // again must add the events again, not trust what the old history held
    let a = TestRepo::new();
    let b = TestRepo::new();
    let file = a.path().join("in.jsonl");
    std::fs::write(
        &file,
        "{\"session\":\"kept\",\"ts\":\"2024-01-01T00:00:00Z\",\"kind\":\"note\",\"text\":\"first\"}\n",
    )
    .unwrap();
    a.memlog(&["import", "jsonl", "in.jsonl"]).ok();
    b.record("other", "note", "an unrelated history");
    b.memlog(&["seal", "--all"]).ok();
    a.git(&[
        "fetch",
        "-q",
        "--force",
        b.path().to_str().unwrap(),
        "+refs/heads/memlog:refs/heads/memlog",
    ])
    .ok();
    assert_eq!(a.cat().len(), 1, "only the other history now");
    let again = a
        .memlog(&["import", "jsonl", "in.jsonl", "--json"])
        .ok()
        .json();
    assert_eq!(again["added"], 1, "{again}");
    assert_eq!(a.cat().len(), 2);
}

/// A SHA-256 repository, which memlog's git library cannot write: every
/// command says so by name (it said "Repository configuration could not be
/// loaded"), `memlog note` writes nothing before failing (it journaled the
/// note, then failed, and a retry wrote it twice), and the hooks record
/// nothing, saying why at the session's start (their journals piled up,
/// never sealed).
#[test]
fn a_sha256_repository_is_refused_by_name_and_nothing_is_journaled() {
    let repo = TestRepo::new();
    std::fs::remove_dir_all(repo.path().join(".git")).unwrap();
    let init = repo.git(&["init", "-q", "--object-format=sha256"]);
    if init.code() != Some(0) {
        eprintln!(
            "skipped: this git makes no SHA-256 repository: {}",
            init.stderr()
        );
        return;
    }
    let note = repo.memlog(&["note", "the deploy key rotates monthly"]);
    assert_eq!(note.code(), Some(1));
    assert!(
        note.stderr().contains("sha256 object names"),
        "{}",
        note.stderr()
    );
    let journal = repo.path().join(".git/memlog/journal");
    let journaled = || std::fs::read_dir(&journal).map_or(0, |d| d.count());
    assert_eq!(journaled(), 0);
    let start = repo.hook(
        "SessionStart",
        "s1",
        serde_json::json!({"source": "startup"}),
    );
    assert!(
        start.contains("not recording") && start.contains("sha256"),
        "{start}"
    );
    repo.hook(
        "UserPromptSubmit",
        "s1",
        serde_json::json!({"prompt": "when does the deploy key rotate?"}),
    );
    assert_eq!(journaled(), 0);
    let doctor = repo.memlog(&["doctor"]);
    assert_eq!(doctor.code(), Some(1));
    assert!(doctor.stderr().contains("sha256"), "{}", doctor.stderr());
}

/// `GIT_DIR` and `GIT_WORK_TREE` choose the repository, as they do for
/// git (a git hook, `git rebase -x`, a script): memlog wrote to the
/// repository of its working directory while git worked on theirs.
#[test]
fn git_dir_in_the_environment_chooses_the_repository_as_for_git() {
    let a = TestRepo::new();
    let b = TestRepo::new();
    let git_dir = a.path().join(".git");
    let note = |cwd: &std::path::Path, text: &str| {
        run(memlog_e2e::memlog_command(cwd)
            .env("GIT_DIR", &git_dir)
            .env("GIT_WORK_TREE", a.path())
            .args(["note", text]))
    };
    note(b.path(), "written from b's folder with GIT_DIR naming a").ok();
    let elsewhere = tempfile::tempdir().unwrap();
    note(elsewhere.path(), "written from outside any repository").ok();
    let log = |repo: &TestRepo| repo.memlog(&["log"]).ok().stdout();
    let in_a = log(&a);
    assert!(
        in_a.contains("from b's folder") && in_a.contains("outside any"),
        "{in_a}"
    );
    assert!(!log(&b).contains("written"), "{}", log(&b));
}

/// Listings show more than a long answer's heading, and a search shows
/// where the answer holds the words looked for (a field test: the 11k
/// design answer showed as `# Plugin system design`, its decision unseen).
#[test]
fn listings_show_a_long_answer_past_its_heading() {
    let repo = TestRepo::new();
    let filler = "The loader reads the manifest and keeps each version. ".repeat(8);
    let answer = format!(
        "# Plugin system design\n\nWe chose entry points.\n\n{filler}Plugins register under shopcli.plugins."
    );
    repo.record("s1", "agent_response", &answer);
    repo.memlog(&["seal", "--all"]).ok();
    let shown = repo.memlog(&["show", "s1"]).ok().stdout();
    assert!(
        shown.contains("# Plugin system design We chose entry points."),
        "{shown}"
    );
    let found = repo
        .memlog(&["search", "shopcli.plugins", "--mode", "fts"])
        .ok()
        .stdout();
    let line = found.lines().next().unwrap_or_default();
    assert!(
        line.contains("…") && line.contains("shopcli.plugins"),
        "{found}"
    );
}

/// Bad input gets a message naming what is wrong and a failing exit code:
/// an empty prompt for `context` printed nothing and succeeded, an empty
/// SQL query said "bad parameter or other API misuse", and `memlog~999`
/// named gix's traversal (a field test).
#[test]
fn empty_or_out_of_range_input_is_named() {
    let repo = TestRepo::new();
    repo.record("s1", "note", "a first note");
    repo.memlog(&["seal", "--all"]).ok();
    for (args, said) in [
        (vec!["context", " "], "the prompt is empty"),
        (vec!["sql", ""], "the query is empty"),
        (vec!["diff", "memlog~999..memlog"], "fewer commits"),
    ] {
        let out = repo.memlog(&args);
        assert_eq!(out.code(), Some(1), "{args:?}");
        assert!(out.stderr().contains(said), "{args:?}: {}", out.stderr());
    }
}

/// `memlog show` takes the start of a session id, as `memlog log` prints
/// the id in full and a person types a few characters of it (a field
/// test); a start shared by several sessions names them.
#[test]
fn show_takes_the_start_of_a_session_id() {
    let repo = TestRepo::new();
    repo.record(
        "e25e7bd1-aaaa-4bbb-8ccc-000000000001",
        "note",
        "the first session",
    );
    repo.record(
        "e25e7bd1-aaaa-4bbb-8ccc-000000000002",
        "note",
        "the second session",
    );
    repo.record(
        "9f31c0de-aaaa-4bbb-8ccc-000000000003",
        "note",
        "the third session",
    );
    repo.memlog(&["seal", "--all"]).ok();
    let shown = repo.memlog(&["show", "9f31c0"]).ok().stdout();
    assert!(shown.contains("the third session"), "{shown}");
    let several = repo.memlog(&["show", "e25e7bd1"]);
    assert_eq!(several.code(), Some(1));
    assert!(
        several.stderr().contains("several sessions"),
        "{}",
        several.stderr()
    );
}

/// An import's sessions are listed newest first like any others, though
/// its commits share a second (a field test: a year imported from files
/// in name order was listed in that order, and `log -n 1` showed an
/// arbitrary session).
#[test]
fn imported_sessions_are_listed_newest_first() {
    let repo = TestRepo::new();
    let lines = [
        r#"{"session":"1111","ts":"2025-03-01T10:00:00Z","kind":"user_prompt","text":"oldest: march 2025"}"#,
        r#"{"session":"2222","ts":"2026-11-01T10:00:00Z","kind":"user_prompt","text":"newest: november 2026"}"#,
        r#"{"session":"3333","ts":"2025-07-01T10:00:00Z","kind":"user_prompt","text":"middle: july 2025"}"#,
    ];
    std::fs::write(repo.path().join("in.jsonl"), lines.join("\n") + "\n").unwrap();
    repo.memlog(&["import", "jsonl", "--no-index", "in.jsonl"])
        .ok();
    let log = repo.memlog(&["log"]).ok().stdout();
    let order: Vec<&str> = log
        .lines()
        .filter_map(|l| l.split_whitespace().nth(3))
        .collect();
    assert_eq!(order, ["2222", "3333", "1111"], "{log}");
}
