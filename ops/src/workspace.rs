//! Opening the repository memlog works in, the projections (brought up to
//! date first), every live event, and recording drafts.

use std::path::{Path, PathBuf};

use memlog_format::{Draft, Event};
use memlog_indexer::lookup::{self, Stored, TimelineQuery};
use memlog_indexer::projection::Reach;
use memlog_indexer::{Error as IndexError, Projections};
use memlog_store::log::{journal_events, live_events};
use memlog_store::seal::{JournalSelection, seal_journals};
use memlog_store::view::View;
use memlog_store::{Recorder, Repo};

use crate::bail;
use crate::diag;
use crate::error::{Context, Result};

/// Opens the repository containing `dir`. A memlog ref deleted by hand is
/// put back first, and said ([`memlog_store::lost_ref`]): every command
/// then reads the log this clone had (doctor, fsck and diff said "no
/// memory yet").
pub fn open(dir: &Path) -> Result<Repo> {
    let repo = Repo::discover(dir)?;
    if let Ok(Some(tip)) = memlog_store::lost_ref::put_back(&repo) {
        diag::note(format_args!(
            "the memlog ref was gone (deleted by hand?): put back at {}, where this clone last \
             moved it; `memlog forget` and `memlog purge` take memory out",
            &tip.to_string()[..12]
        ));
    }
    Ok(repo)
}

/// A session id as the recorder stores it (a secret in it redacted,
/// [`memlog_store::Recorder::session_id`]), so that a command given the id
/// as typed finds what was recorded under it; the id as given when the
/// store's key cannot be read.
pub fn recorded_session(repo: &Repo, session: &str) -> String {
    memlog_store::Recorder::new(repo)
        .map(|r| r.session_id(session))
        .unwrap_or_else(|_| session.to_string())
}

/// Opens the repository and makes sure memlog's directories exist.
pub fn open_for_writing(dir: &Path) -> Result<Repo> {
    let repo = open(dir)?;
    repo.ensure_dirs()?;
    Ok(repo)
}

/// How the projections name a file: relative to the repository root it
/// lies under (any worktree), else as written (docs/DESIGN.md §10).
pub fn file_name(repo: &Repo, path: &str) -> String {
    repo.work_roots().file_name(path, None)
}

/// An entity key as a person may type it: `file:PATH` and a bare absolute
/// path become the file entity of that path ([`file_name`]); other keys are
/// unchanged (a bare relative path is tried as a file by the resolver).
pub fn entity_key(repo: &Repo, key: &str) -> String {
    match key.strip_prefix("file:") {
        Some(path) => format!("file:{}", file_name(repo, path)),
        None if key.starts_with('/') => format!("file:{}", file_name(repo, key)),
        None => key.to_string(),
    }
}

/// Every live event: sealed ones and, unless `sealed_only`, those still in
/// journals; forgotten events removed; ordered by time.
pub fn live(repo: &Repo, sealed_only: bool) -> Result<Vec<Event>> {
    // The shared log and this machine's personal one.
    let (mut events, problems) = View::read(repo)
        .and_then(|view| view.events(repo))
        .context("reading the memlog ref")?;
    for p in &problems {
        diag::warning(format_args!(
            "segment {}: {} (run `memlog fsck`)",
            p.path, p.problem
        ));
    }
    if !sealed_only {
        events.extend(journal_events(repo).context("reading journals")?);
    }
    Ok(live_events(events))
}

/// The projections of a store whose index cannot be written (a full disk,
/// a read-only store, or in a repository several users share, another
/// user's files): the index as it is, if it opens, or none, and the log
/// beyond it read directly. Said once, with why. Never a rebuild: another
/// user's index is not damaged, and rebuilding it each time the other had
/// touched it was each user's every read (field test 12b).
fn read_without_writing(repo: &Repo, why: &IndexError) -> Result<Projections> {
    match why {
        IndexError::NotPermitted { .. } => {
            diag::note(format_args!("{why}; reading the log directly"))
        }
        _ => diag::note(format_args!(
            "the index cannot be written here ({why}): reading the log beyond it directly"
        )),
    }
    let mut p = match Projections::open(repo) {
        Ok(p) => p,
        Err(_) => Projections::empty()?,
    };
    p.read_unindexed(repo, Reach::Everything)?;
    Ok(p)
}

