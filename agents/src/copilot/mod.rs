//! GitHub Copilot CLI (checked against 1.0.102, with payloads it sent).
//!
//! - Hooks: its own camelCase events and payloads, translated into the
//!   shared protocol by [`hooks`]; context is injected at `sessionStart`
//!   and `userPromptSubmitted` as `{"additionalContext": …}`, and
//!   file-aware recall at `preToolUse` the same way (the model reads it
//!   with the call; a file `bash` only prints counts as read); its Stop hook
//!   (`agentStop`) may keep the agent going (`{"decision":"block",
//!   "reason"}`), and its answer is read from the session's
//!   `events.jsonl`. Its tool payloads carry no call id.
//! - Settings: `.github/hooks/memlog.json` in the project (`{"version": 1,
//!   "hooks": {"<event>": [{"type": "command", "bash", "timeoutSec"}]}}`);
//!   Copilot loads a folder's hooks once the user trusts the folder. It
//!   also runs the hooks of Claude Code's settings (`COPILOT_CLI=1` in their
//!   environment), which step aside where these are installed
//!   ([`Agent::hooks_run_by`]).
//! - Sessions: [`events`] files in `$COPILOT_HOME/session-state/<id>/events.jsonl`
//!   (else `~/.copilot/…`); the default import keeps those that ran inside
//!   the repository.

pub mod events;
pub mod hooks;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::protocol::{HookEvent, Payload, ToolTarget};
use crate::sessions::home;
use crate::settings::{self, HookSettings, SettingsEdit};
use crate::{Agent, Error, HookOptions, Result, SessionFile, StopContract};

/// The client name memlog records in `meta.client` for Copilot CLI.
pub const CLIENT: &str = "copilot-cli";

/// GitHub Copilot CLI.
#[derive(Clone, Copy, Debug, Default)]
pub struct Copilot;

/// Copilot CLI's hook events memlog listens to (camelCase: their payloads
/// name the tools as its session files do); seconds.
const SETTINGS: HookSettings = HookSettings {
    project_file: ".github/hooks/memlog.json",
    local_file: None,
    events: &[
        ("sessionStart", false),
        ("userPromptSubmitted", false),
        ("preToolUse", false),
        ("postToolUse", false),
        ("postToolUseFailure", false),
        ("agentStop", false),
        ("preCompact", false),
        ("sessionEnd", false),
    ],
    agent_flag: "--agent copilot ",
    suffix: "",
    timeout: 10,
    short_timeouts: &[],
    any_tool: "",
    program: "",
    late_events: &[],
};

/// Where Copilot CLI keeps its files: `$COPILOT_HOME`, else `~/.copilot`.
fn copilot_home() -> Result<PathBuf> {
    if let Some(home) = std::env::var_os("COPILOT_HOME").filter(|h| !h.is_empty()) {
        return Ok(PathBuf::from(home));
    }
    Ok(home()?.join(".copilot"))
}

