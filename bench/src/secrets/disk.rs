//! Every byte under `.git`: each file as it is (journals, indexes,
//! hooks.log, packs and loose objects) and every git object decompressed
//! (segments, trees, commit messages), markers removed (they name the rule,
//! which may be a token's prefix). A lower-case copy catches what the
//! full-text index keeps of a secret: its words, lower-cased.

use std::path::Path;
use std::process::Command;

use memlog_format::privacy::sample::Sample;

pub struct Disk {
    pub bytes: Vec<u8>,
    pub lower: Vec<u8>,
}

pub fn read(repo: &Path) -> anyhow::Result<Disk> {
    let objects = Command::new("git")
        .args(["cat-file", "--batch-all-objects", "--batch"])
        .current_dir(repo)
        .output()?;
    if !objects.status.success() {
        anyhow::bail!("git cat-file failed");
    }
    let mut bytes = objects.stdout;
    let mut stack = vec![repo.join(".git")];
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
    let markers = regex::bytes::Regex::new(r"\[REDACTED:[a-z0-9-]+(?::[0-9a-f]{4})?\]")?;
    let bytes = markers.replace_all(&bytes, &b""[..]).into_owned();
    let lower = bytes.to_ascii_lowercase();
    Ok(Disk { bytes, lower })
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
