//! OpenAI's Codex CLI (checked against 0.60.1, 0.104.0, 0.149.0 and
//! 0.169.0; hooks since 0.11x, checked against 0.169.0).
//!
//! - Hooks: the shared protocol (the same event names, payload fields and
//!   injection output as Claude Code's), completed from the rollout the
//!   payload names ([`hooks`]): a command's real exit code, an edit's files
//!   and changes, and at Stop the edits made through the shell and the
//!   `update_plan` calls, which no PostToolUse reports. Its Stop hook only records. PreToolUse carries
//!   file-aware recall (a file read through the shell, or patched, is
//!   that file: [`hooks::tool_target`]). A subagent's hooks
//!   name its parent's session and its own `agent_id`; its answer comes
//!   with SubagentStop. The version is the
//!   `cli_version` of the session file's first line (`session_meta`).
//! - Settings: `.codex/hooks.json` (project), `$CODEX_HOME/hooks.json`,
//!   else `~/.codex/hooks.json` (user); timeouts in seconds (SessionEnd's
//!   3, the most Codex allows it), tool matcher `*`. Codex runs a new or
//!   changed hook only once the user trusts it, and a project's only in a
//!   trusted project ([`trust`]).
//! - Sessions: [`rollout`]s in `$CODEX_HOME/sessions` (else
//!   `~/.codex/sessions`), `YYYY/MM/DD/rollout-<time>-<id>.jsonl`, every
//!   format since 0.60; a subagent's is read into its parent's session. The
//!   default import keeps those that ran inside the repository.

pub mod hooks;
pub mod patch;
pub mod rollout;
pub mod trust;

use std::path::{Path, PathBuf};

use crate::protocol::{HookEvent, Payload, ToolTarget};
use crate::sessions::{home, jsonl_files, markdown_files};
use crate::settings::HookSettings;
use crate::{Agent, Error, HookOptions, HookTrust, Result, SessionFile};

pub use rollout::{Rollout, Subagent, parse, read, session_meta};

/// Codex CLI.
#[derive(Clone, Copy, Debug, Default)]
pub struct Codex;

/// Codex hook events memlog listens to, with whether they take a tool
/// matcher (Codex CLI 0.169.0); seconds, like Claude Code. Codex clamps
/// SessionEnd to 3 s (and warns on every run when asked for more): sealing
/// a session fits it.
const SETTINGS: HookSettings = HookSettings {
    project_file: ".codex/hooks.json",
    local_file: None,
    events: &[
        ("SessionStart", false),
        ("UserPromptSubmit", false),
        ("PreToolUse", true),
        ("PostToolUse", true),
        ("Stop", false),
        ("SubagentStop", false),
        ("PreCompact", false),
        ("SessionEnd", false),
    ],
    agent_flag: "--agent codex ",
    suffix: "",
    timeout: 10,
    short_timeouts: &[("SessionEnd", 3)],
    any_tool: "*",
    program: "",
    late_events: &[],
};

/// Where Codex keeps its files: `$CODEX_HOME`, else `~/.codex`.
fn codex_home() -> Result<PathBuf> {
    if let Some(home) = std::env::var_os("CODEX_HOME").filter(|h| !h.is_empty()) {
        return Ok(PathBuf::from(home));
    }
    Ok(home()?.join(".codex"))
}

