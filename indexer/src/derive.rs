//! What an event contributes to the projections: its searchable text, the
//! files it touches or mentions, the references it makes, and its prior
//! importance. A pure function of the event, so rebuilds are reproducible.

use memlog_format::paths::WorkRoots;
use memlog_format::refs::{self, Reference};
use memlog_format::{Event, Kind};
use serde_json::Value;

/// The derived view of one event.
#[derive(Clone, Debug, Default)]
pub struct Derived {
    /// Text to index and to show; empty for bookkeeping kinds.
    pub text: String,
    /// The tool of a tool call.
    pub tool: Option<String>,
    /// Files the event's tool call worked on.
    pub touched: Vec<String>,
    /// Artifacts and files named in its text.
    pub mentions: Vec<Reference>,
}

impl Derived {
    /// All file paths, touched or mentioned (for the `files` field).
    pub fn files(&self) -> Vec<String> {
        files_of(&self.touched, &self.mentions)
    }
}

/// The files `touched`, then those of `mentions` not among them.
pub fn files_of(touched: &[String], mentions: &[Reference]) -> Vec<String> {
    let mut files = touched.to_vec();
    for r in mentions {
        if let Reference::File(p) = r
            && !files.contains(p)
        {
            files.push(p.clone());
        }
    }
    files
}

/// Kinds that are bookkeeping rather than memory: kept in the database, not
/// searchable.
pub const BOOKKEEPING_KINDS: [Kind; 8] = [
    Kind::SessionStart,
    Kind::SessionEnd,
    Kind::Forget,
    Kind::Reinforce,
    Kind::Recall,
    Kind::ExtractionRequest,
    Kind::RuleRetired,
    Kind::Review,
];

/// Whether events of `kind` go into the full-text index.
pub fn is_searchable(kind: &Kind) -> bool {
    !BOOKKEEPING_KINDS.contains(kind)
}

/// Kinds whose text is embedded for semantic search: what people and
/// agents said and distilled. Raw tool output is left out: it is long, costly
/// to embed (embedding is the main cost of indexing) and rarely what a
/// paraphrase is after; full-text search still finds it.
pub const EMBEDDED_KINDS: [&str; 8] = [
    "user_prompt",
    "agent_response",
    "note",
    "fact",
    "rule",
    "concept",
    "session_summary",
    "task_created",
];

/// Embedded kinds that a long catch-up (a first index, an import) leaves
/// for last: what was distilled or asked is short and worth the most, so
/// it is embedded before the long answers and memory is useful early.
pub const EMBEDDED_LAST: [&str; 1] = ["agent_response"];

/// Whether events of `kind` get a vector.
pub fn is_worth_embedding(kind: &str) -> bool {
    EMBEDDED_KINDS.contains(&kind)
}

/// Prior importance of an event by kind, in [0, 1]: distilled knowledge
/// (facts, notes, summaries) over conversation over raw tool output.
pub fn importance(kind: &str) -> f32 {
    match kind {
        "fact" | "rule" => 1.0,
        "concept" => 0.8,
        "note" => 0.9,
        "session_summary" => 0.8,
        "task_created" | "task_status_changed" | "task_blockers_set" | "task_priority_changed" => {
            0.7
        }
        "user_prompt" => 0.7,
        "agent_response" => 0.6,
        "tool_observation" => 0.3,
        _ => 0.1,
    }
}

/// After the command line ([`memlog_format::command::command_line`]).
const TELLING_INPUTS: [&str; 7] = [
    "file_path",
    "notebook_path",
    "path",
    "pattern",
    "url",
    "query",
    "description",
];

/// What the projections keep of `event`: its text, tool, files and
/// references, with paths as written (see [`derive_in`]).
pub fn derive(event: &Event) -> Derived {
    derive_in(event, &WorkRoots::default())
}

/// Like [`derive`], with every file named relative to the repository root
/// it lies under (`roots`, else the event's `cwd`), so that an absolute and
/// a relative spelling of one file are one entity.
pub fn derive_in(event: &Event, roots: &WorkRoots) -> Derived {
    let mut d = derive_unreferenced_in(event, roots);
    d.mentions = mentions_in(event, &d.text, roots);
    d
}

