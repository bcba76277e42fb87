//! Memories anchored to code (issue 31): a fact or rule that cites files
//! of the work tree, or quotes code in backticks, records the commit it
//! was made at (`body.anchor`: `commit`, `files`, `quotes`). [`verify`]
//! re-checks each against the current tree — is each quote still in its
//! files, did the files change since — and keeps what is not fresh in
//! `verified.json` beside the index ([`memlog_indexer::anchors`]), where
//! ranking reads it: a stale memory (and the events it rests on) ranks
//! lower and is injected with its marker ("src/invoice.rs changed in 2
//! commits since").

use std::collections::{BTreeMap, BTreeSet};

use memlog_format::refs::{Reference, extract};
use memlog_format::{EventId, Kind};
use memlog_indexer::Projections;
use memlog_indexer::anchors::{self, Staleness, Verified};
use memlog_indexer::supersede::ids_in;
use memlog_store::Repo;
use serde::Serialize;
use serde_json::{Value, json};

use crate::error::Result;
use crate::workspace;

/// Shortest backticked text kept as a quote of code (`a`, `ok` are
/// everywhere).
const MIN_QUOTE: usize = 3;

/// The spans of `text` between single backticks.
fn backticked(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::trim)
        .filter(|q| q.chars().count() >= MIN_QUOTE && !q.contains('\n'))
        .map(str::to_string)
        .collect()
}

/// The anchor of a memory saying `texts` (its text, its quote): the files
/// of the work tree they cite, the code they quote, and HEAD; `None` when
/// they cite no file of the work tree (nothing to check against).
pub fn anchor(repo: &Repo, texts: &[&str]) -> Option<Value> {
    let work_tree = repo.work_tree.as_deref()?;
    let head = repo.code_position().1?;
    let mut files = BTreeSet::new();
    let mut quotes = Vec::new();
    for text in texts {
        for r in extract(text) {
            if let Reference::File(path) = r
                && work_tree.join(&path).is_file()
            {
                files.insert(path);
            }
        }
        for q in backticked(text) {
            if !files.contains(&q) && !quotes.contains(&q) {
                quotes.push(q);
            }
        }
    }
    if files.is_empty() {
        return None;
    }
    // a quote naming a file is that file, not code
    quotes.retain(|q| {
        !files
            .iter()
            .any(|f| f == q || f.ends_with(&format!("/{q}")))
    });
    Some(json!({"commit": head, "files": files, "quotes": quotes}))
}

/// One cited file, now.
#[derive(Clone, Debug, Serialize)]
pub struct FileNow {
    /// Its path in the work tree.
    pub path: String,
    /// Whether it is still there.
    pub exists: bool,
    /// Commits since the anchor that changed it (`None`: the anchor's
    /// commit is not in this history).
    pub changes: Option<usize>,
}

/// A memory checked against the current tree.
#[derive(Clone, Debug, Serialize)]
pub struct Check {
    /// The fact or rule.
    pub id: EventId,
    /// `fact` or `rule`.
    pub kind: String,
    /// What it says.
    pub text: String,
    /// The commit it was made at.
    pub commit: String,
    /// Its files, now.
    pub files: Vec<FileNow>,
    /// Its quotes no longer found in its files.
    pub missing: Vec<String>,
    /// `fresh`, `stale` (its files changed since) or `broken` (a file or a
    /// quote is gone).
    pub status: &'static str,
    /// What changed, in words, as injected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub marker: Option<String>,
}

