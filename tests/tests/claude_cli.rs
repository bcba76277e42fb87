//! The real Claude Code CLI, offline against a scripted API on 127.0.0.1,
//! with memlog's hooks installed by `memlog install claude`: what memlog
//! captures from a real session, and what a real session receives.
//! Skipped (with a message) when `scripts/install-assets` has not installed
//! Claude Code.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use memlog_e2e::{AgentCli, ClaudeCli, TestRepo, captured_session, repo_with_notes};
use serde_json::{Value, json};

/// What `notes.txt` says, for the scripted model to read.
const NOTES: &str = "The release train leaves on Thursdays; freeze is Wednesday noon.\n";

/// Reads `notes.txt` with the Read tool, then answers.
fn read_and_answer(repo: &TestRepo, answer: &str) -> Value {
    let file = repo.path().join("notes.txt");
    json!({
        "turns": [
            {"text": "Let me read the notes.",
             "tool_use": {"name": "Read", "input": {"file_path": file.display().to_string()}}},
            {"text": answer}
        ],
        "side_text": "Release notes"
    })
}

#[test]
fn a_real_session_is_captured_and_sealed_as_one_commit() {
    let repo = repo_with_notes(NOTES);
    let Some(claude) = ClaudeCli::find(&repo) else {
        return;
    };
    let answer = "Releases leave on Thursdays, the freeze is Wednesday noon.";
    let run = claude.run(
        "When does the release train leave?",
        &read_and_answer(&repo, answer),
    );
    assert_eq!(run.result["result"], answer, "{}", run.result);
    assert!(
        run.requests_contain("freeze is Wednesday noon"),
        "the Read result reached the model"
    );

    let (events, _) = captured_session(
        &repo,
        &run.session_id,
        "When does the release train leave?",
        "Read",
        "freeze is Wednesday noon",
    );
    // what the agent said before its call (from the transcript, at its
    // time), then the answer
    let responses: Vec<&Value> = events
        .iter()
        .filter(|e| e["kind"] == "agent_response")
        .collect();
    let texts: Vec<&Value> = responses.iter().map(|e| &e["body"]["text"]).collect();
    assert_eq!(texts, [&json!("Let me read the notes."), &json!(answer)]);
    assert_eq!(responses[0]["meta"]["from_transcript"], true);
    assert!(responses[0]["ts"].as_str() < responses[1]["ts"].as_str());
    assert!(events.iter().all(|e| e["meta"]["client"] == "claude-code"));

    // SessionEnd sealed the session: one commit, listed by `memlog log`.
    let log = repo.memlog(&["log", "--json"]).ok().json();
    let sessions = log["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{log}");
    assert_eq!(sessions[0]["session"], run.session_id.as_str());
    assert_eq!(sessions[0]["events"], events.len());
    assert_eq!(repo.memlog_commits().len(), 1);
    assert_eq!(
        repo.memlog(&["stats", "--json"]).ok().json()["journals"],
        0,
        "nothing left unsealed"
    );
}

/// Imports transcripts and returns the report.
fn import(repo: &TestRepo, transcripts: &[&std::path::Path]) -> Value {
    let mut args = vec!["import", "claude-code", "--json"];
    let paths: Vec<String> = transcripts
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    args.extend(paths.iter().map(String::as_str));
    repo.memlog(&args).ok().json()
}

#[test]
fn importing_hook_captured_sessions_adds_nothing() {
    let repo = repo_with_notes(NOTES);
    let Some(claude) = ClaudeCli::find(&repo) else {
        return;
    };
    let first = claude.run(
        "When does the release train leave?",
        &read_and_answer(&repo, "On Thursdays."),
    );
    let second = claude.run(
        "And when is the freeze?",
        &read_and_answer(&repo, "Wednesday noon."),
    );
    let before = repo.cat().len();
    let commits = repo.memlog_commits().len();
    assert_eq!(commits, 2);

    let report = import(
        &repo,
        &[
            &claude.transcript(&first.session_id),
            &claude.transcript(&second.session_id),
        ],
    );
    assert_eq!(report["added"], 0, "{report}");
    assert_eq!(report["commits"], 0, "{report}");
    assert_eq!(repo.cat().len(), before);
    assert_eq!(repo.memlog_commits().len(), commits);
    let twice = import(
        &repo,
        &[
            &claude.transcript(&first.session_id),
            &claude.transcript(&second.session_id),
        ],
    );
    assert_eq!(twice["added"], 0, "{twice}");
}

