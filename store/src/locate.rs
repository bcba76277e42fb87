//! Finding a repository's directories, and what HEAD points at, by reading
//! a few files instead of opening the repository.
//!
//! Opening with gix reads git's configuration from every level and builds
//! its caches: a third of the instructions of `memlog record` and a hook,
//! which need only where the journal lives and, for a hook, the branch and
//! commit checked out. The common layouts (a `.git` directory; a `.git`
//! file naming a linked worktree's or a submodule's git directory) are
//! read here; anything else (`GIT_DIR` and friends in the environment, a
//! bare repository, a `core.worktree` setting) is left to gix
//! ([`locate`] says `None`), as is every command that reads the log.

use std::path::{Path, PathBuf};

/// Where a repository found from a start directory keeps its files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    /// The working tree's own git directory (`.git`, or a linked
    /// worktree's `.git/worktrees/<name>`), canonical.
    pub git_dir: PathBuf,
    /// The directory shared by every worktree, canonical.
    pub common_dir: PathBuf,
    /// The working tree, canonical.
    pub work_tree: PathBuf,
}

/// Environment variables that change where git looks; with any of them
/// set, finding the repository is left to gix.
const GIT_ENVIRONMENT: [&str; 6] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_CONFIG_PARAMETERS",
];

/// The repository containing `start` in one of the common layouts, or
/// `None` when gix must decide (see the module's documentation).
pub fn locate(start: &Path) -> Option<Located> {
    if GIT_ENVIRONMENT
        .iter()
        .any(|v| std::env::var_os(v).is_some())
    {
        return None;
    }
    let start = std::fs::canonicalize(start).ok()?;
    // started inside a git directory: gix knows what that means
    if start.components().any(|c| c.as_os_str() == ".git") {
        return None;
    }
    let start_device = device(&start)?;
    for dir in start.ancestors() {
        // git stops at a filesystem boundary; so does gix, which decides
        if device(dir) != Some(start_device) {
            return None;
        }
        let dot_git = dir.join(".git");
        let Ok(meta) = std::fs::metadata(&dot_git) else {
            continue;
        };
        let git_dir = if meta.is_dir() {
            dot_git
        } else {
            let text = std::fs::read_to_string(&dot_git).ok()?;
            dir.join(text.strip_prefix("gitdir:")?.trim())
        };
        return located(&git_dir, dir);
    }
    None
}

/// The filesystem `p` is on.
#[cfg(unix)]
fn device(p: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(p).ok().map(|m| m.dev())
}

#[cfg(not(unix))]
fn device(p: &Path) -> Option<u64> {
    std::fs::metadata(p).ok().map(|_| 0)
}

fn located(git_dir: &Path, work_tree: &Path) -> Option<Located> {
    let git_dir = std::fs::canonicalize(git_dir).ok()?;
    if !git_dir.join("HEAD").is_file() {
        return None;
    }
    let common_dir = match std::fs::read_to_string(git_dir.join("commondir")) {
        Ok(text) => std::fs::canonicalize(git_dir.join(text.trim())).ok()?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => git_dir.clone(),
        Err(_) => return None,
    };
    if !common_dir.join("objects").is_dir() {
        return None;
    }
    // another user's repository: gix decides whether git would trust it
    // (`safe.directory`), and [`crate::Repo::discover`] refuses it if not
    if !owned_by_this_process(&common_dir) {
        return None;
    }
    // `core.worktree` or `core.bare` move or remove the working tree,
    let config = std::fs::read_to_string(common_dir.join("config")).ok()?;
    let lower = config.to_ascii_lowercase();
    if lower.contains("worktree") || lower.contains("bare = true") || lower.contains("bare=true") {
        return None;
    }
    Some(Located {
        git_dir,
        common_dir,
        work_tree: std::fs::canonicalize(work_tree).ok()?,
    })
}

/// The branch checked out (short name) and the commit HEAD resolves to,
/// read from HEAD and the refs it names: `(None, Some(id))` when detached,
/// `(Some(branch), None)` before the first commit.
pub fn head(git_dir: &Path, common_dir: &Path) -> (Option<String>, Option<String>) {
    let Ok(text) = std::fs::read_to_string(git_dir.join("HEAD")) else {
        return (None, None);
    };
    let text = text.trim();
    let Some(name) = text.strip_prefix("ref:").map(str::trim) else {
        return (None, object_id(text));
    };
    let branch = name.strip_prefix("refs/heads/").unwrap_or(name).to_string();
    let head = reference(git_dir, common_dir, name).flatten();
    (Some(branch), head)
}

