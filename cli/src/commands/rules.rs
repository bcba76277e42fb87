use std::path::Path;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use memlog_ops::rules::{self, Promotion};
use memlog_ops::workspace;
use serde_json::json;

use crate::output;

/// Rules learned by reflection: rules, solutions and core patterns, each
/// with the events that prove it.
///
/// Without a subcommand, lists the active rules with their evidence, uses
/// (recalls, successes, failures) and contradictions, and the rules held
/// for review; `--all` adds the rejected and retired ones. Active rules
/// are injected at the start of every session; held and rejected ones are
/// not.
#[derive(Args)]
pub struct RulesArgs {
    #[command(subcommand)]
    command: Option<RulesCommand>,

    /// List rejected and retired rules too.
    #[arg(long)]
    all: bool,

    /// Print the rules as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand)]
enum RulesCommand {
    /// Promote a rule, with the events that prove it (sealed at once).
    Add {
        /// rule, solution or core_logic.
        #[arg(long, default_value = "rule")]
        kind: String,
        /// The rule, in a sentence or two.
        text: String,
        /// An event that proves it: an id or a unique prefix (repeatable).
        #[arg(long = "evidence", value_name = "ID", required = true)]
        evidence: Vec<String>,
        /// An older rule or fact this one replaces (repeatable).
        #[arg(long, value_name = "ID")]
        supersedes: Vec<String>,
        /// An older rule or fact this one contradicts (repeatable).
        #[arg(long, value_name = "ID")]
        contradicts: Vec<String>,
        /// Print {"id", "commit", "evidence"} as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Write the active rules into an agent's instructions file, inside a
    /// marked block memlog alone owns (replaced on each export; the rest
    /// of the file is left as it is). Exporting the same rules again
    /// changes nothing.
    Export {
        /// The file, relative to the work tree: AGENTS.md, CLAUDE.md, …
        #[arg(long, value_name = "FILE")]
        to: std::path::PathBuf,
        /// Print {"path", "rules", "changed"} as JSON.
        #[arg(long)]
        json: bool,
    },
}

pub fn cmd_rules(dir: &Path, args: RulesArgs) -> anyhow::Result<ExitCode> {
    if let Some(RulesCommand::Export { to, json }) = &args.command {
        let repo = workspace::open(dir)?;
        let projections = workspace::projections(&repo)?;
        let exported = memlog_ops::native::export_rules(&repo, &projections, to)?;
        if *json {
            output::print_json(&exported)?;
        } else {
            println!(
                "{} {} rules in {}",
                if exported.changed {
                    "wrote"
                } else {
                    "unchanged:"
                },
                exported.rules,
                exported.path.display()
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(RulesCommand::Add {
        kind,
        text,
        evidence,
        supersedes,
        contradicts,
        json,
    }) = args.command
    {
        let repo = workspace::open_for_writing(dir)?;
        let added = rules::add(
            &repo,
            &Promotion {
                rule_kind: &kind,
                text: &text,
                evidence: &evidence,
                supersedes: &supersedes,
                contradicts: &contradicts,
            },
        )?;
        if json {
            output::print_json(&added)?;
        } else {
            println!("{}", added.id);
            if added.pending {
                eprintln!(
                    "it waits for review: no agent is given it until `memlog review accept {}` \
                     (a rule that fetches or runs something from outside needs a person's yes)",
                    added.id.short()
                );
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    let repo = workspace::open(dir)?;
    let projections = workspace::projections(&repo)?;
    let list: Vec<rules::Rule> = rules::list(&projections)?
        .into_iter()
        .filter(|r| args.all || matches!(r.status, "active" | "held"))
        .collect();
    if args.json {
        output::print_json(&json!({ "rules": list }))?;
        return Ok(ExitCode::SUCCESS);
    }
    if list.is_empty() {
        println!(
            "no rules yet (`memlog reflect` finds candidates; `memlog rules add` promotes one)"
        );
    }
    for r in &list {
        let mut notes = vec![format!(
            "{} recalls, {} successes, {} failures",
            r.recalls, r.successes, r.failures
        )];
        if !r.contradicted_by.is_empty() {
            notes.push(format!("contradicted {}×", r.contradicted_by.len()));
        }
        if let Some(next) = &r.superseded_by {
            notes.push(format!("superseded by {}", &next[..12.min(next.len())]));
        }
        if let Some(why) = &r.retired {
            notes.push(format!("retired: {why}"));
        }
        match r.status {
            "held" => notes.push(format!(
                "held for review: `memlog review accept|reject {}`",
                r.id.short()
            )),
            "rejected" => notes.push("rejected in review".into()),
            _ => {}
        }
        println!("{}  [{}] {}", r.id.short(), r.rule_kind, r.text);
        println!(
            "    evidence {} · {}",
            r.evidence
                .iter()
                .map(|e| &e[..12.min(e.len())])
                .collect::<Vec<_>>()
                .join(" "),
            notes.join(" · ")
        );
    }
    Ok(ExitCode::SUCCESS)
}
