//! Git's own housekeeping running beside memlog: `git gc --prune=now`
//! deletes every loose object no ref reaches, whenever the user (or a
//! script) runs it, and memlog seals at moments the user does not choose.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use memlog_e2e::{TestRepo, git_command, run};

/// Seals racing `git gc --prune=now` in a loop: the ref never points at a
/// pruned commit and no sealed event is lost (a field test: within 5 to 10
/// seals the ref pointed at a commit gc had deleted, the session's journal
/// was gone, and every command failed).
#[test]
fn seals_survive_a_concurrent_gc_prune_now() {
    let repo = TestRepo::new();
    // What makes the race harmless, without a race: a prune of "now" in
    // the moment before the ref reaches a seal's objects keeps them. Here
    // the ref is taken away after the seal, the prune runs, and the commit
    // must still be there (the race below hit the old binary within 5 to
    // 10 seals on a quiet machine, and rarely on a loaded one).
    repo.record("first", "note", "sealed alone");
    repo.memlog(&["seal", "--all"]).ok();
    let git = |args: &[&str]| run(git_command(repo.path()).args(args));
    let sealed = git(&["rev-parse", "refs/heads/memlog"]).ok().stdout();
    let sealed = sealed.trim();
    git(&["update-ref", "-d", "refs/heads/memlog"]).ok();
    git(&["prune", "--expire=now"]).ok();
    assert_eq!(
        git(&["cat-file", "-e", sealed]).code(),
        Some(0),
        "a prune deleted the seal's commit"
    );
    git(&["update-ref", "refs/heads/memlog", sealed]).ok();
    let stop = Arc::new(AtomicBool::new(false));
    let gc = {
        let stop = stop.clone();
        let dir = repo.path().to_path_buf();
        std::thread::spawn(move || {
            let mut runs = 0;
            while !stop.load(Ordering::Relaxed) {
                run(git_command(&dir).args(["gc", "--prune=now", "-q"]));
                runs += 1;
            }
            runs
        })
    };
    let mut recorded = Vec::new();
    for round in 0..20 {
        recorded.push(repo.record(&format!("s{round}"), "note", &format!("round {round}")));
        repo.memlog(&["seal", "--all"]).ok();
        let tip = run(git_command(repo.path()).args(["cat-file", "-e", "refs/heads/memlog"]));
        assert_eq!(
            tip.code(),
            Some(0),
            "round {round}: the ref names a pruned commit"
        );
    }
    stop.store(true, Ordering::Relaxed);
    assert!(gc.join().unwrap() > 0);
    let stored: Vec<String> = repo
        .cat()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    for id in &recorded {
        assert!(stored.contains(id), "{id} lost");
    }
    repo.memlog(&["fsck"]).ok();
}

/// A repository whose path is not UTF-8 (a folder named in another
/// encoding): every read command answers, in text and JSON; doctor and
/// stats panicked putting the path in their JSON (field test 12b).
#[cfg(unix)]
#[test]
fn a_repository_whose_path_is_not_utf8_is_read_by_every_command() {
    use std::os::unix::ffi::OsStrExt;
    let parent = tempfile::tempdir().expect("tempdir");
    let dir = parent
        .path()
        .join(std::ffi::OsStr::from_bytes(b"caf\xe9-project"));
    std::fs::create_dir(&dir).expect("mkdir");
    run(git_command(&dir).args(["init", "-q", "-b", "main"])).ok();
    let memlog = |args: &[&str]| run(memlog_e2e::memlog_command(&dir).args(args));
    memlog(&["install", "claude"]).ok();
    memlog(&["note", "the build cache lives on the second disk"]).ok();
    for args in [
        &["doctor", "--json"][..],
        &["doctor"],
        &["stats", "--json"],
        &["stats"],
        &["log", "--json"],
        &["search", "build cache", "--json"],
        &["fsck", "--json"],
    ] {
        let out = memlog(args);
        assert_ne!(out.code(), Some(101), "{args:?} panicked: {}", out.stderr());
        if args.contains(&"--json") {
            serde_json::from_str::<serde_json::Value>(&out.stdout())
                .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", out.stdout()));
        }
    }
}
