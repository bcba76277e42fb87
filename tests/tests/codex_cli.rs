//! The real Codex CLI, offline against a scripted Responses API on
//! 127.0.0.1, with memlog's hooks installed by `memlog install codex`:
//! capture of a session with a tool call, memory shared with Claude Code
//! both ways, an import of Codex's own session file that adds nothing,
//! its plan (`update_plan`) as memlog's tasks, and hooks Codex does not run
//! until the user trusts them, which `memlog doctor` tells. Skipped (with a message) when `scripts/install-assets`
//! has not installed the CLIs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use memlog_e2e::{
    AgentCli, ClaudeCli, CodexCli, DECIDED, McpProcess, PLAN_STEPS, assert_plan_tasks,
    captured_session, memlog_command, plan_the_migration, plan_twice, repo_with_notes, run,
};
use serde_json::{Value, json};

/// What `notes.txt` says, for the scripted model to read.
const NOTES: &str = "The release freeze is Wednesday noon.\n";

/// Runs `cat notes.txt` through Codex's shell tool, then answers.
fn cat_and_answer(answer: &str) -> Value {
    json!({
        "turns": [
            {"text": "Reading the notes.",
             "tool_use": {"name": "exec_command", "input": {"cmd": "cat notes.txt"}}},
            {"text": answer}
        ],
        "side_text": "Notes"
    })
}

#[test]
fn a_codex_session_is_captured_sealed_and_not_imported_twice() {
    let repo = repo_with_notes(NOTES);
    let Some(codex) = CodexCli::find(&repo) else {
        return;
    };
    let answer = "The freeze is Wednesday noon.";
    let session = codex.run("When is the release freeze?", &cat_and_answer(answer));
    assert!(
        session.requests_contain("The release freeze is Wednesday noon."),
        "the command's output reached the model"
    );

    let (events, tool) = captured_session(
        &repo,
        &session.session_id,
        "When is the release freeze?",
        "Bash",
        "Wednesday noon",
    );
    assert_eq!(tool["body"]["input"]["command"], "cat notes.txt");
    // what it said before its call too, read from the rollout at Stop: an
    // import keeps it out of a hook-captured turn (field test 12a)
    let said: Vec<&str> = events
        .iter()
        .filter(|e| e["kind"] == "agent_response")
        .filter_map(|e| e["body"]["text"].as_str())
        .collect();
    assert_eq!(said, ["Reading the notes.", answer]);
    let version = codex.version().rsplit(' ').next().unwrap();
    for e in &events {
        assert_eq!(e["meta"]["client"], "codex", "{e}");
        assert_eq!(e["meta"]["agent_version"], version, "{e}");
    }
    assert_eq!(repo.memlog_commits().len(), 1, "sealed as one commit");

    // Codex's own session file adds nothing to what the hooks captured.
    let rollout = codex.rollout(&session.session_id);
    let report = repo
        .memlog(&["import", "codex", "--json", rollout.to_str().unwrap()])
        .ok()
        .json();
    assert_eq!(report["files"][0]["session"], session.session_id.as_str());
    assert!(
        report["files"][0]["events"].as_u64().unwrap() >= 3,
        "{report}"
    );
    assert_eq!(report["added"], 0, "{report}");
    assert_eq!(report["commits"], 0, "{report}");
    // By default: the sessions under CODEX_HOME that ran here.
    let default = run(memlog_command(repo.path())
        .env("CODEX_HOME", codex.codex_home())
        .args(["import", "codex", "--json"]))
    .ok()
    .json();
    assert_eq!(default["files"].as_array().unwrap().len(), 1, "{default}");
    assert_eq!(default["added"], 0, "{default}");
}

#[test]
fn a_claude_code_session_reaches_codex_as_injected_context() {
    let repo = repo_with_notes(NOTES);
    let (Some(claude), Some(codex)) = (ClaudeCli::find(&repo), CodexCli::find(&repo)) else {
        return;
    };
    // Codex starts right after Claude Code's session ended, with no
    // `memlog index` between: the hooks read what the index lacks.
    let claude_run = plan_the_migration(&claude);
    let run = codex.run(
        "Is the quarzite migration behind the billing cutover?",
        &json!({"turns": [{"text": "It waits for the billing cutover."}], "side_text": "x"}),
    );
    // Injected as developer messages: the briefing names the Claude Code
    // session, the prompt's memories quote its answer.
    assert!(
        run.requests_contain("Plan the quarzite migration order"),
        "the SessionStart briefing reached Codex's model"
    );
    assert!(
        run.requests_contain(DECIDED),
        "Codex's model saw Claude Code's answer"
    );

    // The Codex session's end started a background `memlog index`, which
    // may still run: `memlog log` reads what it lacks meanwhile.
    let sessions = repo.memlog(&["log", "--json"]).ok().json();
    assert_eq!(
        sessions["sessions"].as_array().unwrap().len(),
        2,
        "{sessions}"
    );

    // Filtered by agent.
    for (agent, client, session) in [
        ("codex", "codex", &run.session_id),
        ("claude", "claude-code", &claude_run.session_id),
    ] {
        let only = repo
            .memlog(&["log", "--json", "--agent", agent])
            .ok()
            .json();
        let lines = only["sessions"].as_array().unwrap();
        assert_eq!(lines.len(), 1, "{agent}: {only}");
        assert_eq!(lines[0]["session"], session.as_str());
        assert_eq!(lines[0]["agents"], json!([client]));
        let events = repo.memlog(&["cat", "--agent", agent]).ok().json_lines();
        assert!(!events.is_empty());
        assert!(events.iter().all(|e| e["meta"]["client"] == client));
        let found = repo
            .memlog(&["search", "quarzite", "--agent", agent, "--json"])
            .ok()
            .json();
        let hits = found["hits"].as_array().unwrap();
        assert!(!hits.is_empty(), "{agent}: {found}");
        assert!(
            hits.iter().all(|h| h["meta"]["client"] == client),
            "{agent}: {found}"
        );
        let mut mcp = McpProcess::start(repo.path());
        let found = mcp.tool(
            "memory_search",
            json!({"query": "quarzite", "agent": agent}),
        );
        let hits = found["hits"].as_array().unwrap();
        assert!(!hits.is_empty(), "{agent}: {found}");
        assert!(
            hits.iter().all(|h| h["session"] == session.as_str()),
            "{agent}: {found}"
        );
    }

    // And back: Codex's answer reaches Claude Code's model.
    let back = claude.run(
        "What did Codex say the quarzite migration waits for?",
        &json!({"turns": [{"text": "The billing cutover."}], "side_text": "Back"}),
    );
    assert!(
        back.requests_contain("It waits for the billing cutover."),
        "Claude Code's model saw Codex's answer"
    );
}

