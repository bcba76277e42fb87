//! Facts aligned to their evidence (docs/DESIGN.md §6): the body fields a
//! `fact` event gets when its quote is found in the event it names, the
//! same for `memlog extract --facts` and the MCP tool `memory_remember`.

use std::collections::BTreeSet;

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

/// Words of a fact that say what it is about (no numbers), and the values
/// it gives (words with a digit).
fn subject_and_values(text: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut subject = BTreeSet::new();
    let mut values = BTreeSet::new();
    for w in memlog_format::key::normalize(text).split_whitespace() {
        if w.chars().any(|c| c.is_ascii_digit()) {
            values.insert(w.to_string());
        } else if w.chars().count() > 2 {
            subject.insert(w.to_string());
        }
    }
    (subject, values)
}

/// Whether `newer` says the same thing as `older` about the same subject
/// with another value ("the timeout is 30 minutes" → "… is 2 hours" does
/// not count: the unit word differs too; "… is 30 s" → "… is 45 s" does):
/// nearly the same subject words (Jaccard ≥ 0.8, at least two of them) and
/// different numbers. Conservative: a miss costs a ranking, a false match
/// would hide a true fact.
pub fn same_subject_other_value(older: &str, newer: &str) -> bool {
    let (a, va) = subject_and_values(older);
    let (b, vb) = subject_and_values(newer);
    if a.len() < 2 || b.len() < 2 || va.is_empty() || vb.is_empty() || va == vb {
        return false;
    }
    let inter = a.intersection(&b).count() as f32;
    let union = a.union(&b).count() as f32;
    inter / union >= 0.8
}

#[cfg(test)]
mod tests {
    use super::same_subject_other_value as same;

    #[test]
    fn a_new_value_for_the_same_subject_is_found() {
        assert!(same(
            "The checkout session timeout is 30 minutes",
            "The checkout session timeout is 120 minutes"
        ));
        assert!(!same(
            "The checkout session timeout is 30 minutes",
            "The checkout session timeout is 30 minutes"
        ));
        assert!(!same("The retry limit is 3", "The checkout timeout is 5"));
        assert!(!same(
            "Emails are stored lowercased",
            "Emails are stored hashed"
        ));
    }
}
