//! The hook driver: what `memlog hook EVENT` does with an agent's payload
//! (read by the agent, memlog-agents' `Agent`, as the shared hook
//! protocol). It records the payload's drafts into the session's journal,
//! seals the session at SessionEnd, and at SessionStart and
//! UserPromptSubmit builds the context to inject within the time budget
//! (from a warm server when one answers, else in this process), recording
//! a `recall` event naming what was injected. At Stop it credits cited
//! memories and, when the agent's Stop contract lets it, asks the agent for
//! the session's facts ([`crate::stop`]).
//!
//! A hook never hurts the agent: the front-end logs any error with
//! [`log_error`] (to `.git/memlog/hooks.log`) and exits 0.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use memlog_agents::{Agent, CodeContext, HookEvent, HookOptions, Payload};
use memlog_format::{Draft, Kind, time};
use memlog_indexer::Projections;
use memlog_indexer::context::Assembled;
use memlog_indexer::projection::{Reach, WriterLock};
use memlog_indexer::vectors::VectorAccess;
use memlog_store::journal::Durability;
use memlog_store::seal::{JournalSelection, seal_journals};
use memlog_store::{Layout, Recorder, Repo};
use serde_json::{Map, Value};

use crate::background::{self, Priority};
use crate::bail;
use crate::context::answer;
use crate::error::Result;
use crate::stop::{StopTurn, on_stop};
use crate::warm::{self, ContextRequest};

/// hooks.log is rotated past this size.
const MAX_LOG: u64 = 1 << 20;

/// How long a SessionEnd hook (from its start) seals the session before
/// leaving it to a background `memlog seal`: within the 3 s Codex CLI
/// gives SessionEnd, the least of the agents.
const SESSION_END_SEAL: Duration = Duration::from_secs(2);

