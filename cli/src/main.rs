//! `memlog`: a memory log for coding agents that lives in git.
//!
//! This binary is a thin layer over the library crates: it parses the
//! command line (one file per command under `commands/`), opens the
//! repository, calls the library and prints the result as text or JSON.

mod commands;
mod mcp;
mod output;
mod workspace;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

/// A memory log for coding agents that lives in git.
///
/// Every prompt, answer, tool call and note of an agent session is an event
/// in an append-only log. Live sessions write to a journal under
/// `.git/memlog/`; sealing turns a session into one commit of
/// content-addressed JSONL segments on `refs/heads/memlog`, without touching
/// HEAD, the index or the working tree. Review it with `memlog log`,
/// `memlog show` or `git log -p memlog`; share it with git push/pull.
#[derive(Parser)]
#[command(
    name = "memlog",
    version,
    propagate_version = true,
    max_term_width = 100
)]
struct Cli {
    /// Run as if memlog was started in DIR (like `git -C`).
    #[arg(short = 'C', global = true, value_name = "DIR")]
    directory: Option<PathBuf>,

    #[command(subcommand)]
    command: commands::Command,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let dir = cli.directory.unwrap_or_else(|| PathBuf::from("."));
    match commands::run(cli.command, &dir) {
        Ok(code) => code,
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            output::print_error(&err);
            ExitCode::from(1)
        }
    }
}

/// `memlog … | head` closing the pipe early is not an error.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            || c.downcast_ref::<serde_json::Error>()
                .is_some_and(|e| e.io_error_kind() == Some(std::io::ErrorKind::BrokenPipe))
    })
}
