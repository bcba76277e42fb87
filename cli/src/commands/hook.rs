use std::io::{Read, Write};
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::sync::Mutex;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use clap::Args;
use memlog_format::{Draft, Kind, time};
use memlog_hooks::{CodeContext, HookEvent, HookOptions, Payload};
use memlog_indexer::Projections;
use memlog_indexer::context::{Assembled, assemble};
use memlog_indexer::projection::WriterLock;
use memlog_store::seal::{JournalSelection, seal_journals};
use memlog_store::{Recorder, Repo};
use serde_json::{Map, Value};

use crate::warm::{self, ContextRequest};

/// Handle a Claude Code hook: record the event, and inject memories.
///
/// Reads the hook's JSON payload on stdin. Records prompts, tool calls
/// (TodoWrite as task events), answers and session boundaries into the
/// session's journal; SessionEnd seals the session into its commit. At
/// SessionStart it prints a briefing (recent sessions, open tasks), at
/// UserPromptSubmit the memories most relevant to the prompt, each cited
/// by event id, as Claude Code's `additionalContext`.
///
/// A hook never hurts the agent: any internal error is logged to
/// `.git/memlog/hooks.log` and the hook exits 0, printing nothing; past its
/// time budget (`hooks.inject_budget_ms`, default 300 ms) injection is
/// skipped and the event is still recorded. It never loads an embedding
/// model and never indexes in the foreground: a stale index is refreshed by
/// a background `memlog index`.
#[derive(Args)]
pub struct HookArgs {
    /// The hook event: SessionStart, UserPromptSubmit, PreToolUse,
    /// PostToolUse, PostToolUseFailure, Stop, SubagentStop, PreCompact or
    /// SessionEnd.
    event: String,
}

/// Largest payload read from stdin.
const MAX_PAYLOAD: u64 = 64 << 20;
/// hooks.log is rotated past this size.
const MAX_LOG: u64 = 1 << 20;

static PANIC_MESSAGE: Mutex<Option<String>> = Mutex::new(None);

pub fn cmd_hook(dir: &Path, args: HookArgs) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    // A panic must not print a backtrace into the agent's session.
    std::panic::set_hook(Box::new(|info| {
        if let Ok(mut m) = PANIC_MESSAGE.lock() {
            *m = Some(info.to_string());
        }
    }));
    let mut input = Vec::new();
    let _ = std::io::stdin()
        .lock()
        .take(MAX_PAYLOAD)
        .read_to_end(&mut input);
    let mut log_dir: Option<PathBuf> = None;
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| {
        run(dir, &args.event, &input, started, &mut log_dir)
    }));
    let error = match outcome {
        Ok(Ok(Some(output))) => {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{output}");
            let _ = out.flush();
            None
        }
        Ok(Ok(None)) => None,
        Ok(Err(e)) => Some(format!("{e:#}")),
        Err(_) => Some(format!(
            "panic: {}",
            PANIC_MESSAGE
                .lock()
                .ok()
                .and_then(|m| m.clone())
                .unwrap_or_default()
        )),
    };
    if let Some(message) = error {
        log(log_dir.as_deref(), &args.event, &message, started);
    }
    Ok(ExitCode::SUCCESS)
}

