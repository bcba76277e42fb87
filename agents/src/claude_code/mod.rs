//! Anthropic's Claude Code (checked against 2.1.328): the agent whose hook
//! protocol the others share ([`crate::protocol`]).
//!
//! - Hooks: the shared protocol as is; a Stop hook may keep the agent
//!   going (`{"decision":"block","reason"}`), and a Stop payload without
//!   `last_assistant_message` (older versions) is answered from the
//!   transcript's end ([`transcript::last_assistant_text`]).
//! - Settings: `.claude/settings.json` (project), `.claude/settings.local.json`
//!   (local, not committed), `~/.claude/settings.json` (user); timeouts in
//!   seconds, tool matcher `*`.
//! - Sessions: [`transcript`]s in `~/.claude/projects/<project path with
//!   every character but letters and digits as ->/<session>.jsonl`, with
//!   their subagents' beside them.

pub mod compaction;
pub mod transcript;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use memlog_format::Draft;

use self::transcript::SidechainScope;
use crate::protocol::{HookEvent, Payload};
use crate::sessions::{home, jsonl_files, markdown_files};
use crate::settings::HookSettings;
use crate::{Agent, Error, HookOptions, Result, SessionFile, StopContract};

pub use transcript::{CLIENT, UNKNOWN_SESSION};

/// Claude Code.
#[derive(Clone, Copy, Debug, Default)]
pub struct ClaudeCode;

/// Hook events memlog listens to, with whether they take a tool matcher.
/// Seconds Claude Code waits for a hook before killing it: memlog keeps to
/// its own budget far below this.
const SETTINGS: HookSettings = HookSettings {
    project_file: ".claude/settings.json",
    local_file: Some(".claude/settings.local.json"),
    events: &[
        ("SessionStart", false),
        ("UserPromptSubmit", false),
        // file-aware recall before Read, Edit, Write and Bash
        ("PreToolUse", true),
        ("PostToolUse", true),
        ("PostToolUseFailure", true),
        ("Stop", false),
        ("SubagentStop", false),
        ("PreCompact", false),
        ("SessionEnd", false),
    ],
    agent_flag: "",
    suffix: "",
    timeout: 10,
    short_timeouts: &[],
    any_tool: "*",
    program: "claude",
    // Claude Code before it rejects the whole settings file
    late_events: &[("PostToolUseFailure", "2.0.56")],
};

impl Agent for ClaudeCode {
    fn project_dir_var(&self) -> Option<&'static str> {
        Some("CLAUDE_PROJECT_DIR")
    }

    fn name(&self) -> &'static str {
        "claude"
    }

    fn client(&self) -> &'static str {
        CLIENT
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["claudecode"]
    }

    fn title(&self) -> &'static str {
        "Claude Code"
    }

    fn answer_from_files(&self, payload: &Payload) -> Option<String> {
        let (path, scope) = turn_source(payload)?;
        transcript::last_assistant_text(path, scope)
    }

    fn earlier_texts(&self, payload: &Payload) -> Vec<(Option<String>, String)> {
        let Some((path, scope)) = turn_source(payload) else {
            return Vec::new();
        };
        let answer = payload
            .last_assistant_message
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty());
        let mut texts = transcript::turn_texts(path, scope);
        // Claude Code writes the transcript behind the agent: a resumed
        // session's Stop hook ran before the turn's lines were in the file
        // (and recorded no text said between the calls). The payload's
        // answer in the file says the turn is there; it is waited for a
        // moment.
        if let Some(answer) = answer {
            let started = std::time::Instant::now();
            while !texts.last().is_some_and(|t| is_answer(&t.text, answer))
                && started.elapsed() < TRANSCRIPT_LAG
            {
                std::thread::sleep(std::time::Duration::from_millis(20));
                texts = transcript::turn_texts(path, scope);
            }
        }
        // The answer is recorded as the payload gives it; without one, the
        // file's last text is the answer.
        match answer {
            Some(answer) => texts.retain(|t| !is_answer(&t.text, answer)),
            None => {
                texts.pop();
            }
        }
        texts.into_iter().map(|t| (t.ts, t.text)).collect()
    }

    /// GitHub Copilot CLI (1.0.102) runs the hooks of Claude Code's
    /// settings too, with `COPILOT_CLI=1` in their environment.
    fn hooks_run_by(&self) -> Option<&'static dyn Agent> {
        std::env::var_os("COPILOT_CLI")
            .is_some_and(|v| v == "1")
            .then_some(&crate::copilot::Copilot as &'static dyn Agent)
    }

    fn stop_contract(&self) -> StopContract {
        StopContract::Block
    }

    fn hook_settings(&self) -> &'static HookSettings {
        &SETTINGS
    }

    fn user_settings_file(&self) -> Result<PathBuf> {
        Ok(home()?.join(".claude/settings.json"))
    }

    fn session_noun(&self) -> &'static str {
        "transcript"
    }

    fn default_session_paths(&self, work_tree: &Path) -> Result<Vec<PathBuf>> {
        let home = home()?;
        let dir = project_dir(&home, work_tree);
        if !dir.exists() {
            return Err(Error::NoSessions {
                what: "Claude Code transcripts for this project",
                path: dir,
                noun: self.session_noun(),
            });
        }
        Ok(vec![dir])
    }

    /// Claude Code adds a PreToolUse hook's `additionalContext` to the
    /// conversation (verified in its 2.x binary).
    fn tool_recall_event(&self) -> Option<HookEvent> {
        Some(HookEvent::PreToolUse)
    }

    /// `CLAUDE.md` at the root of the work tree, and Claude Code's auto
    /// memory of the project (`MEMORY.md` and the notes beside it).
    fn memory_files(&self, work_tree: &Path) -> Vec<PathBuf> {
        let mut files = vec![work_tree.join("CLAUDE.md")];
        for dir in self.own_memory_dirs(work_tree) {
            files.extend(markdown_files(&dir));
        }
        files
    }

    /// `~/.claude/projects/<work tree, slugged>/memory`.
    fn own_memory_dirs(&self, work_tree: &Path) -> Vec<PathBuf> {
        home()
            .map(|home| vec![project_dir(&home, work_tree).join("memory")])
            .unwrap_or_default()
    }

    /// The folder's `*.jsonl` (not its sub-folders: subagents are read
    /// with their session).
    fn session_files(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        jsonl_files(dir, "", false)
    }

    fn read_session(&self, file: &Path, options: &HookOptions) -> Result<SessionFile> {
        let t = transcript::read_with_subagents(file, options)?;
        let mut positions = HashMap::new();
        let drafts = t
            .drafts
            .into_iter()
            .map(|(_, d)| (transcript_seq(&d, &mut positions), d))
            .collect();
        Ok(SessionFile {
            session_id: t.session_id,
            cwd: None,
            drafts,
            malformed: t.malformed,
            skipped: Some(t.skipped),
        })
    }
}

