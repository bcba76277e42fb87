//! What memory knows about a file or a shell command, at the moment an
//! agent is about to read or edit it, or to run it again (PreToolUse,
//! issue 31): its failures there and what fixed them, and the facts, rules
//! and notes about it (naming it, anchored to it, or resting on an event
//! that touched it). Nothing else: that a file was read before is not
//! knowledge. Fast enough for every tool call: one full-text filter on the
//! file (or search for the command), rows by key, no model. Events the
//! index lacks (read past its watermark: a session sealed a moment ago)
//! count as well, so the next session knows at once what the last one
//! learned.

use std::collections::HashSet;

use memlog_format::{Event, EventId, Kind};
use rusqlite::params_from_iter;
use serde::Serialize;
use serde_json::Value;

use crate::derive::derive;
use crate::fts::Filters;
use crate::lookup::{self, Stored};
use crate::{Error, Projections, Result};

/// Events touching a file that are looked at, newest first.
const TOUCHING: usize = 200;
/// Later tool calls of a failure's session looked at for its fix.
const FIX_WINDOW: usize = 30;

/// One thing memory knows.
#[derive(Clone, Debug, Serialize)]
pub struct Known {
    /// The event that says it.
    pub id: EventId,
    /// `failure`, `rule`, `fact` or `note`.
    pub what: &'static str,
    /// What it says (a failure: its call and first error line).
    pub text: String,
    /// When.
    pub ts: String,
    /// For a failure: what fixed it — the edits in between and the call
    /// that then worked, each with its event.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fix: Vec<(EventId, String)>,
    /// Whether the event is personal (a session given it becomes personal).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub personal: bool,
}

fn failed(e: &Event) -> bool {
    e.kind == Kind::ToolObservation && e.body.get("success").and_then(Value::as_bool) == Some(false)
}

fn tool(e: &Event) -> &str {
    e.body.get("tool").and_then(Value::as_str).unwrap_or("")
}

fn command(e: &Event) -> Option<String> {
    let line = memlog_format::command::command_line(e.body.get("input")?)?;
    Some(line.split_whitespace().collect::<Vec<_>>().join(" "))
}

fn is_edit(e: &Event) -> bool {
    matches!(
        tool(e),
        "Edit" | "Write" | "MultiEdit" | "NotebookEdit" | "apply_patch" | "replace" | "write_file"
    )
}

fn touches(e: &Event, path: &str) -> bool {
    derive(e)
        .touched
        .iter()
        .any(|t| t == path || t.ends_with(&format!("/{path}")))
}

/// A failure and what fixed it.
fn failure(e: &Event, fix: Vec<(EventId, String)>) -> Known {
    Known {
        id: e.id.clone(),
        what: "failure",
        text: failure_text(e),
        ts: e.ts.clone(),
        fix,
        personal: memlog_format::scope::is_personal(&e.meta),
    }
}

fn failure_text(e: &Event) -> String {
    let error = e
        .body
        .get("error")
        .and_then(Value::as_str)
        .or_else(|| e.body.get("output").and_then(Value::as_str))
        .map(memlog_format::event::first_line)
        .unwrap_or_default();
    let call = command(e).unwrap_or_else(|| format!("{} {}", tool(e), e.headline(100)));
    if error.is_empty() {
        call
    } else {
        format!("{call} — {error}")
    }
}

/// What fixed failure `f`: the edits later in its session up to the call
/// that then worked (the same call succeeding, or a successful edit of
/// `path`), each with its event; empty when nothing did.
fn fix_of(p: &Projections, f: &Event, path: Option<&str>) -> Result<Vec<(EventId, String)>> {
    let later = lookup::session_after(
        p,
        &f.session,
        (&f.ts, f.seq),
        Kind::ToolObservation.as_str(),
        FIX_WINDOW,
    )?;
    let same_call = command(f);
    let mut edits: Vec<(EventId, String)> = Vec::new();
    for Stored { event: e, .. } in later {
        let ok = !failed(&e);
        if ok && is_edit(&e) {
            let file = derive(&e).touched.first().cloned().unwrap_or_default();
            if path.is_some_and(|p| touches(&e, p)) {
                edits.push((e.id.clone(), format!("edited {file}")));
                return Ok(edits);
            }
            if edits.len() < 3 {
                edits.push((e.id.clone(), format!("edited {file}")));
            }
            continue;
        }
        if ok && same_call.is_some() && command(&e) == same_call {
            edits.push((e.id.clone(), "then it passed".to_string()));
            return Ok(edits);
        }
    }
    Ok(Vec::new())
}

/// The events the index lacks that `wanted` picks, leaving out
/// `exclude_session`: (key, time in milliseconds), as the index's
/// candidates are.
fn unindexed_keys(
    p: &Projections,
    exclude_session: Option<&str>,
    wanted: impl Fn(&crate::projection::UnindexedEvent) -> bool,
) -> Vec<(u64, i64)> {
    p.unindexed()
        .events()
        .iter()
        .filter(|u| exclude_session != Some(u.event.session.as_str()) && wanted(u))
        .map(|u| (u.key, u.ts_ms))
        .collect()
}

