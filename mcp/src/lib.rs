//! # memlog-mcp
//!
//! `memlog mcp`: memory as Model Context Protocol tools, over stdio, with
//! rmcp (the official Rust SDK). A front-end over `memlog-ops`, like the
//! command line and the viewer; it imports neither.
//!
//! - [`server`]: the tools, their descriptions and error mapping;
//! - [`params`]: their arguments and JSON schemas;
//! - [`memory`]: what each tool does, as blocking calls on one repository;
//! - [`tasks`]: the task list, folded from the task events;
//! - [`worker`]: the thread that owns the repository and runs the calls.
//!
//! One current-thread tokio runtime drives the transport, and the work
//! happens on the worker thread. The caller (the binary, which owns the
//! process's signals) says when to stop.
//!
//! The projections stay open between calls and are checked before each
//! one (a ref read, a stat of the index directory and of each journal):
//! new sessions, a `memlog watch` or a rebuild in another process are seen
//! by the next call, without a restart. Measured with `memlog-bench --mcp`
//! (100k events, Python client, release build): a `memory_search` round
//! trip takes p50 1.4 ms this way and 2.6 ms when the projections are
//! opened afresh for every call, the other design considered.

mod memory;
mod params;
mod server;
mod worker;

use std::future::Future;
use std::path::Path;

use memlog_ops::error::{Error, Result};
use rmcp::ServiceExt;

use server::MemoryServer;
use worker::Worker;

/// Serves MCP on stdin/stdout until the client closes stdin or `stop`
/// resolves (the binary gives SIGINT or SIGTERM); then seals what was
/// remembered.
pub fn serve(dir: &Path, stop: impl Future<Output = ()>) -> Result<()> {
    let (worker, thread) = Worker::start(dir.to_path_buf())?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let served = runtime.block_on(async move {
        let service = MemoryServer::new(worker)
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| Error::Invalid(format!("starting the MCP server: {e}")))?;
        let cancel = service.cancellation_token();
        tokio::select! {
            quit = service.waiting() => {
                quit.map_err(|e| Error::Invalid(format!("the MCP server failed: {e}")))?;
            }
            () = stop => { cancel.cancel(); }
        }
        Ok::<(), Error>(())
    });
    // Shutting the runtime down drops the tasks holding the worker's queue:
    // the worker finishes the calls it has, seals and ends. In the
    // background, because after a signal the stdin reader is still blocked
    // in a read that only the process's exit ends.
    runtime.shutdown_background();
    let finished = match thread.join() {
        Ok(result) => result?,
        Err(_) => memlog_ops::bail!("the MCP worker thread panicked"),
    };
    if let Some(commit) = &finished.commit {
        eprintln!(
            "memlog mcp: sealed session {} as {}",
            finished.session,
            memlog_format::id::short(commit)
        );
    }
    served
}
