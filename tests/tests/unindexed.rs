//! A missing or stale index is never a reason for silence: the hooks
//! answer from the index plus what the log holds beyond it (a session
//! sealed a moment ago, with no `memlog index` run by anyone), say in
//! hooks.log why they injected nothing, `install` and `import` leave the
//! index built, `memlog doctor` calls an index never built "not built
//! yet", and a memory not embedded yet is found first by search and MCP.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use std::path::Path;

use memlog_e2e::{McpProcess, TestRepo, memlog_command, model_installed};
use serde_json::{Value, json};

const ANSWER: &str =
    "The zebrafish telemetry lives in src/telemetry.rs; it appends one line per reading.";

/// A session of hooks: a prompt, its answer (through Stop), then
/// SessionEnd, which seals it (and starts a background `memlog index`).
fn first_session(repo: &TestRepo) {
    for (event, extra) in [
        ("SessionStart", json!({"source": "startup"})),
        (
            "UserPromptSubmit",
            json!({"prompt": "Where do we write the tank sensor readings?"}),
        ),
        (
            "Stop",
            json!({"stop_hook_active": false, "last_assistant_message": ANSWER}),
        ),
        ("SessionEnd", json!({"reason": "other"})),
    ] {
        repo.hook(event, "s1", extra);
    }
}

fn hooks_log(repo: &TestRepo) -> String {
    std::fs::read_to_string(repo.path().join(".git/memlog/hooks.log")).unwrap_or_default()
}

#[test]
fn the_next_session_gets_the_last_one_with_no_index_ever_built() {
    let repo = TestRepo::with_generous_budgets();
    first_session(&repo);
    // whatever the background index has done by now, start from none
    let index = repo.path().join(".git/memlog/index");
    let _ = std::fs::remove_dir_all(&index);

    let start = repo.hook("SessionStart", "s2", json!({"source": "startup"}));
    assert!(
        start.contains("s1") && start.contains("tank sensor readings"),
        "the briefing lists the session sealed a moment ago: {}",
        start
    );
    let _ = std::fs::remove_dir_all(&index);
    let prompt = repo.hook(
        "UserPromptSubmit",
        "s2",
        json!({"prompt": "Remind me: where does the zebrafish telemetry live?"}),
    );
    assert!(
        prompt.contains("lives in src/telemetry.rs"),
        "the answer of the session sealed a moment ago: {}\nhooks.log:\n{}",
        prompt,
        hooks_log(&repo)
    );
}

#[test]
fn hooks_log_why_nothing_was_injected() {
    let repo = TestRepo::with_generous_budgets();
    let start = repo.hook("SessionStart", "s0", json!({"source": "startup"}));
    assert_eq!(start, "");
    first_session(&repo);
    let unrelated = repo.hook(
        "UserPromptSubmit",
        "s2",
        json!({"prompt": "What is a good name for a pet hamster?"}),
    );
    assert_eq!(unrelated, "");
    let log = hooks_log(&repo);
    assert!(
        log.contains("SessionStart") && log.contains("nothing to brief"),
        "{log}"
    );
    assert!(
        log.lines()
            .any(|l| l.contains("UserPromptSubmit") && l.contains("nothing injected")),
        "{log}"
    );

    // over budget: said too
    std::fs::write(
        repo.path().join(".memlog.yaml"),
        "hooks:\n  inject_budget_ms: 0\n",
    )
    .unwrap();
    repo.hook(
        "UserPromptSubmit",
        "s3",
        json!({"prompt": "Where does the zebrafish telemetry live?"}),
    );
    assert!(hooks_log(&repo).contains("over the 0 ms budget"));
}

fn doctor_index(dir: &Path) -> String {
    let out = memlog_command(dir)
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["index"].as_str().unwrap().to_string()
}

