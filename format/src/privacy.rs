//! Privacy at the door: what must never reach disk is removed from an event
//! before it is written anywhere, the journal included.
//!
//! Three steps, in this order (docs/DESIGN.md §3):
//!
//! 1. **Private spans.** `<private>…</private>`, `[private]…[/private]` and
//!    `<!-- private -->…<!-- /private -->` (tags case-insensitive) are replaced
//!    by the marker `[PRIVATE]`. Tags inside fenced code blocks are literal
//!    text. Nested tags of the same form are absorbed by the outer span. An
//!    opening tag without a closing one leaves the rest of the text unchanged
//!    and is reported as a warning (losing text silently is worse than keeping
//!    it).
//! 2. **Secrets.** Known secret shapes (`password=…`, `api_key: …`, `secret=`,
//!    `token=`, `Bearer …`, private key blocks, AWS, GitHub, OpenAI and
//!    Anthropic key formats, plus the configured extra patterns) are replaced
//!    by `[REDACTED]`, everywhere, code blocks included. In structured JSON a
//!    string under a key that names a secret (`password`, `api_key`, `token`…)
//!    is redacted whole.
//! 3. **Truncation** (tool outputs only, see [`truncate_output`]): more than
//!    100 lines keeps the first 50 and the last 50; more than 10 000 bytes
//!    keeps the head and tail halves; a marker shows the cut. Truncation runs
//!    after filtering so that it can never cut a closing tag away.

use regex::{Regex, RegexBuilder};
use serde_json::Value;

use crate::{Error, Result};

/// Replacement for a private span.
pub const PRIVATE_MARKER: &str = "[PRIVATE]";
/// Replacement for a secret.
pub const REDACTED: &str = "[REDACTED]";
/// Marker inserted where a tool output was cut.
pub const TRUNCATION_MARKER: &str = "\n...[TRUNCATED]...\n";

