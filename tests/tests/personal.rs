//! Personal scope: events marked personal (`note --personal`, `record
//! --personal`, a `<personal>` tag, `.memlog.yaml` rules, MCP's
//! `memory_remember` with `personal`) are searched and
//! injected on this machine, sealed in a repository of their own
//! (`.git/memlog/personal.git`), and not one byte of them reaches the
//! remote through `memlog sync`, `git push origin memlog`, or any git
//! command that copies every ref of the repository.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use memlog_e2e::{McpProcess, TestRepo, all_objects, git_command, holds, remote_and_clones, run};

const NOTE: &str = "PRSNL-NOTE-5521";
const FLAG: &str = "PRSNL-FLAG-7730";
const TAG: &str = "PRSNL-TAG-9042";
const RULE: &str = "PRSNL-RULE-1187";
const MCP: &str = "PRSNL-MCP-6403";
const LATER: &str = "PRSNL-LATER-2958";

fn texts(repo: &TestRepo) -> String {
    repo.memlog(&["cat"]).ok().stdout()
}

/// The personal store's git directory.
fn store(repo: &TestRepo) -> std::path::PathBuf {
    repo.path().join(".git/memlog/personal.git")
}

/// The refs of a repository, one per line.
fn refs(dir: &std::path::Path) -> String {
    run(git_command(dir).args(["for-each-ref", "--format=%(refname)"]))
        .ok()
        .stdout()
}

