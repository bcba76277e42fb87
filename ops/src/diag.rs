//! The one place where operations speak to the person running them: notes
//! and warnings go to stderr, prefixed `note:` and `warning:`, never to
//! stdout (which belongs to the front-end's output: a command's listing,
//! an MCP stream, a hook's JSON).

/// `note: …` on stderr: something worth knowing that is not a problem.
pub fn note(message: impl std::fmt::Display) {
    eprintln!("note: {message}");
}

/// `warning: …` on stderr: something went wrong, and the operation went on.
pub fn warning(message: impl std::fmt::Display) {
    eprintln!("warning: {message}");
}

/// `\r…` on stderr: a progress line that the next one overwrites.
pub fn progress(message: impl std::fmt::Display) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "\r{message}");
    let _ = err.flush();
}

/// Ends a line of [`progress`].
pub fn end_progress() {
    eprintln!();
}

/// A progress bar on stderr, redrawn in place:
/// `label [=========>          ] 45% (90/200 unit)`.
pub fn bar(label: &str, done: usize, total: usize, unit: &str) {
    const WIDTH: usize = 30;
    let total = total.max(1);
    let done = done.min(total);
    let filled = WIDTH * done / total;
    let head = if filled < WIDTH { ">" } else { "" };
    progress(format_args!(
        "{label} [{}{head}{}] {:>3}% ({done}/{total} {unit})",
        "=".repeat(filled),
        " ".repeat(WIDTH.saturating_sub(filled + head.len())),
        100 * done / total
    ));
}
