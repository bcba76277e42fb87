//! Private keys and signed tokens.

use std::ops::Range;

use super::Family::Keys as F;
use super::{Detect, Rule, token};

pub(super) const RULES: &[Rule] = &[
    // A block without its END line (a cut output) is redacted as far as
    // its base64 goes.
    token(
        "private-key",
        F,
        &["private key"],
        r"(?s)(-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?:.*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|(?:[A-Za-z0-9+/=:, \t\r\n-]|\\[nr])*))",
        "-----BEGIN RSA PRIVATE KEY-----\n{b:64}\n{b:64}\n{b:64}\n{b:20}==\n-----END RSA PRIVATE KEY-----",
    ).context(),
    token(
        "putty-private-key",
        F,
        &["PuTTY-User-Key-File"],
        r"(?s)(PuTTY-User-Key-File-[0-9]:.*?Private-MAC:\s*[0-9a-f]+)",
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy\nPublic-Lines: 2\n{b:64}\n{b:4}\nPrivate-Lines: 1\n{b:44}\nPrivate-MAC: {h:64}",
    ).context(),
    token(
        "jwt",
        F,
        &["eyJ"],
        r"\b(ey[A-Za-z0-9_-]{17,}\.ey[A-Za-z0-9_/\\-]{17,}\.(?:[A-Za-z0-9_/\\-]{10,}={0,2})?)",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOi{w:60}.{w:43}",
    ),
    token(
        "jwt-base64",
        F,
        &["ZXlK"],
        r"\b(ZXlK[A-Za-z0-9+/]{60,}={0,2})",
        "ZXlKaGJHY2lPaUpJVXpJMU5pSjkuZXlK{b:120}",
    ),
    // A PKCS#12 file (.p12, .pfx) read as base64: `30 82 LL LL 02 01 03`,
    // a version-3 PFX, encodes as `MII??AIBAzCC`.
    token(
        "pkcs12-file",
        F,
        &["AIBAzCC"],
        r"\b(MII[A-Za-z0-9+/]{2}AIBAzCC(?:[A-Za-z0-9+/=]|\r?\n){100,})",
        "MII{b:2}AIBAzCC{b:64}\n{b:64}\n{b:64}\n{b:40}==",
    ),
    token(
        "age-secret-key",
        F,
        &["AGE-SECRET-KEY-1"],
        r"\b(AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58})\b",
        "AGE-SECRET-KEY-1{C:58}",
    ),
    Rule {
        id: "kubernetes-secret-yaml",
        family: F,
        keywords: &["kind: secret"],
        detect: Detect::Scan(kubernetes_secret_data),
        sample: "apiVersion: v1\nkind: Secret\nmetadata:\n  name: registry\ntype: Opaque\ndata:\n  tls.crt.b64: «{b:64}»\n",
    },
];

/// The values under `data:` and `stringData:` of a YAML document that
/// declares `kind: Secret` (Kubernetes stores them as base64 or plain
/// text; either is the secret).
fn kubernetes_secret_data(text: &str, out: &mut Vec<Range<usize>>) {
    if !text.contains("kind: Secret") {
        return;
    }
    let mut offset = 0;
    // the indentation of the `data:` line whose block we are in
    let mut block: Option<usize> = None;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let content = line.trim_end_matches(['\n', '\r']);
        let trimmed = content.trim_start();
        let indent = content.len() - trimmed.len();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if let Some(level) = block {
            if indent > level {
                let value_start = match trimmed.find(": ") {
                    // `key: value`
                    Some(i) if !trimmed[..i].contains(' ') => i + 2,
                    // a line of a block scalar
                    _ => 0,
                };
                let value = trimmed[value_start..].trim();
                let value = value.trim_matches(['"', '\'']);
                if !matches!(value, "" | "|" | ">" | "|-" | ">-")
                    && let Some(pos) = content.rfind(value)
                {
                    out.push(start + pos..start + pos + value.len());
                }
                continue;
            }
            block = None;
        }
        if trimmed == "data:" || trimmed == "stringData:" {
            block = Some(indent);
        }
    }
}