#[test]
fn personal_memory_is_found_here_and_never_leaves() {
    let (remote, clones) = remote_and_clones(2);
    let (me, mate) = (&clones[0], &clones[1]);
    std::fs::write(
        me.path().join(".memlog.yaml"),
        // generous hook budgets: the suite loads the machine
        "personal:\n  sessions: [\"diary-*\"]\nhooks:\n  inject_budget_ms: 20000\n",
    )
    .unwrap();

    // 1. A personal note, beside a shared one.
    me.memlog(&[
        "note",
        "--personal",
        &format!("my salary review {NOTE} is in March"),
    ])
    .ok();
    me.memlog(&["note", "The deploy script lives in ops/deploy.sh"])
        .ok();
    // 2. record --personal: the rest of the session stays personal too.
    me.memlog(&[
        "record",
        "--session",
        "s-flag",
        "--kind",
        "user_prompt",
        "--personal",
        "--text",
        &format!("my badge code is {FLAG}"),
    ])
    .ok();
    me.record("s-flag", "agent_response", &format!("Noted: {FLAG}"));
    // 3. A <personal> tag, and what follows it in the session.
    me.record(
        "s-tag",
        "user_prompt",
        &format!("<personal> my doctor is {TAG}"),
    );
    me.record("s-tag", "agent_response", &format!("I will remember {TAG}"));
    // 4. A session the configuration makes personal.
    me.record("diary-1", "note", &format!("today {RULE} went well"));
    // 5. Through MCP, beside a shared memory of the same server session.
    let mut mcp = McpProcess::start(me.path());
    let args =
        |text: String, personal: bool| serde_json::json!({"text": text, "personal": personal});
    mcp.tool(
        "memory_remember",
        args(format!("my pager PIN is {MCP}"), true),
    );
    mcp.tool(
        "memory_remember",
        args("Releases are tagged from main".into(), false),
    );
    assert!(mcp.close().success());
    // and an ordinary session, which is shared
    me.record("s-work", "user_prompt", "Refactor the parser for speed");
    me.memlog(&["seal", "--all"]).ok();

    // Found and injected here.
    for marker in [NOTE, FLAG, TAG, RULE, MCP] {
        let hits = me
            .memlog(&["search", marker, "--mode", "fts"])
            .ok()
            .stdout();
        assert!(hits.contains(marker), "{marker}: {hits}");
        assert!(texts(me).contains(marker), "{marker}");
    }
    let context = me
        .memlog(&["context", &format!("what is my salary review {NOTE}")])
        .ok()
        .stdout();
    assert!(context.contains(NOTE), "{context}");
    let injected = me.hook(
        "UserPromptSubmit",
        "asker",
        serde_json::json!({"transcript_path": "/nonexistent.jsonl",
                           "prompt": format!("When is my salary review {NOTE}?")}),
    );
    assert!(
        injected.contains(NOTE),
        "the prompt hook injects it: {injected}"
    );
    assert!(!refs(me.path()).contains("personal"), "{}", refs(me.path()));
    assert!(refs(&store(me)).contains("refs/memlog/personal"));
    let fsck = me.memlog(&["fsck", "--json"]).ok().json();
    assert_eq!(fsck["problems"].as_array().map(Vec::len), Some(0), "{fsck}");

    // Neither sync nor a plain push carries them: the remote is checked
    // after each, with another personal note sealed in between.
    let remote_holds_no_personal_byte = |step: &str, markers: &[&str]| {
        let on_remote = all_objects(remote.path());
        assert!(
            holds(&on_remote, "Refactor the parser"),
            "{step}: shared memory is there"
        );
        assert!(holds(&on_remote, "deploy script"), "{step}");
        assert!(holds(&on_remote, "Releases are tagged from main"), "{step}");
        for marker in markers {
            assert!(
                !holds(&on_remote, marker),
                "{step}: {marker} reached the remote"
            );
        }
        let refs = refs(remote.path());
        assert!(!refs.contains("personal"), "{step}: {refs}");
    };
    me.memlog(&["sync", "origin"]).ok();
    remote_holds_no_personal_byte("after memlog sync", &[NOTE, FLAG, TAG, RULE, MCP]);
    me.memlog(&["note", "--personal", &format!("my locker is {LATER}")])
        .ok();
    assert!(holds(&all_objects(&store(me)), LATER), "sealed here");
    // and a shared session, so that the push carries new commits
    me.record("s-docs", "user_prompt", "Document the release steps");
    me.memlog(&["seal", "--session", "s-docs"]).ok();
    me.git(&["push", "-q", "origin", "memlog"]).ok();
    assert!(holds(
        &all_objects(remote.path()),
        "Document the release steps"
    ));
    remote_holds_no_personal_byte(
        "after git push origin memlog",
        &[NOTE, FLAG, TAG, RULE, MCP, LATER],
    );
    mate.memlog(&["sync", "origin"]).ok();
    let theirs = texts(mate);
    assert!(theirs.contains("Refactor the parser"));
    for marker in [NOTE, FLAG, TAG, RULE, MCP, LATER] {
        assert!(!theirs.contains(marker), "{marker} reached a teammate");
    }

    // Forgetting and purging reach personal memory too.
    let id = me
        .memlog(&["search", NOTE, "--mode", "fts", "--json"])
        .ok()
        .json()["hits"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    me.memlog(&["forget", &id]).ok();
    let purged = me.memlog(&["purge", "--json"]).ok().json();
    assert_eq!(purged["personal_events_purged"], 1, "{purged}");
    assert!(!holds(&all_objects(&store(me)), NOTE));
    assert!(holds(&all_objects(&store(me)), FLAG));
}

/// Every git command that copies all of a repository's refs (a mirror
/// push, `refs/*:refs/*`, a bundle, a mirror clone, a teammate's fetch
/// from this machine) and a local clone, which copies its objects: none
/// carries personal memory, which is in no ref and no object of the
/// repository (found by a field test: with the personal log on a ref of
/// the repository, `git push --mirror` published it).
#[test]
fn no_git_command_of_the_repository_carries_personal_memory() {
    let (remote, clones) = remote_and_clones(2);
    let (me, mate) = (&clones[0], &clones[1]);
    me.memlog(&["note", "--personal", &format!("my salary is {NOTE}")])
        .ok();
    me.record(
        "s-tag",
        "user_prompt",
        &format!("<personal> my doctor is {TAG}"),
    );
    me.record("s-work", "user_prompt", "Refactor the parser for speed");
    me.memlog(&["seal", "--all"]).ok();
    me.memlog(&["sync", "origin"]).ok();
    assert!(holds(&all_objects(&store(me)), NOTE), "sealed here");
    assert!(!holds(&all_objects(me.path()), NOTE));

    let work = tempfile::tempdir().unwrap();
    let bare = |name: &str| {
        let dir = work.path().join(name);
        run(git_command(work.path()).args(["init", "-q", "--bare", name])).ok();
        dir
    };
    let mirror = bare("mirror.git");
    me.git(&["push", "-q", "--mirror", mirror.to_str().unwrap()])
        .ok();
    let every_ref = bare("every-ref.git");
    me.git(&["push", "-q", every_ref.to_str().unwrap(), "refs/*:refs/*"])
        .ok();
    let bundle = work.path().join("all.bundle");
    me.git(&["bundle", "create", "-q", bundle.to_str().unwrap(), "--all"])
        .ok();
    let unbundled = bare("unbundled.git");
    run(git_command(&unbundled).args(["fetch", "-q", bundle.to_str().unwrap(), "refs/*:refs/*"]))
        .ok();
    run(git_command(work.path()).args([
        "clone",
        "-q",
        "--mirror",
        me.path().to_str().unwrap(),
        "cloned-mirror.git",
    ]))
    .ok();
    run(git_command(work.path()).args(["clone", "-q", me.path().to_str().unwrap(), "local"])).ok();
    mate.git(&[
        "fetch",
        "-q",
        me.path().to_str().unwrap(),
        "refs/*:refs/remotes/me/*",
    ])
    .ok();
    for (what, dir) in [
        ("a mirror push", mirror),
        ("a push of refs/*:refs/*", every_ref),
        ("a bundle of --all", unbundled),
        ("a mirror clone", work.path().join("cloned-mirror.git")),
        ("a local clone", work.path().join("local")),
        ("a teammate's fetch", mate.path().to_path_buf()),
        ("the remote", remote.path().to_path_buf()),
    ] {
        let objects = all_objects(&dir);
        assert!(
            holds(&objects, "Refactor the parser"),
            "{what}: shared memory is there"
        );
        for marker in [NOTE, TAG] {
            assert!(!holds(&objects, marker), "{what} carried {marker}");
        }
        assert!(!refs(&dir).contains("personal"), "{what}: {}", refs(&dir));
    }
    // and it is all still memory here
    for marker in [NOTE, TAG] {
        let hits = me
            .memlog(&["search", marker, "--mode", "fts"])
            .ok()
            .stdout();
        assert!(hits.contains(marker), "{marker}: {hits}");
    }
}

/// A personal log an earlier memlog kept on the repository's
/// `refs/memlog/personal` is moved into the store by the first command
/// that reads it, whole: found, its ref gone from the repository, and the
/// next personal seal goes on top of it.
#[test]
fn a_personal_log_on_the_legacy_ref_is_moved_out_of_the_repository() {
    let repo = TestRepo::new();
    let me = &repo;
    me.memlog(&["note", "--personal", &format!("my salary is {NOTE}")])
        .ok();
    me.memlog(&["note", "The deploy script lives in ops/deploy.sh"])
        .ok();
    // what an earlier memlog left: the personal log on a ref of the
    // repository, its objects in the repository's
    me.git(&[
        "fetch",
        "-q",
        store(me).to_str().unwrap(),
        "refs/memlog/personal:refs/memlog/personal",
    ])
    .ok();
    let tip = me.git(&["rev-parse", "refs/memlog/personal"]).ok().stdout();
    std::fs::remove_dir_all(store(me)).unwrap();

    let hits = me.memlog(&["search", NOTE, "--mode", "fts"]).ok().stdout();
    assert!(hits.contains(NOTE), "{hits}");
    assert!(!refs(me.path()).contains("personal"), "{}", refs(me.path()));
    let moved = run(git_command(&store(me)).args(["rev-parse", "refs/memlog/personal"]))
        .ok()
        .stdout();
    assert_eq!(moved, tip, "the same history");
    me.memlog(&["note", "--personal", &format!("my locker is {LATER}")])
        .ok();
    let log = run(git_command(&store(me)).args(["log", "--format=%H", "refs/memlog/personal"]))
        .ok()
        .stdout();
    assert!(log.contains(tip.trim()), "sealed on top: {log}");
    assert!(me.memlog(&["cat"]).ok().stdout().contains(LATER));
    let fsck = me.memlog(&["fsck", "--json"]).ok().json();
    assert_eq!(fsck["problems"].as_array().map(Vec::len), Some(0), "{fsck}");
}

/// An agent that saves personal memory itself, through memlog's MCP tool
/// or `memlog note --personal` in its shell, and reads memory back through
/// memlog's tools: the shared session records that the calls ran, not
/// their words, so the note stays off the remote and a forgotten session
/// leaves no copy behind in the call that read it (found by a field test
/// with the real Claude Code).
#[test]
fn memlogs_own_tool_calls_keep_no_copy_of_memory() {
    let (remote, clones) = remote_and_clones(1);
    let me = &clones[0];
    let shared = "PRSNL-SHARED-4410";
    me.record(
        "old",
        "user_prompt",
        &format!("the staging host is {shared}"),
    );
    me.memlog(&["seal", "--all"]).ok();
    let calls = [
        (
            "mcp__memlog__memory_remember",
            serde_json::json!({"text": format!("my partner is {MCP}"), "personal": true}),
            serde_json::json!([{"type": "text", "text": format!("remembered {MCP} (personal)")}]),
        ),
        (
            "Bash",
            serde_json::json!({"command": format!("memlog note --personal 'dentist {NOTE}'")}),
            serde_json::json!({"stdout": format!("noted {NOTE}"), "stderr": "", "interrupted": false}),
        ),
        (
            "mcp__memlog__memory_get",
            serde_json::json!({"ids": ["old"]}),
            serde_json::json!([{"type": "text", "text": format!("the staging host is {shared}")}]),
        ),
    ];
    for (i, (tool, input, response)) in calls.into_iter().enumerate() {
        me.hook(
            "PostToolUse",
            "work",
            serde_json::json!({"tool_name": tool, "tool_input": input,
                "tool_response": response, "tool_use_id": format!("toolu_{i}")}),
        );
    }
    let work = me.memlog(&["cat", "--session", "work"]).ok().stdout();
    assert_eq!(work.matches("\"withheld\":true").count(), 3, "{work}");
    assert!(work.contains("memlog note"), "{work}");
    for words in [MCP, NOTE, shared] {
        assert!(
            !work.contains(words),
            "{words} copied into the session: {work}"
        );
    }
    me.memlog(&["seal", "--all"]).ok();
    me.memlog(&["forget", "--session", "old"]).ok();
    me.memlog(&["purge"]).ok();
    me.memlog(&["sync", "origin"]).ok();
    for words in [MCP, NOTE, shared] {
        assert!(
            !holds(&all_objects(me.path()), words),
            "{words} left in git"
        );
        assert!(
            !holds(&all_objects(remote.path()), words),
            "{words} reached the remote"
        );
    }
}

/// A personal memory injected into a session makes the rest of that
/// session personal, as a personal event recorded in it does: the answer
/// built on it stays on this machine (found by a field test: the answer
/// and the recall naming the note were pushed with the shared session).
#[test]
fn a_session_given_a_personal_memory_keeps_what_follows_here() {
    let (remote, clones) = one_clone_noting(&format!(
        "My dentist appointment is on Friday at nine ({NOTE})"
    ));
    let me = &clones[0];
    let context = me.hook(
        "UserPromptSubmit",
        "work",
        serde_json::json!({"prompt": "When is my dentist appointment?"}),
    );
    assert!(context.contains(NOTE), "{context}");
    answer_stays_here(me, remote.path(), "On Friday at nine");
}

/// A personal memory the agent reads back itself, running `memlog search`
/// in its shell, makes the rest of the session personal, as one injected
/// does: the answer repeating it stays on this machine (field test 6: the
/// call's output was withheld, the answer was pushed). The output is the
/// real command's.
#[test]
fn a_personal_memory_read_back_through_memlog_keeps_what_follows_here() {
    let (remote, clones) = one_clone_noting(&format!("salary review with Dana on Friday ({NOTE})"));
    let me = &clones[0];
    let found = me.memlog(&["search", "salary review"]).ok().stdout();
    assert!(found.contains(NOTE), "{found}");
    me.hook(
        "UserPromptSubmit",
        "work",
        serde_json::json!({"prompt": "look up what I saved last week"}),
    );
    me.hook(
        "PostToolUse",
        "work",
        serde_json::json!({"tool_name": "Bash",
            "tool_input": {"command": "memlog search 'salary review'"},
            "tool_response": {"stdout": found, "stderr": "", "interrupted": false},
            "tool_use_id": "toolu_read"}),
    );
    answer_stays_here(
        me,
        remote.path(),
        "Your note says the salary review is on Friday",
    );
}

/// A personal memory is given to a shared session only when it is about
/// what the prompt asks, not for a word it shares with the prompt (the
/// user's own name): the session would become personal and its work never
/// reach the team (field test 6).
#[test]
fn a_personal_memory_sharing_one_word_with_a_work_prompt_is_not_given_to_it() {
    let (remote, clones) = one_clone_noting(&format!(
        "bob personal: salary review with Dana on Friday ({NOTE})"
    ));
    let me = &clones[0];
    session(
        me,
        "s1",
        "race round one by bob",
        "Slow check one finished: racing-falcon-ok",
    );
    let context = me.hook(
        "UserPromptSubmit",
        "s2",
        serde_json::json!({"prompt": "race round two by bob"}),
    );
    assert!(context.contains("racing-falcon-ok"), "{context}");
    assert!(!context.contains(NOTE), "{context}");
    me.hook(
        "Stop",
        "s2",
        serde_json::json!({"stop_hook_active": false,
            "last_assistant_message": format!("Round two finished ({LATER}).")}),
    );
    me.hook("SessionEnd", "s2", serde_json::json!({"reason": "other"}));
    me.memlog(&["sync", "origin"]).ok();
    assert!(
        holds(&all_objects(remote.path()), LATER),
        "the work session reached the team"
    );
    // asked about it, the note is given, labelled, and the session stays here
    let context = me.hook(
        "UserPromptSubmit",
        "s3",
        serde_json::json!({"prompt": "when is my salary review with Dana?"}),
    );
    assert!(
        context.contains(NOTE) && context.contains("(personal)"),
        "{context}"
    );
}

/// A clone holding a personal note about a salary review, whose work
/// session "work" has just asked for what was saved.
fn asking_for_the_salary_note() -> (tempfile::TempDir, Vec<TestRepo>) {
    let (remote, clones) = one_clone_noting(&format!("salary review with Dana, codeword {NOTE}"));
    clones[0].hook(
        "UserPromptSubmit",
        "work",
        serde_json::json!({"prompt": "look up what I saved last week"}),
    );
    (remote, clones)
}

/// The same when the command line drops memlog's label on the way
/// (`memlog search … | grep -o …`, `--json | jq -r .text`, a script):
/// memlog notes that it printed personal memory, and the hook recording the
/// call finds the note newer than the session's journal (field test 7).
#[test]
fn a_personal_memory_read_back_through_a_pipe_keeps_what_follows_here() {
    let (remote, clones) = asking_for_the_salary_note();
    let me = &clones[0];
    let command = "memlog search 'salary review' | grep -o 'codeword [A-Za-z0-9-]*'";
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(command.replace(
            "memlog ",
            &format!("{} ", memlog_e2e::memlog_bin().display()),
        ))
        .current_dir(me.path())
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("TZ", "UTC")
        .output()
        .unwrap();
    let found = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        found.contains(NOTE) && !found.contains("(personal)"),
        "{found}"
    );
    me.hook(
        "PostToolUse",
        "work",
        serde_json::json!({"tool_name": "Bash", "tool_input": {"command": command},
            "tool_response": {"stdout": found, "stderr": "", "interrupted": false},
            "tool_use_id": "toolu_pipe"}),
    );
    answer_stays_here(me, remote.path(), "Your codeword is in the note");
}

