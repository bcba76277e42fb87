use std::path::Path;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use memlog_ops::concepts::{self, Filing};
use memlog_ops::workspace;

use crate::output;

/// Concepts: sessions and facts grouped by what the work was about.
///
/// Without a subcommand, lists the concepts, most recently grown first,
/// with their topics, sessions and facts. The agent files a session with
/// `memlog concepts add` after extracting its facts (the Stop hook's
/// instruction says how): it names the session's topic in 3 to 5 words
/// and joins an existing concept only when it truly means the same work.
#[derive(Args)]
pub struct ConceptsArgs {
    #[command(subcommand)]
    command: Option<ConceptsCommand>,

    /// Print the concepts as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand)]
enum ConceptsCommand {
    /// File sessions and facts under a concept (created when new).
    Add {
        /// The concept's name: an existing one, or a new one.
        name: String,
        /// The session's topic, in 3 to 5 words.
        #[arg(long)]
        topic: Option<String>,
        /// A session to file (repeatable).
        #[arg(long = "session", value_name = "SESSION")]
        sessions: Vec<String>,
        /// A fact to file: its id or a unique prefix (repeatable).
        #[arg(long = "fact", value_name = "ID")]
        facts: Vec<String>,
        /// Why this concept, and not another.
        #[arg(long)]
        reason: Option<String>,
        /// Print the recorded concept event as JSON.
        #[arg(long)]
        json: bool,
    },
}

pub fn cmd_concepts(dir: &Path, args: ConceptsArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        Some(ConceptsCommand::Add {
            name,
            topic,
            sessions,
            facts,
            reason,
            json,
        }) => {
            let repo = workspace::open_for_writing(dir)?;
            let projections = workspace::projections(&repo)?;
            let filed = concepts::add(
                &repo,
                &projections,
                &Filing {
                    name: &name,
                    topic: topic.as_deref(),
                    sessions: &sessions,
                    facts: &facts,
                    reason: reason.as_deref(),
                },
            )?;
            if json {
                output::print_json(&filed)?;
            } else {
                let how = if filed.created {
                    "new concept"
                } else {
                    "concept"
                };
                println!("{}  {how} {:?}", filed.id.short(), filed.name);
            }
        }
        None => {
            let repo = workspace::open(dir)?;
            let projections = workspace::projections(&repo)?;
            let list = concepts::list(&projections)?;
            if args.json {
                output::print_json(&serde_json::json!({ "concepts": list }))?;
            } else if list.is_empty() {
                println!("no concepts yet (`memlog concepts add` files a session under one)");
            } else {
                for c in &list {
                    println!(
                        "{}  ({} session{}, {} fact{})",
                        c.name,
                        c.sessions.len(),
                        if c.sessions.len() == 1 { "" } else { "s" },
                        c.facts.len(),
                        if c.facts.len() == 1 { "" } else { "s" },
                    );
                    for t in &c.topics {
                        println!("  topic: {t}");
                    }
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