/// How long a Stop hook waits for Claude Code to write the turn it ends.
const TRANSCRIPT_LAG: std::time::Duration = std::time::Duration::from_millis(1500);

/// Whether a text of the transcript is the payload's answer (the file may
/// join a message's text blocks differently).
fn is_answer(text: &str, answer: &str) -> bool {
    let text = text.trim();
    text == answer || {
        let head = |s: &str| s.chars().take(200).collect::<String>();
        !text.is_empty() && head(text) == head(answer)
    }
}

/// Claude Code's folder for a project: `~/.claude/projects/` and the
/// project's path with every character that is not a letter or digit
/// replaced by `-`.
fn project_dir(home: &Path, work_tree: &Path) -> PathBuf {
    let escaped: String = work_tree
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    home.join(".claude/projects").join(escaped)
}

/// `seq` of a transcript draft: its position in its stream (the main
/// transcript, or one subagent's file), subagent streams placed apart by a
/// hash of their agent id, so each stream can grow without renumbering the
/// others.
fn transcript_seq(draft: &Draft, positions: &mut HashMap<String, u64>) -> u64 {
    let stream = draft
        .meta
        .get("agent_id")
        .and_then(|v| v.as_str())
        .unwrap_or("")
        .to_string();
    let position = positions.entry(stream.clone()).or_insert(0);
    let seq = *position;
    *position += 1;
    if stream.is_empty() {
        return seq;
    }
    // FNV-1a: stable across versions and platforms
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in stream.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
    }
    (((h % (1 << 20)) + 1) << 32) | seq
}

/// The transcript a Stop or SubagentStop payload's turn is in, and which
/// of its lines: the main conversation for Stop; for SubagentStop the
/// subagent's own `agent_transcript_path`, else the sidechain lines of
/// `transcript_path`.
fn turn_source(payload: &Payload) -> Option<(&std::path::Path, SidechainScope)> {
    match (payload.event, &payload.agent_transcript_path) {
        (Some(HookEvent::SubagentStop), Some(own)) => Some((own, SidechainScope::Any)),
        (Some(HookEvent::SubagentStop), None) => payload
            .transcript_path
            .as_deref()
            .map(|p| (p, SidechainScope::SidechainOnly)),
        _ => payload
            .transcript_path
            .as_deref()
            .map(|p| (p, SidechainScope::MainOnly)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Scope;

    #[test]
    fn settings_files_by_scope() {
        let root = Path::new("/repo");
        let at = |scope| ClaudeCode.settings_file(scope, Some(root)).unwrap();
        assert_eq!(at(Scope::Project), Path::new("/repo/.claude/settings.json"));
        assert_eq!(
            at(Scope::Local),
            Path::new("/repo/.claude/settings.local.json")
        );
    }

    #[test]
    fn project_folders_escape_the_path() {
        assert_eq!(
            project_dir(Path::new("/h"), Path::new("/work/my repo.x")),
            Path::new("/h/.claude/projects/-work-my-repo-x")
        );
    }
}
