use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use memlog_ops::record;
use serde_json::json;

use memlog_ops::workspace;

use crate::output;

/// Write a note into memory.
///
/// Without --session the note is a small session of its own, sealed into a
/// commit at once. With --session it joins that live session's journal.
#[derive(Args)]
pub struct NoteArgs {
    /// The note's text; `-` reads it from standard input (a file, a
    /// key block: a text may start with `-`).
    #[arg(allow_hyphen_values = true)]
    text: String,

    /// Add the note to this live session instead of sealing it on its own.
    #[arg(long)]
    session: Option<String>,

    /// Keep the note on this machine: searched and injected here, never
    /// synced or pushed (sealed in .git/memlog/personal.git).
    #[arg(long)]
    personal: bool,

    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn cmd_note(dir: &Path, args: NoteArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open_for_writing(dir)?;
    let text = if args.text == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
            .context("reading the note from standard input")?;
        text
    } else {
        args.text
    };
    let noted = record::note(&repo, text, args.session, args.personal)?;
    let id = noted.event.map(|e| e.id).unwrap_or_default();
    if args.json {
        output::print_json(&json!({"id": id, "session": noted.session, "commit": noted.commit}))?;
    } else {
        println!("{id}");
    }
    Ok(ExitCode::SUCCESS)
}
