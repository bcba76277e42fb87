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
    let mut out = Vec::new();
    collect(dir, prefix, recursive, &mut out)?;
    Ok(out)
}

fn collect(dir: &Path, prefix: &str, recursive: bool, out: &mut Vec<PathBuf>) -> Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            if recursive {
                collect(&path, prefix, recursive, out)?;
            }
        } else if path.is_file()
            && path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix) && n.ends_with(".jsonl"))
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

/// A session file's text (invalid UTF-8 replaced) and its name without
/// extension, which names the session when the file does not.
pub(crate) fn read_text(path: &Path) -> Result<(String, String)> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("")
        .to_string();
    Ok((String::from_utf8_lossy(&bytes).into_owned(), stem))
}

/// The user's home folder, for the agents that keep their files there.
pub(crate) fn home() -> Result<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or(Error::NoHome)
}
