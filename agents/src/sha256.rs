//! SHA-256 as the agents write it in their files: lowercase hex (Codex
//! CLI's hook trust, Gemini CLI's project folders).

use sha2::{Digest, Sha256};

/// The SHA-256 of `data`, as 64 lowercase hex digits.
pub(crate) fn hex(data: &[u8]) -> String {
    Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
