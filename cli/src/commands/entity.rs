use std::path::Path;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use memlog_indexer::entities;

use memlog_ops::workspace;

use crate::output;

/// Entities of the graph: tasks, conditions, artifacts, files, sessions.
#[derive(Args)]
pub struct EntityArgs {
    #[command(subcommand)]
    command: EntityCommand,
}

#[derive(Subcommand)]
enum EntityCommand {
    /// Show one entity: its state, aliases and edges (with the event each
    /// edge comes from).
    ///
    /// KEY is an entity id or alias: `task:PROJECT::title`,
    /// `cond:PROJECT::text`, `art:jira:ACME-1`, `art:gh_issue:o/r:7`,
    /// `file:src/lib.rs`, `session:ID`; a path (`src/lib.rs`, or absolute
    /// inside the repository) names its file.
    Show {
        key: String,
        /// Print the entity as JSON.
        #[arg(long)]
        json: bool,
    },
}

pub fn cmd_entity(dir: &Path, args: EntityArgs) -> anyhow::Result<ExitCode> {
    let EntityCommand::Show { key, json } = args.command;
    let repo = workspace::open(dir)?;
    let projections = workspace::projections(&repo)?;
    let key = workspace::entity_key(&repo, &key);
    let Some(detail) = entities::entity(&projections, &key)? else {
        anyhow::bail!(
            "no entity {key:?} (ids look like task:PROJECT::title, art:jira:KEY, file:PATH)"
        );
    };
    if json {
        output::print_json(&detail)?;
        return Ok(ExitCode::SUCCESS);
    }
    let e = &detail.entity;
    println!("{} ({})", e.entity_id, e.entity_type);
    println!("  title: {}", e.title);
    println!("  stage: {}  status: {}", e.stage, e.status);
    if !detail.aliases.is_empty() {
        println!("  aliases: {}", detail.aliases.join(", "));
    }
    if e.current.as_object().is_some_and(|m| !m.is_empty()) {
        println!(
            "  state: {}",
            memlog_format::canonical::to_string(&e.current)
        );
    }
    for (label, edges, arrow) in [
        ("outgoing", &detail.outgoing, "→"),
        ("incoming", &detail.incoming, "←"),
    ] {
        if edges.is_empty() {
            continue;
        }
        println!("  {label}:");
        for edge in edges {
            println!(
                "    {} {arrow} {}  ({}, event {})",
                edge.rel_type,
                edge.other,
                output::short_time(&edge.ts),
                memlog_format::id::short(&edge.evidence)
            );
        }
    }
    if detail.truncated {
        println!("  (more edges: memlog sql \"SELECT * FROM edges WHERE src_id = '…'\")");
    }
    Ok(ExitCode::SUCCESS)
}
