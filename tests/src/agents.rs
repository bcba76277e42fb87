//! Real agent CLIs driven offline, one runner for all ([`AgentCli`]): a
//! scripted model API on 127.0.0.1 (`tests/agents/scripted_api.py`, Python
//! standard library only) and the agents `scripts/install-assets` installs
//! from npm into `target/agents/` (or `$MEMLOG_AGENTS_DIR`). Each agent
//! runs with a fresh `HOME` in a temporary directory, so nothing of the
//! machine's own configuration is read or touched; `memlog install <agent>`
//! puts memlog's hooks in the test repository; the request bodies the API
//! received say what reached the model. When an agent or Python is
//! missing, `find` prints why and returns `None`, and the test skips.
//! An agent is added as one implementation of [`AgentCli`].

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::{Run, TestRepo};

/// Where `scripts/install-assets` installs the agent CLIs.
pub fn agents_dir() -> PathBuf {
    std::env::var_os("MEMLOG_AGENTS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/agents"))
}

/// `tests/agents/`, the scripted API servers.
pub fn scripts_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("agents")
}

/// How long one agent run may take before it is killed: far above the
/// second a scripted session takes, far below a hung test.
const RUN_LIMIT: Duration = Duration::from_secs(120);

/// A running `tests/agents/scripted_api.py`, killed when dropped.
pub struct ScriptedApi {
    child: std::process::Child,
    /// The port it listens on, on 127.0.0.1.
    pub port: u16,
    log_dir: tempfile::TempDir,
}

impl ScriptedApi {
    /// Starts the server on `script` (see the script's docstring for its
    /// shape). `None`, with a message, when `python3` is missing.
    pub fn start(script: &Value) -> Option<ScriptedApi> {
        use std::io::BufRead;
        let log_dir = tempfile::Builder::new()
            .prefix("memlog-api-")
            .tempdir()
            .expect("tempdir");
        let script_file = log_dir.path().join("script.json");
        std::fs::write(&script_file, script.to_string()).expect("write the script");
        let requests = log_dir.path().join("requests");
        let spawned = Command::new("python3")
            .arg(scripts_dir().join("scripted_api.py"))
            .arg(&script_file)
            .arg(&requests)
            .args(["--idle", "300"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn();
        let mut child = match spawned {
            Ok(c) => c,
            Err(e) => {
                eprintln!("skipped: python3 cannot start ({e}); the scripted API needs it");
                return None;
            }
        };
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read the scripted API's port");
        let port = line
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("the scripted API printed {line:?}, not a port"));
        Some(ScriptedApi {
            child,
            port,
            log_dir,
        })
    }

    /// `http://127.0.0.1:PORT`
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request logged so far, in order: `{"method", "path", "body",
    /// "answered_by"}`.
    pub fn requests(&self) -> Vec<Value> {
        let dir = self.log_dir.path().join("requests");
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "json"))
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        files
            .iter()
            .map(|f| serde_json::from_slice(&std::fs::read(f).expect("read a request")).unwrap())
            .collect()
    }
}

impl Drop for ScriptedApi {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What one agent run produced.
pub struct AgentRun {
    /// The agent's session id.
    pub session_id: String,
    /// The agent's JSON result (Claude Code's `--output-format json`).
    pub result: Value,
    /// The requests that reached the scripted API during this run.
    pub requests: Vec<Value>,
    /// The process's exit status and streams.
    pub run: Run,
    /// When the agent's process was started.
    pub started: Instant,
    /// When it had exited.
    pub ended: Instant,
}

impl AgentRun {
    /// Whether any request body of this run contains `needle` (wherever
    /// the agent put it: a `<system-reminder>` block, a hook-context
    /// message, a tool result).
    pub fn requests_contain(&self, needle: &str) -> bool {
        self.requests
            .iter()
            .any(|r| r["body"].to_string().contains(needle))
    }
}

/// A real agent CLI driven offline: what differs between agents (where the
/// program is, how its HOME is prepared, how a run is asked for and read
/// back) is said by each implementation; finding it, installing memlog's
/// hooks and running it against the scripted API are the same for all
/// ([`AgentCli::find`], [`AgentCli::run`]).
pub trait AgentCli: Sized {
    /// The agent's name in messages.
    const NAME: &'static str;
    /// memlog's name for it: `memlog install NAME`.
    const INSTALL: &'static str;
    /// The scripted API's wire protocol for it (`tests/agents/scripted_api.py`:
    /// `anthropic`, `responses` or `gemini`).
    const PROTOCOL: &'static str;
    /// The installed program, under [`agents_dir`].
    const PROGRAM: &'static str;

    /// The agent, once found.
    fn from_found(found: Found) -> Self;

    /// What [`AgentCli::find`] found.
    fn found(&self) -> &Found;

