//! The event: one line of the log.
//!
//! Every event is a JSON object with exactly the fields `v`, `id`, `session`,
//! `seq`, `ts`, `kind`, `project`, `body` and `meta`. Its `id` is the blake3
//! hash (hex) of the [canonical](crate::canonical) JSON of the event without
//! `id`, so identical content has an identical id and is stored once.

use std::fmt;

use serde_json::{Map, Value};

use crate::canonical;
use crate::id::EventId;

/// Version of the event format written by this crate.
pub const FORMAT_VERSION: u64 = 1;

/// What an event records. Unknown kinds read from a newer log are kept as
/// [`Kind::Other`] so that reading never loses them.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A session began.
    SessionStart,
    /// What the user asked.
    UserPrompt,
    /// What the agent answered.
    AgentResponse,
    /// A tool call, its input and its (cut) output.
    ToolObservation,
    /// A session ended.
    SessionEnd,
    /// A summary of a session (a compaction's, or a transcript's).
    SessionSummary,
    /// A note someone wrote down.
    Note,
    /// A fact, ideally aligned to the words of its evidence.
    Fact,
    /// A task was created.
    TaskCreated,
    /// A task's status changed.
    TaskStatusChanged,
    /// A task's priority changed.
    TaskPriorityChanged,
    /// A task's blockers were set.
    TaskBlockersSet,
    /// A task change the state machine refused.
    TaskTransitionRejected,
    /// Events to hide (by id, session or date).
    Forget,
    /// Memories that helped or misled.
    Reinforce,
    /// Memories injected into or cited in a session.
    Recall,
    /// The Stop hook asked the agent to extract the session's facts.
    ExtractionRequest,
    /// A rule, solution or core pattern promoted by reflection, with its
    /// evidence.
    Rule,
    /// A rule taken out of use (unused too long, or contradicted).
    RuleRetired,
    /// Sessions and facts grouped under a topic by the agent.
    Concept,
    /// A person accepted or rejected a fact or rule waiting for review
    /// (`learn.review`).
    Review,
    /// A kind this version does not know (kept as written).
    Other(String),
}

impl Kind {
    /// Every kind this version knows, in documentation order.
    pub const KNOWN: [Kind; 21] = [
        Kind::SessionStart,
        Kind::UserPrompt,
        Kind::AgentResponse,
        Kind::ToolObservation,
        Kind::SessionEnd,
        Kind::SessionSummary,
        Kind::Note,
        Kind::Fact,
        Kind::TaskCreated,
        Kind::TaskStatusChanged,
        Kind::TaskPriorityChanged,
        Kind::TaskBlockersSet,
        Kind::TaskTransitionRejected,
        Kind::Forget,
        Kind::Reinforce,
        Kind::Recall,
        Kind::ExtractionRequest,
        Kind::Rule,
        Kind::RuleRetired,
        Kind::Concept,
        Kind::Review,
    ];

    /// The kind as stored (`user_prompt`, …).
    pub fn as_str(&self) -> &str {
        match self {
            Kind::SessionStart => "session_start",
            Kind::UserPrompt => "user_prompt",
            Kind::AgentResponse => "agent_response",
            Kind::ToolObservation => "tool_observation",
            Kind::SessionEnd => "session_end",
            Kind::SessionSummary => "session_summary",
            Kind::Note => "note",
            Kind::Fact => "fact",
            Kind::TaskCreated => "task_created",
            Kind::TaskStatusChanged => "task_status_changed",
            Kind::TaskPriorityChanged => "task_priority_changed",
            Kind::TaskBlockersSet => "task_blockers_set",
            Kind::TaskTransitionRejected => "task_transition_rejected",
            Kind::Forget => "forget",
            Kind::Reinforce => "reinforce",
            Kind::Recall => "recall",
            Kind::ExtractionRequest => "extraction_request",
            Kind::Rule => "rule",
            Kind::RuleRetired => "rule_retired",
            Kind::Concept => "concept",
            Kind::Review => "review",
            Kind::Other(s) => s,
        }
    }

