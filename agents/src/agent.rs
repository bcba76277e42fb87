//! The one interface every coding agent implements, in its own folder.
//!
//! memlog asks an agent seven things: how to read its hook payloads
//! ([`Agent::read_payload`], then [`crate::drafts`] maps the shared
//! protocol to drafts), how to answer its hooks with context
//! ([`Agent::hook_output`]), what its Stop hook may answer
//! ([`Agent::stop_contract`]), its version ([`Agent::version`]), what
//! `memlog install <agent>` writes ([`Agent::hook_settings`],
//! [`Agent::settings_file`]), where its sessions live
//! ([`Agent::default_session_paths`], [`Agent::session_files`]) and how
//! to read one ([`Agent::read_session`]). The defaults are the shared hook
//! protocol ([`crate::protocol`]), which Claude Code defined and Codex CLI
//! speaks as is; an agent with its own shapes (Gemini CLI) translates them
//! into it.
//!
//! Operations (memlog-ops) and front-ends never name an agent: they find
//! one in [`crate::AGENTS`] by name ([`crate::agent_named`]) and ask it.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::protocol::{self, HookEvent, Payload, ToolTarget};
use crate::settings::{self, HookSettings, SettingsEdit};
use crate::{HookOptions, Result, SessionFile};

/// A coding agent memlog captures: what it sends and writes, and how memlog
/// is connected to it. Implemented by a unit struct per agent folder
/// (`claude_code/`, `codex/`, `gemini/`) and listed in [`crate::AGENTS`].
pub trait Agent: Sync {
    /// The short name the command line takes (`memlog hook --agent NAME`,
    /// `memlog install NAME`): `claude`, `codex`, `gemini`.
    fn name(&self) -> &'static str;

    /// The name recorded in `meta.client` and accepted by filters.
    fn client(&self) -> &'static str;

