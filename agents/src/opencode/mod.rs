//! OpenCode (checked against opencode-ai 1.18.33).
//!
//! - Hooks: OpenCode runs plugins, not commands: `memlog install opencode`
//!   writes a small one (`plugin.js`) that calls `memlog hook --agent
//!   opencode <Event>` with payloads of the shared protocol — SessionStart
//!   (`session.created`), UserPromptSubmit (`chat.message`), PostToolUse
//!   (`tool.execute.after`, with the call id), Stop (`session.idle`, with
//!   the agent's last text) and SessionEnd (`session.deleted`) — and adds
//!   the context memlog answers to the system prompt of the turn's model
//!   calls, and file-aware recall (PostToolUse's) to the tool's output the
//!   model reads. Its Stop hook only records.
//! - Settings: the plugin file, `.opencode/plugin/memlog.js` (project) or
//!   `$XDG_CONFIG_HOME/opencode/plugin/memlog.js` (user); removing the hooks
//!   removes it.
//! - Sessions: [`export`]s (`opencode export <session> > file.json`).
//! - Run for real (tests/tests/opencode_cli.rs): `opencode run` ends without
//!   deleting its session, so its events stay in their journal unsealed;
//!   the prompt it records is the one its model got (`run` puts an
//!   argument holding a space in quotes).

pub mod export;

use std::path::{Path, PathBuf};

use crate::protocol::{HookEvent, Payload, ToolTarget};
use crate::sessions::home;
use crate::settings::{HookSettings, HooksInFile, SettingsEdit};
use crate::{Agent, Error, HookOptions, Result, SessionFile};

/// The client name memlog records in `meta.client` for OpenCode.
pub const CLIENT: &str = "opencode";

/// OpenCode.
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenCode;

/// The plugin, `__MEMLOG__` standing for memlog's path (a JSON string).
const PLUGIN: &str = include_str!("plugin.js");

/// What marks the plugin file as memlog's.
const MARKER: &str = "memlog-opencode-plugin";

/// The events the plugin sends (for messages; the plugin is the settings).
const SETTINGS: HookSettings = HookSettings {
    project_file: ".opencode/plugin/memlog.js",
    local_file: None,
    events: &[
        ("SessionStart", false),
        ("UserPromptSubmit", false),
        ("PostToolUse", false),
        ("Stop", false),
        ("SessionEnd", false),
    ],
    agent_flag: "--agent opencode ",
    suffix: "",
    timeout: 10,
    short_timeouts: &[],
    any_tool: "",
    program: "",
    late_events: &[],
};

impl Agent for OpenCode {
    fn name(&self) -> &'static str {
        "opencode"
    }

    fn client(&self) -> &'static str {
        CLIENT
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["opencode-ai"]
    }

    fn title(&self) -> &'static str {
        "OpenCode"
    }

    fn hook_settings(&self) -> &'static HookSettings {
        &SETTINGS
    }

    /// `tool.execute.after` may change the tool's output: the plugin
    /// appends what memory knows about the file to the result the model
    /// reads (its `tool.execute.before` can only change the arguments).
    fn tool_recall_event(&self) -> Option<HookEvent> {
        Some(HookEvent::PostToolUse)
    }

    /// The `filePath` of `read`, `edit` and `write`, the file a `bash`
    /// command only prints, else the command.
    fn tool_target(&self, payload: &Payload) -> Option<ToolTarget> {
        crate::protocol::tool_target_reading_through_shell(payload)
    }

    fn user_settings_file(&self) -> Result<PathBuf> {
        let config = match std::env::var_os("XDG_CONFIG_HOME").filter(|h| !h.is_empty()) {
            Some(dir) => PathBuf::from(dir),
            None => home()?.join(".config"),
        };
        Ok(config.join("opencode/plugin/memlog.js"))
    }

    /// The plugin itself; a file of that name that is not memlog's is left
    /// alone.
    fn edit_settings(
        &self,
        path: &Path,
        current: Option<&str>,
        exe: &Path,
        install: bool,
    ) -> Result<SettingsEdit> {
        let removed = match current {
            Some(text) if !text.contains(MARKER) => {
                return Err(Error::BadSettings {
                    path: path.to_path_buf(),
                    why: "is not memlog's plugin; move it away first".into(),
                });
            }
            Some(_) => 1,
            None => 0,
        };
        let program = serde_json::Value::String(exe.display().to_string()).to_string();
        Ok(SettingsEdit {
            text: install.then(|| PLUGIN.replace("__MEMLOG__", &program)),
            events: if install { SETTINGS.events.len() } else { 0 },
            removed,
            left_out: Vec::new(),
            comments: crate::settings::Comments::None,
        })
    }

    /// The plugin's program, and whether it is this memlog's plugin: an
    /// earlier memlog's stays in place through an upgrade of the binary.
    fn hooks_in(&self, text: &str) -> Option<HooksInFile> {
        if !text.contains(MARKER) {
            return None;
        }
        let program = text
            .lines()
            .find_map(|l| l.strip_prefix("const MEMLOG = ")?.strip_suffix(';'))?;
        Some(HooksInFile {
            hooks: SETTINGS.events.len(),
            programs: vec![serde_json::from_str(program).ok()?],
            outdated: PLUGIN.replace("__MEMLOG__", program) != text,
        })
    }

    fn install_note(&self) -> Option<&'static str> {
        Some("OpenCode loads the plugin when it starts")
    }

    fn session_noun(&self) -> &'static str {
        "export"
    }

    /// OpenCode's own store is a database: sessions are imported from
    /// exports.
    fn default_session_paths(&self, work_tree: &Path) -> Result<Vec<PathBuf>> {
        Err(Error::NoSessions {
            what: "OpenCode exports (opencode export <session> > file.json)",
            path: work_tree.to_path_buf(),
            noun: self.session_noun(),
        })
    }

    /// Every `*.json` in the folder.
    fn session_files(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| Error::io(dir, e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        Ok(files)
    }

    fn read_session(&self, file: &Path, options: &HookOptions) -> Result<SessionFile> {
        export::read(file, options)
    }
}