/// The same through `memlog sql`, whose rows carry no label and whose
/// columns may be any text of any event (field test 12c).
#[test]
fn a_personal_memory_read_back_through_memlog_sql_keeps_what_follows_here() {
    let (remote, clones) = asking_for_the_salary_note();
    let me = &clones[0];
    let query = "SELECT text FROM events WHERE text LIKE '%codeword%'";
    let found = me.memlog(&["sql", query]).ok().stdout();
    assert!(found.contains(NOTE), "{found}");
    me.hook(
        "PostToolUse",
        "work",
        serde_json::json!({"tool_name": "Bash",
            "tool_input": {"command": format!("memlog sql \"{query}\"")},
            "tool_response": {"stdout": found, "stderr": "", "interrupted": false},
            "tool_use_id": "toolu_sql"}),
    );
    answer_stays_here(me, remote.path(), "Your codeword is in the note");
}

/// The same in a young memory, where every note scores near the best hit:
/// a personal note must also cover the prompt, not hold only the user's
/// name (field test 7).
#[test]
fn in_a_young_memory_a_personal_note_holding_only_a_name_is_not_given() {
    let repo = TestRepo::with_generous_budgets();
    repo.memlog(&[
        "note",
        "The deploy pipeline uses blue-green switching via the marmot script; Dave owns it",
    ])
    .ok();
    repo.memlog(&["note", "Database migrations run with sqitch before deploy"])
        .ok();
    repo.memlog(&[
        "note",
        "--personal",
        &format!("Dave's dentist appointment is Tuesday at 3pm ({NOTE})"),
    ])
    .ok();
    let work = repo.hook(
        "UserPromptSubmit",
        "work",
        serde_json::json!({"prompt": "Dave, how does the deploy pipeline work?"}),
    );
    assert!(work.contains("marmot") && !work.contains(NOTE), "{work}");
    let asked = repo.hook(
        "UserPromptSubmit",
        "mine",
        serde_json::json!({"prompt": "when is my dentist appointment?"}),
    );
    assert!(asked.contains(NOTE), "{asked}");
}

