//! Context for an agent: the SessionStart briefing (recent sessions, open
//! tasks) and the memories most relevant to a prompt
//! ([`memlog_indexer::context`]), answered by a hook itself or by the warm
//! server of `memlog watch`.

use memlog_agents::HookEvent;
use memlog_indexer::Projections;
use memlog_indexer::context::{Assembled, approx_tokens, assemble};
use memlog_indexer::overview::recent_sessions;
use memlog_indexer::vectors::VectorAccess;
use memlog_store::Repo;

use crate::error::Result;
use crate::warm::ContextRequest;

/// The context for a hook's request: a briefing at SessionStart, the
/// memories most relevant to the prompt otherwise. Used by the hook itself
/// and by the warm server of `memlog watch`.
pub fn answer(repo: &Repo, p: &Projections, request: &ContextRequest) -> Result<Assembled> {
    if request.event == HookEvent::SessionStart.as_str() {
        // a session already personal (resumed) may be shown personal
        // memory; any other is shared, and its briefing holds none
        let personal = repo.layout().is_personal_session(&request.session);
        let mut b = briefing(p, &repo.config, &request.session, personal)?;
        let offer = crate::reflect::offer(repo);
        if !offer.is_empty() {
            b.markdown = format!(
                "{}
{offer}",
                b.markdown
            );
            b.tokens = approx_tokens(&b.markdown);
        }
        return Ok(b);
    }
    for_prompt(
        repo,
        p,
        &PromptContext {
            prompt: &request.prompt,
            budget: None,
            exclude_session: Some(&request.session),
        },
        request.query_vector.as_deref(),
    )
}

/// What a prompt's context is asked for.
#[derive(Clone, Copy, Debug, Default)]
pub struct PromptContext<'a> {
    /// The prompt to find memories for.
    pub prompt: &'a str,
    /// Token budget (default: `context.budget_tokens`).
    pub budget: Option<usize>,
    /// The session asking, left out of its own context.
    pub exclude_session: Option<&'a str>,
}

/// The memories most relevant to a prompt, as markdown for an agent: the
/// one renderer of a prompt's context, for hooks, the warm server and
/// `memlog context`. `query_vector` is the prompt's embedding by the model
/// of the vectors, when one is at hand.
pub fn for_prompt(
    repo: &Repo,
    p: &Projections,
    request: &PromptContext<'_>,
    query_vector: Option<&[f32]>,
) -> Result<Assembled> {
    let config = &repo.config;
    Ok(assemble(
        p,
        config,
        request.prompt,
        request.budget.unwrap_or(config.context.budget_tokens),
        request.exclude_session,
        query_vector,
    )?)
}

/// [`for_prompt`] in a one-shot process, as a hook would: the projections
/// opened with their vectors scanned, the prompt's embedding from a
/// running `memlog watch` that holds the vectors' model, else none (no
/// model is loaded).
pub fn one_shot(repo: &Repo, request: &PromptContext<'_>) -> Result<Assembled> {
    let mut projections = crate::workspace::projections(repo)?;
    projections.load_vectors_as(VectorAccess::Scan);
    let query_vector = projections.vectors().and_then(|v| {
        crate::warm::ask_embedding(repo, request.prompt)
            .filter(|(model, _)| *model == v.meta.model)
            .map(|(_, vector)| vector)
    });
    for_prompt(repo, &projections, request, query_vector.as_deref())
}

/// Prompts, answers and notes of the session recalled after compaction.
const RECAP_PROMPTS: usize = 6;
const RECAP_ANSWERS: usize = 3;
const RECAP_FACTS: usize = 10;
/// Longest line of a recap, in characters.
const RECAP_LINE: usize = 240;

/// After compaction (SessionStart with source `compact`): what the session
/// itself established, read from its journal (the live session is not
/// indexed): its facts and notes, its last prompts (the decisions asked
/// for) and answers, each cited by id, so the summary the agent continues
/// from does not erase them. Open tasks come with the briefing. Empty when
/// the journal has nothing to recall.
pub fn session_recap(repo: &Repo, session: &str) -> Result<String> {
    use memlog_format::Kind;
    let journal = memlog_store::journal::Journal::new(&repo.journal_dir(), session)?;
    let mut events = if journal.path().exists() {
        journal.read()?.0
    } else {
        Vec::new()
    };
    // A session resumed (`claude --resume`) was sealed at its earlier end:
    // that part is in the index, or in a segment the index lacks yet.
    let mut p = match memlog_indexer::Projections::open(repo) {
        Ok(p) => p,
        Err(_) => memlog_indexer::Projections::empty()?,
    };
    p.read_unindexed(
        repo,
        memlog_indexer::projection::Reach::Prompt {
            asking: Some(session),
        },
    )?;
    let mut ids: std::collections::HashSet<_> = events.iter().map(|e| e.id.clone()).collect();
    let sealed = memlog_indexer::lookup::session_events(&p, session)?
        .into_iter()
        .map(|s| s.event)
        .chain(
            p.unindexed()
                .events()
                .iter()
                .filter(|u| u.event.session == session)
                .map(|u| u.event.clone()),
        );
    for e in sealed {
        if ids.insert(e.id.clone()) {
            events.push(e);
        }
    }
    events.sort_by(|a, b| (&a.ts, a.seq).cmp(&(&b.ts, b.seq)));
    let line = |e: &memlog_format::Event| {
        format!(
            "- [{}] {}\n",
            e.id.short(),
            memlog_format::event::one_line(e.text().unwrap_or_default(), RECAP_LINE)
        )
    };
    let last = |kinds: &[Kind], n: usize| -> Vec<String> {
        let picked: Vec<String> = events
            .iter()
            .rev()
            .filter(|e| kinds.contains(&e.kind) && e.text().is_some_and(|t| !t.trim().is_empty()))
            // a subagent's prompt is the parent agent's words, not the user's
            .filter(|e| e.kind != Kind::UserPrompt || e.is_users_prompt())
            .take(n)
            .map(line)
            .collect();
        picked.into_iter().rev().collect()
    };
    let sections = [
        (
            "Facts and notes",
            last(&[Kind::Fact, Kind::Note], RECAP_FACTS),
        ),
        ("Last prompts", last(&[Kind::UserPrompt], RECAP_PROMPTS)),
        ("Last answers", last(&[Kind::AgentResponse], RECAP_ANSWERS)),
    ];
    let mut md = String::new();
    for (title, lines) in sections {
        if !lines.is_empty() {
            md.push_str(&format!("\n### {title}\n"));
            md.extend(lines);
        }
    }
    if md.is_empty() {
        return Ok(md);
    }
    Ok(format!(
        "## memlog: this session before compaction\nWhat this session established, from its log; `memlog show ID` gives an event in full.\n{md}"
    ))
}

