//! The process's stop signal, which the binary owns and hands to its
//! long-running front-ends (`memlog mcp`, `memlog serve`).

/// Resolves on SIGINT or SIGTERM (how clients stop a stdio server that
/// does not exit when its stdin closes). Polled inside the front-end's
/// tokio runtime, which the signal handlers need.
pub async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) {
            (Ok(mut int), Ok(mut term)) => {
                tokio::select! {
                    _ = int.recv() => {}
                    _ = term.recv() => {}
                }
            }
            // No signal handling: run until stdin closes.
            _ => std::future::pending().await,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