/// Facts and rules resting on one of `sources` (their quote's event).
fn resting_on(p: &Projections, sources: &[EventId]) -> Result<Vec<Event>> {
    if sources.is_empty() {
        return Ok(Vec::new());
    }
    let marks = vec!["?"; sources.len()].join(", ");
    let mut stmt = p
        .graph
        .conn
        .prepare(&format!(
            "SELECT id FROM events WHERE kind IN ('fact', 'rule')
             AND json_extract(body, '$.event') IN ({marks})"
        ))
        .map_err(|e| Error::sql(&p.dir, e))?;
    let ids = stmt
        .query_map(params_from_iter(sources.iter().map(|s| s.as_str())), |r| {
            r.get::<_, String>(0)
        })
        .map_err(|e| Error::sql(&p.dir, e))?
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(|e| Error::sql(&p.dir, e))?;
    let mut out = Vec::new();
    for id in ids {
        if let Some(s) = lookup::event(p, &id)? {
            out.push(s.event);
        }
    }
    out.extend(
        p.unindexed()
            .events()
            .iter()
            .map(|u| &u.event)
            .filter(|e| matches!(e.kind, Kind::Fact | Kind::Rule))
            .filter(|e| {
                e.body
                    .get("event")
                    .and_then(Value::as_str)
                    .is_some_and(|src| sources.iter().any(|s| s.as_str() == src))
            })
            .cloned(),
    );
    Ok(out)
}

fn memory(e: &Event) -> Option<Known> {
    let what = match e.kind {
        Kind::Rule => "rule",
        Kind::Fact => "fact",
        Kind::Note => "note",
        _ => return None,
    };
    Some(Known {
        id: e.id.clone(),
        what,
        text: e.text().unwrap_or_default().to_string(),
        ts: e.ts.clone(),
        fix: Vec::new(),
        personal: memlog_format::scope::is_personal(&e.meta),
    })
}

/// Failures with their fixes first (newest first), then rules, facts and
/// notes; memories withheld for review left out; at most `limit`.
fn ranked(p: &Projections, mut known: Vec<Known>, limit: usize) -> Result<Vec<Known>> {
    let withheld = crate::review::withheld(p)?;
    let mut seen = HashSet::new();
    known.retain(|k| !withheld.contains(&k.id) && seen.insert(k.id.clone()));
    let order = |k: &Known| match k.what {
        "failure" => 0,
        "rule" => 1,
        "fact" => 2,
        _ => 3,
    };
    known.sort_by(|a, b| order(a).cmp(&order(b)).then_with(|| b.ts.cmp(&a.ts)));
    known.truncate(limit);
    Ok(known)
}

/// What memory knows about the file `path` (relative to the repository
/// root), leaving out `exclude_session`: at most `limit` things.
pub fn about_file(
    p: &Projections,
    path: &str,
    exclude_session: Option<&str>,
    limit: usize,
) -> Result<Vec<Known>> {
    let wanted = memlog_format::refs::normalize_path(path).to_lowercase();
    let mut candidates: Vec<(u64, i64)> = p
        .fts
        .touching(path, exclude_session, TOUCHING)?
        .into_iter()
        .map(|c| (c.key, c.ts_ms))
        .collect();
    candidates.extend(unindexed_keys(p, exclude_session, |u| {
        u.files()
            .iter()
            .any(|f| memlog_format::refs::normalize_path(f).to_lowercase() == wanted)
    }));
    candidates.sort_by_key(|&(_, ts_ms)| std::cmp::Reverse(ts_ms));
    let mut known = Vec::new();
    let mut touched = Vec::new();
    for (key, _) in candidates {
        let Some(Stored { event: e, .. }) = lookup::by_key(p, key)? else {
            continue;
        };
        if let Some(m) = memory(&e) {
            known.push(m);
        } else if failed(&e) {
            let fix = fix_of(p, &e, Some(path))?;
            // a failure nobody fixed is only a warning, and a noisy one; a
            // failure that merely names the file (one of many in an error
            // listing) is about the file only if it failed on it or its
            // fix edited it
            let here = touches(&e, path)
                || fix
                    .last()
                    .and_then(|(id, _)| lookup::event(p, id).ok().flatten())
                    .is_some_and(|s| is_edit(&s.event) && touches(&s.event, path));
            if here && !fix.is_empty() {
                known.push(failure(&e, fix));
            }
        } else if e.kind == Kind::ToolObservation {
            touched.push(e.id.clone());
        }
    }
    known.extend(resting_on(p, &touched)?.iter().filter_map(memory));
    ranked(p, known, limit)
}

/// What memory knows about running `command` (words joined by single
/// spaces): the times the same command failed and what fixed it, leaving
/// out `exclude_session`.
pub fn about_command(
    p: &Projections,
    command_line: &str,
    exclude_session: Option<&str>,
    limit: usize,
) -> Result<Vec<Known>> {
    let filters = Filters {
        kinds: vec![Kind::ToolObservation.as_str().to_string()],
        exclude_session: exclude_session.map(str::to_string),
        ..Filters::default()
    };
    let mut keys: Vec<(u64, i64)> = p
        .fts
        .search(command_line, &filters, TOUCHING)?
        .into_iter()
        .map(|c| (c.key, c.ts_ms))
        .collect();
    keys.extend(unindexed_keys(p, exclude_session, |u| {
        u.event.kind == Kind::ToolObservation && command(&u.event).as_deref() == Some(command_line)
    }));
    let mut known = Vec::new();
    for (key, _) in keys {
        let Some(Stored { event: e, .. }) = lookup::by_key(p, key)? else {
            continue;
        };
        if !failed(&e) || command(&e).as_deref() != Some(command_line) {
            continue;
        }
        let fix = fix_of(p, &e, None)?;
        if !fix.is_empty() {
            known.push(failure(&e, fix));
        }
    }
    ranked(p, known, limit)
}
