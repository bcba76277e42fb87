//! Redaction markers: `[REDACTED:<rule>:<4 hex>]`. The kind tells the agent
//! what was there; the hex, the start of a hash of the secret keyed by the
//! repository's own key, lets the same secret be recognised again (in this
//! repository) without being revealed: with no key, a short unkeyed hash
//! could be matched against guesses.

/// A key for markers, derived from the repository's key bytes.
#[derive(Clone)]
pub(super) struct MarkerKey([u8; 32]);

impl MarkerKey {
    pub(super) fn derive(bytes: &[u8]) -> MarkerKey {
        MarkerKey(blake3::derive_key("memlog privacy marker v1", bytes))
    }
}

/// The marker replacing `secret`, found by rule `rule`; without a key,
/// `[REDACTED:<rule>]`.
pub(super) fn marker(rule: &str, secret: &[u8], key: Option<&MarkerKey>) -> String {
    match key {
        Some(k) => {
            let hash = blake3::keyed_hash(&k.0, secret);
            let b = hash.as_bytes();
            format!("[REDACTED:{rule}:{:02x}{:02x}]", b[0], b[1])
        }
        None => format!("[REDACTED:{rule}]"),
    }
}
