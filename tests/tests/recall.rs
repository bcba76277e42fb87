//! Recall that reaches the agent: what the UserPromptSubmit hook injects
//! for a paraphrased follow-up, with and without a warm `memlog watch`,
//! and that an unrelated prompt gets nothing. Uses the real model when it
//! is installed (`scripts/install-assets`, which CI runs).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use std::io::Write;
use std::process::Stdio;

use memlog_e2e::{Run, TestRepo, memlog_command, model_installed};
use serde_json::{Value, json};

/// Earlier sessions: one answered where the zebrafish telemetry lives;
/// the others are about unrelated work.
const HISTORY: &[(&str, &str, &str)] = &[
    (
        "s1",
        "user_prompt",
        "Where do we write the tank sensor readings?",
    ),
    (
        "s1",
        "agent_response",
        "The zebrafish telemetry lives in src/telemetry.rs; it appends one line per reading.",
    ),
    ("s2", "user_prompt", "Fix the flaky login test in CI"),
    (
        "s2",
        "agent_response",
        "The login test raced the session cache; it now waits for the cache to warm up.",
    ),
    (
        "s3",
        "user_prompt",
        "Bump the parser to handle UTF-16 input",
    ),
    (
        "s3",
        "agent_response",
        "The parser now detects a UTF-16 byte order mark and decodes before tokenizing.",
    ),
    ("s4", "user_prompt", "Why is the release build slow?"),
    (
        "s4",
        "agent_response",
        "Link-time optimisation on every crate; the release profile now uses thin LTO.",
    ),
];

fn history_repo() -> TestRepo {
    repo_of(HISTORY, |i| {
        format!("2026-01-0{}T10:00:{:02}Z", 1 + i / 2, i)
    })
}

/// A repository whose memory is `events` (session, kind, text), the i-th
/// at `ts(i)`, indexed; hooks get generous budgets.
fn repo_of(events: &[(&str, &str, &str)], ts: impl Fn(usize) -> String) -> TestRepo {
    let repo = TestRepo::new();
    std::fs::write(
        repo.path().join(".memlog.yaml"),
        "hooks:\n  inject_budget_ms: 20000\n  record_budget_ms: 20000\n",
    )
    .unwrap();
    let mut lines = String::new();
    for (i, (session, kind, text)) in events.iter().enumerate() {
        lines.push_str(
            &json!({"session": session, "ts": ts(i), "kind": kind, "text": text}).to_string(),
        );
        lines.push('\n');
    }
    std::fs::write(repo.path().join("history.jsonl"), lines).unwrap();
    // no background index: its embedder would race this `memlog index`
    repo.memlog(&["import", "jsonl", "--no-index", "history.jsonl"])
        .ok();
    repo.memlog(&["index"]).ok();
    repo
}

/// What `memlog hook UserPromptSubmit` injects for `prompt`.
fn injected(repo: &TestRepo, session: &str, prompt: &str) -> String {
    hook(
        repo,
        "UserPromptSubmit",
        json!({"session_id": session, "prompt": prompt}),
    )
}

