//! A repository several users of one group work in (`git init
//! --shared=group`, `core.sharedRepository`): what memlog writes there is
//! the group's as git's own files are, whatever each user's umask, and a
//! projection another user made unreadable is read around, never rebuilt
//! (field test 12b: the second user's hooks all failed on `privacy.key`,
//! their `git gc` failed on memlog's 0400 pack, and each user's read
//! rebuilt the other's index).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use memlog_e2e::{TestRepo, memlog_bin, memlog_command, memlog_command_with_umask, run};

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o7777
}

/// Every file and directory under `dir`.
fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut all = vec![dir.to_path_buf()];
    if dir.is_dir() {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            all.extend(tree(&entry.path()));
        }
    }
    all
}

/// With `core.sharedRepository=group` and a umask of 077, memlog's packs,
/// ref, reflog, journal, index, locks and directories are the group's to
/// read and write as git's own are (its packs and objects read-only, its
/// directories set-group-id), and `privacy.key` is the group's to read.
#[test]
fn what_memlog_writes_in_a_group_shared_repository_is_the_groups() {
    let repo = TestRepo::new();
    repo.git(&["config", "core.sharedRepository", "group"]).ok();
    let dir = repo.path();
    let objects = dir.join(".git/objects");
    let listed = || -> Vec<PathBuf> {
        let entries = std::fs::read_dir(&objects).unwrap().flatten();
        entries.map(|e| e.path()).collect()
    };
    let gits_first = listed();
    let memlog = |args: &[&str]| run(memlog_command_with_umask(dir, "077").args(args)).ok();
    memlog(&[
        "record",
        "--session",
        "sealed",
        "--kind",
        "note",
        "--text",
        "one",
    ]);
    memlog(&["seal", "--all"]);
    memlog(&[
        "record",
        "--session",
        "live",
        "--kind",
        "note",
        "--text",
        "two",
    ]);
    memlog(&["index"]);
    // git's own, under the same umask
    let git = Command::new("sh")
        .current_dir(dir)
        .args(["-c", "umask 077 && git commit -q --allow-empty -m two"])
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.com")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.com")
        .status()
        .unwrap();
    assert!(git.success());
    let git_dir = dir.join(".git");
    let gits_ref = mode(&git_dir.join("refs/heads/main"));
    assert_eq!(gits_ref & 0o660, 0o660, "git's own ref: {gits_ref:o}");

    assert_eq!(mode(&git_dir.join("refs/heads/memlog")), gits_ref);
    assert_eq!(mode(&git_dir.join("logs/refs/heads/memlog")) & 0o660, 0o660);
    let packs: Vec<PathBuf> = tree(&git_dir.join("objects/pack"))
        .into_iter()
        .filter(|p| p.is_file())
        .collect();
    assert!(!packs.is_empty());
    for pack in packs {
        // readable by the group, writable by nobody, as git makes packs
        assert_eq!(mode(&pack), 0o440, "{}", pack.display());
    }
    // the fan-out directories of the seal's loose objects (and of git's
    // second commit); git's first commit made its own before the
    // repository was shared
    let made: Vec<PathBuf> = listed()
        .into_iter()
        .filter(|p| !gits_first.contains(p))
        .collect();
    assert!(!made.is_empty(), "no loose object of memlog's");
    for object_dir in made {
        assert_eq!(mode(&object_dir), 0o2770, "{}", object_dir.display());
        for object in tree(&object_dir).into_iter().skip(1) {
            assert_eq!(mode(&object), 0o440, "{}", object.display());
        }
    }
    let memlog_dir = git_dir.join("memlog");
    assert_eq!(mode(&memlog_dir.join("privacy.key")), 0o640);
    assert!(memlog_dir.join("journal/live.jsonl").is_file());
    assert!(memlog_dir.join("index/fts/meta.json").is_file());
    for path in tree(&memlog_dir) {
        let m = mode(&path);
        if path.ends_with("privacy.key") {
            continue;
        }
        if path.is_dir() {
            assert_eq!(m, 0o2770, "{}", path.display());
        } else if path.is_file() {
            assert_eq!(m & 0o660, 0o660, "{} is {m:o}", path.display());
        }
    }
    // and the others read nothing of it
    for path in tree(&memlog_dir) {
        assert_eq!(mode(&path) & 0o007, 0, "{}", path.display());
    }
}

