//! Real agent CLIs driven offline: a scripted model API on 127.0.0.1
//! (`tests/agents/scripted_api.py`, Python standard library only) and the
//! agents `scripts/install-assets` installs from npm into `target/agents/`
//! (or `$MEMLOG_AGENTS_DIR`). Each agent runs with a fresh `HOME` in a
//! temporary directory, so nothing of the machine's own configuration is
//! read or touched. When an agent or Python is missing, `find` prints why
//! and returns `None`, and the test skips.

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

/// Claude Code, as `scripts/install-assets` installs it, with a fresh HOME
/// and memlog's hooks installed into one test repository.
pub struct ClaudeCli {
    /// The native `claude` binary.
    pub bin: PathBuf,
    /// `claude --version`, e.g. `2.1.328 (Claude Code)`.
    pub version: String,
    /// The fresh HOME (its `.claude/` holds the transcripts).
    pub home: tempfile::TempDir,
    repo: PathBuf,
}

impl ClaudeCli {
    /// The installed Claude Code, set up for `repo` with memlog's hooks
    /// (`memlog install claude`, the project's `.claude/settings.json`).
    /// `None`, with a message, when it is not installed.
    pub fn find(repo: &TestRepo) -> Option<ClaudeCli> {
        let claude = ClaudeCli::find_without_hooks(repo)?;
        repo.memlog(&["install", "claude"]).ok();
        Some(claude)
    }

    /// The same without installing memlog's hooks.
    pub fn find_without_hooks(repo: &TestRepo) -> Option<ClaudeCli> {
        let bin = agents_dir().join("node_modules/@anthropic-ai/claude-code-linux-x64/claude");
        if !bin.exists() {
            eprintln!(
                "skipped: Claude Code is not installed at {} (run scripts/install-assets)",
                bin.display()
            );
            return None;
        }
        let out = Command::new(&bin).arg("--version").output();
        let version = match out {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
            other => {
                eprintln!("skipped: {} --version failed: {other:?}", bin.display());
                return None;
            }
        };
        let home = tempfile::Builder::new()
            .prefix("memlog-claude-home-")
            .tempdir()
            .expect("tempdir");
        Some(ClaudeCli {
            bin,
            version,
            home,
            repo: repo.path().to_path_buf(),
        })
    }

    /// The project's settings file, where `find` installed the hooks.
    pub fn settings_path(&self) -> PathBuf {
        self.repo.join(".claude/settings.json")
    }

    /// `claude -p PROMPT` in the repository, answered by `script`.
    pub fn run(&self, prompt: &str, script: &Value) -> AgentRun {
        self.run_args(&["-p", prompt], script)
    }

    /// `claude ARGS… --output-format json --allowedTools Bash Read`
    /// (e.g. `["-p", "/compact", "--resume", id]`), answered by `script`.
    /// Panics unless the agent exits 0 with a JSON result.
    pub fn run_args(&self, args: &[&str], script: &Value) -> AgentRun {
        let api = ScriptedApi::start(script).expect("python3 runs the scripted API");
        let mut command = Command::new(&self.bin);
        command
            .args(args)
            .args(["--output-format", "json", "--allowedTools", "Bash", "Read"])
            .current_dir(&self.repo);
        self.isolate(&mut command, &api);
        let run = run_bounded(&mut command, self.home.path());
        let requests = api.requests();
        let result: Value = serde_json::from_str(run.stdout().trim()).unwrap_or_else(|e| {
            panic!(
                "claude printed no JSON result ({e}), status {:?}\nstdout:\n{}\nstderr:\n{}",
                run.output.status,
                run.stdout(),
                run.stderr()
            )
        });
        assert!(
            run.output.status.success() && result["is_error"] != true,
            "claude failed: {result}\nstderr:\n{}",
            run.stderr()
        );
        let session_id = result["session_id"]
            .as_str()
            .unwrap_or_else(|| panic!("no session_id in {result}"))
            .to_string();
        AgentRun {
            session_id,
            result,
            requests,
            run,
        }
    }