/// Handles one hook of `agent`: `event_name` with its JSON payload `input`,
/// for the repository of the payload's `cwd` (else `dir`). Returns what the
/// hook prints (its JSON output), if anything. `layout` is set to the memlog
/// directory as soon as it is known, for [`log_error`].
pub fn run(
    agent: &'static dyn Agent,
    dir: &Path,
    event_name: &str,
    input: &[u8],
    started: Instant,
    layout: &mut Option<Layout>,
) -> Result<Option<String>> {
    let mut payload = match agent.read_payload(event_name, input) {
        Ok(p) => p,
        Err(e) => {
            // Without a payload there is no `cwd`: the error is logged in
            // the repository the hook runs in, if it runs in one.
            *layout = Repo::discover_lenient(dir).ok().map(|(r, _)| r.layout());
            return Err(e.into());
        }
    };
    let start = payload
        .cwd
        .as_deref()
        .map(PathBuf::from)
        .filter(|p| p.is_dir())
        .unwrap_or_else(|| dir.to_path_buf());
    // The repository the agent was started in keeps the whole session:
    // after a `cd` into a submodule the payload's cwd is there, and the
    // session would be split between two logs (its start never sealed).
    let project = agent
        .project_dir_var()
        .and_then(std::env::var_os)
        .map(PathBuf::from)
        .filter(|p| p.is_dir())
        .and_then(|p| Repo::discover_lenient(&p).ok());
    let found = match project {
        Some(found) => Ok(found),
        None => Repo::discover_lenient(&start),
    };
    let (repo, config_error) = match found {
        Ok(found) => found,
        Err(e) => {
            // No repository memlog may write: nowhere to keep memory here.
            // Said once a session, in the user's log, where `memlog doctor`
            // run here finds it (user-level hooks run in every folder).
            let event = payload.event.or_else(|| HookEvent::parse(event_name));
            if event != Some(HookEvent::SessionStart) {
                return Ok(None);
            }
            let why = match &e {
                memlog_store::Error::NotOwned { .. } => e.to_string(),
                _ => format!("{} is not inside a git repository", start.display()),
            };
            append_log(
                &user_log(),
                event_name,
                &format!("not recording: {why}"),
                started,
            );
            // a repository that is another user's (a bind mount in a
            // container) is one the user meant to record: they are told
            return Ok(match e {
                memlog_store::Error::NotOwned { .. }
                    if agent.takes_context(HookEvent::SessionStart) =>
                {
                    let notice =
                        format!("memlog is not recording this session: {e}. Tell the user.");
                    agent.hook_output(HookEvent::SessionStart, Some(&notice))
                }
                _ => None,
            });
        }
    };
    *layout = Some(repo.layout());
    if runs_elsewhere(agent, &repo) {
        return Ok(None);
    }
    let event = payload.event.or_else(|| HookEvent::parse(event_name));
    if let Some(e) = config_error {
        // Without its configuration, privacy patterns are unknown: record
        // nothing rather than risk writing what the user meant to mask (nor
        // in a repository whose objects memlog cannot write, where a
        // journal would never be sealed).
        // Said in hooks.log at every hook, and to the agent at its
        // session's start, so that a typo does not lose sessions unseen.
        if event == Some(HookEvent::SessionStart) && agent.takes_context(HookEvent::SessionStart) {
            let why = format!("not recording: {e}");
            log_error(Some(&repo.layout()), event_name, &why, started);
            let notice = match e {
                // nothing the user can fix here but the repository itself
                memlog_store::Error::ObjectFormat { .. } => {
                    format!("memlog is not recording this session: {e}. Tell the user.")
                }
                _ => format!(
                    "memlog is not recording this session: {e}. Tell the user: fix .memlog.yaml \
                     (`memlog doctor` names the problem); nothing is recorded until then."
                ),
            };
            return Ok(agent.hook_output(HookEvent::SessionStart, Some(&notice)));
        }
        bail!("not recording: {e}");
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
        agent,
        agent_version: agent.version(&payload),
    };
    let recorder = Recorder::new(&repo)?
        .withholding(crate::native::own_memory_dirs(&repo))
        .once();
    // the session as recorded (a secret in its id redacted), for every use
    // below: its journal, its seal, its recap
    payload.session_id = payload.session_id.map(|s| recorder.session_id(&s));
    let drafts = memlog_agents::drafts(&payload, &context, &options);
    let budget = Duration::from_millis(match event {
        Some(e) if e.injects_context() => repo.config.hooks.inject_budget_ms,
        _ => repo.config.hooks.record_budget_ms,
    });
    // The context is assembled in a worker while this thread records the
    // payload (and waits for its fsync): the two overlap.
    let job = match event {
        Some(e @ (HookEvent::SessionStart | HookEvent::UserPromptSubmit))
            if repo.config.hooks.inject && agent.takes_context(e) =>
        {
            Some(ContextJob::start(&repo, e, &payload, started, budget))
        }
        _ => None,
    };
    let durability = prompt_path_durability(event);
    let mut repeated = false;
    // A SessionEnd for a session that recorded nothing here ends nothing
    // in two cases, said in hooks.log alone.
    if event == Some(HookEvent::SessionEnd)
        && let Some(session) = payload.session_id.as_ref().map(|s| recorder.session_id(s))
        && !recorded_here(&repo, &session)
    {
        let why = if sealed_a_moment_ago(&repo, &session) {
            // the other of two memlog hooks configured for this agent (user
            // and project settings) sealed the session already: its end
            // again would be sealed alone, in a commit of its own (field
            // test 12a)
            Some("another memlog hook sealed this session a moment ago")
        } else if payload
            .transcript_path
            .as_ref()
            .is_some_and(|t| !t.exists())
        {
            // Claude Code's failed `--resume` of a teammate's session fires
            // SessionEnd alone, for a transcript it never wrote: a lone
            // session_end would be sealed into that session under this
            // user's name, and shared. (A session sealed early, by `seal
            // --all` or an idle seal, has its transcript and keeps its end.)
            Some("the session recorded nothing here (a resume that failed?)")
        } else {
            None
        };
        if let Some(why) = why {
            log_error(
                Some(&repo.layout()),
                event_name,
                &format!("nothing recorded: {why}"),
                started,
            );
            return Ok(None);
        }
    }
    // what recording found the user should know (an unclosed private tag,
    // whose text is kept as typed and will be shared)
    let mut notices: Vec<String> = Vec::new();
    if let Some(session) = drafts.first().map(|d| d.session.clone()) {
        let mut same: Vec<Draft> = drafts
            .into_iter()
            .filter(|d| d.session == session)
            .collect();
        if matches!(
            event,
            Some(HookEvent::PostToolUse | HookEvent::PostToolUseFailure)
        ) && printed_personal_during_call(&repo, &session)
        {
            for d in &mut same {
                memlog_format::scope::mark_personal(&mut d.meta);
            }
        }
        let sent = same.len();
        match recorder.record_as(same, durability) {
            Ok((recorded, report)) => {
                repeated = sent > 0 && recorded.is_empty();
                let forget = recorded
                    .first()
                    .map(|e| format!("; `memlog forget {}` takes it out", e.id.short()))
                    .unwrap_or_default();
                for w in &report.warnings {
                    log_error(Some(&repo.layout()), event_name, w, started);
                    notices.push(format!(
                        "{w}. What they typed is recorded as typed, and the next `memlog sync` \
                         shares it with the team{forget}."
                    ));
                }
            }
            // Memory that cannot be written (a read-only or full disk)
            // can still be read: the agent gets its context all the same,
            // and is told its words are not kept.
            Err(e) if event.is_some_and(HookEvent::injects_context) => {
                let why = crate::error::chain(&e);
                log_error(
                    Some(&repo.layout()),
                    event_name,
                    &format!("not recorded: {why}"),
                    started,
                );
                notices.push(format!(
                    "memlog is not recording this session: {why}. Tell the user: memory is \
                     read, but what is said here is not kept until that is fixed."
                ));
            }
            Err(e) => return Err(e.into()),
        }
    }
    // Unknown events were recorded as such above; nothing more to do.
    let Some(event) = event else {
        return Ok(None);
    };
    if event == HookEvent::SessionStart {
        notices.extend(memory_not_taken(&repo));
    }
    if repeated
        && matches!(
            event,
            HookEvent::SessionStart | HookEvent::UserPromptSubmit | HookEvent::Stop
        )
    {
        // The agent runs memlog's hooks twice (user and project settings
        // each name one): the other run recorded this a moment ago and
        // answers it; a second answer would inject the same memories twice.
        log_error(
            Some(&repo.layout()),
            event_name,
            "another memlog hook recorded and answered this same event of the session a moment ago (if memlog's hooks are configured twice, `memlog doctor` names where)",
            started,
        );
        return Ok(None);
    }
    match event {
        HookEvent::SessionEnd => {
            if let Some(s) = &payload.session_id {
                crate::file_recall::forget_seen(&repo, s);
                // a turn without its answer: its Stop hook was killed or
                // timed out, and the transcript still holds what it said
                let backfill = match (agent.transcript_import(), &payload.transcript_path) {
                    (Some(import), Some(path)) if crate::backfill::unanswered_turn(&repo, s) => {
                        path.to_str().map(|p| (import, p.to_string()))
                    }
                    _ => None,
                };
                let sealed = seal_session(&repo, s, started)?;
                if let (Some((import, path)), true) = (&backfill, sealed) {
                    // the import brings the index up to date afterwards
                    background::spawn(&repo, &["import", import, path], Priority::Low);
                } else if crate::reflect::due(&repo) {
                    // reflection brings the index up to date (unless another
                    // writer is at it), then keeps its candidates for
                    // the next briefing
                    background::spawn(&repo, &["reflect", "--if-due"], Priority::Low);
                } else {
                    // so that the next session's prompts find this one
                    index_in_background(&repo)?;
                }
            }
            Ok(None)
        }
        HookEvent::Stop => {
            let Some(session) = payload.session_id.as_deref() else {
                return Ok(None);
            };
            let turn = StopTurn {
                session,
                stop_hook_active: payload.stop_hook_active.unwrap_or(false),
                may_ask: agent.stop_contract().may_ask(),
            };
            let reason = on_stop(&repo, &recorder, &turn)?;
            Ok(reason.and_then(|r| agent.stop_contract().output(&r)))
        }
        HookEvent::SessionStart | HookEvent::UserPromptSubmit => {
            let injected = match job {
                Some(job) => match job.wait(&repo.layout(), event, started, budget) {
                    Ok(context) => {
                        inject(agent, &repo, &recorder, event, &payload, context, &notices)
                    }
                    // A clone git left incomplete on purpose: no memory
                    // reaches the agent until a sync, and a user reads no
                    // hooks.log; the session is still recorded.
                    Err(e) if event == HookEvent::SessionStart && e.is_incomplete_clone() => {
                        log_error(
                            Some(&repo.layout()),
                            event.as_str(),
                            &e.to_string(),
                            started,
                        );
                        let notice = format!(
                            "memlog cannot read this repository's memory: {e}. Tell the user."
                        );
                        return Ok(agent.hook_output(HookEvent::SessionStart, Some(&notice)));
                    }
                    Err(e) => return Err(e),
                },
                None if !repo.config.hooks.inject => Err(Injected::Skipped(
                    "injection is off (hooks.inject: false)".into(),
                )),
                None => Err(Injected::Skipped(format!(
                    "{} takes no context at {event}",
                    agent.name()
                ))),
            };
            if event == HookEvent::SessionStart {
                start_warm_watcher(&repo);
                seal_idle_in_background(&repo, payload.session_id.as_deref());
                // CLAUDE.md and the like, re-read off the hook's path
                if crate::native::changed(&repo) {
                    background::spawn(&repo, &["native", "sync"], Priority::Low);
                }
                // the code moved: memories anchored to it are checked again
                if crate::anchor::due(&repo) {
                    background::spawn(&repo, &["verify", "--as-is"], Priority::Low);
                }
            }
            printed(&repo, event, injected, started)
        }
        HookEvent::PreToolUse | HookEvent::PostToolUse
            if agent.tool_recall_event() == Some(event) && repo.config.hooks.inject =>
        {
            // file-aware recall: the projections as they are (a hook never
            // indexes in the foreground), no vectors, no model; with what
            // the index lacks, read as a prompt reads it, so that a session
            // sealed a moment ago is known to the next at once
            let (Some(session), Some(target)) =
                (payload.session_id.as_deref(), agent.tool_target(&payload))
            else {
                return Ok(None);
            };
            let projections = || -> Result<Projections> {
                let mut p = match Projections::open(&repo) {
                    Ok(p) => p,
                    Err(_) => Projections::empty()?,
                };
                p.read_unindexed(
                    &repo,
                    Reach::Prompt {
                        asking: Some(session),
                    },
                )?;
                Ok(p)
            };
            let Some(known) =
                crate::file_recall::before_tool(&repo, projections, session, &target)?
            else {
                return Ok(None);
            };
            let injected = inject(
                agent,
                &repo,
                &recorder,
                event,
                &payload,
                (known, "local"),
                &notices,
            );
            printed(&repo, event, injected, started)
        }
        _ => Ok(None),
    }
}

