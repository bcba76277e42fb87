// Test support fails loudly: that is what a test helper is for.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]
//! End-to-end test support: real git repositories in temporary directories
//! and the real `memlog` binary.
//!
//! The binary is the one built next to the test executable
//! (`target/<profile>/memlog`), or `$MEMLOG_BIN`. `scripts/test` builds it
//! before running the tests.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub mod agents;
pub use agents::{
    AgentCli, AgentRun, ClaudeCli, CodexCli, CopilotCli, DECIDED, GeminiCli, OpencodeCli,
    PLAN_STEPS, ScriptedApi, assert_invoice_recall, assert_plan_tasks, bash_cat_notes,
    captured_session, invoice_repo, plan_the_migration, plan_twice, read_invoice_then_notes,
    repo_with_notes, wait_for_background_index,
};

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

impl Drop for TestRepo {
    /// A `memlog watch` a hook started here (SessionStart does by default)
    /// exits once the repository's memlog directory is gone (it looks
    /// every second), and a background `memlog index` may still be
    /// writing: removing the directory while they write into it failed
    /// half-way and left both behind. So the watcher is let go first, and
    /// the removal is tried again while it fails.
    fn drop(&mut self) {
        let_the_watcher_go(self.path());
        for _ in 0..30 {
            match std::fs::remove_dir_all(self.path()) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
                _ => return,
            }
        }
    }
}