#[test]
fn doctor_says_not_built_yet_and_install_and_import_build_it() {
    let repo = TestRepo::new();
    let index = doctor_index(repo.path());
    assert!(
        index.starts_with("not built yet") && index.contains("memlog index"),
        "{index}"
    );
    assert!(!index.contains("damaged"), "{index}");

    let install = repo.memlog(&["install", "claude"]).ok();
    assert!(
        install.stdout().contains("index built"),
        "{}",
        install.stdout()
    );
    assert_eq!(doctor_index(repo.path()), "up to date");

    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/demo/sessions.jsonl");
    let import = repo
        .memlog(&["import", "jsonl", demo.to_str().unwrap()])
        .ok();
    assert!(
        import.stdout().contains("new events indexed"),
        "{}",
        import.stdout()
    );
    assert_eq!(doctor_index(repo.path()), "up to date");
    let json = repo
        .memlog(&["import", "jsonl", "--json", demo.to_str().unwrap()])
        .ok()
        .json();
    assert_eq!(json["index"]["rebuilt"], false);
}

/// The demo memory with its vectors, and a note saved after them: full
/// text has indexed it, the model has not embedded it.
fn embedded_memory_and_a_new_note(note: &str) -> Option<TestRepo> {
    if !model_installed() {
        return None;
    }
    let repo = TestRepo::new();
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/demo/sessions.jsonl");
    // no background index: its embedder would race this `memlog index`
    repo.memlog(&["import", "jsonl", "--no-index", demo.to_str().unwrap()])
        .ok();
    repo.memlog(&["index"]).ok();
    repo.memlog(&["note", note]).ok();
    Some(repo)
}

#[test]
fn a_note_not_embedded_yet_is_not_buried_under_embedded_events() {
    let note = "The checkout discount service retries are capped at two by the gateway";
    let Some(repo) = embedded_memory_and_a_new_note(note) else {
        return;
    };
    let hits = repo
        .memlog(&["search", "--json", "checkout discount retries gateway"])
        .ok()
        .json();
    let first = &hits["hits"][0];
    assert_eq!(first["text"], note, "{hits:#}");
    assert!(
        first["parts"]["semantic"].is_null(),
        "not embedded: {first}"
    );
}

#[test]
fn mcp_search_finds_what_memory_remember_just_saved() {
    let note = "Checkout coupons are validated by the pricing gateway before tax";
    let Some(repo) = embedded_memory_and_a_new_note("an unrelated note about lunch") else {
        return;
    };
    let mut mcp = McpProcess::start(repo.path());
    // the server's index and model are warm before the memory arrives
    mcp.tool("memory_search", json!({"query": "coupon"}));
    let saved = mcp.tool("memory_remember", json!({"text": note}));
    let found = mcp.tool(
        "memory_search",
        json!({"query": "pricing gateway coupon validation", "limit": 3}),
    );
    assert_eq!(found["hits"][0]["id"], saved["id"], "{found:#}");
    mcp.close();
}

/// Sessions running side by side: one's question being answered right now
/// is no memory for the other (it near-matched the other's prompt, carried
/// the gate, and brought in whatever shared a word with it; field test 6),
/// whether the index holds it yet or not. Once answered, the turn is
/// memory like any other.
#[test]
fn a_live_sessions_question_in_progress_is_not_given_to_the_session_beside_it() {
    let repo = TestRepo::with_generous_budgets();
    repo.hook(
        "UserPromptSubmit",
        "a",
        json!({"prompt": "run the linter on the api crate"}),
    );
    for indexed in [false, true] {
        if indexed {
            repo.memlog(&["index"]).ok();
        }
        let beside = repo.hook(
            "UserPromptSubmit",
            "b",
            json!({"prompt": "run the linter on the web crate"}),
        );
        assert!(
            !beside.contains("api crate"),
            "indexed {indexed}: {beside}\n{}",
            hooks_log(&repo)
        );
    }
    repo.hook(
        "Stop",
        "a",
        json!({"stop_hook_active": false,
            "last_assistant_message": "The api crate's linter passes: clippy found nothing."}),
    );
    let later = repo.hook(
        "UserPromptSubmit",
        "c",
        json!({"prompt": "did the linter on the api crate pass?"}),
    );
    assert!(later.contains("clippy found nothing"), "{later}");
}

