use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use memlog_format::time;
use memlog_ops::rules;
use memlog_ops::workspace;
use serde_json::json;

use crate::output;

/// Reflect: find what repeats across sessions, for the agent to promote to
/// rules, and retire the rules that stopped being useful.
///
/// Lists promotion candidates computed from the log (memlog counts, the
/// agent judges): decisions (facts, notes) repeated in 3 or more sessions,
/// the same tool failure in 2 or more sessions with the call that then
/// worked, files changed together in 3 or more sessions; then the
/// reflection instruction (validate, generalise, look for contradicting
/// evidence, promote with `memlog rules add`). It also retires, with a
/// `rule_retired` event, every rule neither recalled nor reinforced for
/// `learn.rule_unused_days` (180) or contradicted
/// `learn.rule_contradictions` (2) times; forgetting that event restores
/// the rule. The SessionEnd hook runs it in the background (at most every
/// `learn.reflect_every_minutes`), and the next SessionStart briefing
/// offers its candidates with the command that promotes each.
#[derive(Args)]
pub struct ReflectArgs {
    /// Print {"candidates", "retired", "instruction"} as JSON.
    #[arg(long)]
    json: bool,

    /// Only if reflection is due (it last ran longer ago than
    /// `learn.reflect_every_minutes`), after waiting for one that is
    /// running; else do nothing and print nothing. What the SessionEnd
    /// hook starts.
    #[arg(long)]
    if_due: bool,

    /// Judge rule retirement as of this date or time instead of now.
    #[arg(long, value_name = "DATE", hide = true)]
    now: Option<String>,
}

pub fn cmd_reflect(dir: &Path, args: ReflectArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open_for_writing(dir)?;
    let now_ms = match &args.now {
        Some(d) => time::parse_given(d)?.as_millisecond(),
        None => time::to_ms(&time::now()),
    };
    let reflected = if args.if_due {
        match memlog_ops::reflect::run_if_due(&repo, now_ms)? {
            Some(r) => r,
            None => return Ok(ExitCode::SUCCESS),
        }
    } else {
        memlog_ops::reflect::run(&repo, now_ms)?
    };
    let memlog_ops::reflect::Reflected {
        candidates,
        retired,
        commit,
    } = reflected;
    let instruction = rules::reflection_instruction(&candidates);
    if args.json {
        output::print_json(&json!({
            "candidates": candidates,
            "retired": retired,
            "commit": commit,
            "instruction": instruction,
        }))?;
    } else {
        for r in &retired {
            println!(
                "retired {} ({}): {}",
                &r.rule[..12.min(r.rule.len())],
                r.reason,
                r.text
            );
        }
        print!("{instruction}");
    }
    Ok(ExitCode::SUCCESS)
}