/// Checks every live anchored fact and rule against the current tree,
/// keeps what is not fresh for ranking, and returns every check (stale and
/// broken first).
pub fn verify(repo: &Repo, p: &Projections) -> Result<Vec<Check>> {
    let work_tree = repo.work_tree.clone();
    let events: Vec<memlog_format::Event> = workspace::of_kinds(p, &["fact", "rule"])?
        .into_iter()
        .map(|s| s.event)
        .filter(|e| matches!(e.kind, Kind::Fact | Kind::Rule))
        .filter(|e| e.body.get("anchor").is_some_and(Value::is_object))
        .collect();
    // one walk of the history per anchor commit, for all its files
    let mut wanted: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for e in &events {
        let a = &e.body["anchor"];
        if let Some(commit) = a.get("commit").and_then(Value::as_str) {
            wanted
                .entry(commit.to_string())
                .or_default()
                .extend(strings(a, "files"));
        }
    }
    let mut changes: BTreeMap<String, Option<BTreeMap<String, usize>>> = BTreeMap::new();
    for (commit, paths) in wanted {
        let paths: Vec<String> = paths.into_iter().collect();
        let counted = memlog_store::code::changes_since(repo, &commit, &paths)?;
        changes.insert(commit, counted);
    }
    let mut checks = Vec::new();
    let mut sources: BTreeMap<EventId, Vec<String>> = BTreeMap::new();
    for e in events {
        let mut rests_on: Vec<String> = ids_in(&e.body, "evidence")
            .into_iter()
            .chain(ids_in(&e.body, "event"))
            .map(|id| id.to_string())
            .collect();
        rests_on.dedup();
        sources.insert(e.id.clone(), rests_on);
        let a = &e.body["anchor"];
        let commit = a
            .get("commit")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let counted = changes.get(&commit).cloned().flatten();
        let mut texts = Vec::new();
        let files: Vec<FileNow> = strings(a, "files")
            .into_iter()
            .map(|path| {
                let text = work_tree
                    .as_ref()
                    .and_then(|w| std::fs::read(w.join(&path)).ok())
                    .map(|b| String::from_utf8_lossy(&b).into_owned());
                let exists = text.is_some();
                texts.extend(text);
                FileNow {
                    changes: counted.as_ref().and_then(|c| c.get(&path).copied()),
                    exists,
                    path,
                }
            })
            .collect();
        let missing: Vec<String> = strings(a, "quotes")
            .into_iter()
            .filter(|q| !texts.iter().any(|t| t.contains(q.as_str())))
            .collect();
        let mut marks = Vec::new();
        for f in files.iter().filter(|f| !f.exists) {
            marks.push(format!("{} is gone", f.path));
        }
        let file_list = files
            .iter()
            .filter(|f| f.exists)
            .map(|f| f.path.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        for q in &missing {
            marks.push(format!("`{q}` is no longer in {file_list}"));
        }
        let broken = !marks.is_empty();
        for f in &files {
            if let Some(n) = f.changes.filter(|n| *n > 0) {
                marks.push(format!(
                    "{} changed in {n} commit{} since",
                    f.path,
                    if n == 1 { "" } else { "s" }
                ));
            }
        }
        let status = match (broken, marks.is_empty()) {
            (true, _) => "broken",
            (false, false) => "stale",
            (false, true) => "fresh",
        };
        checks.push(Check {
            id: e.id.clone(),
            kind: e.kind.as_str().to_string(),
            text: e.text().unwrap_or_default().to_string(),
            commit,
            files,
            missing,
            status,
            marker: (!marks.is_empty()).then(|| marks.join("; ")),
        });
    }
    checks.sort_by_key(|c| match c.status {
        "broken" => 0,
        "stale" => 1,
        _ => 2,
    });
    // what is not fresh ranks lower, and so do the events it rests on
    // (the answer a fact was quoted from says the same stale thing)
    let mut items = BTreeMap::new();
    for c in &checks {
        let Some(marker) = &c.marker else {
            continue;
        };
        let staleness = Staleness {
            status: c.status.to_string(),
            marker: marker.clone(),
        };
        for source in sources.get(&c.id).into_iter().flatten() {
            items
                .entry(source.clone())
                .or_insert_with(|| staleness.clone());
        }
        items.insert(c.id.to_string(), staleness);
    }
    let verified = Verified {
        head: repo.code_position().1,
        items,
    };
    anchors::save(repo.layout().dir(), &verified)?;
    Ok(checks)
}

/// [`verify`] on the projections as they are, without bringing them up to
/// date: what SessionStart starts in the background must not hold the
/// index's writer lock while the session's first commands read it (facts
/// the index lacks yet are verified at the next run).
pub fn verify_as_is(repo: &Repo) -> Result<Vec<Check>> {
    let p = Projections::open(repo)?;
    verify(repo, &p)
}

/// Whether the code's HEAD moved since the last verification (and some
/// memory may have gone stale): a read of a small file.
pub fn due(repo: &Repo) -> bool {
    let last = anchors::load_in(repo.layout().dir());
    last.head != repo.code_position().1
}

fn strings(v: &Value, field: &str) -> Vec<String> {
    v.get(field)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::backticked;

    #[test]
    fn backticked_spans_are_quotes_of_code() {
        assert_eq!(
            backticked("Use `BATCH_SIZE = 500` in `export()` not `x`"),
            ["BATCH_SIZE = 500", "export()"]
        );
        assert!(backticked("no code here").is_empty());
    }
}
