//! Finding `key <op> value` around a keyword, in every syntax an agent
//! reads or writes:
//!
//! | syntax | example |
//! | --- | --- |
//! | `.env`, shell, INI, TOML, properties | `DB_PASSWORD=x`, `export TOKEN="x"`, `password = x` |
//! | JSON, YAML, Ruby, Go literals | `"api_key": "x"`, `token: x`, `Password: "x"` |
//! | Go, Makefile | `apiToken := "x"`, `TOKEN ?= x`, `TOKEN := x` |
//! | PHP, Perl, logstash | `$password = 'x';`, `'password' => 'x'`, `define('DB_PASSWORD', 'x')` |
//! | XML | `<password>x</password>`, `password="x"`, `<add key="ApiKey" value="x"/>` |
//! | HTTP headers | `Authorization: Bearer x`, `X-Api-Key: x` |
//! | command lines | `--password x`, `--token=x` |
//! | query strings, connection strings | `?api_key=x&…`, `Password=x;` |
//!
//! The value found is the whole value, quotes excluded, an auth scheme
//! (`Bearer`, `Basic`, `token`…) skipped: `Bearer <base64 with / + =>` is
//! redacted to its end.

use std::ops::Range;

/// A key and the value assigned to it.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Assignment {
    /// The key's name (without quotes, `$` or leading dashes).
    pub key: Range<usize>,
    /// The value (without quotes or auth scheme).
    pub value: Range<usize>,
    /// Whether the value was a string literal.
    pub quoted: bool,
}

/// Longest key considered.
const MAX_KEY: usize = 128;
/// Longest value taken.
const MAX_VALUE: usize = 4096;

/// Auth schemes skipped before a header's credential.
const SCHEMES: &[&str] = &[
    "bearer ", "basic ", "token ", "bot ", "digest ", "apikey ", "sso-key ", "key ",
];

fn is_key_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.'
}

/// The assignment whose key contains byte `hit`, if there is one.
pub(super) fn at(text: &str, hit: usize) -> Option<Assignment> {
    let b = text.as_bytes();
    if hit >= b.len() || !is_key_byte(b[hit]) {
        return None;
    }
    let mut start = hit;
    while start > 0 && is_key_byte(b[start - 1]) && hit - start < MAX_KEY {
        start -= 1;
    }
    let mut end = hit;
    while end < b.len() && is_key_byte(b[end]) && end - start < MAX_KEY {
        end += 1;
    }
    // `password.` ending a sentence; `--password` on a command line
    while end > start && matches!(b[end - 1], b'.' | b'-') {
        end -= 1;
    }
    let outer = start;
    let flag = b[start..end].starts_with(b"--");
    while start < end && matches!(b[start], b'.' | b'-') {
        start += 1;
    }
    if start >= end {
        return None;
    }
    let before = outer.checked_sub(1).map(|i| b[i]);
    let mut key_quote: Option<&[u8]> = match before {
        Some(q @ (b'"' | b'\'' | b'`')) => {
            if outer >= 2 && b[outer - 2] == b'\\' {
                Some(if q == b'"' { b"\\\"" } else { b"\\'" })
            } else {
                Some(&b[outer - 1..outer])
            }
        }
        _ => None,
    };
    let key = start..end;
    let mut p = end;
    match key_quote {
        Some(q) if b[p..].starts_with(q) => {
            p += q.len();
            // `$_ENV['TOKEN'] = …`, `ENV["TOKEN"] = …`
            if b.get(p) == Some(&b']') {
                p += 1;
            }
        }
        // a quote opening a string that holds `KEY=value` (`"Env":
        // ["TOKEN=x"]`): the key is the string's start
        Some(_) => key_quote = None,
        None => {}
    }
    let gap = skip_blanks(b, &mut p);
    let rest = &b[p..];
    let colon = rest.starts_with(b":") && !rest.starts_with(b":=") && !rest.starts_with(b"::");
    let mode = if rest.starts_with(b"::=") {
        p += 3;
        Mode::Operator
    } else if rest.starts_with(b":=") || rest.starts_with(b"?=") || rest.starts_with(b"=>") {
        p += 2;
        Mode::Operator
    } else if (rest.starts_with(b"=") && !matches!(rest.get(1), Some(b'=' | b'~')))
        || (rest.starts_with(b":") && rest.get(1) != Some(&b':'))
    {
        p += 1;
        Mode::Operator
    } else if before == Some(b'<') && rest.starts_with(b">") {
        p += 1;
        Mode::Element
    } else if key_quote.is_some() && rest.starts_with(b",") {
        // define('DB_PASSWORD', 'x'), setdefault("TOKEN", "x")
        p += 1;
        Mode::Argument
    } else if key_quote.is_some_and(|q| names_attribute(b, outer - q.len())) {
        // <add key="ApiKey" value="x" />, in a JSON string too
        p = value_attribute(b, p)?;
        Mode::Operator
    } else if flag && gap > 0 && !rest.starts_with(b"-") {
        Mode::Flag
    } else {
        return None;
    };
    skip_blanks(b, &mut p);
    if colon && let Some((below, block)) = yaml_value_below(b, outer, p) {
        let (value, quoted) = value_at(b, below, mode)?;
        return Some(Assignment {
            key,
            value,
            quoted: quoted || block,
        });
    }
    let (value, quoted) = value_at(b, p, mode)?;
    Some(Assignment { key, value, quoted })
}

