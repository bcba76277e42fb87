//! Truncation of tool outputs, and the cap on every stored text: both run
//! after filtering, so that they can never cut a closing tag away (nor a
//! secret in two, leaving a piece no rule recognises). A tool output that
//! is mostly not text is not kept at all ([`binary_output`]).

use serde_json::Value;

/// Marker inserted where a tool output was cut.
pub const TRUNCATION_MARKER: &str = "\n...[TRUNCATED]...\n";

/// Above this share of a tool output's characters (percent) being
/// replacement characters or control characters, it is binary.
pub const BINARY_PERCENT: usize = 30;

/// What a tool output that is mostly not text is stored as, `[binary
/// output, N bytes]`, or `None` for text.
///
/// A command that prints binary (`cat` of an image, `head -c` of a
/// compressed file) reaches memlog with every byte that is not UTF-8
/// already replaced by U+FFFD (the agent did so): cut to its head and
/// tail, it was still 5 KB of U+FFFD and NUL characters, stored and
/// indexed, that no one can read or find (field test 8a). An output is
/// binary when more than [`BINARY_PERCENT`] % of its characters are
/// U+FFFD or control characters other than newline, carriage return and
/// tab; such an output is replaced whole, readable parts included, which
/// keeps the rule simple: what matters is that the call printed binary.
/// `N` is the output's length in bytes as memlog received it (a replaced
/// byte counts as the three of U+FFFD).
pub fn binary_output(output: &str) -> Option<String> {
    let (mut chars, mut unreadable) = (0usize, 0usize);
    for c in output.chars() {
        chars += 1;
        if c == char::REPLACEMENT_CHARACTER || (c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
        {
            unreadable += 1;
        }
    }
    (unreadable * 100 > chars * BINARY_PERCENT)
        .then(|| format!("[binary output, {} bytes]", output.len()))
}

/// A tool output as it is stored: [`binary_output`]'s note for one that is
/// mostly not text; otherwise cut to `max_lines` lines (head and tail
/// halves) and then to `max_bytes` bytes (head and tail halves, on
/// character boundaries), with [`TRUNCATION_MARKER`] where text was
/// removed. Returns the text and whether any was removed.
pub fn truncate_output(output: &str, max_bytes: usize, max_lines: usize) -> (String, bool) {
    if let Some(note) = binary_output(output) {
        return (note, true);
    }
    cut(output, max_bytes, max_lines)
}

/// [`truncate_output`] without the binary check.
fn cut(output: &str, max_bytes: usize, max_lines: usize) -> (String, bool) {
    let mut text = output.to_string();
    let mut cut = false;
    let line_count = text.split('\n').count();
    if max_lines > 0 && line_count > max_lines {
        let lines: Vec<&str> = text.split('\n').collect();
        let head = max_lines / 2;
        let tail = max_lines - head;
        text = format!(
            "{}{}{}",
            lines[..head].join("\n"),
            TRUNCATION_MARKER,
            lines[lines.len() - tail..].join("\n")
        );
        cut = true;
    }
    if max_bytes > 0 && text.len() > max_bytes {
        let half = max_bytes / 2;
        let head_end = floor_char_boundary(&text, half);
        let tail_start = ceil_char_boundary(&text, text.len() - half);
        text = format!(
            "{}{}{}",
            &text[..head_end],
            TRUNCATION_MARKER,
            &text[tail_start..]
        );
        cut = true;
    }
    (text, cut)
}

/// Cuts every string in `value` (recursively) longer than `max_bytes` to
/// its head and tail halves, as [`truncate_output`] does (a text that is
/// not a tool's output is kept even when it looks binary); returns whether
/// any was cut. `max_bytes` 0 cuts nothing.
pub fn cap_strings(value: &mut Value, max_bytes: usize) -> bool {
    if max_bytes == 0 {
        return false;
    }
    match value {
        Value::String(s) if s.len() > max_bytes => {
            *s = cut(s, max_bytes, 0).0;
            true
        }
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |cut, item| cap_strings(item, max_bytes) | cut),
        Value::Object(map) => map
            .values_mut()
            .fold(false, |cut, item| cap_strings(item, max_bytes) | cut),
        _ => false,
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char_boundary(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn caps_every_string_keeping_head_and_tail() {
        let long = format!("{}{}", "a".repeat(60), "é".repeat(30));
        let mut v = json!({"text": long, "input": {"content": ["short", long.clone()]}, "n": 3});
        assert!(cap_strings(&mut v, 40));
        let text = v["text"].as_str().unwrap();
        assert!(text.starts_with(&"a".repeat(20)) && text.ends_with(&"é".repeat(10)));
        assert!(text.contains(TRUNCATION_MARKER));
        assert_eq!(v["input"]["content"][0], "short");
        assert_eq!(v["input"]["content"][1], v["text"]);
        let mut short = json!({"text": "short"});
        assert!(!cap_strings(&mut short, 40));
        assert!(!cap_strings(&mut v, 0));
    }

    /// Field test 8a: `cat blob.bin | head -c 2000000` was stored as 5 KB
    /// of U+FFFD and NUL characters.
    #[test]
    fn binary_output_is_stored_as_its_size() {
        let binary: String = (0..2000u32)
            .map(|i| match i % 5 {
                0 | 1 => char::REPLACEMENT_CHARACTER,
                2 => '\0',
                3 => 'k',
                _ => '\u{7}',
            })
            .collect();
        let (text, cut) = truncate_output(&binary, 10_000, 100);
        assert_eq!(text, format!("[binary output, {} bytes]", binary.len()));
        assert!(cut);
        // under the threshold it is text, cut as usual
        let mostly_text = format!("{}{}", "a".repeat(71), "\u{fffd}".repeat(29));
        assert_eq!(binary_output(&mostly_text), None);
        assert_eq!(truncate_output(&mostly_text, 10_000, 100).0, mostly_text);
        // lines, tabs and carriage returns are text; nothing is not binary
        assert_eq!(binary_output("a\tb\r\n\n\n"), None);
        assert_eq!(binary_output(""), None);
        // other texts are capped, never replaced
        let mut v = json!({"text": binary.clone()});
        assert!(cap_strings(&mut v, 100));
        assert!(v["text"].as_str().unwrap().contains(TRUNCATION_MARKER));
    }
}
