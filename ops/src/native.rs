//! The coding agents' own memory files — `CLAUDE.md`, `AGENTS.md`, Claude
//! Code's auto memory (`MEMORY.md`), Codex's memories — as read-only
//! sources of memory (issue 31, "native memory files").
//!
//! memlog never edits them, except for the one block it owns
//! ([`export_rules`]). It reads them into the log instead: each paragraph a
//! `note` event (`body.source = "native"`, with the file's label and lines)
//! in a sealed session of its own, so that `memlog search` and recall find
//! them like any memory and a reviewer sees what was read. When a file
//! changes ([`refresh`]: the watcher, `memlog native sync`, SessionStart in
//! the background), only new paragraphs are recorded, and those that are
//! gone are forgotten (a `forget` event naming the file): the memory says
//! what the file says now. What was read is kept in
//! `.git/memlog/native.json`, so a check ([`changed`]) costs one `stat`
//! per file.
//!
//! Files outside the work tree (Claude Code's project memory under
//! `~/.claude/projects`, `$CODEX_HOME/memories`) are the user's own, not
//! the project's: their notes are personal (FORMAT.md §9), sealed on the
//! personal ref in a session apart, searched here and never synced. Files
//! in the work tree (`CLAUDE.md`, `AGENTS.md`) are shared, as the files
//! themselves are.
//!
//! memlog's own facts never contradict the files silently: [`conflicts`]
//! lists facts and rules about the same subject with another value (as
//! supersession judges it, [`crate::facts::same_subject_other_value`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use memlog_format::{Draft, EventId, Kind, time};
use memlog_indexer::Projections;
use memlog_store::Repo;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::bail;
use crate::error::{Context, Result};
use crate::forget::{ForgetRequest, forget};
use crate::workspace;

/// `body.source` of the notes read from native files.
pub const SOURCE: &str = "native";

/// The first line of the block `memlog rules export` owns in a native file.
pub const BLOCK_BEGIN: &str =
    "<!-- BEGIN memlog rules: written by `memlog rules export`; edit them with memlog -->";
/// Its last line.
pub const BLOCK_END: &str = "<!-- END memlog rules -->";

/// Longest paragraph kept as one note (a paragraph is a few lines; a
/// longer one is cut, the file itself stays the reference).
const MAX_PARAGRAPH: usize = 4000;

/// One agent memory file.
#[derive(Clone, Debug, Serialize)]
pub struct NativeFile {
    /// Where it is.
    pub path: PathBuf,
    /// How memory names it: relative to the work tree, or `~/…`.
    pub label: String,
    /// The agent that keeps it.
    pub agent: &'static str,
    /// Outside the work tree: the user's own memory, kept on this machine
    /// only (its notes are personal).
    pub personal: bool,
}

/// The native files of this repository that exist, each once (in agent
/// order).
pub fn files(repo: &Repo) -> Vec<NativeFile> {
    let Some(work_tree) = repo.work_tree.as_deref() else {
        return Vec::new();
    };
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for agent in memlog_agents::AGENTS {
        for path in agent.memory_files(work_tree) {
            if !path.is_file() || !seen.insert(path.clone()) {
                continue;
            }
            let personal = !path.starts_with(work_tree);
            let label = match (path.strip_prefix(work_tree), &home) {
                (Ok(rel), _) => rel.display().to_string(),
                (Err(_), Some(h)) if path.starts_with(h) => path
                    .strip_prefix(h)
                    .map(|rel| format!("~/{}", rel.display()))
                    .unwrap_or_else(|_| path.display().to_string()),
                _ => path.display().to_string(),
            };
            out.push(NativeFile {
                path,
                label,
                agent: agent.name(),
                personal,
            });
        }
    }
    out
}

/// The agents' own memory folders for this repository, outside its work
/// tree (whether or not they exist yet): a tool call on a file there is
/// recorded without its words ([`memlog_store::Recorder::withholding`]).
pub fn own_memory_dirs(repo: &Repo) -> Vec<PathBuf> {
    let Some(work_tree) = repo.work_tree.as_deref() else {
        return Vec::new();
    };
    memlog_agents::AGENTS
        .iter()
        .flat_map(|agent| agent.own_memory_dirs(work_tree))
        .filter(|dir| !dir.starts_with(work_tree))
        .collect()
}