/// `memlog doctor --json`'s entry for Codex's hooks, with CODEX_HOME set.
fn codex_hooks(repo: &memlog_e2e::TestRepo, codex: &CodexCli) -> Value {
    // untrusted hooks make doctor fail: its report is what is read here
    let doctor = run(memlog_command(repo.path())
        .env("CODEX_HOME", codex.codex_home())
        .args(["doctor", "--json"]))
    .json();
    doctor["agent_hooks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["agent"] == "codex")
        .cloned()
        .unwrap_or_else(|| panic!("no codex hooks in {doctor}"))
}

#[test]
fn hooks_codex_does_not_trust_are_named_until_trusted() {
    let repo = repo_with_notes(NOTES);
    let Some(codex) = CodexCli::find(&repo) else {
        return;
    };
    let hooks = codex_hooks(&repo, &codex);
    assert_eq!(hooks["trusted"], false, "{hooks}");
    let untrusted = hooks["untrusted"].as_array().unwrap();
    for name in [
        "project",
        "SessionStart",
        "UserPromptSubmit",
        "Stop",
        "SessionEnd",
    ] {
        assert!(untrusted.contains(&json!(name)), "{name}: {hooks}");
    }
    assert!(hooks["how"].as_str().unwrap().contains("/hooks"), "{hooks}");
    let doctor = run(memlog_command(repo.path())
        .env("CODEX_HOME", codex.codex_home())
        .arg("doctor"));
    assert_eq!(doctor.code(), Some(1), "untrusted hooks: doctor fails");
    let text = doctor.stdout();
    assert!(
        text.contains("will not run them until they are trusted"),
        "{text}"
    );

    // Codex agrees: without the user's trust it runs none of them.
    let script = cat_and_answer("Wednesday noon.");
    let skipped = codex.run_trusted_only("When is the release freeze?", &script);
    assert!(repo.session_events(&skipped.session_id).is_empty());
    // The run trusted the project (the test's config.toml): the hooks are
    // what is left.
    let hooks = codex_hooks(&repo, &codex);
    assert!(
        !hooks["untrusted"]
            .as_array()
            .unwrap()
            .contains(&json!("project"))
    );

    // The user trusts them (what /hooks writes), and Codex runs them.
    let mut trusted = String::new();
    for entry in hooks["trust_entries"].as_array().unwrap() {
        trusted.push_str(&format!(
            "\n[hooks.state.{}]\ntrusted_hash = {}\n",
            entry["key"], entry["value"]
        ));
    }
    let codex = codex.with_config(&trusted);
    let ran = codex.run_trusted_only("When is the release freeze?", &script);
    memlog_e2e::assert_kinds(
        &repo.session_events(&ran.session_id),
        &[
            "session_start",
            "user_prompt",
            "tool_observation",
            "agent_response",
            "session_end",
        ],
    );
    assert_eq!(codex_hooks(&repo, &codex)["trusted"], true);
}

/// Codex plans with `update_plan`, the whole plan each call: its steps are
/// memlog's tasks (`memlog task list`, the next briefing's open tasks), on
/// the hook path, and its rollout brings no second copy.
#[test]
fn codexs_plan_is_memlogs_tasks() {
    let repo = repo_with_notes(NOTES);
    let Some(codex) = CodexCli::find(&repo) else {
        return;
    };
    // Codex 0.169 offers update_plan by its model catalog; the scripted
    // `gpt-5` is not in it, so the test turns the tool on as a user can
    let codex = codex.with_config("\n[tools.update_plan]\nenabled = true\n");
    let plan = |statuses: [&str; 3]| {
        let steps: Vec<Value> = PLAN_STEPS
            .iter()
            .zip(statuses)
            .map(|(step, status)| json!({"step": step, "status": status}))
            .collect();
        json!({"explanation": "Parser first.", "plan": steps})
    };
    let script = plan_twice(
        "update_plan",
        plan(["in_progress", "pending", "pending"]),
        plan(["completed", "completed", "pending"]),
    );
    let session = codex.run("Add the parser, with tests and docs.", &script);
    assert_plan_tasks(&repo, &session.session_id, "update_plan");
    let brief = repo.hook("SessionStart", "next", json!({"source": "startup"}));
    assert!(brief.contains("Update the docs"), "{brief}");

    let rollout = codex.rollout(&session.session_id);
    let report = repo
        .memlog(&["import", "codex", "--json", rollout.to_str().unwrap()])
        .ok()
        .json();
    assert_eq!(report["added"], 0, "{report}");
}
