//! Helpers shared by the integration tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// Real Claude Code data (third-party captures), kept outside the repository.
pub const SHARED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/fixtures/claude-code"
);

/// memlog's own samples.
pub const OWN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/claude-code");

/// The shared fixtures folder `sub`, or `None` (with a note) when absent.
pub fn shared(sub: &str) -> Option<PathBuf> {
    let dir = Path::new(SHARED).join(sub);
    if dir.is_dir() {
        Some(dir)
    } else {
        println!("skipped: {} absent", dir.display());
        None
    }
}

pub fn own(sub: &str) -> PathBuf {
    Path::new(OWN).join(sub)
}

/// Every file under `dir` (recursively) whose name ends in `suffix`, sorted.
pub fn files_under(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        for entry in std::fs::read_dir(&current).expect("readable fixture folder") {
            let path = entry.expect("readable entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if path.to_string_lossy().ends_with(suffix) {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}
