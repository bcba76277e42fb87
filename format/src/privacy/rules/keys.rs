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
    // A block whose BEGIN line was cut off (an agent kept an output's
    // end: OpenCode's last 2 000 lines): field test 12c.
    Rule {
        id: "private-key-tail",
        family: F,
        keywords: &["private key"],
        detect: Detect::Scan(private_key_tails),
        sample: "«{b:40}\n{b:64}\n{b:64}\n{b:20}==»\n-----END RSA PRIVATE KEY-----",
    },
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

/// The private key blocks of `text` whose BEGIN line is missing: from
/// their first body line (or the text's start) to the end of their END
/// line. Lines end with a line break or a JSON `\n` escape.
fn private_key_tails(text: &str, out: &mut Vec<Range<usize>>) {
    let b = text.as_bytes();
    let mut since = 0;
    for at in memchr::memmem::find_iter(b, b"-----END ") {
        let label_from = at + "-----END ".len();
        let Some(close) = b[label_from..]
            .iter()
            .take(40)
            .position(|&c| c == b'-')
            .map(|i| label_from + i)
        else {
            continue;
        };
        let label = &b[label_from..close];
        let private = label.ends_with(b"PRIVATE KEY") || label.ends_with(b"PRIVATE KEY BLOCK");
        let end = close + b[close..].iter().take_while(|&&c| c == b'-').count();
        let begun = memchr::memmem::find(&b[since..at], b"-----BEGIN").is_some();
        if private && !begun {
            // the END line's own indentation or quote mark
            let mut head = at;
            while head > since && b" \t>".contains(&b[head - 1]) {
                head -= 1;
            }
            let start = first_body_line(b, since, head);
            if start < head {
                out.push(start..end);
            }
        }
        since = end;
    }
}

/// Where the run of key body lines that ends at `end` starts, going back
/// no further than `limit`: lines of base64 only (leading blanks and `>`
/// aside), then the base64 end of the line before them (a line cut
/// mid-way, or `"key": "MIIE…`), when it is long enough to be key.
fn first_body_line(b: &[u8], limit: usize, end: usize) -> usize {
    let base64 = |c: &u8| c.is_ascii_alphanumeric() || b"+/=".contains(c);
    let mut start = end;
    let mut line_end = end;
    while line_end > limit {
        // the break before `line_end`: a newline (CR too) or a `\n` escape
        let content_end = line_end - line_break_before(b, limit, line_end);
        let line_start = (limit..content_end)
            .rev()
            .find(|&i| b[i] == b'\n' || (b[i] == b'n' && i > limit && b[i - 1] == b'\\'))
            .map_or(limit, |i| i + 1);
        let line = &b[line_start..content_end];
        let lead = line.iter().take_while(|c| b" \t>".contains(c)).count();
        let body = &line[lead..];
        if !body.is_empty() && body.iter().all(base64) {
            start = line_start + lead;
            line_end = line_start;
            continue;
        }
        let tail = body.iter().rev().take_while(|c| base64(c)).count();
        if tail >= 16 {
            start = content_end - tail;
        }
        break;
    }
    start
}

/// How many bytes of line break end `b[..at]` (not before `limit`): `\n`,
/// `\r\n`, or their JSON escapes; 0 at `limit`.
fn line_break_before(b: &[u8], limit: usize, at: usize) -> usize {
    for brk in [&b"\\r\\n"[..], b"\\n", b"\r\n", b"\n"] {
        if at >= limit + brk.len() && b[..at].ends_with(brk) {
            return brk.len();
        }
    }
    0
}

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