/// A Stop hook that never ran (the agent killed mid-answer, the hook
/// killed or timed out): the import adds all the turn said, as the Stop
/// hook would have recorded it, and only that (a field test: the import
/// brought the last answer alone, and the rest was lost for good).
#[test]
fn importing_a_session_whose_stop_hook_never_ran_adds_what_it_said() {
    let repo = repo_with_notes(NOTES);
    let Some(claude) = ClaudeCli::find(&repo) else {
        return;
    };
    // Without memlog's Stop and SessionEnd hooks, as when the agent is
    // killed mid-answer.
    let run = train_session(&repo, &claude, &["Stop", "SessionEnd"]);
    let before = repo.session_events(&run.session_id);
    assert!(
        before.iter().all(|e| e["kind"] != "agent_response"),
        "no Stop hook, no answer: {before:?}"
    );

    let transcript = claude.transcript(&run.session_id);
    let report = import(&repo, &[&transcript]);
    assert_eq!(report["added"], 2, "{report}");
    assert_eq!(report["commits"], 1, "{report}");
    let after = repo.session_events(&run.session_id);
    assert_eq!(after.len(), before.len() + 2);
    assert_eq!(answers(&repo, &run.session_id), TRAIN_ANSWERS, "{after:#?}");

    // Importing again adds nothing.
    let again = import(&repo, &[&transcript]);
    assert_eq!(
        (again["added"].clone(), again["commits"].clone()),
        (json!(0), json!(0))
    );
}

