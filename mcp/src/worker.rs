//! The thread that does the server's work.
//!
//! memlog's library is blocking, and its repository handle and SQLite
//! connection are not shareable across threads. So one worker thread owns
//! the [`Memory`] and runs tool calls one at a time, in arrival order; the
//! async side (the MCP transport) hands it a closure and awaits the answer.
//! While a long call runs, the transport keeps reading requests and they
//! queue up here. A call that panics is answered with an error and the
//! worker goes on with the next one.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::mpsc;
use std::thread::JoinHandle;

use memlog_ops::error::{Error, Result};

use super::memory::Memory;

type Job = Box<dyn FnOnce(&mut Memory) + Send>;

/// The sending side of the worker's queue; cheap to clone.
#[derive(Clone)]
pub struct Worker {
    jobs: mpsc::Sender<Job>,
}

/// Why a call got no answer from the worker.
#[derive(Debug)]
pub enum CallError {
    /// The call panicked (a bug); the message says where.
    Panicked(String),
    /// The worker is gone (the server is stopping).
    Stopped,
}

/// What the worker did when it stopped.
pub struct Finished {
    /// The session the server wrote to.
    pub session: String,
    /// The commit sealing what it remembered, if anything was.
    pub commit: Option<String>,
}

impl Worker {
    /// Opens the repository containing `dir` on a new thread. Returns the
    /// queue and the thread, which ends (sealing what was remembered) when
    /// every [`Worker`] clone is dropped.
    pub fn start(dir: PathBuf) -> Result<(Worker, JoinHandle<Result<Finished>>)> {
        let (jobs, queue) = mpsc::channel::<Job>();
        // Whether the repository opened; if not, the thread ends with why.
        let (opened_tx, opened_rx) = mpsc::channel::<bool>();
        let thread = std::thread::Builder::new()
            .name("memlog-mcp-worker".into())
            .spawn(move || -> Result<Finished> {
                let mut memory = match Memory::open(&dir) {
                    Ok(m) => {
                        let _ = opened_tx.send(true);
                        m
                    }
                    Err(e) => {
                        let _ = opened_tx.send(false);
                        return Err(e);
                    }
                };
                for job in queue {
                    job(&mut memory);
                }
                let commit = memory.seal()?;
                Ok(Finished {
                    session: memory.session().to_string(),
                    commit,
                })
            })?;
        match opened_rx.recv() {
            Ok(true) => Ok((Worker { jobs }, thread)),
            _ => match thread.join() {
                Ok(Err(e)) => Err(e),
                _ => Err(Error::Invalid(
                    "the MCP worker thread died while opening the repository".into(),
                )),
            },
        }
    }

    /// Runs `f` on the worker and waits for its result.
    pub async fn call<T, F>(&self, f: F) -> Result<T, CallError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Memory) -> T + Send + 'static,
    {
        let (reply, answer) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move |memory: &mut Memory| {
            let result = catch_unwind(AssertUnwindSafe(|| f(memory)));
            let result = result.map_err(|panic| {
                // A call that failed half-way may leave the open index in
                // any state: open it afresh next time.
                memory.reset();
                CallError::Panicked(panic_message(panic.as_ref()))
            });
            let _ = reply.send(result);
        });
        self.jobs.send(job).map_err(|_| CallError::Stopped)?;
        answer.await.map_err(|_| CallError::Stopped)?
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".into()
    }
}
