//! End-to-end test support: real git repositories in temporary directories
//! and the real `memlog` binary.
//!
//! The binary is the one built next to the test executable
//! (`target/<profile>/memlog`), or `$MEMLOG_BIN`. `scripts/test` builds it
//! before running the tests.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Path of the memlog binary under test.
pub fn memlog_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("MEMLOG_BIN") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("test executable path");
    // target/<profile>/deps/<test> -> target/<profile>/memlog
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("test executable lives in target/<profile>/deps");
    let bin = profile_dir.join(format!("memlog{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.exists(),
        "{} is missing: build it first (cargo build -p memlog, or run scripts/test)",
        bin.display()
    );
    bin
}

/// `../shared` beside the repository, where the real third-party fixtures
/// and the evaluation set live. `None` (and a message) when absent.
pub fn shared_dir(what: &str) -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared");
    let dir = root.join(what);
    if dir.exists() {
        Some(dir)
    } else {
        eprintln!(
            "skipped: {} is absent (it is provided beside the clone in CI)",
            dir.display()
        );
        None
    }
}

/// The result of running a command, with convenient accessors.
pub struct Run {
    pub output: Output,
}

impl Run {
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }
    pub fn code(&self) -> Option<i32> {
        self.output.status.code()
    }
    /// Panics with both streams unless the command succeeded.
    pub fn ok(self) -> Run {
        assert!(
            self.output.status.success(),
            "command failed ({:?})\nstdout:\n{}\nstderr:\n{}",
            self.output.status,
            self.stdout(),
            self.stderr()
        );
        self
    }
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.output.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout()))
    }
    /// stdout parsed as JSON lines.
    pub fn json_lines(&self) -> Vec<serde_json::Value> {
        self.stdout()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSON line ({e}): {l}")))
            .collect()
    }
}

/// A git repository in a temporary directory, with one commit on `main`.
pub struct TestRepo {
    pub dir: tempfile::TempDir,
}

impl Default for TestRepo {
    fn default() -> Self {
        Self::new()
    }
}

impl TestRepo {
    pub fn new() -> TestRepo {
        let dir = tempfile::Builder::new()
            .prefix("memlog-e2e-")
            .tempdir()
            .expect("tempdir");
        let repo = TestRepo { dir };
        repo.git(&["init", "-q", "-b", "main"]).ok();
        std::fs::write(repo.path().join("README.md"), "demo\n").expect("write");
        repo.git(&["add", "README.md"]).ok();
        repo.git(&["commit", "-q", "-m", "init"]).ok();
        repo
    }

    /// A repository that is the clone of `origin` (a path or URL).
    pub fn clone_of(origin: &Path) -> TestRepo {
        let dir = tempfile::Builder::new()
            .prefix("memlog-e2e-clone-")
            .tempdir()
            .expect("tempdir");
        let status = git_command(dir.path())
            .args(["clone", "-q"])
            .arg(origin)
            .arg(".")
            .status()
            .expect("git clone");
        assert!(status.success(), "git clone failed");
        TestRepo { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn git(&self, args: &[&str]) -> Run {
        run(git_command(self.path()).args(args))
    }

    pub fn memlog(&self, args: &[&str]) -> Run {
        run(memlog_command(self.path()).args(args))
    }

    /// Runs memlog with `stdin` as its standard input.
    pub fn memlog_stdin(&self, args: &[&str], stdin: &str) -> Run {
        use std::io::Write;
        let mut child = memlog_command(self.path())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn memlog");
        if let Some(mut input) = child.stdin.take() {
            let _ = input.write_all(stdin.as_bytes());
        }
        Run {
            output: child.wait_with_output().expect("wait for memlog"),
        }
    }

    /// Records one text event and returns its id.
    pub fn record(&self, session: &str, kind: &str, text: &str) -> String {
        self.memlog(&[
            "record",
            "--session",
            session,
            "--kind",
            kind,
            "--text",
            text,
        ])
        .ok()
        .stdout()
        .trim()
        .to_string()
    }

    /// Every live event as JSON (`memlog cat`).
    pub fn cat(&self) -> Vec<serde_json::Value> {
        self.memlog(&["cat"]).ok().json_lines()
    }

    /// Subjects of the commits on the memlog ref, newest first.
    pub fn memlog_commits(&self) -> Vec<String> {
        let out = self.git(&["log", "--format=%H %s", "refs/heads/memlog"]);
        if !out.output.status.success() {
            return Vec::new();
        }
        out.stdout().lines().map(str::to_string).collect()
    }
}

/// A git command isolated from the user's configuration.
pub fn git_command(dir: &Path) -> Command {
    let mut c = Command::new("git");
    c.current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.com")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.com");
    c
}

/// The memlog binary, started in `dir`, isolated like [`git_command`].
pub fn memlog_command(dir: &Path) -> Command {
    let mut c = Command::new(memlog_bin());
    c.current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.com");
    c
}

pub fn run(cmd: &mut Command) -> Run {
    Run {
        output: cmd.output().expect("command starts"),
    }
}