/// What the ref `name` points to, read from its files (a worktree's own
/// refs live in its git directory, the rest in the common one; then
/// `packed-refs`), following symbolic refs a few levels deep:
/// `Some(Some(id))`, `Some(None)` when no file has it, `None` when the
/// files cannot tell (unreadable, not an object id, a long chain).
pub fn reference(git_dir: &Path, common_dir: &Path, name: &str) -> Option<Option<String>> {
    let mut name = name.to_string();
    for _ in 0..5 {
        let per_worktree = name.starts_with("refs/worktree/") || !name.starts_with("refs/");
        let base = if per_worktree { git_dir } else { common_dir };
        match std::fs::read_to_string(base.join(&name)) {
            Ok(text) => match text.trim().strip_prefix("ref:") {
                Some(next) => name = next.trim().to_string(),
                None => return object_id(text.trim()).map(Some),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return packed(common_dir, &name),
            Err(_) => return None,
        }
    }
    None
}

fn packed(common_dir: &Path, name: &str) -> Option<Option<String>> {
    let text = match std::fs::read_to_string(common_dir.join("packed-refs")) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(None),
        Err(_) => return None,
    };
    for line in text.lines() {
        if let Some((id, n)) = line.split_once(' ')
            && n == name
            && !line.starts_with('#')
        {
            return object_id(id).map(Some);
        }
    }
    Some(None)
}

fn object_id(text: &str) -> Option<String> {
    let ok = matches!(text.len(), 40 | 64) && text.bytes().all(|b| b.is_ascii_hexdigit());
    ok.then(|| text.to_ascii_lowercase())
}

/// Whether `dir` belongs to the user this process runs as (on Linux, the
/// owner of `/proc/self`); true where that cannot be told.
#[cfg(unix)]
pub(crate) fn owned_by_this_process(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata("/proc/self"), std::fs::metadata(dir)) {
        (Ok(me), Ok(it)) => me.uid() == it.uid(),
        _ => true,
    }
}

#[cfg(not(unix))]
pub(crate) fn owned_by_this_process(_dir: &Path) -> bool {
    true
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout)
            .expect("utf-8")
            .trim()
            .to_string()
    }

    /// What gix finds from `start`, in the same terms.
    fn by_gix(start: &Path) -> (Located, (Option<String>, Option<String>)) {
        let repo = gix::discover(start).expect("gix discovers");
        let located = Located {
            git_dir: std::fs::canonicalize(repo.git_dir()).unwrap(),
            common_dir: std::fs::canonicalize(repo.common_dir()).unwrap(),
            work_tree: std::fs::canonicalize(repo.workdir().unwrap()).unwrap(),
        };
        let branch = repo
            .head_name()
            .ok()
            .flatten()
            .map(|n| n.shorten().to_string());
        let head = repo.head_id().ok().map(|id| id.to_string());
        (located, (branch, head))
    }

    fn same_as_gix(start: &Path) {
        let found = locate(start).expect("a common layout");
        let position = head(&found.git_dir, &found.common_dir);
        assert_eq!((found, position), by_gix(start), "from {}", start.display());
    }

    #[test]
    fn finds_what_gix_finds() {
        let tmp = tempfile::tempdir().unwrap();
        let main = tmp.path().join("main");
        std::fs::create_dir_all(main.join("src/deep")).unwrap();
        git(&main, &["init", "-q", "-b", "trunk"]);
        // before the first commit: a branch, no commit
        same_as_gix(&main.join("src/deep"));
        git(&main, &["commit", "-q", "--allow-empty", "-m", "one"]);
        same_as_gix(&main);
        same_as_gix(&main.join("src/deep"));
        // a linked worktree on its own branch
        let linked = tmp.path().join("linked");
        git(
            &main,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                "side",
                linked.to_str().unwrap(),
            ],
        );
        same_as_gix(&linked);
        // packed refs, then a detached HEAD
        git(&main, &["pack-refs", "--all"]);
        same_as_gix(&main);
        let id = git(&main, &["rev-parse", "HEAD"]);
        git(&main, &["checkout", "-q", &id]);
        same_as_gix(&main);
        assert_eq!(
            head(&main.join(".git"), &main.join(".git")),
            (None, Some(id))
        );
    }

    #[test]
    fn leaves_the_unusual_to_gix() {
        let tmp = tempfile::tempdir().unwrap();
        let bare = tmp.path().join("bare.git");
        std::fs::create_dir_all(&bare).unwrap();
        git(&bare, &["init", "-q", "--bare"]);
        assert_eq!(locate(&bare), None);
        let inside = tmp.path().join("r");
        std::fs::create_dir_all(&inside).unwrap();
        git(&inside, &["init", "-q"]);
        assert_eq!(locate(&inside.join(".git")), None);
        git(&inside, &["config", "core.worktree", "/elsewhere"]);
        assert_eq!(locate(&inside), None);
    }
}
