//! Facts aligned to their evidence (docs/DESIGN.md §6): the body fields a
//! `fact` event gets when its quote is found in the event it names, the
//! same for `memlog extract --facts` and the MCP tool `memory_remember`.

use memlog_format::Event;
use memlog_format::align::{self, Span};
use serde_json::{Map, Value, json};

/// The text a quote is looked up in: the event's text, or for a tool call
/// what the index holds of it (tool, telling inputs, output).
pub fn source_text(e: &Event) -> String {
    match e.text() {
        Some(t) => t.to_string(),
        None => memlog_indexer::derive::derive(e).text,
    }
}

/// Aligns `quote` in `source` at `threshold`: the span, and the evidence
/// fields of the fact's body (`quote`, `event`, `span`, `match`, `score`,
/// `matched_text`); `None` when the quote is not there.
pub fn align_quote(
    source: &Event,
    quote: &str,
    threshold: f32,
) -> Option<(Span, Map<String, Value>)> {
    let text = source_text(source);
    let span = align::align(&text, quote, threshold)?;
    let mut body = Map::new();
    body.insert("quote".into(), json!(quote));
    body.insert("event".into(), json!(source.id));
    body.insert("span".into(), json!([span.start, span.end]));
    body.insert("match".into(), json!(span.match_type.as_str()));
    body.insert(
        "score".into(),
        json!((span.score * 1000.0).round() / 1000.0),
    );
    body.insert("matched_text".into(), json!(span.slice(&text)));
    Some((span, body))
}