    /// Further names filters accept for it (any case).
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }

    /// The agent's name for people: `Claude Code`, `Codex CLI`.
    fn title(&self) -> &'static str;

    /// The session payloads without a `session_id` are recorded in.
    fn unknown_session(&self) -> String {
        format!("{}-unknown", self.client())
    }

    /// Reads a hook payload for the event it was installed for
    /// (`event_name`, the agent's own name for it) as the shared protocol's
    /// [`Payload`].
    fn read_payload(&self, event_name: &str, bytes: &[u8]) -> Result<Payload> {
        protocol::parse_payload(event_name, bytes)
    }

    /// What the hook prints to inject `context` at `event`, in this
    /// agent's form; `None` when the event takes no context.
    fn hook_output(&self, event: HookEvent, context: Option<&str>) -> Option<String> {
        protocol::hook_output(event, context)
    }

    /// Whether the agent reads context from this hook's output: by default
    /// at SessionStart and UserPromptSubmit ([`HookEvent::injects_context`]).
    /// memlog assembles context (and records what it cited) only for these.
    fn takes_context(&self, event: HookEvent) -> bool {
        event.injects_context()
    }

    /// The answer of a Stop or SubagentStop payload that does not carry
    /// it, read from the agent's own files; `None` when it cannot be.
    fn answer_from_files(&self, payload: &Payload) -> Option<String> {
        let _ = payload;
        None
    }

    /// What the agent wrote earlier in the turn a Stop or SubagentStop
    /// payload ends, before its answer (what it said between tool calls),
    /// read from its own files: each text with its time (memlog form),
    /// in order. Hooks give the turn's last answer only.
    fn earlier_texts(&self, payload: &Payload) -> Vec<(Option<String>, String)> {
        let _ = payload;
        Vec::new()
    }

    /// Tool calls of the turn a Stop payload ends that the agent ran
    /// without a PostToolUse hook, read from its own files: each as the
    /// PostToolUse payload it would have sent, with the call's time
    /// (memlog form). Codex CLI's edits through the shell are such calls.
    fn unreported_calls(&self, payload: &Payload) -> Vec<(String, Payload)> {
        let _ = payload;
        Vec::new()
    }

    /// The environment variable in which the agent gives its hooks the
    /// folder it was started in (the project), if it does: the repository
    /// of that folder keeps the whole session, wherever the agent's shell
    /// `cd`s since (a submodule, a nested clone), which moves the
    /// payload's `cwd` with it.
    fn project_dir_var(&self) -> Option<&'static str> {
        None
    }

    /// The agent running this agent's hooks now, when it is another one
    /// that reads this agent's settings file too: once memlog's own hooks
    /// for that agent are installed, they record its session, and these
    /// would record (and inject into) it a second time under this agent's
    /// name.
    fn hooks_run_by(&self) -> Option<&'static dyn Agent> {
        None
    }

    /// The `memlog import` subcommand that reads the file a payload's
    /// `transcript_path` names, for a session end that brings back what a
    /// killed or timed-out Stop hook never recorded; `None` when the
    /// agent's transcript is not such a file.
    fn transcript_import(&self) -> Option<&'static str> {
        None
    }

    /// Whether a UserPromptSubmit's prompt is the agent's own message, not
    /// the user's (Claude Code's `<task-notification>` when a background
    /// subagent ends): not recorded as a prompt.
    fn is_harness_prompt(&self, prompt: &str) -> bool {
        let _ = prompt;
        false
    }

    /// Environment variables the agent sets in the commands its tools run
    /// (seen with the real CLIs): a memlog command that finds one runs
    /// within the agent's turn.
    fn tool_env(&self) -> &'static [&'static str] {
        &[]
    }

    /// What the agent's Stop hook may answer.
    fn stop_contract(&self) -> StopContract {
        StopContract::RecordOnly
    }

    /// The agent's version, where its payload leads to it.
    fn version(&self, payload: &Payload) -> Option<String> {
        let _ = payload;
        None
    }

    /// The hook commands `memlog install <agent>` writes, and in what form.
    fn hook_settings(&self) -> &'static HookSettings;

    /// What `memlog install <agent>` makes of the settings file `path`,
    /// whose text is `current` (`None`: no file yet), to run memlog's hooks
    /// as `exe`; with `install` false, what removing them leaves. By
    /// default memlog's commands in the shared JSON shape
    /// ([`settings::edit_json`]).
    fn edit_settings(
        &self,
        path: &Path,
        current: Option<&str>,
        exe: &Path,
        install: bool,
    ) -> Result<SettingsEdit> {
        settings::edit_json(path, current, exe, self.hook_settings(), install)
    }

    /// memlog's hooks in `text`, the text of one of its settings files
    /// (what `memlog doctor` reports); `None` when it holds none. By
    /// default the shared JSON shape ([`settings::hooks_in_json`]).
    fn hooks_in(&self, text: &str) -> Option<settings::HooksInFile> {
        settings::hooks_in_json(text)
    }

    /// The user's settings file, for every project.
    fn user_settings_file(&self) -> Result<PathBuf>;

    /// The settings file holding the hooks at `scope`. `work_tree` is the
    /// repository's root, which the project scopes are in; without one,
    /// every scope is the user's.
    fn settings_file(&self, scope: Scope, work_tree: Option<&Path>) -> Result<PathBuf> {
        let settings = self.hook_settings();
        match (scope, work_tree) {
            (Scope::User, _) | (_, None) => self.user_settings_file(),
            (Scope::Project, Some(root)) => Ok(root.join(settings.project_file)),
            (Scope::Local, Some(root)) => match settings.local_file {
                Some(file) => Ok(root.join(file)),
                None => Err(crate::Error::NoScope {
                    agent: self.title(),
                    scope: "local",
                }),
            },
        }
    }

    /// What the user must still do for installed hooks to run, if anything.
    fn install_note(&self) -> Option<&'static str> {
        None
    }

    /// For an agent that runs hooks only once the user trusts them: whether
    /// it would run the memlog hooks in `settings_file` (of the project at
    /// `work_tree`, if any). `None` when the agent asks no trust, or the
    /// file holds no memlog hook.
    fn hook_trust(&self, settings_file: &Path, work_tree: Option<&Path>) -> Option<HookTrust> {
        let _ = (settings_file, work_tree);
        None
    }

    /// What its session files are called in messages: `transcript`,
    /// `session`, `chat`.
    fn session_noun(&self) -> &'static str;

    /// Where the sessions of the project at `work_tree` are, when no path
    /// is given: folders (or files) for [`Agent::session_files`].
    fn default_session_paths(&self, work_tree: &Path) -> Result<Vec<PathBuf>>;

    /// Whether `session`, read from the default locations, ran in the
    /// project at `work_tree`. By default every one does: the locations
    /// are the project's own.
    fn ran_in(&self, session: &SessionFile, work_tree: &Path) -> bool {
        let _ = (session, work_tree);
        true
    }

    /// The session files in folder `dir`, in path order.
    fn session_files(&self, dir: &Path) -> Result<Vec<PathBuf>>;

    /// What a tool call's payload (PreToolUse, or the
    /// [`Agent::tool_recall_event`]) works on — a file it reads or
    /// edits, or a shell command — for file-aware recall; `None` for other
    /// tools. By default Claude Code's tools (`Read`, `Edit`, `Write`,
    /// `MultiEdit`, `NotebookEdit` with `file_path`; `Bash` with
    /// `command`) and the common input keys of others (`file_path`, `path`,
    /// `absolute_path`; `command` as a string or argv).
    fn tool_target(&self, payload: &Payload) -> Option<ToolTarget> {
        crate::protocol::tool_target(payload)
    }

    /// The hook around a tool call whose context reaches the model (the
    /// same JSON as a prompt's), which file-aware recall answers:
    /// PreToolUse, before the call, where the agent reads it back;
    /// PostToolUse (appended to the tool's result) for an agent whose
    /// pre-tool hook takes no context. `None` (the default): recall stays
    /// silent.
    fn tool_recall_event(&self) -> Option<HookEvent> {
        None
    }

    /// The memory files the agent keeps itself for the project at
    /// `work_tree` (its instructions file in the work tree, its own notes
    /// under the user's home), which memlog indexes read-only. Paths that
    /// may not exist; none by default.
    fn memory_files(&self, work_tree: &Path) -> Vec<PathBuf> {
        let _ = work_tree;
        Vec::new()
    }

    /// The folders outside the work tree where the agent keeps its own
    /// notes on the project (the user's, not the team's: memlog reads them
    /// into personal notes and records no tool call's words on them),
    /// whether or not they exist yet; none by default.
    fn own_memory_dirs(&self, work_tree: &Path) -> Vec<PathBuf> {
        let _ = work_tree;
        Vec::new()
    }

    /// Reads one session file, its drafts numbered by their place in it
    /// (the same numbers on every import).
    fn read_session(&self, file: &Path, options: &HookOptions) -> Result<SessionFile>;
}