/// YAML's value on the line below its key (`password: |` or `api_key:`
/// ending the line, the value indented under it): where it starts, and
/// whether it is a block scalar (`|`, `>`: literal text, as if quoted).
/// `key` is where the key starts, `p` where the line goes on after `:`.
fn yaml_value_below(b: &[u8], key: usize, mut p: usize) -> Option<(usize, bool)> {
    let block = matches!(b.get(p), Some(b'|' | b'>'));
    if block {
        p += 1;
        while b
            .get(p)
            .is_some_and(|c| matches!(c, b'-' | b'+') || c.is_ascii_digit())
        {
            p += 1;
        }
        skip_blanks(b, &mut p);
    }
    if b.get(p) == Some(&b'\r') {
        p += 1;
    }
    if b.get(p) != Some(&b'\n') {
        return None;
    }
    let line_start = b[..key]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |i| i + 1);
    let key_indent = b[line_start..key]
        .iter()
        .take_while(|&&c| c == b' ')
        .count();
    let below = p + 1;
    let indent = b[below..]
        .iter()
        .take_while(|&&c| c == b' ' || c == b'\t')
        .count();
    let value = below + indent;
    let line_end = b[value..]
        .iter()
        .position(|&c| c == b'\n' || c == b'\r')
        .map_or(b.len(), |i| value + i);
    let content = &b[value..line_end];
    // a nested mapping, a list or a comment is no value
    let mapping =
        content.windows(2).any(|w| w[0] == b':' && w[1] == b' ') || content.ends_with(b":");
    let list_or_comment = content.starts_with(b"- ") || content.starts_with(b"#");
    (indent > key_indent && !content.is_empty() && (block || !(mapping || list_or_comment)))
        .then_some((value, block))
}

/// How the value is introduced.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// `=`, `:`, `:=`, `?=`, `=>`
    Operator,
    /// `<key>value</key>`
    Element,
    /// `('KEY', 'value')`: only a quoted value counts.
    Argument,
    /// `--password value`
    Flag,
}

/// Skips spaces and tabs (not newlines) from `p`; returns how many.
fn skip_blanks(b: &[u8], p: &mut usize) -> usize {
    let start = *p;
    while *p < b.len() && (b[*p] == b' ' || b[*p] == b'\t') && *p - start < 32 {
        *p += 1;
    }
    *p - start
}

/// Whether the quote at `quote` opens the value of a `key=` or `name=`
/// attribute.
fn names_attribute(b: &[u8], quote: usize) -> bool {
    let before = &b[..quote];
    before.ends_with(b"key=") || before.ends_with(b"name=") || before.ends_with(b"Key=")
}