    /// Its `--version`, e.g. `codex-cli 0.169.0`.
    fn version(&self) -> &str {
        &self.found().version
    }

    /// The command that starts the program (by default, the program
    /// itself).
    fn program_command(program: &Path) -> Command {
        Command::new(program)
    }

    /// Settings the fresh HOME needs before memlog's hooks are installed.
    fn prepare_home(home: &Path) {
        let _ = home;
    }

    /// The arguments of one non-interactive run on `prompt`.
    fn prompt_args(prompt: &str) -> Vec<String>;

    /// The run's environment (besides HOME, git and the model, which
    /// [`AgentCli::run_args`] sets) and any file the agent reads to reach
    /// the scripted `api`.
    fn isolate(&self, command: &mut Command, api: &ScriptedApi);

    /// The session id and the JSON result of a finished run; panics with
    /// its output when the agent failed.
    fn outcome(run: &Run) -> (String, Value);

    /// The installed agent with a fresh HOME, set up for `repo` with
    /// memlog's hooks (`memlog install NAME`, the project's settings).
    /// `None`, with a message, when it is not installed.
    fn find(repo: &TestRepo) -> Option<Self> {
        let agent = Self::find_without_hooks(repo)?;
        repo.memlog(&["install", Self::INSTALL]).ok();
        Some(agent)
    }

    /// The same without installing memlog's hooks.
    fn find_without_hooks(repo: &TestRepo) -> Option<Self> {
        let program = agents_dir().join(Self::PROGRAM);
        if !program.exists() {
            eprintln!(
                "skipped: {} is not installed at {} (run scripts/install-assets)",
                Self::NAME,
                program.display()
            );
            return None;
        }
        let version = match Self::program_command(&program).arg("--version").output() {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
            other => {
                eprintln!("skipped: {} --version failed: {other:?}", Self::NAME);
                return None;
            }
        };
        let home = tempfile::Builder::new()
            .prefix(&format!("memlog-{}-home-", Self::INSTALL))
            .tempdir()
            .expect("tempdir");
        Self::prepare_home(home.path());
        Some(Self::from_found(Found {
            program,
            version,
            home,
            repo: repo.path().to_path_buf(),
        }))
    }

    /// One run on `prompt` in the repository, answered by `script`.
    fn run(&self, prompt: &str, script: &Value) -> AgentRun {
        let args = Self::prompt_args(prompt);
        self.run_args(&args.iter().map(String::as_str).collect::<Vec<_>>(), script)
    }

    /// A run with these arguments, answered by `script` (in the agent's
    /// protocol), offline: a fresh HOME, the scripted API, memlog's git
    /// identity and model. Panics unless the agent succeeds.
    fn run_args(&self, args: &[&str], script: &Value) -> AgentRun {
        self.run_args_on(self.api(script), args)
    }

    /// The scripted API answering `script` in this agent's protocol,
    /// started now, for a later [`AgentCli::run_on`] (a test that times
    /// when the agent starts keeps the API's own start out of it).
    fn api(&self, script: &Value) -> ScriptedApi {
        let mut script = script.clone();
        script["protocol"] = Value::from(Self::PROTOCOL);
        ScriptedApi::start(&script).expect("python3 runs the scripted API")
    }

    /// One run on `prompt` against an API already started.
    fn run_on(&self, api: ScriptedApi, prompt: &str) -> AgentRun {
        let args = Self::prompt_args(prompt);
        self.run_args_on(api, &args.iter().map(String::as_str).collect::<Vec<_>>())
    }

    /// A run with these arguments against `api`.
    fn run_args_on(&self, api: ScriptedApi, args: &[&str]) -> AgentRun {
        let found = self.found();
        let mut command = Self::program_command(&found.program);
        command
            .args(args)
            .current_dir(&found.repo)
            .env("HOME", found.home.path());
        self.isolate(&mut command, &api);
        git_and_model_env(&mut command);
        let started = Instant::now();
        let run = run_bounded(&mut command, found.home.path());
        let ended = Instant::now();
        let requests = api.requests();
        let (session_id, result) = Self::outcome(&run);
        AgentRun {
            session_id,
            result,
            requests,
            run,
            started,
            ended,
        }
    }
}

/// An agent CLI found installed, with a fresh HOME for one test repository.
pub struct Found {
    /// The program (a native binary, or Gemini's Node bundle).
    pub program: PathBuf,
    /// `--version`, e.g. `2.1.328 (Claude Code)`.
    pub version: String,
    /// The fresh HOME.
    pub home: tempfile::TempDir,
    /// The repository the agent runs in.
    pub repo: PathBuf,
}

/// The JSON object a run printed on stdout (Claude Code's and Gemini CLI's
/// `--output-format json`), and its `session_id`; panics unless the agent
/// exited 0 with one and `ok` accepts it.
fn json_result(name: &str, run: &Run, ok: impl Fn(&Value) -> bool) -> (String, Value) {
    let result: Value = serde_json::from_str(run.stdout().trim()).unwrap_or_else(|e| {
        panic!(
            "{name} printed no JSON result ({e}), status {:?}\nstdout:\n{}\nstderr:\n{}",
            run.output.status,
            run.stdout(),
            run.stderr()
        )
    });
    assert!(
        run.output.status.success() && ok(&result),
        "{name} failed: {result}\nstderr:\n{}",
        run.stderr()
    );
    let session_id = result["session_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no session_id in {result}"))
        .to_string();
    (session_id, result)
}