/// A remote and one clone of it that noted `note` as personal, its hooks
/// given time to inject (a busy test machine).
fn one_clone_noting(note: &str) -> (tempfile::TempDir, Vec<TestRepo>) {
    let (remote, clones) = remote_and_clones(1);
    std::fs::write(
        clones[0].path().join(".memlog.yaml"),
        "hooks:\n  inject_budget_ms: 20000\n",
    )
    .unwrap();
    clones[0].memlog(&["note", "--personal", note]).ok();
    (remote, clones)
}

/// A session of one turn, `prompt` answered by `answer`, ended.
fn session(repo: &TestRepo, id: &str, prompt: &str, answer: &str) {
    repo.hook(
        "UserPromptSubmit",
        id,
        serde_json::json!({ "prompt": prompt }),
    );
    repo.hook(
        "Stop",
        id,
        serde_json::json!({"stop_hook_active": false, "last_assistant_message": answer}),
    );
    repo.hook("SessionEnd", id, serde_json::json!({"reason": "other"}));
}

/// The briefing goes to every session whatever it is about: a shared
/// session's holds no personal words (a personal session is listed
/// without its prompt), so the session stays shared and reaches the
/// remote; a personal session resumed is briefed in full.
#[test]
fn a_briefing_gives_a_shared_session_no_personal_words() {
    let (remote, clones) = remote_and_clones(1);
    let me = &clones[0];
    session(
        me,
        "diary",
        &format!("<personal>My salary review is on Monday ({NOTE})</personal>"),
        "Noted.",
    );
    let briefing = me.hook(
        "SessionStart",
        "work",
        serde_json::json!({"source": "startup"}),
    );
    assert!(
        briefing.contains("diary"),
        "the session is listed: {briefing}"
    );
    assert!(!briefing.contains(NOTE), "{briefing}");
    session(
        me,
        "work",
        "Refactor the invoice rounding",
        &format!("Rounding refactored ({LATER})."),
    );
    me.memlog(&["sync", "origin"]).ok();
    assert!(
        holds(&all_objects(remote.path()), LATER),
        "the work session is shared"
    );
    assert!(
        !holds(&all_objects(remote.path()), NOTE),
        "the diary is not"
    );
    let resumed = me.hook(
        "SessionStart",
        "diary",
        serde_json::json!({"source": "resume"}),
    );
    assert!(
        !resumed.contains(NOTE),
        "the session's own prompt is not listed: {resumed}"
    );
    me.hook(
        "UserPromptSubmit",
        "diary-2",
        serde_json::json!({"prompt": "<personal>a second diary</personal>"}),
    );
    let personal = me.hook(
        "SessionStart",
        "diary-2",
        serde_json::json!({"source": "resume"}),
    );
    assert!(
        personal.contains(NOTE),
        "a personal session is briefed in full: {personal}"
    );
}