    /// The offline environment: the scripted API, a fresh HOME, no
    /// telemetry or updates, no retries, and the git identity and model
    /// location the hooks (memlog) need.
    fn isolate(&self, command: &mut Command, api: &ScriptedApi) {
        command
            .env("HOME", self.home.path())
            .env("ANTHROPIC_BASE_URL", api.base_url())
            .env("ANTHROPIC_API_KEY", "x")
            .env_remove("ANTHROPIC_AUTH_TOKEN")
            .env_remove("CLAUDE_CODE_OAUTH_TOKEN")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("CLAUDE_CODE_MAX_RETRIES", "0")
            .env("API_TIMEOUT_MS", "30000");
        git_and_model_env(command);
    }

    /// The transcript Claude Code wrote for `session_id`
    /// (`$HOME/.claude/projects/<cwd, slugged>/<id>.jsonl`).
    pub fn transcript(&self, session_id: &str) -> PathBuf {
        let projects = self.home.path().join(".claude/projects");
        let name = format!("{session_id}.jsonl");
        std::fs::read_dir(&projects)
            .unwrap_or_else(|e| panic!("{}: {e}", projects.display()))
            .filter_map(|e| e.ok().map(|e| e.path().join(&name)))
            .find(|p| p.exists())
            .unwrap_or_else(|| panic!("no transcript {name} under {}", projects.display()))
    }
}