/// The JSON lines a run printed on stdout (Codex's `exec --json`,
/// Copilot's `--output-format json`), and the session id `session_of`
/// finds in one of them; panics unless the agent exited 0 with one.
fn json_lines_result(
    name: &str,
    run: &Run,
    session_of: impl Fn(&Value) -> Option<&str>,
) -> (String, Value) {
    assert!(
        run.output.status.success(),
        "{name} failed ({:?})\nstdout:\n{}\nstderr:\n{}",
        run.output.status,
        run.stdout(),
        run.stderr()
    );
    let events: Vec<Value> = run
        .stdout()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let session_id = events
        .iter()
        .find_map(&session_of)
        .unwrap_or_else(|| panic!("{name} printed no session id: {}", run.stdout()))
        .to_string();
    (session_id, Value::Array(events))
}

/// The events memlog's hooks recorded for a real agent's session on
/// `prompt` with one tool call: its start, the prompt as typed, the call
/// (of `tool`, its output holding `output`), an answer and its end. Returns
/// the events and the call.
pub fn captured_session(
    repo: &TestRepo,
    session_id: &str,
    prompt: &str,
    tool: &str,
    output: &str,
) -> (Vec<Value>, Value) {
    let events = repo.session_events(session_id);
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["kind"].as_str()).collect();
    for kind in [
        "session_start",
        "user_prompt",
        "tool_observation",
        "agent_response",
        "session_end",
    ] {
        assert!(kinds.contains(&kind), "{kind} missing from {kinds:?}");
    }
    let typed = events.iter().find(|e| e["kind"] == "user_prompt");
    assert_eq!(
        typed.map(|e| &e["body"]["text"]),
        Some(&Value::from(prompt))
    );
    let call = events
        .iter()
        .find(|e| e["kind"] == "tool_observation")
        .cloned()
        .unwrap_or_default();
    assert_eq!(call["body"]["tool"], tool, "{call}");
    assert!(
        call["body"]["output"]
            .as_str()
            .is_some_and(|o| o.contains(output)),
        "{call}"
    );
    (events, call)
}

/// Claude Code (its native binary), with memlog's hooks in the project's
/// `.claude/settings.json`.
pub struct ClaudeCli {
    found: Found,
}

impl AgentCli for ClaudeCli {
    const NAME: &'static str = "Claude Code";
    const INSTALL: &'static str = "claude";
    const PROTOCOL: &'static str = "anthropic";
    const PROGRAM: &'static str = "node_modules/@anthropic-ai/claude-code-linux-x64/claude";

    fn from_found(found: Found) -> Self {
        ClaudeCli { found }
    }

    fn found(&self) -> &Found {
        &self.found
    }

    /// `claude -p PROMPT --output-format json --allowedTools Bash Read`.
    fn prompt_args(prompt: &str) -> Vec<String> {
        [
            "-p",
            prompt,
            "--output-format",
            "json",
            "--allowedTools",
            "Bash",
            "Read",
        ]
        .map(str::to_string)
        .to_vec()
    }

    /// The scripted API, no telemetry or updates, no retries.
    fn isolate(&self, command: &mut Command, api: &ScriptedApi) {
        command
            .env("ANTHROPIC_BASE_URL", api.base_url())
            .env("ANTHROPIC_API_KEY", "x")
            .env_remove("ANTHROPIC_AUTH_TOKEN")
            .env_remove("CLAUDE_CODE_OAUTH_TOKEN")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("CLAUDE_CODE_MAX_RETRIES", "0")
            .env("API_TIMEOUT_MS", "30000");
    }

    fn outcome(run: &Run) -> (String, Value) {
        json_result("claude", run, |r| r["is_error"] != true)
    }
}

impl ClaudeCli {
    /// The project's settings file, where `find` installed the hooks.
    pub fn settings_path(&self) -> PathBuf {
        self.found.repo.join(".claude/settings.json")
    }

    /// The HOME Claude Code runs with (its transcripts are under it).
    pub fn home(&self) -> &Path {
        self.found.home.path()
    }

