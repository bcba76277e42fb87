//! `memlog`: a memory log for coding agents that lives in git.
//!
//! This binary is a thin front-end over `memlog-ops` (and the `memlog-mcp`,
//! `memlog-viewer` and `memlog-watcher` front-ends it starts): it parses
//! the command line (one file per command, or a directory per group, under
//! `commands/`), calls the operation and prints the result as text or
//! JSON. It owns the process: argv, stdout and stderr, exit codes and the
//! stop signal (`stop.rs`) it hands to the long-running servers.

mod allocator;
mod commands;
mod output;
mod stop;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[global_allocator]
static ALLOCATOR: allocator::Allocator = allocator::Allocator;

/// A memory log for coding agents that lives in git.
///
/// Every prompt, answer, tool call and note of an agent session is an event
/// in an append-only log. Live sessions write to a journal under
/// `.git/memlog/`; sealing turns a session into one commit of
/// content-addressed JSONL segments on `refs/heads/memlog`, without touching
/// HEAD, the index or the working tree. Review it with `memlog log`,
/// `memlog show` or `git log -p memlog`; share it with git push/pull.
// (Not help text: `C` is every command, `commands::Command`, or only those
// an agent runs at every prompt and tool call, `commands::HotCommand`; see
// `parse`.)
#[derive(Parser)]
#[command(
    name = "memlog",
    version,
    propagate_version = true,
    max_term_width = 100
)]
struct Cli<C: Subcommand> {
    #[command(flatten)]
    globals: Globals,

    #[command(subcommand)]
    command: C,
}

/// Arguments of memlog itself, before the command's name.
#[derive(clap::Args)]
struct Globals {
    /// Run as if memlog was started in DIR (like `git -C`, before the
    /// command's name).
    // Not `global`: clap would copy the argument into each of the 35
    // subcommands before parsing, 100 KB of heap for every hook.
    #[arg(short = 'C', value_name = "DIR")]
    directory: Option<PathBuf>,
}

fn main() -> ExitCode {
    quiet_on_closed_pipe();
    let cli = parse();
    if cli.command.is_bulk() {
        allocator::use_bulk_allocator();
    }
    let dir = cli.globals.directory.unwrap_or_else(|| PathBuf::from("."));
    match commands::run(cli.command, &dir) {
        Ok(code) => code,
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            output::print_error(&err);
            ExitCode::from(1)
        }
    }
}

/// Parses the command line, building the arguments of the one subcommand
/// it names only (`defer`: building them all cost a one-shot command such
/// as `memlog record` a third of its instructions). A hook, `record`,
/// `search`, `context` or `show` is parsed by a root that knows those five
/// commands only: the other thirty cost 45 KB of heap to set up, a tenth of
/// what a hook writes to memory. Without a subcommand name (`memlog`,
/// `memlog --help`, `memlog help …`, a typo), everything is built, so that
/// the list of commands shows what each does; `--version` needs none of it.
fn parse() -> Cli<commands::Command> {
    let first = first_word(std::env::args_os().skip(1));
    let first = first.as_ref().and_then(|w| w.to_str());
    if first.is_some_and(commands::HotCommand::has_subcommand) {
        let hot: Cli<commands::HotCommand> = parse_as(false, first == Some("hook"));
        return Cli {
            globals: hot.globals,
            command: hot.command.into(),
        };
    }
    let whole_tree = match first {
        Some("--version" | "-V") => false,
        Some(w) if !w.starts_with('-') => !commands::Command::has_subcommand(w),
        _ => true,
    };
    parse_as(whole_tree, false)
}

/// Parses the command line with `P`'s command tree, built whole or one
/// subcommand at a time; a usage error exits with clap's message, and
/// status 2, or 1 for a `hook`: an agent reads a hook's status 2 as a
/// block (a prompt refused, a Stop that must go on).
fn parse_as<P: Parser>(whole_tree: bool, hook: bool) -> P {
    let mut command = P::command();
    if whole_tree {
        command.build();
    }
    let parsed = command
        .try_get_matches_from_mut(std::env::args_os())
        .and_then(|mut m| P::from_arg_matches_mut(&mut m));
    match parsed {
        Ok(cli) => {
            // The command tree is done with; the process's exit frees it
            // at no cost, where dropping it was a tenth of `record`.
            std::mem::forget(command);
            cli
        }
        Err(e) => exit_on_usage_error(e.format(&mut command), hook),
    }
}

/// Exits with clap's message; a usage error echoes what was typed, so its
/// secrets are redacted first (`record --text "-----BEGIN … PRIVATE KEY"`
/// is a usage error that printed the key).
fn exit_on_usage_error(e: clap::Error, hook: bool) -> ! {
    if !e.use_stderr() {
        // help and version, on stdout
        e.exit()
    }
    let message = memlog_format::privacy::redact_message(&e.render().to_string());
    eprintln!("{}", message.trim_end());
    std::process::exit(if hook { 1 } else { e.exit_code() })
}

/// The first argument that is not `-C DIR`: a subcommand's name, or a
/// flag the top level answers (`--help`, `--version`).
fn first_word(mut args: impl Iterator<Item = std::ffi::OsString>) -> Option<std::ffi::OsString> {
    while let Some(arg) = args.next() {
        if arg == "-C" {
            args.next();
        } else if !arg.as_encoded_bytes().starts_with(b"-C") {
            return Some(arg);
        }
    }
    None
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

/// `println!` panics when stdout is a pipe that was closed (`memlog log |
/// head`); end quietly instead, as other command-line tools do.
fn quiet_on_closed_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info);
    }));
}
