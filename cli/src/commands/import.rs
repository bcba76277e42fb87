use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};
use memlog_format::neutral;
use memlog_store::Recorder;
use serde_json::json;

use memlog_ops::workspace;

use crate::output;

/// Import events from other sources into memory.
///
/// Imports are sealed directly: one commit per session. They are idempotent:
/// events already in the log (same content, same id) are skipped, so running
/// an import twice adds nothing; nor are prompts, answers and tool calls the
/// session already holds from another path (its hooks).
#[derive(Args)]
pub struct ImportArgs {
    #[command(subcommand)]
    source: ImportSource,
}

#[derive(Subcommand)]
enum ImportSource {
    Jsonl(JsonlArgs),
    ClaudeCode(ClaudeCodeArgs),
    Codex(CodexArgs),
    Gemini(GeminiArgs),
}

/// Import Gemini CLI's saved chats (one commit per session).
///
/// Reads Gemini's chat files (session-*.jsonl): prompts, answers (a turn's
/// texts as one answer) and tool calls with what they displayed. By
/// default, the chats of this repository under ~/.gemini/tmp (the folders
/// whose .project_root is inside it). Importing again adds nothing, and a
/// session memlog's hooks recorded gets only what they missed.
#[derive(Args)]
struct GeminiArgs {
    /// Chat files or folders of them (searched recursively for
    /// session-*.jsonl).
    paths: Vec<PathBuf>,

    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

/// Import Codex CLI sessions (one commit each).
///
/// Reads Codex's session files (rollouts): prompts, answers and shell
/// commands with their output. By default, every session under
/// $CODEX_HOME/sessions (else ~/.codex/sessions) that ran inside this
/// repository. Importing again adds nothing, and a session memlog's hooks
/// recorded gets only what they missed.
#[derive(Args)]
struct CodexArgs {
    /// Session files or folders of them (searched recursively for
    /// rollout-*.jsonl).
    paths: Vec<PathBuf>,

    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

/// Import Claude Code transcripts (their sessions, one commit each).
///
/// Reads Claude Code's transcript JSONL: prompts, answers, tool calls with
/// their results, TodoWrite task updates, summaries and compaction
/// continuations, and the transcripts of subagents. Each event keeps the
/// transcript line it came from in meta.ref. Importing again adds nothing;
/// a transcript that grew adds only its new part; a session memlog's hooks
/// recorded gets only what they missed (such as an answer whose Stop hook
/// never ran). Claude Code deletes
/// transcripts after 30 days by default: imported sessions stay in memlog.
#[derive(Args)]
struct ClaudeCodeArgs {
    /// Transcript files or folders of them (default: this project's folder
    /// under ~/.claude/projects/).
    paths: Vec<PathBuf>,

    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

/// Import a file in memlog's neutral format (`-` for stdin).
///
/// One JSON object per line:
/// {"session": str, "ts": RFC3339, "kind": str, "text": str,
///  "ref"?: str, "project"?: str, "meta"?: object}.
/// `ref` is an external id, kept as meta.ref. Within a session, events keep
/// file order. The whole file is checked before anything is written: an
/// invalid line stops the import and names the line.
#[derive(Args)]
struct JsonlArgs {
    /// The file to import, or `-` for stdin.
    file: PathBuf,