    /// The transcript Claude Code wrote for `session_id`
    /// (`$HOME/.claude/projects/<cwd, slugged>/<id>.jsonl`).
    pub fn transcript(&self, session_id: &str) -> PathBuf {
        let projects = self.found.home.path().join(".claude/projects");
        let name = format!("{session_id}.jsonl");
        std::fs::read_dir(&projects)
            .unwrap_or_else(|e| panic!("{}: {e}", projects.display()))
            .filter_map(|e| e.ok().map(|e| e.path().join(&name)))
            .find(|p| p.exists())
            .unwrap_or_else(|| panic!("no transcript {name} under {}", projects.display()))
    }
}

/// The git identity memlog commits with, isolated from the user's
/// configuration, the embedding model's home (the fresh HOME has none), and
/// the memlog under test first in PATH, so that a `memlog …` the agent runs
/// through its shell tool (as the Stop hook's instruction tells it to) is
/// this build, not whatever else is installed.
pub fn git_and_model_env(command: &mut Command) {
    let memlog_dir = crate::memlog_bin()
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let path =
        std::env::join_paths(std::iter::once(memlog_dir).chain(std::env::split_paths(&path)))
            .unwrap_or(path);
    command.env("PATH", path);
    let model_home = std::env::var_os("MEMLOG_HOME").unwrap_or_else(|| {
        let home = std::env::var_os("HOME").unwrap_or_default();
        Path::new(&home).join(".cache/memlog").into_os_string()
    });
    command
        .env("MEMLOG_HOME", model_home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.com")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.com");
}

/// Runs `command` with stdin from /dev/null and its output in files under
/// `scratch`, killed after [`RUN_LIMIT`].
fn run_bounded(command: &mut Command, scratch: &Path) -> Run {
    let stdout_path = scratch.join(".agent-stdout");
    let stderr_path = scratch.join(".agent-stderr");
    let mut child = command
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout_path).expect("stdout file"))
        .stderr(std::fs::File::create(&stderr_path).expect("stderr file"))
        .spawn()
        .unwrap_or_else(|e| panic!("start {:?}: {e}", command.get_program()));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the agent") {
            break status;
        }
        if started.elapsed() > RUN_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{:?} ran longer than {RUN_LIMIT:?}; stderr:\n{}",
                command.get_program(),
                std::fs::read_to_string(&stderr_path).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        output: std::process::Output {
            status,
            stdout: std::fs::read(&stdout_path).unwrap_or_default(),
            stderr: std::fs::read(&stderr_path).unwrap_or_default(),
        },
    }
}

/// Codex CLI (its native binary), with a CODEX_HOME whose model provider is
/// the scripted Responses API, and memlog's hooks in the project's
/// `.codex/hooks.json`.
pub struct CodexCli {
    found: Found,
    /// The model Codex asks for, which decides its tools: `gpt-5` (unknown
    /// to Codex: its fallback tools, subagents included), `gpt-5.5` (its
    /// freeform `apply_patch`).
    model: String,
    /// More of config.toml (what `/hooks` writes when the user trusts).
    config: String,
}

impl AgentCli for CodexCli {
    const NAME: &'static str = "Codex CLI";
    const INSTALL: &'static str = "codex";
    const PROTOCOL: &'static str = "responses";
    const PROGRAM: &'static str =
        "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex";

    fn from_found(found: Found) -> Self {
        CodexCli {
            found,
            model: "gpt-5".into(),
            config: String::new(),
        }
    }

    fn found(&self) -> &Found {
        &self.found
    }

    fn prepare_home(home: &Path) {
        std::fs::create_dir_all(home.join(".codex")).expect("CODEX_HOME");
    }

    /// `codex exec --json PROMPT`, its hooks run without Codex's
    /// interactive trust review (`--dangerously-bypass-hook-trust`: the
    /// test vetted them).
    fn prompt_args(prompt: &str) -> Vec<String> {
        ["exec", "--json", "--dangerously-bypass-hook-trust", prompt]
            .map(str::to_string)
            .to_vec()
    }

    /// CODEX_HOME, and its config.toml: the scripted API as the only model
    /// provider (Responses wire API, no retries), no analytics or plugins,
    /// no sandbox or approvals (the test repository is a tempdir), the
    /// repository trusted.
    fn isolate(&self, command: &mut Command, api: &ScriptedApi) {
        let config = format!(
            r#"model = "{model}"
model_provider = "scripted"
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.scripted]
name = "scripted"
base_url = "{base}/v1"
wire_api = "responses"
env_key = "SCRIPTED_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[features]
plugins = false

[projects."{repo}"]
trust_level = "trusted"
{more}"#,
            model = self.model,
            base = api.base_url(),
            repo = self.found.repo.display(),
            more = self.config,
        );
        std::fs::write(self.codex_home().join("config.toml"), config).expect("write config.toml");
        command
            .env("CODEX_HOME", self.codex_home())
            .env("SCRIPTED_API_KEY", "x")
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL");
    }

    /// The JSON lines of `codex exec --json`; the session is the
    /// `thread.started` event's thread.
    fn outcome(run: &Run) -> (String, Value) {
        json_lines_result("codex", run, |e| {
            (e["type"] == "thread.started")
                .then(|| e["thread_id"].as_str())
                .flatten()
        })
    }
}

