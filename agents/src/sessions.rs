//! An agent's session file read for import, and finding such files in a
//! folder.

use std::path::{Path, PathBuf};

use memlog_format::Draft;

use crate::{Error, Result};

/// One session file read as drafts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionFile {
    /// The session it belongs to (several files may hold one session).
    pub session_id: String,
    /// Where the agent ran, when the file says: an import of the default
    /// locations keeps only the sessions that ran inside the repository.
    pub cwd: Option<String>,
    /// The drafts in file order, each with its number in the file's
    /// streams (the same on every import).
    pub drafts: Vec<(u64, Draft)>,
    /// Lines that are not JSON objects (or not readable as the agent's).
    pub malformed: usize,
    /// Lines of a kind memlog does not know, when the agent counts them.
    pub skipped: Option<usize>,
}

impl SessionFile {
    /// Whether the session's `cwd` is inside `work_tree`.
    pub fn ran_inside(&self, work_tree: &Path) -> bool {
        self.cwd
            .as_deref()
            .is_some_and(|cwd| Path::new(cwd).starts_with(work_tree))
    }

    /// A file's drafts numbered by their place in it.
    pub fn numbered(drafts: Vec<Draft>) -> Vec<(u64, Draft)> {
        drafts
            .into_iter()
            .enumerate()
            .map(|(i, d)| (i as u64, d))
            .collect()
    }
}

/// The files in `dir` whose names start with `prefix` and end in `.jsonl`,
/// in path order; with `recursive`, in its sub-folders too.
pub fn jsonl_files(dir: &Path, prefix: &str, recursive: bool) -> Result<Vec<PathBuf>> {
    files_ending(dir, prefix, &[".jsonl"], recursive)
}

/// The files in `dir` whose names start with `prefix` and end in one of
/// `endings`, in path order; with `recursive`, in its sub-folders too.
pub fn files_ending(
    dir: &Path,
    prefix: &str,
    endings: &[&str],
    recursive: bool,
) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    collect(dir, &(prefix, endings), recursive, &mut out)?;
    Ok(out)
}

fn collect(
    dir: &Path,
    name: &(&str, &[&str]),
    recursive: bool,
    out: &mut Vec<PathBuf>,
) -> Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for path in entries {
        let (prefix, endings) = name;
        if path.is_dir() {
            if recursive {
                collect(&path, name, recursive, out)?;
            }
        } else if path.is_file()
            && path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix) && endings.iter().any(|e| n.ends_with(e)))
        {
            out.push(path);
        }
    }
    Ok(())
}

/// The `*.md` files in `dir` and its sub-folders, in path order; none when
/// it does not exist (an agent's memory folder before its first note).
pub fn markdown_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|x| x == "md") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// A session file's text (invalid UTF-8 replaced, a leading byte order
/// mark left out: [`memlog_format::jsonl`]) and its name without
/// extension, which names the session when the file does not.
pub(crate) fn read_text(path: &Path) -> Result<(String, String)> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("")
        .to_string();
    let text = String::from_utf8_lossy(memlog_format::jsonl::without_bom(&bytes));
    Ok((text.into_owned(), stem))
}

/// The user's home folder, for the agents that keep their files there.
pub(crate) fn home() -> Result<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or(Error::NoHome)
}

/// A draft read from an agent's session file: `kind` with `body` at `ts`
/// in `session`, its `meta.client` the agent's and `meta.ref` its place in
/// the file (the item's own id, or its line), as every importer records.
pub(crate) fn session_draft(
    session: &str,
    ts: &str,
    kind: memlog_format::Kind,
    body: serde_json::Map<String, serde_json::Value>,
    options: &crate::HookOptions,
    reference: &str,
) -> Draft {
    use serde_json::Value;
    let mut draft = Draft::new(session, ts, kind, options.project.clone(), body);
    draft.meta.insert(
        "client".into(),
        Value::String(options.agent.client().to_string()),
    );
    draft
        .meta
        .insert("ref".into(), Value::String(reference.to_string()));
    draft
}

/// A [`session_draft`] of `file`, its meta also holding the file's working
/// directory and the agent's `version`, where known.
pub(crate) fn file_draft(
    file: &SessionFile,
    version: Option<&str>,
    ts: &str,
    kind: memlog_format::Kind,
    body: serde_json::Map<String, serde_json::Value>,
    options: &crate::HookOptions,
    reference: &str,
) -> Draft {
    use serde_json::Value;
    let mut draft = session_draft(&file.session_id, ts, kind, body, options, reference);
    if let Some(cwd) = &file.cwd {
        draft.meta.insert("cwd".into(), Value::String(cwd.clone()));
    }
    if let Some(v) = version {
        draft
            .meta
            .insert("agent_version".into(), Value::String(v.to_string()));
    }
    draft
}

/// A session file's time as memlog writes times, if it is one.
pub(crate) fn normalized_time(value: Option<&serde_json::Value>) -> Option<String> {
    value
        .and_then(serde_json::Value::as_str)
        .and_then(|t| memlog_format::time::normalize(t).ok())
}

/// A text body (`{"text": …}`), for prompts and answers.
pub(crate) fn text_body(text: &str) -> serde_json::Map<String, serde_json::Value> {
    let mut body = serde_json::Map::new();
    body.insert("text".into(), serde_json::Value::String(text.to_string()));
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Codex rollouts, Gemini chats and the other agents' files all read
    /// through [`read_text`]: a byte order mark made their first line
    /// malformed (field test 8a).
    #[test]
    fn a_session_file_is_read_without_its_byte_order_mark() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rollout-1.jsonl");
        std::fs::write(&path, "\u{feff}{\"type\":\"session_meta\"}\n").unwrap();
        let (text, stem) = read_text(&path).unwrap();
        assert_eq!(text, "{\"type\":\"session_meta\"}\n");
        assert_eq!(stem, "rollout-1");
    }
}
