//! Secrets written encoded: a token in base64 (a CI variable, a
//! `docker login` config, a value pasted from a Kubernetes secret), in hex,
//! or percent-encoded (a webhook URL passed as a query parameter). No rule
//! sees them as they are, so a run of text that decodes to readable text
//! is read again decoded, and redacted whole when the decoded text holds a
//! secret (gitleaks decodes the same two before matching).
//!
//! JSON string escapes are read too ([`json_unescaped`]): many JSON writers
//! print `/` as `\/` (`postgres:\/\/app:pw@db`) and may write any
//! character as `\uXXXX`, which hides a URL's `://` and `@` from every rule.
//! Unlike the other encodings, what is found there is redacted in place,
//! the escapes around it kept, so a config read stays readable.

use std::ops::Range;

/// Shortest base64 run worth decoding: the shortest token the rules know,
/// encoded.
const MIN_BASE64: usize = 16;
/// Longest base64 run decoded (a longer one is a file, not a token).
const MAX_BASE64: usize = 8192;
/// Fewest `%XX` escapes a percent-encoded run needs.
const MIN_ESCAPES: usize = 2;

/// The maximal runs of bytes of `text` that `is` accepts, each with what
/// `decode` reads in it (`None`: nothing).
fn decoded_runs(
    text: &str,
    is: impl Fn(u8) -> bool,
    decode: impl Fn(&[u8]) -> Option<String>,
) -> Vec<(Range<usize>, String)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if !is(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && is(b[i]) {
            i += 1;
        }
        if let Some(decoded) = decode(&b[start..i]) {
            out.push((start..i, decoded));
        }
    }
    out
}

/// The runs of `text` that may be base64 (its `=` padding included), with
/// their decoded text when it is readable.
pub(super) fn base64_runs(text: &str) -> Vec<(Range<usize>, String)> {
    let b = text.as_bytes();
    decoded_runs(text, is_base64, |body| {
        // a word, a path or an identifier is not base64 of a token:
        // base64 mixes cases and digits
        let shaped = (MIN_BASE64..=MAX_BASE64).contains(&body.len())
            && body.iter().any(u8::is_ascii_digit)
            && body.iter().any(u8::is_ascii_uppercase)
            && body.iter().any(u8::is_ascii_lowercase);
        shaped
            .then(|| decode_base64(body))
            .flatten()
            .filter(|d| readable(d))
            .and_then(|d| String::from_utf8(d).ok())
    })
    .into_iter()
    .map(|(run, decoded)| {
        let padding = b[run.end..]
            .iter()
            .take(2)
            .take_while(|c| **c == b'=')
            .count();
        (run.start..run.end + padding, decoded)
    })
    .collect()
}

/// Shortest hex run worth decoding: eight bytes of text.
const MIN_HEX: usize = 16;

/// The runs of `text` that may be hex-encoded text, decoded. A hash or an
/// id decodes to bytes no person reads, and is left alone.
pub(super) fn hex_runs(text: &str) -> Vec<(Range<usize>, String)> {
    decoded_runs(
        text,
        |c| c.is_ascii_hexdigit(),
        |run| {
            ((MIN_HEX..=MAX_BASE64).contains(&run.len()) && run.len().is_multiple_of(2))
                .then(|| decode_hex(run))
                .flatten()
                .filter(|d| readable(d))
                .and_then(|d| String::from_utf8(d).ok())
        },
    )
}

fn decode_hex(run: &[u8]) -> Option<Vec<u8>> {
    run.chunks(2)
        .map(|pair| {
            let h = std::str::from_utf8(pair).ok()?;
            u8::from_str_radix(h, 16).ok()
        })
        .collect()
}

/// The runs of `text` (between spaces and quotes) with percent escapes,
/// decoded.
pub(super) fn percent_runs(text: &str) -> Vec<(Range<usize>, String)> {
    decoded_runs(
        text,
        |c| !is_break(c),
        |run| {
            let escapes = run
                .windows(3)
                .filter(|w| w[0] == b'%' && w[1].is_ascii_hexdigit() && w[2].is_ascii_hexdigit())
                .count();
            (escapes >= MIN_ESCAPES)
                .then(|| String::from_utf8(decode_percent(run)).ok())
                .flatten()
        },
    )
}

fn is_base64(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'-' | b'_')
}

fn is_break(c: u8) -> bool {
    c.is_ascii_whitespace() || matches!(c, b'"' | b'\'' | b'<' | b'>' | b'`')
}