/// A store this user cannot write (an immutable folder here; a read-only
/// mount or another user's clone in the field) is not a damaged index:
/// `memlog doctor` says why it cannot be opened, and reads still answer
/// from the log.
#[test]
fn doctor_on_a_store_it_cannot_write_says_so_and_reads_still_answer() {
    let repo = TestRepo::new();
    repo.memlog(&["note", "the deploy key rotates monthly"])
        .ok();
    repo.memlog(&["index"]).ok();
    repo.memlog(&["note", "invoices round half up in billing"])
        .ok();
    let Some(_immutable) = memlog_e2e::Immutable::set(&repo.path().join(".git/memlog")) else {
        eprintln!("skipped: chattr +i does not work here");
        return;
    };
    let doctor = repo.memlog(&["doctor", "--json"]).json();
    let index = doctor["index"].as_str().unwrap_or_default();
    assert!(index.starts_with("cannot be opened here"), "{doctor}");
    assert!(index.contains("not writable"), "{doctor}");
    assert!(!index.contains("damaged"), "{doctor}");
    // nor advised to run `memlog index`, which cannot run there
    let text = repo.memlog(&["doctor"]).stdout();
    assert!(!text.contains("memlog index"), "{text}");
    let found = repo.memlog(&["search", "invoices", "--json"]).ok().json();
    assert!(found.to_string().contains("round half up"), "{found}");
}

/// A full disk is no damaged index either: reads answer from the index as
/// it is and the log beyond it (field test 12b: `memlog log` and `memlog
/// search` failed with the full-text index's raw "StorageFull"). Needs a
/// small tmpfs, so root; skipped otherwise.
#[cfg(target_os = "linux")]
#[test]
fn reads_answer_on_a_full_disk() {
    let mount = tempfile::tempdir().unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=8m", "tmpfs"])
        .arg(mount.path())
        .output()
        .is_ok_and(|o| o.status.success());
    if !mounted {
        eprintln!("skipped: cannot mount a tmpfs here (needs root)");
        return;
    }
    struct Unmount<'a>(&'a std::path::Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount")
                .arg("-l")
                .arg(self.0)
                .status();
        }
    }
    let _unmount = Unmount(mount.path());
    let dir = mount.path().join("r");
    std::fs::create_dir(&dir).unwrap();
    memlog_e2e::run(memlog_e2e::git_command(&dir).args(["init", "-q", "-b", "main"])).ok();
    let memlog = |args: &[&str]| memlog_e2e::run(memlog_command(&dir).args(args));
    memlog(&["note", "the deploy key rotates monthly"]).ok();
    memlog(&["index", "--no-vectors"]).ok();
    std::fs::write(
        dir.join("later.jsonl"),
        "{\"session\":\"later\",\"ts\":\"2026-01-02T10:00:00Z\",\"kind\":\"note\",\"text\":\"invoices round half up in billing\"}\n",
    )
    .unwrap();
    memlog(&["import", "jsonl", "--no-index", "later.jsonl"]).ok();
    // the disk is full
    let _ = std::process::Command::new("dd")
        .args(["if=/dev/zero", "bs=64k"])
        .arg(format!("of={}", mount.path().join("fill").display()))
        .output();
    let found = memlog(&["search", "invoices", "--json"]).ok().json();
    assert!(found.to_string().contains("round half up"), "{found}");
    let log = memlog(&["log"]).ok().stdout();
    assert!(log.contains("later"), "{log}");
    // a note that cannot be written leaves no empty journal behind
    let note = memlog(&["note", "a note on a full disk"]);
    assert_ne!(note.code(), Some(0));
    let journals: Vec<_> = std::fs::read_dir(dir.join(".git/memlog/journal"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(journals.is_empty(), "{journals:?}");
}