/// What was read of one file.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
struct FileState {
    /// blake3 of its bytes.
    hash: String,
    /// Its size and modification time when read: unchanged, no need to
    /// read it again.
    size: u64,
    mtime: u64,
    /// blake3 of each paragraph's text → the note holding it.
    paragraphs: BTreeMap<String, EventId>,
}

/// `.git/memlog/native.json`: label → what was read.
type State = BTreeMap<String, FileState>;

fn state_path(repo: &Repo) -> PathBuf {
    repo.layout().dir().join("native.json")
}

fn load_state(repo: &Repo) -> Option<State> {
    let text = std::fs::read_to_string(state_path(repo)).ok()?;
    serde_json::from_str(&text).ok()
}

fn save_state(repo: &Repo, state: &State) -> Result<()> {
    let path = state_path(repo);
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, serde_json::to_vec_pretty(state)?)
        .and_then(|()| repo.sharing().apply(&tmp))
        .context(format_args!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, &path).context(format_args!("replacing {}", path.display()))?;
    Ok(())
}

/// The notes the log holds of native files, for a lost state file: what
/// was read is in the log, so a lost cache never reads a file twice.
fn state_from_log(repo: &Repo) -> Result<State> {
    let p = workspace::projections(repo)?;
    let mut state = State::new();
    for stored in workspace::of_kinds(&p, &["note"])? {
        let e = stored.event;
        if e.body.get("source").and_then(Value::as_str) != Some(SOURCE) {
            continue;
        }
        let (Some(label), Some(text)) = (e.body.get("path").and_then(Value::as_str), e.text())
        else {
            continue;
        };
        state
            .entry(label.to_string())
            .or_default()
            .paragraphs
            .insert(hash(text), e.id.clone());
    }
    Ok(state)
}

fn hash(text: &str) -> String {
    blake3::hash(text.as_bytes()).to_hex().to_string()
}

fn stat(path: &Path) -> (u64, u64) {
    std::fs::metadata(path)
        .map(|m| {
            let mtime = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_secs());
            (m.len(), mtime)
        })
        .unwrap_or_default()
}

/// Whether a native file appeared, changed or went away since it was last
/// read (by size and modification time: one `stat` per file).
pub fn changed(repo: &Repo) -> bool {
    let Some(state) = load_state(repo) else {
        return !files(repo).is_empty();
    };
    let now = files(repo);
    now.len() != state.len()
        || now.iter().any(|f| {
            state
                .get(&f.label)
                .is_none_or(|s| (s.size, s.mtime) != stat(&f.path))
        })
}

/// A paragraph of a native file.
#[derive(Clone, Debug, PartialEq)]
pub struct Paragraph {
    /// Its text, as written.
    pub text: String,
    /// Its first and last line (from 1).
    pub lines: (usize, usize),
    /// The heading it sits under, if any.
    pub heading: Option<String>,
}

/// A file's paragraphs (blank-line separated; a heading is its own and
/// names those below it), leaving out the block memlog owns.
pub fn paragraphs(text: &str) -> Vec<Paragraph> {
    let mut out = Vec::new();
    let mut heading: Option<String> = None;
    let mut current: Vec<&str> = Vec::new();
    let mut first = 0;
    let mut in_block = false;
    let mut flush = |current: &mut Vec<&str>, first: usize, heading: &Option<String>| {
        if !current.is_empty() {
            let last = first + current.len() - 1;
            let mut text = current.join("\n");
            if text.len() > MAX_PARAGRAPH {
                let cut = (0..=MAX_PARAGRAPH)
                    .rev()
                    .find(|i| text.is_char_boundary(*i))
                    .unwrap_or(0);
                text.truncate(cut);
            }
            out.push(Paragraph {
                text,
                lines: (first, last),
                heading: heading.clone(),
            });
            current.clear();
        }
    };
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let trimmed = line.trim();
        if trimmed == BLOCK_BEGIN {
            flush(&mut current, first, &heading);
            in_block = true;
            continue;
        }
        if in_block {
            in_block = trimmed != BLOCK_END;
            continue;
        }
        if trimmed.is_empty() {
            flush(&mut current, first, &heading);
            continue;
        }
        if trimmed.starts_with('#') {
            flush(&mut current, first, &heading);
            heading = Some(trimmed.trim_start_matches('#').trim().to_string());
            continue;
        }
        if current.is_empty() {
            first = n;
        }
        current.push(line);
    }
    flush(&mut current, first, &heading);
    out
}

