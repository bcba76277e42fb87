//! Google's Gemini CLI (checked against 0.61.0).
//!
//! - Hooks: its own event names and two payload shapes of its own,
//!   translated into the shared protocol by [`hooks`]; injection under its
//!   event names; its Stop hook (AfterAgent) only records. File-aware
//!   recall rides on AfterTool, appended to the tool's result (BeforeTool
//!   takes no context).
//! - Settings: `.gemini/settings.json` (project), `~/.gemini/settings.json`
//!   (user); timeouts in milliseconds, tool matchers are regular
//!   expressions, and the command ends in `2>/dev/null || true` (Gemini
//!   reads a hook that exits non-zero with stderr as a block). Gemini runs
//!   project hooks only in a trusted folder.
//! - Sessions: saved [`chat`]s in `~/.gemini/tmp/<project>/chats/session-*.jsonl`
//!   (`.json`, one object, before 0.3x), the project's folder naming its
//!   root in `.project_root`.

pub mod chat;
pub mod hooks;

use std::path::{Path, PathBuf};

use crate::protocol::{HookEvent, Payload};
use crate::sessions::{files_ending, home};
use crate::settings::HookSettings;
use crate::{Agent, Error, HookOptions, Result, SessionFile};

pub use chat::{Chat, parse_chat, read_chat};
pub use hooks::{common_event, event_name, rename_output, strip_hook_context, to_common};

/// Gemini CLI.
#[derive(Clone, Copy, Debug, Default)]
pub struct Gemini;

/// Gemini hook events memlog listens to, with whether they take a tool
/// matcher (Gemini CLI 0.61.0); milliseconds; matchers are regular
/// expressions; a failing command must not read as a block.
const SETTINGS: HookSettings = HookSettings {
    project_file: ".gemini/settings.json",
    local_file: None,
    events: &[
        ("SessionStart", false),
        ("BeforeAgent", false),
        ("AfterTool", true),
        ("AfterAgent", false),
        ("PreCompress", false),
        ("SessionEnd", false),
    ],
    agent_flag: "--agent gemini ",
    suffix: " 2>/dev/null || true",
    timeout: 10_000,
    short_timeouts: &[],
    any_tool: ".*",
    program: "",
    late_events: &[],
};

impl Agent for Gemini {
    fn project_dir_var(&self) -> Option<&'static str> {
        Some("GEMINI_PROJECT_DIR")
    }

    fn tool_env(&self) -> &'static [&'static str] {
        &["GEMINI_CLI"]
    }

    fn name(&self) -> &'static str {
        "gemini"
    }

    fn client(&self) -> &'static str {
        chat::CLIENT
    }

    fn title(&self) -> &'static str {
        "Gemini CLI"
    }

    fn read_payload(&self, event_name: &str, bytes: &[u8]) -> Result<Payload> {
        crate::protocol::parse_translated(event_name, bytes, to_common)
    }

    fn hook_output(&self, event: HookEvent, context: Option<&str>) -> Option<String> {
        let output = crate::protocol::hook_output(event, context)?;
        Some(rename_output(output, event))
    }

    /// Gemini's BeforeTool output only allows, denies or rewrites the call
    /// (0.61.0 reads no `additionalContext` there); AfterTool's
    /// `additionalContext` is appended to the tool's result the model
    /// reads, so recall about a file comes with its `read_file`.
    fn tool_recall_event(&self) -> Option<HookEvent> {
        Some(HookEvent::PostToolUse)
    }

    fn hook_settings(&self) -> &'static HookSettings {
        &SETTINGS
    }

    /// Gemini CLI reads its settings with comments: so does memlog, and it
    /// keeps them ([`crate::settings::edit_jsonc`]).
    fn edit_settings(
        &self,
        path: &Path,
        current: Option<&str>,
        exe: &Path,
        install: bool,
    ) -> Result<crate::settings::SettingsEdit> {
        crate::settings::edit_jsonc(path, current, exe, &SETTINGS, install)
    }

    fn hooks_in(&self, text: &str) -> Option<crate::settings::HooksInFile> {
        crate::settings::hooks_in_json(&crate::jsonc::without_comments(text))
    }

    fn user_settings_file(&self) -> Result<PathBuf> {
        Ok(home()?.join(".gemini/settings.json"))
    }

    fn session_noun(&self) -> &'static str {
        "chat"
    }

    /// The chat folders of Gemini CLI projects inside `work_tree`:
    /// `~/.gemini/tmp/<slug>/chats` whose `<slug>/.project_root` names a
    /// folder inside it, or (0.2x) whose `<slug>` is the SHA-256 of its
    /// path.
    fn default_session_paths(&self, work_tree: &Path) -> Result<Vec<PathBuf>> {
        let tmp = home()?.join(".gemini/tmp");
        if !tmp.exists() {
            return Err(Error::NoSessions {
                what: "Gemini CLI chats",
                path: tmp,
                noun: self.session_noun(),
            });
        }
        // Before `.project_root` (0.2x), a project's folder was named by the
        // SHA-256 of its root.
        let hashed = crate::sha256::hex(work_tree.display().to_string().as_bytes());
        let mut dirs = Vec::new();
        for entry in std::fs::read_dir(&tmp).map_err(|e| Error::io(&tmp, e))? {
            let project = entry.map_err(|e| Error::io(&tmp, e))?.path();
            let ours = match std::fs::read_to_string(project.join(".project_root")) {
                Ok(root) => Path::new(root.trim()).starts_with(work_tree),
                Err(_) => project.file_name().is_some_and(|n| *n == *hashed),
            };
            if ours && project.join("chats").is_dir() {
                dirs.push(project.join("chats"));
            }
        }
        dirs.sort();
        Ok(dirs)
    }

    /// Every `session-*.jsonl` (and older `session-*.json`) under the
    /// folder.
    fn session_files(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        files_ending(dir, "session-", &[".jsonl", ".json"], true)
    }

    fn read_session(&self, file: &Path, options: &HookOptions) -> Result<SessionFile> {
        let chat = read_chat(file, options)?;
        Ok(SessionFile {
            session_id: chat.session_id,
            cwd: None,
            drafts: SessionFile::numbered(chat.drafts),
            malformed: chat.malformed,
            skipped: None,
        })
    }
}
