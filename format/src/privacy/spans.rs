//! Private spans: `<private>…</private>`, `[private]…[/private]` and
//! `<!-- private -->…<!-- /private -->` (tags case-insensitive; the angle
//! form with blanks or attributes before its `>` too) become
//! [`PRIVATE_MARKER`](super::PRIVATE_MARKER). Tags inside fenced code blocks
//! are literal text. Nested tags of the same form are absorbed by the outer
//! span. An opening tag without a closing one leaves the rest of the text
//! unchanged and is reported as a warning (losing text silently is worse
//! than keeping it).

use std::sync::OnceLock;

use regex::{Regex, RegexBuilder};

use super::PRIVATE_MARKER;

/// A regular expression compiled on first use (`None`: it does not
/// compile, which [`super::PrivacyFilter::new`] rules out).
pub(super) struct LazyRegex {
    pattern: String,
    compiled: OnceLock<Option<Regex>>,
}

impl LazyRegex {
    pub(super) fn new(pattern: &str) -> LazyRegex {
        LazyRegex {
            pattern: pattern.to_string(),
            compiled: OnceLock::new(),
        }
    }

    pub(super) fn get(&self) -> Option<&Regex> {
        self.compiled
            .get_or_init(|| RegexBuilder::new(&self.pattern).build().ok())
            .as_ref()
    }
}

/// A tag token: where it is, its form (0 `<…>`, 1 `[…]`, 2 `<!-- … -->`)
/// and whether it opens a span.
type Tag = (usize, usize, usize, bool);

/// The tag tokens around each `private` (any case) in `b`, found by hand:
/// compiling expressions for them cost a hook more than the rest of the
/// filter.
fn tags(b: &[u8]) -> Vec<Tag> {
    const WORD: &[u8] = b"private";
    let mut out = Vec::new();
    for i in memchr::memchr2_iter(b'p', b'P', b) {
        if !b
            .get(i..i + WORD.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(WORD))
        {
            continue;
        }
        let (start, end) = (i, i + WORD.len());
        let before = |n: usize| start.checked_sub(n).map(|s| &b[s..start]);
        // <private>, </private>, [private], [/private]; the angle form
        // as HTML writes it too: `<private >`, `<private data-x=1>`
        for (form, open, close) in [(0, b'<', b'>'), (1, b'[', b']')] {
            let Some(tag_end) = tag_close(b, end, close, form == 0) else {
                continue;
            };
            if before(1) == Some(&[open][..]) {
                out.push((start - 1, tag_end, form, true));
            } else if before(2) == Some(&[open, b'/'][..]) {
                out.push((start - 2, tag_end, form, false));
            }
        }
        // <!-- private -->, <!-- /private -->
        let mut s = start;
        let closing = s > 0 && b[s - 1] == b'/';
        if closing {
            s -= 1;
        }
        while s > 0 && b[s - 1].is_ascii_whitespace() {
            s -= 1;
        }
        let mut e = end;
        while e < b.len() && b[e].is_ascii_whitespace() {
            e += 1;
        }
        if s >= 4 && &b[s - 4..s] == b"<!--" && b[e..].starts_with(b"-->") {
            out.push((s - 4, e + 3, 2, !closing));
        }
    }
    out
}

/// Where a tag whose word ends at `end` ends: just past `close` right
/// after the word, or, with `attributes`, past blanks and attributes on
/// the same line and then `close` (not `/>`: a self-closing tag opens
/// nothing).
fn tag_close(b: &[u8], end: usize, close: u8, attributes: bool) -> Option<usize> {
    match b.get(end) {
        Some(&c) if c == close => return Some(end + 1),
        Some(b' ' | b'\t') if attributes => {}
        _ => return None,
    }
    const MAX_ATTRIBUTES: usize = 200;
    let rest = &b[end..b.len().min(end + MAX_ATTRIBUTES)];
    let at = rest
        .iter()
        .position(|&c| c == close || matches!(c, b'<' | b'\n' | b'\r'))?;
    (rest[at] == close && (at == 0 || rest[at - 1] != b'/')).then_some(end + at + 1)
}

/// Private spans of the three tag forms.
pub(super) struct PrivateSpans;

impl PrivateSpans {
    /// One pass over the tag tokens of all forms, outside code blocks. A
    /// span opened by one form is closed only by the same form; tokens of
    /// other forms inside it are content. Returns the text, the spans
    /// replaced and a warning for an unclosed span.
    pub(super) fn remove(&self, text: &str) -> (String, usize, Option<String>) {
        let mut tokens = tags(text.as_bytes());
        if tokens.is_empty() {
            return (text.to_string(), 0, None);
        }
        let fences = fenced_blocks(text);
        tokens.retain(|(s, _, _, _)| !inside(&fences, *s));
        if tokens.is_empty() {
            return (text.to_string(), 0, None);
        }
        tokens.sort_unstable();
        let mut out = String::with_capacity(text.len());
        let mut copied = 0;
        let mut spans = 0;
        // The open span: its form, start and nesting depth.
        let mut open: Option<(usize, usize, usize)> = None;
        for (start, end, form, is_open) in tokens {
            match (open, is_open) {
                (None, true) => open = Some((form, start, 1)),
                (Some((f, s, d)), true) if f == form => open = Some((f, s, d + 1)),
                (Some((f, s, 1)), false) if f == form => {
                    out.push_str(&text[copied..s]);
                    out.push_str(PRIVATE_MARKER);
                    copied = end;
                    spans += 1;
                    open = None;
                }
                (Some((f, s, d)), false) if f == form => open = Some((f, s, d - 1)),
                // A stray closing tag, or another form's tag inside a span.
                _ => {}
            }
        }
        out.push_str(&text[copied..]);
        let warning = open.map(|(_, s, _)| {
            format!(
                "unclosed private tag at byte {s}: the text after it was NOT filtered (close it with the matching tag)"
            )
        });
        (out, spans, warning)
    }
}

/// Byte ranges of fenced code blocks (``` or ~~~, at least three, at the
/// start of a line after optional indentation). An unclosed fence runs to the
/// end of the text, as in CommonMark.
fn fenced_blocks(text: &str) -> Vec<(usize, usize)> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, char, usize)> = None; // start, fence char, fence len
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let fence = trimmed
            .chars()
            .next()
            .filter(|c| *c == '`' || *c == '~')
            .map(|c| (c, trimmed.chars().take_while(|x| *x == c).count()))
            .filter(|(_, n)| *n >= 3);
        match (open, fence) {
            (None, Some((c, n))) => open = Some((offset, c, n)),
            (Some((start, c, n)), Some((c2, n2))) if c == c2 && n2 >= n => {
                blocks.push((start, offset + line.len()));
                open = None;
            }
            _ => {}
        }
        offset += line.len();
    }
    if let Some((start, _, _)) = open {
        blocks.push((start, text.len()));
    }
    blocks
}

fn inside(ranges: &[(usize, usize)], pos: usize) -> bool {
    ranges.iter().any(|(s, e)| pos >= *s && pos < *e)
}