/// How long a read with no index to read waits for another process
/// building it before it fails naming that process: never without a bound
/// (a watcher's or a test's lock held for good hung `memlog reflect`).
pub const WRITER_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// The projections, brought up to date first when they lag behind the log
/// (a ref read and a few stats when they do not). If another process is
/// updating them, what is there is used, and what the log holds beyond it
/// is read with it (`Unindexed`): every read reflects every acknowledged
/// write either way.
pub fn projections(repo: &Repo) -> Result<Projections> {
    if let Ok(p) = Projections::open(repo)
        && p.is_fresh(repo)?
    {
        return Ok(p);
    }
    let report = match Projections::try_update(repo) {
        Ok(Some(report)) => report,
        Ok(None) => match Projections::open(repo) {
            Ok(mut p) => {
                p.read_unindexed(repo, Reach::Everything)?;
                return Ok(p);
            }
            // nothing to read yet: wait for the other writer, a while
            Err(_) => match Projections::update_within(repo, WRITER_WAIT) {
                Ok(report) => report,
                Err(e) if e.is_unwritable() => return read_without_writing(repo, &e),
                Err(e) => return Err(e.into()),
            },
        },
        Err(e) if e.is_unwritable() => return read_without_writing(repo, &e),
        Err(e) => return Err(e.into()),
    };
    if report.rebuilt
        && let Some(reason) = &report.reason
        && reason != memlog_indexer::projection::NOT_BUILT
    {
        diag::note(format_args!("index rebuilt: {reason}"));
    }
    for w in &report.warnings {
        diag::warning(w);
    }
    match Projections::open(repo) {
        Ok(mut p) => {
            // written since the update read the log
            p.read_unindexed(repo, Reach::Everything)?;
            Ok(p)
        }
        Err(IndexError::Corrupt { what, message }) => {
            bail!("{what} is damaged ({message}); run `memlog rebuild`")
        }
        Err(IndexError::Outdated { what, message }) => {
            bail!("{what} was made by another version of memlog ({message}); run `memlog rebuild`")
        }
        Err(e) => Err(e.into()),
    }
}

/// Every live event of these kinds, in time order, as the index holds them
/// (up to a million).
pub fn of_kinds(p: &Projections, kinds: &[&str]) -> Result<Vec<Stored>> {
    let kinds: Vec<String> = kinds.iter().map(|k| k.to_string()).collect();
    Ok(lookup::timeline(
        p,
        &TimelineQuery {
            session: None,
            since_ms: None,
            until_ms: None,
            kinds: &kinds,
            latest: false,
            limit: 1_000_000,
        },
    )?)
}

