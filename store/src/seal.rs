//! Sealing: turning a session's events into segments and one commit on the
//! memlog ref.
//!
//! The ref is updated with a compare-and-swap from the tip the commits were
//! built on; if another sealer moved it meanwhile, the work is redone on the
//! new tip. Objects and the ref are fsynced before a journal is retired, so a
//! crash at any point loses nothing: events already sealed are recognised by
//! id and skipped, so sealing again is idempotent. HEAD, the index, the
//! working tree and the checked-out branch are never touched.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use gix::ObjectId;
use gix::bstr::BString;
use gix::objs::tree::EntryKind;
use gix::refs::Target;
use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
use memlog_format::Event;
use memlog_format::capture::{self, Captured};
use memlog_format::scope::Scope;
use memlog_format::segment::{LineProblem, Segment};
use serde::Serialize;
use serde_json::Value;

use crate::journal::{self, Journal, LockedJournal, sync_dir};
use crate::log::{EVENTS_TRAILER, Log, SESSION_TRAILER};
use crate::sessions::{sealed_events, sealed_ids};
use crate::{Error, Repo, Result, objects};

/// How long a seal keeps rebuilding on a moved tip (or waiting for the ref
/// lock) before giving up.
const MAX_WAIT: Duration = Duration::from_secs(20);

/// Events of one session to seal.
#[derive(Clone, Debug)]
pub struct SealRequest {
    /// The session.
    pub session: String,
    /// Its events, in order.
    pub events: Vec<Event>,
}

/// What sealing one session did.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Sealed {
    /// The session.
    pub session: String,
    /// The new commit, or `None` when every event was already sealed.
    pub commit: Option<String>,
    /// Events added by this seal.
    pub added: usize,
    /// Events skipped because they were already in the log.
    pub duplicates: usize,
    /// Whether these are the session's personal events, sealed on the
    /// personal ref (FORMAT.md §9).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub personal: bool,
}

/// Seals each request as one commit (requests with nothing new get none), in
/// order, and moves the ref once to the last of them. Personal events
/// (FORMAT.md §9) go to the personal ref, as commits of their own.
pub fn seal(repo: &Repo, requests: &[SealRequest]) -> Result<Vec<Sealed>> {
    seal_as(repo, requests, false)
}

/// Seals imported sessions: like [`seal`], except that each request first
/// loses what its session already holds by capture identity
/// ([`memlog_format::capture`]): events a hook recorded, sealed or still in
/// the session's journal, are not imported a second time. Those count as
/// duplicates.
pub fn seal_import(repo: &Repo, requests: &[SealRequest]) -> Result<Vec<Sealed>> {
    seal_as(repo, requests, true)
}

fn seal_as(repo: &Repo, requests: &[SealRequest], reconcile: bool) -> Result<Vec<Sealed>> {
    for r in requests {
        // Every way in checks session ids by one rule (imports too).
        crate::journal::validate_session(&r.session)?;
    }
    // Each event goes where its scope says; a request without personal
    // events is sealed exactly as before personal scope existed.
    let (shared, personal) = split_by_scope(requests);
    let _history = crate::history_lock::shared(repo)?;
    let mut outcomes = seal_scope(repo, Scope::Shared, &shared, reconcile)?;
    if !personal.is_empty() {
        let mut mine = seal_scope(repo, Scope::Personal, &personal, reconcile)?;
        mine.iter_mut().for_each(|s| s.personal = true);
        outcomes.extend(mine);
    }
    Ok(outcomes)
}

/// The requests' shared events, and their personal ones (only requests
/// that have some).
fn split_by_scope(requests: &[SealRequest]) -> (Vec<SealRequest>, Vec<SealRequest>) {
    let mut shared = Vec::with_capacity(requests.len());
    let mut personal = Vec::new();
    for r in requests {
        let (mine, ours): (Vec<Event>, Vec<Event>) = r
            .events
            .iter()
            .cloned()
            .partition(|e| Scope::of(&e.meta) == Scope::Personal);
        if !mine.is_empty() {
            personal.push(SealRequest {
                session: r.session.clone(),
                events: mine,
            });
            if ours.is_empty() {
                continue;
            }
        }
        shared.push(SealRequest {
            session: r.session.clone(),
            events: ours,
        });
    }
    (shared, personal)
}