/// Whether an agent would run the memlog hooks installed in a settings
/// file ([`Agent::hook_trust`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HookTrust {
    /// memlog's hook commands in the file.
    pub hooks: usize,
    /// Those the agent would not run (their events), and anything else
    /// it waits for (`project`: the folder itself is not trusted).
    pub untrusted: Vec<String>,
    /// Where the agent keeps what the user trusted.
    pub store: PathBuf,
    /// What the user does to trust them.
    pub how: String,
    /// Each memlog hook's entry in `store`, and the value that trusts it.
    pub entries: Vec<(String, String)>,
}

impl HookTrust {
    /// Whether the agent runs every memlog hook of the file.
    pub fn trusted(&self) -> bool {
        self.untrusted.is_empty()
    }
}

/// What an agent's Stop hook may answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopContract {
    /// The hook may keep the agent going with an instruction the agent
    /// reads: `{"decision":"block","reason":"…"}` (Claude Code).
    Block,
    /// The hook's answer is ignored: it only records.
    RecordOnly,
}

impl StopContract {
    /// Whether memlog may ask the agent for something at Stop.
    pub fn may_ask(self) -> bool {
        self == StopContract::Block
    }

    /// What the Stop hook prints to keep the agent going with `reason` as
    /// its next instruction, when the agent allows it.
    pub fn output(self, reason: &str) -> Option<String> {
        match self {
            StopContract::Block => Some(protocol::stop_block_output(reason)),
            StopContract::RecordOnly => None,
        }
    }
}

/// Which of an agent's settings files `memlog install` writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scope {
    /// The project's shared settings (committed with it).
    #[default]
    Project,
    /// The project's own, uncommitted settings (Claude Code's
    /// `settings.local.json`).
    Local,
    /// The user's settings, for every project.
    User,
}

impl fmt::Debug for dyn Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.client())
    }
}

impl fmt::Display for dyn Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.client())
    }
}

impl PartialEq for dyn Agent {
    fn eq(&self, other: &Self) -> bool {
        self.client() == other.client()
    }
}

impl Eq for dyn Agent {}