impl Agent for Copilot {
    fn name(&self) -> &'static str {
        "copilot"
    }

    fn client(&self) -> &'static str {
        CLIENT
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["github-copilot", "copilot-cli"]
    }

    fn title(&self) -> &'static str {
        "GitHub Copilot CLI"
    }

    fn read_payload(&self, event_name: &str, bytes: &[u8]) -> Result<Payload> {
        crate::protocol::parse_translated(event_name, bytes, hooks::to_common)
    }

    fn hook_output(&self, event: HookEvent, context: Option<&str>) -> Option<String> {
        let context = context.filter(|c| !c.trim().is_empty())?;
        (event.injects_context() || event == HookEvent::PreToolUse)
            .then(|| json!({ "additionalContext": context }).to_string())
    }

    /// Copilot CLI 1.0.102 hands a `preToolUse` hook's `additionalContext`
    /// to the model with the call (seen with the real CLI), although its
    /// documentation names only a permission decision there.
    fn tool_recall_event(&self) -> Option<HookEvent> {
        Some(HookEvent::PreToolUse)
    }

    /// The file of `view`, `edit` and `create` (`path`), the file a `bash`
    /// command only prints (`cat notes.txt`), else the command.
    fn tool_target(&self, payload: &Payload) -> Option<ToolTarget> {
        crate::protocol::tool_target_reading_through_shell(payload)
    }

    /// The last thing the agent said in the session's `events.jsonl`,
    /// once Copilot has written it up to this hook's start.
    fn answer_from_files(&self, payload: &Payload) -> Option<String> {
        let stop = payload.raw.get("timestamp").and_then(Value::as_u64);
        events::last_answer(payload.transcript_path.as_deref()?, stop)
    }

    /// What the agent said before its answer in this turn, from the
    /// session's `events.jsonl` (hooks give the answer alone).
    fn earlier_texts(&self, payload: &Payload) -> Vec<(Option<String>, String)> {
        let stop = payload.raw.get("timestamp").and_then(Value::as_u64);
        let Some(path) = payload.transcript_path.as_deref() else {
            return Vec::new();
        };
        let mut texts = events::turn_texts(path, stop);
        // the answer itself is recorded as the answer
        texts.pop();
        texts
    }

    fn stop_contract(&self) -> StopContract {
        StopContract::Block
    }

    /// `COPILOT_CLI_BINARY_VERSION`, which Copilot sets for its hooks, else
    /// `session.start.copilotVersion` of the session's `events.jsonl` (a
    /// file Copilot writes in batches: often absent while a quick session's
    /// hooks run).
    fn version(&self, payload: &Payload) -> Option<String> {
        if let Some(v) = std::env::var("COPILOT_CLI_BINARY_VERSION")
            .ok()
            .filter(|v| !v.trim().is_empty())
        {
            return Some(v.trim().to_string());
        }
        let file = match &payload.transcript_path {
            Some(path) => path.clone(),
            None => copilot_home()
                .ok()?
                .join("session-state")
                .join(payload.session_id.as_deref()?)
                .join("events.jsonl"),
        };
        events::version(&file)
    }

    fn hook_settings(&self) -> &'static HookSettings {
        &SETTINGS
    }

    /// Copilot CLI reads hooks from the folder it runs in.
    fn user_settings_file(&self) -> Result<PathBuf> {
        Err(Error::NoScope {
            agent: self.title(),
            scope: "user",
        })
    }

    /// memlog's entries in the file's `hooks`, `version` 1.
    fn edit_settings(
        &self,
        path: &Path,
        current: Option<&str>,
        exe: &Path,
        install: bool,
    ) -> Result<SettingsEdit> {
        settings::edit_flat(
            path,
            current,
            exe,
            &SETTINGS,
            install,
            |command, settings| json!({"type": "command", "bash": command, "timeoutSec": settings.timeout}),
        )
    }

    fn install_note(&self) -> Option<&'static str> {
        Some("Copilot CLI runs them in a folder you trust")
    }

    fn session_noun(&self) -> &'static str {
        "session"
    }

    fn default_session_paths(&self, _work_tree: &Path) -> Result<Vec<PathBuf>> {
        let dir = copilot_home()?.join("session-state");
        if !dir.exists() {
            return Err(Error::NoSessions {
                what: "Copilot CLI sessions",
                path: dir,
                noun: self.session_noun(),
            });
        }
        Ok(vec![dir])
    }

    /// The default folder holds every project's sessions: those whose
    /// `cwd` is inside the repository.
    fn ran_in(&self, session: &SessionFile, work_tree: &Path) -> bool {
        session.ran_inside(work_tree)
    }

    /// Every `<session>/events.jsonl` in the folder.
    fn session_files(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| Error::io(dir, e))?
            .filter_map(|e| e.ok().map(|e| e.path().join("events.jsonl")))
            .filter(|p| p.is_file())
            .collect();
        if dir.join("events.jsonl").is_file() {
            files.push(dir.join("events.jsonl"));
        }
        files.sort();
        Ok(files)
    }

    fn read_session(&self, file: &Path, options: &HookOptions) -> Result<SessionFile> {
        events::read(file, options)
    }
}
