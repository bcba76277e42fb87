//! JSON with comments, as Gemini CLI reads its `settings.json`: it strips
//! `//` and `/* */` comments (strip-json-comments, checked in 0.61.0's
//! bundle) and parses the rest as JSON, so a trailing comma is still an
//! error there. memlog reads such a file the same way ([`without_comments`])
//! and, to keep the user's comments, changes only the text of the one
//! member it edits ([`with_member`]).

use std::borrow::Cow;

use serde_json::Value;

/// `text` with its comments blanked out: each of their characters a space
/// but line breaks, as strip-json-comments does, so that positions (and
/// parse errors) still point into the file. Borrowed when there are none.
pub(crate) fn without_comments(text: &str) -> Cow<'_, str> {
    let spans = comment_spans(text);
    if spans.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end) in spans {
        out.push_str(&text[at..start]);
        for c in text[start..end].chars() {
            match c {
                '\n' | '\r' => out.push(c),
                // as many spaces as the character has bytes
                _ => out.extend(std::iter::repeat_n(' ', c.len_utf8())),
            }
        }
        at = end;
    }
    out.push_str(&text[at..]);
    Cow::Owned(out)
}

/// The byte spans of the comments of `text`, outside strings.
fn comment_spans(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        match (b, bytes.get(i + 1)) {
            (b'"', _) => in_string = true,
            (b'/', Some(b'/')) => {
                let end = text[i..].find('\n').map_or(bytes.len(), |n| i + n);
                // a `\r` before the line break stays with the line break
                let end = if end > i && bytes.get(end - 1) == Some(&b'\r') {
                    end - 1
                } else {
                    end
                };
                spans.push((i, end));
                i = end;
                continue;
            }
            (b'/', Some(b'*')) => {
                let end = text[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |n| i + 2 + n + 2);
                spans.push((i, end));
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    spans
}

/// A member of the top-level object: where its key starts, and where its
/// value starts and ends (byte offsets).
#[derive(Debug)]
struct Member {
    key: String,
    key_start: usize,
    value_start: usize,
    value_end: usize,
}

/// The top-level object of `plain` (a JSON text whose comments are
/// blanked): where its braces are, and its members. `None` when it is not
/// one object.
fn members(plain: &str) -> Option<(usize, usize, Vec<Member>)> {
    let bytes = plain.as_bytes();
    let open = plain.find(|c: char| !c.is_whitespace() && c != '\u{feff}')?;
    if bytes[open] != b'{' {
        return None;
    }
    let mut found = Vec::new();
    let mut i = open + 1;
    loop {
        i = skip_space(bytes, i);
        match bytes.get(i)? {
            b'}' => return Some((open, i, found)),
            b',' => {
                i += 1;
                continue;
            }
            b'"' => {}
            _ => return None,
        }
        let key_start = i;
        let key_end = string_end(bytes, i)?;
        let key: String = serde_json::from_str(&plain[key_start..key_end]).ok()?;
        i = skip_space(bytes, key_end);
        if bytes.get(i) != Some(&b':') {
            return None;
        }
        let value_start = skip_space(bytes, i + 1);
        let value_end = value_end(bytes, value_start)?;
        found.push(Member {
            key,
            key_start,
            value_start,
            value_end,
        });
        i = value_end;
    }
}

fn skip_space(bytes: &[u8], mut i: usize) -> usize {
    while bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// The end (exclusive) of the string starting at `start`.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    loop {
        match bytes.get(i)? {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
}

/// The end (exclusive, trailing spaces left out) of the value at `start`.
fn value_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = start;
    let mut last = start;
    loop {
        match *bytes.get(i)? {
            b'"' => {
                i = string_end(bytes, i)?;
                last = i;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' if depth == 0 => return Some(last),
            b'}' | b']' => depth -= 1,
            b',' if depth == 0 => return Some(last),
            _ => {}
        }
        if !bytes[i].is_ascii_whitespace() {
            last = i + 1;
        }
        i += 1;
    }
}

/// The text of the JSON-with-comments object `text` with its top-level
/// member `key` given the JSON text `value` (added last when missing), or
/// removed with `None`; everything else, comments and layout, as it was.
/// A multi-line `value` is indented as the member's key is. `None` when
/// `text` is not one object memlog can read, or the member is missing and
/// nothing is to be removed either.
pub(crate) fn with_member(text: &str, key: &str, value: Option<&str>) -> Option<String> {
    let plain = without_comments(text);
    let (open, close, members) = members(&plain)?;
    let index = members.iter().position(|m| m.key == key);
    let indent_of = |at: usize| {
        let line = plain[..at].rfind('\n').map_or(0, |n| n + 1);
        plain[line..at]
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect::<String>()
    };
    let indented = |value: &str, indent: &str| value.replace('\n', &format!("\n{indent}"));
    match (index, value) {
        (Some(i), Some(value)) => {
            let m = &members[i];
            let value = indented(value, &indent_of(m.key_start));
            Some(format!(
                "{}{value}{}",
                &text[..m.value_start],
                &text[m.value_end..]
            ))
        }
        (None, Some(value)) => {
            let member = Value::String(key.to_string());
            match members.last() {
                Some(last) => {
                    let indent = indent_of(last.key_start);
                    let value = indented(value, &indent);
                    // after the rest of the last member's line when that
                    // is only a comment: the comment stays with its member
                    let end = last.value_end;
                    let line_end = plain[end..]
                        .find('\n')
                        .map(|n| end + n)
                        .filter(|&nl| plain[end..nl].trim().is_empty())
                        .unwrap_or(end);
                    Some(format!(
                        "{},{}\n{indent}{member}: {value}{}",
                        &text[..end],
                        &text[end..line_end],
                        &text[line_end..]
                    ))
                }
                None => {
                    let value = indented(value, "  ");
                    let inside = text[open + 1..close].trim_end();
                    Some(format!(
                        "{}{inside}\n  {member}: {value}\n{}",
                        &text[..open + 1],
                        &text[close..]
                    ))
                }
            }
        }
        (Some(i), None) => Some(cut(text, &member_spans(&plain, &members, i))),
        (None, None) => Some(text.to_string()),
    }
}

/// Whether the part of `text` that [`with_member`] replaces (with
/// `replacing`) or removes for `key` holds comments, which the edit then
/// drops.
pub(crate) fn comments_in_member(text: &str, key: &str, replacing: bool) -> bool {
    let plain = without_comments(text);
    let Some((_, _, members)) = members(&plain) else {
        return text != plain;
    };
    let Some(i) = members.iter().position(|m| m.key == key) else {
        return false;
    };
    let spans = if replacing {
        vec![(members[i].value_start, members[i].value_end)]
    } else {
        member_spans(&plain, &members, i)
    };
    spans
        .iter()
        .any(|&(from, to)| text[from..to] != plain[from..to])
}

/// The spans that removing member `i` of `plain` takes out: for a later
/// member, the comma before it and everything from the line after the one
/// that comma ends (a comment after it stays with the member before) up to
/// its value's end; for the first, it and what follows up to the next key.
fn member_spans(plain: &str, members: &[Member], i: usize) -> Vec<(usize, usize)> {
    let m = &members[i];
    match (i.checked_sub(1), members.get(i + 1)) {
        (Some(before), _) => {
            let end = members[before].value_end;
            let comma = plain[end..].find(',').map(|n| end + n);
            let after_comma = comma.and_then(|c| {
                let nl = c + 1 + plain[c + 1..].find('\n')?;
                (nl < m.key_start && plain[c + 1..nl].trim().is_empty()).then_some(nl)
            });
            match (comma, after_comma) {
                (Some(c), Some(nl)) => vec![(c, c + 1), (nl, m.value_end)],
                _ => vec![(end, m.value_end)],
            }
        }
        (None, Some(next)) => vec![(m.key_start, next.key_start)],
        (None, None) => vec![(m.key_start, m.value_end)],
    }
}

/// `text` without the byte `spans` (in order, not overlapping).
fn cut(text: &str, spans: &[(usize, usize)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for &(from, to) in spans {
        out.push_str(&text[at..from]);
        at = to;
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SETTINGS: &str = "{\n  // my theme\n  \"ui\": {\"theme\": \"dark\"}, /* keep */\n  \"general\": {\"vimMode\": true} // vim\n}\n";

    #[test]
    fn comments_are_blanked_as_gemini_cli_strips_them() {
        let plain = without_comments(SETTINGS);
        assert_eq!(plain.len(), SETTINGS.len());
        let value: Value = serde_json::from_str(&plain).unwrap();
        assert_eq!(value["ui"]["theme"], "dark");
        // a `//` inside a string is no comment
        let url = r#"{"url": "http://x/*y*/"}"#;
        assert_eq!(without_comments(url), url);
        assert!(matches!(without_comments(url), Cow::Borrowed(_)));
        // a trailing comma stays an error, as it is for Gemini CLI
        assert!(serde_json::from_str::<Value>(&without_comments("{\"a\": 1,}")).is_err());
    }

    #[test]
    fn one_member_is_added_replaced_and_removed_and_the_comments_stay() {
        let added = with_member(SETTINGS, "hooks", Some("{\n  \"Stop\": []\n}")).unwrap();
        assert_eq!(
            added,
            "{\n  // my theme\n  \"ui\": {\"theme\": \"dark\"}, /* keep */\n  \"general\": {\"vimMode\": true}, // vim\n  \"hooks\": {\n    \"Stop\": []\n  }\n}\n"
        );
        let replaced = with_member(&added, "hooks", Some("{}")).unwrap();
        assert!(replaced.contains("  \"hooks\": {}\n}"), "{replaced}");
        let removed = with_member(&added, "hooks", None).unwrap();
        assert_eq!(removed, SETTINGS);
        assert!(!comments_in_member(&added, "hooks", true));
        assert!(!comments_in_member(&added, "hooks", false));
        // the first member, and the only one
        let first = with_member(SETTINGS, "ui", None).unwrap();
        assert_eq!(
            first,
            "{\n  // my theme\n  \"general\": {\"vimMode\": true} // vim\n}\n"
        );
        let empty = with_member("{ /* nothing yet */ }", "hooks", Some("{}")).unwrap();
        assert_eq!(empty, "{ /* nothing yet */\n  \"hooks\": {}\n}");
        let only = with_member(&empty, "hooks", None).unwrap();
        assert!(only.contains("/* nothing yet */"), "{only}");
        serde_json::from_str::<Value>(&without_comments(&only)).unwrap();
    }

    #[test]
    fn comments_inside_the_member_are_said_to_be_dropped() {
        let text = "{\n  \"hooks\": {\n    // mine\n    \"Stop\": []\n  }\n}";
        assert!(comments_in_member(text, "hooks", true));
        assert!(!comments_in_member(SETTINGS, "hooks", true));
        // a comment above the member is kept when its value is replaced
        let above = "{\n  \"a\": 1,\n  // memlog's\n  \"hooks\": {}\n}";
        assert!(!comments_in_member(above, "hooks", true));
        assert!(comments_in_member(above, "hooks", false));
        assert_eq!(with_member("[1, 2]", "hooks", None), None);
    }
}
