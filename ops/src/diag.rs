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

/// A progress bar on stderr with the rate and the time left (indicatif),
/// drawn only when stderr is a terminal: for the minutes embedding and a
/// large index update take.
pub struct ProgressBar {
    bar: Option<indicatif::ProgressBar>,
}

impl ProgressBar {
    /// A bar for `what` (`embedding`) counting `unit`s (`events`), shown
    /// when `shown`.
    pub fn new(what: &str, unit: &str, shown: bool) -> ProgressBar {
        let bar = shown.then(|| {
            let bar = indicatif::ProgressBar::with_draw_target(
                None,
                indicatif::ProgressDrawTarget::stderr(),
            );
            if let Ok(style) = indicatif::ProgressStyle::with_template(&format!(
                "{{msg}} [{{bar:30}}] {{pos}}/{{len}} {unit}, {{rate}}, {{eta}} left"
            )) {
                // whole units a second: indicatif's own rate has 4 decimals
                let style = style.with_key(
                    "rate",
                    |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = write!(w, "{:.0}/s", state.per_sec());
                    },
                );
                bar.set_style(style.progress_chars("=> "));
            }
            bar.set_message(what.to_string());
            bar
        });
        ProgressBar { bar }
    }

    /// `done` of `total`.
    pub fn set(&self, done: usize, total: usize) {
        if let Some(bar) = &self.bar {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        }
    }

    /// Leaves the bar's last state on its line.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish();
        }
    }
}