/// Makes a `memlog watch` that a hook started in the repository at
/// `dir` exit, by removing the memlog directory until it stays gone for
/// longer than the watcher takes to look; nothing when none answers.
pub fn let_the_watcher_go(dir: &Path) {
    use std::time::{Duration, Instant};
    let memlog = dir.join(".git/memlog");
    if !watcher_answers(&memlog.join("warm.sock")) {
        return;
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut gone_since: Option<Instant> = None;
    while Instant::now() < deadline {
        if memlog.exists() {
            let _ = std::fs::remove_dir_all(&memlog);
            gone_since = None;
        } else if gone_since.get_or_insert_with(Instant::now).elapsed()
            > Duration::from_millis(1500)
        {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Whether a `memlog watch` listens on this socket.
fn watcher_answers(socket: &Path) -> bool {
    #[cfg(unix)]
    {
        std::os::unix::net::UnixStream::connect(socket).is_ok()
    }
    #[cfg(not(unix))]
    {
        let _ = socket;
        false
    }
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
    /// Two teammates sharing a bare remote whose memlog ref holds one
    /// sealed session ("mine": "first memory"), each with a local `memlog`
    /// branch from it: `(remote dir, me, teammate)`; the remote lives as
    /// long as the returned directory.
    pub fn teammates() -> (tempfile::TempDir, TestRepo, TestRepo) {
        let origin = TestRepo::new();
        origin.record("mine", "note", "first memory");
        origin.memlog(&["seal", "--all"]).ok();
        let bare = tempfile::tempdir().expect("tempdir");
        let remote = bare.path().join("r.git");
        origin
            .git(&[
                "clone",
                "-q",
                "--bare",
                ".",
                remote.to_str().expect("utf-8 path"),
            ])
            .ok();
        let me = TestRepo::clone_of(&remote);
        let teammate = TestRepo::clone_of(&remote);
        for c in [&me, &teammate] {
            c.git(&["branch", "memlog", "origin/memlog"]).ok();
        }
        (bare, me, teammate)
    }

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

    /// Commits on the memlog ref, with plain git and `message`, its tip
    /// tree with the blob at `path` replaced by `bytes` under the same name
    /// (a damaged or tampered log).
    pub fn tamper(&self, path: &str, bytes: &str, message: &str) {
        let blob_file = self.path().join(".git/tampered.jsonl");
        std::fs::write(&blob_file, bytes).expect("write the tampered bytes");
        let blob = self
            .git(&[
                "hash-object",
                "-w",
                blob_file.to_str().expect("a UTF-8 path"),
            ])
            .ok()
            .stdout();
        let index = self.path().join(".git/tamper-index");
        let with_index = |args: &[&str]| {
            run(git_command(self.path())
                .env("GIT_INDEX_FILE", &index)
                .args(args))
            .ok()
            .stdout()
        };
        with_index(&["read-tree", "refs/heads/memlog"]);
        with_index(&[
            "update-index",
            "--cacheinfo",
            &format!("100644,{},{path}", blob.trim()),
        ]);
        let tree = with_index(&["write-tree"]);
        let commit = self
            .git(&[
                "commit-tree",
                tree.trim(),
                "-p",
                "refs/heads/memlog",
                "-m",
                message,
            ])
            .ok()
            .stdout();
        self.git(&["update-ref", "refs/heads/memlog", commit.trim()])
            .ok();
    }

    /// A linked `git worktree` of this repository on a new branch
    /// `branch`, in a folder of its own (removed with the returned dir).
    pub fn linked_worktree(&self, branch: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let tree = dir.path().join(branch);
        let path = tree.display().to_string();
        self.git(&["worktree", "add", "-q", "-b", branch, &path])
            .ok();
        (dir, tree)
    }

    pub fn git(&self, args: &[&str]) -> Run {
        run(git_command(self.path()).args(args))
    }

    pub fn memlog(&self, args: &[&str]) -> Run {
        run(memlog_command(self.path()).args(args))
    }

    /// A new repository whose hooks have generous budgets (10 s, in an
    /// untracked `.memlog.yaml`): tests that check what is injected, which
    /// a loaded machine must not change (the bench times it).
    pub fn with_generous_budgets() -> TestRepo {
        let repo = TestRepo::new();
        std::fs::write(repo.path().join(".git/info/exclude"), ".memlog.yaml\n")
            .expect("write .git/info/exclude");
        std::fs::write(
            repo.path().join(".memlog.yaml"),
            "hooks:\n  inject_budget_ms: 10000\n  record_budget_ms: 10000\n",
        )
        .expect("write .memlog.yaml");
        repo
    }

    /// An earlier session, through Claude Code's hooks: the export tests fail
    /// in src/invoice.rs, an edit there fixes them, and src/unrelated.rs is
    /// only read. Returns the failure's and the fix's ids (12 characters),
    /// and the index's writer lock, taken before the session ended: the index
    /// cannot catch up while the caller holds it, as when the next session
    /// starts at once, before the background index has run.
    pub fn failed_and_fixed_session(&self) -> (String, String, std::fs::File) {
        let repo = self;
        let file = |p: &str| repo.path().join(p).display().to_string();
        let s1 = "earlier";
        repo.hook("SessionStart", s1, serde_json::json!({"source": "startup"}));
        repo.hook(
            "UserPromptSubmit",
            s1,
            serde_json::json!({"prompt": "make the export tests pass"}),
        );
        // `cargo test -p export`, with what it printed and its exit code
        let tests_ran = |stdout: &str, stderr: &str, exit_code: i32| {
            repo.hook(
                "PostToolUse",
                s1,
                serde_json::json!({"tool_name": "Bash",
                "tool_input": {"command": "cargo test -p export"},
                "tool_response": {"stdout": stdout, "stderr": stderr, "exit_code": exit_code}}),
            );
        };
        tests_ran("", "error[E0308]: mismatched types in src/invoice.rs", 101);
        repo.hook(
            "PostToolUse",
            s1,
            serde_json::json!({"tool_name": "Read",
            "tool_input": {"file_path": file("src/unrelated.rs")},
            "tool_response": {"type": "text", "file": {"filePath": file("src/unrelated.rs"), "content": "fn x() {}", "numLines": 1}}}),
        );
        repo.hook(
            "PostToolUse",
            s1,
            serde_json::json!({"tool_name": "Edit",
            "tool_input": {"file_path": file("src/invoice.rs"), "old_string": "500u32", "new_string": "500usize"},
            "tool_response": {"filePath": file("src/invoice.rs")}}),
        );
        tests_ran("test result: ok. 12 passed", "", 0);
        let lock = repo.hold_index_lock();
        repo.hook("SessionEnd", s1, serde_json::json!({"reason": "exit"}));
        let events = repo.session_events(s1);
        let id_of = |pred: &dyn Fn(&serde_json::Value) -> bool| -> String {
            let id = events.iter().find(|e| pred(e)).expect("the event")["id"]
                .as_str()
                .expect("an id");
            id[..12].to_string()
        };
        let failure = id_of(&|e| e["body"]["success"] == false);
        let fix = id_of(&|e| e["body"]["tool"] == "Edit");
        (failure, fix, lock)
    }

    /// Writes the real-CLI tests' code file, `src/telemetry.rs` (where tank
    /// sensor readings are appended), and `.memlog.yaml` holding `config`;
    /// returns the file's path.
    pub fn with_telemetry_code(&self, config: &str) -> PathBuf {
        let file = self.path().join("src/telemetry.rs");
        std::fs::create_dir_all(self.path().join("src")).expect("create src/");
        std::fs::write(
            &file,
            "// Tank sensor readings, one line each.\npub fn append(reading: &str) {}\n",
        )
        .expect("write src/telemetry.rs");
        std::fs::write(self.path().join(".memlog.yaml"), config).expect("write .memlog.yaml");
        file
    }

    /// Runs memlog with `stdin` as its standard input.
    pub fn memlog_stdin(&self, args: &[&str], stdin: &str) -> Run {
        run_stdin(memlog_command(self.path()).args(args), stdin)
    }

    /// Runs `memlog hook EVENT` with `payload` (its `cwd`, `session_id` and
    /// `hook_event_name` filled in); returns what it printed, after
    /// checking that it exited 0 (a hook never fails the agent).
    pub fn hook(&self, event: &str, session: &str, mut payload: serde_json::Value) -> String {
        payload["cwd"] = serde_json::json!(self.path().display().to_string());
        payload["session_id"] = serde_json::json!(session);
        payload["hook_event_name"] = serde_json::json!(event);
        let out = self.memlog_stdin(&["hook", event], &payload.to_string());
        assert_eq!(out.code(), Some(0), "{}", out.stderr());
        out.stdout().trim().to_string()
    }

    /// Takes the index's writer lock, as a running `memlog index` or
    /// `memlog watch` holds it, until the file returned is dropped: no
    /// other process can bring the index up to date meanwhile.
    pub fn hold_index_lock(&self) -> std::fs::File {
        let path = self.path().join(".git/memlog/index.lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .expect("open index.lock");
        file.lock().expect("take the index's writer lock");
        file
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

    /// Every event of `session` (`memlog cat --session`).
    pub fn session_events(&self, session: &str) -> Vec<serde_json::Value> {
        self.memlog(&["cat", "--session", session])
            .ok()
            .json_lines()
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

/// Asserts that `events` hold an event of each of `kinds`, naming the
/// missing one and what there is.
pub fn assert_kinds(events: &[serde_json::Value], kinds: &[&str]) {
    let have: Vec<&str> = events.iter().filter_map(|e| e["kind"].as_str()).collect();
    for kind in kinds {
        assert!(have.contains(kind), "{kind} missing from {have:?}");
    }
}

/// A bare repository (`main` holding one commit) and `n` clones of it, as
/// a team shares one: `(remote dir, clones)`; the remote lives as long as
/// the returned directory.
pub fn remote_and_clones(n: usize) -> (tempfile::TempDir, Vec<TestRepo>) {
    let remote = tempfile::Builder::new()
        .prefix("memlog-e2e-remote-")
        .tempdir()
        .expect("tempdir");
    run(git_command(remote.path()).args(["init", "-q", "--bare", "-b", "main"])).ok();
    let seed = TestRepo::new();
    seed.git(&[
        "remote",
        "add",
        "origin",
        &remote.path().display().to_string(),
    ])
    .ok();
    seed.git(&["push", "-q", "origin", "main"]).ok();
    let clones = (0..n).map(|_| TestRepo::clone_of(remote.path())).collect();
    (remote, clones)
}

/// Every object of the repository at `dir`, loose or packed, reachable or
/// not, with its content (`git cat-file --batch-all-objects --batch`).
pub fn all_objects(dir: &Path) -> Vec<u8> {
    run(git_command(dir).args(["cat-file", "--batch-all-objects", "--batch"]))
        .ok()
        .output
        .stdout
}

/// Whether `needle` occurs in `haystack`.
pub fn holds(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

/// A git command isolated from the user's configuration.
pub fn git_command(dir: &Path) -> Command {
    let mut c = Command::new("git");
    c.current_dir(dir)
        // tests run from inside an agent's session must not record there
        .env_remove("CLAUDE_PROJECT_DIR")
        .env_remove("GEMINI_PROJECT_DIR")
        // listings show local time: the same on every machine
        .env("TZ", "UTC")
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
    isolated_memlog(Command::new(memlog_bin()), dir)
}

/// [`memlog_command`] with the process's umask set to `umask` (octal, as
/// the shell's `umask` takes it): what a user with another umask makes.
pub fn memlog_command_with_umask(dir: &Path, umask: &str) -> Command {
    let mut sh = Command::new("sh");
    sh.arg("-c")
        .arg(format!("umask {umask} && exec \"$0\" \"$@\""))
        .arg(memlog_bin());
    isolated_memlog(sh, dir)
}

fn isolated_memlog(mut c: Command, dir: &Path) -> Command {
    c.current_dir(dir)
        // tests run from inside an agent's session must not record there
        .env_remove("CLAUDE_PROJECT_DIR")
        .env_remove("GEMINI_PROJECT_DIR")
        // nor read as a command an agent's tool runs
        .env_remove("CLAUDECODE")
        .env_remove("CLAUDE_CODE_SESSION_ID")
        .env_remove("CODEX_THREAD_ID")
        .env_remove("CODEX_SESSION_ID")
        .env_remove("GEMINI_CLI")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.com");
    c
}

/// Runs `cmd` with `stdin` as its standard input.
pub fn run_stdin(cmd: &mut Command, stdin: &str) -> Run {
    use std::io::Write;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the command");
    if let Some(mut input) = child.stdin.take() {
        let _ = input.write_all(stdin.as_bytes());
    }
    Run {
        output: child.wait_with_output().expect("wait for the command"),
    }
}

pub fn run(cmd: &mut Command) -> Run {
    Run {
        output: cmd.output().expect("command starts"),
    }
}

/// The Python interpreter of the project's virtual environment holding the
/// reference MCP client (`mcp` from PyPI), installed by
/// `scripts/install-assets` into `target/py/` (or `$MEMLOG_PY_VENV`).
/// `None`, with a message saying how to get it, when it is not installed.
pub fn python_mcp_client() -> Option<PathBuf> {
    let venv = std::env::var_os("MEMLOG_PY_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/py"));
    let python = venv.join("bin/python");
    if python.exists() {
        Some(python)
    } else {
        eprintln!(
            "skipped: the Python MCP client is not installed at {} (run scripts/install-assets)",
            venv.display()
        );
        None
    }
}

/// `tests/mcp/client.py`: drives `memlog mcp` with the Python MCP client.
pub fn mcp_client_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp/client.py")
}

/// Runs `tests/mcp/client.py` with `python` on `request` (see the script
/// for its shape; `memlog` and `repo` are filled in) and returns its
/// report. Panics with the script's stderr if it fails.
pub fn run_mcp_client(
    python: &Path,
    repo: &Path,
    mut request: serde_json::Value,
) -> serde_json::Value {
    use std::io::Write;
    request["memlog"] = memlog_bin().to_string_lossy().into_owned().into();
    request["repo"] = repo.to_string_lossy().into_owned().into();
    let mut command = Command::new(python);
    let mut child = git_env(&mut command)
        .arg(mcp_client_script())
        .current_dir(repo)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the Python MCP client");
    if let Some(mut input) = child.stdin.take() {
        input
            .write_all(request.to_string().as_bytes())
            .expect("write the client's request");
    }
    let out = child.wait_with_output().expect("wait for the MCP client");
    let run = Run { output: out };
    let run = run.ok();
    run.json()
}

fn git_env(c: &mut Command) -> &mut Command {
    c.env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.com")
}

/// `memlog mcp` started in `dir`, spoken to line by line over its pipes:
/// for tests that send what no well-behaved client sends.
pub struct McpProcess {
    pub child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: std::sync::mpsc::Receiver<String>,
    /// Responses read but not yet asked for, by id.
    pending: std::collections::HashMap<String, serde_json::Value>,
}

impl McpProcess {
    /// Starts the server and completes the MCP handshake.
    pub fn start(dir: &Path) -> McpProcess {
        let mut command = memlog_command(dir);
        command.arg("mcp");
        McpProcess::spawn(command)
    }

    /// Starts `command` (a `memlog mcp` of any binary) and completes the
    /// MCP handshake.
    pub fn spawn(mut command: Command) -> McpProcess {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start memlog mcp");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut server = McpProcess {
            child,
            stdin,
            lines,
            pending: Default::default(),
        };
        server.send(&serde_json::json!({
            "jsonrpc": "2.0", "id": "init", "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "memlog-e2e", "version": "0"}
            }
        }));
        let init = server.response("init");
        assert!(init.get("result").is_some(), "initialize failed: {init}");
        server.send(&serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    /// Writes one raw line (a newline is added).
    pub fn send_raw(&mut self, line: &str) {
        use std::io::Write;
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin
            .write_all(line.as_bytes())
            .expect("write to memlog mcp");
        stdin.write_all(b"\n").expect("write to memlog mcp");
        stdin.flush().expect("flush");
    }

    pub fn send(&mut self, message: &serde_json::Value) {
        self.send_raw(&message.to_string());
    }

    /// Sends a `tools/call` request with this id.
    pub fn call_tool(&mut self, id: &str, tool: &str, args: serde_json::Value) {
        self.send(&serde_json::json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": args}
        }));
    }

    /// Calls a tool and returns its structured result, panicking on an
    /// error.
    pub fn tool(&mut self, tool: &str, args: serde_json::Value) -> serde_json::Value {
        let id = format!("call-{}", next_call_id());
        self.call_tool(&id, tool, args);
        let response = self.response(&id);
        let result = &response["result"];
        assert_eq!(result["isError"], false, "{tool} failed: {response}");
        result["structuredContent"].clone()
    }

    /// Waits (up to 60 s) for the response with this id.
    pub fn response(&mut self, id: &str) -> serde_json::Value {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            if let Some(r) = self.pending.remove(id) {
                return r;
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no response to {id} from memlog mcp"));
            let value: serde_json::Value = serde_json::from_str(&line).unwrap_or_else(|e| {
                panic!("memlog mcp wrote a line that is not JSON ({e}): {line}")
            });
            let key = match &value["id"] {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Null => "null".to_string(),
                other => other.to_string(),
            };
            self.pending.insert(key, value);
        }
    }

    /// Closes stdin (a client going away) and waits for the server to exit.
    pub fn close(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for memlog mcp") {
                return status;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "memlog mcp did not exit after its stdin closed"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

impl Drop for McpProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn next_call_id() -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A minimal HTTP/1.1 client over a plain TCP stream, for `memlog serve`
/// and chromedriver: one request per connection, with full control of the
/// headers (the tests send a foreign `Host` on purpose).
/// Whether the embedding model and runtime are where memlog looks by
/// default (`scripts/install-assets`, which CI runs, puts them there); if
/// not, says that the calling test is skipped.
pub fn model_installed() -> bool {
    let home = std::env::var_os("MEMLOG_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/memlog")
        });
    let ok = home.join("models/minilm-l6-int8/model.onnx").is_file()
        && home.join("onnxruntime/1.24.4/libonnxruntime.so").is_file();
    if !ok {
        eprintln!(
            "skipped: the embedding model is not installed under {} (run scripts/install-assets)",
            home.display()
        );
    }
    ok
}

/// A folder made immutable (`chattr -R +i`) until dropped: a store this
/// user cannot write, as on a read-only mount, without root's mount.
pub struct Immutable(PathBuf);

impl Immutable {
    /// `None` where `chattr +i` does not work (no root, no such support).
    pub fn set(dir: &Path) -> Option<Immutable> {
        chattr(dir, "+i").then(|| Immutable(dir.to_path_buf()))
    }
}

fn chattr(dir: &Path, flag: &str) -> bool {
    Command::new("chattr")
        .args(["-R", flag])
        .arg(dir)
        .output()
        .is_ok_and(|o| o.status.success())
}

impl Drop for Immutable {
    fn drop(&mut self) {
        chattr(&self.0, "-i");
    }
}

/// A background process (`memlog watch`, say), killed when dropped so that
/// a failing test leaks nothing.
pub struct Background(pub std::process::Child);

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `memlog watch` in `dir` and waits (up to 30 s) until its warm
/// socket is open; the watcher is killed when the result is dropped.
pub fn start_watch(dir: &Path) -> Background {
    let watch = Background(
        memlog_command(dir)
            .args(["watch"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn memlog watch"),
    );
    let socket = dir.join(".git/memlog/warm.sock");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !socket.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(socket.exists(), "memlog watch opened its socket");
    watch
}

pub mod http {
    use std::io::{Read, Write};
    use std::net::TcpStream;
    use std::time::Duration;

    /// A response: status, headers (names lowercased) and body.
    #[derive(Debug)]
    pub struct Reply {
        pub status: u16,
        pub headers: Vec<(String, String)>,
        pub body: Vec<u8>,
    }

    impl Reply {
        pub fn text(&self) -> String {
            String::from_utf8_lossy(&self.body).into_owned()
        }
        pub fn json(&self) -> serde_json::Value {
            serde_json::from_slice(&self.body).unwrap_or_else(|e| {
                panic!("not JSON ({e}), status {}: {}", self.status, self.text())
            })
        }
        pub fn header(&self, name: &str) -> Option<&str> {
            self.headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str())
        }
    }

    /// Sends one request to `addr` (`host:port`). `Host` is `addr` unless
    /// `headers` names one.
    pub fn request(
        addr: &str,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> std::io::Result<Reply> {
        let mut stream = loop {
            match TcpStream::connect(addr) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                s => break s?,
            }
        };
        stream.set_read_timeout(Some(Duration::from_secs(120)))?;
        let mut head = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
        if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
            head.push_str(&format!("Host: {addr}\r\n"));
        }
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        let body = body.unwrap_or_default();
        if !body.is_empty() || method != "GET" {
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes())?;
        stream.write_all(body)?;
        // Read until the body is complete: some servers (chromedriver)
        // keep the connection open despite `Connection: close`.
        let mut raw = Vec::new();
        let mut buf = [0u8; 16 * 1024];
        loop {
            // a signal (a child exiting, under load) may interrupt a read
            let n = match stream.read(&mut buf) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                n => n?,
            };
            if n == 0 {
                break;
            }
            raw.extend_from_slice(&buf[..n]);
            if complete(&raw) {
                break;
            }
        }
        parse(&raw)
    }

    /// Whether `raw` holds a whole response (by Content-Length, or the last
    /// chunk of a chunked body).
    fn complete(raw: &[u8]) -> bool {
        let Some(split) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
            return false;
        };
        let head = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
        let body = &raw[split + 4..];
        if let Some(len) = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse::<usize>().ok())
        {
            return body.len() >= len;
        }
        head.contains("transfer-encoding: chunked") && body.ends_with(b"0\r\n\r\n")
    }

    /// `GET path` with the default headers.
    pub fn get(addr: &str, path: &str) -> Reply {
        request(addr, "GET", path, &[], None)
            .unwrap_or_else(|e| panic!("GET {path} from {addr}: {e}"))
    }

    fn parse(raw: &[u8]) -> std::io::Result<Reply> {
        let bad =
            |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
        let split = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .ok_or_else(|| bad("no end of headers"))?;
        let head = String::from_utf8_lossy(&raw[..split]).into_owned();
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| bad("no status line"))?;
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        let rest = &raw[split + 4..];
        let chunked = headers
            .iter()
            .any(|(n, v)| n == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"));
        let body = if chunked {
            dechunk(rest)
        } else {
            rest.to_vec()
        };
        Ok(Reply {
            status,
            headers,
            body,
        })
    }

    /// The data of a chunked body (as far as it is complete).
    pub fn dechunk(mut rest: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        while let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") {
            let size_text = String::from_utf8_lossy(&rest[..eol]);
            let size_hex = size_text.split(';').next().unwrap_or("").trim();
            let Ok(size) = usize::from_str_radix(size_hex, 16) else {
                break;
            };
            let start = eol + 2;
            if size == 0 || rest.len() < start + size {
                break;
            }
            out.extend_from_slice(&rest[start..start + size]);
            rest = rest.get(start + size + 2..).unwrap_or_default();
        }
        out
    }
}

/// A running `memlog serve --port 0`, killed when dropped.
pub struct ServeProcess {
    pub child: std::process::Child,
    /// `127.0.0.1:PORT`
    pub addr: String,
    /// The forget token, with `--allow-forget`.
    pub token: Option<String>,
    /// What the server printed first (its URL line).
    pub banner: String,
}

impl ServeProcess {
    /// Starts `memlog serve --port 0 ARGS…` in `dir` and reads the URL it
    /// prints.
    pub fn start(dir: &Path, args: &[&str]) -> ServeProcess {
        let mut command = memlog_command(dir);
        command.args(["serve", "--port", "0"]).args(args);
        ServeProcess::spawn(command)
    }

    /// Starts `command` (a `memlog serve --port 0 …` of any binary) and
    /// reads the URL it prints.
    pub fn spawn(mut command: Command) -> ServeProcess {
        use std::io::BufRead;
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start memlog serve");
        let stdout = child.stdout.take().expect("stdout");
        let mut reader = std::io::BufReader::new(stdout);
        let mut banner = String::new();
        reader.read_line(&mut banner).expect("read the URL line");
        // Keep draining stdout so that the server never blocks on it.
        std::thread::spawn(move || for _ in reader.lines() {});
        let url = banner
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL in {banner:?}"));
        let addr = url
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap_or_default()
            .to_string();
        let token = url.split_once("#token=").map(|(_, t)| t.to_string());
        ServeProcess {
            child,
            addr,
            token,
            banner,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn get(&self, path: &str) -> http::Reply {
        http::get(&self.addr, path)
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
