//! L2 facts asked of the agent (docs/DESIGN.md §12): the ProMem
//! instruction — a session's compact view, the three steps (extract, match
//! against the source, self-question) and how to hand the facts back —
//! which the Stop hook answers with once a session has enough new events,
//! and `memlog extract --prompt SESSION` and `/memory-extract` print.
//!
//! memlog never calls a model: the agent writes the facts, memlog aligns
//! each quote to its event and rejects what it cannot find.

use std::collections::BTreeMap;

use memlog_format::event::{first_line, truncate_chars};
use memlog_format::{Event, EventId, Kind};
use memlog_indexer::{Projections, lookup};
use serde::Serialize;
use serde_json::Value;

use crate::bail;
use crate::concepts;
use crate::error::Result;

/// Lines of each section of the compact view, at most.
const MAX_LINES: usize = 12;
/// Characters of each line of the compact view, at most.
const MAX_LINE: usize = 160;

/// One line of the compact view: an event's id and what it says.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ViewLine {
    /// The event to cite.
    pub id: EventId,
    /// Its first line, cut.
    pub text: String,
}

/// A file the session worked on.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FileLine {
    /// The path as the tool saw it.
    pub path: String,
    /// Whether the session changed it (Edit, Write…), not only read it.
    pub changed: bool,
    /// Tool calls on it.
    pub calls: usize,
    /// The last call on it.
    pub last: EventId,
}

/// A session's L1 material in a few lines per section, with event ids.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SessionView {
    /// The session.
    pub session: String,
    /// Events the view covers (bookkeeping left out).
    pub events: usize,
    /// What the user asked.
    pub prompts: Vec<ViewLine>,
    /// What the agent answered and decided.
    pub answers: Vec<ViewLine>,
    /// Files it touched, changed ones first.
    pub files: Vec<FileLine>,
    /// Tool calls that failed.
    pub failures: Vec<ViewLine>,
}

/// The instruction for a whole session (`memlog extract --prompt`), with
/// the concepts it may be filed under. `latest` names the session of the
/// latest prompt (the running one, for `/memory-extract`).
pub fn prompt_for(p: &Projections, session: &str) -> Result<String> {
    let latest;
    let session = if session == LATEST {
        latest = latest_session(p)?;
        latest.as_str()
    } else {
        session
    };
    let events: Vec<Event> = lookup::session_events(p, session)?
        .into_iter()
        .map(|s| s.event)
        .collect();
    if events.is_empty() {
        bail!("no session is named {session:?} (`memlog log` lists them)");
    }
    let concepts: Vec<(String, String)> = concepts::list(p)?
        .into_iter()
        .map(|c| (c.name, c.topics.join("; ")))
        .collect();
    Ok(instruction(
        &session_view(session, &events),
        Some(&concepts),
    ))
}

/// The session name `--prompt` reads as the latest prompt's session.
pub const LATEST: &str = "latest";

fn latest_session(p: &Projections) -> Result<String> {
    let kinds = [Kind::UserPrompt.as_str().to_string()];
    let rows = lookup::timeline(
        p,
        &lookup::TimelineQuery {
            session: None,
            since_ms: None,
            until_ms: Some(i64::MAX),
            kinds: &kinds,
            latest: true,
            limit: 1,
        },
    )?;
    match rows.into_iter().last() {
        Some(s) => Ok(s.event.session),
        None => bail!("no session has a prompt yet"),
    }
}

/// Whether an event is material for facts (not bookkeeping).
pub fn is_material(kind: &Kind) -> bool {
    !matches!(
        kind,
        Kind::SessionStart
            | Kind::SessionEnd
            | Kind::Recall
            | Kind::Reinforce
            | Kind::Forget
            | Kind::ExtractionRequest
            | Kind::RuleRetired
            | Kind::Review
    )
}

/// The events of a session since the Stop hook last asked for facts
/// (all of them if it never did), in their order.
pub fn since_last_request(events: &[Event]) -> &[Event] {
    match events
        .iter()
        .rposition(|e| e.kind == Kind::ExtractionRequest)
    {
        Some(i) => &events[i + 1..],
        None => events,
    }
}