impl CodexCli {
    /// The same agent asking for `model`.
    pub fn with_model(mut self, model: &str) -> Self {
        self.model = model.to_string();
        self
    }

    /// The same agent with `toml` added to its config.toml.
    pub fn with_config(mut self, toml: &str) -> Self {
        self.config.push_str(toml);
        self
    }

    /// One run on `prompt` that runs only the hooks the user trusted
    /// (without `--dangerously-bypass-hook-trust`).
    pub fn run_trusted_only(&self, prompt: &str, script: &Value) -> AgentRun {
        self.run_args(&["exec", "--json", prompt], script)
    }

    /// CODEX_HOME.
    pub fn codex_home(&self) -> PathBuf {
        self.found.home.path().join(".codex")
    }

    /// Every session file Codex wrote (a subagent's too), in path order.
    pub fn rollouts(&self) -> Vec<PathBuf> {
        fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    walk(&path, out);
                } else if path.extension().is_some_and(|x| x == "jsonl") {
                    out.push(path);
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.codex_home().join("sessions"), &mut out);
        out.sort();
        out
    }

    /// The session file Codex wrote for `session_id`
    /// (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`).
    pub fn rollout(&self, session_id: &str) -> PathBuf {
        fn find(dir: &Path, id: &str) -> Option<PathBuf> {
            for entry in std::fs::read_dir(dir).ok()?.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    if let Some(found) = find(&path, id) {
                        return Some(found);
                    }
                } else if path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                    n.starts_with("rollout-") && n.ends_with(&format!("{id}.jsonl"))
                }) {
                    return Some(path);
                }
            }
            None
        }
        let sessions = self.codex_home().join("sessions");
        find(&sessions, session_id)
            .unwrap_or_else(|| panic!("no rollout for {session_id} under {}", sessions.display()))
    }
}

/// Gemini CLI (a Node bundle), with a HOME whose settings use an API key
/// against the scripted Gemini API, and memlog's hooks in the project's
/// `.gemini/settings.json`.
pub struct GeminiCli {
    found: Found,
}

impl AgentCli for GeminiCli {
    const NAME: &'static str = "Gemini CLI";
    const INSTALL: &'static str = "gemini";
    const PROTOCOL: &'static str = "gemini";
    const PROGRAM: &'static str = "node_modules/@google/gemini-cli/bundle/gemini.js";

    fn from_found(found: Found) -> Self {
        GeminiCli { found }
    }

    fn found(&self) -> &Found {
        &self.found
    }

    fn program_command(program: &Path) -> Command {
        let mut command = Command::new("node");
        command.arg(program);
        command
    }

    fn prepare_home(home: &Path) {
        let settings = home.join(".gemini/settings.json");
        std::fs::create_dir_all(settings.parent().expect("parent")).expect(".gemini");
        let user = serde_json::json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": false},
        });
        std::fs::write(&settings, user.to_string()).expect("write settings.json");
    }

    /// `gemini -p PROMPT --output-format json --yolo`.
    fn prompt_args(prompt: &str) -> Vec<String> {
        ["-p", prompt, "--output-format", "json", "--yolo"]
            .map(str::to_string)
            .to_vec()
    }

    /// The scripted API by key, the repository trusted.
    fn isolate(&self, command: &mut Command, api: &ScriptedApi) {
        command
            .env("GEMINI_API_KEY", "x")
            .env("GOOGLE_GEMINI_BASE_URL", api.base_url())
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
            .env_remove("GOOGLE_API_KEY")
            .env_remove("GOOGLE_CLOUD_PROJECT");
    }

    fn outcome(run: &Run) -> (String, Value) {
        json_result("gemini", run, |_| true)
    }
}

impl GeminiCli {
    /// The fresh HOME (its `.gemini/` holds settings and chats).
    pub fn home(&self) -> &Path {
        self.found.home.path()
    }

    /// Where Gemini CLI keeps its projects' chats (`~/.gemini/tmp`).
    pub fn chats_root(&self) -> PathBuf {
        self.home().join(".gemini/tmp")
    }
}

/// GitHub Copilot CLI (its native binary), offline (`COPILOT_OFFLINE`)
/// with the scripted Messages API as its own model provider (BYOK,
/// `COPILOT_PROVIDER_TYPE=anthropic`), and memlog's hooks in the project's
/// `.github/hooks/memlog.json`. Its first run in a HOME unpacks its
/// package (about 235 MB) into `~/.cache/copilot`, removed with the HOME.
pub struct CopilotCli {
    found: Found,
}

