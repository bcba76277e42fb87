//! The real Codex CLI's tool calls as memlog records them, offline against
//! a scripted Responses API (see codex_cli.rs): a failed command with its
//! exit code, edits made with `apply_patch` as Codex's tool and through the
//! shell (which fires no PostToolUse), and a subagent recorded in its
//! parent's session; each time, an import of Codex's own session files
//! finds the same calls and adds nothing. And file-aware recall: a file
//! Codex reads through its shell brings what failed there. Skipped (with a message) when
//! `scripts/install-assets` has not installed the CLI.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use memlog_e2e::{
    AgentCli, CodexCli, TestRepo, assert_invoice_recall, invoice_repo, memlog_command,
    read_invoice_then_notes, repo_with_notes, run,
};
use serde_json::{Value, json};

const NOTES: &str = "The release freeze is Wednesday noon.\n";

/// The patch Codex's freeform tool gets: the freeze moves.
const PATCH: &str = "*** Begin Patch\n*** Update File: notes.txt\n@@\n-The release freeze is Wednesday noon.\n+The release freeze is Thursday noon.\n*** End Patch\n";

/// The same kind of edit through the shell, as models often write it.
const SHELL_PATCH: &str = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: plan.md\n+Ship after the freeze.\n*** End Patch\nEOF\n";

fn tool<'e>(events: &'e [Value], id: &str) -> &'e Value {
    events
        .iter()
        .find(|e| e["kind"] == "tool_observation" && e["body"]["tool_use_id"] == id)
        .unwrap_or_else(|| panic!("no tool call {id} in {events:#?}"))
}

/// Imports Codex's session files into a fresh repository and returns its
/// events: what an import alone makes of them.
fn imported_alone(codex: &CodexCli) -> (Value, Vec<Value>) {
    let fresh = TestRepo::new();
    let files: Vec<String> = codex
        .rollouts()
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let mut args = vec!["import", "codex", "--json"];
    args.extend(files.iter().map(String::as_str));
    let report = fresh.memlog(&args).ok().json();
    (report, fresh.cat())
}

#[test]
fn a_failed_command_and_edits_are_recorded_as_they_happened() {
    let repo = repo_with_notes(NOTES);
    let Some(codex) = CodexCli::find(&repo) else {
        return;
    };
    // gpt-5.5: Codex offers its freeform apply_patch tool.
    let codex = codex.with_model("gpt-5.5");
    let script = json!({
        "turns": [
            {"text": "Checking the old notes.",
             "tool_use": {"name": "exec_command", "input": {"cmd": "cat old-notes.txt"}}},
            {"content": [{"type": "text", "text": "Moving the freeze."},
                         {"type": "custom_tool_use", "name": "apply_patch", "input": PATCH}]},
            {"text": "Writing the plan.",
             "tool_use": {"name": "exec_command", "input": {"cmd": SHELL_PATCH}}},
            {"text": "The freeze is Thursday now."}
        ],
        "side_text": "Notes"
    });
    let run = codex.run("Move the freeze to Thursday", &script);
    let notes = std::fs::read_to_string(repo.path().join("notes.txt")).unwrap();
    assert!(notes.contains("Thursday"), "{notes}");
    assert!(repo.path().join("plan.md").exists());
    assert!(
        !run.run.stdout().contains("clamping SessionEnd"),
        "Codex warned about memlog's SessionEnd timeout: {}",
        run.run.stdout()
    );

    let events = repo.session_events(&run.session_id);
    // The command failed: its real exit code, not the success the
    // PostToolUse payload suggests.
    let failed = tool(&events, "toolu_scripted_00_01");
    assert_eq!(failed["body"]["tool"], "Bash");
    assert_eq!(failed["body"]["success"], false, "{failed}");
    assert_eq!(failed["body"]["metadata"]["exit_code"], 1, "{failed}");
    assert_eq!(failed["body"]["error"], "exit code 1");
    assert!(
        failed["body"]["output"]
            .as_str()
            .unwrap()
            .contains("No such file"),
        "{failed}"
    );
    // The edit with Codex's tool (PostToolUse), with its file and change.
    let edit = tool(&events, "toolu_scripted_01_01");
    assert_eq!(edit["body"]["tool"], "apply_patch");
    assert_eq!(edit["body"]["success"], true, "{edit}");
    assert_eq!(edit["meta"]["hook"], "PostToolUse");
    let notes_path = std::fs::canonicalize(repo.path())
        .unwrap()
        .join("notes.txt");
    assert_eq!(
        edit["body"]["metadata"]["file_path"],
        notes_path.display().to_string(),
        "{edit}"
    );
    assert_eq!(edit["body"]["metadata"]["changes"][0]["kind"], "update");
    let diff = edit["body"]["output"].as_str().unwrap();
    assert!(
        diff.contains("-The release freeze is Wednesday noon.")
            && diff.contains("+The release freeze is Thursday noon."),
        "{diff}"
    );
    // The edit through the shell, which no PostToolUse reported: recorded
    // at Stop from the rollout.
    let shell_edit = tool(&events, "toolu_scripted_02_01");
    assert_eq!(shell_edit["body"]["tool"], "apply_patch");
    assert_eq!(shell_edit["meta"]["from_transcript"], true, "{shell_edit}");
    assert_eq!(shell_edit["body"]["metadata"]["changes"][0]["kind"], "add");
    assert!(
        shell_edit["body"]["metadata"]["file_path"]
            .as_str()
            .unwrap()
            .ends_with("plan.md"),
        "{shell_edit}"
    );

    // Codex's own session file holds nothing more.
    let rollout = codex.rollout(&run.session_id);
    let report = repo
        .memlog(&["import", "codex", "--json", rollout.to_str().unwrap()])
        .ok()
        .json();
    assert_eq!(report["added"], 0, "{report}");
    // And read alone, it gives the same calls, failure and edits.
    let (report, alone) = imported_alone(&codex);
    assert_eq!(report["files"][0]["malformed_lines"], 0, "{report}");
    for id in [
        "toolu_scripted_00_01",
        "toolu_scripted_01_01",
        "toolu_scripted_02_01",
    ] {
        let (hooked, read) = (tool(&events, id), tool(&alone, id));
        for field in ["tool", "success", "metadata", "input"] {
            assert_eq!(hooked["body"][field], read["body"][field], "{id} {field}");
        }
    }
    let prompts: Vec<&Value> = alone
        .iter()
        .filter(|e| e["kind"] == "user_prompt")
        .collect();
    assert_eq!(prompts.len(), 1);
    assert_eq!(prompts[0]["body"]["text"], "Move the freeze to Thursday");
}

