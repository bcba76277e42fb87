//! What the indexer's tests share.

use std::process::Command;

use memlog_store::Repo;

/// A new git repository with memlog's directories, in a temporary
/// directory that lives as long as the first value.
pub fn repo() -> (tempfile::TempDir, Repo) {
    let dir = tempfile::tempdir().unwrap();
    let init = Command::new("git")
        .args(["init", "-q", "-b", "main"])
        .current_dir(dir.path())
        .status()
        .unwrap();
    assert!(init.success());
    let repo = Repo::discover(dir.path()).unwrap();
    repo.ensure_dirs().unwrap();
    (dir, repo)
}