/// Without `core.sharedRepository` nothing changes: the key stays the
/// owner's, packs read-only for the owner as before.
#[test]
fn an_unshared_repository_keeps_the_umasks_modes() {
    let repo = TestRepo::new();
    let dir = repo.path();
    let memlog = |args: &[&str]| run(memlog_command_with_umask(dir, "077").args(args)).ok();
    memlog(&[
        "record",
        "--session",
        "s",
        "--kind",
        "note",
        "--text",
        "one",
    ]);
    memlog(&["seal", "--all"]);
    assert_eq!(mode(&dir.join(".git/memlog/privacy.key")), 0o600);
    assert_eq!(mode(&dir.join(".git/refs/heads/memlog")), 0o600);
    for pack in tree(&dir.join(".git/objects/pack")) {
        if pack.is_file() {
            assert_eq!(mode(&pack), 0o400, "{}", pack.display());
        }
    }
}

/// A projection file another user made unreadable (an older memlog's
/// tantivy `.managed.json`, 0600, in a group-writable store) is not
/// "damaged": the read says which file and whose it is, reads the log
/// directly, and leaves the index as it is. Needs root, to run memlog as
/// another user (`setpriv`).
#[test]
fn another_users_unreadable_index_is_read_around_not_rebuilt() {
    let root = run(Command::new("id").arg("-u")).stdout().trim() == "0";
    let setpriv = Command::new("setpriv").arg("--version").output().is_ok();
    if !root || !setpriv {
        eprintln!("skipped: needs root and setpriv to run memlog as another user");
        return;
    }
    let repo = TestRepo::new();
    repo.memlog(&["note", "the billing export runs nightly"])
        .ok();
    repo.memlog(&["index"]).ok();
    let dir = repo.path();
    let managed = dir.join(".git/memlog/index/fts/.managed.json");
    assert_eq!(mode(&managed) & 0o077, 0, "tantivy's own mode");
    // the store is the group's (gid 0) to write, that one file aside, as
    // an older memlog left a shared repository
    let opened = Command::new("chmod")
        .args(["-R", "g+rwX,o+rX"])
        .arg(dir)
        .status()
        .unwrap();
    assert!(opened.success());
    std::fs::set_permissions(&managed, std::fs::Permissions::from_mode(0o600)).unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let config = home.path().join("gitconfig");
    std::fs::write(
        &config,
        format!("[safe]\n\tdirectory = {}\n", dir.display()),
    )
    .unwrap();
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o644)).unwrap();
    // uid 65534 (nobody) in group 0, with memlog_command's isolation
    let isolated = memlog_command(dir);
    let mut as_other = Command::new("setpriv");
    as_other
        .args(["--reuid", "65534", "--regid", "0", "--clear-groups"])
        .arg(memlog_bin())
        .args(["search", "billing"])
        .current_dir(dir);
    for (name, value) in isolated.get_envs() {
        match value {
            Some(value) => as_other.env(name, value),
            None => as_other.env_remove(name),
        };
    }
    as_other
        .env("GIT_CONFIG_GLOBAL", &config)
        .env("HOME", home.path())
        .env("MEMLOG_HOME", home.path().join("memlog"));
    let found = run(&mut as_other);
    let said = found.stderr();
    assert_eq!(found.code(), Some(0), "{said}");
    assert!(
        found.stdout().contains("billing export"),
        "{}",
        found.stdout()
    );
    assert!(!said.contains("rebuilt"), "{said}");
    assert!(said.contains(".managed.json"), "{said}");
    assert!(said.contains("belongs to another user (uid 0)"), "{said}");
    assert!(said.contains("reading the log directly"), "{said}");
    // the index is its owner's still
    let kept = std::fs::metadata(&managed).unwrap();
    assert_eq!(kept.uid(), 0);
    assert_eq!(kept.permissions().mode() & 0o777, 0o600);
}
