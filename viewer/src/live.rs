//! Noticing that memory moved, for the pages' live updates.
//!
//! A thread looks every [`POLL`] at three cheap signals: the memlog ref's
//! tip (a seal, a sync, a pull), the index's generation token (a `memlog
//! watch` run, a rebuild, another command's update) and the sizes of the
//! live journals (a session recording). When any of them changed it bumps
//! a counter that every open page's event stream waits on; the pages then
//! fetch again, and that fetch brings the projections up to date if no
//! watcher did. Polling rather than file watching: it is a ref read, one
//! SQLite row and a directory listing, it works the same when the writer
//! is another process on any file system, and it stays within a page's
//! patience (half a second).

use std::path::PathBuf;
use std::time::Duration;

use memlog_indexer::overview;
use memlog_ops::error::Result;
use memlog_ops::workspace;
use memlog_store::Repo;
use memlog_store::journal;
use memlog_store::log::Log;

const POLL: Duration = Duration::from_millis(500);

/// What the pages' freshness depends on.
#[derive(Clone, Debug, Default, PartialEq)]
struct Signature {
    tip: Option<String>,
    generation: Option<String>,
    journals: Vec<(String, u64)>,
}

/// Starts the polling thread; it runs as long as the process.
pub fn start(dir: PathBuf, live: tokio::sync::watch::Sender<u64>) -> Result<()> {
    std::thread::Builder::new()
        .name("memlog-serve-live".into())
        .spawn(move || {
            // gix repositories are not Send: this thread opens its own.
            let Ok(repo) = workspace::open(&dir) else {
                return;
            };
            let mut last = signature(&repo);
            loop {
                std::thread::sleep(POLL);
                let now = signature(&repo);
                if now != last {
                    last = now;
                    live.send_modify(|n| *n += 1);
                }
            }
        })?;
    Ok(())
}

/// The signals now; one that cannot be read counts as absent.
fn signature(repo: &Repo) -> Signature {
    let journals = journal::list(&repo.journal_dir())
        .map(|files| files.into_iter().map(|f| (f.session, f.bytes)).collect())
        .unwrap_or_default();
    Signature {
        tip: Log::new(repo).tip().ok().flatten().map(|t| t.to_string()),
        generation: overview::generation(&repo.layout().index_dir()),
        journals,
    }
}