/// The same when a personal memory comes with a file the agent reads
/// (file-aware recall): what follows stays on this machine.
#[test]
fn a_session_given_a_personal_memory_about_a_file_keeps_what_follows_here() {
    let (remote, clones) = remote_and_clones(1);
    let me = &clones[0];
    std::fs::create_dir_all(me.path().join("src")).unwrap();
    std::fs::write(me.path().join("src/invoice.rs"), "fn total() {}\n").unwrap();
    me.memlog(&[
        "note",
        "--personal",
        &format!("src/invoice.rs: my own doubt about its rounding ({NOTE})"),
    ])
    .ok();
    let file = me.path().join("src/invoice.rs").display().to_string();
    let context = me.hook(
        "PreToolUse",
        "work",
        serde_json::json!({"tool_name": "Read", "tool_input": {"file_path": file},
            "tool_use_id": "toolu_read"}),
    );
    assert!(context.contains(NOTE), "{context}");
    answer_stays_here(me, remote.path(), "The rounding doubt stands");
}

/// Session `work`, given the personal note, answers with `answer` and
/// ends, and `me` syncs: the answer is kept here and neither it nor the
/// note reaches the remote.
fn answer_stays_here(me: &TestRepo, remote: &std::path::Path, answer: &str) {
    me.hook(
        "Stop",
        "work",
        serde_json::json!({"stop_hook_active": false,
            "last_assistant_message": format!("{answer} ({LATER}).")}),
    );
    me.hook("SessionEnd", "work", serde_json::json!({"reason": "other"}));
    me.memlog(&["sync", "origin"]).ok();
    assert!(texts(me).contains(LATER), "the answer is kept here");
    for words in [NOTE, LATER] {
        assert!(
            !holds(&all_objects(remote), words),
            "{words} reached the remote"
        );
    }
}

