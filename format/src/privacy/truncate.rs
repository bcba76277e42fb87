//! Truncation of tool outputs: it runs after filtering, so that it can
//! never cut a closing tag away.

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