/// After `key="…"`, the start of a following `value="…"` attribute.
fn value_attribute(b: &[u8], mut p: usize) -> Option<usize> {
    skip_blanks(b, &mut p);
    let rest = &b[p..];
    rest.starts_with(b"value=").then_some(p + 6)
}

/// The value after an operator (`:`, `=`) at `p`, and whether it was
/// quoted, for a key found otherwise ([`super::labels`]).
pub(super) fn value_after_operator(b: &[u8], p: usize) -> Option<(Range<usize>, bool)> {
    value_at(b, p, Mode::Operator)
}

/// The value starting at `p`, and whether it was quoted.
fn value_at(b: &[u8], mut p: usize, mode: Mode) -> Option<(Range<usize>, bool)> {
    if p >= b.len() || b[p] == b'\n' || b[p] == b'\r' {
        return None;
    }
    // Python's b"…", r'…', f"…"
    if matches!(b[p], b'b' | b'B' | b'r' | b'R' | b'u' | b'U' | b'f' | b'F')
        && matches!(b.get(p + 1), Some(b'"' | b'\''))
    {
        p += 1;
    }
    let quote: Option<&[u8]> = match b[p] {
        b'\\' if matches!(b.get(p + 1), Some(b'"' | b'\'')) => Some(&b[p..p + 2]),
        b'"' | b'\'' | b'`' => Some(&b[p..p + 1]),
        _ => None,
    };
    if let Some(q) = quote {
        let start = p + q.len();
        let end = closing_quote(b, start, q);
        let value = skip_scheme(b, start..end);
        return (!value.is_empty()).then_some((value, true));
    }
    if mode == Mode::Argument {
        return None;
    }
    let start = skip_scheme(b, p..b.len()).start;
    let mut end = start;
    while end < b.len() && end - start < MAX_VALUE && !ends_unquoted(b[end], mode) {
        end += 1;
    }
    while end > start && matches!(b[end - 1], b'.' | b':') {
        end -= 1;
    }
    (end > start).then_some((start..end, false))
}

/// Where a quoted value that started at `start` ends: its closing quote
/// (escapes skipped), else the end of the line.
fn closing_quote(b: &[u8], start: usize, quote: &[u8]) -> usize {
    let mut i = start;
    while i < b.len() && i - start < MAX_VALUE {
        if b[i] == b'\n' {
            break;
        }
        if b[i..].starts_with(quote) {
            return i;
        }
        i += if b[i] == b'\\' && quote.len() == 1 {
            2
        } else {
            1
        };
    }
    i.min(b.len())
}

/// The range of `value` past a leading auth scheme (`Bearer abc` gives
/// `abc`'s).
pub(super) fn without_scheme(value: &str) -> Range<usize> {
    skip_scheme(value.as_bytes(), 0..value.len())
}

/// A value without its leading auth scheme (`Bearer abc` gives `abc`).
fn skip_scheme(b: &[u8], value: Range<usize>) -> Range<usize> {
    let v = &b[value.clone()];
    for scheme in SCHEMES {
        if v.len() > scheme.len() && v[..scheme.len()].eq_ignore_ascii_case(scheme.as_bytes()) {
            let mut start = value.start + scheme.len();
            while start < value.end && b[start] == b' ' {
                start += 1;
            }
            return start..value.end;
        }
    }
    value
}

