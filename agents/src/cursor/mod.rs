//! Cursor's agent (the IDE's and the `agent` CLI's; shapes of Cursor's
//! hooks reference and of captured 2026 payloads and transcripts).
//!
//! - Hooks: its own camelCase events and payloads, translated into the
//!   shared protocol by [`hooks`]; context is injected at sessionStart
//!   (`additional_context`) only: Cursor takes none with a prompt. The
//!   answer comes with `afterAgentResponse`, which only records.
//! - Settings: `.cursor/hooks.json` (project), `~/.cursor/hooks.json`
//!   (user): `{"version": 1, "hooks": {"<event>": [{"command"}]}}`.
//! - Sessions: [`transcript`]s in
//!   `~/.cursor/projects/<project path, every character but letters and
//!   digits as ->/agent-transcripts/`.

pub mod hooks;
pub mod transcript;

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::protocol::{HookEvent, Payload};
use crate::sessions::{home, jsonl_files};
use crate::settings::{self, HookSettings, SettingsEdit};
use crate::{Agent, Error, HookOptions, Result, SessionFile};

/// The client name memlog records in `meta.client` for Cursor.
pub const CLIENT: &str = "cursor";

/// Cursor.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cursor;

/// Cursor hook events memlog listens to.
const SETTINGS: HookSettings = HookSettings {
    project_file: ".cursor/hooks.json",
    local_file: None,
    events: &[
        ("sessionStart", false),
        ("beforeSubmitPrompt", false),
        ("postToolUse", false),
        ("postToolUseFailure", false),
        ("afterAgentResponse", false),
        ("sessionEnd", false),
    ],
    agent_flag: "--agent cursor ",
    suffix: "",
    timeout: 10,
    short_timeouts: &[],
    any_tool: "",
    program: "",
    late_events: &[],
};

impl Agent for Cursor {
    fn name(&self) -> &'static str {
        "cursor"
    }

    fn client(&self) -> &'static str {
        CLIENT
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["cursor-agent"]
    }

    fn title(&self) -> &'static str {
        "Cursor"
    }

    fn read_payload(&self, event_name: &str, bytes: &[u8]) -> Result<Payload> {
        crate::protocol::parse_translated(event_name, bytes, hooks::to_common)
    }

    fn takes_context(&self, event: HookEvent) -> bool {
        event == HookEvent::SessionStart
    }

    fn hook_output(&self, event: HookEvent, context: Option<&str>) -> Option<String> {
        let context = context.filter(|c| !c.trim().is_empty())?;
        self.takes_context(event)
            .then(|| hooks::session_start_output(context))
    }

    fn hook_settings(&self) -> &'static HookSettings {
        &SETTINGS
    }

    fn user_settings_file(&self) -> Result<PathBuf> {
        Ok(home()?.join(".cursor/hooks.json"))
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
            |command, _| json!({ "command": command }),
        )
    }

    fn session_noun(&self) -> &'static str {
        "transcript"
    }

    fn default_session_paths(&self, work_tree: &Path) -> Result<Vec<PathBuf>> {
        let dir = project_dir(&home()?, work_tree).join("agent-transcripts");
        if !dir.exists() {
            return Err(Error::NoSessions {
                what: "Cursor transcripts for this project",
                path: dir,
                noun: self.session_noun(),
            });
        }
        Ok(vec![dir])
    }

    /// Every `*.jsonl` under the folder (the IDE keeps each in its own).
    fn session_files(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        jsonl_files(dir, "", true)
    }

    fn read_session(&self, file: &Path, options: &HookOptions) -> Result<SessionFile> {
        transcript::read(file, options)
    }
}

/// Cursor's folder for a project: `~/.cursor/projects/` and the project's
/// path without its leading `/`, every character that is not a letter or
/// digit replaced by `-`.
fn project_dir(home: &Path, work_tree: &Path) -> PathBuf {
    let path = work_tree.to_string_lossy();
    let escaped: String = path
        .trim_start_matches('/')
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    home.join(".cursor/projects").join(escaped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_folders_escape_the_path() {
        assert_eq!(
            project_dir(Path::new("/h"), Path::new("/work/my repo.x")),
            Path::new("/h/.cursor/projects/work-my-repo-x")
        );
    }
}