#[test]
fn a_subagent_is_recorded_in_its_parents_session() {
    let repo = repo_with_notes(NOTES);
    let Some(codex) = CodexCli::find(&repo) else {
        return;
    };
    // The main agent waits (bounded) until memlog's SubagentStop hook has
    // recorded the subagent's answer, as wait_agent would with an id it
    // cannot know in advance: the subagent's rollout says task_complete
    // before that hook has run, and under load the session then ended
    // with the hook still at work.
    let wait = "for i in $(seq 300); do grep -l '\"hook\":\"SubagentStop\"' .git/memlog/journal/*.jsonl >/dev/null 2>&1 && break; sleep 0.2; done";
    let script = json!({
        "turns": [
            {"when_contains": "Delegate", "text": "Delegating.",
             "tool_use": {"name": "spawn_agent", "namespace": "multi_agent_v1",
                          "input": {"message": "SUBTASK: count the lines of notes.txt"}}},
            {"when_contains": "agent_id", "text": "Waiting.",
             "tool_use": {"name": "exec_command", "input": {"cmd": wait}}},
            {"when_contains": "SUBTASK", "text": "Counting.",
             "tool_use": {"name": "exec_command", "input": {"cmd": "wc -l notes.txt"}}},
            {"when_contains": "notes.txt\\n", "text": "notes.txt has one line."},
            {"text": "The notes have one line."}
        ],
        "side_text": "Notes"
    });
    let session = codex.run("Delegate counting the notes' lines", &script);
    let events = repo.session_events(&session.session_id);
    let sub: Vec<&Value> = events
        .iter()
        .filter(|e| e["meta"]["sidechain"] == true)
        .collect();
    let child = sub
        .first()
        .unwrap_or_else(|| panic!("no subagent event in {events:#?}"));
    let agent_id = child["meta"]["agent_id"].as_str().unwrap().to_string();
    assert_ne!(agent_id, session.session_id);
    assert!(
        sub.iter()
            .all(|e| e["meta"]["agent_id"] == agent_id.as_str())
    );
    let sub_events: Vec<Value> = sub.iter().map(|e| (*e).clone()).collect();
    memlog_e2e::assert_kinds(
        &sub_events,
        &["user_prompt", "tool_observation", "agent_response"],
    );
    // what it said before its call, read from its rollout, then its answer
    let said: Vec<&str> = sub
        .iter()
        .filter(|e| e["kind"] == "agent_response")
        .filter_map(|e| e["body"]["text"].as_str())
        .collect();
    assert_eq!(said, ["Counting.", "notes.txt has one line."], "{sub:#?}");
    let answer = sub
        .iter()
        .find(|e| e["body"]["text"] == "notes.txt has one line.")
        .unwrap();
    assert_eq!(answer["meta"]["hook"], "SubagentStop");

    // Both rollouts import into the one session, adding nothing.
    let report = run(memlog_command(repo.path())
        .env("CODEX_HOME", codex.codex_home())
        .args(["import", "codex", "--json"]))
    .ok()
    .json();
    let files = report["files"].as_array().unwrap();
    assert_eq!(files.len(), 2, "{report}");
    assert!(
        files
            .iter()
            .all(|f| f["session"] == session.session_id.as_str()),
        "{report}"
    );
    assert_eq!(report["added"], 0, "{report}");
    // Read alone, the subagent's file is its parent's session too.
    let (_, alone) = imported_alone(&codex);
    assert!(
        alone
            .iter()
            .all(|e| e["session"] == session.session_id.as_str())
    );
    let prompt = alone
        .iter()
        .find(|e| e["body"]["text"] == "SUBTASK: count the lines of notes.txt")
        .unwrap();
    assert_eq!(prompt["meta"]["agent_id"], agent_id.as_str());
    assert_eq!(prompt["meta"]["sidechain"], true);
}

/// File-aware recall through the real Codex CLI (issue 31): an earlier
/// session failed on src/invoice.rs and fixed it; Codex reads the file
/// through its shell (`sed -n`), and memlog's PreToolUse hook gives what
/// memory knows about it — the failure and the fix, cited by id — which
/// Codex hands to the model with the call's result. A read of another file
/// gets nothing.
#[test]
fn a_file_codex_reads_through_its_shell_brings_what_failed_there() {
    let (repo, _) = invoice_repo(NOTES);
    let Some(codex) = CodexCli::find(&repo) else {
        return;
    };
    let (failure, fix, _lock) = repo.failed_and_fixed_session();
    let run = codex.run(
        "Look at the invoice code and the notes.",
        &read_invoice_then_notes(
            &[(
                "exec_command",
                json!({"cmd": "sed -n '1,80p' src/invoice.rs"}),
            )],
            ("exec_command", json!({"cmd": "cat notes.txt"})),
        ),
    );
    assert_invoice_recall(&repo, &run, ("PreToolUse", "PreToolUse"), (&failure, &fix));
}