/// What [`refresh`] did to one file.
#[derive(Clone, Debug, Serialize)]
pub struct FileRefresh {
    /// The file's label.
    pub label: String,
    /// `read` (new or changed), `unchanged` or `removed` (gone from disk).
    pub status: &'static str,
    /// Paragraphs recorded.
    pub added: usize,
    /// Paragraphs forgotten (no longer in the file).
    pub forgotten: usize,
}

/// Reads the native files that changed since they were last read: new
/// paragraphs are recorded (one sealed session), vanished ones forgotten.
pub fn refresh(repo: &Repo) -> Result<Vec<FileRefresh>> {
    let mut state = match load_state(repo) {
        Some(s) => s,
        None => state_from_log(repo)?,
    };
    // Shared and personal notes in sessions apart: a personal event makes
    // the rest of its session personal.
    let session = memlog_store::journal::mint_session("native");
    let personal_session = memlog_store::journal::mint_session("native-personal");
    let project = repo.project();
    let now = time::now();
    let mut drafts = Vec::new();
    let mut gone: Vec<(String, Vec<EventId>)> = Vec::new();
    let mut report = Vec::new();
    let present = files(repo);
    for f in &present {
        let Ok(bytes) = std::fs::read(&f.path) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        let file_hash = blake3::hash(&bytes).to_hex().to_string();
        let (size, mtime) = stat(&f.path);
        let entry = state.entry(f.label.clone()).or_default();
        if entry.hash == file_hash {
            (entry.size, entry.mtime) = (size, mtime);
            report.push(FileRefresh {
                label: f.label.clone(),
                status: "unchanged",
                added: 0,
                forgotten: 0,
            });
            continue;
        }
        let mut kept = BTreeMap::new();
        let mut added = 0;
        for para in paragraphs(&text) {
            let h = hash(&para.text);
            if kept.contains_key(&h) {
                continue;
            }
            if let Some(id) = entry.paragraphs.remove(&h) {
                kept.insert(h, id);
                continue;
            }
            let mut body = Map::new();
            body.insert("text".into(), json!(para.text));
            body.insert("source".into(), json!(SOURCE));
            body.insert("path".into(), json!(f.label));
            body.insert("agent".into(), json!(f.agent));
            body.insert("lines".into(), json!([para.lines.0, para.lines.1]));
            if let Some(h) = &para.heading {
                body.insert("heading".into(), json!(h));
            }
            body.insert("file_hash".into(), json!(file_hash));
            let into = if f.personal {
                &personal_session
            } else {
                &session
            };
            let mut draft = Draft::new(into, &now, Kind::Note, project.clone(), body);
            if f.personal {
                memlog_format::scope::mark_personal(&mut draft.meta);
            }
            drafts.push((f.label.clone(), h, draft));
            added += 1;
        }
        let vanished: Vec<EventId> = std::mem::take(&mut entry.paragraphs)
            .into_values()
            .collect();
        report.push(FileRefresh {
            label: f.label.clone(),
            status: "read",
            added,
            forgotten: vanished.len(),
        });
        if !vanished.is_empty() {
            gone.push((f.label.clone(), vanished));
        }
        *entry = FileState {
            hash: file_hash,
            size,
            mtime,
            paragraphs: kept,
        };
    }
    let labels: BTreeSet<&String> = present.iter().map(|f| &f.label).collect();
    let removed: Vec<String> = state
        .keys()
        .filter(|l| !labels.contains(l))
        .cloned()
        .collect();
    for label in removed {
        if let Some(s) = state.remove(&label) {
            report.push(FileRefresh {
                label: label.clone(),
                status: "removed",
                added: 0,
                forgotten: s.paragraphs.len(),
            });
            gone.push((label, s.paragraphs.into_values().collect()));
        }
    }
    let (personal, shared): (Vec<_>, Vec<_>) = drafts
        .into_iter()
        .partition(|(_, _, d)| memlog_format::scope::is_personal(&d.meta));
    for drafts in [shared, personal] {
        if drafts.is_empty() {
            continue;
        }
        let (labels, hashes): (Vec<String>, Vec<String>) = drafts
            .iter()
            .map(|(l, h, _)| (l.clone(), h.clone()))
            .unzip();
        let (events, _) =
            workspace::record(repo, drafts.into_iter().map(|(_, _, d)| d).collect(), true)?;
        for ((label, h), e) in labels.into_iter().zip(hashes).zip(events) {
            if let Some(s) = state.get_mut(&label) {
                s.paragraphs.insert(h, e.id);
            }
        }
    }
    for (label, ids) in gone {
        forget(
            repo,
            &ForgetRequest {
                ids: ids.iter().map(ToString::to_string).collect(),
                reason: Some(format!("{label} changed: no longer in the file")),
                ..ForgetRequest::default()
            },
        )?;
    }
    save_state(repo, &state)?;
    Ok(report)
}