fn run(
    dir: &Path,
    event_name: &str,
    input: &[u8],
    started: Instant,
    log_dir: &mut Option<PathBuf>,
) -> anyhow::Result<Option<String>> {
    let payload = memlog_hooks::parse_payload(event_name, input)?;
    let start = payload
        .cwd
        .as_deref()
        .map(PathBuf::from)
        .filter(|p| p.is_dir())
        .unwrap_or_else(|| dir.to_path_buf());
    let Ok((repo, config_error)) = Repo::discover_lenient(&start) else {
        // Not a git repository: memlog has nowhere to keep memory here.
        return Ok(None);
    };
    *log_dir = Some(repo.memlog_dir.clone());
    if let Some(e) = config_error {
        // Without its configuration, privacy patterns are unknown: record
        // nothing rather than risk writing what the user meant to mask.
        anyhow::bail!("not recording: {e}");
    }
    repo.ensure_dirs()?;
    let (branch, head) = repo.code_position();
    let context = CodeContext {
        cwd: payload.cwd.clone(),
        branch,
        head,
    };
    let options = HookOptions {
        project: repo.project(),
        excluded_tools: repo.config.tools.exclude.clone(),
        record_pre_tool_use: false,
    };
    let drafts = memlog_hooks::drafts(&payload, &context, &options);
    let recorder = Recorder::new(&repo)?;
    if let Some(session) = drafts.first().map(|d| d.session.clone()) {
        let same: Vec<Draft> = drafts
            .into_iter()
            .filter(|d| d.session == session)
            .collect();
        recorder.record(same)?;
    }
    // Unknown events were recorded as such above; nothing more to do.
    let Some(event) = payload.event.or_else(|| HookEvent::parse(event_name)) else {
        return Ok(None);
    };
    let budget = Duration::from_millis(if event.injects_context() {
        repo.config.hooks.inject_budget_ms
    } else {
        repo.config.hooks.record_budget_ms
    });
    match event {
        HookEvent::SessionEnd => {
            if let Some(s) = &payload.session_id {
                seal_journals(&repo, &JournalSelection::Session(s.clone()))?;
            }
            Ok(None)
        }
        HookEvent::SessionStart | HookEvent::UserPromptSubmit if repo.config.hooks.inject => {
            let output = inject(&repo, &recorder, event, &payload, started, budget)?;
            if event == HookEvent::SessionStart && started.elapsed() < budget {
                let idle = Duration::from_secs(repo.config.hooks.seal_idle_minutes * 60);
                seal_journals(&repo, &JournalSelection::IdleFor(idle))?;
            }
            Ok(output)
        }
        _ => Ok(None),
    }
}

/// Builds the context to inject within the budget, records a `recall` event
/// naming what was injected, and returns the hook's JSON output.
fn inject(
    repo: &Repo,
    recorder: &Recorder,
    event: HookEvent,
    payload: &Payload,
    started: Instant,
    budget: Duration,
) -> anyhow::Result<Option<String>> {
    let request = ContextRequest {
        event: event.as_str().to_string(),
        prompt: payload.prompt.clone().unwrap_or_default(),
        session: payload.session_id.clone().unwrap_or_default(),
    };
    // Warm path: a running `memlog watch` answers from open indexes.
    let remaining = budget.saturating_sub(started.elapsed());
    let (assembled, path) = match warm::ask(repo, &request, remaining) {
        Some(a) => (Some(a), "warm"),
        None => (local_context(repo, request, started, budget)?, "local"),
    };
    let Some(assembled) = assembled.filter(|a| !a.markdown.is_empty()) else {
        return Ok(None);
    };
    if let Some(session) = payload
        .session_id
        .as_ref()
        .filter(|_| !assembled.cited.is_empty())
    {
        let mut body = Map::new();
        body.insert(
            "targets".into(),
            Value::Array(assembled.cited.iter().cloned().map(Value::String).collect()),
        );
        body.insert("hook".into(), Value::String(event.as_str().to_string()));
        body.insert("path".into(), Value::String(path.to_string()));
        if let Some(p) = &payload.prompt {
            body.insert("query".into(), Value::String(p.clone()));
        }
        recorder.record(vec![Draft {
            session: session.clone(),
            ts: time::now(),
            kind: Kind::Recall,
            project: repo.project(),
            body,
            meta: Map::new(),
        }])?;
    }
    Ok(memlog_hooks::hook_output(event, Some(&assembled.markdown)))
}

/// Assembles the context in this process, in a worker thread, giving up
/// when the budget runs out (the worker dies with the process).
fn local_context(
    repo: &Repo,
    request: ContextRequest,
    started: Instant,
    budget: Duration,
) -> anyhow::Result<Option<Assembled>> {
    let (tx, rx) = mpsc::channel();
    let repo_dir = repo.common_dir.clone();
    std::thread::spawn(move || {
        let result = (|| -> anyhow::Result<Option<Assembled>> {
            let repo = Repo::discover(&repo_dir)?;
            let Some(p) = projections_for_hook(&repo)? else {
                return Ok(None);
            };
            answer(&repo, &p, &request).map(Some)
        })();
        let _ = tx.send(result);
    });
    let remaining = budget.saturating_sub(started.elapsed());
    match rx.recv_timeout(remaining) {
        Ok(result) => result,
        Err(_) => anyhow::bail!(
            "injection skipped: over the {} ms budget",
            budget.as_millis()
        ),
    }
}