/// Seals requests onto the ref of `scope` (the caller holds the history
/// lock).
fn seal_scope(
    repo: &Repo,
    scope: Scope,
    requests: &[SealRequest],
    reconcile: bool,
) -> Result<Vec<Sealed>> {
    let log = Log::of(repo, scope);
    // where the log's ref and objects are (the personal store for personal)
    let store = log.store();
    let sessions: HashSet<String> = requests.iter().map(|r| r.session.clone()).collect();
    let mut last_error = None;
    let started = std::time::Instant::now();
    let mut attempt = 0u32;
    while attempt == 0 || started.elapsed() < MAX_WAIT {
        if attempt > 0 {
            std::thread::sleep(backoff(attempt));
        }
        attempt += 1;
        crate::ref_lock::remove_stale(store, log.ref_name());
        log.check_ours()?;
        let tip = match log.tip()? {
            // a ref deleted by hand: seal on top of it, not a new history
            None if log.scope() == memlog_format::scope::Scope::Shared => {
                crate::lost_ref::put_back(store)?
            }
            tip => tip,
        };
        let known = match tip {
            Some(t) => sealed_ids(repo, &log, t, &sessions)?,
            None => HashMap::new(),
        };
        let mut staging = store.git()?.clone().with_object_memory();
        // Reconciled on every attempt: a seal that moved the tip meanwhile
        // may have brought the very events an import would add.
        let (reconciled, left_out) = if reconcile {
            reconciled(repo, requests, &sessions)?
        } else {
            (Vec::new(), Vec::new())
        };
        let chosen = if reconcile { &reconciled[..] } else { requests };
        let (new_tip, mut outcomes) = build_commits(&staging, tip, chosen, &known)?;
        for (outcome, n) in outcomes.iter_mut().zip(&left_out) {
            outcome.duplicates += n;
        }
        if new_tip == tip {
            return Ok(outcomes);
        }
        let Some(new_tip) = new_tip else {
            return Ok(outcomes);
        };
        let objects = staging.objects.take_object_memory().unwrap_or_default();
        match publish(
            store,
            log.ref_name(),
            &objects,
            tip,
            new_tip,
            "memlog: seal",
        ) {
            Ok(()) => return Ok(outcomes),
            // Another writer moved the ref or holds its lock: read the new
            // tip and try again.
            Err(e) if is_contention(&e) => last_error = Some(e),
            // Anything else (a missing identity, a full disk) will not go
            // away by waiting: fail at once.
            Err(e) => return Err(e),
        }
    }
    Err(match last_error {
        Some(e) if !is_contention(&e) => e,
        _ => Error::Contention {
            ref_name: log.ref_name().to_string(),
            attempts: attempt,
            holder: crate::ref_lock::holder(store, log.ref_name()),
        },
    })
}

/// Whether a failed ref update lost a race (the ref moved, or its lock is
/// held), which a retry on the new tip resolves.
pub(crate) fn is_contention(e: &Error) -> bool {
    matches!(e, Error::RefRace { .. })
}

/// The requests without what their sessions already hold (sealed in
/// either log, or in journals), and how many events each lost.
fn reconciled(
    repo: &Repo,
    requests: &[SealRequest],
    sessions: &HashSet<String>,
) -> Result<(Vec<SealRequest>, Vec<usize>)> {
    let mut held: HashMap<String, Vec<Event>> = HashMap::new();
    for scope in [Scope::Shared, Scope::Personal] {
        let log = Log::of(repo, scope);
        if let Some(t) = log.tip()? {
            for (session, events) in sealed_events(repo, &log, t, sessions)? {
                held.entry(session).or_default().extend(events);
            }
        }
    }
    let dir = repo.journal_dir();
    for j in journal::list(&dir)? {
        if sessions.contains(&j.session) {
            let (events, _) = Journal::new(&dir, &j.session)?.read()?;
            held.entry(j.session).or_default().extend(events);
        }
    }
    let mut out = Vec::with_capacity(requests.len());
    let mut left_out = Vec::with_capacity(requests.len());
    for request in requests {
        let captured = Captured::of(held.get(&request.session).into_iter().flatten());
        let (events, n) = capture::reconcile(captured, request.events.clone());
        out.push(SealRequest {
            session: request.session.clone(),
            events,
        });
        left_out.push(n);
    }
    Ok((out, left_out))
}

pub(crate) fn backoff(attempt: u32) -> Duration {
    // Jitter from the clock's sub-second part keeps racing sealers apart.
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let base = 1 + attempt.min(20) as u64;
    Duration::from_micros(base * 1000 + (nanos as u64 % (base * 1000)))
}

