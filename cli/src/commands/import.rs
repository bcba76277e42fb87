use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};
use memlog_agents::Agent;
use memlog_agents::claude_code::ClaudeCode;
use memlog_agents::codex::Codex;
use memlog_agents::gemini::Gemini;
use memlog_agents::{
    antigravity::Antigravity, copilot::Copilot, cursor::Cursor, opencode::OpenCode,
};
use memlog_ops::import::{self, SessionsImport};
use serde_json::json;

use memlog_ops::workspace;

use crate::commands::index::print_indexed;
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

/// What follows an import.
#[derive(Args)]
struct Afterwards {
    /// Leave the index as it is (by default it is brought up to date, so
    /// that the next prompt finds what was imported): for scripts that
    /// import several times and index once.
    #[arg(long)]
    no_index: bool,
}

#[derive(Subcommand)]
enum ImportSource {
    Jsonl(JsonlArgs),
    ClaudeCode(ClaudeCodeArgs),
    Codex(CodexArgs),
    Gemini(GeminiArgs),
    /// Import GitHub Copilot CLI sessions (one commit each).
    ///
    /// Reads session-state/<id>/events.jsonl: prompts, answers and every
    /// completed tool call with its output and exit code. By default, every
    /// session under $COPILOT_HOME/session-state (else ~/.copilot/…) that
    /// ran inside this repository. Importing again adds nothing, and a
    /// session memlog's hooks recorded gets only what they missed.
    Copilot(AgentSessionsArgs),
    /// Import Antigravity CLI transcripts (one commit per conversation).
    ///
    /// Reads transcript_full.jsonl: prompts, answers and tool calls with
    /// their output, into the conversation's session, beside what memlog's
    /// hooks recorded. By default, the conversations under
    /// ~/.gemini/antigravity-cli/brain whose tools worked inside this
    /// repository. Importing again adds nothing.
    Antigravity(AgentSessionsArgs),
    /// Import Cursor agent transcripts (one commit per conversation).
    ///
    /// Reads agent-transcripts/*.jsonl: prompts, answers and tool calls
    /// (Cursor writes no results, ids or times there). By default, this
    /// project's folder under ~/.cursor/projects/. Importing again adds
    /// nothing, and a session memlog's hooks recorded gets only what they
    /// missed.
    Cursor(AgentSessionsArgs),
    /// Import OpenCode sessions from `opencode export <session>` files.
    ///
    /// Reads prompts, answers and tool calls with their output. Importing
    /// again adds nothing, and a session memlog's plugin recorded gets only
    /// what it missed.
    Opencode(AgentSessionsArgs),
}

/// Session files to import.
#[derive(Args)]
struct AgentSessionsArgs {
    /// Session files or folders of them.
    paths: Vec<PathBuf>,

    /// Print the result as JSON.
    #[arg(long)]
    json: bool,

    #[command(flatten)]
    afterwards: Afterwards,
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

    #[command(flatten)]
    afterwards: Afterwards,
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

    #[command(flatten)]
    afterwards: Afterwards,
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
    /// Transcript files or folders of them (default: this project's folders
    /// under ~/.claude/projects/, those of sessions started in its
    /// subdirectories included).
    paths: Vec<PathBuf>,

    /// Print the result as JSON.
    #[arg(long)]
    json: bool,

    #[command(flatten)]
    afterwards: Afterwards,
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

    #[command(flatten)]
    afterwards: Afterwards,
}

pub fn cmd_import(dir: &Path, args: ImportArgs) -> anyhow::Result<ExitCode> {
    match args.source {
        ImportSource::Jsonl(a) => import_jsonl(dir, a),
        ImportSource::ClaudeCode(a) => {
            import_sessions(dir, &ClaudeCode, &a.paths, a.json, &a.afterwards)
        }
        ImportSource::Codex(a) => import_sessions(dir, &Codex, &a.paths, a.json, &a.afterwards),
        ImportSource::Gemini(a) => import_sessions(dir, &Gemini, &a.paths, a.json, &a.afterwards),
        ImportSource::Copilot(a) => import_sessions(dir, &Copilot, &a.paths, a.json, &a.afterwards),
        ImportSource::Antigravity(a) => {
            import_sessions(dir, &Antigravity, &a.paths, a.json, &a.afterwards)
        }
        ImportSource::Cursor(a) => import_sessions(dir, &Cursor, &a.paths, a.json, &a.afterwards),
        ImportSource::Opencode(a) => {
            import_sessions(dir, &OpenCode, &a.paths, a.json, &a.afterwards)
        }
    }
}

