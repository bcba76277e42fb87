//! Printing: JSON documents, and errors with their chain of causes.

use std::io::Write;

use serde::Serialize;

/// Prints a value as pretty JSON on stdout.
pub fn print_json(value: &impl Serialize) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

/// `error: top-level message` then `  caused by: …` for each cause.
pub fn print_error(err: &anyhow::Error) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "error: {err}");
    for cause in err.chain().skip(1) {
        let _ = writeln!(stderr, "  caused by: {cause}");
    }
}

/// `2026-11-22 05:27` from an RFC 3339 timestamp.
pub fn short_time(ts: &str) -> String {
    ts.get(..16)
        .map(|s| s.replace('T', " "))
        .unwrap_or_else(|| ts.to_string())
}

/// `2026-11-22 05:27` from seconds since the epoch.
pub fn short_time_secs(secs: i64) -> String {
    jiff::Timestamp::from_second(secs)
        .map(|t| short_time(&memlog_format::time::format(t)))
        .unwrap_or_else(|_| secs.to_string())
}
