//! Personal scope: events marked personal (`note --personal`, `record
//! --personal`, a `<personal>` tag, `.memlog.yaml` rules, MCP's
//! `memory_remember` with `personal`) are searched and
//! injected on this machine, sealed on `refs/memlog/personal`, and not one
//! byte of them reaches the remote through `memlog sync` or `git push
//! origin memlog`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use memlog_e2e::{McpProcess, TestRepo, all_objects, holds, remote_and_clones};

const NOTE: &str = "PRSNL-NOTE-5521";
const FLAG: &str = "PRSNL-FLAG-7730";
const TAG: &str = "PRSNL-TAG-9042";
const RULE: &str = "PRSNL-RULE-1187";
const MCP: &str = "PRSNL-MCP-6403";

fn texts(repo: &TestRepo) -> String {
    repo.memlog(&["cat"]).ok().stdout()
}

#[test]
fn personal_memory_is_found_here_and_never_leaves() {
    let (remote, clones) = remote_and_clones(2);
    let (me, mate) = (&clones[0], &clones[1]);
    std::fs::write(
        me.path().join(".memlog.yaml"),
        "personal:\n  sessions: [\"diary-*\"]\n",
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
    assert!(
        me.git(&["rev-parse", "--verify", "refs/memlog/personal"])
            .output
            .status
            .success()
    );
    let fsck = me.memlog(&["fsck", "--json"]).ok().json();
    assert_eq!(fsck["problems"].as_array().map(Vec::len), Some(0), "{fsck}");

    // Neither sync nor a plain push carries them.
    me.memlog(&["sync", "origin"]).ok();
    me.git(&["push", "-q", "origin", "memlog"]).ok();
    let on_remote = all_objects(remote.path());
    assert!(
        holds(&on_remote, "Refactor the parser"),
        "shared memory is there"
    );
    assert!(holds(&on_remote, "deploy script"));
    assert!(holds(&on_remote, "Releases are tagged from main"));
    for marker in [NOTE, FLAG, TAG, RULE, MCP] {
        assert!(!holds(&on_remote, marker), "{marker} reached the remote");
    }
    mate.memlog(&["sync", "origin"]).ok();
    let theirs = texts(mate);
    assert!(theirs.contains("Refactor the parser"));
    for marker in [NOTE, FLAG, TAG, RULE, MCP] {
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
    assert!(!holds(&all_objects(me.path()), NOTE));
    assert!(holds(&all_objects(me.path()), FLAG));
}
