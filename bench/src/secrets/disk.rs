//! Every byte under `.git` (or a bare remote): each file as it is
//! (journals, indexes, hooks.log, packs and loose objects) and every git
//! object decompressed (segments, trees, commit messages), markers removed
//! (they name the rule, which may be a token's prefix). A lower-case copy catches what the
//! full-text index keeps of a secret: its words, lower-cased.

use std::path::Path;
use std::process::Command;

use memlog_format::privacy::sample::Sample;

pub struct Disk {
    pub bytes: Vec<u8>,
    pub lower: Vec<u8>,
}

/// Every byte under the git directory `git_dir` (a work tree's `.git`, or
/// a bare remote).
pub fn read(git_dir: &Path) -> anyhow::Result<Disk> {
    let objects = Command::new("git")
        .arg("--git-dir")
        .arg(git_dir)
        .args(["cat-file", "--batch-all-objects", "--batch"])
        .output()?;
    if !objects.status.success() {
        anyhow::bail!("git cat-file failed in {}", git_dir.display());
    }
    let mut bytes = objects.stdout;
    let mut stack = vec![git_dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(content) = std::fs::read(&path) {
                bytes.extend(content);
            }
        }
    }
    Disk::of(bytes)
}

impl Disk {
    /// `bytes` with markers removed (keyed or not), and a lower-case copy.
    fn of(bytes: Vec<u8>) -> anyhow::Result<Disk> {
        let markers = regex::bytes::Regex::new(r"\[REDACTED:[a-z0-9-]+(?::[0-9a-f]{4})?\]")?;
        let bytes = markers.replace_all(&bytes, &b""[..]).into_owned();
        let lower = bytes.to_ascii_lowercase();
        Ok(Disk { bytes, lower })
    }
}

/// One file's bytes, markers removed.
pub fn read_file(path: &Path) -> anyhow::Result<Disk> {
    Disk::of(std::fs::read(path)?)
}

/// Which of `samples` have a piece on disk (one pass of an automaton
/// over all their pieces: the bytes under `.git` are megabytes).
pub fn leaked(disk: &Disk, samples: &[&Sample]) -> anyhow::Result<Vec<bool>> {
    let mut owner = Vec::new();
    let mut exact: Vec<Vec<u8>> = Vec::new();
    for (i, sample) in samples.iter().enumerate() {
        for piece in sample.pieces() {
            owner.push(i);
            exact.push(piece.to_vec());
        }
    }
    let mut found = vec![false; samples.len()];
    let automaton = aho_corasick::AhoCorasick::new(&exact)?;
    for m in automaton.find_overlapping_iter(&disk.bytes) {
        found[owner[m.pattern().as_usize()]] = true;
    }
    let lower: Vec<Vec<u8>> = exact.iter().map(|p| p.to_ascii_lowercase()).collect();
    let automaton = aho_corasick::AhoCorasick::new(&lower)?;
    for m in automaton.find_overlapping_iter(&disk.lower) {
        found[owner[m.pattern().as_usize()]] = true;
    }
    Ok(found)
}

/// Which of `words` are on disk, as they are.
pub fn found(disk: &Disk, words: &[&str]) -> anyhow::Result<Vec<bool>> {
    let mut found = vec![false; words.len()];
    let automaton = aho_corasick::AhoCorasick::new(words)?;
    for m in automaton.find_overlapping_iter(&disk.bytes) {
        found[m.pattern().as_usize()] = true;
    }
    Ok(found)
}
