//! Opening the repository memlog works in, and reading all its events.

use std::path::Path;

use anyhow::Context;
use memlog_format::log::{Log, journal_events, live_events};
use memlog_format::{Event, Repo};

/// Opens the repository containing `dir`.
pub fn open(dir: &Path) -> anyhow::Result<Repo> {
    let repo = Repo::discover(dir)?;
    Ok(repo)
}

/// Opens the repository and makes sure memlog's directories exist.
pub fn open_for_writing(dir: &Path) -> anyhow::Result<Repo> {
    let repo = open(dir)?;
    repo.ensure_dirs()?;
    Ok(repo)
}

/// Every live event: sealed ones and, unless `sealed_only`, those still in
/// journals; forgotten events removed; ordered by time.
pub fn live(repo: &Repo, sealed_only: bool) -> anyhow::Result<Vec<Event>> {
    let (mut events, problems) = Log::new(repo).events().context("reading the memlog ref")?;
    for p in &problems {
        eprintln!(
            "warning: segment {}: {} (run `memlog fsck`)",
            p.path, p.problem
        );
    }
    if !sealed_only {
        events.extend(journal_events(repo).context("reading journals")?);
    }
    Ok(live_events(events))
}