/// The git identity memlog commits with, isolated from the user's
/// configuration, and the embedding model's home (the fresh HOME has none).
pub fn git_and_model_env(command: &mut Command) {
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

/// Codex CLI, as `scripts/install-assets` installs it, with a fresh
/// CODEX_HOME whose model provider is the scripted Responses API, and
/// memlog's hooks installed into one test repository.
pub struct CodexCli {
    /// The native `codex` binary.
    pub bin: PathBuf,
    /// `codex --version`, e.g. `codex-cli 0.169.0`.
    pub version: String,
    /// The fresh HOME; CODEX_HOME is its `.codex/`.
    pub home: tempfile::TempDir,
    repo: PathBuf,
}

impl CodexCli {
    /// The installed Codex CLI, set up for `repo` with memlog's hooks
    /// (`memlog install codex`, the project's `.codex/hooks.json`). `None`,
    /// with a message, when it is not installed.
    pub fn find(repo: &TestRepo) -> Option<CodexCli> {
        let bin = agents_dir().join(
            "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
        );
        if !bin.exists() {
            eprintln!(
                "skipped: Codex CLI is not installed at {} (run scripts/install-assets)",
                bin.display()
            );
            return None;
        }
        let version = match Command::new(&bin).arg("--version").output() {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
            other => {
                eprintln!("skipped: {} --version failed: {other:?}", bin.display());
                return None;
            }
        };
        let home = tempfile::Builder::new()
            .prefix("memlog-codex-home-")
            .tempdir()
            .expect("tempdir");
        std::fs::create_dir_all(home.path().join(".codex")).expect("CODEX_HOME");
        repo.memlog(&["install", "codex"]).ok();
        Some(CodexCli {
            bin,
            version,
            home,
            repo: repo.path().to_path_buf(),
        })
    }

    /// CODEX_HOME.
    pub fn codex_home(&self) -> PathBuf {
        self.home.path().join(".codex")
    }

    /// `codex exec --json PROMPT` in the repository, answered by `script`
    /// (protocol `responses`). Hooks run without Codex's interactive trust
    /// review (`--dangerously-bypass-hook-trust`: the test vetted them).
    pub fn run(&self, prompt: &str, script: &Value) -> AgentRun {
        let mut script = script.clone();
        script["protocol"] = Value::from("responses");
        let api = ScriptedApi::start(&script).expect("python3 runs the scripted API");
        self.write_config(&api);
        let mut command = Command::new(&self.bin);
        command
            .args(["exec", "--json", "--dangerously-bypass-hook-trust", prompt])
            .current_dir(&self.repo)
            .env("HOME", self.home.path())
            .env("CODEX_HOME", self.codex_home())
            .env("SCRIPTED_API_KEY", "x")
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL");
        git_and_model_env(&mut command);
        let run = run_bounded(&mut command, self.home.path());
        let requests = api.requests();
        assert!(
            run.output.status.success(),
            "codex failed ({:?})\nstdout:\n{}\nstderr:\n{}",
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
            .find(|e| e["type"] == "thread.started")
            .and_then(|e| e["thread_id"].as_str())
            .unwrap_or_else(|| panic!("no thread.started in {}", run.stdout()))
            .to_string();
        AgentRun {
            session_id,
            result: Value::Array(events),
            requests,
            run,
        }
    }

    /// config.toml: the scripted API as the only model provider (Responses
    /// wire API, no retries), no analytics or plugins, no sandbox or
    /// approvals (the test repository is a tempdir), the repository trusted.
    fn write_config(&self, api: &ScriptedApi) {
        let config = format!(
            r#"model = "gpt-5"
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
"#,
            base = api.base_url(),
            repo = self.repo.display()
        );
        std::fs::write(self.codex_home().join("config.toml"), config).expect("write config.toml");
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

/// Gemini CLI, as `scripts/install-assets` installs it (a Node bundle),
/// with a fresh HOME whose settings use an API key against the scripted
/// Gemini API, and memlog's hooks installed into one test repository.
pub struct GeminiCli {
    /// `gemini.js`, run with `node`.
    pub script: PathBuf,
    /// `gemini --version`, e.g. `0.61.0`.
    pub version: String,
    /// The fresh HOME (its `.gemini/` holds settings and chats).
    pub home: tempfile::TempDir,
    repo: PathBuf,
}

impl GeminiCli {
    /// The installed Gemini CLI, set up for `repo` with memlog's hooks
    /// (`memlog install gemini`, the project's `.gemini/settings.json`).
    /// `None`, with a message, when it or `node` is not installed.
    pub fn find(repo: &TestRepo) -> Option<GeminiCli> {
        let script = agents_dir().join("node_modules/@google/gemini-cli/bundle/gemini.js");
        if !script.exists() {
            eprintln!(
                "skipped: Gemini CLI is not installed at {} (run scripts/install-assets)",
                script.display()
            );
            return None;
        }
        let version = match Command::new("node").arg(&script).arg("--version").output() {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
            other => {
                eprintln!("skipped: gemini --version failed: {other:?}");
                return None;
            }
        };
        let home = tempfile::Builder::new()
            .prefix("memlog-gemini-home-")
            .tempdir()
            .expect("tempdir");
        let settings = home.path().join(".gemini/settings.json");
        std::fs::create_dir_all(settings.parent().expect("parent")).expect(".gemini");
        let user = serde_json::json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": false},
        });
        std::fs::write(&settings, user.to_string()).expect("write settings.json");
        repo.memlog(&["install", "gemini"]).ok();
        Some(GeminiCli {
            script,
            version,
            home,
            repo: repo.path().to_path_buf(),
        })
    }

    /// Where Gemini CLI keeps its projects' chats (`~/.gemini/tmp`).
    pub fn chats_root(&self) -> PathBuf {
        self.home.path().join(".gemini/tmp")
    }

    /// `gemini -p PROMPT --output-format json --yolo` in the repository,
    /// answered by `script` (protocol `gemini`).
    pub fn run(&self, prompt: &str, script: &Value) -> AgentRun {
        let mut script = script.clone();
        script["protocol"] = Value::from("gemini");
        let api = ScriptedApi::start(&script).expect("python3 runs the scripted API");
        let mut command = Command::new("node");
        command
            .arg(&self.script)
            .args(["-p", prompt, "--output-format", "json", "--yolo"])
            .current_dir(&self.repo)
            .env("HOME", self.home.path())
            .env("GEMINI_API_KEY", "x")
            .env("GOOGLE_GEMINI_BASE_URL", api.base_url())
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
            .env_remove("GOOGLE_API_KEY")
            .env_remove("GOOGLE_CLOUD_PROJECT");
        git_and_model_env(&mut command);
        let run = run_bounded(&mut command, self.home.path());
        let requests = api.requests();
        let result: Value = serde_json::from_str(run.stdout().trim()).unwrap_or_else(|e| {
            panic!(
                "gemini printed no JSON result ({e}), status {:?}\nstdout:\n{}\nstderr:\n{}",
                run.output.status,
                run.stdout(),
                run.stderr()
            )
        });
        assert!(
            run.output.status.success(),
            "gemini failed: {result}\nstderr:\n{}",
            run.stderr()
        );
        let session_id = result["session_id"]
            .as_str()
            .unwrap_or_else(|| panic!("no session_id in {result}"))
            .to_string();
        AgentRun {
            session_id,
            result,
            requests,
            run,
        }
    }
}