/// Runs `memlog hook EVENT` with `fields` added to a payload of this
/// repository; returns the context it injects.
fn hook(repo: &TestRepo, event: &str, fields: Value) -> String {
    let mut payload = json!({
        "transcript_path": "/nonexistent/transcript.jsonl",
        "cwd": repo.path().display().to_string(),
        "hook_event_name": event,
    });
    for (k, v) in fields.as_object().unwrap() {
        payload[k] = v.clone();
    }
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
    let out = Run {
        output: child.wait_with_output().unwrap(),
    };
    assert_eq!(out.code(), Some(0), "{}", out.stderr());
    let text = out.stdout();
    if text.trim().is_empty() {
        return String::new();
    }
    let v: Value = serde_json::from_str(text.trim()).expect("hook output is JSON");
    v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

const FOLLOW_UP: &str = "Remind me: which file holds the zebrafish telemetry?";
const UNRELATED: &str = "What is a good name for a pet hamster?";

#[test]
fn a_paraphrased_follow_up_gets_the_answer_without_a_warm_process() {
    if !model_installed() {
        return;
    }
    let repo = history_repo();
    let context = injected(&repo, "live-1", FOLLOW_UP);
    assert!(context.contains("src/telemetry.rs"), "{context}");
    assert!(
        !context.contains("UTF-16"),
        "unrelated memory injected:\n{context}"
    );
    assert_eq!(injected(&repo, "live-2", UNRELATED), "");
    // `memlog context` answers as the hook does
    let cli = repo.memlog(&["context", "--json", FOLLOW_UP]).ok().json();
    assert!(
        cli["markdown"]
            .as_str()
            .unwrap()
            .contains("src/telemetry.rs")
    );
}

#[test]
fn with_memlog_watch_the_prompt_embedding_ranks_and_gates() {
    if !model_installed() {
        return;
    }
    let repo = history_repo();
    let _watch = memlog_e2e::start_watch(repo.path());
    // The watcher loads the model and index on its first request, which on
    // a loaded machine can outlast the hook's budget (the hook then answers
    // locally, as it should): one prompt first, so that the next is warm.
    injected(&repo, "warm-up", FOLLOW_UP);
    let context = injected(&repo, "live-1", FOLLOW_UP);
    assert!(context.contains("src/telemetry.rs"), "{context}");
    let recall = repo
        .cat()
        .into_iter()
        .find(|e| e["kind"] == "recall" && e["session"] == "live-1")
        .expect("a recall event");
    assert_eq!(recall["body"]["path"], "warm");
    assert_eq!(injected(&repo, "live-2", UNRELATED), "");
}

#[test]
fn after_compaction_the_session_gets_its_own_memories_back() {
    let repo = TestRepo::new();
    let session = "compacted-1";
    hook(
        &repo,
        "SessionStart",
        json!({"session_id": session, "source": "startup"}),
    );
    hook(
        &repo,
        "UserPromptSubmit",
        json!({"session_id": session, "prompt": "Keep the audit log in PostgreSQL 16, never in SQLite"}),
    );
    repo.memlog(&[
        "note",
        "--session",
        session,
        "Decided: audit rows are append-only; corrections are new rows.",
    ])
    .ok();
    hook(
        &repo,
        "PreCompact",
        json!({"session_id": session, "trigger": "auto"}),
    );
    let context = hook(
        &repo,
        "SessionStart",
        json!({"session_id": session, "source": "compact"}),
    );
    assert!(context.contains("before compaction"), "{context}");
    assert!(context.contains("PostgreSQL 16"), "{context}");
    assert!(context.contains("append-only"), "{context}");
    // a new session gets the usual briefing, not another session's recap
    let fresh = hook(
        &repo,
        "SessionStart",
        json!({"session_id": "other-2", "source": "startup"}),
    );
    assert!(!fresh.contains("before compaction"), "{fresh}");
}

/// A follow-up about a long answer's conclusion gets that conclusion, not
/// the answer's opening paragraphs (found by a field test: a 16 KB audit
/// report was injected as its heading).
#[test]
fn a_long_answer_is_recalled_by_the_passage_the_prompt_asks_about() {
    let repo = TestRepo::new();
    let filler: String = (0..60)
        .map(|i| {
            format!(
                "Section {i} of the billing audit lists queue depth, webhook retries and \
                 ledger exports for tenant group {i}. "
            )
        })
        .collect();
    let answer = format!(
        "## Billing audit (marmot report)\n\n{filler}\n\nConclusion: the marmot audit found that \
         compute_invoice_total rounds after tax, which loses a cent on split invoices."
    );
    repo.record("audit", "user_prompt", "run the marmot audit of billing");
    repo.record("audit", "agent_response", &answer);
    repo.memlog(&["seal", "--all"]).ok();
    let context = injected(
        &repo,
        "later",
        "What did the marmot audit conclude about rounding in compute_invoice_total?",
    );
    assert!(
        context.contains("Billing audit (marmot report)")
            && context.contains("rounds after tax, which loses a cent on split invoices"),
        "{context}"
    );
}

/// After compaction of a resumed session, the recap holds the part before
/// the resume too, which its first end sealed (found by a field test: the
/// recap was empty for a `claude --resume`d session).
#[test]
fn after_compaction_a_resumed_session_gets_its_sealed_part_back() {
    let repo = TestRepo::new();
    let session = "resumed-1";
    hook(
        &repo,
        "UserPromptSubmit",
        json!({"session_id": session, "prompt": "Keep the audit log in PostgreSQL 16, never in SQLite"}),
    );
    hook(
        &repo,
        "SessionEnd",
        json!({"session_id": session, "reason": "other"}),
    );
    hook(
        &repo,
        "SessionStart",
        json!({"session_id": session, "source": "resume"}),
    );
    hook(
        &repo,
        "UserPromptSubmit",
        json!({"session_id": session, "prompt": "Now add the retention job"}),
    );
    let context = hook(
        &repo,
        "SessionStart",
        json!({"session_id": session, "source": "compact"}),
    );
    assert!(context.contains("before compaction"), "{context}");
    assert!(
        context.contains("PostgreSQL 16") && context.contains("retention job"),
        "{context}"
    );
}

/// A turn with tool calls: what the agent said before its first call
/// ("Reproducing.") came right after the prompt, took the prompt's
/// relevance, and was injected instead of the turn's answer (a field
/// test: a fifth of the lines injected over a month of coding sessions,
/// and the right session shown without its answer). The prompt's answer
/// is the turn's last one, and what the briefing says came of the
/// session.
#[test]
fn a_prompt_recalled_brings_its_turns_answer_not_what_was_said_before_a_tool_call() {
    if !model_installed() {
        eprintln!("skipped: the embedding model is not installed (scripts/install-assets)");
        return;
    }
    let turns: &[(&str, &str, &str)] = &[
        (
            "s1",
            "user_prompt",
            "Why does the nightly ledger export drop rows?",
        ),
        ("s1", "agent_response", "Reproducing."),
        (
            "s1",
            "tool_observation",
            "ran exporter on fixtures: 41 rows in, 38 rows out",
        ),
        ("s1", "agent_response", "Counting the skipped ones."),
        (
            "s1",
            "tool_observation",
            "3 rows skipped, all with negative amounts",
        ),
        (
            "s1",
            "agent_response",
            "Refunds carry negative amounts and the exporter filtered them as invalid; signed amounts are now kept.",
        ),
        (
            "s2",
            "user_prompt",
            "Add a --json flag to the report command",
        ),
        (
            "s2",
            "agent_response",
            "The report command now prints JSON with --json.",
        ),
        ("s3", "user_prompt", "Rename the budget module"),
        (
            "s3",
            "agent_response",
            "budget.py is now budgets.py; imports updated.",
        ),
    ];
    let repo = repo_of(turns, |i| format!("2026-01-01T10:00:{i:02}Z"));
    let context = injected(&repo, "asker", "The nightly ledger export drops rows again");
    let log =
        std::fs::read_to_string(repo.path().join(".git/memlog/hooks.log")).unwrap_or_default();
    assert!(
        context.contains("signed amounts are now kept"),
        "{context}\n{log}"
    );
    assert!(!context.contains("Reproducing."), "{context}");
    // the briefing says what came of each recent session, not only what
    // opened it
    let brief = hook(
        &repo,
        "SessionStart",
        json!({"session_id": "next", "source": "startup"}),
    );
    assert!(
        brief.contains("drop rows? → Refunds carry negative amounts"),
        "{brief}"
    );
}

/// A call of memlog's own tools keeps none of its words in the log, so it
/// is no memory: the prompt block gave it a line saying only "[withheld:
/// memlog's own memory …]" (a field test).
#[test]
fn a_call_of_memlogs_own_tools_is_never_injected() {
    let repo = history_repo();
    hook(
        &repo,
        "PostToolUse",
        json!({"session_id": "earlier", "tool_name": "Bash",
               "tool_input": {"command": "memlog search 'which file holds the zebrafish telemetry'"},
               "tool_response": {"stdout": "src/telemetry.rs", "stderr": "", "interrupted": false},
               "tool_use_id": "toolu_1"}),
    );
    // a prompt that names memlog's search, as the agent's call did
    let block = injected(
        &repo,
        "now",
        "Search memory with memlog search: which file holds the zebrafish telemetry?",
    );
    assert!(block.contains("src/telemetry.rs"), "{block}");
    assert!(!block.contains("withheld"), "{block}");
}