/// What rests on a personal event is personal too: a fact extracted from
/// it (whose quote holds its words), a memory MCP's `memory_remember`
/// grounds in it, a rule promoted on its evidence. None reaches the
/// remote, while a fact from a shared event, extracted in the same run,
/// does.
#[test]
fn facts_drawn_from_personal_events_stay_personal() {
    const QUOTED: &str = "PRSNL-QUOTED-4417";
    const GROUNDED: &str = "PRSNL-GROUNDED-8826";
    const RULED: &str = "PRSNL-RULED-2290";
    let (remote, clones) = remote_and_clones(1);
    let me = &clones[0];
    let id_of = |out: serde_json::Value| out["id"].as_str().unwrap().to_string();
    let private = id_of(
        me.memlog(&[
            "note",
            "--personal",
            "--json",
            &format!("my salary band is {QUOTED} this year"),
        ])
        .ok()
        .json(),
    );
    let shared = id_of(
        me.memlog(&["note", "--json", "The ledger service uses Postgres 16"])
            .ok()
            .json(),
    );
    let facts = serde_json::json!([
        {"text": format!("The user's salary band is {QUOTED}"),
         "quote": format!("my salary band is {QUOTED}"), "event": private},
        {"text": "The ledger runs on Postgres 16",
         "quote": "The ledger service uses Postgres 16", "event": shared},
    ]);
    let out = me
        .memlog_stdin(&["extract", "--facts", "-", "--json"], &facts.to_string())
        .ok()
        .json();
    assert_eq!(out["recorded"].as_array().map(Vec::len), Some(2), "{out}");
    let mut mcp = McpProcess::start(me.path());
    mcp.tool(
        "memory_remember",
        serde_json::json!({"kind": "fact", "text": format!("Salary talks mention {GROUNDED}"),
                           "evidence": [private], "personal": false}),
    );
    assert!(mcp.close().success());
    // a rule promoted from it
    me.memlog(&[
        "rules",
        "add",
        &format!("Never mention {RULED} in reviews"),
        "--evidence",
        &private,
    ])
    .ok();
    me.memlog(&["seal", "--all"]).ok();
    let rules = me.memlog(&["rules", "--json"]).ok().stdout();
    assert!(rules.contains(RULED), "{rules}");
    // and left out of the instructions file committed with the code
    me.memlog(&["rules", "export", "--to", "AGENTS.md"]).ok();
    let exported = std::fs::read_to_string(me.path().join("AGENTS.md")).unwrap();
    assert!(!exported.contains(RULED), "{exported}");
    // found here
    for marker in [QUOTED, GROUNDED] {
        let hits = me
            .memlog(&["search", marker, "--mode", "fts", "--json"])
            .ok()
            .json();
        let kinds: Vec<&str> = hits["hits"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|h| h["kind"].as_str())
            .collect();
        assert!(kinds.contains(&"fact"), "{marker}: {hits}");
    }
    me.memlog(&["sync", "origin"]).ok();
    let on_remote = all_objects(remote.path());
    assert!(holds(&on_remote, "The ledger runs on Postgres 16"));
    for marker in [QUOTED, GROUNDED, RULED] {
        assert!(!holds(&on_remote, marker), "{marker} reached the remote");
    }
}

