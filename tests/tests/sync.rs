//! `memlog sync` between clones of a local bare remote: union of events, no
//! conflicts, idempotence, equivalence with plain `git pull`, and refusing
//! remotes the user did not name or configure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use std::collections::BTreeSet;
use std::path::Path;

use memlog_e2e::{TestRepo, git_command, remote_and_clones, run};

fn memlog_tip(repo: &TestRepo) -> Option<String> {
    let out = repo.git(&["rev-parse", "-q", "--verify", "refs/heads/memlog"]);
    out.output
        .status
        .success()
        .then(|| out.stdout().trim().to_string())
}

fn remote_has_memlog(remote: &Path) -> bool {
    let out = run(git_command(remote).args(["ls-remote", ".", "refs/heads/memlog"])).ok();
    !out.stdout().trim().is_empty()
}

fn ids(events: &[serde_json::Value]) -> BTreeSet<String> {
    events
        .iter()
        .map(|e| e["id"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// A tiny seeded generator (xorshift), so the order is random but repeatable.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

fn seal_session(repo: &TestRepo, session: &str) -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    ids.insert(repo.record(session, "user_prompt", &format!("prompt of {session}")));
    ids.insert(repo.record(session, "agent_response", &format!("answer of {session}")));
    repo.memlog(&["seal", "--session", session]).ok();
    ids
}

#[test]
fn three_clones_syncing_in_random_order_converge_on_the_union() {
    let (remote, clones) = remote_and_clones(3);
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let mut expected = BTreeSet::new();
    for round in 0..12 {
        let who = rng.below(clones.len());
        expected.extend(seal_session(&clones[who], &format!("s-{round}-c{who}")));
        let syncer = rng.below(clones.len());
        let out = clones[syncer].memlog(&["sync", "origin"]).ok();
        assert!(!out.stdout().contains("conflict"), "{}", out.stdout());
    }
    // Two passes bring every clone to the union.
    for _ in 0..2 {
        for c in &clones {
            c.memlog(&["sync", "origin"]).ok();
        }
    }
    let tips: Vec<_> = clones.iter().map(memlog_tip).collect();
    assert!(
        tips.iter().all(|t| t.is_some() && *t == tips[0]),
        "{tips:?}"
    );
    for c in &clones {
        assert_eq!(ids(&c.cat()), expected);
        let fsck = c.memlog(&["fsck", "--json"]).ok().json();
        assert_eq!(fsck["problems"].as_array().map(Vec::len), Some(0), "{fsck}");
        assert!(c.git(&["fsck", "--strict"]).output.status.success());
    }
    // Sync again: nothing moves, locally or on the remote.
    let remote_tip = run(git_command(remote.path()).args(["rev-parse", "refs/heads/memlog"]))
        .ok()
        .stdout();
    for c in &clones {
        let before = memlog_tip(c);
        let out = c.memlog(&["sync", "origin"]).ok();
        assert!(out.stdout().contains("already in sync"), "{}", out.stdout());
        assert_eq!(memlog_tip(c), before);
    }
    let remote_after = run(git_command(remote.path()).args(["rev-parse", "refs/heads/memlog"]))
        .ok()
        .stdout();
    assert_eq!(remote_tip, remote_after);
    // Merge commits carry the trailer and no seal trailers.
    let messages = clones[0]
        .git(&["log", "--merges", "--format=%B%x00", "refs/heads/memlog"])
        .ok()
        .stdout();
    for m in messages.split('\0').filter(|m| !m.trim().is_empty()) {
        assert!(m.contains("Memlog-Merge: origin"), "{m}");
        assert!(!m.contains("Memlog-Session"), "{m}");
    }
}

#[test]
fn diverged_clones_give_the_same_memory_with_git_pull_as_with_sync() {
    let (_remote, clones) = remote_and_clones(2);
    let (a, b) = (&clones[0], &clones[1]);
    seal_session(a, "common");
    a.memlog(&["sync", "origin"]).ok();
    b.memlog(&["sync", "origin"]).ok();
    seal_session(a, "only-a");
    a.memlog(&["sync", "origin"]).ok();
    seal_session(b, "only-b");
    // A copy of b merges with plain git; b itself with memlog sync.
    let copy = tempfile::Builder::new()
        .prefix("memlog-e2e-copy-")
        .tempdir()
        .expect("tempdir");
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", b.path().display()))
        .arg(copy.path())
        .status()
        .expect("cp");
    assert!(status.success());
    let b_git = TestRepo { dir: copy };
    b_git.git(&["checkout", "-q", "memlog"]).ok();
    b_git
        .git(&["pull", "-q", "--no-rebase", "--no-edit", "origin", "memlog"])
        .ok();
    b.memlog(&["sync", "origin"]).ok();
    // `memlog diff` by default shows what the sync brought in.
    let diff = b.memlog(&["diff"]).ok().stdout();
    assert!(
        diff.contains("only-a") && !diff.contains("only-b"),
        "{diff}"
    );
    let with_sync = b.memlog(&["cat"]).ok().stdout();
    let with_git = b_git.memlog(&["cat"]).ok().stdout();
    assert_eq!(with_sync, with_git);
    assert_eq!(ids(&b.cat()).len(), 6);
    // one merge commit, two parents
    let merges = b
        .git(&["rev-list", "--merges", "refs/heads/memlog"])
        .ok()
        .stdout();
    assert_eq!(merges.lines().count(), 1, "{merges}");
    let fsck = b_git.memlog(&["fsck", "--json"]).ok().json();
    assert_eq!(fsck["problems"].as_array().map(Vec::len), Some(0), "{fsck}");
}

#[test]
fn sync_refuses_remotes_not_named_or_configured() {
    let (remote, clones) = remote_and_clones(1);
    let repo = &clones[0];
    seal_session(repo, "private-session");

    let out = repo.memlog(&["sync"]);
    assert_eq!(out.code(), Some(1));
    assert!(out.stderr().contains("no remote named"), "{}", out.stderr());
    assert!(!remote_has_memlog(remote.path()));

    // A path or URL that is not a remote of the repository is refused too.
    let out = repo.memlog(&["sync", &remote.path().display().to_string()]);
    assert_eq!(out.code(), Some(1));
    assert!(out.stderr().contains("not a remote"), "{}", out.stderr());
    let out = repo.memlog(&["sync", "upstream"]);
    assert_eq!(out.code(), Some(1));
    assert!(!remote_has_memlog(remote.path()));

    // Configured: the remote, which never had memlog, gets the branch.
    std::fs::write(
        repo.path().join(".memlog.yaml"),
        "sync:\n  remotes: [origin]\n",
    )
    .expect("write config");
    let out = repo.memlog(&["sync"]).ok();
    assert!(out.stdout().contains("created"), "{}", out.stdout());
    assert!(remote_has_memlog(remote.path()));
    let remote_tip = run(git_command(remote.path()).args(["rev-parse", "refs/heads/memlog"]))
        .ok()
        .stdout();
    assert_eq!(Some(remote_tip.trim().to_string()), memlog_tip(repo));
}

#[test]
fn a_clone_without_memory_takes_the_remote_s() {
    let (_remote, clones) = remote_and_clones(2);
    seal_session(&clones[0], "first");
    clones[0].memlog(&["sync", "origin"]).ok();
    let out = clones[1].memlog(&["sync", "origin", "--json"]).ok().json();
    assert_eq!(out[0]["action"], "took_remote");
    assert_eq!(memlog_tip(&clones[0]), memlog_tip(&clones[1]));
    assert_eq!(clones[1].cat().len(), 2);
}

#[test]
fn fsck_reports_a_merge_that_is_not_a_union() {
    let (_remote, clones) = remote_and_clones(2);
    let (a, b) = (&clones[0], &clones[1]);
    seal_session(a, "only-a");
    a.memlog(&["sync", "origin"]).ok();
    seal_session(b, "only-b");
    b.memlog(&["sync", "origin"]).ok();
    let fsck = b.memlog(&["fsck", "--json"]).ok().json();
    assert_eq!(fsck["problems"].as_array().map(Vec::len), Some(0), "{fsck}");
    // A hand-made merge that keeps only its first parent's tree.
    let parents = b
        .git(&["rev-parse", "refs/heads/memlog^1", "refs/heads/memlog^2"])
        .ok()
        .stdout();
    let parents: Vec<&str> = parents.lines().collect();
    let tree = b
        .git(&["rev-parse", &format!("{}^{{tree}}", parents[0])])
        .ok()
        .stdout();
    let bad = b
        .git(&[
            "commit-tree",
            tree.trim(),
            "-p",
            parents[0],
            "-p",
            parents[1],
            "-m",
            "lossy merge",
        ])
        .ok()
        .stdout();
    b.git(&["update-ref", "refs/heads/memlog", bad.trim()]).ok();
    let fsck = b.memlog(&["fsck", "--json"]).json();
    let problems = fsck["problems"].to_string();
    assert!(problems.contains("a merge must be a union"), "{fsck}");
}

fn rev(dir: &Path, name: &str) -> Option<String> {
    let out = run(git_command(dir).args(["rev-parse", "-q", "--verify", name]));
    out.output
        .status
        .success()
        .then(|| out.stdout().trim().to_string())
}

#[test]
fn a_code_branch_named_memlog_is_refused_and_left_untouched() {
    let (remote, clones) = remote_and_clones(2);
    let (dev, mine) = (&clones[0], &clones[1]);
    // Someone pushes a code branch that happens to be called memlog.
    dev.git(&["checkout", "-q", "-b", "memlog"]).ok();
    std::fs::create_dir_all(dev.path().join("src")).unwrap();
    std::fs::write(dev.path().join("src/main.rs"), "fn main() {}\n").unwrap();
    dev.git(&["add", "src/main.rs"]).ok();
    dev.git(&["commit", "-q", "-m", "Add the binary"]).ok();
    dev.git(&["push", "-q", "origin", "memlog"]).ok();
    let code_tip = rev(remote.path(), "refs/heads/memlog");

    // A clone with memory refuses it: nothing merged, nothing pushed.
    let ids_before = ids(&{
        seal_session(mine, "private-session");
        mine.cat()
    });
    let local_before = memlog_tip(mine);
    let out = mine.memlog(&["sync", "origin"]);
    assert_eq!(out.code(), Some(1), "{}", out.stdout());
    let err = out.stderr();
    assert!(
        err.contains("is not a memlog log")
            && err.contains("src/")
            && err.contains("Nothing was merged or pushed"),
        "{err}"
    );
    assert_eq!(rev(remote.path(), "refs/heads/memlog"), code_tip);
    assert_eq!(memlog_tip(mine), local_before);
    assert_eq!(ids(&mine.cat()), ids_before);
    assert_eq!(rev(mine.path(), "refs/remotes/origin/memlog"), None);
    let files = run(git_command(remote.path()).args(["ls-tree", "-r", "--name-only", "memlog"]))
        .ok()
        .stdout();
    assert!(files.contains("src/main.rs"), "{files}");
    assert!(mine.memlog(&["fsck", "--json"]).ok().json()["problems"] == serde_json::json!([]));

    // A clone without memory does not take it as its log either.
    let fresh = TestRepo::clone_of(remote.path());
    let tracked = rev(fresh.path(), "refs/remotes/origin/memlog");
    let out = fresh.memlog(&["sync", "origin"]);
    assert_eq!(out.code(), Some(1));
    assert!(
        out.stderr().contains("is not a memlog log"),
        "{}",
        out.stderr()
    );
    assert_eq!(memlog_tip(&fresh), None);
    assert_eq!(rev(fresh.path(), "refs/remotes/origin/memlog"), tracked);

    // Memory on a ref of its own syncs beside the code branch.
    std::fs::write(
        mine.path().join(".memlog.yaml"),
        "ref: refs/heads/agent-memory\n",
    )
    .unwrap();
    seal_session(mine, "on-its-own-ref");
    let out = mine.memlog(&["sync", "origin"]).ok();
    assert!(out.stdout().contains("created"), "{}", out.stdout());
    assert_eq!(rev(remote.path(), "refs/heads/memlog"), code_tip);
    assert!(rev(remote.path(), "refs/heads/agent-memory").is_some());
}

/// A README committed by hand on the remote's log (for people browsing
/// the branch) is refused, and the refusal says how to put the log back;
/// the command it gives, run as printed, makes sync work again.
#[test]
fn a_hand_commit_on_the_remote_log_is_refused_with_the_way_back() {
    let (remote, clones) = remote_and_clones(2);
    let (browser, mine) = (&clones[0], &clones[1]);
    seal_session(browser, "shared-first");
    browser.memlog(&["sync", "origin"]).ok();
    let good = rev(remote.path(), "refs/heads/memlog").unwrap();
    browser.git(&["checkout", "-q", "memlog"]).ok();
    std::fs::write(browser.path().join("README.md"), "Agent memory\n").unwrap();
    browser.git(&["add", "README.md"]).ok();
    browser
        .git(&["commit", "-q", "-m", "Explain the branch"])
        .ok();
    browser.git(&["push", "-q", "origin", "memlog"]).ok();

    let ids_before = ids(&{
        seal_session(mine, "mine");
        mine.cat()
    });
    let out = mine.memlog(&["sync", "origin"]);
    assert_eq!(out.code(), Some(1), "{}", out.stdout());
    let err = out.stderr();
    assert!(
        err.contains("README.md") && err.contains(&good[..12]) && err.contains("1 commit(s)"),
        "{err}"
    );
    let command = err
        .split('`')
        .find(|part| part.starts_with("git push --force-with-lease"))
        .unwrap_or_else(|| panic!("no command in: {err}"));
    let args: Vec<&str> = command.split_whitespace().skip(1).collect();
    mine.git(&args).ok();
    assert_eq!(rev(remote.path(), "refs/heads/memlog"), Some(good));
    mine.memlog(&["sync", "origin"]).ok();
    assert_eq!(
        ids(&mine.cat()),
        ids_before.union(&ids(&browser.cat())).cloned().collect()
    );
}

#[test]
fn a_root_commit_without_trailers_is_refused() {
    let (remote, clones) = remote_and_clones(2);
    let (forger, mine) = (&clones[0], &clones[1]);
    // A branch shaped like a log (segments only) that memlog did not write.
    seal_session(forger, "real");
    let tree = forger
        .git(&["rev-parse", "refs/heads/memlog^{tree}"])
        .ok()
        .stdout();
    let orphan = forger
        .git(&["commit-tree", tree.trim(), "-m", "hand made"])
        .ok()
        .stdout();
    forger
        .git(&[
            "push",
            "-q",
            "origin",
            &format!("{}:refs/heads/memlog", orphan.trim()),
        ])
        .ok();
    seal_session(mine, "mine");
    let out = mine.memlog(&["sync", "origin"]);
    assert_eq!(out.code(), Some(1));
    assert!(
        out.stderr().contains("root commit") && out.stderr().contains("hand made"),
        "{}",
        out.stderr()
    );
    assert_eq!(
        rev(remote.path(), "refs/heads/memlog"),
        Some(orphan.trim().to_string())
    );
}

#[test]
fn memory_can_live_in_a_private_repository_of_its_own() {
    let (code_remote, clones) = remote_and_clones(2);
    let memory = tempfile::Builder::new()
        .prefix("memlog-e2e-memory-")
        .tempdir()
        .expect("tempdir");
    run(git_command(memory.path()).args(["init", "-q", "--bare"])).ok();
    let url = memory.path().display().to_string();
    let config = format!("sync:\n  remotes: [\"{url}\"]\n");
    for c in &clones {
        std::fs::write(c.path().join(".memlog.yaml"), &config).unwrap();
    }
    let (a, b) = (&clones[0], &clones[1]);
    let mut expected = seal_session(a, "from-a");
    a.memlog(&["sync"]).ok();
    expected.extend(seal_session(b, "from-b"));
    b.memlog(&["sync"]).ok();
    a.memlog(&["sync"]).ok();
    assert_eq!(ids(&a.cat()), expected);
    assert_eq!(ids(&b.cat()), expected);
    // The code's remote never saw memory; the memory repository has it.
    assert!(!remote_has_memlog(code_remote.path()));
    assert!(remote_has_memlog(memory.path()));
    // A purge names the memory repository to sync by its URL, once (its
    // tracking ref is named by the URL's hash, which is no remote's name).
    let secret = a.record("from-a-2", "note", "a secret for the memory repository");
    a.memlog(&["seal", "--session", "from-a-2"]).ok();
    a.memlog(&["sync"]).ok();
    a.memlog(&["forget", &secret]).ok();
    let purged = a.memlog(&["purge", "--json"]).ok().json();
    assert_eq!(
        purged["remotes_to_sync"],
        serde_json::json!([url]),
        "{purged}"
    );
    // Named on the command line without being configured, a URL is refused.
    let other = TestRepo::clone_of(code_remote.path());
    let out = other.memlog(&["sync", &url]);
    assert_eq!(out.code(), Some(1));
    assert!(out.stderr().contains("not a remote"), "{}", out.stderr());
}

/// Makes a commit on `repo`'s memlog ref that truncates one of its
/// segments (what a hand edit or a buggy tool leaves), with `message`;
/// returns the segment's path.
fn damage_a_segment(repo: &TestRepo, message: &str) -> String {
    let files = repo
        .git(&["ls-tree", "-r", "--name-only", "refs/heads/memlog"])
        .ok()
        .stdout();
    let seg = files
        .lines()
        .find(|l| l.starts_with("segments/"))
        .unwrap()
        .to_string();
    let bytes = repo
        .git(&["show", &format!("refs/heads/memlog:{seg}")])
        .ok()
        .stdout();
    repo.tamper(&seg, &bytes[..bytes.len() / 2], message);
    seg
}

/// A damaged log stays where it is: sync neither pushes a local log whose
/// segment was cut (even under seal trailers) or which holds a commit
/// memlog did not write, nor takes such a log from the remote (found by a
/// field test: a truncated segment travelled to a teammate, whose own
/// session then lived in it, and `memlog rebuild` refused everywhere).
#[test]
fn a_damaged_log_is_neither_pushed_nor_taken() {
    let (remote, clones) = remote_and_clones(2);
    let (broken, mate) = (&clones[0], &clones[1]);
    seal_session(broken, "first");
    broken.memlog(&["sync", "origin"]).ok();
    mate.memlog(&["sync", "origin"]).ok();
    let shared = rev(remote.path(), "refs/heads/memlog");

    let seg = damage_a_segment(
        broken,
        "Looks like a seal\n\nMemlog-Session: fake\nMemlog-Events: 1",
    );
    let out = broken.memlog(&["sync", "origin"]);
    assert_eq!(out.code(), Some(1), "{}", out.stdout());
    assert!(
        out.stderr().contains("refusing to push") && out.stderr().contains(&seg),
        "{}",
        out.stderr()
    );
    assert_eq!(rev(remote.path(), "refs/heads/memlog"), shared);

    // A plain commit memlog did not write is not pushed either.
    let reset = || {
        broken
            .git(&[
                "update-ref",
                "refs/heads/memlog",
                shared.as_deref().unwrap(),
            ])
            .ok();
    };
    reset();
    let whole = broken
        .git(&["show", &format!("refs/heads/memlog:{seg}")])
        .ok()
        .stdout();
    broken.tamper(&seg, &whole, "manual edit");
    let out = broken.memlog(&["sync", "origin"]);
    assert_eq!(out.code(), Some(1));
    assert!(out.stderr().contains("manual edit"), "{}", out.stderr());
    assert_eq!(rev(remote.path(), "refs/heads/memlog"), shared);

    // Pushed by plain git, the damaged log is not taken by a teammate.
    reset();
    damage_a_segment(
        broken,
        "Looks like a seal\n\nMemlog-Session: fake\nMemlog-Events: 1",
    );
    broken
        .git(&["push", "-q", "origin", "refs/heads/memlog"])
        .ok();
    seal_session(mate, "mates-own");
    let before = memlog_tip(mate);
    let out = mate.memlog(&["sync", "origin"]);
    assert_eq!(out.code(), Some(1));
    assert!(
        out.stderr().contains("is damaged") && out.stderr().contains(&seg),
        "{}",
        out.stderr()
    );
    assert_eq!(memlog_tip(mate), before);
    assert!(mate.memlog(&["fsck", "--json"]).ok().json()["problems"] == serde_json::json!([]));
}

/// A fresh clone of a repository whose remote holds memory is told where
/// it is (found by a field test: log, doctor and search all said nothing
/// of origin's memlog branch, right there after `git clone`).
#[test]
fn a_fresh_clone_is_told_its_teams_memory_is_one_sync_away() {
    let (remote, clones) = remote_and_clones(1);
    seal_session(&clones[0], "first");
    clones[0].memlog(&["sync", "origin"]).ok();
    let fresh = TestRepo::clone_of(remote.path());
    let hint = "`memlog sync origin` brings it";
    let log = fresh.memlog(&["log"]).ok().stdout();
    assert!(log.contains(hint), "{log}");
    let doctor = fresh.memlog(&["doctor"]).ok().stdout();
    assert!(doctor.contains(hint), "{doctor}");
    // the first session is told, through its agent (a field test: a
    // newcomer's first session was briefed nothing, and nothing said why)
    let start = fresh.hook(
        "SessionStart",
        "newcomer",
        serde_json::json!({"source": "startup"}),
    );
    assert!(
        start.contains("tell the user") && start.contains("`memlog sync origin` brings it"),
        "{start}"
    );
    // and once that session sealed a log of its own, doctor still says so
    fresh.hook(
        "SessionEnd",
        "newcomer",
        serde_json::json!({"reason": "exit"}),
    );
    assert!(memlog_tip(&fresh).is_some());
    let doctor = fresh.memlog(&["doctor"]).ok().stdout();
    assert!(doctor.contains(hint), "{doctor}");
    fresh.memlog(&["sync", "origin"]).ok();
    let doctor = fresh.memlog(&["doctor"]).ok().stdout();
    assert!(!doctor.contains(hint), "{doctor}");
    let doctor = fresh.memlog(&["doctor", "--json"]).ok().json();
    assert!(
        doctor["log"]
            .as_str()
            .unwrap()
            .starts_with("refs/heads/memlog at "),
        "{doctor}"
    );
}

/// A clone of `remote` made with `git clone <args> file://<remote>` (the
/// file:// URL makes git use its transport, which `--filter` and
/// `--depth` need).
fn clone_with(remote: &Path, args: &[&str]) -> TestRepo {
    let dir = tempfile::Builder::new()
        .prefix("memlog-e2e-clone-")
        .tempdir()
        .expect("tempdir");
    let url = format!("file://{}", remote.display());
    run(git_command(dir.path())
        .args(["clone", "-q"])
        .args(args)
        .args([url.as_str(), "."]))
    .ok();
    TestRepo { dir }
}

/// Objects reachable from the memlog ref that are not in the repository.
fn missing_objects(repo: &TestRepo) -> Vec<String> {
    repo.git(&[
        "rev-list",
        "--objects",
        "--missing=print",
        "refs/heads/memlog",
    ])
    .ok()
    .stdout()
    .lines()
    .filter(|l| l.starts_with('?'))
    .map(str::to_string)
    .collect()
}

/// A partial clone (`git clone --filter=blob:none`) holds the memlog ref's
/// commits but not its segments, and gix, which memlog reads with, does
/// not fetch them on demand: sync brings them, whether the clone or a
/// later filtered `git fetch` left them out, and a read before that says
/// why it fails and what fixes it (field test 8a: every read failed with
/// a bare "object … could not be found", even after `memlog sync`).
#[test]
fn a_partial_clone_gets_the_log_s_segments_from_sync() {
    let (remote, clones) = remote_and_clones(1);
    let teammate = &clones[0];
    let mut expected = seal_session(teammate, "before-the-clones");
    teammate.memlog(&["sync", "origin"]).ok();
    run(git_command(remote.path()).args(["config", "uploadpack.allowFilter", "true"])).ok();

    // A fresh partial clone: the first sync brings the segments.
    let fresh = clone_with(remote.path(), &["--filter=blob:none"]);
    fresh.memlog(&["sync", "origin"]).ok();
    assert_eq!(missing_objects(&fresh), Vec::<String>::new());
    assert_eq!(ids(&fresh.cat()), expected);
    fresh.memlog(&["log"]).ok();

    // A partial clone whose memlog branch git made from the blobless
    // commits: reads explain themselves, and the next sync repairs it.
    let partial = clone_with(remote.path(), &["--filter=blob:none"]);
    partial.git(&["branch", "memlog", "origin/memlog"]).ok();
    assert!(!missing_objects(&partial).is_empty());
    let out = partial.memlog(&["log"]);
    assert_eq!(out.code(), Some(1), "{}", out.stdout());
    assert!(
        out.stderr().contains("partial clone") && out.stderr().contains("memlog sync origin"),
        "{}",
        out.stderr()
    );
    partial.memlog(&["sync", "origin"]).ok();
    assert_eq!(missing_objects(&partial), Vec::<String>::new());
    assert_eq!(ids(&partial.cat()), expected);

    // New memory fetched by a plain (filtered) `git fetch` comes without
    // its segments; sync brings them too, and merges.
    expected.extend(seal_session(teammate, "after-the-clones"));
    teammate.memlog(&["sync", "origin"]).ok();
    partial.git(&["fetch", "-q", "origin"]).ok();
    expected.extend(seal_session(&partial, "in-the-partial-clone"));
    partial.memlog(&["sync", "origin"]).ok();
    assert_eq!(missing_objects(&partial), Vec::<String>::new());
    assert_eq!(ids(&partial.cat()), expected);
    let fsck = partial.memlog(&["fsck", "--json"]).ok().json();
    assert_eq!(fsck["problems"].as_array().map(Vec::len), Some(0), "{fsck}");
    partial.memlog(&["search", "after-the-clones"]).ok();
}

/// Writes an executable shell script `name` in `dir`, running `body`.
fn script(dir: &Path, name: &str, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// How many lines `path` has (0 when it does not exist).
fn lines_in(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
}

/// A push that git refuses for another reason than a moved remote ref (the
/// user's pre-push hook, a protected branch) is reported once, as git gave
/// it, and the hook runs once; only a remote ref that moved meanwhile is
/// fetched, joined and pushed again (field test 8a: a pre-push hook that
/// failed ran 5 times, and sync said "the remote kept moving").
#[test]
fn a_refused_push_is_reported_once_and_only_a_moved_remote_is_retried() {
    let (remote, clones) = remote_and_clones(2);
    let (mine, mate) = (&clones[0], &clones[1]);
    let hooks = tempfile::tempdir().unwrap();
    let ran = hooks.path().join("ran.log");
    script(
        hooks.path(),
        "pre-push",
        &format!(
            "echo run >> '{}'\necho 'pre-push: tests failed' >&2\nexit 1",
            ran.display()
        ),
    );
    mine.git(&["config", "core.hooksPath", hooks.path().to_str().unwrap()])
        .ok();
    let mut expected = seal_session(mine, "refused-by-the-hook");
    let out = mine.memlog(&["sync", "origin"]);
    assert_eq!(out.code(), Some(1), "{}", out.stdout());
    let err = out.stderr();
    assert!(
        err.contains("pre-push hook")
            && err.contains("tests failed")
            && err.contains("--no-verify"),
        "{err}"
    );
    assert!(!err.contains("kept moving"), "{err}");
    assert_eq!(lines_in(&ran), 1, "{err}");
    assert!(!remote_has_memlog(remote.path()));

    // The remote's server refuses the ref (a protected branch): once too.
    mine.git(&["config", "--unset", "core.hooksPath"]).ok();
    let refusals = hooks.path().join("refused.log");
    script(
        &remote.path().join("hooks"),
        "pre-receive",
        &format!(
            "echo run >> '{}'\necho 'refs/heads/memlog is a protected branch' >&2\nexit 1",
            refusals.display()
        ),
    );
    let out = mine.memlog(&["sync", "origin"]);
    assert_eq!(out.code(), Some(1), "{}", out.stdout());
    let err = out.stderr();
    assert!(
        err.contains("remote refused") && err.contains("protected branch"),
        "{err}"
    );
    assert_eq!(lines_in(&refusals), 1, "{err}");
    assert!(!remote_has_memlog(remote.path()));
    std::fs::remove_file(remote.path().join("hooks/pre-receive")).unwrap();

    // A teammate pushes while this push is under way (from inside the
    // pre-push hook, the first time it runs): the remote's ref moved, so
    // sync joins the teammate's memory and pushes again.
    mine.memlog(&["sync", "origin"]).ok();
    mate.memlog(&["sync", "origin"]).ok();
    expected.extend(seal_session(mate, "pushed-meanwhile"));
    expected.extend(seal_session(mine, "pushed-after-the-race"));
    std::fs::remove_file(&ran).unwrap();
    script(
        hooks.path(),
        "pre-push",
        &format!(
            "echo run >> '{ran}'\n[ \"$(wc -l < '{ran}')\" -gt 1 ] && exit 0\n\
             unset GIT_DIR GIT_WORK_TREE\ngit -C '{mate}' push -q origin refs/heads/memlog",
            ran = ran.display(),
            mate = mate.path().display()
        ),
    );
    mine.git(&["config", "core.hooksPath", hooks.path().to_str().unwrap()])
        .ok();
    let out = mine.memlog(&["sync", "origin"]).ok();
    assert_eq!(lines_in(&ran), 2, "{}", out.stdout());
    assert_eq!(ids(&mine.cat()), expected);
    assert_eq!(rev(remote.path(), "refs/heads/memlog"), memlog_tip(mine));
}

/// A clone that fetched the memlog ref shallow (`git clone --depth 1
/// --no-single-branch`): sync deepens that ref alone, so its walks find
/// every commit while the code's branches stay shallow, and a read of a
/// history still cut off says "shallow" and names `git fetch --unshallow`
/// (field test 8a: sync failed with a bare "object … could not be found").
#[test]
fn sync_deepens_a_shallow_memlog_ref_and_nothing_else() {
    let (remote, clones) = remote_and_clones(1);
    let teammate = &clones[0];
    for i in 0..3 {
        teammate
            .git(&["commit", "-q", "--allow-empty", "-m", &format!("code {i}")])
            .ok();
    }
    teammate.git(&["push", "-q", "origin", "main"]).ok();
    let mut expected = BTreeSet::new();
    for i in 0..3 {
        expected.extend(seal_session(teammate, &format!("origin-{i}")));
    }
    teammate.memlog(&["sync", "origin"]).ok();

    // This clone's own memory, merged with the shallow memlog ref.
    let shallow = clone_with(remote.path(), &["--depth", "1", "--no-single-branch"]);
    expected.extend(seal_session(&shallow, "in-the-shallow-clone"));
    shallow.memlog(&["sync", "origin"]).ok();
    assert_eq!(ids(&shallow.cat()), expected);
    assert_eq!(
        rev(remote.path(), "refs/heads/memlog"),
        memlog_tip(&shallow)
    );
    let fsck = shallow.memlog(&["fsck", "--json"]).ok().json();
    assert_eq!(fsck["problems"].as_array().map(Vec::len), Some(0), "{fsck}");
    // The code's history stays as shallow as it was cloned.
    let is_shallow = shallow
        .git(&["rev-parse", "--is-shallow-repository"])
        .ok()
        .stdout();
    assert_eq!(is_shallow.trim(), "true");
    let main = shallow
        .git(&["rev-list", "--count", "origin/main"])
        .ok()
        .stdout();
    assert_eq!(main.trim(), "1");

    // A memlog branch git made from the cut history: a read says why it
    // fails and what fixes it, and the next sync deepens it too.
    let cut = clone_with(remote.path(), &["--depth", "1", "--no-single-branch"]);
    cut.git(&["branch", "memlog", "origin/memlog"]).ok();
    let out = cut.memlog(&["log"]);
    assert_eq!(out.code(), Some(1), "{}", out.stdout());
    assert!(
        out.stderr().contains("shallow") && out.stderr().contains("git fetch --unshallow origin"),
        "{}",
        out.stderr()
    );
    cut.memlog(&["sync", "origin"]).ok();
    assert_eq!(ids(&cut.cat()), expected);
    cut.memlog(&["log"]).ok();
}

/// Without the git program, everything but sharing works; sync says what
/// it lacks (it said "could not start git: No such file or directory").
#[test]
fn sync_without_git_on_path_says_it_needs_git() {
    let (_remote, me, _teammate) = TestRepo::teammates();
    let empty = tempfile::tempdir().unwrap();
    let out = memlog_e2e::run(
        memlog_e2e::memlog_command(me.path())
            .env("PATH", empty.path())
            .args(["sync", "origin"]),
    );
    assert_eq!(out.code(), Some(1));
    assert!(
        out.stderr().contains("the git program is not on PATH"),
        "{}",
        out.stderr()
    );
}

/// In a partial clone whose memlog branch git made from blobless commits
/// (the plain-git route), no memory can be read until a sync: the agent is
/// told at its session's start, as for a repository memlog cannot write
/// (field test 8c: only hooks.log said it, and no memory arrived).
#[test]
fn in_a_partial_clone_without_the_logs_contents_the_agent_is_told_at_session_start() {
    let (remote, clones) = remote_and_clones(1);
    let teammate = &clones[0];
    seal_session(teammate, "before-the-clone");
    teammate.memlog(&["sync", "origin"]).ok();
    run(git_command(remote.path()).args(["config", "uploadpack.allowFilter", "true"])).ok();
    let partial = clone_with(remote.path(), &["--filter=blob:none"]);
    partial.git(&["branch", "memlog", "origin/memlog"]).ok();
    let start = partial.hook(
        "SessionStart",
        "briefed",
        serde_json::json!({"source": "startup"}),
    );
    assert!(
        start.contains("partial clone") && start.contains("memlog sync origin"),
        "{start}"
    );
}

/// `git branch -D memlog` (a slip, a script that clears local branches)
/// loses no session: the next seal, read or sync puts the ref back where
/// this clone last moved it. The old binary's sync took the remote's
/// history and the unpushed session was gone from memory; its seal began a
/// new history.
#[test]
fn a_memlog_ref_deleted_by_hand_is_put_back() {
    let (_remote, clones) = remote_and_clones(2);
    let (a, b) = (&clones[0], &clones[1]);
    let pushed = seal_session(a, "pushed");
    a.memlog(&["sync", "origin"]).ok();
    let unpushed = seal_session(a, "unpushed");
    let sealed = memlog_tip(a).unwrap();
    let from_b = seal_session(b, "from-b");
    b.memlog(&["sync", "origin"]).ok();

    a.git(&["branch", "-D", "memlog"]).ok();
    let out = a.memlog(&["sync", "origin"]).ok();
    assert!(out.stderr().contains("put back at"), "{}", out.stderr());
    let here = ids(&a.cat());
    for id in pushed.iter().chain(&unpushed).chain(&from_b) {
        assert!(here.contains(id), "{id} lost: {here:?}");
    }
    // and the remote has it now, for b
    b.memlog(&["sync", "origin"]).ok();
    assert!(ids(&b.cat()).is_superset(&unpushed));

    // A seal after the deletion continues the history.
    a.git(&["branch", "-D", "memlog"]).ok();
    let later = seal_session(a, "later");
    let here = ids(&a.cat());
    assert!(
        here.is_superset(&unpushed) && here.is_superset(&later),
        "{here:?}"
    );
    let parents = a.git(&["rev-list", "refs/heads/memlog"]).ok().stdout();
    assert!(parents.contains(&sealed), "{parents}");

    // doctor puts it back too, and says so
    a.git(&["branch", "-D", "memlog"]).ok();
    let doctor = a.memlog(&["doctor"]);
    assert!(
        doctor.stderr().contains("put back at"),
        "{}",
        doctor.stderr()
    );
    assert!(memlog_tip(a).is_some());

    // A read command puts it back too, and says so.
    a.git(&["branch", "-D", "memlog"]).ok();
    let log = a.memlog(&["log"]).ok();
    assert!(log.stderr().contains("put back"), "{}", log.stderr());
    assert!(log.stdout().contains("unpushed"), "{}", log.stdout());
}

/// A log moved to another ref (`ref:` in .memlog.yaml) starts empty there:
/// the put-back of a deleted ref is for the ref it was noted for (a field
/// test: the first seal copied the old ref's history onto the new one).
#[test]
fn a_log_moved_to_another_ref_starts_empty_there() {
    let repo = TestRepo::new();
    seal_session(&repo, "old-ref");
    std::fs::write(
        repo.path().join(".memlog.yaml"),
        "ref: refs/heads/memory2\n",
    )
    .unwrap();
    let fresh = seal_session(&repo, "new-ref");
    assert_eq!(ids(&repo.cat()), fresh);
    let on_old = repo.git(&["rev-list", "refs/heads/memlog"]).ok().stdout();
    let on_new = repo.git(&["rev-list", "refs/heads/memory2"]).ok().stdout();
    assert_eq!(on_new.lines().count(), 1, "{on_new}");
    assert!(on_old.lines().all(|c| !on_new.contains(c)));
}

/// `sync.remotes: [mirror, team]` with a mirror that refuses the push: the
/// team is synced all the same, and the command fails naming the mirror
/// (field test 12b: the first refusal ended the sync, and the team's remote
/// never got the session).
#[cfg(unix)]
#[test]
fn a_remote_that_refuses_does_not_keep_the_others_from_syncing() {
    let repo = TestRepo::new();
    let mirror = tempfile::tempdir().unwrap();
    let team = tempfile::tempdir().unwrap();
    for r in [mirror.path(), team.path()] {
        run(git_command(r).args(["init", "-q", "--bare"])).ok();
    }
    script(
        &mirror.path().join("hooks"),
        "pre-receive",
        "echo 'the mirror takes no pushes today' >&2\nexit 1",
    );
    repo.git(&[
        "remote",
        "add",
        "mirror",
        &mirror.path().display().to_string(),
    ])
    .ok();
    repo.git(&["remote", "add", "team", &team.path().display().to_string()])
        .ok();
    std::fs::write(
        repo.path().join(".memlog.yaml"),
        "sync:\n  remotes: [mirror, team]\n",
    )
    .unwrap();
    repo.record("s1", "note", "the staging keys rotate every Tuesday");
    repo.memlog(&["seal", "--all"]).ok();
    let out = repo.memlog(&["sync"]);
    assert_eq!(out.code(), Some(1), "{}", out.stdout());
    assert!(remote_has_memlog(team.path()), "{}", out.stderr());
    assert!(!remote_has_memlog(mirror.path()));
    assert!(
        out.stderr().contains("mirror takes no pushes"),
        "{}",
        out.stderr()
    );
    assert!(
        out.stderr().contains("1 of 2 remote(s): mirror"),
        "{}",
        out.stderr()
    );
}

/// A push mirror (`git remote add --mirror=push`, a backup) takes no single
/// ref: sync says so and what carries memory there, not git's bare "--mirror
/// can't be combined with refspecs" (field test 12b).
#[test]
fn a_push_mirror_is_named_for_what_it_is() {
    let repo = TestRepo::new();
    let backup = tempfile::tempdir().unwrap();
    run(git_command(backup.path()).args(["init", "-q", "--bare"])).ok();
    repo.git(&[
        "remote",
        "add",
        "--mirror=push",
        "backup",
        &backup.path().display().to_string(),
    ])
    .ok();
    repo.record("s1", "note", "the staging keys rotate every Tuesday");
    repo.memlog(&["seal", "--all"]).ok();
    let out = repo.memlog(&["sync", "backup"]);
    assert_eq!(out.code(), Some(1), "{}", out.stdout());
    assert!(
        out.stderr().contains("is a push mirror") && out.stderr().contains("git push backup"),
        "{}",
        out.stderr()
    );
}
