//! File-aware recall (issue 31): before an agent reads or edits a file, or
//! runs a shell command again, what memory knows about it
//! ([`memlog_indexer::file_recall`]: failures there and their fixes,
//! facts, rules and notes about it), within about 300 tokens, at most once
//! per file or command per session, and nothing when memory knows nothing.
//! On the hook around a tool call whose context reaches the model
//! (`Agent::tool_recall_event`: PreToolUse, or for Gemini CLI AfterTool): no
//! model, no index update, a few milliseconds.

use std::io::Write;
use std::path::PathBuf;

use memlog_agents::ToolTarget;
use memlog_indexer::Projections;
use memlog_indexer::context::{Assembled, approx_tokens};
use memlog_indexer::file_recall::{Known, about_command, about_file};
use memlog_store::Repo;

use crate::error::Result;

/// Token budget of one injection.
pub const BUDGET_TOKENS: usize = 300;
/// Most things said about one file.
const MAX_ITEMS: usize = 4;
/// Longest line of an injection, in characters.
const LINE_CHARS: usize = 240;
/// Characters of an id in a citation.
const CITATION: usize = 12;

/// `.git/memlog/seen/<session>`: the files and commands this session was
/// told about already, one per line.
fn seen_path(repo: &Repo, session: &str) -> PathBuf {
    let safe: String = session
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    repo.layout().dir().join("seen").join(safe)
}

/// Forgets what `session` was told (at its end).
pub fn forget_seen(repo: &Repo, session: &str) {
    let _ = std::fs::remove_file(seen_path(repo, session));
}

/// The key a target is remembered by, and how the injection names it.
fn key(repo: &Repo, target: &ToolTarget) -> (String, String) {
    match target {
        ToolTarget::File(path) => {
            let name = crate::workspace::file_name(repo, path);
            (format!("file:{name}"), name)
        }
        ToolTarget::Command(c) => (format!("command:{c}"), format!("`{c}`")),
    }
}

/// What memory knows about `target` for `session`, as markdown to inject
/// with the ids it cites; `None` when it knows nothing, or told this
/// session already. Marks the target as told.
pub fn before_tool(
    repo: &Repo,
    projections: impl FnOnce() -> Result<Projections>,
    session: &str,
    target: &ToolTarget,
) -> Result<Option<Assembled>> {
    let (key, name) = key(repo, target);
    let seen = seen_path(repo, session);
    // a file recalled once this session: nothing more to read (the
    // projections, and what the index lacks, are opened only past this)
    if std::fs::read_to_string(&seen).is_ok_and(|s| s.lines().any(|l| l == key)) {
        return Ok(None);
    }
    let p = projections()?;
    let known = match target {
        ToolTarget::File(_) => about_file(&p, name.as_str(), Some(session), MAX_ITEMS)?,
        ToolTarget::Command(c) => about_command(&p, c, Some(session), MAX_ITEMS)?,
    };
    let Some(assembled) = render(&name, &known) else {
        return Ok(None);
    };
    let sharing = repo.sharing();
    if let Some(dir) = seen.parent() {
        sharing.create_dir_all(dir)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&seen)?;
    sharing.apply(&seen)?;
    writeln!(file, "{key}")?;
    Ok(Some(assembled))
}

fn cite(id: &str) -> String {
    format!("[{}]", &id[..CITATION.min(id.len())])
}

/// The injection: a heading and one line per thing known, within
/// [`BUDGET_TOKENS`].
fn render(name: &str, known: &[Known]) -> Option<Assembled> {
    if known.is_empty() {
        return None;
    }
    let mut markdown =
        format!("## memlog: what earlier sessions learned about {name}\nCite by [id].\n");
    let mut cited = Vec::new();
    for k in known {
        let mut line = format!(
            "- {} {} ({}): {}",
            cite(&k.id),
            k.what,
            k.ts.get(..10).unwrap_or(&k.ts),
            k.text
        );
        if !k.fix.is_empty() {
            let fix: Vec<String> = k
                .fix
                .iter()
                .map(|(id, what)| format!("{what} {}", cite(id)))
                .collect();
            line.push_str(&format!("; fixed: {}", fix.join(", ")));
        }
        let line = format!("{}\n", memlog_format::event::one_line(&line, LINE_CHARS));
        if approx_tokens(&markdown) + approx_tokens(&line) > BUDGET_TOKENS {
            break;
        }
        markdown.push_str(&line);
        cited.push(k.id.clone());
        cited.extend(k.fix.iter().map(|(id, _)| id.clone()));
    }
    if cited.is_empty() {
        return None;
    }
    Some(Assembled {
        tokens: approx_tokens(&markdown),
        markdown,
        cited,
        ranked_by: None,
        gate: None,
        withheld: None,
        personal: known.iter().any(|k| k.personal),
    })
}