impl AgentCli for CopilotCli {
    const NAME: &'static str = "GitHub Copilot CLI";
    const INSTALL: &'static str = "copilot";
    const PROTOCOL: &'static str = "anthropic";
    const PROGRAM: &'static str = "node_modules/@github/copilot-linux-x64/copilot";

    fn from_found(found: Found) -> Self {
        CopilotCli { found }
    }

    fn found(&self) -> &Found {
        &self.found
    }

    /// `copilot -p PROMPT --output-format json --allow-all-tools
    /// --trust-folder`: the folder trusted for this run only, which loads
    /// its hooks.
    fn prompt_args(prompt: &str) -> Vec<String> {
        [
            "-p",
            prompt,
            "--output-format",
            "json",
            "--allow-all-tools",
            "--trust-folder",
            "--disable-client-telemetry",
        ]
        .map(str::to_string)
        .to_vec()
    }

    /// The scripted API as the provider, no GitHub account. The key is a
    /// word no test text holds: Copilot masks the key's value wherever it
    /// occurs in what it prints and writes (with `x`, every `x`).
    fn isolate(&self, command: &mut Command, api: &ScriptedApi) {
        command
            .env("COPILOT_OFFLINE", "true")
            .env("COPILOT_PROVIDER_TYPE", "anthropic")
            .env("COPILOT_PROVIDER_BASE_URL", api.base_url())
            .env("COPILOT_PROVIDER_API_KEY", "scripted-api-key")
            .env("COPILOT_MODEL", "claude-sonnet-4.5")
            .env("COPILOT_AUTO_UPDATE", "false")
            .env_remove("COPILOT_HOME")
            .env_remove("COPILOT_ALLOW_ALL")
            .env_remove("COPILOT_GITHUB_TOKEN")
            .env_remove("GH_TOKEN")
            .env_remove("GITHUB_TOKEN");
    }

    /// The JSON lines of `--output-format json`; the session is the
    /// `result` line's `sessionId`.
    fn outcome(run: &Run) -> (String, Value) {
        json_lines_result("copilot", run, |e| {
            (e["type"] == "result")
                .then(|| e["sessionId"].as_str())
                .flatten()
        })
    }
}

impl CopilotCli {
    /// The fresh HOME (its `.copilot/` holds settings and sessions).
    pub fn home(&self) -> &Path {
        self.found.home.path()
    }

    /// The session file Copilot wrote for `session_id`
    /// (`~/.copilot/session-state/<id>/events.jsonl`).
    pub fn events_file(&self, session_id: &str) -> PathBuf {
        self.home()
            .join(".copilot/session-state")
            .join(session_id)
            .join("events.jsonl")
    }
}

/// OpenCode (its native binary), its model the scripted Messages API as a
/// provider of its own (`@ai-sdk/anthropic`, which OpenCode bundles, with a
/// `baseURL`), and memlog's plugin in the project's `.opencode/plugin/`.
pub struct OpencodeCli {
    found: Found,
}

impl AgentCli for OpencodeCli {
    const NAME: &'static str = "OpenCode";
    const INSTALL: &'static str = "opencode";
    const PROTOCOL: &'static str = "anthropic";
    const PROGRAM: &'static str = "node_modules/opencode-linux-x64/bin/opencode";

    fn from_found(found: Found) -> Self {
        OpencodeCli { found }
    }

    fn found(&self) -> &Found {
        &self.found
    }

    /// `opencode run --format json WORDS…`: the prompt's words as separate
    /// arguments, since `run` puts an argument holding a space in quotes.
    fn prompt_args(prompt: &str) -> Vec<String> {
        ["run", "--format", "json"]
            .into_iter()
            .chain(prompt.split_whitespace())
            .map(str::to_string)
            .collect()
    }

    /// The configuration inline (`OPENCODE_CONFIG_CONTENT`): the scripted
    /// provider, every tool allowed, no sharing or updates. At start
    /// OpenCode installs its plugin package into `~/.config/opencode` and
    /// `.opencode` from npm; with no registry it retries for over a minute
    /// before going on, so the registry is the scripted API, which has no
    /// such package and fails the install at once.
    fn isolate(&self, command: &mut Command, api: &ScriptedApi) {
        let config = serde_json::json!({
            "provider": {"scripted": {
                "npm": "@ai-sdk/anthropic",
                "name": "Scripted",
                "options": {"baseURL": format!("{}/v1", api.base_url()), "apiKey": "scripted-api-key"},
                "models": {"claude-sonnet-4-5": {"name": "Scripted", "tool_call": true}},
            }},
            "model": "scripted/claude-sonnet-4-5",
            "small_model": "scripted/claude-sonnet-4-5",
            "autoupdate": false,
            "share": "disabled",
            "permission": {"bash": "allow", "edit": "allow"},
        });
        // OpenCode takes its project directory from PWD (else it runs its
        // tools where the test process started).
        command
            .env("PWD", &self.found.repo)
            .env("OPENCODE_CONFIG_CONTENT", config.to_string())
            .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
            .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
            .env("NPM_CONFIG_REGISTRY", format!("{}/", api.base_url()))
            .env_remove("OPENCODE_CONFIG")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_API_KEY");
    }

