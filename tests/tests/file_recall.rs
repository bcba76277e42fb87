//! File-aware recall (issue 31): before Claude Code reads or edits a file,
//! or runs a command again, the PreToolUse hook injects what memory knows
//! about it — a failure there and its fix, cited by id — once per session,
//! and nothing for a file memory knows nothing about.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use memlog_e2e::TestRepo;
use serde_json::{Value, json};

fn hook(repo: &TestRepo, event: &str, session: &str, payload: Value) -> String {
    repo.hook(event, session, payload)
}

fn injected(out: &str) -> Option<String> {
    if out.is_empty() {
        return None;
    }
    let v: Value = serde_json::from_str(out).unwrap();
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "PreToolUse");
    v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .map(str::to_string)
}

fn pre_tool(repo: &TestRepo, session: &str, tool: &str, input: Value) -> Option<String> {
    injected(&hook(
        repo,
        "PreToolUse",
        session,
        json!({"tool_name": tool, "tool_input": input}),
    ))
}

#[test]
fn a_read_of_a_file_that_failed_and_was_fixed_injects_the_fix_once() {
    let repo = TestRepo::new();
    std::fs::write(
        repo.path().join(".memlog.yaml"),
        "hooks:\n  record_budget_ms: 10000\n  inject_budget_ms: 10000\n",
    )
    .unwrap();
    let file = |p: &str| repo.path().join(p).display().to_string();
    // an earlier session: the export tests fail in src/invoice.rs, an edit
    // there fixes them
    let s1 = "earlier";
    hook(&repo, "SessionStart", s1, json!({"source": "startup"}));
    hook(
        &repo,
        "UserPromptSubmit",
        s1,
        json!({"prompt": "make the export tests pass"}),
    );
    hook(
        &repo,
        "PostToolUse",
        s1,
        json!({"tool_name": "Bash",
        "tool_input": {"command": "cargo test -p export"},
        "tool_response": {"stdout": "", "stderr": "error[E0308]: mismatched types in src/invoice.rs", "exit_code": 101}}),
    );
    hook(
        &repo,
        "PostToolUse",
        s1,
        json!({"tool_name": "Read",
        "tool_input": {"file_path": file("src/unrelated.rs")},
        "tool_response": {"type": "text", "file": {"filePath": file("src/unrelated.rs"), "content": "fn x() {}", "numLines": 1}}}),
    );
    hook(
        &repo,
        "PostToolUse",
        s1,
        json!({"tool_name": "Edit",
        "tool_input": {"file_path": file("src/invoice.rs"), "old_string": "500u32", "new_string": "500usize"},
        "tool_response": {"filePath": file("src/invoice.rs")}}),
    );
    hook(
        &repo,
        "PostToolUse",
        s1,
        json!({"tool_name": "Bash",
        "tool_input": {"command": "cargo test -p export"},
        "tool_response": {"stdout": "test result: ok. 12 passed", "stderr": "", "exit_code": 0}}),
    );
    hook(&repo, "SessionEnd", s1, json!({"reason": "exit"}));
    repo.memlog(&["index"]).ok();
    let events = repo.session_events(s1);
    let id_of = |pred: &dyn Fn(&Value) -> bool| -> String {
        events.iter().find(|e| pred(e)).unwrap()["id"]
            .as_str()
            .unwrap()[..12]
            .to_string()
    };
    let failure = id_of(&|e| e["body"]["success"] == false);
    let fix = id_of(&|e| e["body"]["tool"] == "Edit");

    // a later session reads the file: the failure and its fix, cited
    let s2 = "later";
    hook(&repo, "SessionStart", s2, json!({"source": "startup"}));
    let context = pre_tool(
        &repo,
        s2,
        "Read",
        json!({"file_path": file("src/invoice.rs")}),
    )
    .expect("the fix is injected");
    assert!(context.contains("src/invoice.rs"), "{context}");
    assert!(
        context.contains(&format!("[{failure}] failure")),
        "{context}"
    );
    assert!(
        context.contains(&format!("edited src/invoice.rs [{fix}]")),
        "{context}"
    );
    // about 300 tokens at most (four bytes a token)
    assert!(context.len() <= 1200, "{} bytes", context.len());
    // once per file per session
    assert_eq!(
        pre_tool(
            &repo,
            s2,
            "Edit",
            json!({"file_path": file("src/invoice.rs"), "old_string": "a", "new_string": "b"})
        ),
        None
    );
    // an unrelated file (read before, nothing learned): nothing
    assert_eq!(
        pre_tool(
            &repo,
            s2,
            "Read",
            json!({"file_path": file("src/unrelated.rs")})
        ),
        None
    );
    assert_eq!(
        pre_tool(&repo, s2, "Grep", json!({"pattern": "invoice"})),
        None
    );
    // the command that failed before: its failure and what fixed it
    let command = pre_tool(
        &repo,
        s2,
        "Bash",
        json!({"command": "cargo test -p export"}),
    )
    .expect("the command's failure is injected");
    assert!(
        command.contains(&format!("[{failure}] failure")),
        "{command}"
    );
    assert!(command.contains("then it passed"), "{command}");
    // and another command nothing
    assert_eq!(
        pre_tool(&repo, s2, "Bash", json!({"command": "ls -la"})),
        None
    );
    // what was injected is a recall event, for credit and review
    let recalls: Vec<Value> = repo
        .session_events(s2)
        .into_iter()
        .filter(|e| e["kind"] == "recall" && e["body"]["hook"] == "PreToolUse")
        .collect();
    assert_eq!(recalls.len(), 2, "{recalls:#?}");
}