/// An agent killed mid-answer (no Stop, no SessionEnd): the next session,
/// started once the journal is idle (the next day, say), seals the orphan
/// in the background and brings back what the turn said from the
/// transcript (a field test: lost unless the user ran an import nothing
/// suggested).
#[test]
fn the_next_session_brings_back_what_a_killed_session_said() {
    let repo = repo_with_notes(NOTES);
    let Some(claude) = ClaudeCli::find(&repo) else {
        return;
    };
    let killed = train_session(&repo, &claude, &["Stop", "SessionEnd"]);
    // its journal, last written three hours ago (hooks.seal_idle_minutes
    // is 120 by default)
    let journal = repo
        .path()
        .join(format!(".git/memlog/journal/{}.jsonl", killed.session_id));
    let touched = memlog_e2e::run(std::process::Command::new("touch").args([
        "-d",
        "3 hours ago",
        journal.to_str().unwrap(),
    ]));
    assert_eq!(touched.code(), Some(0), "{}", touched.stderr());
    claude.run(
        "Anything else about the release?",
        &json!({"turns": [{"text": "No."}]}),
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while answers(&repo, &killed.session_id).len() < 2 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert_eq!(answers(&repo, &killed.session_id), TRAIN_ANSWERS);
}

/// What the scripted model says in [`train_session`]: its words before the
/// tool call, and its answer.
const TRAIN_ANSWERS: [&str; 2] = [
    "Let me read the notes.",
    "Thursdays, with the freeze on Wednesday noon.",
];

/// A session asking when the release train leaves, run without memlog's
/// hooks of `missing` (as when they are killed, or the agent is).
fn train_session(repo: &TestRepo, claude: &ClaudeCli, missing: &[&str]) -> memlog_e2e::AgentRun {
    without_hooks(claude, missing);
    claude.run(
        "When does the release train leave?",
        &read_and_answer(repo, TRAIN_ANSWERS[1]),
    )
}

/// The texts of `session`'s answers, in order.
fn answers(repo: &TestRepo, session: &str) -> Vec<String> {
    repo.session_events(session)
        .iter()
        .filter(|e| e["kind"] == "agent_response")
        .filter_map(|e| e["body"]["text"].as_str().map(str::to_string))
        .collect()
}

/// Removes memlog's hooks of `events` from the project's settings.
fn without_hooks(claude: &ClaudeCli, events: &[&str]) {
    let path = claude.settings_path();
    let mut settings: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    for event in events {
        settings["hooks"].as_object_mut().unwrap().remove(*event);
    }
    std::fs::write(&path, settings.to_string()).unwrap();
}

/// A Stop hook killed or timed out while the session goes on: its end
/// brings back from the transcript what the turn said, with no step by
/// the user (a field test: 4 of 10 such sessions lost their answers, and
/// nothing but a manual import brought them back).
#[test]
fn a_session_end_brings_back_what_a_missed_stop_hook_never_recorded() {
    let repo = repo_with_notes(NOTES);
    let Some(claude) = ClaudeCli::find(&repo) else {
        return;
    };
    let run = train_session(&repo, &claude, &["Stop"]);
    // the import runs in the background
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while answers(&repo, &run.session_id).len() < 2 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert_eq!(
        answers(&repo, &run.session_id),
        TRAIN_ANSWERS,
        "{:#?}",
        repo.session_events(&run.session_id)
    );
}

/// `memlog search` run by the agent's Bash tool leaves out the prompt
/// being answered, as MCP's memory_search does: the agent's own question
/// is no memory (it came back as a top hit, above the note that answers
/// it).
#[test]
fn memlog_search_in_the_agents_shell_leaves_out_the_prompt_being_answered() {
    let repo = TestRepo::new();
    repo.record(
        "earlier",
        "note",
        "Totals are printed with the currency code after the amount (12.50 EUR)",
    );
    repo.memlog(&["seal", "--all"]).ok();
    let Some(claude) = ClaudeCli::find(&repo) else {
        return;
    };
    let run = claude.run(
        "Check the display convention for totals and close the task",
        &json!({
            "turns": [
                {"text": "Searching memory.",
                 "tool_use": {"name": "Bash",
                              "input": {"command": "memlog search 'display convention for totals'",
                                        "description": "Search memory"}}},
                {"text": "Amount first, then the currency code."}
            ]
        }),
    );
    let mut results = String::new();
    for r in &run.requests {
        for message in r["body"]["messages"].as_array().into_iter().flatten() {
            for block in message["content"].as_array().into_iter().flatten() {
                if block["type"] == "tool_result" {
                    results.push_str(&block["content"].to_string());
                }
            }
        }
    }
    assert!(results.contains("currency code after"), "{results}");
    assert!(!results.contains("close the task"), "{results}");
}

/// memlog's hooks in two settings files naming two memlog binaries (a
/// user's `~/.cargo/bin/memlog` in one, the project's in the other, say):
/// Claude Code runs both, and memory still holds each prompt and answer
/// once, and the model is given memory once.
#[test]
fn hooks_installed_twice_record_and_inject_once() {
    let repo = repo_with_notes(NOTES);
    let Some(claude) = ClaudeCli::find(&repo) else {
        return;
    };
    let elsewhere = tempfile::tempdir().unwrap();
    let copy = elsewhere.path().join("memlog");
    std::fs::copy(memlog_e2e::memlog_bin(), &copy).unwrap();
    loop {
        // a child another test thread forked while the copy was open for
        // writing holds it until it execs
        match std::process::Command::new(&copy)
            .args(["install", "claude", "--local"])
            .current_dir(repo.path())
            .output()
        {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            installed => {
                memlog_e2e::Run {
                    output: installed.expect("the copy starts"),
                }
                .ok();
                break;
            }
        }
    }
    let answer = "Releases leave on Thursdays, the freeze is Wednesday noon.";
    let first = claude.run(
        "When does the release train leave?",
        &read_and_answer(&repo, answer),
    );
    let events = repo.session_events(&first.session_id);
    let count = |kind: &str| events.iter().filter(|e| e["kind"] == kind).count();
    assert_eq!(
        (
            count("user_prompt"),
            count("agent_response"),
            count("tool_observation")
        ),
        (1, 2, 1),
        "{events:?}"
    );

    let second = claude.run(
        "Remind me: which day does the release train leave?",
        &json!({"turns": [{"text": "Thursdays."}], "side_text": "Release day"}),
    );
    let injected: usize = second
        .requests
        .iter()
        .filter(|r| r["body"]["tools"].is_array())
        .take(1)
        .map(|r| {
            r["body"]
                .to_string()
                .matches("Memory from earlier sessions")
                .count()
        })
        .sum();
    assert_eq!(injected, 1, "memory given once: {:?}", second.requests);
    let events = repo.session_events(&second.session_id);
    assert_eq!(
        events.iter().filter(|e| e["kind"] == "user_prompt").count(),
        1,
        "{events:?}"
    );
    let doctor = repo.memlog(&["doctor", "--json"]).ok().json();
    assert_eq!(
        doctor["hooks_installed_twice"],
        json!(["claude"]),
        "{doctor}"
    );
}

/// A session resumed turn after turn (`claude -p … --resume ID`) keeps what
/// the agent said before each tool call: Claude Code wrote a resumed
/// session's transcript behind its Stop hook, which then found the turn's
/// text not there yet (a field test lost 13 of 32 such texts, and import
/// could not bring them back).
#[test]
fn a_resumed_session_keeps_what_the_agent_said_between_its_calls() {
    let repo = repo_with_notes(NOTES);
    let Some(claude) = ClaudeCli::find(&repo) else {
        return;
    };
    let first = claude.run("When is the release freeze?", &bash_cat(0));
    for step in 1..=4 {
        let prompt = format!("and step {step}?");
        let mut args = <ClaudeCli as AgentCli>::prompt_args(&prompt);
        args.extend(["--resume".to_string(), first.session_id.clone()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        claude.run_args(&args, &bash_cat(step));
    }
    let texts = repo.memlog(&["cat"]).ok().stdout();
    for step in 0..=4 {
        assert!(
            texts.contains(&format!("Checking step {step}.")),
            "step {step}: {texts}"
        );
    }
}

/// A forked session (`claude --resume ID --fork-session`) starts its
/// transcript with a copy of its parent's turns, the same lines under the
/// fork's id: an import took the parent's prompt and tool call again, into
/// the fork (field test 8c).
#[test]
fn importing_a_forked_session_adds_nothing_of_its_parent() {
    let repo = repo_with_notes(NOTES);
    let Some(claude) = ClaudeCli::find(&repo) else {
        return;
    };
    // tool ids as the real API makes them: unique to a call
    let turn = |text: &str, id: &str, command: &str, answer: &str| {
        json!({
            "turns": [
                {"content": [{"type": "text", "text": text},
                             {"type": "tool_use", "id": id, "name": "Bash",
                              "input": {"command": command, "description": "step"}}]},
                {"text": answer}
            ],
            "side_text": "Retries"
        })
    };
    let parent = claude.run(
        "design the cormorant retry policy",
        &turn(
            "Running step.",
            "toolu_parent_0001",
            "echo backoff-chosen",
            "Chose exponential backoff for the cormorant retries.",
        ),
    );
    let mut args = <ClaudeCli as AgentCli>::prompt_args("try adding jitter instead");
    args.extend([
        "--resume".to_string(),
        parent.session_id.clone(),
        "--fork-session".to_string(),
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let fork = claude.run_args(
        &args,
        &turn(
            "Trying jitter.",
            "toolu_fork_0001",
            "echo jitter-added",
            "Added jitter to the cormorant retries.",
        ),
    );
    assert_ne!(fork.session_id, parent.session_id, "a fork has its own id");
    let fork_transcript = claude.transcript(&fork.session_id);
    let copied = std::fs::read_to_string(&fork_transcript).unwrap_or_default();
    assert!(
        copied.contains("design the cormorant retry policy"),
        "the fork's transcript copies its parent's turns"
    );

    let report = import(
        &repo,
        &[&claude.transcript(&parent.session_id), &fork_transcript],
    );
    assert_eq!(report["added"], 0, "{report}");
    let fork_events = repo
        .memlog(&["show", &fork.session_id, "--json"])
        .ok()
        .json();
    let text = fork_events.to_string();
    assert!(!text.contains("design the cormorant"), "{text}");
    assert!(!text.contains("backoff-chosen"), "{text}");
    assert!(text.contains("jitter-added"), "{text}");
}

/// A turn that says something, runs `cat notes.txt`, then answers.
fn bash_cat(step: usize) -> Value {
    json!({
        "turns": [
            {"text": format!("Checking step {step}."),
             "tool_use": {"name": "Bash",
                          "input": {"command": "cat notes.txt", "description": "Read the notes"}}},
            {"text": format!("Step {step} is done; the freeze is Wednesday noon.")}
        ],
        "side_text": "Notes"
    })
}

/// Claude Code 2.1 plans with TaskCreate and TaskUpdate (TodoWrite is
/// refused there): they are memlog's tasks, on the hook path and on
/// import alike (a field test: a month of real sessions left `memlog task
/// list` empty, and every briefing without its open tasks).
#[test]
fn claude_codes_task_tools_are_memlogs_tasks() {
    let repo = TestRepo::new();
    let Some(claude) = ClaudeCli::find(&repo) else {
        return;
    };
    let call = |text: &str, name: &str, input: Value| json!({"text": text, "tool_use": {"name": name, "input": input}});
    let script = json!({
        "turns": [
            call("Loading the task tools.", "ToolSearch",
                 json!({"query": "select:TaskCreate,TaskUpdate", "max_results": 5})),
            call("Planning.", "TaskCreate", json!({"subject": "Add the budget command",
                 "description": "tally budget set and status", "activeForm": "Adding the budget command"})),
            call("Planning.", "TaskCreate", json!({"subject": "Import OFX files",
                 "description": "DKB and Comdirect exports", "activeForm": "Importing OFX files"})),
            call("Planning.", "TaskCreate", json!({"subject": "Write the README",
                 "description": "usage", "activeForm": "Writing the README"})),
            call("Planning.", "TaskCreate", json!({"subject": "Tag the release",
                 "description": "v0.2", "activeForm": "Tagging the release"})),
            call("Planning.", "TaskCreate", json!({"subject": "Announce the release",
                 "description": "on the list", "activeForm": "Announcing the release"})),
            // blockers, both ways: the announcement waits on the tag, the
            // tag on the budget command (which is finished below)
            call("Ordering.", "TaskUpdate", json!({"taskId": "5", "addBlockedBy": ["4"]})),
            call("Ordering.", "TaskUpdate", json!({"taskId": "1", "addBlocks": ["4"]})),
            call("Starting.", "TaskUpdate", json!({"taskId": "1", "status": "in_progress"})),
            call("Finished it.", "TaskUpdate", json!({"taskId": "1", "status": "completed"})),
            // a delete removes Claude Code's own file of the task
            call("Dropping it.", "TaskUpdate", json!({"taskId": "2", "status": "deleted"})),
            // a rename: the task is still the one created
            call("Done.", "TaskUpdate", json!({"taskId": "3",
                 "subject": "Write the README with examples", "status": "completed"})),
            {"text": "The budget command and the README are in; the release is not tagged yet."}
        ],
        "side_text": "Budget work"
    });
    let args = [
        "-p",
        "plan and do the budget work",
        "--output-format",
        "json",
        "--allowedTools",
        "ToolSearch",
        "TaskCreate",
        "TaskUpdate",
    ];
    let run = claude.run_args(&args, &script);
    assert!(
        run.requests_contain("Updated task #3"),
        "the rename went through"
    );
    let tasks = repo.memlog(&["task", "list", "--json"]).ok().json();
    let status = |title: &str| {
        tasks
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["title"] == title)
            .map(|t| t["status"].clone())
            .unwrap_or_else(|| panic!("no task {title:?}: {tasks:#}"))
    };
    assert_eq!(status("Add the budget command"), "done", "{tasks:#}");
    assert_eq!(status("Import OFX files"), "cancelled", "{tasks:#}");
    assert_eq!(status("Write the README"), "done", "{tasks:#}");
    assert_eq!(status("Tag the release"), "pending", "{tasks:#}");
    assert_eq!(status("Announce the release"), "pending", "{tasks:#}");
    assert_eq!(tasks.as_array().unwrap().len(), 5, "{tasks:#}");
    // the announcement still waits on the tag; the tag's own blocker is done
    let blocked = repo
        .memlog(&["task", "list", "--blocked", "--json"])
        .ok()
        .json();
    let blocked: Vec<(&Value, &Value)> = blocked
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (&t["title"], &t["blocked_by"]))
        .collect();
    assert_eq!(
        blocked,
        [(&json!("Announce the release"), &json!(["Tag the release"]))],
        "{tasks:#}"
    );
    // the next session's briefing lists the open one alone
    let brief = repo.hook("SessionStart", "next", json!({"source": "startup"}));
    let open = brief.split("## Open tasks").nth(1).unwrap_or_default();
    assert!(open.contains("Tag the release"), "{brief}");
    for closed in [
        "Add the budget command",
        "Import OFX files",
        "Write the README",
    ] {
        assert!(!open.contains(closed), "{brief}");
    }
    // the transcript brings the same tasks, not a second copy
    let report = import(&repo, &[&claude.transcript(&run.session_id)]);
    assert_eq!(report["added"], 0, "{report}");
}