/// Decoded text a person could read: printable ASCII or UTF-8, tabs and
/// newlines, nothing else (binary data decodes to control bytes).
fn readable(bytes: &[u8]) -> bool {
    bytes.len() >= 8
        && std::str::from_utf8(bytes).is_ok_and(|s| {
            s.chars()
                .all(|c| !c.is_control() || matches!(c, '\n' | '\r' | '\t'))
        })
}

/// Standard or URL-safe base64, padding optional.
fn decode_base64(body: &[u8]) -> Option<Vec<u8>> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        } as u32)
    };
    if body.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    for chunk in body.chunks(4) {
        let mut n = 0u32;
        for (k, &c) in chunk.iter().enumerate() {
            n |= value(c)? << (18 - 6 * k);
        }
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..chunk.len() - 1]);
    }
    Some(out)
}

fn decode_percent(run: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(run.len());
    let mut i = 0;
    while i < run.len() {
        if run[i] == b'%'
            && let Some(hex) = run.get(i + 1..i + 3)
            && let Ok(h) = std::str::from_utf8(hex)
            && let Ok(v) = u8::from_str_radix(h, 16)
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(run[i]);
        i += 1;
    }
    out
}

/// The lines of a text that hold a JSON escape hiding a URL's shape (`\/`,
/// `\uXXXX`), with every JSON escape decoded, and where each byte of the
/// decoded text came from.
pub(super) struct Unescaped {
    /// The escaped lines, decoded, joined by `\n`.
    pub text: String,
    /// Stretches of `text` and the bytes of the original each came from:
    /// a literal stretch byte for byte, an escape as a whole.
    pieces: Vec<Piece>,
}

#[derive(Debug)]
struct Piece {
    decoded: Range<usize>,
    original: Range<usize>,
    literal: bool,
}

impl Unescaped {
    /// The bytes of the original text that `decoded` (a range of
    /// [`Unescaped::text`]) came from, widened to whole escapes.
    pub(super) fn original(&self, decoded: Range<usize>) -> Range<usize> {
        let at = |d: usize, end: bool| -> usize {
            // the piece holding byte `d` (for an end: byte `d - 1`)
            let i = self.pieces.partition_point(|p| {
                if end {
                    p.decoded.end < d
                } else {
                    p.decoded.end <= d
                }
            });
            let Some(p) = self.pieces.get(i).or(self.pieces.last()) else {
                return 0;
            };
            match (p.literal, end) {
                (true, _) => {
                    (p.original.start + d.saturating_sub(p.decoded.start)).min(p.original.end)
                }
                (false, false) => p.original.start,
                (false, true) => p.original.end,
            }
        };
        at(decoded.start, false)..at(decoded.end, true)
    }
}

/// The lines of `text` holding `\/` or `\uXXXX`, JSON escapes decoded
/// (`None`: no such line). Other lines are left out: they hide nothing
/// the rules do not already read (`\n` and `\"` they know).
pub(super) fn json_unescaped(text: &str) -> Option<Unescaped> {
    let b = text.as_bytes();
    // the cheap test first: most texts hold no such escape at all
    if !hides_a_url(b) {
        return None;
    }
    let mut out = Unescaped {
        text: String::new(),
        pieces: Vec::new(),
    };
    let mut line_start = 0;
    while line_start < b.len() {
        let line_end = memchr::memchr(b'\n', &b[line_start..]).map_or(b.len(), |i| line_start + i);
        if hides_a_url(&b[line_start..line_end]) {
            if !out.text.is_empty() {
                // the line break between two escaped lines, mapped to the
                // break ending the first
                let at = out.pieces.last().map_or(0, |p| p.original.end);
                out.push_literal("\n", at..at + 1);
            }
            unescape_line(text, line_start..line_end, &mut out);
        }
        line_start = line_end + 1;
    }
    (!out.text.is_empty()).then_some(out)
}

/// Whether `b` holds `\/` or a `\uXXXX` escape. (A search for the
/// backslash alone: a substring searcher costs a short text more to set
/// up than the search.)
fn hides_a_url(b: &[u8]) -> bool {
    memchr::memchr_iter(b'\\', b).any(|i| match b.get(i + 1) {
        Some(b'/') => true,
        Some(b'u') => b
            .get(i + 2..i + 6)
            .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)),
        _ => false,
    })
}

impl Unescaped {
    fn push_literal(&mut self, s: &str, original: Range<usize>) {
        let start = self.text.len();
        self.text.push_str(s);
        self.pieces.push(Piece {
            decoded: start..self.text.len(),
            original,
            literal: true,
        });
    }