/// How a hook's own events are appended: on the prompt path (SessionStart,
/// UserPromptSubmit, and the `recall` they record) without waiting for the
/// disk, since the agent waits for the hook; the turn's next synced append
/// or the session's seal makes them durable ([`Durability::Deferred`]).
fn prompt_path_durability(event: Option<HookEvent>) -> Durability {
    match event {
        Some(e) if e.injects_context() => Durability::Deferred,
        _ => Durability::Synced,
    }
}

/// What came of an injection that printed nothing.
enum Injected {
    /// Nothing to inject, and why (for hooks.log).
    Skipped(String),
    /// An error.
    Failed(crate::Error),
}

/// A hook's output for an injection, or none when it was skipped (saying
/// why in hooks.log).
fn printed(
    repo: &Repo,
    event: HookEvent,
    injected: Result<String, Injected>,
    started: Instant,
) -> Result<Option<String>> {
    match injected {
        Ok(output) => Ok(Some(output)),
        Err(Injected::Skipped(why)) => {
            log_error(Some(&repo.layout()), event.as_str(), &why, started);
            Ok(None)
        }
        Err(Injected::Failed(e)) => Err(e),
    }
}

impl From<crate::Error> for Injected {
    fn from(e: crate::Error) -> Injected {
        Injected::Failed(e)
    }
}

