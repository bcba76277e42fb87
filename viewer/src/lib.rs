//! # memlog-viewer
//!
//! `memlog serve`: a web viewer of memory. A front-end over `memlog-ops`,
//! like the command line and the MCP server; it imports neither.
//!
//! - [`http`]: the HTTP side (hyper on a current-thread tokio runtime):
//!   the Host check, routing, static assets, the live stream, JSON errors;
//! - [`api`]: what each `/api/…` route answers, as blocking calls on one
//!   repository, returning the same JSON shapes as the CLI's `--json`;
//! - [`live`]: the thread that notices when the index or the log moves;
//! - `assets/`: the pages (plain HTML, CSS and JS, embedded at build time).
//!
//! memlog's library is blocking and its repository handle is not `Send`,
//! so each request's work runs on tokio's blocking pool, where every thread
//! keeps its own repository and open projections (`api::with_site`):
//! reads never wait for one another, and readers never wait for the
//! writer of the projections.

mod api;
mod http;
mod live;

use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use memlog_ops::error::{Context, Error, Result};

/// How `memlog serve` was started.
pub struct Options {
    /// The address to listen on.
    pub bind: IpAddr,
    /// The port (0: any free one).
    pub port: u16,
    /// Whether the pages may forget events (with the printed token).
    pub allow_forget: bool,
}

/// What every request handler shares.
pub struct State {
    /// The directory memlog was started in.
    pub dir: PathBuf,
    /// The token a forget must carry; `None`: the viewer is read-only.
    pub forget_token: Option<String>,
    /// Bumped whenever the index or the log moves.
    pub live: tokio::sync::watch::Sender<u64>,
}

/// Blocking threads that keep a repository open: more would only contend
/// for the two cores and the SQLite file.
const BLOCKING_THREADS: usize = 4;

/// Serves until `stop` resolves (the binary gives SIGINT or SIGTERM).
pub fn serve(dir: &Path, options: Options, stop: impl Future<Output = ()>) -> Result<()> {
    let address = SocketAddr::new(options.bind, options.port);
    let listener =
        std::net::TcpListener::bind(address).context(format_args!("listening on {address}"))?;
    listener.set_nonblocking(true)?;
    let local = listener.local_addr()?;
    let forget_token = options.allow_forget.then(new_token);
    print_banner(local, forget_token.as_deref())?;

    let (live, _) = tokio::sync::watch::channel(0u64);
    let state = Arc::new(State {
        dir: dir.to_path_buf(),
        forget_token,
        live,
    });
    live::start(dir.to_path_buf(), state.live.clone())?;

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .max_blocking_threads(BLOCKING_THREADS)
        // Idle threads keep their open projections for the next request.
        .thread_keep_alive(Duration::from_secs(3600))
        .build()?;
    let served = runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        tokio::pin!(stop);
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let Ok((stream, _)) = accepted else { continue };
                    let state = Arc::clone(&state);
                    tokio::spawn(async move {
                        let service = service_fn(move |req| http::handle(Arc::clone(&state), req));
                        // A client that goes away mid-request is not our error.
                        let _ = http1::Builder::new()
                            .serve_connection(TokioIo::new(stream), service)
                            .await;
                    });
                }
                () = &mut stop => break,
            }
        }
        Ok::<(), Error>(())
    });
    // Open live streams never end by themselves.
    runtime.shutdown_timeout(Duration::from_secs(1));
    served
}

fn print_banner(local: SocketAddr, token: Option<&str>) -> Result<()> {
    let shown = match local.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => SocketAddr::from(([127, 0, 0, 1], local.port())),
        _ => local,
    };
    let mut out = std::io::stdout().lock();
    match token {
        Some(t) => {
            writeln!(out, "memlog serve: http://{shown}/#token={t}")?;
            writeln!(
                out,
                "forget is allowed for requests carrying the token {t} (open the URL above)"
            )?;
        }
        None => writeln!(out, "memlog serve: http://{shown}/ (read-only)")?,
    }
    if !local.ip().is_loopback() {
        writeln!(
            out,
            "warning: listening on {local}: other machines can read this memory"
        )?;
    }
    out.flush()?;
    Ok(())
}

/// 128 unpredictable bits, hex: std's hasher keys are seeded from the
/// operating system's randomness, and no crate is needed for it.
fn new_token() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let half = |salt: u64| {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(nanos);
        h.write_u64(salt);
        h.finish()
    };
    format!("{:016x}{:016x}", half(1), half(2))
}