/// A forget names what it hides and why: of a personal event, that stays
/// here too. Forgetting a personal note with a reason puts nothing on the
/// shared branch; forgetting it with a shared note hides the shared one
/// for every clone, and the reason stays here.
#[test]
fn a_forget_of_personal_memory_keeps_its_reason_here() {
    let (remote, clones) = remote_and_clones(2);
    let (me, teammate) = (&clones[0], &clones[1]);
    // a note's id, as `memlog note` prints it
    let note = |args: &[&str]| me.memlog(args).ok().stdout().trim().to_string();
    let personal = note(&[
        "note",
        "--personal",
        &format!("my lawyer meets me Friday ({NOTE})"),
    ]);
    me.memlog(&[
        "forget",
        &personal,
        "--reason",
        &format!("mentions my lawyer ({FLAG})"),
    ])
    .ok();
    assert!(!texts(me).contains(NOTE), "the note is hidden here");
    // (a word no hex id or session id can hold: "db2" was found in a
    // session id's hex, one run in a few dozen)
    let shared = note(&["note", "the staging database moved to db-sigma"]);
    let personal_2 = note(&[
        "note",
        "--personal",
        &format!("my second private note ({TAG})"),
    ]);
    me.memlog(&[
        "forget",
        &shared,
        &personal_2,
        "--reason",
        &format!("both wrong ({RULE})"),
    ])
    .ok();
    me.memlog(&["sync", "origin"]).ok();
    teammate.memlog(&["sync", "origin"]).ok();
    assert!(
        !texts(teammate).contains("db-sigma"),
        "the shared note is hidden there"
    );
    assert!(
        !texts(me).contains(TAG),
        "the second personal note is hidden here"
    );
    for words in [FLAG, RULE, NOTE, TAG] {
        assert!(
            !holds(&all_objects(remote.path()), words),
            "{words} reached the remote"
        );
    }
}

