use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;
use memlog_format::align;
use memlog_ops::extraction;
use memlog_ops::facts;
use memlog_ops::workspace;
use serde_json::json;

use crate::output;

/// Record facts extracted by an LLM, each tied to the exact words of the
/// event it came from.
///
/// FILE (or `-` for stdin) holds a JSON array of facts, `{"facts": [...]}`,
/// or one fact per line. A fact is `{"text": "...", "quote": "...",
/// "event": "ID"}`: the fact, the words of the event it rests on, and that
/// event's id (or a unique prefix). memlog never calls an LLM: it aligns
/// each quote in the event's text (exactly, else the closest window with a
/// similarity of at least 0.85) and records a `fact` event with the span
/// (in characters) and the match type. Facts whose quote cannot be found,
/// or whose event does not exist, are rejected and listed; facts already
/// recorded are skipped. A fact that replaces or contradicts an older
/// one names it: `"supersedes": "ID"` or `"contradicts": "ID"`.
///
/// `--prompt SESSION` prints the instruction that asks an agent for a
/// session's facts (the one the Stop hook gives): the session's compact
/// view with event ids, the three steps, and how to hand the facts back.
#[derive(Args)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["facts", "prompt"])))]
pub struct ExtractArgs {
    /// The facts file (`-` for stdin).
    #[arg(long = "facts", value_name = "FILE")]
    facts: Option<PathBuf>,

    /// Print the extraction instruction for this session instead
    /// (`latest`: the session of the latest prompt).
    #[arg(long, value_name = "SESSION")]
    prompt: Option<String>,

    /// Fuzzy alignment threshold (similarity, 0 to 1).
    #[arg(long, default_value_t = align::DEFAULT_THRESHOLD)]
    threshold: f32,

    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn cmd_extract(dir: &Path, args: ExtractArgs) -> anyhow::Result<ExitCode> {
    if let Some(session) = &args.prompt {
        let repo = workspace::open(dir)?;
        let projections = workspace::projections(&repo)?;
        let text = extraction::prompt_for(&projections, session)?;
        if args.json {
            output::print_json(&json!({"session": session, "instruction": text}))?;
        } else {
            print!("{text}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let Some(facts_file) = args.facts.clone() else {
        bail!("name the facts file: --facts FILE (or - for stdin)");
    };
    if !(0.0..=1.0).contains(&args.threshold) {
        bail!("--threshold must be between 0 and 1");
    }
    let facts_path = facts_file.as_path();
    let raw = if facts_path == Path::new("-") {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .context("reading facts from stdin")?;
        s
    } else {
        std::fs::read_to_string(facts_path)
            .with_context(|| format!("reading {}", facts_path.display()))?
    };
    let (facts, rejected) = facts::parse_file(&raw)
        .with_context(|| format!("{} is not a facts file", facts_path.display()))?;
    let repo = workspace::open_for_writing(dir)?;
    let extracted = facts::extract(&repo, facts, rejected, args.threshold)?;
    if args.json {
        output::print_json(&extracted)?;
    } else {
        for r in &extracted.recorded {
            println!(
                "{}  {} {}..{} of {}: {}",
                r.id.short(),
                r.span.match_type.as_str(),
                r.span.start,
                r.span.end,
                r.event.short(),
                r.text
            );
        }
        for r in &extracted.rejected {
            println!("rejected #{}: {} ({})", r.fact.index, r.fact.text, r.reason);
        }
        println!(
            "{} recorded, {} rejected, {} already recorded",
            extracted.recorded.len(),
            extracted.rejected.len(),
            extracted.already_recorded
        );
    }
    Ok(ExitCode::SUCCESS)
}