/// The compact view of `events` (one session's, in order).
pub fn session_view(session: &str, events: &[Event]) -> SessionView {
    let mut view = SessionView {
        session: session.to_string(),
        ..SessionView::default()
    };
    let mut files: BTreeMap<String, FileLine> = BTreeMap::new();
    for e in events.iter().filter(|e| is_material(&e.kind)) {
        view.events += 1;
        let line = || ViewLine {
            id: e.id.clone(),
            text: e.headline(MAX_LINE),
        };
        match e.kind {
            Kind::UserPrompt => view.prompts.push(line()),
            Kind::AgentResponse | Kind::Note | Kind::SessionSummary => view.answers.push(line()),
            Kind::ToolObservation => {
                let tool = e.body.get("tool").and_then(Value::as_str).unwrap_or("");
                if e.body.get("success").and_then(Value::as_bool) == Some(false) {
                    let error = e.body.get("error").and_then(Value::as_str).unwrap_or("");
                    let text = if error.is_empty() {
                        e.headline(MAX_LINE)
                    } else {
                        format!("{} — {}", e.headline(MAX_LINE / 2), first_line(error))
                    };
                    view.failures.push(ViewLine {
                        id: e.id.clone(),
                        text: truncate_chars(&text, MAX_LINE),
                    });
                }
                if let Some(path) = file_of(e) {
                    let changed = matches!(
                        tool,
                        "Edit" | "Write" | "MultiEdit" | "NotebookEdit" | "apply_patch"
                    );
                    let f = files.entry(path.clone()).or_insert(FileLine {
                        path,
                        changed: false,
                        calls: 0,
                        last: e.id.clone(),
                    });
                    f.changed |= changed;
                    f.calls += 1;
                    f.last = e.id.clone();
                }
            }
            _ => {}
        }
    }
    let mut files: Vec<FileLine> = files.into_values().collect();
    files.sort_by(|a, b| b.changed.cmp(&a.changed).then(b.calls.cmp(&a.calls)));
    view.files = files;
    // the latest lines matter most when a long session is cut
    for list in [&mut view.prompts, &mut view.answers, &mut view.failures] {
        let cut = list.len().saturating_sub(MAX_LINES);
        list.drain(..cut);
    }
    view.files.truncate(MAX_LINES);
    view
}

/// The file a tool call worked on.
fn file_of(e: &Event) -> Option<String> {
    ["metadata", "input"].iter().find_map(|container| {
        let m = e.body.get(*container)?;
        ["file_path", "notebook_path"]
            .iter()
            .find_map(|k| m.get(*k).and_then(Value::as_str))
            .map(str::to_string)
    })
}

