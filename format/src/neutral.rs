//! The neutral import format: one JSON object per line,
//! `{"session", "ts", "kind", "text", "ref"?, "project"?, "meta"?}`.
//!
//! `ts` is any RFC 3339 timestamp (stored as UTC milliseconds), `kind` one of
//! the known kinds, `ref` an external id kept as `meta.ref`. Within a
//! session, events are numbered (`seq`) in file order, so importing the same
//! file again yields the same ids and adds nothing.

use std::collections::HashMap;
use std::io::BufRead;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::{Draft, Error, Kind, Result};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NeutralLine {
    session: String,
    ts: String,
    kind: String,
    text: String,
    #[serde(rename = "ref")]
    external_ref: Option<String>,
    project: Option<String>,
    meta: Option<Map<String, Value>>,
}

/// Parses one neutral line into a draft; `project` is used when the line has
/// none.
pub fn parse_line(line: &str, project: &str) -> std::result::Result<Draft, String> {
    let n: NeutralLine = serde_json::from_str(line).map_err(|e| e.to_string())?;
    // The same rule as every other way in: the id names a journal file.
    crate::session_id::check(&n.session)?;
    let kind = Kind::parse_known(&n.kind)?;
    let ts = crate::time::normalize(&n.ts).map_err(|e| e.to_string())?;
    let mut meta = n.meta.unwrap_or_default();
    if let Some(r) = n.external_ref {
        meta.insert("ref".into(), Value::String(r));
    }
    let mut draft = Draft::text(
        n.session,
        ts,
        kind,
        n.project.unwrap_or_else(|| project.to_string()),
        n.text,
    );
    draft.meta = meta;
    Ok(draft)
}

/// A parsed neutral file: sessions in order of first appearance, each with
/// its drafts in file order.
#[derive(Debug, Default)]
pub struct NeutralBatch {
    /// Each session with its drafts.
    pub sessions: Vec<(String, Vec<Draft>)>,
    /// Lines read.
    pub lines: usize,
    /// Lines that were skipped (only with `skip_invalid`): (line, message).
    pub skipped: Vec<(usize, String)>,
}

/// Reads a neutral file. Any invalid line is an error naming `origin` and
/// the line, unless `skip_invalid` is set, in which case it is listed in
/// [`NeutralBatch::skipped`]. Blank lines are ignored, and so is a byte
/// order mark before the first ([`crate::jsonl`]).
pub fn read(
    reader: impl BufRead,
    origin: &str,
    project: &str,
    skip_invalid: bool,
) -> Result<NeutralBatch> {
    let mut batch = NeutralBatch::default();
    let mut index: HashMap<String, usize> = HashMap::new();
    for (i, line) in reader.lines().enumerate() {
        let line_no = i + 1;
        let line = line.map_err(|e| Error::BadLine {
            origin: origin.to_string(),
            line: line_no,
            message: e.to_string(),
        })?;
        let line = match line_no {
            1 => line.strip_prefix(crate::jsonl::BOM).unwrap_or(&line),
            _ => &line,
        };
        if line.trim().is_empty() {
            continue;
        }
        batch.lines += 1;
        match parse_line(line, project) {
            Ok(draft) => {
                let slot = *index.entry(draft.session.clone()).or_insert_with(|| {
                    batch.sessions.push((draft.session.clone(), Vec::new()));
                    batch.sessions.len() - 1
                });
                batch.sessions[slot].1.push(draft);
            }
            Err(message) if skip_invalid => batch.skipped.push((line_no, message)),
            Err(message) => {
                return Err(Error::BadLine {
                    origin: origin.to_string(),
                    line: line_no,
                    message,
                });
            }
        }
    }
    Ok(batch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_groups_by_session() {
        let text = r#"{"session":"a","ts":"2023-05-08T13:56:00Z","kind":"user_prompt","text":"hi","ref":"x:1"}

{"session":"b","ts":"2023-05-08T13:56:01+02:00","kind":"note","text":"n","project":"other","meta":{"k":1}}
{"session":"a","ts":"2023-05-08T13:56:02Z","kind":"agent_response","text":"hello"}
"#;
        let batch = read(text.as_bytes(), "f.jsonl", "proj", false).unwrap();
        assert_eq!(batch.lines, 3);
        assert_eq!(batch.sessions.len(), 2);
        assert_eq!(batch.sessions[0].1.len(), 2);
        let first = &batch.sessions[0].1[0];
        assert_eq!(first.meta["ref"], "x:1");
        assert_eq!(first.project, "proj");
        assert_eq!(first.ts, "2023-05-08T13:56:00.000Z");
        assert_eq!(batch.sessions[1].1[0].ts, "2023-05-08T11:56:01.000Z");
        assert_eq!(batch.sessions[1].1[0].project, "other");
    }

    #[test]
    fn a_byte_order_mark_before_the_first_line_is_not_part_of_it() {
        let text = "\u{feff}{\"session\":\"a\",\"ts\":\"2023-05-08T13:56:00Z\",\"kind\":\"note\",\"text\":\"hi\"}\n";
        let batch = read(text.as_bytes(), "f.jsonl", "proj", false).unwrap();
        assert_eq!(batch.sessions.len(), 1);
    }

    #[test]
    fn errors_name_file_and_line() {
        let text = "{\"session\":\"a\",\"ts\":\"2023-05-08T13:56:00Z\",\"kind\":\"note\",\"text\":\"ok\"}\n{\"session\":\"a\",\"ts\":\"soon\",\"kind\":\"note\",\"text\":\"x\"}\n";
        let err = read(text.as_bytes(), "f.jsonl", "p", false)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("f.jsonl, line 2:"), "{err}");
        let err = read("{\"session\":\"a\"}".as_bytes(), "f", "p", false)
            .unwrap_err()
            .to_string();
        assert!(err.contains("missing field"), "{err}");
        let err = read(
            r#"{"session":"a","ts":"2023-05-08T13:56:00Z","kind":"dream","text":"x"}"#.as_bytes(),
            "f",
            "p",
            false,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("unknown kind"), "{err}");
        let batch = read(text.as_bytes(), "f", "p", true).unwrap();
        assert_eq!(batch.skipped.len(), 1);
        assert_eq!(batch.sessions[0].1.len(), 1);
    }
}