/// Bytes that end an unquoted value.
fn ends_unquoted(c: u8, mode: Mode) -> bool {
    match mode {
        Mode::Element => c == b'<' || c == b'\n',
        _ => c.is_ascii_whitespace() || b"\"'`,;&<>)]}\\".contains(&c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The key and value found at the first occurrence of `word`.
    fn found(text: &str, word: &str) -> Option<(String, String, bool)> {
        let hit = text.find(word)?;
        at(text, hit).map(|a| (text[a.key].to_string(), text[a.value].to_string(), a.quoted))
    }

    #[test]
    fn every_syntax() {
        for (text, word, key, value) in [
            ("DB_PASSWORD=s3cr3t", "PASSWORD", "DB_PASSWORD", "s3cr3t"),
            (
                "export API_TOKEN=\"abc123\"",
                "TOKEN",
                "API_TOKEN",
                "abc123",
            ),
            ("password = 'x1y2'", "password", "password", "x1y2"),
            ("{\"api_key\": \"k-123\"}", "key", "api_key", "k-123"),
            ("token: abcdef", "token", "token", "abcdef"),
            ("apiToken := \"v4l\"", "Token", "apiToken", "v4l"),
            ("TOKEN ?= tok", "TOKEN", "TOKEN", "tok"),
            ("TOKEN := tok", "TOKEN", "TOKEN", "tok"),
            ("$password = 'pw1';", "password", "password", "pw1"),
            ("'password' => 'pw2',", "password", "password", "pw2"),
            (
                "define('DB_PASSWORD', 'pw3');",
                "PASSWORD",
                "DB_PASSWORD",
                "pw3",
            ),
            ("<password>pw4</password>", "password", "password", "pw4"),
            ("<db password=\"pw5\"/>", "password", "password", "pw5"),
            (
                "<add key=\"ClearTextPassword\" value=\"pw6\" />",
                "Password",
                "ClearTextPassword",
                "pw6",
            ),
            (
                "Authorization: Bearer ab/c+d==",
                "Auth",
                "Authorization",
                "ab/c+d==",
            ),
            ("X-Api-Key: k7", "Key", "X-Api-Key", "k7"),
            ("run --password pw8 --x", "password", "password", "pw8"),
            ("run --token=pw9", "token", "token", "pw9"),
            ("/v1?api_key=pw10&x=1", "key", "api_key", "pw10"),
            ("Server=db;Password=pw11;", "Password", "Password", "pw11"),
            ("{\\\"token\\\":\\\"pw12\\\"}", "token", "token", "pw12"),
            (
                "AWS_SECRET_ACCESS_KEY=pw13",
                "SECRET",
                "AWS_SECRET_ACCESS_KEY",
                "pw13",
            ),
            ("secret_key = b\"pw14\"", "secret", "secret_key", "pw14"),
            ("ENV['TOKEN'] = 'pw15'", "TOKEN", "TOKEN", "pw15"),
            (
                "\"Env\": [\"DB_PASSWORD=pw16\"]",
                "PASSWORD",
                "DB_PASSWORD",
                "pw16",
            ),
            (
                r#""<add key=\"ClearTextPassword\" value=\"pw17\" />""#,
                "Password",
                "ClearTextPassword",
                "pw17",
            ),
            // YAML, the value on the line below (field test 12c)
            ("password: |\n  pw18\n", "password", "password", "pw18"),
            ("db:\n  api_key:\n    pw19\n", "key", "api_key", "pw19"),
            ("token: >-\r\n  pw20", "token", "token", "pw20"),
            ("the password is hunter2.", "password", "", ""),
        ] {
            let got = found(text, word);
            if key.is_empty() {
                assert_eq!(got, None, "{text}");
            } else {
                let (k, v, _) = got.unwrap_or_else(|| panic!("nothing in {text}"));
                assert_eq!((k.as_str(), v.as_str()), (key, value), "{text}");
            }
        }
    }

    #[test]
    fn not_assignments() {
        for (text, word) in [
            ("if token == None:", "token"),
            ("token != other", "token"),
            ("fn get_token_by_id() {}", "token"),
            ("std::token::Kind", "token"),
            ("password?: string", "password"),
            ("password:\n  nested: 1", "password"),
            ("password:\n  - one\n  - two", "password"),
            ("password:\n# a comment", "password"),
            ("  password:\nnext: at the same level", "password"),
        ] {
            assert_eq!(found(text, word), None, "{text}");
        }
    }
}
