use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use std::process::ExitCode;

use clap::Args;

use memlog_ops::workspace;
use memlog_viewer::Options;

use crate::stop::stop_signal;

/// Browse and review memory in a web browser.
///
/// Serves a local web viewer from this binary (nothing to install): a
/// timeline of sessions, each session's events in order, search with the
/// same ranking and filters as `memlog search` (and why each hit ranked),
/// the tasks board, entities with their edges, `memlog diff` as a review
/// page, and stats. Open pages update by themselves when the index moves
/// (a seal, a `memlog watch`, a pull). The JSON API the pages use is under
/// `/api/` (docs/API.md).
///
/// Listens on 127.0.0.1 unless `--bind` says otherwise, and answers only
/// requests addressed to a local name or an IP address (DNS rebinding
/// protection). Read-only unless started with `--allow-forget`.
#[derive(Args)]
pub struct ServeArgs {
    /// Port to listen on; 0 picks a free one. The URL is printed.
    #[arg(long, default_value_t = 7840)]
    port: u16,

    /// Address to listen on. Anything but a loopback address (127.0.0.1,
    /// ::1) shows memory to the network: give it only on purpose.
    #[arg(long, value_name = "ADDR")]
    bind: Option<IpAddr>,

    /// Let the browser forget events (as `memlog forget` does). Every
    /// forget must carry a token printed here, new on each run; the printed
    /// URL carries it.
    #[arg(long)]
    allow_forget: bool,
}

pub fn cmd_serve(dir: &Path, args: ServeArgs) -> anyhow::Result<ExitCode> {
    // Fails early, with the usual message, outside a git repository.
    workspace::open(dir)?;
    memlog_viewer::serve(
        dir,
        Options {
            bind: args.bind.unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST)),
            port: args.port,
            allow_forget: args.allow_forget,
        },
        stop_signal(),
    )?;
    Ok(ExitCode::SUCCESS)
}
