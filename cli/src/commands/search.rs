use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use memlog_format::id;
use memlog_ops::search::{self, SearchQuery};
use memlog_ops::{diag, workspace};
use serde_json::json;

use crate::output;

/// Search memory.
///
/// Hybrid search over every live event (sealed or still in a journal):
/// full text, code-aware (`user` finds `getUserById`, exact identifiers rank
/// first), and, when the embedding model is installed, semantic similarity
/// (a paraphrase finds what it means), ranked with recency and importance
/// as `.memlog.yaml` says. Without the model it is full-text search. Rows are
/// compact — id, date, kind, session, score and the text on one line, from
/// where it matches when its start does not; `memlog show ID` gives the
/// whole event and its neighbours.
///
/// Facts and rules waiting for review, or rejected, are left out, as they
/// are from what agents are given: `memlog review` lists them. Run by an
/// agent's tool (Claude Code, Codex or Gemini CLI set a variable in its
/// environment), the prompts live sessions are being answered on are left
/// out too: the agent's own question is no memory.
#[derive(Args)]
pub struct SearchArgs {
    /// What to look for.
    query: String,

    /// Number of results.
    #[arg(short = 'n', long, default_value_t = 10)]
    limit: usize,

    /// Only events of this kind (repeatable).
    #[arg(long)]
    kind: Vec<String>,

    /// Only events of this session.
    #[arg(long)]
    session: Option<String>,

    /// Only events at or after this date or time (2026-11-01, RFC 3339).
    #[arg(long, value_name = "DATE")]
    since: Option<String>,

    /// Only events before this date or time.
    #[arg(long, value_name = "DATE")]
    until: Option<String>,

    /// Only events that touched or mention this file (full path or name).
    #[arg(long, value_name = "PATH")]
    file: Option<String>,

    /// Only events of this concept's sessions and facts (`memlog concepts`).
    #[arg(long, value_name = "NAME")]
    concept: Option<String>,

    /// Only events recorded by this agent (`meta.client`: claude-code,
    /// codex, gemini-cli; or claude, gemini). Filters the ranked hits, so
    /// fewer than --limit may come back.
    #[arg(long, value_name = "AGENT")]
    agent: Option<String>,

    /// hybrid (full text and vectors), fts (full text only) or vector
    /// (semantic only). Default: hybrid.
    #[arg(long, value_name = "MODE")]
    mode: Option<String>,

    /// How full-text and semantic relevance combine: weighted (the ranking
    /// weights) or rrf (reciprocal-rank fusion). Default: `ranking.fusion`.
    #[arg(long, value_name = "FUSION")]
    fusion: Option<String>,

    /// Print {"query", "hits": [...]} as JSON.
    #[arg(long)]
    json: bool,
}

pub fn cmd_search(dir: &Path, args: SearchArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open(dir)?;
    let session = args
        .session
        .as_deref()
        .map(|s| workspace::recorded_session(&repo, s));
    let found = search::one_shot(
        &repo,
        &SearchQuery {
            query: &args.query,
            limit: args.limit,
            kinds: &args.kind,
            session: session.as_deref(),
            since: args.since.as_deref(),
            until: args.until.as_deref(),
            file: args.file.as_deref(),
            concept: args.concept.as_deref(),
            agent: args.agent.as_deref(),
            mode: args.mode.as_deref(),
            fusion: args.fusion.as_deref(),
            // run by an agent's tool: the prompt being answered is no memory
            within_a_turn: memlog_agents::running_a_tool_of().is_some(),
        },
    )?;
    if let Some(note) = &found.note {
        diag::note(format_args!("full-text search only: {note}"));
    }
    if found.hits.iter().any(|h| {
        h.meta
            .as_object()
            .is_some_and(memlog_format::scope::is_personal)
    }) {
        memlog_ops::shown::mark(&repo);
    }
    if args.json {
        output::print_json(&json!({
            "query": args.query,
            "mode": found.mode,
            "semantic": found.semantic,
            "hits": found.hits
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    if found.hits.is_empty() {
        println!("no matches for {:?}", args.query);
    }
    for h in &found.hits {
        // labelled, so that an agent's hook reading this back knows
        let personal = h
            .meta
            .as_object()
            .is_some_and(memlog_format::scope::is_personal);
        println!(
            "{}  {}  {:<16}  {:<20}  {:.3}  {}{}",
            id::short(&h.id),
            output::short_time(&h.ts),
            h.kind,
            memlog_format::event::truncate_chars(&h.session, 20),
            h.score,
            if personal {
                format!("{} ", memlog_format::scope::PERSONAL_LABEL)
            } else {
                String::new()
            },
            h.preview(&args.query, 90)
        );
    }
    Ok(ExitCode::SUCCESS)
}