/// Whether one of the events `ids` names is personal: what rests on a
/// personal event (a rule, a concept, a fact) is personal too, and never
/// leaves this machine.
pub fn rests_on_personal(p: &Projections, ids: &[memlog_format::EventId]) -> Result<bool> {
    for id in ids {
        if let Some(row) = lookup::event(p, id)?
            && memlog_format::scope::is_personal(&row.event.meta)
        {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The events of index rows, exactly as logged: a row that does not give
/// back its event (`verified` false: a damaged database) is replaced by the
/// event read from the log.
pub fn exact_events(repo: &Repo, rows: Vec<Stored>) -> Result<Vec<Event>> {
    if rows.iter().all(|s| s.verified) {
        return Ok(rows.into_iter().map(|s| s.event).collect());
    }
    let logged = live(repo, false)?;
    Ok(rows
        .into_iter()
        .map(|s| {
            logged
                .iter()
                .find(|e| e.id == s.event.id)
                .cloned()
                .unwrap_or(s.event)
        })
        .collect())
}

/// Records drafts and, when `seal` is set, seals their sessions into
/// commits at once (a note, a task change, extracted facts: small sessions
/// of their own). Privacy warnings go to stderr. Returns the events as
/// stored and the commit of the first session, if sealed.
pub fn record(repo: &Repo, drafts: Vec<Draft>, seal: bool) -> Result<(Vec<Event>, Option<String>)> {
    // a journal holds one session: the drafts of each, in the order given
    let mut sessions: Vec<(String, Vec<(usize, Draft)>)> = Vec::new();
    for (i, d) in drafts.into_iter().enumerate() {
        match sessions.iter_mut().find(|(s, _)| *s == d.session) {
            Some((_, group)) => group.push((i, d)),
            None => sessions.push((d.session.clone(), vec![(i, d)])),
        }
    }
    if sessions.is_empty() {
        return Ok((Vec::new(), None));
    }
    let recorder = Recorder::new(repo)?;
    let mut events: Vec<(usize, Event)> = Vec::new();
    for (_, group) in &mut sessions {
        let (order, drafts): (Vec<usize>, Vec<Draft>) = std::mem::take(group).into_iter().unzip();
        let (stored, report) = recorder.record(drafts)?;
        for w in &report.warnings {
            diag::warning(w);
        }
        events.extend(order.into_iter().zip(stored));
    }
    events.sort_by_key(|(i, _)| *i);
    let events = events.into_iter().map(|(_, e)| e).collect();
    // every session written (facts drawn from personal events have one of
    // their own); the commit of the first
    let mut commit = None;
    if seal {
        for (session, _) in sessions {
            let sealed = seal_journals(repo, &JournalSelection::Session(session))?;
            let sealed_commit = sealed.sealed.into_iter().find_map(|s| s.commit);
            commit = commit.or(sealed_commit);
        }
    }
    Ok((events, commit))
}

/// Projections kept open by a long-running server (`memlog mcp`, `memlog
/// serve`) between requests, and which index directory they were opened
/// from: a rebuild by another process swaps the directory, and the files
/// still open would then be the old ones.
#[derive(Default)]
pub struct KeptProjections {
    open: Option<(Projections, Option<(u64, u64)>)>,
}

impl KeptProjections {
    /// The projections, up to date, with their vectors: the open ones when
    /// the index directory is the same and nothing was added to the log, a
    /// journal or the vectors since; else opened again through
    /// [`projections`], which updates them (or, while another process holds
    /// the writer lock, serves what is there).
    pub fn get(&mut self, repo: &Repo) -> Result<&Projections> {
        let dir_identity = index_dir_identity(repo);
        let reusable = match &mut self.open {
            Some((p, identity)) => {
                identity.is_some()
                    && *identity == dir_identity
                    && p.is_fresh(repo).unwrap_or(false)
                    && p.vectors_are_current()
                    // current: nothing left from a read while it lagged
                    && p.read_unindexed(repo, Reach::Everything).is_ok()
            }
            None => false,
        };
        if !reusable {
            // Close the old files before a possible update opens new ones.
            self.open = None;
            let mut p = projections(repo)?;
            p.load_vectors();
            self.open = Some((p, index_dir_identity(repo)));
        }
        match &self.open {
            Some((p, _)) => Ok(p),
            None => bail!("the index could not be opened"),
        }
    }

    /// Forgets the open projections (after a failed call, which may have
    /// left them in any state); the next call opens them again.
    pub fn reset(&mut self) {
        self.open = None;
    }
}

/// Device and inode of the index directory, which a rebuild replaces.
fn index_dir_identity(repo: &Repo) -> Option<(u64, u64)> {
    let dir: PathBuf = repo.layout().index_dir();
    let meta = std::fs::metadata(dir).ok()?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        // No inode to compare: never reuse, always reopen.
        let _ = meta;
        None
    }
}