/// Writes blobs, trees and commits for the requests on top of `tip` into
/// `git`, whose object writes stay in memory. Returns the new tip and the
/// outcomes.
fn build_commits(
    git: &gix::Repository,
    tip: Option<ObjectId>,
    requests: &[SealRequest],
    known: &HashMap<String, HashSet<String>>,
) -> Result<(Option<ObjectId>, Vec<Sealed>)> {
    let mut editor = match tip {
        Some(t) => {
            let tree = git
                .find_commit(t)
                .map_err(Error::git)?
                .tree_id()
                .map_err(Error::git)?;
            git.edit_tree(tree).map_err(Error::git)?
        }
        None => git.empty_tree().edit().map_err(Error::git)?,
    };
    let (name, email) = identity(git);
    let mut parent = tip;
    let mut outcomes = Vec::with_capacity(requests.len());
    let mut seen_in_batch: HashMap<&str, HashSet<&str>> = HashMap::new();
    for request in requests {
        let known_ids = known.get(&request.session);
        let batch_ids = seen_in_batch.entry(&request.session).or_default();
        let fresh: Vec<&Event> = request
            .events
            .iter()
            .filter(|e| {
                !known_ids.is_some_and(|k| k.contains(e.id.as_str()))
                    && batch_ids.insert(e.id.as_str())
            })
            .collect();
        let duplicates = request.events.len() - fresh.len();
        if fresh.is_empty() {
            outcomes.push(Sealed {
                session: request.session.clone(),
                commit: None,
                added: 0,
                duplicates,
                personal: false,
            });
            continue;
        }
        for segment in Segment::encode(fresh.iter().copied()) {
            let blob = git.write_blob(&segment.bytes).map_err(Error::git)?.detach();
            editor
                .upsert(segment.path().as_str(), EntryKind::Blob, blob)
                .map_err(Error::git)?;
        }
        let tree = editor.write().map_err(Error::git)?.detach();
        let start = fresh.iter().map(|e| e.ts.as_str()).min().unwrap_or("");
        let author_time = memlog_format::time::parse(start)
            .map(|t| t.as_second())
            .unwrap_or_else(|_| jiff::Timestamp::now().as_second());
        let now = jiff::Timestamp::now().as_second();
        let commit = gix::objs::Commit {
            tree,
            parents: parent.into_iter().collect(),
            author: signature(&name, &email, author_time),
            committer: signature(&name, &email, now),
            encoding: None,
            message: commit_message(&request.session, &fresh).into(),
            extra_headers: Vec::new(),
        };
        let id = git.write_object(&commit).map_err(Error::git)?.detach();
        parent = Some(id);
        outcomes.push(Sealed {
            session: request.session.clone(),
            commit: Some(id.to_string()),
            added: fresh.len(),
            duplicates,
            personal: false,
        });
    }
    Ok((parent, outcomes))
}

/// Makes the staged `objects` durable, then moves `ref_name` (the memlog
/// ref, or the personal one) from `expected` to `new` with compare-and-swap
/// and fsyncs it. The one way a log's ref is moved (seal, sync, purge).
/// Fails, leaving the ref alone, when the ref is no longer at `expected`.
pub(crate) fn publish(
    repo: &Repo,
    ref_name: &str,
    objects: &gix::odb::memory::Storage,
    expected: Option<ObjectId>,
    new: ObjectId,
    reflog_message: &str,
) -> Result<()> {
    if let Some(worktree) = crate::ref_lock::checked_out(repo, ref_name) {
        return Err(Error::CheckedOut {
            ref_name: ref_name.to_string(),
            worktree: worktree.display().to_string(),
        });
    }
    let keep = objects::persist(repo, objects)?;
    let updated = update_ref(repo, ref_name, expected, new, reflog_message);
    if let Some(keep) = keep {
        // The ref (or nothing, on failure) protects the pack from now on.
        let _ = std::fs::remove_file(keep);
    }
    updated?;
    sync_ref(repo, ref_name)
}

pub(crate) fn identity(git: &gix::Repository) -> (BString, BString) {
    match git.committer() {
        Some(Ok(sig)) => (sig.name.to_owned(), sig.email.to_owned()),
        _ => (
            crate::repo::FALLBACK_NAME.into(),
            crate::repo::FALLBACK_EMAIL.into(),
        ),
    }
}

pub(crate) fn signature(name: &BString, email: &BString, seconds: i64) -> gix::actor::Signature {
    gix::actor::Signature {
        name: name.clone(),
        email: email.clone(),
        time: gix::date::Time { seconds, offset: 0 },
    }
}