impl Agent for Codex {
    fn tool_env(&self) -> &'static [&'static str] {
        &["CODEX_THREAD_ID", "CODEX_SESSION_ID"]
    }

    fn name(&self) -> &'static str {
        "codex"
    }

    fn client(&self) -> &'static str {
        rollout::CLIENT
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["codex-cli"]
    }

    fn title(&self) -> &'static str {
        "Codex CLI"
    }

    /// The payload, completed from the rollout (see [`hooks`]).
    fn read_payload(&self, event_name: &str, bytes: &[u8]) -> Result<Payload> {
        let mut raw: serde_json::Value = serde_json::from_slice(bytes)
            .map_err(|e| Error::malformed_payload(event_name, bytes.len(), &e))?;
        if raw.is_object() {
            if raw.get("hook_event_name").is_none() {
                raw["hook_event_name"] = serde_json::Value::String(event_name.to_string());
            }
            hooks::complete_post_tool_use(&mut raw);
        }
        Ok(Payload::from_value(event_name, raw))
    }

    /// The turn's edits made through the shell.
    fn unreported_calls(&self, payload: &Payload) -> Vec<(String, Payload)> {
        hooks::unreported_calls(payload)
    }

    /// What the agent said between its calls, read from the rollout.
    fn earlier_texts(&self, payload: &Payload) -> Vec<(Option<String>, String)> {
        hooks::earlier_texts(payload)
    }

    /// Files read through the shell and patched (see [`hooks::tool_target`]).
    fn tool_target(&self, payload: &Payload) -> Option<ToolTarget> {
        hooks::tool_target(payload)
    }

    /// Codex 0.169.0 adds a PreToolUse hook's
    /// `hookSpecificOutput.additionalContext` to what the model reads (its
    /// hook output schema; SessionStart's and UserPromptSubmit's the same).
    fn tool_recall_event(&self) -> Option<HookEvent> {
        Some(HookEvent::PreToolUse)
    }

    /// The session file starts with its `session_meta` (`cli_version`).
    fn version(&self, payload: &Payload) -> Option<String> {
        use std::io::{BufRead, Read};
        /// The first line holds Codex's base instructions: tens of KB.
        const MAX_FIRST_LINE: u64 = 1 << 20;
        let file = std::fs::File::open(payload.transcript_path.as_ref()?).ok()?;
        let mut line = String::new();
        std::io::BufReader::new(file.take(MAX_FIRST_LINE))
            .read_line(&mut line)
            .ok()?;
        let meta = session_meta(&line)?;
        meta.get("cli_version")?.as_str().map(str::to_string)
    }

    fn hook_settings(&self) -> &'static HookSettings {
        &SETTINGS
    }

    fn user_settings_file(&self) -> Result<PathBuf> {
        Ok(codex_home()?.join("hooks.json"))
    }

    fn install_note(&self) -> Option<&'static str> {
        Some(
            "Codex runs them only once you trust them: open Codex in the project and trust them in /hooks",
        )
    }

    fn hook_trust(&self, settings_file: &Path, work_tree: Option<&Path>) -> Option<HookTrust> {
        trust::hook_trust(
            settings_file,
            work_tree,
            &trust::config_file(&codex_home().ok()?),
        )
    }

    fn session_noun(&self) -> &'static str {
        "session"
    }

    fn default_session_paths(&self, _work_tree: &Path) -> Result<Vec<PathBuf>> {
        let dir = codex_home()?.join("sessions");
        if !dir.exists() {
            return Err(Error::NoSessions {
                what: "Codex sessions",
                path: dir,
                noun: self.session_noun(),
            });
        }
        Ok(vec![dir])
    }

    /// The default folder holds every project's sessions: those whose
    /// `cwd` is inside the repository.
    fn ran_in(&self, session: &SessionFile, work_tree: &Path) -> bool {
        session
            .cwd
            .as_deref()
            .is_some_and(|cwd| Path::new(cwd).starts_with(work_tree))
    }

    /// `AGENTS.md` at the root of the work tree, and Codex's memories
    /// (`$CODEX_HOME/memories`).
    fn memory_files(&self, work_tree: &Path) -> Vec<PathBuf> {
        let mut files = vec![work_tree.join("AGENTS.md")];
        for dir in self.own_memory_dirs(work_tree) {
            files.extend(markdown_files(&dir));
        }
        files
    }

    /// `$CODEX_HOME/memories`.
    fn own_memory_dirs(&self, work_tree: &Path) -> Vec<PathBuf> {
        let _ = work_tree;
        codex_home()
            .map(|home| vec![home.join("memories")])
            .unwrap_or_default()
    }

    /// Every `rollout-*.jsonl` under the folder.
    fn session_files(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        jsonl_files(dir, "rollout-", true)
    }

    fn read_session(&self, file: &Path, options: &HookOptions) -> Result<SessionFile> {
        let rollout = read(file, options)?;
        Ok(SessionFile {
            session_id: rollout.session_id,
            cwd: rollout.cwd,
            drafts: SessionFile::numbered(rollout.drafts),
            malformed: rollout.malformed,
            skipped: None,
        })
    }
}