/// Like [`derive_in`] but without the references its text makes
/// (`mentions` left empty): what a read of the events the index lacks needs
/// unless it filters by file ([`mentions_in`] then). The references are
/// most of the cost: their five patterns are compiled in every process that
/// extracts any, and a prompt hook reads the other sessions' live journals.
pub fn derive_unreferenced_in(event: &Event, roots: &WorkRoots) -> Derived {
    let mut d = Derived::default();
    let body = &event.body;
    d.tool = body.get("tool").and_then(Value::as_str).map(str::to_string);
    let mut text = String::new();
    if let Some(t) = event.text() {
        text.push_str(t);
    } else if let Some(tool) = &d.tool {
        let (head, tail) = around_output(tool, body);
        text.push_str(&head);
        if let Some(v) = body.get("output").and_then(Value::as_str) {
            text.push('\n');
            text.push_str(v);
        }
        text.push_str(&tail);
    } else if let Some(title) = body.get("title").and_then(Value::as_str) {
        text.push_str(title);
    }
    if !is_searchable(&event.kind) {
        text.clear();
    }
    let cwd = event.meta.get("cwd").and_then(Value::as_str);
    for container in ["input", "metadata"] {
        if let Some(Value::Object(m)) = body.get(container) {
            for k in ["file_path", "notebook_path", "path"] {
                if let Some(p) = m.get(k).and_then(Value::as_str) {
                    let p = roots.file_name(p, cwd);
                    if !d.touched.contains(&p) {
                        d.touched.push(p);
                    }
                }
            }
        }
    }
    d.text = text;
    d
}

/// A tool observation's searchable text around its output: the tool and
/// its telling inputs before it, `\n` and its error after it.
pub(crate) fn around_output(tool: &str, body: &serde_json::Map<String, Value>) -> (String, String) {
    let mut head = tool.to_string();
    if let Some(command) = body
        .get("input")
        .and_then(memlog_format::command::command_line)
    {
        head.push('\n');
        head.push_str(&command);
    }
    if let Some(Value::Object(input)) = body.get("input") {
        for k in TELLING_INPUTS {
            if let Some(v) = input.get(k).and_then(Value::as_str) {
                head.push('\n');
                head.push_str(v);
            }
        }
    }
    let tail = body
        .get("error")
        .and_then(Value::as_str)
        .map(|e| format!("\n{e}"))
        .unwrap_or_default();
    (head, tail)
}

/// The references `text` (the searchable text [`derive_in`] made of
/// `event`) makes, deduplicated, with files named as [`derive_in`] names
/// them.
pub fn mentions_in(event: &Event, text: &str, roots: &WorkRoots) -> Vec<Reference> {
    let cwd = event.meta.get("cwd").and_then(Value::as_str);
    let mut mentions: Vec<Reference> = refs::extract(text)
        .into_iter()
        .map(|r| match r {
            Reference::File(p) => Reference::File(roots.file_name(&p, cwd)),
            other => other,
        })
        .collect();
    mentions.sort();
    mentions.dedup();
    mentions
}

#[cfg(test)]
mod tests {
    use super::*;
    use memlog_format::Draft;

    #[test]
    fn tool_observations_index_tool_input_and_output() {
        let mut body = serde_json::Map::new();
        body.insert("tool".into(), "Edit".into());
        body.insert(
            "input".into(),
            serde_json::json!({"file_path": "./src/auth/login.rs", "old_string": "x"}),
        );
        body.insert("output".into(), "updated; see ACME-412".into());
        let e = Draft {
            session: "s".into(),
            ts: "2026-01-01T00:00:00.000Z".into(),
            kind: Kind::ToolObservation,
            project: "p".into(),
            body,
            meta: Default::default(),
        }
        .into_event(0);
        let d = derive(&e);
        assert!(
            d.text.contains("Edit")
                && d.text.contains("src/auth/login.rs")
                && d.text.contains("ACME-412")
        );
        assert_eq!(d.touched, vec!["src/auth/login.rs".to_string()]);
        assert!(d.mentions.contains(&Reference::Jira("ACME-412".into())));
        assert_eq!(d.tool.as_deref(), Some("Edit"));
    }
}
