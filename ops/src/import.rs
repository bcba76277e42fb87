//! Importing sessions from elsewhere: a file in memlog's neutral format
//! ([`neutral()`]), or an agent's own session files ([`agent_sessions`]:
//! where they live and how they read is the agent's knowledge, in
//! memlog-agents). Imports are sealed directly, one commit per session, and
//! are idempotent: events the log holds already (same content, same id)
//! are skipped, and so are prompts, answers and tool calls a session holds
//! from another path (its hooks). They leave the index built
//! ([`crate::index::after`]).

use std::io::BufRead;
use std::path::PathBuf;

use memlog_agents::{Agent, Error as AgentError, HookOptions};
use memlog_format::Draft;
use memlog_format::neutral;
use memlog_format::privacy::Report;
use memlog_store::seal::Sealed;
use memlog_store::{Recorder, Repo};
use serde::Serialize;

use std::io::IsTerminal as _;

use crate::bail;
use crate::diag;
use crate::error::{Context, Error, Result};
use crate::index::{self, Indexed};

/// What an import added, over all its sessions.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Totals {
    /// Sessions imported.
    pub sessions: usize,
    /// Commits made (a session with nothing new makes none).
    pub commits: usize,
    /// Events added.
    pub added: usize,
    /// Events the log held already.
    pub duplicates: usize,
}

impl Totals {
    /// Adds `other`'s counts (an import sealed in batches).
    fn add(&mut self, other: Totals) {
        self.sessions += other.sessions;
        self.commits += other.commits;
        self.added += other.added;
        self.duplicates += other.duplicates;
    }

    /// Adds up the outcome of sealing, and reports the privacy filter's
    /// warnings (unclosed private tags) on stderr.
    fn of(sealed: &[Sealed], report: &Report) -> Totals {
        for w in &report.warnings {
            diag::warning(w);
        }
        Totals {
            sessions: sealed.len(),
            commits: sealed.iter().filter(|s| s.commit.is_some()).count(),
            added: sealed.iter().map(|s| s.added).sum(),
            duplicates: sealed.iter().map(|s| s.duplicates).sum(),
        }
    }
}

/// A neutral-format file imported.
#[derive(Clone, Debug, Serialize)]
pub struct NeutralImport {
    /// Lines read.
    pub lines: usize,
    /// Sessions in the file.
    pub sessions: usize,
    /// What was added.
    pub totals: Totals,
    /// Lines left out (`skip_invalid`): line number and why.
    pub skipped: Vec<(usize, String)>,
    /// The index, brought up to date after the import.
    pub index: Option<Indexed>,
}

/// Imports a neutral-format file read from `input` (named `origin` in
/// messages): the whole file is checked first, and an invalid line stops
/// the import and names the line, unless `skip_invalid` leaves it out.
/// With `build_index`, the index is brought up to date afterwards.
pub fn neutral(
    repo: &Repo,
    input: impl BufRead,
    origin: &str,
    skip_invalid: bool,
    build_index: bool,
) -> Result<NeutralImport> {
    let batch = neutral::read(input, origin, &repo.project(), skip_invalid)?;
    let sessions = batch.sessions.len();
    let recorder = Recorder::new(repo)?;
    let (sealed, report) = recorder.import(batch.sessions)?;
    Ok(NeutralImport {
        lines: batch.lines,
        sessions,
        totals: Totals::of(&sealed, &report),
        skipped: batch.skipped,
        index: build_index.then(|| index::after(repo, false)).flatten(),
    })
}