    /// The JSON lines of `run --format json`, each naming its `sessionID`.
    fn outcome(run: &Run) -> (String, Value) {
        json_lines_result("opencode", run, |e| e["sessionID"].as_str())
    }
}

impl OpencodeCli {
    /// `opencode export SESSION`, written to a file in the fresh HOME: the
    /// session file a user hands to `memlog import opencode`.
    pub fn export(&self, session_id: &str) -> PathBuf {
        let found = self.found();
        // no model is asked; the API is only where its configuration points
        let api = self.api(&serde_json::json!({"turns": []}));
        let mut command = Self::program_command(&found.program);
        command
            .args(["export", session_id])
            .current_dir(&found.repo)
            .env("HOME", found.home.path());
        self.isolate(&mut command, &api);
        let run = run_bounded(&mut command, found.home.path());
        assert!(
            run.output.status.success(),
            "opencode export failed\nstdout:\n{}\nstderr:\n{}",
            run.stdout(),
            run.stderr()
        );
        // the JSON, without what the command may print before it
        let stdout = run.stdout();
        let json = stdout.find('{').map_or("", |start| &stdout[start..]);
        let path = found.home.path().join(format!("{session_id}.json"));
        std::fs::write(&path, json).expect("write the export");
        path
    }
}

/// A script whose model runs `cat notes.txt` with a tool named `bash`
/// (Copilot CLI's and OpenCode's shell), then says `answer`.
pub fn bash_cat_notes(answer: &str) -> Value {
    serde_json::json!({
        "turns": [
            {"text": "Reading the notes.",
             "tool_use": {"name": "bash",
                          "input": {"command": "cat notes.txt", "description": "Read the notes"}}},
            {"text": answer}
        ],
        "side_text": "Notes"
    })
}

/// A repository with `notes.txt` saying `notes` and src/invoice.rs, for
/// file-aware recall through a real agent; the invoice's absolute path.
pub fn invoice_repo(notes: &str) -> (TestRepo, PathBuf) {
    let repo = repo_with_notes(notes);
    let invoice = repo.path().join("src/invoice.rs");
    std::fs::create_dir_all(repo.path().join("src")).expect("src/ is created");
    std::fs::write(&invoice, "pub fn total() -> usize { 500 }\n").expect("the invoice is written");
    (repo, invoice)
}

/// The scripted model of a file-aware recall test: reads src/invoice.rs
/// with each of `reads` (tool name and input), then notes.txt with
/// `notes_read`, then answers.
pub fn read_invoice_then_notes(reads: &[(&str, Value)], notes_read: (&str, Value)) -> Value {
    let mut turns: Vec<Value> = reads
        .iter()
        .map(|(name, input)| {
            serde_json::json!({"text": "Reading the invoice code.",
                               "tool_use": {"name": name, "input": input}})
        })
        .collect();
    turns.push(serde_json::json!({"text": "And the notes.",
                                  "tool_use": {"name": notes_read.0, "input": notes_read.1}}));
    turns.push(serde_json::json!({"text": "Totals are usize; the freeze is Wednesday noon."}));
    serde_json::json!({"turns": turns, "side_text": "Invoice"})
}

/// What file-aware recall must bring an agent's model that read
/// src/invoice.rs and then notes.txt after
/// [`TestRepo::failed_and_fixed_session`] (`failure`, `fix`): both reads
/// ran; the context the agent's `hook` gave (what earlier sessions learned
/// about the file) cites the failure there and its fix; nothing came for
/// notes.txt, which memory knows nothing about; and one `recall` was
/// recorded, at the shared protocol's `recorded` hook (once per file and
/// session, however often it is read).
pub fn assert_invoice_recall(
    repo: &TestRepo,
    run: &AgentRun,
    (hook, recorded): (&str, &str),
    (failure, fix): (&str, &str),
) {
    assert!(run.requests_contain("pub fn total()"), "the read ran");
    assert!(
        run.requests_contain("The release freeze is Wednesday noon."),
        "the notes were read: the hook's answer did not stop the call"
    );
    assert!(
        run.requests_contain("what earlier sessions learned about src/invoice.rs"),
        "the {hook} context did not reach the model: {:#?}",
        run.requests.last()
    );
    assert!(
        run.requests_contain(&format!("[{failure}] failure")),
        "the failure on src/invoice.rs did not reach the model"
    );
    assert!(
        run.requests_contain(&format!("edited src/invoice.rs [{fix}]")),
        "the fix did not reach the model"
    );
    assert!(
        !run.requests_contain("earlier sessions learned about notes.txt"),
        "something was injected for a file memory knows nothing about"
    );
    let recalls: Vec<Value> = repo
        .session_events(&run.session_id)
        .into_iter()
        .filter(|e| e["kind"] == "recall" && e["body"]["hook"] == recorded)
        .collect();
    assert_eq!(recalls.len(), 1, "{recalls:#?}");
}

