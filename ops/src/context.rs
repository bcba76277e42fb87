//! Context for an agent: the SessionStart briefing (recent sessions, open
//! tasks) and the memories most relevant to a prompt
//! ([`memlog_indexer::context`]), answered by a hook itself or by the warm
//! server of `memlog watch`.

use memlog_hooks::HookEvent;
use memlog_indexer::Projections;
use memlog_indexer::context::{Assembled, approx_tokens, assemble};
use memlog_indexer::overview::recent_sessions;
use memlog_store::Repo;

use crate::error::Result;
use crate::warm::ContextRequest;

/// The context for a hook's request: a briefing at SessionStart, the
/// memories most relevant to the prompt otherwise. Used by the hook itself
/// and by the warm server of `memlog watch`.
pub fn answer(repo: &Repo, p: &Projections, request: &ContextRequest) -> Result<Assembled> {
    let config = &repo.config;
    if request.event == HookEvent::SessionStart.as_str() {
        return briefing(p, config, &request.session);
    }
    Ok(assemble(
        p,
        config,
        &request.prompt,
        config.context.budget_tokens,
        Some(&request.session),
    )?)
}

/// SessionStart: the rules learned (active ones, within half the context
/// budget, cited so that their recall counts as use), recent sessions of
/// this project and open tasks.
pub fn briefing(
    p: &Projections,
    config: &memlog_format::Config,
    current: &str,
) -> Result<Assembled> {
    let mut md = String::new();
    let mut cited = Vec::new();
    // rules first (docs/DESIGN.md §10), within the context budget
    let rules = crate::rules::active(p)?;
    if !rules.is_empty() {
        let header =
            "## memlog: rules learned in this project\nCite a rule by [id] when you follow it.\n";
        let mut block = String::from(header);
        for r in &rules {
            let text: String = r.text.split_whitespace().collect::<Vec<_>>().join(" ");
            let line = format!(
                "- [{}] {}: {}\n",
                r.id.short(),
                r.rule_kind,
                memlog_format::event::truncate_chars(&text, 300)
            );
            if approx_tokens(&block) + approx_tokens(&line) > config.context.budget_tokens / 2 {
                break;
            }
            block.push_str(&line);
            cited.push(r.id.to_string());
        }
        if !cited.is_empty() {
            md.push_str(&block);
            md.push('\n');
        }
    }
    let sessions = recent_sessions(p, current, config.hooks.briefing_sessions)?;
    if !sessions.is_empty() {
        md.push_str("## memlog: recent sessions in this project\n");
        for s in &sessions {
            let prompt = s
                .first_prompt
                .as_deref()
                .and_then(|p| p.lines().next())
                .map(|p| memlog_format::event::truncate_chars(p, 100))
                .unwrap_or_default();
            md.push_str(&format!(
                "- {} · {} ({} events): {}\n",
                s.first_ts.get(..10).unwrap_or(&s.first_ts),
                s.session,
                s.events,
                prompt
            ));
        }
    }
    let open: Vec<_> = memlog_indexer::tasks::tasks(p)?
        .into_iter()
        .filter(|t| t.is_open())
        .take(10)
        .collect();
    if !open.is_empty() {
        md.push_str("\n## Open tasks\n");
        for t in &open {
            md.push_str(&format!("- [{}] {}\n", t.status, t.title));
        }
    }
    if !md.is_empty() {
        md.push_str("\nSearch earlier sessions with `memlog search \"…\"`; `memlog show ID` gives an event in full.\n");
    }
    Ok(Assembled {
        tokens: approx_tokens(&md),
        markdown: md,
        cited,
    })
}
