//! Bringing the projections up to date on request: `memlog index`, and
//! the end of `install` and `import`, which leave the index built so that
//! the first prompt after them finds what they brought (a hook never
//! builds it: it reads what the index lacks directly, and starts a
//! background `memlog index`).
//!
//! Full text and the graph are built in the foreground, with a progress
//! bar on a terminal; embedding, which the model does at tens of events a
//! second, runs now (`memlog index`) or in a background `memlog index` at
//! low priority (`install`, `import`: a year of history would keep the
//! prompt waiting for minutes). Until an event has its vector it ranks by
//! full text ([`memlog_indexer::search`]).

use std::io::IsTerminal;

use memlog_indexer::vectors::CatchUpReport;
use memlog_indexer::{IndexReport, Projections};
use memlog_store::Repo;
use serde::Serialize;

use crate::background::{self, Priority};
use crate::error::Result;
use crate::{diag, semantic};

/// When the new events are embedded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Embedding {
    /// Now, in this process (with the model loaded for it).
    Now,
    /// By a background `memlog index`, when the model is installed.
    Background,
    /// Not at all (full text and graph only).
    Off,
}

/// What an index run did.
#[derive(Clone, Debug, Serialize)]
pub struct Indexed {
    /// The full-text and graph projections.
    #[serde(flatten)]
    pub report: IndexReport,
    /// Embedding done now, if any.
    pub vectors: Option<CatchUpReport>,
    /// Whether a background `memlog index` embeds the new events.
    pub embedding_in_background: bool,
}

/// Brings the projections up to date (waiting for another writer to
/// finish first), then embeds as `embedding` says. With `quiet` false and
/// stderr a terminal, progress is drawn there.
pub fn update(repo: &Repo, embedding: Embedding, quiet: bool) -> Result<Indexed> {
    let tty = !quiet && std::io::stderr().is_terminal();
    let mut bar: Option<diag::ProgressBar> = None;
    let report = Projections::update_with_progress(repo, &mut |done, total| {
        // an update of a session or two is over before a bar is worth it
        if tty && total >= BAR_FROM {
            bar.get_or_insert_with(|| diag::ProgressBar::new("indexing", "segments", true))
                .set(done, total);
        }
    })?;
    if let Some(bar) = bar {
        bar.finish();
    }
    let vectors = match embedding {
        Embedding::Now => semantic::catch_up_vectors(repo, None, quiet)?,
        _ => None,
    };
    let embedding_in_background = embedding == Embedding::Background
        && semantic::model_available(repo)
        && report.events_added > 0;
    if embedding_in_background {
        background::spawn(repo, &["index"], Priority::Low);
    }
    // Updates leave their pages in SQLite's write-ahead log, which every
    // later process reads whole when it opens the database; this one-shot
    // run (a hook's background index among them) leaves it empty. Best
    // effort: the index itself is up to date either way.
    if let Err(e) = Projections::open(repo).and_then(|p| p.empty_log()) {
        diag::warning(format_args!("the database's log was left as it is: {e}"));
    }
    Ok(Indexed {
        report,
        vectors,
        embedding_in_background,
    })
}

/// Fewest new segments for which a progress bar is drawn.
const BAR_FROM: usize = 20;

/// [`update`] at the end of a command whose work is done already (an
/// import sealed, hooks installed): embedding in the background, and a
/// failure said as a warning rather than failing what succeeded.
pub fn after(repo: &Repo, quiet: bool) -> Option<Indexed> {
    match update(repo, Embedding::Background, quiet) {
        Ok(indexed) => Some(indexed),
        Err(e) => {
            diag::warning(format_args!(
                "the index was not brought up to date ({}); `memlog index` does it",
                crate::error::chain(&e)
            ));
            None
        }
    }
}
