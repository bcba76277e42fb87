//! Truncation of tool outputs, and the cap on every stored text: both run
//! after filtering, so that they can never cut a closing tag away (nor a
//! secret in two, leaving a piece no rule recognises).

use serde_json::Value;

/// Marker inserted where a tool output was cut.
pub const TRUNCATION_MARKER: &str = "\n...[TRUNCATED]...\n";

/// Cuts a tool output to `max_lines` lines (head and tail halves) and then to
/// `max_bytes` bytes (head and tail halves, on character boundaries), with
/// [`TRUNCATION_MARKER`] where text was removed. Returns the text and whether
/// it was cut.
pub fn truncate_output(output: &str, max_bytes: usize, max_lines: usize) -> (String, bool) {
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
/// its head and tail halves, as [`truncate_output`] does; returns whether
/// any was cut. `max_bytes` 0 cuts nothing.
pub fn cap_strings(value: &mut Value, max_bytes: usize) -> bool {
    if max_bytes == 0 {
        return false;
    }
    match value {
        Value::String(s) if s.len() > max_bytes => {
            *s = truncate_output(s, max_bytes, 0).0;
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
}
