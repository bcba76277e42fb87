use std::path::Path;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use memlog_indexer::entities;

use memlog_ops::workspace;

use crate::output;

/// Walk the entity graph.
#[derive(Args)]
pub struct GraphArgs {
    #[command(subcommand)]
    command: GraphCommand,
}

#[derive(Subcommand)]
enum GraphCommand {
    /// The entities within --depth edges of KEY, either direction, nearest
    /// first.
    Neighbors {
        /// An entity id or alias (see `memlog entity show --help`).
        key: String,
        /// How many edges away (1 to 4).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=4))]
        depth: u8,
        /// Print the neighbours as a JSON array.
        #[arg(long)]
        json: bool,
    },
}

pub fn cmd_graph(dir: &Path, args: GraphArgs) -> anyhow::Result<ExitCode> {
    let GraphCommand::Neighbors { key, depth, json } = args.command;
    let repo = workspace::open(dir)?;
    let projections = workspace::projections(&repo)?;
    let key = workspace::entity_key(&repo, &key);
    let Some(found) = entities::neighbors(&projections, &key, usize::from(depth))? else {
        anyhow::bail!("no entity {key:?} (see `memlog entity show --help` for ids)");
    };
    if json {
        output::print_json(&found)?;
        return Ok(ExitCode::SUCCESS);
    }
    for n in &found {
        let arrow = if n.direction == "out" { "→" } else { "←" };
        println!(
            "{}  {} {arrow} {}  {}",
            n.depth,
            n.rel_type,
            n.entity_id,
            n.title.as_deref().unwrap_or("")
        );
    }
    if found.len() >= entities::MAX_NEIGHBORS {
        println!("(stopped at {} entities)", entities::MAX_NEIGHBORS);
    }
    Ok(ExitCode::SUCCESS)
}