    /// Skip invalid lines (listed on stderr) instead of stopping.
    #[arg(long)]
    skip_invalid: bool,

    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn cmd_import(dir: &Path, args: ImportArgs) -> anyhow::Result<ExitCode> {
    match args.source {
        ImportSource::Jsonl(a) => import_jsonl(dir, a),
        ImportSource::ClaudeCode(a) => import_claude_code(dir, a),
        ImportSource::Codex(a) => import_codex(dir, a),
        ImportSource::Gemini(a) => import_gemini(dir, a),
    }
}

fn import_jsonl(dir: &Path, args: JsonlArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open_for_writing(dir)?;
    let project = repo.project();
    let origin = args.file.display().to_string();
    let batch = if origin == "-" {
        neutral::read(
            std::io::stdin().lock(),
            "stdin",
            &project,
            args.skip_invalid,
        )?
    } else {
        let file = File::open(&args.file).with_context(|| format!("opening {origin}"))?;
        neutral::read(BufReader::new(file), &origin, &project, args.skip_invalid)?
    };
    for (line, message) in &batch.skipped {
        eprintln!("skipped {origin}, line {line}: {message}");
    }
    let sessions = batch.sessions.len();
    let recorder = Recorder::new(&repo)?;
    let (sealed, report) = recorder.import(batch.sessions)?;
    let Totals {
        added,
        duplicates,
        commits,
    } = totals(&sealed, &report);
    if args.json {
        output::print_json(&json!({
            "file": origin,
            "lines": batch.lines,
            "sessions": sessions,
            "commits": commits,
            "added": added,
            "duplicates": duplicates,
            "skipped": batch.skipped.iter().map(|(l, m)| json!({"line": l, "message": m})).collect::<Vec<_>>(),
        }))?;
    } else {
        println!(
            "imported {added} new events from {origin} in {commits} commits ({sessions} sessions; {duplicates} already present)"
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Claude Code's folder for a project: `~/.claude/projects/` and the
/// project's path with every character that is not a letter or digit
/// replaced by `-`.
fn claude_project_dir(work_tree: &Path) -> Option<PathBuf> {
    let home = std::env::var_os("HOME")?;
    let escaped: String = work_tree
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    Some(PathBuf::from(home).join(".claude/projects").join(escaped))
}

/// The transcripts named by `paths`: files as given, folders' `*.jsonl`.
fn transcript_files(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(p)
                .with_context(|| format!("reading {}", p.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.is_file() && f.extension().is_some_and(|x| x == "jsonl"))
                .collect();
            found.sort();
            files.extend(found);
        } else if p.is_file() {
            files.push(p.clone());
        } else {
            anyhow::bail!("{}: no such file or folder", p.display());
        }
    }
    Ok(files)
}

/// `seq` of a transcript draft: its position in its stream (the main
/// transcript, or one subagent's file), subagent streams placed apart by a
/// hash of their agent id, so each stream can grow without renumbering the
/// others.
fn transcript_seq(
    draft: &memlog_format::Draft,
    positions: &mut std::collections::HashMap<String, u64>,
) -> u64 {
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

fn import_claude_code(dir: &Path, args: ClaudeCodeArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open_for_writing(dir)?;
    let paths = if args.paths.is_empty() {
        let work_tree = repo
            .work_tree
            .clone()
            .context("this repository has no working tree; give transcript paths")?;
        let default =
            claude_project_dir(&work_tree).context("HOME is not set; give transcript paths")?;
        if !default.exists() {
            anyhow::bail!(
                "no Claude Code transcripts for this project at {} (give transcript paths)",
                default.display()
            );
        }
        vec![default]
    } else {
        args.paths.clone()
    };
    let files = transcript_files(&paths)?;
    let options = memlog_agents::HookOptions {
        project: repo.project(),
        excluded_tools: repo.config.tools.exclude.clone(),
        ..memlog_agents::HookOptions::default()
    };
    let mut sessions: NumberedSessions = Vec::new();
    let mut per_file = Vec::new();
    for file in &files {
        let t = memlog_agents::transcript::read_with_subagents(file, &options)
            .with_context(|| format!("reading {}", file.display()))?;
        let mut positions = std::collections::HashMap::new();
        let drafts: Vec<(u64, memlog_format::Draft)> = t
            .drafts
            .into_iter()
            .map(|(_, d)| (transcript_seq(&d, &mut positions), d))
            .collect();
        per_file.push(json!({
            "path": file.display().to_string(),
            "session": t.session_id,
            "events": drafts.len(),
            "skipped_lines": t.skipped,
            "malformed_lines": t.malformed,
        }));
        match sessions.iter_mut().find(|(s, _)| *s == t.session_id) {
            Some((_, existing)) => existing.extend(drafts),
            None => sessions.push((t.session_id, drafts)),
        }
    }
    let recorder = Recorder::new(&repo)?;
    let (sealed, report) = recorder.import_numbered(sessions)?;
    let Totals {
        added,
        duplicates,
        commits,
    } = totals(&sealed, &report);
    if args.json {
        output::print_json(&json!({
            "files": per_file,
            "sessions": sealed.len(),
            "commits": commits,
            "added": added,
            "duplicates": duplicates,
        }))?;
    } else {
        for f in &per_file {
            println!(
                "{}: session {} ({} events)",
                f["path"].as_str().unwrap_or(""),
                f["session"].as_str().unwrap_or(""),
                f["events"]
            );
        }
        println!("imported {added} new events in {commits} commits ({duplicates} already present)");
    }
    Ok(ExitCode::SUCCESS)
}

/// Codex's session folder: `$CODEX_HOME/sessions`, else
/// `~/.codex/sessions`.
fn codex_sessions_dir() -> Option<PathBuf> {
    if let Some(home) = std::env::var_os("CODEX_HOME").filter(|h| !h.is_empty()) {
        return Some(PathBuf::from(home).join("sessions"));
    }
    Some(PathBuf::from(std::env::var_os("HOME")?).join(".codex/sessions"))
}

/// Every `rollout-*.jsonl` under `dir`, in path order.
fn rollout_files(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    files_named(dir, "rollout-", out)
}

/// Every `<prefix>*.jsonl` under `dir`, in path order.
fn files_named(dir: &Path, prefix: &str, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            files_named(&path, prefix, out)?;
        } else if path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(prefix) && n.ends_with(".jsonl"))
        {
            out.push(path);
        }
    }
    Ok(())
}

fn import_codex(dir: &Path, args: CodexArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open_for_writing(dir)?;
    let options = memlog_agents::HookOptions {
        project: repo.project(),
        excluded_tools: repo.config.tools.exclude.clone(),
        agent: memlog_agents::Agent::Codex,
        ..memlog_agents::HookOptions::default()
    };
    // By default only the sessions that ran in this repository.
    let inside = if args.paths.is_empty() {
        Some(
            repo.work_tree
                .clone()
                .context("this repository has no working tree; give session paths")?,
        )
    } else {
        None
    };
    let mut files = Vec::new();
    if args.paths.is_empty() {
        let default = codex_sessions_dir().context("HOME is not set; give session paths")?;
        if !default.exists() {
            anyhow::bail!(
                "no Codex sessions at {} (give session paths)",
                default.display()
            );
        }
        rollout_files(&default, &mut files)?;
    } else {
        for p in &args.paths {
            if p.is_dir() {
                rollout_files(p, &mut files)?;
            } else if p.is_file() {
                files.push(p.clone());
            } else {
                anyhow::bail!("{}: no such file or folder", p.display());
            }
        }
    }
    let mut sessions: NumberedSessions = Vec::new();
    let mut per_file = Vec::new();
    for file in &files {
        let rollout = memlog_agents::codex::read(file, &options)
            .with_context(|| format!("reading {}", file.display()))?;
        if let Some(root) = &inside {
            let ran_here = rollout
                .cwd
                .as_deref()
                .is_some_and(|cwd| Path::new(cwd).starts_with(root));
            if !ran_here {
                continue;
            }
        }
        add_session_file(
            &mut per_file,
            &mut sessions,
            file,
            rollout.session_id,
            rollout.drafts,
            rollout.malformed,
        );
    }
    seal_numbered(&repo, args.json, &per_file, sessions)
}

/// Sessions read from agents' session files, their events numbered by
/// their place in the file (the same numbers on every import).
type NumberedSessions = Vec<(String, Vec<(u64, memlog_format::Draft)>)>;

/// Adds one session file's events to `sessions` (a session spread over
/// several files continues its numbering) and its line to `per_file`.
fn add_session_file(
    per_file: &mut Vec<serde_json::Value>,
    sessions: &mut NumberedSessions,
    file: &Path,
    session_id: String,
    drafts: Vec<memlog_format::Draft>,
    malformed: usize,
) {
    per_file.push(json!({
        "path": file.display().to_string(),
        "session": session_id,
        "events": drafts.len(),
        "malformed_lines": malformed,
    }));
    let drafts = drafts.into_iter().enumerate().map(|(i, d)| (i as u64, d));
    match sessions.iter_mut().find(|(s, _)| *s == session_id) {
        Some((_, existing)) => existing.extend(drafts),
        None => sessions.push((session_id, drafts.collect())),
    }
}

/// Seals what was read (leaving out what the sessions already hold) and
/// prints the outcome.
fn seal_numbered(
    repo: &memlog_store::Repo,
    json: bool,
    per_file: &[serde_json::Value],
    sessions: NumberedSessions,
) -> anyhow::Result<ExitCode> {
    let recorder = Recorder::new(repo)?;
    let (sealed, report) = recorder.import_numbered(sessions)?;
    let totals = totals(&sealed, &report);
    print_import(json, per_file, sealed.len(), &totals)
}

/// The chat folders of Gemini CLI projects inside `root`:
/// `~/.gemini/tmp/<slug>/chats` whose `<slug>/.project_root` names a folder
/// inside it.
fn gemini_chat_dirs(root: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let home = std::env::var_os("HOME").context("HOME is not set; give chat paths")?;
    let tmp = PathBuf::from(home).join(".gemini/tmp");
    if !tmp.exists() {
        anyhow::bail!("no Gemini CLI chats at {} (give chat paths)", tmp.display());
    }
    let mut dirs = Vec::new();
    for entry in std::fs::read_dir(&tmp).with_context(|| format!("reading {}", tmp.display()))? {
        let project = entry?.path();
        let Ok(project_root) = std::fs::read_to_string(project.join(".project_root")) else {
            continue;
        };
        if Path::new(project_root.trim()).starts_with(root) && project.join("chats").is_dir() {
            dirs.push(project.join("chats"));
        }
    }
    dirs.sort();
    Ok(dirs)
}

fn import_gemini(dir: &Path, args: GeminiArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open_for_writing(dir)?;
    let options = memlog_agents::HookOptions {
        project: repo.project(),
        excluded_tools: repo.config.tools.exclude.clone(),
        agent: memlog_agents::Agent::Gemini,
        ..memlog_agents::HookOptions::default()
    };
    let roots = if args.paths.is_empty() {
        let work_tree = repo
            .work_tree
            .clone()
            .context("this repository has no working tree; give chat paths")?;
        gemini_chat_dirs(&work_tree)?
    } else {
        args.paths.clone()
    };
    let mut files = Vec::new();
    for p in &roots {
        if p.is_dir() {
            files_named(p, "session-", &mut files)?;
        } else if p.is_file() {
            files.push(p.clone());
        } else {
            anyhow::bail!("{}: no such file or folder", p.display());
        }
    }
    let mut sessions: NumberedSessions = Vec::new();
    let mut per_file = Vec::new();
    for file in &files {
        let chat = memlog_agents::gemini::read_chat(file, &options)
            .with_context(|| format!("reading {}", file.display()))?;
        add_session_file(
            &mut per_file,
            &mut sessions,
            file,
            chat.session_id,
            chat.drafts,
            chat.malformed,
        );
    }
    seal_numbered(&repo, args.json, &per_file, sessions)
}

/// Prints an import's outcome, per file and in total.
fn print_import(
    as_json: bool,
    per_file: &[serde_json::Value],
    sessions: usize,
    totals: &Totals,
) -> anyhow::Result<ExitCode> {
    if as_json {
        output::print_json(&json!({
            "files": per_file,
            "sessions": sessions,
            "commits": totals.commits,
            "added": totals.added,
            "duplicates": totals.duplicates,
        }))?;
    } else {
        for f in per_file {
            println!(
                "{}: session {} ({} events)",
                f["path"].as_str().unwrap_or(""),
                f["session"].as_str().unwrap_or(""),
                f["events"]
            );
        }
        println!(
            "imported {} new events in {} commits ({} already present)",
            totals.added, totals.commits, totals.duplicates
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// What an import added, over all its sessions.
struct Totals {
    added: usize,
    duplicates: usize,
    commits: usize,
}

/// Adds up the outcome of an import and reports the privacy filter's
/// warnings (unclosed private tags) on stderr.
fn totals(
    sealed: &[memlog_store::seal::Sealed],
    report: &memlog_format::privacy::Report,
) -> Totals {
    for w in &report.warnings {
        eprintln!("warning: {w}");
    }
    Totals {
        added: sealed.iter().map(|s| s.added).sum(),
        duplicates: sealed.iter().map(|s| s.duplicates).sum(),
        commits: sealed.iter().filter(|s| s.commit.is_some()).count(),
    }
}