/// Records a `recall` event naming what was injected (the context a
/// [`ContextJob`] assembled, and after compaction the session's recap) and
/// returns the hook's JSON output; or why nothing was injected.
fn inject(
    agent: &dyn Agent,
    repo: &Repo,
    recorder: &Recorder,
    event: HookEvent,
    payload: &Payload,
    (assembled, path): (Assembled, &'static str),
    notices: &[String],
) -> Result<String, Injected> {
    // After compaction the session's own memories come first: the summary
    // the agent continues from may have lost them.
    let assembled = match (event, payload.source.as_deref(), &payload.session_id) {
        (HookEvent::SessionStart, Some("compact"), Some(session)) => {
            let recap = crate::context::session_recap(repo, session)?;
            let mut a = assembled;
            if !recap.is_empty() {
                a.markdown = if a.markdown.is_empty() {
                    recap
                } else {
                    format!("{recap}\n{}", a.markdown)
                };
                a.tokens = memlog_indexer::context::approx_tokens(&a.markdown);
            }
            a
        }
        _ => assembled,
    };
    // said before any memory, for the agent to pass on: the user typed it
    // and reads no hooks.log
    let assembled = if notices.is_empty() {
        assembled
    } else {
        let mut a = assembled;
        let said: Vec<String> = notices.iter().map(|n| format!("- ⚠️ {n}")).collect();
        a.markdown = format!(
            "## memlog: tell the user\n{}\n{}",
            said.join("\n"),
            if a.markdown.is_empty() {
                String::new()
            } else {
                format!("\n{}", a.markdown)
            }
        );
        a
    };
    if assembled.markdown.is_empty() {
        return Err(Injected::Skipped(format!(
            "nothing injected ({path}): {}",
            assembled.withheld.as_deref().unwrap_or("nothing to say")
        )));
    }
    if let Some(session) = payload
        .session_id
        .as_ref()
        .filter(|_| !assembled.cited.is_empty())
    {
        let mut body = Map::new();
        body.insert(
            "targets".into(),
            Value::Array(
                assembled
                    .cited
                    .iter()
                    .map(|id| Value::String(id.to_string()))
                    .collect(),
            ),
        );
        body.insert("hook".into(), Value::String(event.as_str().to_string()));
        body.insert("path".into(), Value::String(path.to_string()));
        // what ranked them (text, distilled, embedded, feedback): how the
        // memory arrived, for whoever asks why it did or did not
        if let Some(by) = assembled
            .ranked_by
            .and_then(|q| serde_json::to_value(q).ok())
        {
            body.insert("ranked_by".into(), by);
        }
        if let Some(gate) = &assembled.gate {
            body.insert("gate".into(), gate.clone());
        }
        if let Some(p) = &payload.prompt {
            body.insert("query".into(), Value::String(p.clone()));
        }
        // a personal memory given to the session makes the rest of it
        // personal, as a personal event recorded in it does: the answer
        // may repeat it
        let mut meta = Map::new();
        if assembled.personal {
            memlog_format::scope::mark_personal(&mut meta);
        }
        let recall = Draft {
            session: session.clone(),
            ts: time::now(),
            kind: Kind::Recall,
            project: repo.project(),
            body,
            meta,
        };
        if let Err(e) = recorder.record_as(vec![recall], Durability::Deferred) {
            if assembled.personal {
                // the recall is what keeps the rest of the session here:
                // without it, a personal memory is not given
                return Err(Injected::Skipped(format!(
                    "a personal memory withheld, since its recall could not be recorded: {}",
                    crate::error::chain(&e)
                )));
            }
            // what was injected goes unrecorded; the agent still gets it
            log_error(
                Some(&repo.layout()),
                event.as_str(),
                &format!("recall not recorded: {}", crate::error::chain(&e)),
                Instant::now(),
            );
        }
    }
    agent
        .hook_output(event, Some(&defuse_wrappers(&assembled.markdown)))
        .ok_or_else(|| Injected::Skipped(format!("{event} takes no context from this agent")))
}

/// The tags agents wrap a hook's context in (Claude Code's
/// `<system-reminder>`, Gemini CLI's `<hook_context>`), made inert in what
/// memory holds: a memory is whatever an agent once saw (a fetched page, a
/// teammate's synced session), and a closing tag in it would end the
/// wrapper early and speak with the harness's voice.
fn defuse_wrappers(markdown: &str) -> String {
    const WRAPPERS: [&str; 2] = ["system-reminder", "hook_context"];
    let mut out = markdown.to_string();
    for tag in WRAPPERS {
        for opening in ["<", "</"] {
            let raw = format!("{opening}{tag}");
            if out.contains(&raw) {
                out = out.replace(&raw, &format!("&lt;{}{tag}", &opening[1..]));
            }
        }
    }
    out
}

/// The context of a SessionStart or UserPromptSubmit hook: asked of a
/// warm `memlog watch` when one listens, and assembled from the
/// projections in a worker thread at the same time. The warm answer (the
/// prompt embedded by the model) is preferred until [`WARM_WAIT`] from the
/// hook's start has passed; then whichever is ready is taken. The hook gives up
/// when its budget runs out (the workers die with the process).
struct ContextJob {
    result: mpsc::Receiver<(Source, Option<Result<Assembled>>)>,
    /// Whether a warm server was asked.
    warm: bool,
    steps: Steps,
}

/// Which worker an answer came from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Source {
    Warm,
    Local,
}