/// Built-in secret shapes, each with the words (ASCII, lowercase) one of
/// which any match must contain: a pattern is compiled, lazily, only for a
/// text that contains one of them, so recording an ordinary prompt compiles
/// no regex at all (compiling them all was most of a hook's run time). The
/// first six are docs/DESIGN.md §3 (the key-block pattern widened from the
/// header line to the whole block).
///
/// A key-value rule is tried only when its word ([`ASSIGNED_WORDS`]) is followed, after
/// optional whitespace, by `:` or `=` (`get_token_by_id()` mentions a
/// token but assigns none): compiling one of them cost a PostToolUse hook
/// a quarter of its instructions.
const SECRET_RULES: &[(&[&str], &str)] = &[
    (&["password"], r#"(?i)password\s*[:=]\s*['"]?[^\s'"]+"#),
    (&["api"], r#"(?i)api[_-]?key\s*[:=]\s*['"]?[^\s'"]+"#),
    (&["secret"], r#"(?i)secret\s*[:=]\s*['"]?[^\s'"]+"#),
    (&["token"], r#"(?i)token\s*[:=]\s*['"]?[^\s'"]+"#),
    (&["bearer"], r"(?i)bearer\s+[a-zA-Z0-9\-_.]+"),
    (
        &["private key"],
        r"(?s)-----BEGIN\s+(?:[A-Z0-9]+\s+)*PRIVATE\s+KEY(?:\s+BLOCK)?-----.*?(?:-----END\s+(?:[A-Z0-9]+\s+)*PRIVATE\s+KEY(?:\s+BLOCK)?-----|\z)",
    ),
    // Anthropic before OpenAI: both start with sk-.
    (&["sk-ant-"], r"sk-ant-[A-Za-z0-9_\-]{8,}"),
    (
        &["sk-"],
        r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
    ),
    (
        &[
            "akia", "asia", "agpa", "aida", "aroa", "anpa", "anva", "aipa",
        ],
        r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b",
    ),
    (
        &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        r"\bgh[pousr]_[A-Za-z0-9]{36,}\b",
    ),
    (&["github_pat_"], r"\bgithub_pat_[A-Za-z0-9_]{22,}\b"),
];

/// For the key-value rules of [`SECRET_RULES`] (by pattern prefix): the
/// word their match ends in before `\s*[:=]`.
const ASSIGNED_WORDS: &[(&str, &str)] = &[
    ("(?i)password", "password"),
    ("(?i)api", "key"),
    ("(?i)secret", "secret"),
    ("(?i)token", "token"),
];

/// Whether `word` occurs in `lower` followed by optional whitespace and
/// `:` or `=` (`\s` is Unicode White_Space, as `trim_start` is).
fn assigned(lower: &str, word: &str) -> bool {
    lower
        .match_indices(word)
        .any(|(i, w)| lower[i + w.len()..].trim_start().starts_with([':', '=']))
}

/// JSON object keys whose string values are secrets whatever they look
/// like (compared lowercased, `-` read as `_`).
const SECRET_KEYS: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "secret",
    "client_secret",
    "token",
    "access_token",
    "refresh_token",
    "auth_token",
    "api_key",
    "apikey",
    "private_key",
    "authorization",
];

/// A regular expression compiled on first use.
struct LazyRegex {
    pattern: String,
    case_insensitive: bool,
    compiled: std::sync::OnceLock<Option<Regex>>,
}

impl LazyRegex {
    fn new(pattern: &str, case_insensitive: bool) -> LazyRegex {
        LazyRegex {
            pattern: pattern.to_string(),
            case_insensitive,
            compiled: std::sync::OnceLock::new(),
        }
    }

    /// The compiled regex (`None` only for a pattern that does not compile,
    /// which [`PrivacyFilter::new`] rules out for configured ones and tests
    /// rule out for built-in ones).
    fn get(&self) -> Option<&Regex> {
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

/// A secret pattern and the words that must be present for it to match
/// (empty: always tried, as for configured patterns).
struct SecretRule {
    triggers: &'static [&'static str],
    /// For a key-value rule: the word that must be assigned.
    assigned: Option<&'static str>,
    regex: LazyRegex,
}

/// One tag form: its opening and closing token patterns.
struct TagForm {
    open: LazyRegex,
    close: LazyRegex,
}

/// What filtering did to a text.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Report {
    /// Private spans replaced.
    pub private_spans: usize,
    /// Secrets redacted.
    pub redactions: usize,
    /// Human-readable warnings (unclosed tags). Never contain the text.
    pub warnings: Vec<String>,
}

impl Report {
    /// Adds another report's counts and warnings to this one.
    pub fn absorb(&mut self, other: Report) {
        self.private_spans += other.private_spans;
        self.redactions += other.redactions;
        self.warnings.extend(other.warnings);
    }
}

/// The privacy filter, compiled once per process.
pub struct PrivacyFilter {
    forms: Vec<TagForm>,
    secrets: Vec<SecretRule>,
}

impl PrivacyFilter {
    /// The built-in rules plus `extra_patterns` (regular expressions from
    /// `.memlog.yaml`; an invalid one is an error naming it).
    pub fn new(extra_patterns: &[String]) -> Result<Self> {
        let forms = vec![
            TagForm {
                open: LazyRegex::new(r"<private>", true),
                close: LazyRegex::new(r"</private>", true),
            },
            TagForm {
                open: LazyRegex::new(r"\[private\]", true),
                close: LazyRegex::new(r"\[/private\]", true),
            },
            TagForm {
                open: LazyRegex::new(r"<!--\s*private\s*-->", true),
                close: LazyRegex::new(r"<!--\s*/private\s*-->", true),
            },
        ];
        let mut secrets: Vec<SecretRule> = SECRET_RULES
            .iter()
            .map(|(triggers, pattern)| SecretRule {
                triggers,
                assigned: ASSIGNED_WORDS
                    .iter()
                    .find(|(prefix, _)| pattern.starts_with(prefix))
                    .map(|(_, word)| *word),
                regex: LazyRegex::new(pattern, false),
            })
            .collect();
        for p in extra_patterns {
            Regex::new(p)
                .map_err(|e| Error::invalid(format!("privacy pattern {p:?}"), e.to_string()))?;
            secrets.push(SecretRule {
                triggers: &[],
                assigned: None,
                regex: LazyRegex::new(p, false),
            });
        }
        Ok(PrivacyFilter { forms, secrets })
    }

    /// Filters one text: private spans, then secrets.
    pub fn filter_text(&self, text: &str) -> (String, Report) {
        let mut report = Report::default();
        let (mut current, spans, warning) = self.remove_private_spans(text);
        report.private_spans = spans;
        report.warnings.extend(warning);
        let mut lower = current.to_ascii_lowercase();
        for rule in &self.secrets {
            if !rule.triggers.is_empty() && !rule.triggers.iter().any(|t| lower.contains(t)) {
                continue;
            }
            if rule.assigned.is_some_and(|w| !assigned(&lower, w)) {
                continue;
            }
            let Some(re) = rule.regex.get() else { continue };
            if re.is_match(&current) {
                let mut n = 0;
                let replaced = re.replace_all(&current, |_: &regex::Captures| {
                    n += 1;
                    REDACTED
                });
                current = replaced.into_owned();
                lower = current.to_ascii_lowercase();
                report.redactions += n;
            }
        }
        (current, report)
    }

    /// One pass over the tag tokens of all forms, outside code blocks. A span
    /// opened by one form is closed only by the same form; tokens of other
    /// forms inside it are content. Returns the text, the spans replaced and
    /// a warning for an unclosed span.
    fn remove_private_spans(&self, text: &str) -> (String, usize, Option<String>) {
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

    /// Filters every string inside a JSON value in place; strings under
    /// secret-named keys are redacted whole.
    pub fn filter_value(&self, value: &mut Value) -> Report {
        let mut report = Report::default();
        match value {
            Value::String(s) => {
                let (filtered, r) = self.filter_text(s);
                if filtered != *s {
                    *s = filtered;
                }
                report.absorb(r);
            }
            Value::Array(items) => {
                for item in items {
                    report.absorb(self.filter_value(item));
                }
            }
            Value::Object(map) => {
                for (key, item) in map.iter_mut() {
                    if is_secret_key(key)
                        && let Value::String(s) = item
                        && !s.is_empty()
                        && s != REDACTED
                    {
                        *s = REDACTED.to_string();
                        report.redactions += 1;
                        continue;
                    }
                    report.absorb(self.filter_value(item));
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
        report
    }
}

/// Whether a JSON key names a secret (`password`, `api-key`, `Token`…).
fn is_secret_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase().replace('-', "_");
    SECRET_KEYS.contains(&k.as_str())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(text: &str) -> (String, Report) {
        PrivacyFilter::new(&[]).unwrap().filter_text(text)
    }

    #[test]
    fn all_three_tag_forms() {
        let (t, _) = filter("a <private>x</private> b [private]c[/private]");
        assert_eq!(t, "a [PRIVATE] b [PRIVATE]");
        let (t, r) = filter(
            "a <private>x</private> b [PRIVATE]c[/private] d <!-- private -->y<!-- /private --> e",
        );
        assert_eq!(t, "a [PRIVATE] b [PRIVATE] d [PRIVATE] e");
        assert_eq!(r.private_spans, 3);
        let (t, _) = filter("<PRIVATE>Upper</Private> [Private]b[/PRIVATE]");
        assert_eq!(t, "[PRIVATE] [PRIVATE]");
        let (t, _) = filter("multi <private>line\nsecret\n</private> end");
        assert_eq!(t, "multi [PRIVATE] end");
    }

    #[test]
    fn code_blocks_keep_literal_tags() {
        let text =
            "see:\n```xml\n<private>example</private>\n```\nbut <private>this</private> goes";
        let (t, r) = filter(text);
        assert_eq!(
            t,
            "see:\n```xml\n<private>example</private>\n```\nbut [PRIVATE] goes"
        );
        assert_eq!(r.private_spans, 1);
    }

    #[test]
    fn nested_tags_are_absorbed_by_the_outer_span() {
        let (t, _) = filter("<private>outer <private>inner</private> still outer</private> after");
        assert_eq!(t, "[PRIVATE] after");
    }

    #[test]
    fn unclosed_tag_leaves_text_and_warns() {
        let (t, r) = filter("ok <private>closed</private> then <private>open forever");
        assert_eq!(t, "ok [PRIVATE] then <private>open forever");
        assert_eq!(r.warnings.len(), 1);
        assert!(!r.warnings[0].contains("open forever"));
    }

    #[test]
    fn broken_tags_are_not_tags() {
        // docs/DESIGN.md §3: only the exact tag form counts
        let (t, r) = filter("<private\n>x</private> <pri\nvate>y</private>");
        assert_eq!(r.private_spans, 0);
        assert!(t.contains('x') && t.contains('y'));
    }

    #[test]
    fn secrets_are_masked() {
        let cases = [
            ("password=hunter2", "[REDACTED]"),
            ("PASSWORD: 'hunter2' ok", "[REDACTED]' ok"),
            ("export API_KEY=abc123", "export [REDACTED]"),
            ("api-key: zzz", "[REDACTED]"),
            ("client secret=shh", "client [REDACTED]"),
            ("token = t0k3n", "[REDACTED]"),
            (
                "Authorization: Bearer abc.def-ghi",
                "Authorization: [REDACTED]",
            ),
            (
                "key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123",
                "key [REDACTED]",
            ),
            (
                "openai sk-proj-abcdefghijklmnopqrstuvwxyz",
                "openai [REDACTED]",
            ),
            ("aws AKIAIOSFODNN7EXAMPLE id", "aws [REDACTED] id"),
            (
                "gh ghp_abcdefghijklmnopqrstuvwxyz0123456789AB",
                "gh [REDACTED]",
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(filter(input).0, expected, "input {input:?}");
        }
        let block =
            "-----BEGIN RSA PRIVATE KEY-----\nMIIE\nabc\n-----END RSA PRIVATE KEY-----\nafter";
        assert_eq!(filter(block).0, "[REDACTED]\nafter");
        let open_block = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\nno end";
        assert_eq!(filter(open_block).0, "[REDACTED]");
    }

    #[test]
    fn private_then_secret_in_one_text() {
        let (t, r) =
            filter("use <private>sk-ant-api03-abcdefghijklmnop</private> and password=hunter2");
        assert_eq!(t, "use [PRIVATE] and [REDACTED]");
        assert_eq!((r.private_spans, r.redactions), (1, 1));
    }

    #[test]
    fn json_values_and_secret_keys() {
        let f = PrivacyFilter::new(&["ACME-[0-9]{4}".to_string()]).unwrap();
        let mut v = serde_json::json!({
            "command": "curl -H 'Authorization: Bearer zzz' x",
            "env": {"password": "hunter2", "user": "ann"},
            "list": ["ACME-1234", 3]
        });
        f.filter_value(&mut v);
        assert_eq!(v["env"]["password"], "[REDACTED]");
        assert_eq!(v["env"]["user"], "ann");
        assert_eq!(v["list"][0], "[REDACTED]");
        assert!(!v["command"].as_str().unwrap().contains("zzz"));
    }

    #[test]
    fn every_built_in_pattern_compiles() {
        let f = PrivacyFilter::new(&[]).unwrap();
        for rule in &f.secrets {
            assert!(rule.regex.get().is_some(), "{}", rule.regex.pattern);
        }
        for form in &f.forms {
            assert!(form.open.get().is_some() && form.close.get().is_some());
        }
    }

    #[test]
    fn bad_extra_pattern_is_named() {
        let err = PrivacyFilter::new(&["(".to_string()]).err().unwrap();
        assert!(err.to_string().contains("\"(\""), "{err}");
    }

    #[test]
    fn truncation_head_and_tail() {
        let text: String = (0..300).map(|i| format!("line {i}\n")).collect();
        let (t, cut) = truncate_output(&text, 10_000, 100);
        assert!(cut);
        assert!(t.starts_with("line 0\n") && t.contains("line 49\n...[TRUNCATED]...\n"));
        assert!(!t.contains("line 50\n") && t.contains("line 299"));
        let long = "é".repeat(20_000);
        let (t, cut) = truncate_output(&long, 10_000, 100);
        assert!(cut && t.len() <= 10_000 + TRUNCATION_MARKER.len());
        assert_eq!(
            truncate_output("short", 10_000, 100),
            ("short".to_string(), false)
        );
    }

    #[test]
    fn key_value_rules_need_an_assignment() {
        // Mentioning the word compiles and applies nothing…
        for text in [
            "fn get_token_by_id() {}",
            "the api key rotates",
            "Secrets manager",
        ] {
            let (t, r) = filter(text);
            assert_eq!((t.as_str(), r.redactions), (text, 0));
        }
        // …while every separator form the patterns accept is still caught,
        // Unicode whitespace included, and after an earlier redaction.
        for (text, want) in [
            ("TOKEN=abc123", "[REDACTED]"),
            ("token :  abc123", "[REDACTED]"),
            ("token\u{a0}= abc123", "[REDACTED]"),
            ("api_key: k1 and API-KEY=k2", "[REDACTED] and [REDACTED]"),
            ("apikey\t=\"k3\"", "[REDACTED]\""),
            ("password: p1 secret = s1", "[REDACTED] [REDACTED]"),
            (
                "get_token_by_id(); token: t1",
                "get_token_by_id(); [REDACTED]",
            ),
        ] {
            assert_eq!(filter(text).0, want, "{text:?}");
        }
    }
}