/// What the first agent of a shared-memory test answers
/// ([`plan_the_migration`]), for the next agent's model to be shown.
pub const DECIDED: &str = "We moved the quarzite migration behind the billing cutover.";

/// A first session for a shared-memory test: `agent` asked to "Plan the
/// quarzite migration order", answering [`DECIDED`].
pub fn plan_the_migration<A: AgentCli>(agent: &A) -> AgentRun {
    agent.run(
        "Plan the quarzite migration order",
        &serde_json::json!({"turns": [{"text": DECIDED}], "side_text": "Plan"}),
    )
}

/// Waits (up to a minute) until `repo`'s index has every sealed session:
/// what a user finds when they start the next agent, since a session's end
/// starts `memlog index` in the background.
pub fn wait_for_background_index(repo: &TestRepo) {
    let started = Instant::now();
    loop {
        // doctor fails on what else it finds (Codex's hooks, untrusted
        // where it looks), and still reports the index
        let doctor =
            crate::run(crate::memlog_command(repo.path()).args(["doctor", "--json"])).json();
        if doctor["index"] == "up to date" {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the index never caught up: {doctor}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A test repository holding `notes.txt` with `text`, for a scripted model
/// to read with its tools, and hook budgets far above the defaults: these
/// tests are about what reaches the model, and the machine running them
/// may be loaded (the bench times the hooks).
pub fn repo_with_notes(text: &str) -> TestRepo {
    let repo = TestRepo::new();
    std::fs::write(repo.path().join("notes.txt"), text).expect("write notes.txt");
    std::fs::write(
        repo.path().join(".memlog.yaml"),
        "hooks:\n  inject_budget_ms: 20000\n  record_budget_ms: 20000\n",
    )
    .expect("write .memlog.yaml");
    repo
}

/// The steps of the plan a scripted model makes with its agent's plan tool
/// ([`plan_twice`]): the first two are completed by the second call (the
/// second straight from pending), the last stays pending.
pub const PLAN_STEPS: [&str; 3] = ["Write the parser", "Add the tests", "Update the docs"];

/// A script whose model calls its agent's plan tool `tool` twice — `first`
/// (the plan made, its first step started), then `second` (steps marked
/// completed) — then answers. The inputs are in the tool's own shape.
pub fn plan_twice(tool: &str, first: Value, second: Value) -> Value {
    serde_json::json!({
        "turns": [
            {"text": "Planning.", "tool_use": {"name": tool, "input": first}},
            {"text": "Two steps done.", "tool_use": {"name": tool, "input": second}},
            {"text": "The parser and its tests are in; the docs are still open."}
        ],
        "side_text": "{}"
    })
}

/// Asserts that `memlog task list --json` holds the plan of [`plan_twice`]
/// (its first two steps done, the last pending, one task each), and that
/// the hooks recorded it in `session` as task events from `tool`.
pub fn assert_plan_tasks(repo: &TestRepo, session: &str, tool: &str) {
    // at once, as a user would ask: the session's end only started an
    // index in the background
    let tasks = repo.memlog(&["task", "list", "--json"]).ok().json();
    let task = |title: &str| {
        tasks
            .as_array()
            .expect("a list of tasks")
            .iter()
            .find(|t| t["title"] == title)
            .cloned()
            .unwrap_or_else(|| {
                let events = repo.session_events(session);
                panic!("no task {title:?}: {tasks:#}\nthe session's events: {events:#?}")
            })
    };
    for (title, status) in PLAN_STEPS.iter().zip(["done", "done", "pending"]) {
        assert_eq!(task(title)["status"], status, "{title}: {tasks:#}");
    }
    assert_eq!(
        tasks.as_array().map(Vec::len),
        Some(PLAN_STEPS.len()),
        "one task a step, not a copy a call: {tasks:#}"
    );
    let events = repo.session_events(session);
    let from_tool = events
        .iter()
        .filter(|e| e["kind"] == "task_created" && e["body"]["source"] == tool)
        .count();
    // every step of each call, and no observation of the calls
    assert_eq!(from_tool, 2 * PLAN_STEPS.len(), "{events:#?}");
    assert!(
        !events
            .iter()
            .any(|e| e["kind"] == "tool_observation" && e["body"]["tool"] == tool),
        "{events:#?}"
    );
}
