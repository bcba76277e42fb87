//! Google's Antigravity CLI (`agy`, which replaced Gemini CLI's bundled
//! access on 2026-06-18; closed source, no API-key login: shapes of
//! payloads and transcripts captured from agy 1.0.x–1.1.x).
//!
//! - Hooks: camelCase payloads without prompts or answers, read by
//!   [`hooks`]: a turn's first PreInvocation starts it (and injects the
//!   briefing: agy has no SessionStart), Stop ends it; the Stop hook only
//!   records. Prompts, answers and tool calls are imported from the
//!   transcript, which agy writes after Stop; the import reconciles with
//!   what the hooks recorded (the same session, the conversation id).
//! - Settings: `.agents/hooks.json` (project), `~/.gemini/config/hooks.json`
//!   (user): named hooks, memlog's under `"memlog"`, each event a flat list
//!   of `{"type": "command", "command", "timeout"}` (seconds).
//! - Sessions: [`transcript`]s in
//!   `~/.gemini/antigravity-cli/brain/<conversation>/.system_generated/logs/transcript_full.jsonl`
//!   (`transcript.jsonl` beside it, truncated, is read only when the full
//!   one is missing); the default import keeps the conversations whose
//!   tools worked inside the repository.

pub mod hooks;
pub mod transcript;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::protocol::{HookEvent, Payload};
use crate::sessions::home;
use crate::settings::{self, HookSettings, SettingsEdit};
use crate::{Agent, Error, HookOptions, Result, SessionFile};

/// The client name memlog records in `meta.client` for Antigravity CLI.
pub const CLIENT: &str = "antigravity";

/// The name of memlog's entry among the named hooks of `hooks.json`.
const HOOK_NAME: &str = "memlog";

/// Antigravity CLI.
#[derive(Clone, Copy, Debug, Default)]
pub struct Antigravity;

/// agy's hook events memlog listens to; seconds.
const SETTINGS: HookSettings = HookSettings {
    project_file: ".agents/hooks.json",
    local_file: None,
    events: &[("PreInvocation", false), ("Stop", false)],
    agent_flag: "--agent antigravity ",
    suffix: "",
    timeout: 10,
    short_timeouts: &[],
    any_tool: "*",
    program: "",
    late_events: &[],
};

impl Agent for Antigravity {
    fn name(&self) -> &'static str {
        "antigravity"
    }

    fn client(&self) -> &'static str {
        CLIENT
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["agy", "antigravity-cli"]
    }

    fn title(&self) -> &'static str {
        "Antigravity CLI"
    }

    fn read_payload(&self, event_name: &str, bytes: &[u8]) -> Result<Payload> {
        crate::protocol::parse_translated(event_name, bytes, hooks::to_common)
    }

    /// Only the turn's start (its first PreInvocation) takes context.
    fn hook_output(&self, event: HookEvent, context: Option<&str>) -> Option<String> {
        let context = context.filter(|c| !c.trim().is_empty())?;
        (event == HookEvent::SessionStart).then(|| hooks::inject_output(context))
    }

    fn hook_settings(&self) -> &'static HookSettings {
        &SETTINGS
    }

    fn user_settings_file(&self) -> Result<PathBuf> {
        Ok(home()?.join(".gemini/config/hooks.json"))
    }

    /// memlog's named hook in the file, the others kept.
    fn edit_settings(
        &self,
        path: &Path,
        current: Option<&str>,
        exe: &Path,
        install: bool,
    ) -> Result<SettingsEdit> {
        let mut root = settings::parse_object(path, current)?;
        let removed = root
            .remove(HOOK_NAME)
            .and_then(|h| h.as_object().map(Map::len))
            .unwrap_or(0);
        if install {
            let events: Map<String, Value> = SETTINGS
                .events
                .iter()
                .map(|(event, _)| {
                    let command = settings::command_line(
                        exe,
                        &format!("hook {}{event}", SETTINGS.agent_flag),
                    );
                    (
                        event.to_string(),
                        json!([{"type": "command", "command": command, "timeout": SETTINGS.timeout}]),
                    )
                })
                .collect();
            root.insert(HOOK_NAME.into(), Value::Object(events));
        }
        Ok(SettingsEdit {
            text: settings::kept(root, current, install),
            events: if install { SETTINGS.events.len() } else { 0 },
            removed,
            left_out: Vec::new(),
            comments: crate::settings::Comments::None,
        })
    }

    fn session_noun(&self) -> &'static str {
        "transcript"
    }

    fn default_session_paths(&self, _work_tree: &Path) -> Result<Vec<PathBuf>> {
        let dir = home()?.join(".gemini/antigravity-cli/brain");
        if !dir.exists() {
            return Err(Error::NoSessions {
                what: "Antigravity CLI transcripts",
                path: dir,
                noun: self.session_noun(),
            });
        }
        Ok(vec![dir])
    }

    /// The brain folder holds every project's conversations: those whose
    /// tools worked inside the repository.
    fn ran_in(&self, session: &SessionFile, work_tree: &Path) -> bool {
        session.ran_inside(work_tree)
    }

    /// Every conversation's `transcript_full.jsonl` under the folder (its
    /// `transcript.jsonl` where there is no full one).
    fn session_files(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        let mut out = Vec::new();
        collect_transcripts(dir, &mut out)?;
        out.sort();
        Ok(out)
    }

    fn read_session(&self, file: &Path, options: &HookOptions) -> Result<SessionFile> {
        transcript::read(file, options)
    }
}

fn collect_transcripts(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let full = dir.join("transcript_full.jsonl");
    let short = dir.join("transcript.jsonl");
    if full.is_file() {
        out.push(full);
    } else if short.is_file() {
        out.push(short);
    }
    for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let path = entry.map_err(|e| Error::io(dir, e))?.path();
        if path.is_dir() {
            collect_transcripts(&path, out)?;
        }
    }
    Ok(())
}