/// The steps a [`ContextJob`] finished and when (from the hook's start):
/// hooks.log says where a skipped or slow injection spent its time.
#[derive(Clone)]
struct Steps {
    started: Instant,
    done: std::sync::Arc<std::sync::Mutex<Vec<(&'static str, Duration)>>>,
}

impl Steps {
    fn new(started: Instant) -> Steps {
        Steps {
            started,
            done: Default::default(),
        }
    }

    fn done(&self, step: &'static str) {
        if let Ok(mut steps) = self.done.lock() {
            steps.push((step, self.started.elapsed()));
        }
    }

    /// "started 4 ms, opened the index 9 ms, …": each step's end.
    fn describe(&self) -> String {
        let Ok(steps) = self.done.lock() else {
            return String::new();
        };
        steps
            .iter()
            .map(|(step, at)| format!("{step} {} ms", at.as_millis()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A hook whose context took longer than this says where the time went
/// in hooks.log.
const SLOW_CONTEXT: Duration = Duration::from_millis(100);

/// How long from a hook's start a warm server's answer is waited for even
/// when this process's own is ready: the warm one ranks with the model's
/// embedding of the prompt. Past it, the first answer is taken: a loaded
/// machine, or a server busy embedding a catch-up, slows the server's
/// answer, and waiting half the budget for it put the prompt hook at
/// 150 ms under load (a field test).
const WARM_WAIT: Duration = Duration::from_millis(60);

impl ContextJob {
    fn start(
        repo: &Repo,
        event: HookEvent,
        payload: &Payload,
        started: Instant,
        budget: Duration,
    ) -> ContextJob {
        let request = ContextRequest {
            event: event.as_str().to_string(),
            prompt: payload.prompt.clone().unwrap_or_default(),
            session: payload.session_id.clone().unwrap_or_default(),
            query_vector: None,
            build: warm::build(),
        };
        let (tx, rx) = mpsc::channel();
        let steps = Steps::new(started);
        steps.done("started");
        // A running watcher catches the index up itself. Only a prompt is
        // worth asking it about (it ranks with the prompt's embedding): a
        // briefing uses no vector, and asking one busy indexing the session
        // that just ended cost SessionStart 130 ms (a field test).
        let watched = warm::socket_path(repo).exists();
        let warm = watched && event == HookEvent::UserPromptSubmit;
        if warm {
            let (place, request, tx, steps) =
                (repo.place(), request.clone(), tx.clone(), steps.clone());
            std::thread::spawn(move || {
                let repo = place.into_repo();
                let remaining = budget.saturating_sub(started.elapsed());
                let answer = warm::ask(&repo, &request, remaining).map(Ok);
                steps.done("asked the warm server");
                let _ = tx.send((Source::Warm, answer));
            });
        }
        let (place, log) = (repo.place(), steps.clone());
        std::thread::spawn(move || {
            // The index is closed after the answer is sent, not before:
            // the hook prints the answer and exits meanwhile.
            let mut opened = None;
            let result = (|| -> Result<Assembled> {
                let repo = place.into_repo();
                let p = opened.insert(projections_for_hook(
                    &repo,
                    &request.session,
                    !watched,
                    &steps,
                )?);
                let a = answer(&repo, p, &request)?;
                steps.done("ranked and assembled");
                Ok(a)
            })();
            let _ = tx.send((Source::Local, Some(result)));
            drop(opened);
        });
        ContextJob {
            result: rx,
            warm,
            steps: log,
        }
    }

    /// The assembled context and the path it took ("warm" or "local"),
    /// or an error once the budget is spent.
    fn wait(
        self,
        layout: &Layout,
        event: HookEvent,
        started: Instant,
        budget: Duration,
    ) -> Result<(Assembled, &'static str)> {
        let end = started + budget;
        let warm_until = started + WARM_WAIT.min(budget);
        let mut warm_pending = self.warm;
        let mut local: Option<Result<Assembled>> = None;
        let taken = loop {
            let until = match (&local, warm_pending) {
                (Some(_), true) => warm_until,
                _ => end,
            };
            match self
                .result
                .recv_timeout(until.saturating_duration_since(Instant::now()))
            {
                Ok((Source::Warm, Some(answer))) => break Some((answer, "warm")),
                Ok((Source::Warm, None)) => warm_pending = false,
                Ok((Source::Local, answer)) => local = answer,
                // the warm server's share is spent, or every worker is done
                Err(mpsc::RecvTimeoutError::Timeout) if Instant::now() < end => {
                    warm_pending = false
                }
                Err(_) => break None,
            }
            if !warm_pending && let Some(answer) = local.take() {
                break Some((answer, "local"));
            }
        };
        // An answer that was ready only when recording the payload had
        // already spent the budget (a slow disk, a loaded machine) comes
        // too late all the same: past its budget a hook injects nothing.
        let taken = taken.filter(|_| Instant::now() <= end);
        let Some((answer, path)) = taken else {
            bail!(
                "injection skipped: over the {} ms budget (hooks.inject_budget_ms); steps done: {}",
                budget.as_millis(),
                self.steps.describe()
            );
        };
        if started.elapsed() > SLOW_CONTEXT {
            log_error(
                Some(layout),
                event.as_str(),
                &format!("slow context: {}", self.steps.describe()),
                started,
            );
        }
        Ok((answer?, path))
    }
}

/// Starts `memlog watch --idle-exit N` in the background, detached from
/// the hook's process group, when `hooks.warm_watcher_idle_minutes` asks
/// for it and no warm server answers yet. Best effort: a hook never fails
/// for it.
fn start_warm_watcher(repo: &Repo) {
    let minutes = repo.config.hooks.warm_watcher_idle_minutes;
    if minutes == 0 || warm::answers(repo) {
        return;
    }
    background::spawn(
        repo,
        &["watch", "--idle-exit", &minutes.to_string()],
        Priority::Normal,
    );
}

/// Whether a memlog command printed personal memory while the tool call
/// being recorded ran: after the session's journal was last written, which
/// is before the call began ([`crate::shown`]).
fn printed_personal_during_call(repo: &Repo, session: &str) -> bool {
    let Ok(journal) = memlog_store::journal::Journal::new(&repo.journal_dir(), session) else {
        return false;
    };
    std::fs::metadata(journal.path())
        .and_then(|m| m.modified())
        .is_ok_and(|before| crate::shown::since(repo, before))
}

/// At SessionStart, seals orphaned journals (of sessions that ended
/// without sealing, idle for `hooks.seal_idle_minutes`) in a background
/// `memlog seal --idle`: sealing commits and syncs, which the agent's
/// first prompt must not wait for. Only a listing of the journals here.
fn seal_idle_in_background(repo: &Repo, current: Option<&str>) {
    let minutes = repo.config.hooks.seal_idle_minutes;
    let idle = Duration::from_secs(minutes * 60);
    let orphaned = memlog_store::journal::list(&repo.journal_dir())
        .unwrap_or_default()
        .iter()
        .any(|j| {
            Some(j.session.as_str()) != current
                && j.modified
                    .and_then(|m| m.elapsed().ok())
                    .is_some_and(|age| age >= idle)
        });
    if orphaned {
        background::spawn(
            repo,
            &["seal", "--idle", &format!("{minutes}m")],
            Priority::Low,
        );
    }
}

/// Seals `session`'s journal, in a worker the hook waits for until
/// [`SESSION_END_SEAL`]; past it (a ref contended by other sealers), a
/// background `memlog seal --session` takes over, and the worker dies with
/// the hook, which loses nothing: the ref moves by compare-and-swap, and
/// the journal, whose lock the background seal waits for, is removed only
/// once sealed.
fn seal_session(repo: &Repo, session: &str, started: Instant) -> Result<bool> {
    let (tx, rx) = mpsc::channel();
    let place = repo.place();
    let which = JournalSelection::Session(session.to_string());
    std::thread::spawn(move || {
        let repo = place.into_repo();
        let _ = tx.send(seal_journals(&repo, &which).map(|_| ()));
    });
    match rx.recv_timeout(SESSION_END_SEAL.saturating_sub(started.elapsed())) {
        Ok(sealed) => {
            sealed?;
            Ok(true)
        }
        Err(_) => {
            background::spawn(repo, &["seal", "--session", session], Priority::Normal);
            Ok(false)
        }
    }
}

/// A fresh clone's first sessions: `git clone` fetched the team's memory
/// (`refs/remotes/origin/memlog`) and memlog took none of it, so nothing is
/// briefed until a sync, which only the user may run (memlog never picks
/// a remote by itself). Looked for only while there is no local log.
fn memory_not_taken(repo: &Repo) -> Vec<String> {
    if !matches!(memlog_store::log::Log::new(repo).tip(), Ok(None)) {
        return Vec::new();
    }
    // a log deleted by hand is put back, not taken for a fresh clone's
    if matches!(memlog_store::lost_ref::put_back(repo), Ok(Some(_))) {
        return Vec::new();
    }
    memlog_store::remote::unmerged_tracking_refs(repo)
        .unwrap_or_default()
        .into_iter()
        .map(|(remote, tracking)| {
            format!(
                "This clone has not taken the team's memory yet: {remote} has it ({tracking}). \
                 `memlog sync {remote}` brings it, and the next session is briefed from it."
            )
        })
        .collect()
}

/// Whether `session` (as recorded) has a journal here: something of it was
/// recorded and not sealed yet.
/// Whether the memlog ref's last commit sealed `session` with its end, a
/// moment ago. (A session sealed early, by `seal --all`, has no end yet,
/// and keeps the one that comes.)
fn sealed_a_moment_ago(repo: &Repo, session: &str) -> bool {
    const MOMENT: i64 = 10;
    let log = memlog_store::log::Log::new(repo);
    let Ok(Some(tip)) = log.tip() else {
        return false;
    };
    let Ok(commit) = log.commit(tip) else {
        return false;
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    if commit.session.as_deref() != Some(session) || (now - commit.commit_time).abs() > MOMENT {
        return false;
    }
    log.added_segments(&commit)
        .unwrap_or_default()
        .iter()
        .filter_map(|seg| log.read_segment(seg, false).ok())
        .flat_map(|(events, _)| events)
        .any(|e| e.kind == memlog_format::Kind::SessionEnd && e.session == session)
}

fn recorded_here(repo: &Repo, session: &str) -> bool {
    memlog_store::journal::Journal::new(&repo.journal_dir(), session)
        .is_ok_and(|j| j.path().exists())
}

/// Whether another agent runs `agent`'s hooks (it reads `agent`'s settings
/// too) in a repository where memlog's hooks for that agent are installed:
/// those record the session, and these would record it twice.
fn runs_elsewhere(agent: &dyn Agent, repo: &Repo) -> bool {
    let (Some(runner), Some(work_tree)) = (agent.hooks_run_by(), &repo.work_tree) else {
        return false;
    };
    work_tree
        .join(runner.hook_settings().project_file)
        .is_file()
}

/// Starts `memlog index` in the background unless a writer runs already:
/// a hook never indexes in the foreground.
fn index_in_background(repo: &Repo) -> Result<()> {
    if WriterLock::try_acquire(repo)?.is_some() {
        background::spawn(repo, &["index"], Priority::Low);
    }
    Ok(())
}

/// The projections as they are, with what the log holds beyond them read
/// past their watermark (a session sealed a moment ago, other sessions'
/// journals; not the asking session's own, which its context leaves out:
/// [`Reach::Prompt`]), or, when there is no usable index, those alone. A
/// forget acknowledged before this prompt holds even when the index has
/// not applied it. When sealed sessions are missing from the index and
/// `catch_up` is set (no warm `memlog watch`, which indexes them itself),
/// a background `memlog index` is started (unless one runs already): a
/// hook never indexes in the foreground.
fn projections_for_hook(
    repo: &Repo,
    asking: &str,
    catch_up: bool,
    steps: &Steps,
) -> Result<Projections> {
    // The vectors are opened for reading a few rows (the best full-text
    // hits' vectors make the query vector): no graph, no key map.
    let (mut p, built) = match Projections::open(repo) {
        Ok(mut p) => {
            p.load_vectors_as(VectorAccess::Scan);
            (p, true)
        }
        Err(_) => (Projections::empty()?, false),
    };
    steps.done("opened the index");
    p.read_unindexed(
        repo,
        Reach::Prompt {
            asking: Some(asking),
        },
    )?;
    steps.done("read what the index lacks");
    if catch_up && (!built || p.unindexed().is_behind()) {
        index_in_background(repo)?;
        steps.done("started an index");
    }
    Ok(p)
}

/// Appends a line to `<memlog dir>/hooks.log` (rotated past 1 MiB). Never
/// fails: a hook has nowhere else to report.
pub fn log_error(layout: Option<&Layout>, event: &str, message: &str, started: Instant) {
    let Some(layout) = layout else { return };
    // a repository deleted meanwhile has no log to write, and gets no
    // ghost `.git/memlog` for one
    if !layout.dir().parent().is_some_and(Path::is_dir) {
        return;
    }
    append_log(&layout.hooks_log(), event, message, started);
    // every user's hooks of a shared repository write it
    let _ = layout.sharing().apply(&layout.hooks_log());
}

/// What hooks.log says that is no failure: injection skipped or slow, a
/// doubled hook answered once, a recall (not the session) unrecorded.
const NOT_FAILURES: [&str; 4] = [
    "nothing injected",
    "slow context",
    "another memlog hook",
    "recall not recorded",
];

/// How often hooks failed in the last `days` days (a full disk, a
/// read-only store, an error), read back from hooks.log, and the last
/// failure's line: the events of those hooks are not in memory, and
/// nothing else tells the user (a field test's session on a full disk left
/// doctor saying all was fine once space was back).
pub fn recent_failures(layout: &Layout, days: i64) -> (usize, Option<String>) {
    let Ok(text) = std::fs::read_to_string(layout.hooks_log()) else {
        return (0, None);
    };
    let since = time::to_ms(&time::now()) - days * 86_400_000;
    let mut count = 0;
    let mut last = None;
    for line in text.lines() {
        let mut fields = line.splitn(4, ' ');
        let (Some(ts), Some(_event), Some(_ms), Some(message)) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        if time::to_ms(ts) < since || NOT_FAILURES.iter().any(|n| message.starts_with(n)) {
            continue;
        }
        count += 1;
        last = Some(line.to_string());
    }
    (count, last)
}

/// The user-level hooks log: what hooks said where there is no repository.
pub fn user_log() -> std::path::PathBuf {
    memlog_indexer::embed::memlog_home().join("hooks.log")
}

/// Appends one line to the hooks log `path`, which is moved aside to
/// `<path>.1` past [`MAX_LOG`].
fn append_log(path: &Path, event: &str, message: &str, started: Instant) {
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if std::fs::metadata(path).is_ok_and(|m| m.len() > MAX_LOG) {
        let mut rotated = path.as_os_str().to_owned();
        rotated.push(".1");
        let _ = std::fs::rename(path, rotated);
    }
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        // An error may quote the payload: no secret goes to disk this way.
        let message = memlog_format::privacy::redact_message(message);
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