fn update_ref(
    repo: &Repo,
    ref_name: &str,
    expected: Option<ObjectId>,
    new: ObjectId,
    reflog_message: &str,
) -> Result<()> {
    let name = ref_name
        .try_into()
        .map_err(|e| Error::invalid(format!("ref {ref_name:?}"), format!("{e}")))?;
    let edit = RefEdit {
        change: Change::Update {
            log: LogChange {
                mode: RefLog::AndReference,
                force_create_reflog: true,
                message: reflog_message.into(),
            },
            expected: match expected {
                Some(t) => PreviousValue::MustExistAndMatch(Target::Object(t)),
                None => PreviousValue::MustNotExist,
            },
            new: Target::Object(new),
        },
        name,
        deref: false,
    };
    let _edit = crate::ref_lock::Edit::begin(repo, ref_name)?;
    repo.git()?.edit_reference(edit).map_err(|e| {
        // the ref moved (a conflict) or its lock is held (retryable)
        if e.can_retry() || e.is_conflict() {
            Error::RefRace {
                ref_name: ref_name.to_string(),
                message: e.to_string(),
            }
        } else {
            Error::git(e)
        }
    })?;
    share_ref(repo, ref_name);
    crate::lost_ref::remember(repo, ref_name, new);
    Ok(())
}

/// Gives the ref's file and its reflog, and the directories gix made for
/// them, a shared repository's modes: gix writes them with the umask's, and
/// under umask 077 another user of the group could not read the log
/// ("Could not read reference", field test 12b). Best-effort: the ref has
/// moved.
fn share_ref(repo: &Repo, ref_name: &str) {
    let sharing = repo.sharing();
    if !sharing.is_shared() {
        return;
    }
    for path in [
        repo.common_dir.join(ref_name),
        repo.common_dir.join("logs").join(ref_name),
    ] {
        for made in path.ancestors().take_while(|p| *p != repo.common_dir) {
            let _ = sharing.apply(made);
        }
    }
}

fn sync_ref(repo: &Repo, name: &str) -> Result<()> {
    for path in [
        repo.common_dir.join(name),
        repo.common_dir.join("logs").join(name),
    ] {
        if let Ok(f) = std::fs::File::open(&path) {
            f.sync_all().map_err(|e| Error::io(&path, e))?;
        }
        if let Some(dir) = path.parent().filter(|d| d.exists()) {
            sync_dir(dir).map_err(|e| Error::io(dir, e))?;
        }
    }
    Ok(())
}

