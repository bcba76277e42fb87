//! Private spans: `<private>…</private>`, `[private]…[/private]` and
//! `<!-- private -->…<!-- /private -->` (tags case-insensitive) become
//! [`PRIVATE_MARKER`](super::PRIVATE_MARKER). Tags inside fenced code blocks
//! are literal text. Nested tags of the same form are absorbed by the outer
//! span. An opening tag without a closing one leaves the rest of the text
//! unchanged and is reported as a warning (losing text silently is worse
//! than keeping it).

use std::sync::OnceLock;

use regex::{Regex, RegexBuilder};

use super::PRIVATE_MARKER;

/// A regular expression compiled on first use (`None`: it does not
/// compile, which the tests rule out for the built-in ones).
pub(super) struct LazyRegex {
    pattern: String,
    case_insensitive: bool,
    compiled: OnceLock<Option<Regex>>,
}

impl LazyRegex {
    pub(super) fn new(pattern: &str, case_insensitive: bool) -> LazyRegex {
        LazyRegex {
            pattern: pattern.to_string(),
            case_insensitive,
            compiled: OnceLock::new(),
        }
    }

    pub(super) fn get(&self) -> Option<&Regex> {
        self.compiled
            .get_or_init(|| {
                RegexBuilder::new(&self.pattern)
                    .case_insensitive(self.case_insensitive)
                    .build()
                    .ok()
            })
            .as_ref()
    }
}

/// One tag form: its opening and closing token patterns.
struct TagForm {
    open: LazyRegex,
    close: LazyRegex,
}

/// The three tag forms.
pub(super) struct PrivateSpans {
    forms: Vec<TagForm>,
}

impl PrivateSpans {
    pub(super) fn new() -> PrivateSpans {
        let form = |open: &str, close: &str| TagForm {
            open: LazyRegex::new(open, true),
            close: LazyRegex::new(close, true),
        };
        PrivateSpans {
            forms: vec![
                form(r"<private>", r"</private>"),
                form(r"\[private\]", r"\[/private\]"),
                form(r"<!--\s*private\s*-->", r"<!--\s*/private\s*-->"),
            ],
        }
    }

    /// Whether every tag pattern compiles.
    #[cfg(test)]
    pub(super) fn compile_all(&self) -> bool {
        self.forms
            .iter()
            .all(|f| f.open.get().is_some() && f.close.get().is_some())
    }

    /// One pass over the tag tokens of all forms, outside code blocks. A
    /// span opened by one form is closed only by the same form; tokens of
    /// other forms inside it are content. Returns the text, the spans
    /// replaced and a warning for an unclosed span.
    pub(super) fn remove(&self, text: &str) -> (String, usize, Option<String>) {
        if (!text.contains('<') && !text.contains('['))
            || !text.to_ascii_lowercase().contains("private")
        {
            return (text.to_string(), 0, None);
        }
        let fences = fenced_blocks(text);
        // (start, end, form, is_open)
        let mut tokens: Vec<(usize, usize, usize, bool)> = Vec::new();
        for (i, form) in self.forms.iter().enumerate() {
            if let Some(open) = form.open.get() {
                tokens.extend(open.find_iter(text).map(|m| (m.start(), m.end(), i, true)));
            }
            if let Some(close) = form.close.get() {
                tokens.extend(
                    close
                        .find_iter(text)
                        .map(|m| (m.start(), m.end(), i, false)),
                );
            }
        }
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