/// An earlier memlog still running beside this one (another agent's hooks,
/// its watcher) seals personal memory on the legacy ref again after the
/// move: the next command merges it into the store and deletes the ref, so
/// it is neither lost to search nor carried by a mirror push (found by a
/// field test of an upgrade).
#[test]
fn a_legacy_ref_written_again_after_the_move_is_merged_into_the_store() {
    let repo = TestRepo::new();
    let me = &repo;
    me.memlog(&["note", "--personal", &format!("my salary is {NOTE}")])
        .ok();
    // what the earlier memlog seals: a personal log of its own on the
    // repository's ref (made here in another repository, then fetched)
    let elsewhere = TestRepo::new();
    elsewhere
        .memlog(&["note", "--personal", &format!("my locker is {LATER}")])
        .ok();
    me.git(&[
        "fetch",
        "-q",
        store(&elsewhere).to_str().unwrap(),
        "refs/memlog/personal:refs/memlog/personal",
    ])
    .ok();
    for marker in [NOTE, LATER] {
        let hits = me
            .memlog(&["search", marker, "--mode", "fts"])
            .ok()
            .stdout();
        assert!(hits.contains(marker), "{marker}: {hits}");
    }
    assert!(!refs(me.path()).contains("personal"), "{}", refs(me.path()));
    let fsck = me.memlog(&["fsck", "--json"]).ok().json();
    assert_eq!(fsck["problems"].as_array().map(Vec::len), Some(0), "{fsck}");
    let work = tempfile::tempdir().unwrap();
    let mirror = work.path().join("mirror.git");
    run(git_command(work.path()).args(["init", "-q", "--bare", "mirror.git"])).ok();
    me.git(&["push", "-q", "--mirror", mirror.to_str().unwrap()])
        .ok();
    assert!(!holds(&all_objects(&mirror), LATER));
}

/// `memlog log` lists personal sessions too, labelled, with the shared
/// ones by time: a memory holding only personal sessions said "no sealed
/// sessions yet" (field test 7).
#[test]
fn memlog_log_lists_personal_sessions_labelled() {
    let repo = TestRepo::new();
    repo.memlog(&["note", "--personal", &format!("my locker code ({NOTE})")])
        .ok();
    let text = repo.memlog(&["log"]).ok().stdout();
    assert!(text.contains("(personal)") && text.contains(NOTE), "{text}");
    repo.memlog(&["note", "the staging host is blue"]).ok();
    let log = repo.memlog(&["log", "--json"]).ok().json();
    let personal: Vec<bool> = log["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["personal"] == true)
        .collect();
    assert_eq!(personal, [false, true], "{log:#}");
}