/// A readable summary of a session for its commit message, ending in the
/// `Memlog-Session` and `Memlog-Events` trailers.
pub fn commit_message(session: &str, events: &[&Event]) -> String {
    let mut by_kind: BTreeMap<&str, usize> = BTreeMap::new();
    let mut tools: BTreeMap<&str, usize> = BTreeMap::new();
    let mut files: Vec<&str> = Vec::new();
    for e in events {
        *by_kind.entry(e.kind.as_str()).or_default() += 1;
        if let Some(t) = e.body.get("tool").and_then(Value::as_str) {
            *tools.entry(t).or_default() += 1;
        }
        for f in touched_files(e) {
            if !files.contains(&f) {
                files.push(f);
            }
        }
    }
    let kinds = by_kind
        .iter()
        .map(|(k, n)| format!("{n} {k}"))
        .collect::<Vec<_>>()
        .join(", ");
    // the first prompt, else the first text, else what kinds it holds ("1
    // forget"): `memlog log` and `git log --oneline` show it
    let subject = events
        .iter()
        .find(|e| e.is_users_prompt())
        .or_else(|| events.iter().find(|e| e.text().is_some()))
        .map(|e| e.headline(72))
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| {
            if kinds.is_empty() {
                "no events".into()
            } else {
                kinds.clone()
            }
        });
    let project = events.first().map(|e| e.project.as_str()).unwrap_or("");
    let first = events.iter().map(|e| e.ts.as_str()).min().unwrap_or("");
    let last = events.iter().map(|e| e.ts.as_str()).max().unwrap_or("");
    let mut body = vec![format!("Session {session} of {project}, {first} to {last}")];
    body.push(format!("{} events: {kinds}", events.len()));
    if !tools.is_empty() {
        let mut t: Vec<_> = tools.into_iter().collect();
        t.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        body.push(format!(
            "Tools: {}",
            t.iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if !files.is_empty() {
        let shown: Vec<&str> = files.iter().take(8).copied().collect();
        let more = files.len().saturating_sub(shown.len());
        let suffix = if more > 0 {
            format!(" (+{more} more)")
        } else {
            String::new()
        };
        body.push(format!("Files: {}{suffix}", shown.join(", ")));
    }
    format!(
        "{subject}\n\n{}\n\n{SESSION_TRAILER}: {session}\n{EVENTS_TRAILER}: {}\n",
        body.join("\n"),
        events.len()
    )
}

/// File paths an event names (tool inputs and metadata).
fn touched_files(event: &Event) -> Vec<&str> {
    let mut out = Vec::new();
    for container in ["input", "metadata"] {
        if let Some(Value::Object(m)) = event.body.get(container) {
            for key in ["file_path", "notebook_path", "path"] {
                if let Some(p) = m.get(key).and_then(Value::as_str) {
                    out.push(p);
                }
            }
        }
    }
    out
}

/// Which journals to seal.
#[derive(Clone, Debug)]
pub enum JournalSelection {
    /// One session's journal.
    Session(String),
    /// Every journal.
    All,
    /// Journals not written to for at least this long (orphans of sessions
    /// that ended without sealing).
    IdleFor(Duration),
}

fn waiting_file(repo: &Repo) -> std::path::PathBuf {
    repo.layout().dir().join("seal-waiting")
}

/// The sessions whose seal was refused because the log's branch was
/// checked out: after the tree switches away, the next seal (a session's
/// end, a note) takes them too, where they would wait for `memlog seal
/// --all` (field test 7).
pub fn waiting_sessions(repo: &Repo) -> Vec<String> {
    std::fs::read_to_string(waiting_file(repo))
        .map(|text| {
            text.lines()
                .filter(|l| !l.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn remember_waiting<'s>(repo: &Repo, known: &[String], refused: impl Iterator<Item = &'s str>) {
    let mut all: Vec<String> = known.to_vec();
    for s in refused {
        if !all.iter().any(|k| k == s) {
            all.push(s.to_string());
        }
    }
    let text: String = all.iter().map(|s| format!("{s}\n")).collect();
    let path = waiting_file(repo);
    let _ = std::fs::write(&path, text).and_then(|()| repo.sharing().apply(&path));
}

/// What sealing journals did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct JournalReport {
    /// What sealing each journal did.
    pub sealed: Vec<Sealed>,
    /// Journals with bad lines, kept here instead of deleted.
    pub quarantined: Vec<PathBuf>,
    /// Lines that could not be sealed: (session, problem).
    #[serde(skip)]
    pub problems: Vec<(String, LineProblem)>,
}

/// Seals the selected journals (one commit per session with new events) and
/// retires each journal once the ref update is durable.
pub fn seal_journals(repo: &Repo, which: &JournalSelection) -> Result<JournalReport> {
    let dir = repo.journal_dir();
    let journals: Vec<Journal> = match which {
        JournalSelection::Session(s) => vec![Journal::new(&dir, s)?],
        JournalSelection::All => journal::list(&dir)?
            .into_iter()
            .map(|j| Journal::new(&dir, &j.session))
            .collect::<Result<_>>()?,
        JournalSelection::IdleFor(age) => journal::list(&dir)?
            .into_iter()
            .filter(|j| {
                j.modified
                    .and_then(|m| m.elapsed().ok())
                    .is_some_and(|elapsed| elapsed >= *age)
            })
            .map(|j| Journal::new(&dir, &j.session))
            .collect::<Result<_>>()?,
    };
    // sessions a refused seal left waiting (the log's branch was checked
    // out) go with the next seal, whichever session asks for it
    let waiting = waiting_sessions(repo);
    let mut journals = journals;
    for session in &waiting {
        let j = Journal::new(&dir, session)?;
        if j.path().exists() && !journals.iter().any(|k| k.path() == j.path()) {
            journals.push(j);
        }
    }
    let mut locked: Vec<LockedJournal> = Vec::new();
    let sharing = repo.sharing();
    for j in journals {
        if let Some(l) = j.shared(sharing).lock_for_seal()? {
            locked.push(l);
        }
    }
    let requests: Vec<SealRequest> = locked
        .iter()
        .filter(|l| !l.events.is_empty())
        .map(|l| SealRequest {
            session: l.session.clone(),
            events: l.events.clone(),
        })
        .collect();
    let sealed = match seal(repo, &requests) {
        Err(e @ Error::CheckedOut { .. }) => {
            let sessions = requests.iter().map(|r| r.session.as_str());
            remember_waiting(repo, &waiting, sessions);
            return Err(e);
        }
        other => other?,
    };
    if !waiting.is_empty() {
        let _ = std::fs::remove_file(waiting_file(repo));
    }
    let mut report = JournalReport {
        sealed,
        ..Default::default()
    };
    for l in locked {
        report
            .problems
            .extend(l.problems.iter().map(|p| (l.session.clone(), p.clone())));
        if let Some(q) = l.retire()? {
            report.quarantined.push(q);
        }
    }
    Ok(report)
}

/// Whether `path` is inside memlog's directory (used by tests and fsck).
pub fn is_memlog_path(repo: &Repo, path: &Path) -> bool {
    path.starts_with(&repo.memlog_dir)
}