/// The context for a hook's request: a briefing at SessionStart, the
/// memories most relevant to the prompt otherwise. Used by the hook itself
/// and by the warm server of `memlog watch`.
pub fn answer(repo: &Repo, p: &Projections, request: &ContextRequest) -> anyhow::Result<Assembled> {
    let config = &repo.config;
    if request.event == HookEvent::SessionStart.as_str() {
        return briefing(p, config, &request.session);
    }
    Ok(assemble(
        p,
        config,
        &request.prompt,
        config.context.budget_tokens,
        Some(&request.session),
    )?)
}

/// The projections as they are; when sealed sessions are missing from
/// them, a background `memlog index` is started (unless one runs already):
/// a hook never indexes in the foreground.
fn projections_for_hook(repo: &Repo) -> anyhow::Result<Option<Projections>> {
    let opened = Projections::open(repo).ok();
    let stale = match &opened {
        Some(p) => !p.has_sealed(repo)?,
        None => true,
    };
    if stale
        && WriterLock::try_acquire(repo)?.is_some()
        && let Ok(exe) = std::env::current_exe()
    {
        let _ = std::process::Command::new(exe)
            .arg("-C")
            .arg(&repo.common_dir)
            .arg("index")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
    }
    Ok(opened)
}

/// SessionStart: recent sessions of this project and open tasks.
fn briefing(
    p: &Projections,
    config: &memlog_format::Config,
    current: &str,
) -> anyhow::Result<Assembled> {
    let mut md = String::new();
    let mut stmt = p.graph.conn.prepare(
        "SELECT session, first_ts, first_prompt, events FROM sessions
         WHERE session != ?1 AND prompts > 0 ORDER BY last_ts DESC LIMIT ?2",
    )?;
    let rows = stmt.query_map(
        rusqlite::params![current, config.hooks.briefing_sessions as i64],
        |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, i64>(3)?,
            ))
        },
    )?;
    let mut sessions = Vec::new();
    for row in rows {
        sessions.push(row?);
    }
    if !sessions.is_empty() {
        md.push_str("## memlog: recent sessions in this project\n");
        for (session, first, prompt, events) in &sessions {
            let prompt = prompt
                .as_deref()
                .and_then(|p| p.lines().next())
                .map(|p| memlog_format::event::truncate_chars(p, 100))
                .unwrap_or_default();
            md.push_str(&format!(
                "- {} · {} ({} events): {}\n",
                first.get(..10).unwrap_or(first),
                session,
                events,
                prompt
            ));
        }
    }
    let open: Vec<_> = memlog_indexer::tasks::tasks(p)?
        .into_iter()
        .filter(|t| t.is_open())
        .take(10)
        .collect();
    if !open.is_empty() {
        md.push_str("\n## Open tasks\n");
        for t in &open {
            md.push_str(&format!("- [{}] {}\n", t.status, t.title));
        }
    }
    if !md.is_empty() {
        md.push_str("\nSearch earlier sessions with `memlog search \"…\"`; `memlog show ID` gives an event in full.\n");
    }
    Ok(Assembled {
        tokens: memlog_indexer::context::approx_tokens(&md),
        markdown: md,
        cited: Vec::new(),
    })
}

/// Appends a line to `<memlog dir>/hooks.log` (rotated past 1 MiB). Never
/// fails: a hook has nowhere else to report.
fn log(memlog_dir: Option<&Path>, event: &str, message: &str, started: Instant) {
    let Some(dir) = memlog_dir else { return };
    let _ = std::fs::create_dir_all(dir);
    let path = dir.join("hooks.log");
    if std::fs::metadata(&path).is_ok_and(|m| m.len() > MAX_LOG) {
        let _ = std::fs::rename(&path, dir.join("hooks.log.1"));
    }
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    {
        let _ = writeln!(
            f,
            "{} {} {}ms {}",
            time::now(),
            event,
            started.elapsed().as_millis(),
            message.replace('\n', " ")
        );
    }
}