    fn push_escape(&mut self, c: char, original: Range<usize>) {
        let start = self.text.len();
        self.text.push(c);
        self.pieces.push(Piece {
            decoded: start..self.text.len(),
            original,
            literal: false,
        });
    }
}

/// Decodes the JSON escapes of `text[line]` onto `out`; an escape JSON
/// does not know is kept as it is.
fn unescape_line(text: &str, line: Range<usize>, out: &mut Unescaped) {
    let b = text.as_bytes();
    let mut literal = line.start;
    let mut i = line.start;
    while i < line.end {
        if b[i] != b'\\' || i + 1 >= line.end {
            i += 1;
            continue;
        }
        let (c, len) = match b[i + 1] {
            b'/' => ('/', 2),
            b'"' => ('"', 2),
            b'\\' => ('\\', 2),
            b'n' => ('\n', 2),
            b'r' => ('\r', 2),
            b't' => ('\t', 2),
            b'u' => match unicode_escape(&b[i..line.end]) {
                Some(decoded) => decoded,
                None => {
                    i += 2;
                    continue;
                }
            },
            _ => {
                i += 2;
                continue;
            }
        };
        if literal < i {
            out.push_literal(&text[literal..i], literal..i);
        }
        out.push_escape(c, i..i + len);
        i += len;
        literal = i;
    }
    if literal < line.end {
        out.push_literal(&text[literal..line.end], literal..line.end);
    }
}

/// The character a `\uXXXX` escape (or a surrogate pair of two) at the
/// start of `b` writes, and the escape's length.
fn unicode_escape(b: &[u8]) -> Option<(char, usize)> {
    let unit = |at: usize| -> Option<u32> {
        let h = b.get(at..at + 6)?;
        if !h.starts_with(b"\\u") {
            return None;
        }
        u32::from_str_radix(std::str::from_utf8(&h[2..]).ok()?, 16).ok()
    };
    let high = unit(0)?;
    if (0xD800..0xDC00).contains(&high) {
        let low = unit(6).filter(|l| (0xDC00..0xE000).contains(l))?;
        let c = char::from_u32(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))?;
        return Some((c, 12));
    }
    Some((char::from_u32(high)?, 6))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_and_percent_runs_decode() {
        let token = "gho_iS2G8NPRVdD53X83RZJzzzzgEOzdmenCkhvM";
        let b64 = "Z2hvX2lTMkc4TlBSVmRENTNYODNSWkp6enp6Z0VPemRtZW5Da2h2TQ==";
        let text = format!("the CI secret is {b64} ok");
        let runs = base64_runs(&text);
        assert_eq!(runs.len(), 1, "{runs:?}");
        assert_eq!(runs[0].1, token);
        assert_eq!(&text[runs[0].0.clone()], b64);
        let url = "https%3A%2F%2Fhooks.slack.com%2Fservices%2FT0";
        let runs = percent_runs(&format!("webhook {url} here"));
        assert_eq!(runs[0].1, "https://hooks.slack.com/services/T0");
        // paths, words, hashes: nothing to decode
        for plain in [
            "/work/main/target/debug/memlog",
            "getUserByIdAndName",
            "1fa1c257c6f561c5cb347611a3ce9d97dcbee500",
            "a sentence with 100% of the words",
        ] {
            assert!(base64_runs(plain).is_empty(), "{plain}");
            assert!(percent_runs(plain).is_empty(), "{plain}");
        }
    }

    #[test]
    fn json_escapes_decode_and_map_back() {
        let text = "plain line\n{\"u\":\"postgres:\\/\\/app:pw\\u0040db\\/x\"}\nlast";
        let u = json_unescaped(text).unwrap();
        assert_eq!(u.text, "{\"u\":\"postgres://app:pw@db/x\"}");
        let pw = u.text.find("pw").unwrap();
        assert_eq!(&text[u.original(pw..pw + 2)], "pw");
        let at = u.text.find('@').unwrap();
        assert_eq!(&text[u.original(at..at + 1)], "\\u0040");
        let url = u.text.find("postgres").unwrap()..u.text.find("/x").unwrap() + 2;
        assert_eq!(&text[u.original(url)], "postgres:\\/\\/app:pw\\u0040db\\/x");
        assert_eq!(json_unescaped("a \\n b \\\" c").map(|u| u.text), None);
        assert!(json_unescaped("no escapes here").is_none());
        // a surrogate pair is one character
        assert_eq!(
            json_unescaped("\\ud83d\\ude00\\/").unwrap().text,
            "\u{1F600}/"
        );
    }
}