/// The ProMem instruction for `view`: what to extract, how to verify it,
/// and exactly how to hand the facts back. `concepts` are the existing
/// concepts (name, topics) the agent may file the session under; `None`
/// when they were not read (the hook's time is short), and the agent is
/// told how to list them.
pub fn instruction(view: &SessionView, concepts: Option<&[(String, String)]>) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "memlog: session {} has {} new events. Before you stop, keep what later sessions \
         should know as verified facts. memlog checks every quote against its event; it \
         never calls a model, so the facts are yours to write.\n\n",
        view.session, view.events
    ));
    out.push_str("Compact view (cite these event ids; `memlog show ID` prints one whole):\n");
    section(&mut out, "Prompts", &view.prompts);
    section(&mut out, "Answers and decisions", &view.answers);
    if !view.files.is_empty() {
        out.push_str("Files:\n");
        for f in &view.files {
            out.push_str(&format!(
                "- {} {} ({} call{}, last {})\n",
                f.path,
                if f.changed { "changed" } else { "read" },
                f.calls,
                if f.calls == 1 { "" } else { "s" },
                f.last.short()
            ));
        }
    }
    section(&mut out, "Failures", &view.failures);
    out.push_str(
        "\nThree steps:\n\
         1. Extract: list the facts worth keeping — what was asked, what was decided and why, \
         problems and their fixes, conventions, what files are for. One self-contained \
         sentence each.\n\
         2. Match against the source: for each fact copy the exact words of the event that \
         supports it (`quote`) and that event's id (`event`); re-read the events for anything \
         important you missed.\n\
         3. Self-question: for each fact ask \"which words of the source prove this?\" and drop \
         every fact whose quote does not say it. Never invent or paraphrase a quote.\n\n\
         Hand the facts back in one call (Bash):\n\
         memlog extract --facts - <<'EOF'\n\
         [{\"text\": \"the fact\", \"quote\": \"exact words of the event\", \"event\": \"EVENT_ID\"}]\n\
         EOF\n\
         or, one fact at a time, the MCP tool memory_remember with kind \"fact\", the text, \
         its quote and evidence [EVENT_ID]. A fact that contradicts or replaces an older one \
         names it: \"supersedes\": \"OLD_ID\". memlog lists the facts it rejected (quote \
         not found) so you can fix or drop them. If nothing is worth keeping, just stop.\n",
    );
    out.push_str(&format!(
        "\nThen file the session under a concept: name its topic in 3 to 5 words; join an \
         existing concept only when it truly means the same work (not shared files or \
         words), else create one:\n\
         memlog concepts add \"CONCEPT NAME\" --topic \"3 TO 5 WORDS\" --session {} [--fact FACT_ID…]\n",
        view.session
    ));
    match concepts {
        None => out.push_str("`memlog concepts` lists the existing concepts and their topics.\n"),
        Some([]) => out.push_str("Existing concepts: none yet.\n"),
        Some(list) => {
            out.push_str("Existing concepts:\n");
            for (name, topic) in list {
                out.push_str(&format!("- {name}: {topic}\n"));
            }
        }
    }
    out
}

fn section(out: &mut String, title: &str, lines: &[ViewLine]) {
    if lines.is_empty() {
        return;
    }
    out.push_str(title);
    out.push_str(":\n");
    for l in lines {
        out.push_str(&format!("- {} {}\n", l.id.short(), l.text));
    }
}

#[cfg(test)]
mod tests {
    use memlog_format::Draft;
    use serde_json::json;

    use super::*;

    fn event(seq: u64, kind: Kind, body: Value) -> Event {
        let Value::Object(body) = body else {
            unreachable!()
        };
        Draft::new("s", "2026-11-22T05:27:21.123Z", kind, "p", body).into_event(seq)
    }

    #[test]
    fn the_view_lists_prompts_answers_files_and_failures() {
        let events = vec![
            event(0, Kind::SessionStart, json!({})),
            event(1, Kind::UserPrompt, json!({"text": "Fix getUserById"})),
            event(
                2,
                Kind::ToolObservation,
                json!({"tool": "Edit", "input": {"file_path": "src/user.rs"}, "success": true}),
            ),
            event(
                3,
                Kind::ToolObservation,
                json!({"tool": "Bash", "input": {"command": "cargo test"}, "success": false, "error": "exit 101\nmore"}),
            ),
            event(
                4,
                Kind::AgentResponse,
                json!({"text": "Fixed: ids are u64 now."}),
            ),
        ];
        let view = session_view("s", &events);
        assert_eq!(view.events, 4);
        assert_eq!(view.prompts[0].text, "Fix getUserById");
        assert_eq!(view.files[0].path, "src/user.rs");
        assert!(view.files[0].changed);
        assert_eq!(view.failures[0].text, "Bash: cargo test — exit 101");
        let text = instruction(&view, Some(&[]));
        assert!(text.contains(&events[1].id.short().to_string()), "{text}");
        assert!(text.contains("memlog extract --facts -"));
        assert!(text.contains("--session s [--fact"), "{text}");
        assert!(text.contains("Existing concepts: none yet."));
    }

    #[test]
    fn counting_restarts_after_a_request() {
        let events = vec![
            event(0, Kind::UserPrompt, json!({"text": "a"})),
            event(1, Kind::ExtractionRequest, json!({})),
            event(2, Kind::UserPrompt, json!({"text": "b"})),
        ];
        assert_eq!(since_last_request(&events).len(), 1);
    }
}
