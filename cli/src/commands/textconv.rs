use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use memlog_format::Event;
use serde_json::Value;

/// Print a segment file as readable events (git's diff driver for memlog).
///
/// One block per event: time, kind, session and id, then its text, or for a
/// tool call the tool, its input and the start of its output. `memlog install
/// git` makes git use this, so `git log -p memlog` and `git show` read as
/// events instead of raw JSON. Lines that are not events are printed as they
/// are.
#[derive(Args)]
pub struct TextconvArgs {
    /// A segment file (git passes a temporary copy).
    file: PathBuf,
}

/// Lines of a tool output shown by textconv.
const OUTPUT_LINES: usize = 5;

pub fn cmd_textconv(args: TextconvArgs) -> anyhow::Result<ExitCode> {
    let bytes =
        std::fs::read(&args.file).with_context(|| format!("reading {}", args.file.display()))?;
    let text = String::from_utf8_lossy(&bytes);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match Event::from_line(line) {
            Ok(event) => out.write_all(render(&event).as_bytes())?,
            Err(_) => writeln!(out, "{line}")?,
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// The block of one event.
pub fn render(e: &Event) -> String {
    let mut s = format!(
        "{} {} session={} id={}\n",
        e.ts,
        e.kind.as_str(),
        e.session,
        e.id.short()
    );
    let indent = |text: &str, s: &mut String| {
        for l in text.lines() {
            s.push_str("    ");
            s.push_str(l);
            s.push('\n');
        }
    };
    if let Some(text) = e.text() {
        indent(text, &mut s);
    } else if let Some(tool) = e.body.get("tool").and_then(Value::as_str) {
        s.push_str(&format!("    {}\n", e.headline(200)));
        if let Some(ok) = e.body.get("success").and_then(Value::as_bool) {
            s.push_str(&format!("    success: {ok}\n"));
        }
        if let Some(output) = e.body.get("output").and_then(Value::as_str) {
            let lines: Vec<&str> = output.lines().collect();
            for l in lines.iter().take(OUTPUT_LINES) {
                s.push_str(&format!("    | {l}\n"));
            }
            if lines.len() > OUTPUT_LINES {
                s.push_str(&format!(
                    "    | … {} more line(s) of {tool} output\n",
                    lines.len() - OUTPUT_LINES
                ));
            }
        }
    } else if !e.body.is_empty() {
        indent(
            &memlog_format::canonical::to_string(&Value::Object(e.body.clone())),
            &mut s,
        );
    }
    s.push('\n');
    s
}