/// A memlog fact or rule that says something else than a native file about
/// the same subject.
#[derive(Clone, Debug, Serialize)]
pub struct Conflict {
    /// The fact or rule.
    pub id: EventId,
    /// Its text.
    pub text: String,
    /// The native note it conflicts with.
    pub native: EventId,
    /// The file and lines, `CLAUDE.md:12`.
    pub at: String,
    /// The file's words.
    pub native_text: String,
}

/// The facts and rules that conflict with a native file: same subject,
/// another value, sentence by sentence of the file.
pub fn conflicts(p: &Projections) -> Result<Vec<Conflict>> {
    let events: Vec<memlog_format::Event> = workspace::of_kinds(p, &["note", "fact", "rule"])?
        .into_iter()
        .map(|s| s.event)
        .collect();
    let native: Vec<&memlog_format::Event> = events
        .iter()
        .filter(|e| e.body.get("source").and_then(Value::as_str) == Some(SOURCE))
        .collect();
    let mut out = Vec::new();
    for e in events
        .iter()
        .filter(|e| matches!(e.kind, Kind::Fact | Kind::Rule))
    {
        let Some(text) = e.text() else {
            continue;
        };
        for n in &native {
            let Some(ntext) = n.text() else {
                continue;
            };
            let hit = ntext
                .split(['\n', '.', ';'])
                .map(str::trim)
                .find(|line| crate::facts::same_subject_other_value(line, text));
            if let Some(line) = hit {
                out.push(Conflict {
                    id: e.id.clone(),
                    text: text.to_string(),
                    native: n.id.clone(),
                    at: native_place(n),
                    native_text: line.to_string(),
                });
                break;
            }
        }
    }
    Ok(out)
}

/// `CLAUDE.md:12` for a native note.
pub fn native_place(e: &memlog_format::Event) -> String {
    let label = e.body.get("path").and_then(Value::as_str).unwrap_or("?");
    match e
        .body
        .get("lines")
        .and_then(Value::as_array)
        .and_then(|l| l.first())
        .and_then(Value::as_u64)
    {
        Some(line) => format!("{label}:{line}"),
        None => label.to_string(),
    }
}

/// What [`export_rules`] did.
#[derive(Clone, Debug, Serialize)]
pub struct Exported {
    /// The file written.
    pub path: PathBuf,
    /// The rules in the block.
    pub rules: usize,
    /// Whether the file changed (an export of the same rules changes
    /// nothing).
    pub changed: bool,
}