/// One session file read.
#[derive(Clone, Debug, Serialize)]
pub struct FileRead {
    /// The file.
    pub path: String,
    /// The session it belongs to.
    pub session: String,
    /// Events read from it.
    pub events: usize,
    /// Lines of a kind memlog does not know, when the agent counts them.
    #[serde(rename = "skipped_lines", skip_serializing_if = "Option::is_none")]
    pub skipped: Option<usize>,
    /// Lines that could not be read.
    #[serde(rename = "malformed_lines")]
    pub malformed: usize,
    /// Tool calls left out because they have no result yet in a session
    /// its hooks are recording here right now ([`RECORDING`]).
    #[serde(skip_serializing_if = "is_zero")]
    pub running_calls: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A session whose journal here was written this recently is being
/// recorded by its hooks: a call of its file with no result yet is still
/// running, and its PostToolUse hook records it with its result. Imported,
/// it was sealed without one for good (field test 12a).
pub const RECORDING: std::time::Duration = std::time::Duration::from_secs(15 * 60);

/// Whether `draft` is a tool call whose result its file does not hold
/// (yet, when it ends the file).
fn awaiting_result(draft: &Draft) -> bool {
    draft.kind == memlog_format::Kind::ToolObservation
        && !["output", "success", "error", "withheld"]
            .iter()
            .any(|k| draft.body.contains_key(*k))
}

/// The sessions whose journals here were written within [`RECORDING`].
fn sessions_recording(repo: &Repo) -> Vec<String> {
    memlog_store::journal::list(&repo.journal_dir())
        .unwrap_or_default()
        .into_iter()
        .filter(|j| {
            j.modified
                .and_then(|m| m.elapsed().ok())
                .is_some_and(|age| age < RECORDING)
        })
        .map(|j| j.session)
        .collect()
}

/// An agent's session files imported.
#[derive(Clone, Debug, Serialize)]
pub struct SessionsImport {
    /// Each file read, in order.
    pub files: Vec<FileRead>,
    /// What was added.
    pub totals: Totals,
    /// The index, brought up to date after the import.
    pub index: Option<Indexed>,
}

/// A folder given for import that holds no session file but folders that
/// do (`~/.claude/projects`, one folder per project) is refused, naming
/// them: importing every project's sessions into this repository's memory,
/// which its team shares, is not what was meant.
fn refuse_folder_of_folders(agent: &dyn Agent, dir: &std::path::Path) -> Result<()> {
    let mut holding: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|sub| sub.is_dir())
        .filter(|sub| agent.session_files(sub).is_ok_and(|f| !f.is_empty()))
        .filter_map(|sub| sub.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    if holding.is_empty() {
        return Ok(());
    }
    holding.sort();
    let more = holding.len().saturating_sub(5);
    holding.truncate(5);
    bail!(
        "{}: no {} directly in this folder, but its folders hold some ({}{}): give the folder of \
         the project to import (with no path, memlog imports this repository's own)",
        dir.display(),
        agent.session_noun(),
        holding.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    );
}

/// Imports `agent`'s session files at `paths` (files, or folders of them),
/// or when none are given, those of this repository where the agent keeps
/// them. With `build_index`, the index is brought up to date afterwards.
pub fn agent_sessions(
    repo: &Repo,
    agent: &'static dyn Agent,
    paths: &[PathBuf],
    build_index: bool,
) -> Result<SessionsImport> {
    let noun = agent.session_noun();
    // By default, the sessions that ran in this repository.
    let work_tree = if paths.is_empty() {
        Some(repo.work_tree.clone().context(format_args!(
            "this repository has no working tree; give {noun} paths"
        ))?)
    } else {
        None
    };
    let roots = match &work_tree {
        Some(root) => agent.default_session_paths(root).map_err(|e| match e {
            AgentError::NoHome => Error::Invalid(format!("HOME is not set; give {noun} paths")),
            other => other.into(),
        })?,
        None => paths.to_vec(),
    };
    let mut files = Vec::new();
    for p in &roots {
        if p.is_dir() {
            let found = agent.session_files(p)?;
            if found.is_empty() && work_tree.is_none() {
                refuse_folder_of_folders(agent, p)?;
            }
            files.extend(found);
        } else if p.is_file() {
            files.push(p.clone());
        } else {
            bail!("{}: no such file or folder", p.display());
        }
    }
    let options = HookOptions {
        project: repo.project(),
        excluded_tools: repo.config.tools.exclude.clone(),
        agent,
        ..HookOptions::default()
    };
    // A session spread over several files continues in the first one's
    // place.
    let mut sessions: Vec<(String, Vec<(u64, Draft)>)> = Vec::new();
    let mut pending = 0u64;
    let mut totals = Totals::default();
    let mut read = Vec::new();
    let recorder = Recorder::new(repo)?.withholding(crate::native::own_memory_dirs(repo));
    let recording = sessions_recording(repo);
    let bar = diag::ProgressBar::new(
        "importing",
        "files",
        files.len() > 1 && std::io::stderr().is_terminal(),
    );
    for (done, file) in files.iter().enumerate() {
        bar.set(done, files.len());
        // sealed in batches: memory stays bounded (a year of transcripts
        // held at once took 3.5 times their size), and an interrupted
        // import keeps what it sealed
        if pending >= BATCH_BYTES {
            totals.add(seal_batch(&recorder, std::mem::take(&mut sessions))?);
            pending = 0;
        }
        let session = agent
            .read_session(file, &options)
            .context(format_args!("reading {}", file.display()))?;
        if let Some(root) = &work_tree
            && !agent.ran_in(&session, root)
        {
            continue;
        }
        let mut session = session;
        let mut running_calls = 0;
        if recording.contains(&recorder.session_id(&session.session_id)) {
            // the calls the file ends with: one followed by anything else
            // is done, whatever its file says of its result (Cursor's
            // transcripts say nothing)
            let last_other = session
                .drafts
                .iter()
                .rposition(|(_, d)| d.kind != memlog_format::Kind::ToolObservation);
            let tail = last_other.map_or(0, |i| i + 1);
            let before = session.drafts.len();
            let mut i = 0;
            session.drafts.retain(|(_, d)| {
                i += 1;
                i <= tail || !awaiting_result(d)
            });
            running_calls = before - session.drafts.len();
        }
        read.push(FileRead {
            path: file.display().to_string(),
            session: session.session_id.clone(),
            events: session.drafts.len(),
            skipped: session.skipped,
            malformed: session.malformed,
            running_calls,
        });
        pending += std::fs::metadata(file).map_or(0, |m| m.len());
        match sessions.iter_mut().find(|(s, _)| *s == session.session_id) {
            Some((_, existing)) => existing.extend(session.drafts),
            None => sessions.push((session.session_id, session.drafts)),
        }
    }
    totals.add(seal_batch(&recorder, sessions)?);
    bar.set(files.len(), files.len());
    bar.finish();
    Ok(SessionsImport {
        files: read,
        totals,
        index: build_index.then(|| index::after(repo, false)).flatten(),
    })
}

/// Bytes of session files an import reads before it seals what it read.
const BATCH_BYTES: u64 = 32 << 20;

/// Seals a batch of an import's sessions.
fn seal_batch(recorder: &Recorder, sessions: Vec<(String, Vec<(u64, Draft)>)>) -> Result<Totals> {
    if sessions.is_empty() {
        return Ok(Totals::default());
    }
    let (sealed, report) = recorder.import_numbered(sessions)?;
    Ok(Totals::of(&sealed, &report))
}