/// Longest outcome a briefing shows for a recent session, in characters.
const OUTCOME_CHARS: usize = 160;

/// The text of a session's last `agent_response`, if it has one: what came
/// of the session, beside the prompt that opened it (a field test found a
/// briefing of first prompts alone too thin to act on).
fn last_answer(p: &Projections, session: &str) -> Result<Option<String>> {
    Ok(
        memlog_indexer::lookup::last_in_session(p, session, "agent_response")?
            .and_then(|s| s.event.text().map(str::to_string)),
    )
}

/// SessionStart: the rules learned (active ones, within half the context
/// budget, cited so that their recall counts as use), recent sessions of
/// this project and open tasks.
///
/// A briefing goes to every session, whatever it is about, so for a
/// shared session it holds no personal words: were it to, the session
/// would become personal (its answers may repeat them), and the next
/// briefing would list it, until nothing was shared. Personal rules and
/// tasks reach a session through its prompts, when they are relevant
/// (which keeps that session on this machine); a personal session is
/// listed without its prompt. `personal` (the session is personal
/// already) lifts this.
pub fn briefing(
    p: &Projections,
    config: &memlog_format::Config,
    current: &str,
    personal: bool,
) -> Result<Assembled> {
    let mut md = String::new();
    let mut cited = Vec::new();
    let mut shown_personal = false;
    // whether what rests on `ids` may be shown, and whether it is personal
    let may_show = |ids: &[memlog_format::EventId]| -> Result<(bool, bool)> {
        let is_personal = crate::workspace::rests_on_personal(p, ids)?;
        Ok((personal || !is_personal, is_personal))
    };
    // rules first (docs/DESIGN.md §12), within the context budget
    let rules = crate::rules::active(p)?;
    if !rules.is_empty() {
        let header =
            "## memlog: rules learned in this project\nCite a rule by [id] when you follow it.\n";
        let mut block = String::from(header);
        for r in &rules {
            let (show, is_personal) = may_show(std::slice::from_ref(&r.id))?;
            if !show {
                continue;
            }
            let line = format!(
                "- [{}] {}: {}\n",
                r.id.short(),
                r.rule_kind,
                memlog_format::event::one_line(&r.text, 300)
            );
            if approx_tokens(&block) + approx_tokens(&line) > config.context.budget_tokens / 2 {
                break;
            }
            block.push_str(&line);
            cited.push(r.id.clone());
            shown_personal |= is_personal;
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
            let hidden = memlog_indexer::lookup::session_is_personal(p, &s.session)?;
            shown_personal |= hidden && personal;
            let prompt = match s.first_prompt.as_deref().and_then(|p| p.lines().next()) {
                _ if hidden && !personal => "(personal)".to_string(),
                Some(p) => memlog_format::event::truncate_chars(p, 100),
                None => String::new(),
            };
            // what came of it: the session's last answer, where it may be shown
            let answer = if hidden && !personal {
                None
            } else {
                last_answer(p, &s.session)?
            };
            let outcome = answer
                .map(|a| format!(" → {}", memlog_format::event::one_line(&a, OUTCOME_CHARS)))
                .unwrap_or_default();
            md.push_str(&format!(
                "- {} · {} ({} events): {}{outcome}\n",
                s.first_ts.get(..10).unwrap_or(&s.first_ts),
                s.session,
                s.events,
                prompt
            ));
        }
    }
    let mut open = Vec::new();
    for t in memlog_indexer::tasks::tasks(p)?
        .into_iter()
        .filter(|t| t.is_open())
    {
        if open.len() == 10 {
            break;
        }
        // a task kept in personal sessions: its latest event is personal
        // (one a shared session changed has its title shared already)
        let (show, is_personal) = may_show(std::slice::from_ref(&t.last_event))?;
        if show {
            shown_personal |= is_personal;
            open.push(t);
        }
    }
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
        withheld: md
            .is_empty()
            .then(|| "nothing to brief: no earlier session, rule or open task".into()),
        markdown: md,
        cited,
        ranked_by: None,
        gate: None,
        personal: shown_personal,
    })
}
