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

pub use memlog_format::time::short as short_time;

/// The short form of a commit or event id, `-` for none.
pub fn short_or_dash(id: Option<&str>) -> &str {
    id.map(memlog_format::id::short).unwrap_or("-")
}