/// Writes the active, reviewed rules into the block memlog owns in `to`
/// (relative to the work tree), replacing the block if there is one,
/// appending it otherwise. Everything outside the block is kept byte for
/// byte. Personal rules (promoted on a personal event's evidence) are left
/// out: an instructions file is committed with the code.
pub fn export_rules(repo: &Repo, p: &Projections, to: &Path) -> Result<Exported> {
    let path = match (to.is_absolute(), repo.work_tree.as_deref()) {
        (true, _) => to.to_path_buf(),
        (false, Some(w)) => w.join(to),
        (false, None) => bail!(
            "a bare repository has no work tree to write {}",
            to.display()
        ),
    };
    let mut rules = Vec::new();
    for r in crate::rules::active(p)? {
        if !crate::workspace::rests_on_personal(p, std::slice::from_ref(&r.id))? {
            rules.push(r);
        }
    }
    let mut block = String::new();
    block.push_str(BLOCK_BEGIN);
    block.push_str("\n## Rules learned by memlog\n\n");
    if rules.is_empty() {
        block.push_str("(none yet)\n");
    }
    // oldest first, so that a new rule adds a line at the end of the block
    for r in rules.iter().rev() {
        let text = r.text.split_whitespace().collect::<Vec<_>>().join(" ");
        block.push_str(&format!("- {text} (memlog {})\n", r.id.short()));
    }
    block.push_str(BLOCK_END);
    let old = match std::fs::read(&path) {
        Ok(bytes) => String::from_utf8(bytes).map_err(|_| {
            crate::error::Error::Invalid(format!("{} is not UTF-8 text", path.display()))
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e).context(format_args!("reading {}", path.display())),
    };
    let new = replace_block(&old, &block)?;
    let changed = new != old;
    if changed {
        let tmp = path.with_extension("md.memlog-tmp");
        std::fs::write(&tmp, &new).context(format_args!("writing {}", tmp.display()))?;
        std::fs::rename(&tmp, &path).context(format_args!("replacing {}", path.display()))?;
    }
    Ok(Exported {
        path,
        rules: rules.len(),
        changed,
    })
}

/// `text` with its memlog block replaced by `block` (which holds its
/// markers), or with `block` appended after a blank line.
fn replace_block(text: &str, block: &str) -> Result<String> {
    let begin = text.find(BLOCK_BEGIN);
    let end = text.find(BLOCK_END);
    match (begin, end) {
        (Some(b), Some(e)) if e > b => {
            let after = e + BLOCK_END.len();
            Ok(format!("{}{block}{}", &text[..b], &text[after..]))
        }
        (None, None) => {
            let mut out = text.to_string();
            if !out.is_empty() {
                if !out.ends_with('\n') {
                    out.push('\n');
                }
                out.push('\n');
            }
            out.push_str(block);
            out.push('\n');
            Ok(out)
        }
        _ => bail!(
            "the file has a broken memlog block (one marker without the other); \
             remove the `{BLOCK_BEGIN}` / `{BLOCK_END}` lines and export again"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paragraphs_leave_out_the_block_memlog_owns_and_keep_headings() {
        let text = format!(
            "# Project\n\nUse tabs.\nAlways.\n\n{BLOCK_BEGIN}\n- a rule\n{BLOCK_END}\n\n## Tests\nRun cargo test -p export.\n"
        );
        let p = paragraphs(&text);
        let got: Vec<(&str, (usize, usize), Option<&str>)> = p
            .iter()
            .map(|p| (p.text.as_str(), p.lines, p.heading.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("Use tabs.\nAlways.", (3, 4), Some("Project")),
                ("Run cargo test -p export.", (11, 11), Some("Tests")),
            ]
        );
    }

    #[test]
    fn the_block_is_replaced_in_place_or_appended_once() {
        let block = format!("{BLOCK_BEGIN}\n- one\n{BLOCK_END}");
        let user = "# Mine\n\nkeep this\n";
        let once = replace_block(user, &block).unwrap();
        assert!(once.starts_with(user));
        let twice = replace_block(&once, &block).unwrap();
        assert_eq!(once, twice);
        let other = format!("{BLOCK_BEGIN}\n- two\n{BLOCK_END}");
        let moved = replace_block(&format!("{once}after\n"), &other).unwrap();
        assert_eq!(moved, format!("{user}\n{other}\nafter\n"));
        assert!(replace_block(&format!("x\n{BLOCK_BEGIN}\n"), &block).is_err());
    }
}