    /// Reads any kind name; names this version does not know become
    /// [`Kind::Other`].
    pub fn parse(name: &str) -> Kind {
        Kind::KNOWN
            .iter()
            .find(|k| k.as_str() == name)
            .cloned()
            .unwrap_or_else(|| Kind::Other(name.to_string()))
    }

    /// Parses a kind given by a person or a writer: unknown names are an
    /// error listing the known ones.
    pub fn parse_known(name: &str) -> Result<Kind, String> {
        match Kind::parse(name) {
            Kind::Other(_) => Err(format!(
                "unknown kind {name:?}; known kinds: {}",
                Kind::KNOWN
                    .iter()
                    .map(Kind::as_str)
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            k => Ok(k),
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An event before it has a place in its session (`seq`) and an id.
#[derive(Clone, Debug, PartialEq)]
pub struct Draft {
    /// The session it belongs to.
    pub session: String,
    /// When it happened (RFC 3339, UTC, milliseconds).
    pub ts: String,
    /// What it is.
    pub kind: Kind,
    /// The project.
    pub project: String,
    /// The kind's payload.
    pub body: Map<String, Value>,
    /// Free metadata (cwd, branch, client, external ref…).
    pub meta: Map<String, Value>,
}

impl Draft {
    /// A draft with the given body and no metadata.
    pub fn new(
        session: impl Into<String>,
        ts: impl Into<String>,
        kind: Kind,
        project: impl Into<String>,
        body: Map<String, Value>,
    ) -> Draft {
        Draft {
            session: session.into(),
            ts: ts.into(),
            kind,
            project: project.into(),
            body,
            meta: Map::new(),
        }
    }

    /// A draft whose body is `{"text": text}`.
    pub fn text(
        session: impl Into<String>,
        ts: impl Into<String>,
        kind: Kind,
        project: impl Into<String>,
        text: impl Into<String>,
    ) -> Draft {
        let mut body = Map::new();
        body.insert("text".into(), Value::String(text.into()));
        Draft::new(session, ts, kind, project, body)
    }

    /// Gives the draft its sequence number and computes its id.
    pub fn into_event(mut self, seq: u64) -> Event {
        // In memory as on disk: integral floats become integers.
        self.body.values_mut().for_each(canonical::normalize);
        self.meta.values_mut().for_each(canonical::normalize);
        let mut event = Event {
            v: FORMAT_VERSION,
            id: EventId::default(),
            session: self.session,
            seq,
            ts: self.ts,
            kind: self.kind,
            project: self.project,
            body: self.body,
            meta: self.meta,
        };
        event.id = event.compute_id();
        event
    }
}

/// One entry of the log.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// Format version.
    pub v: u64,
    /// blake3 of the canonical JSON without `id` (docs/DESIGN.md §2).
    pub id: EventId,
    /// The session it belongs to.
    pub session: String,
    /// Its place in the session.
    pub seq: u64,
    /// When it happened (RFC 3339, UTC, milliseconds).
    pub ts: String,
    /// What it is.
    pub kind: Kind,
    /// The project.
    pub project: String,
    /// The kind's payload.
    pub body: Map<String, Value>,
    /// Free metadata (cwd, branch, client, external ref…).
    pub meta: Map<String, Value>,
}

const FIELDS: [&str; 9] = [
    "v", "id", "session", "seq", "ts", "kind", "project", "body", "meta",
];

impl Event {
    /// The event as a JSON object, with or without its `id`.
    pub fn to_value(&self, with_id: bool) -> Value {
        let mut map = Map::new();
        map.insert("v".into(), Value::from(self.v));
        if with_id {
            map.insert("id".into(), Value::String(self.id.to_string()));
        }
        map.insert("session".into(), Value::String(self.session.clone()));
        map.insert("seq".into(), Value::from(self.seq));
        map.insert("ts".into(), Value::String(self.ts.clone()));
        map.insert("kind".into(), Value::String(self.kind.as_str().to_string()));
        map.insert("project".into(), Value::String(self.project.clone()));
        map.insert("body".into(), Value::Object(self.body.clone()));
        map.insert("meta".into(), Value::Object(self.meta.clone()));
        Value::Object(map)
    }

    /// blake3 (hex) of the canonical JSON of the event without `id`.
    pub fn compute_id(&self) -> EventId {
        let mut out = String::with_capacity(512);
        self.write_canonical(&mut out, false);
        EventId::unchecked(blake3::hash(out.as_bytes()).to_hex().to_string())
    }

    /// The canonical line (without the trailing newline).
    pub fn canonical_line(&self) -> String {
        let mut out = String::with_capacity(512);
        self.write_canonical(&mut out, true);
        out
    }

    /// Appends the canonical form, with or without `id`, straight from the
    /// fields (the same bytes as `canonical::write(&self.to_value(..))`,
    /// which the tests check, without building a `Value`). The keys are in
    /// byte order: body, id, kind, meta, project, seq, session, ts, v.
    pub fn write_canonical(&self, out: &mut String, with_id: bool) {
        out.push_str("{\"body\":");
        canonical::write_map(out, &self.body);
        if with_id {
            out.push_str(",\"id\":");
            canonical::write_str(out, &self.id);
        }
        out.push_str(",\"kind\":");
        canonical::write_str(out, self.kind.as_str());
        out.push_str(",\"meta\":");
        canonical::write_map(out, &self.meta);
        out.push_str(",\"project\":");
        canonical::write_str(out, &self.project);
        out.push_str(",\"seq\":");
        out.push_str(&self.seq.to_string());
        out.push_str(",\"session\":");
        canonical::write_str(out, &self.session);
        out.push_str(",\"ts\":");
        canonical::write_str(out, &self.ts);
        out.push_str(",\"v\":");
        out.push_str(&self.v.to_string());
        out.push('}');
    }

    /// Parses one stored line and checks that its id matches its content.
    pub fn from_line(line: &str) -> Result<Event, String> {
        let value: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
        let event = Event::from_value(value)?;
        let expected = event.compute_id();
        if expected != event.id {
            return Err(format!(
                "id {} does not match the event's content (expected {expected})",
                event.id
            ));
        }
        Ok(event)
    }

    /// Reads the fields of a stored event without checking its id.
    pub fn from_value(value: Value) -> Result<Event, String> {
        let Value::Object(mut map) = value else {
            return Err("an event must be a JSON object".into());
        };
        if let Some(extra) = map.keys().find(|k| !FIELDS.contains(&k.as_str())) {
            return Err(format!("unknown field {extra:?}"));
        }
        let v = take_u64(&mut map, "v")?;
        if v != FORMAT_VERSION {
            return Err(format!(
                "format version {v} is not supported (this memlog reads version {FORMAT_VERSION})"
            ));
        }
        Ok(Event {
            v,
            id: EventId::unchecked(take_string(&mut map, "id")?),
            session: take_string(&mut map, "session")?,
            seq: take_u64(&mut map, "seq")?,
            ts: take_string(&mut map, "ts")?,
            kind: Kind::parse(&take_string(&mut map, "kind")?),
            project: take_string(&mut map, "project")?,
            body: take_object(&mut map, "body")?,
            meta: take_object(&mut map, "meta")?,
        })
    }

    /// Whether this is a prompt the user typed: a `user_prompt` that is not
    /// a subagent's (`meta.sidechain`: its prompt is the parent agent's
    /// words), for commit subjects, prompt counts and recaps.
    pub fn is_users_prompt(&self) -> bool {
        self.kind == Kind::UserPrompt
            && self.meta.get("sidechain").and_then(Value::as_bool) != Some(true)
    }

    /// `body.text`, the text of prompts, answers, notes and most other kinds.
    pub fn text(&self) -> Option<&str> {
        self.body.get("text").and_then(Value::as_str)
    }

    /// A one-line description for listings: the text on one line ([`one_line`]:
    /// an answer's first line is often only its heading), or for a tool
    /// observation `Tool: input`, cut to `max` characters.
    pub fn headline(&self, max: usize) -> String {
        let line = match self.text() {
            Some(text) => return one_line(text, max),
            None => {
                let tool = self.body.get("tool").and_then(Value::as_str);
                let subject = ["target", "title", "key", "reason"]
                    .iter()
                    .find_map(|k| self.body.get(*k).and_then(Value::as_str))
                    .map(str::to_string)
                    .or_else(|| self.body.get("input").map(compact_input));
                match (tool, subject) {
                    (Some(t), Some(s)) => format!("{t}: {}", first_line(&s)),
                    (Some(t), None) => t.to_string(),
                    (None, Some(s)) => first_line(&s).to_string(),
                    (None, None) => String::new(),
                }
            }
        };
        truncate_chars(&line, max)
    }

    /// An external reference kept from an import (`meta.ref`).
    pub fn external_ref(&self) -> Option<&str> {
        self.meta.get("ref").and_then(Value::as_str)
    }
}

/// A tool input as a short string: its most telling field, else compact JSON.
fn compact_input(input: &Value) -> String {
    const TELLING: [&str; 5] = ["file_path", "path", "pattern", "url", "query"];
    if let Some(command) = crate::command::command_line(input) {
        return command;
    }
    if let Value::Object(map) = input
        && let Some(s) = TELLING
            .iter()
            .find_map(|k| map.get(*k).and_then(Value::as_str))
    {
        return s.to_string();
    }
    match input {
        Value::String(s) => s.clone(),
        other => canonical::to_string(other),
    }
}

/// The first non-empty line of `text`, trimmed.
pub fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// Cuts `s` to at most `max` characters, marking the cut with `…`.
pub fn truncate_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// `text` on one line (every run of whitespace one space), cut to `max`
/// characters: how listings and injected context show an event's text.
pub fn one_line(text: &str, max: usize) -> String {
    // only the words that can show are joined: a text may be an 11k answer
    let mut line = String::new();
    let mut chars = 0;
    for word in text.split_whitespace() {
        if chars > max {
            break;
        }
        if !line.is_empty() {
            line.push(' ');
            chars += 1;
        }
        line.push_str(word);
        chars += word.chars().count();
    }
    truncate_chars(&line, max)
}

/// `text` on one line, cut to `max` characters; where no word of `query`
/// shows in that, the stretch around the first one that does, as a search
/// tool shows its match (a long answer's first words are often only its
/// heading).
pub fn preview(text: &str, query: &str, max: usize) -> String {
    let line: Vec<char> = one_line(text, usize::MAX).chars().collect();
    let lower: Vec<char> = line
        .iter()
        .map(|c| c.to_lowercase().next().unwrap_or(*c))
        .collect();
    let first = query
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| w.chars().count() >= 3)
        .filter_map(|w| {
            let w: Vec<char> = w
                .chars()
                .map(|c| c.to_lowercase().next().unwrap_or(c))
                .collect();
            lower.windows(w.len()).position(|at| at == w.as_slice())
        })
        .min();
    let head: String = line.iter().collect();
    // a match within the first two thirds shows as it is
    let Some(at) = first.filter(|at| *at > max * 2 / 3) else {
        return truncate_chars(&head, max);
    };
    // start at a word, about a third of the width before the match
    let mut start = at.saturating_sub(max / 3);
    while start > 0 && !line[start - 1].is_whitespace() && at - start < max / 2 {
        start -= 1;
    }
    let rest: String = line[start..].iter().collect();
    format!("…{}", truncate_chars(&rest, max.saturating_sub(1)))
}

fn take_string(map: &mut Map<String, Value>, field: &str) -> Result<String, String> {
    match map.remove(field) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(format!("field {field:?} must be a string")),
        None => Err(format!("missing field {field:?}")),
    }
}

fn take_u64(map: &mut Map<String, Value>, field: &str) -> Result<u64, String> {
    match map.remove(field) {
        Some(Value::Number(n)) => n
            .as_u64()
            .ok_or_else(|| format!("field {field:?} must be a non-negative integer")),
        Some(_) => Err(format!("field {field:?} must be a number")),
        None => Err(format!("missing field {field:?}")),
    }
}

fn take_object(map: &mut Map<String, Value>, field: &str) -> Result<Map<String, Value>, String> {
    match map.remove(field) {
        Some(Value::Object(m)) => Ok(m),
        Some(_) => Err(format!("field {field:?} must be an object")),
        None => Err(format!("missing field {field:?}")),
    }
}

/// An event of project "p" with a JSON-object body, for unit tests.
/// Orders events by (ts, session, seq, id).
pub fn sort_events(events: &mut [Event]) {
    events
        .sort_by(|a, b| (&a.ts, &a.session, a.seq, &a.id).cmp(&(&b.ts, &b.session, b.seq, &b.id)));
}

#[cfg(test)]
pub(crate) fn test_event(session: &str, ts: &str, kind: Kind, body: Value) -> Event {
    let Value::Object(body) = body else {
        panic!("test_event takes a JSON object body")
    };
    Draft::new(session, ts, kind, "p", body).into_event(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Event {
        Draft::text(
            "s1",
            "2026-11-22T05:27:21.123Z",
            Kind::UserPrompt,
            "demo",
            "Fix getUserById",
        )
        .into_event(0)
    }

    #[test]
    fn round_trips_through_its_line() {
        let e = sample();
        let back = Event::from_line(&e.canonical_line()).unwrap();
        assert_eq!(back, e);
    }

    #[test]
    fn direct_writer_matches_the_value_writer() {
        let mut e = sample();
        e.meta.insert(
            "zeta".into(),
            serde_json::json!([1, {"b": 2, "a": "x\u{1}"}]),
        );
        e.id = e.compute_id();
        assert_eq!(e.canonical_line(), canonical::to_string(&e.to_value(true)));
        assert_eq!(
            e.id,
            blake3::hash(canonical::to_string(&e.to_value(false)).as_bytes())
                .to_hex()
                .to_string()
        );
    }

    #[test]
    fn tampering_is_detected() {
        let line = sample()
            .canonical_line()
            .replace("getUserById", "getUserByName");
        let err = Event::from_line(&line).unwrap_err();
        assert!(err.contains("does not match"), "{err}");
    }

    #[test]
    fn unknown_kinds_survive_reading() {
        assert_eq!(Kind::parse("dream"), Kind::Other("dream".into()));
        assert!(Kind::parse_known("dream").is_err());
        for k in Kind::KNOWN {
            assert_eq!(Kind::parse(k.as_str()), k);
        }
    }

    #[test]
    fn headline_prefers_text_then_tool_input() {
        assert_eq!(sample().headline(80), "Fix getUserById");
        let mut body = Map::new();
        body.insert("tool".into(), "Bash".into());
        body.insert(
            "input".into(),
            serde_json::json!({"command": "cargo test\n-q"}),
        );
        let e = Draft {
            session: "s".into(),
            ts: "2026-11-22T05:27:21.123Z".into(),
            kind: Kind::ToolObservation,
            project: "p".into(),
            body,
            meta: Map::new(),
        }
        .into_event(1);
        assert_eq!(e.headline(80), "Bash: cargo test");
        assert_eq!(truncate_chars("abcdef", 4), "abc…");
        // an answer under a heading shows what follows it
        let answer = "# Plugin system design\n\nPlugins load from `shopcli.plugins`.\n";
        assert_eq!(
            one_line(answer, 40),
            "# Plugin system design Plugins load fro…"
        );
        assert_eq!(one_line(" a\n\n b ", 40), "a b");
    }

    #[test]
    fn a_preview_shows_the_query_where_the_text_holds_it() {
        let doc = format!(
            "# Plugin system design\n\n{}Plugins load from `shopcli.plugins` at start.",
            "Some context. ".repeat(20)
        );
        let seen = preview(&doc, "Shopcli.Plugins", 60);
        assert!(seen.starts_with('…'), "{seen}");
        assert!(seen.contains("`shopcli.plugins`"), "{seen}");
        assert!(seen.chars().count() <= 60, "{seen}");
        // a match near the start, or none at all: the start
        assert_eq!(
            preview(&doc, "plugin", 30),
            "# Plugin system design Some c…"
        );
        assert_eq!(
            preview(&doc, "absent", 30),
            "# Plugin system design Some c…"
        );
        assert_eq!(preview("", "x", 30), "");
    }
}
