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
//! - Sessions: [`transcript`]s in `~/.claude/projects/<the folder the
//!   session started in, every character but letters and digits as
//!   ->/<session>.jsonl` (a name over 200 characters shortened to its first
//!   200, `-` and a hash), with their subagents' beside them. An import
//!   with no path takes the folder of the work tree and, confirmed by the
//!   `cwd` their transcripts record, those of its subdirectories and the
//!   shortened ones (`project_sessions`).

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

    fn tool_env(&self) -> &'static [&'static str] {
        &["CLAUDECODE", "CLAUDE_CODE_SESSION_ID"]
    }

    /// Claude Code 2.1 sends a background subagent's `<task-notification>`
    /// through UserPromptSubmit (field test 12a); its transcript marks it
    /// as its own the same way.
    fn is_harness_prompt(&self, prompt: &str) -> bool {
        transcript::is_harness_text(prompt)
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

    fn transcript_import(&self) -> Option<&'static str> {
        Some("claude-code")
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

    /// The folders and transcripts `project_sessions` finds.
    fn default_session_paths(&self, work_tree: &Path) -> Result<Vec<PathBuf>> {
        let projects = home()?.join(PROJECTS);
        let found = project_sessions(&projects, work_tree);
        if found.is_empty() {
            let name = escaped(work_tree);
            let looked_for = name.get(..MAX_FOLDER_NAME).unwrap_or(&name);
            return Err(Error::NoSessions {
                what: "Claude Code transcripts for this project",
                path: projects.join(format!("{looked_for}*")),
                noun: self.session_noun(),
            });
        }
        Ok(found)
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

/// Where Claude Code keeps its folder per project, under the home folder.
const PROJECTS: &str = ".claude/projects";

/// Claude Code shortens a project folder's name longer than this to its
/// first this many characters, `-` and a hash of the path (2.1.x).
const MAX_FOLDER_NAME: usize = 200;

/// Claude Code's folder for a project started at the work tree's root:
/// `~/.claude/projects/` and [`escaped`] work tree.
fn project_dir(home: &Path, work_tree: &Path) -> PathBuf {
    home.join(PROJECTS).join(escaped(work_tree))
}

/// A path as Claude Code names a folder after it: every character that is
/// not an ASCII letter or digit becomes `-`, one per UTF-16 unit, as
/// JavaScript's `replace(/[^a-zA-Z0-9]/g, "-")` counts them (a character
/// beyond U+FFFF is two), so the name's length is the one Claude Code
/// shortens at [`MAX_FOLDER_NAME`].
fn escaped(path: &Path) -> String {
    let mut out = String::new();
    for c in path.to_string_lossy().chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else {
            out.extend(std::iter::repeat_n('-', c.len_utf16()));
        }
    }
    out
}

/// The sessions of the work tree among Claude Code's `projects` folders,
/// which are named after the folder a session started in ([`escaped`]):
///
/// - the folder named for the work tree itself, whole;
/// - from the folders whose name may be a subdirectory's (the work tree's
///   name and `-`) or a shortened one's (longer than [`MAX_FOLDER_NAME`]:
///   sharing its first characters), the transcripts whose session started
///   inside the work tree ([`transcript::started_in`]). The name alone
///   cannot tell: `/tmp/a-b` and `/tmp/a/b` are both `-tmp-a-b`.
///
/// Folders in name order; none when nothing matches.
fn project_sessions(projects: &Path, work_tree: &Path) -> Vec<PathBuf> {
    let name = escaped(work_tree);
    let subdirectory = format!("{name}-");
    let shortened = name
        .get(..MAX_FOLDER_NAME)
        .filter(|_| name.len() > MAX_FOLDER_NAME);
    let mut folders: Vec<PathBuf> = std::fs::read_dir(projects)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    let mut found = Vec::new();
    for folder in folders {
        let Some(folder_name) = folder.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if folder_name == name {
            found.push(folder);
            continue;
        }
        let may_hold = folder_name.starts_with(&subdirectory)
            || shortened.is_some_and(|prefix| folder_name.starts_with(prefix));
        if !may_hold {
            continue;
        }
        found.extend(
            jsonl_files(&folder, "", false)
                .unwrap_or_default()
                .into_iter()
                .filter(|file| {
                    transcript::started_in(file).is_some_and(|cwd| cwd.starts_with(work_tree))
                }),
        );
    }
    found
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
        // one `-` per UTF-16 unit, as JavaScript counts
        assert_eq!(escaped(Path::new("/a/프로/🦀")), "-a------");
    }

    /// A transcript in `projects/<folder>` whose session started in `cwd`.
    fn transcript_in(projects: &Path, folder: &str, cwd: &Path) -> PathBuf {
        let dir = projects.join(folder);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("5f1e2d3c-0000-4000-8000-000000000001.jsonl");
        let lines = [
            serde_json::json!({"type": "queue-operation", "operation": "dequeue"}),
            serde_json::json!({"type": "user", "cwd": cwd, "message": {"role": "user", "content": "hi"}}),
        ];
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&file, text).unwrap();
        file
    }

    /// Field test 8a: a session started in a subdirectory of the work tree
    /// has a folder of its own, which the import without paths missed.
    #[test]
    fn the_default_import_takes_subdirectories_confirmed_by_cwd() {
        let home = tempfile::tempdir().unwrap();
        let projects = home.path().join(PROJECTS);
        let root = Path::new("/w/shop");
        transcript_in(&projects, "-w-shop", root);
        let api = transcript_in(
            &projects,
            "-w-shop-packages-api",
            &root.join("packages/api"),
        );
        // a sibling whose name escapes alike, and one that only starts alike
        transcript_in(&projects, "-w-shop-b", Path::new("/w/shop-b"));
        transcript_in(&projects, "-w-shopping", Path::new("/w/shopping"));
        assert_eq!(
            project_sessions(&projects, root),
            [projects.join("-w-shop"), api]
        );
        assert!(project_sessions(&projects, Path::new("/w/elsewhere")).is_empty());
    }

    /// Field test 8a: Claude Code shortens a folder name over 200
    /// characters to its first 200, `-` and a hash, which the import
    /// without paths looked for unshortened.
    #[test]
    fn the_default_import_finds_a_shortened_folder_by_cwd() {
        let home = tempfile::tempdir().unwrap();
        let projects = home.path().join(PROJECTS);
        let root = PathBuf::from(format!("/w/{}repo", "very-long-segment/".repeat(12)));
        let name = escaped(&root);
        assert!(name.len() > MAX_FOLDER_NAME);
        let short = |hash: &str| format!("{}-{hash}", &name[..MAX_FOLDER_NAME]);
        let own = transcript_in(&projects, &short("4dqqtr"), &root);
        let sub = transcript_in(&projects, &short("1x2y3z"), &root.join("src"));
        // another path with the same first 200 characters
        transcript_in(&projects, &short("9k8j7h"), &root.with_file_name("other"));
        let mut found = project_sessions(&projects, &root);
        found.sort();
        let mut expected = vec![own, sub];
        expected.sort();
        assert_eq!(found, expected);
    }
}
