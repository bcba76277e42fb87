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
/// An error may echo what was typed: its secrets are redacted.
pub fn print_error(err: &anyhow::Error) {
    let mut message = format!("error: {err}\n");
    let mut said = err.to_string();
    for cause in err.chain().skip(1) {
        let cause = cause.to_string();
        // an error that prints its source already says it
        if !said.ends_with(&cause) {
            message.push_str(&format!("  caused by: {cause}\n"));
        }
        said = cause;
    }
    let message = memlog_format::privacy::redact_message(&message);
    let _ = std::io::stderr().lock().write_all(message.as_bytes());
}

pub use memlog_format::time::short as short_time;

/// The short form of a commit or event id, `-` for none.
pub fn short_or_dash(id: Option<&str>) -> &str {
    id.map(memlog_format::id::short).unwrap_or("-")
}