fn import_jsonl(dir: &Path, args: JsonlArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open_for_writing(dir)?;
    let origin = args.file.display().to_string();
    let imported = if origin == "-" {
        import::neutral(
            &repo,
            std::io::stdin().lock(),
            "stdin",
            args.skip_invalid,
            !args.afterwards.no_index,
        )?
    } else {
        let file = File::open(&args.file).with_context(|| format!("opening {origin}"))?;
        import::neutral(
            &repo,
            BufReader::new(file),
            &origin,
            args.skip_invalid,
            !args.afterwards.no_index,
        )?
    };
    for (line, message) in &imported.skipped {
        eprintln!("skipped {origin}, line {line}: {message}");
    }
    let totals = &imported.totals;
    if args.json {
        output::print_json(&json!({
            "file": origin,
            "lines": imported.lines,
            "sessions": imported.sessions,
            "commits": totals.commits,
            "added": totals.added,
            "duplicates": totals.duplicates,
            "skipped": imported.skipped.iter().map(|(l, m)| json!({"line": l, "message": m})).collect::<Vec<_>>(),
            "index": imported.index,
        }))?;
    } else {
        println!(
            "imported {} new events from {origin} in {} commits ({} sessions; {} already present)",
            totals.added, totals.commits, imported.sessions, totals.duplicates
        );
        print_indexed(imported.index.as_ref());
    }
    Ok(ExitCode::SUCCESS)
}

fn import_sessions(
    dir: &Path,
    agent: &'static dyn Agent,
    paths: &[PathBuf],
    as_json: bool,
    afterwards: &Afterwards,
) -> anyhow::Result<ExitCode> {
    let repo = workspace::open_for_writing(dir)?;
    let imported = import::agent_sessions(&repo, agent, paths, !afterwards.no_index)?;
    print_import(as_json, agent, &imported)
}

/// Prints an import's outcome, per file and in total.
fn print_import(
    as_json: bool,
    agent: &dyn Agent,
    imported: &SessionsImport,
) -> anyhow::Result<ExitCode> {
    let totals = &imported.totals;
    if as_json {
        output::print_json(&json!({
            "files": imported.files,
            "sessions": totals.sessions,
            "commits": totals.commits,
            "added": totals.added,
            "duplicates": totals.duplicates,
            "index": imported.index,
        }))?;
    } else {
        for f in &imported.files {
            let mut counts = vec![format!("{} events", f.events)];
            if f.malformed > 0 {
                counts.push(format!("{} malformed lines left out", f.malformed));
            }
            if let Some(n) = f.skipped.filter(|n| *n > 0) {
                // the agent's own records (settings, costs, attachments
                // it re-renders), said as such: a user read "kinds memlog
                // does not read" as data lost (field test 9b)
                counts.push(format!(
                    "{n} of {}'s own records, not kept: settings, costs and the like",
                    agent.title()
                ));
            }
            if f.running_calls > 0 {
                counts.push(format!(
                    "{} call(s) still running left to its hooks, which record them with their \
                     results",
                    f.running_calls
                ));
            }
            println!("{}: session {} ({})", f.path, f.session, counts.join(", "));
            if f.malformed > 0 && f.events == 0 {
                eprintln!(
                    "warning: {}: nothing read: {} lines are not what memlog reads in a {} {}",
                    f.path,
                    f.malformed,
                    agent.title(),
                    agent.session_noun()
                );
            } else if f.events == 0 && std::fs::metadata(&f.path).is_ok_and(|m| m.len() > 0) {
                // a file of another agent, or of another kind of this
                // agent's (a saved checkpoint), reads as no event at all
                eprintln!(
                    "warning: {}: nothing read: no prompt, answer or tool call of a {} {} is in \
                     it (another agent's file? `memlog import --help` lists each agent's importer)",
                    f.path,
                    agent.title(),
                    agent.session_noun()
                );
            }
        }
        println!(
            "imported {} new events in {} commits ({} already present)",
            totals.added, totals.commits, totals.duplicates
        );
        print_indexed(imported.index.as_ref());
    }
    Ok(ExitCode::SUCCESS)
}
