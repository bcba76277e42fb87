//! Tool outputs an agent cut itself before handing them over: the line
//! the cut went through is left out. A secret on that line reached memlog
//! in part (16–20 characters of a GitHub token), which no rule knows by
//! its shape (field test 9a); a line cut in two is no use to memory
//! either. Each agent marks its cut its own way:
//!
//! - OpenCode keeps an output's end after `...output truncated...` and the
//!   path of the whole output: the first line after them is cut.
//! - Copilot CLI keeps an output's first characters after
//!   `Preview (first N chars):`: the last line of those N is cut.

/// How OpenCode's output whose start it left out begins; the kept end
/// follows the next blank line.
const OPENCODE_CUT: &str = "...output truncated...\n\nFull output saved to: ";
/// How Copilot CLI's output too long to hand over begins.
const COPILOT_TOO_LARGE: &str = "Output too large to read at once";
/// Copilot CLI's mark of a preview: `Preview (first N chars):` and a line
/// break, then the preview's N characters.
const COPILOT_PREVIEW: (&str, &str) = ("Preview (first ", " chars):\n");

/// `output` without the line an agent's own cut went through.
pub(crate) fn without_cut_line(output: &str) -> String {
    if let Some(kept) = opencode_kept_end(output) {
        return kept;
    }
    if let Some(kept) = copilot_preview(output) {
        return kept;
    }
    output.to_string()
}

/// OpenCode's output with the first line of its kept end left out.
fn opencode_kept_end(output: &str) -> Option<String> {
    if !output.starts_with(OPENCODE_CUT) {
        return None;
    }
    // the saved output's path, then a blank line, then the kept end
    let kept_from = OPENCODE_CUT.len() + output[OPENCODE_CUT.len()..].find("\n\n")? + 2;
    let after_cut_line = output[kept_from..]
        .find('\n')
        .map_or("", |i| &output[kept_from + i + 1..]);
    Some(format!("{}{after_cut_line}", &output[..kept_from]))
}

/// Copilot CLI's preview with its last, cut, line left out.
fn copilot_preview(output: &str) -> Option<String> {
    if !output.starts_with(COPILOT_TOO_LARGE) {
        return None;
    }
    let (open, close) = COPILOT_PREVIEW;
    let marked = output.find(open)?;
    let count_from = marked + open.len();
    let count_len = output[count_from..].find(close)?;
    let chars: usize = output[count_from..count_from + count_len].parse().ok()?;
    let preview_from = count_from + count_len + close.len();
    let preview_len: usize = output[preview_from..]
        .chars()
        .take(chars)
        .map(char::len_utf8)
        .sum();
    let preview_end = preview_from + preview_len;
    // the preview ends inside its last line, unless it ends a line
    if output[preview_from..preview_end].ends_with('\n') {
        return None;
    }
    let cut_from = output[preview_from..preview_end]
        .rfind('\n')
        .map_or(preview_from, |i| preview_from + i + 1);
    let mut out = String::with_capacity(output.len());
    out.push_str(&output[..cut_from]);
    out.push_str(output[preview_end..].trim_start_matches('\n'));
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opencodes_cut_line_is_left_out() {
        let output = "...output truncated...\n\nFull output saved to: /tmp/out/tool_1\n\n\
                      g2Z04HryGB\n02789 line\n02790 line\n";
        assert_eq!(
            without_cut_line(output),
            "...output truncated...\n\nFull output saved to: /tmp/out/tool_1\n\n02789 line\n02790 line\n"
        );
    }

    #[test]
    fn copilots_cut_preview_line_is_left_out() {
        let preview = "000000 INFO ok\ncloning with token ghp_HtctEkYns4BoEVCL";
        let output = format!(
            "Output too large to read at once (140.0 KB). Saved to: /tmp/x.txt\n\n\
             Preview (first {} chars):\n{preview}\n<shellId: 0 completed with exit code 0>",
            preview.chars().count()
        );
        let kept = without_cut_line(&output);
        assert!(!kept.contains("ghp_"), "{kept}");
        assert!(kept.contains("000000 INFO ok\n<shellId: 0"), "{kept}");
    }

    #[test]
    fn a_copilot_preview_of_whole_lines_keeps_them() {
        let output = "Output too large to read at once (1 KB). Saved to: /tmp/x.txt\n\n\
                      Preview (first 8 chars):\nab\ncdef\n<shellId: 0 completed with exit code 0>";
        assert_eq!(without_cut_line(output), output);
    }

    #[test]
    fn an_output_no_agent_cut_is_as_it_was() {
        let output = "a line\nanother with ...output truncated by grep\n";
        assert_eq!(without_cut_line(output), output);
        assert_eq!(
            without_cut_line("Preview (first x chars):\nabc"),
            "Preview (first x chars):\nabc"
        );
        // a file that merely holds OpenCode's words
        let quoted = "log:\n...output truncated...\n\nFull output saved to: x\n\nkept\n";
        assert_eq!(without_cut_line(quoted), quoted);
    }

    #[test]
    fn an_opencode_end_of_one_cut_line_keeps_nothing_of_it() {
        let output = "...output truncated...\n\nFull output saved to: /tmp/t\n\nyGB tail";
        assert_eq!(
            without_cut_line(output),
            "...output truncated...\n\nFull output saved to: /tmp/t\n\n"
        );
    }
}
