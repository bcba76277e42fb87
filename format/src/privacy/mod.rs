//! Privacy at the door: what must never reach disk is removed from an event
//! before it is written anywhere, the journal included (docs/DESIGN.md §3).
//!
//! Three steps, in this order:
//!
//! 1. **Private spans** ([`spans`]): `<private>…</private>` and its two
//!    sibling forms become `[PRIVATE]`.
//! 2. **Secrets**, everywhere, code blocks included, become
//!    `[REDACTED:<rule>:<4 hex>]` ([`marker`]):
//!    - a keyword prefilter ([`prefilter`], an Aho-Corasick automaton the
//!      compiler builds: one table lookup per byte, however many rules)
//!      picks the [`rules`] whose keywords the text holds; only those run,
//!      and their expressions are compiled on first use;
//!    - provider rules find self-naming tokens (`ghp_…`, `xoxb-…`) and
//!      values assigned to keys naming a provider (`TWILIO_AUTH_TOKEN=…`);
//!    - generic rules find a key named like a secret ([`names`]) with a
//!      value shaped like one ([`value`]), in any syntax ([`assignment`]);
//!    - allow-lists ([`allow`]) keep placeholders, references, digests,
//!      public keys, UUIDs, paths and plain URLs;
//!    - in JSON, a string under a secret-named key is judged whole;
//!    - encoded text is read decoded ([`encoded`]: base64, hex, percent
//!      escapes, and JSON string escapes, whose findings are redacted in
//!      place);
//!    - a self-naming token cut short where a line or the text ends (an
//!      agent's own cut, without a mark) is redacted from its start.
//!    - with `privacy.pii: true`, personal data too: emails, phone
//!      numbers, IP addresses ([`rules::pii`]), and the configured names.
//! 3. **Truncation** of tool outputs ([`truncate_output`]), after
//!    filtering so that it can never cut a closing tag away; an output
//!    that is mostly not text becomes a note of its size
//!    ([`binary_output`]).

mod allow;
mod assignment;
mod encoded;
mod labels;
mod marker;
mod names;
mod prefilter;
pub mod rules;
pub mod sample;
mod spans;
mod truncate;
mod value;

#[cfg(test)]
mod tests;

use std::ops::Range;
use std::sync::OnceLock;

use regex_automata::meta::{self, Regex as RuleRegex};
use regex_automata::util::syntax;
use regex_automata::{Input, Span};
use serde_json::Value;

pub use rules::{Detect, Family, NameClass, Rule};
pub use truncate::{
    BINARY_PERCENT, TRUNCATION_MARKER, binary_output, cap_strings, truncate_output,
};

use crate::config::PrivacyConfig;
use crate::{Error, Result};
use marker::{MarkerKey, marker};
use prefilter::Prefilter;
use spans::{LazyRegex, PrivateSpans};

/// Replacement for a private span.
pub const PRIVATE_MARKER: &str = "[PRIVATE]";
/// How every redaction marker starts (`[REDACTED:<rule>:<hex>]`).
pub const REDACTED_PREFIX: &str = "[REDACTED";

/// How many encodings deep a secret is looked for (gitleaks' decoder
/// goes as deep: a token in base64 of base64).
const DECODE_DEPTH: u8 = 2;
/// Texts shorter than this hold no secret any rule finds.
const MIN_TEXT: usize = 8;
/// Configured names shorter than this are ignored (one letter would mask
/// every word it is).
const MIN_NAME: usize = 2;
/// Placeholder words inside a longer value (a key block, a JWT) are
/// chance, not placeholders.
const MAX_PLACEHOLDER: usize = 100;
/// A token this short may be a word a person typed (a URL's password):
/// the whole placeholder list applies to it.
const MAX_TYPED: usize = 32;

/// The rule of patterns configured in `.memlog.yaml`.
static CUSTOM: Rule = rules::token("custom-pattern", Family::Custom, &[], "", "").context();

/// The rule of the names configured in `.memlog.yaml` (`privacy.names`).
static NAME: Rule = rules::token("name", Family::Pii, &[], "", "").context();

/// What filtering did to a text.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Report {
    /// Private spans replaced.
    pub private_spans: usize,
    /// Secrets redacted.
    pub redactions: usize,
    /// The rule of each redaction, in order.
    pub rules: Vec<&'static str>,
    /// Human-readable warnings (unclosed tags). Never contain the text.
    pub warnings: Vec<String>,
}

impl Report {
    /// Adds another report's counts and warnings to this one.
    pub fn absorb(&mut self, other: Report) {
        self.private_spans += other.private_spans;
        self.redactions += other.redactions;
        self.rules.extend(other.rules);
        self.warnings.extend(other.warnings);
    }
}

/// How strongly a finding names its secret: when two overlap, the union is
/// redacted under the stronger one's rule.
const BY_TOKEN: u8 = 3;
const BY_PROVIDER_KEY: u8 = 2;
const BY_NAME: u8 = 1;

/// A secret found in a text.
#[derive(Clone, Copy, Debug)]
pub struct Finding {
    /// Its byte range.
    pub start: usize,
    /// End of its byte range.
    pub end: usize,
    /// The rule that found it.
    pub rule: &'static Rule,
    strength: u8,
    order: usize,
}

impl Finding {
    fn range(&self) -> Range<usize> {
        self.start..self.end
    }

    /// Whether `self` names a shared span better than `other`.
    fn beats(&self, other: &Finding) -> bool {
        (
            self.strength,
            self.end - self.start,
            std::cmp::Reverse(self.order),
        ) > (
            other.strength,
            other.end - other.start,
            std::cmp::Reverse(other.order),
        )
    }
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id)
    }
}

/// The privacy filter, compiled once per process (its expressions and
/// keyword automaton on first use).
pub struct PrivacyFilter {
    spans: PrivateSpans,
    rules: Vec<&'static Rule>,
    compiled: Vec<OnceLock<Option<RuleRegex>>>,
    /// The length of each rule's token (its sample's), on first use.
    token_lengths: Vec<OnceLock<usize>>,
    /// The rule of each generic name class, by [`NameClass::rank`].
    generic: [Option<usize>; NameClass::COUNT],
    prefilter: Prefilter,
    extra: Vec<LazyRegex>,
    /// The configured allow-list (`privacy.allow`).
    allow: Vec<LazyRegex>,
    /// Configured names, lower-cased (ASCII).
    names: Vec<String>,
    key: Option<MarkerKey>,
}

impl PrivacyFilter {
    /// The built-in rules plus `extra_patterns` (regular expressions from
    /// `.memlog.yaml`; an invalid one is an error naming it). Markers carry
    /// no hash until [`PrivacyFilter::keyed`].
    pub fn new(extra_patterns: &[String]) -> Result<Self> {
        Self::with_rules(rules::builtin(), extra_patterns)
    }

    /// The filter `.memlog.yaml` asks for: the built-in rules, its
    /// patterns, and with `pii: true` the personal-data rules; its names
    /// (`privacy.names`) are redacted whenever listed.
    pub fn configured(config: &PrivacyConfig) -> Result<Self> {
        let mut rules = rules::builtin();
        if config.pii {
            rules.extend(rules::pii());
        }
        let mut filter = Self::with_rules(rules, &config.patterns)?;
        filter.allow = compile_checked(&config.allow, "privacy allow pattern")?;
        filter.names = config
            .names
            .iter()
            .map(|n| n.trim().to_ascii_lowercase())
            .filter(|n| n.len() >= MIN_NAME)
            .collect();
        Ok(filter)
    }

    /// A filter of the given rules only (the bench measures cost against
    /// the number of rules).
    pub fn with_rules(rules: Vec<&'static Rule>, extra_patterns: &[String]) -> Result<Self> {
        let extra = compile_checked(extra_patterns, "privacy pattern")?;
        let mut generic = [None; NameClass::COUNT];
        for (i, rule) in rules.iter().enumerate() {
            if let Detect::Generic(class) = rule.detect {
                generic[class.rank()].get_or_insert(i);
            }
        }
        let prefilter = Prefilter::new(&rules).map_err(|_| {
            Error::invalid(
                "privacy rules",
                "their keywords do not fit the keyword automaton",
            )
        })?;
        Ok(PrivacyFilter {
            spans: PrivateSpans,
            compiled: rules.iter().map(|_| OnceLock::new()).collect(),
            token_lengths: rules.iter().map(|_| OnceLock::new()).collect(),
            rules,
            generic,
            prefilter,
            extra,
            allow: Vec::new(),
            names: Vec::new(),
            key: None,
        })
    }

    /// The same filter, its markers hashed with a key derived from `key`
    /// (the repository's, so that the same secret gives the same marker
    /// in one repository and an unrelated one elsewhere).
    pub fn keyed(mut self, key: &[u8]) -> Self {
        self.key = Some(MarkerKey::derive(key));
        self
    }

    /// The rules it runs.
    pub fn rules(&self) -> &[&'static Rule] {
        &self.rules
    }

    /// Rule `i`'s expression, compiled on first use (`None` for a rule
    /// without one, or one that does not compile, which tests rule out).
    fn regex(&self, i: usize) -> Option<&RuleRegex> {
        self.compiled[i]
            .get_or_init(|| {
                let pattern = match self.rules[i].detect {
                    Detect::Token { pattern, .. } => pattern.to_string(),
                    Detect::Assigned { value } => format!("(?i)^(?:{value})$"),
                    Detect::Generic(_) | Detect::Scan(_) => return None,
                };
                // An expression that runs near its keywords (or on one
                // value) gets the light engines only: the lazy DFA, which
                // builds its states as it searches, and the one-pass DFA
                // cost a one-shot hook more than the short searches they
                // speed up (callgrind: a hook's filter 15.9 M -> 13.6 M
                // instructions). One that runs on a whole text keeps them.
                let near = !searches_whole(self.rules[i]);
                RuleRegex::builder()
                    .syntax(syntax::Config::new().unicode(false).utf8(false))
                    .configure(
                        meta::Config::new()
                            .utf8_empty(false)
                            .hybrid(!near)
                            .onepass(!near),
                    )
                    .build(&pattern)
                    .ok()
            })
            .as_ref()
    }

    /// Filters one text: private spans, then secrets.
    pub fn filter_text(&self, text: &str) -> (String, Report) {
        let mut report = Report::default();
        let (current, spans, warning) = self.spans.remove(text);
        report.private_spans = spans;
        report.warnings.extend(warning);
        let found = self.find(&current);
        if found.is_empty() {
            return (current, report);
        }
        let mut out = String::with_capacity(current.len());
        let mut copied = 0;
        for f in &found {
            out.push_str(&current[copied..f.start]);
            out.push_str(&marker(
                f.rule.id,
                &current.as_bytes()[f.range()],
                self.key.as_ref(),
            ));
            copied = f.end;
            report.rules.push(f.rule.id);
        }
        out.push_str(&current[copied..]);
        report.redactions = found.len();
        (out, report)
    }

    /// The secrets in `text`, in order, overlapping ones merged.
    pub fn find(&self, text: &str) -> Vec<Finding> {
        self.find_in(text, DECODE_DEPTH)
    }

    /// [`PrivacyFilter::find`]; encoded runs are read decoded too
    /// ([`encoded`]), and what they decode to, `depth` times.
    fn find_in(&self, text: &str, depth: u8) -> Vec<Finding> {
        let mut found = Vec::new();
        if text.len() >= MIN_TEXT {
            let hits = self.prefilter.scan(text);
            for (i, rule) in self.rules.iter().enumerate() {
                // a rule without keywords (personal data) always runs
                if !hits.rules[i] && !rule.keywords.is_empty() {
                    continue;
                }
                match rule.detect {
                    Detect::Token { mixed, told, .. } => {
                        let near = near_keywords(text.as_bytes(), rule, i, &hits.tokens);
                        let strength = if told { BY_NAME } else { BY_TOKEN };
                        self.tokens(i, text, &near, (mixed, strength), &mut found);
                    }
                    Detect::Scan(scan) => {
                        let mut ranges = Vec::new();
                        scan(text, &mut ranges);
                        for r in ranges {
                            if !text.get(r.clone()).is_some_and(placeholder) {
                                push(&mut found, text, r, rule, BY_TOKEN, i);
                            }
                        }
                    }
                    Detect::Assigned { .. } | Detect::Generic(_) => {}
                }
            }
            let mut last_key: Option<Range<usize>> = None;
            for &(hit, _) in &hits.assignments {
                if last_key.as_ref().is_some_and(|k| k.contains(&hit)) {
                    continue;
                }
                let Some(a) = assignment::at(text, hit) else {
                    continue;
                };
                last_key = Some(a.key.clone());
                let (key, value) = (&text[a.key.clone()], &text[a.value.clone()]);
                let named = self.named_in(&hits.assignments, a.key.clone());
                if let Some((i, strength)) = self.judge(key, value, a.quoted, &named) {
                    push(&mut found, text, a.value, self.rules[i], strength, i);
                }
            }
            if !text.is_ascii() {
                self.labels_in_other_scripts(text, &mut found);
            }
            // an edge of the text as given, not of one decoded from it
            if depth == DECODE_DEPTH {
                self.cut_tokens(text, &hits.tokens, &mut found);
            }
        }
        for lazy in &self.extra {
            if let Some(re) = lazy.get() {
                for m in re.find_iter(text) {
                    push(&mut found, text, m.range(), &CUSTOM, BY_TOKEN, usize::MAX);
                }
            }
        }
        self.names_in(text, &mut found);
        if depth > 0 && text.len() >= MIN_TEXT {
            self.encoded_in(text, depth, &mut found);
            self.json_escaped_in(text, depth, &mut found);
        }
        if !self.allow.is_empty() {
            found.retain(|f| !self.allowed(&text[f.range()]));
        }
        merge(found)
    }

    /// Runs of `text` that decode (base64, hex, percent escapes) to a text
    /// holding a secret, read `depth` levels deep, redacted whole under the
    /// rule that found it.
    fn encoded_in(&self, text: &str, depth: u8, found: &mut Vec<Finding>) {
        let runs = encoded::base64_runs(text)
            .into_iter()
            .chain(encoded::hex_runs(text))
            .chain(encoded::percent_runs(text));
        for (range, decoded) in runs {
            if found
                .iter()
                .any(|f| f.start < range.end && range.start < f.end)
            {
                continue;
            }
            if let Some(inner) = self.find_in(&decoded, depth - 1).first() {
                push(found, text, range, inner.rule, BY_TOKEN, usize::MAX);
            }
        }
    }

    /// Secrets behind JSON string escapes (`postgres:\/\/app:pw@db`, `@`
    /// as `\u0040`: what many JSON writers print), found in the decoded
    /// lines and redacted in place, escapes and all (field test 12c).
    fn json_escaped_in(&self, text: &str, depth: u8, found: &mut Vec<Finding>) {
        let Some(unescaped) = encoded::json_unescaped(text) else {
            return;
        };
        for inner in self.find_in(&unescaped.text, depth - 1) {
            let range = unescaped.original(inner.range());
            push(found, text, range, inner.rule, inner.strength, inner.order);
        }
    }

    /// Passwords after a label in another script (`Пароль: …`,
    /// `비밀번호: …`), judged as a `password` key's value is.
    fn labels_in_other_scripts(&self, text: &str, found: &mut Vec<Finding>) {
        let Some(i) = self.generic[NameClass::Password.rank()] else {
            return;
        };
        for (range, quoted) in labels::values(text) {
            if value::is_secret(&text[range.clone()], NameClass::Password, quoted) {
                push(found, text, range, self.rules[i], BY_NAME, i);
            }
        }
    }

    /// Self-naming tokens cut short where a line or the text ends: an agent
    /// may hand its hook only the first characters of an output, and say
    /// nothing (Claude Code's Bash keeps 30 000 of stdout and of stderr;
    /// field test 12c found 24 of a GitHub token's 36 characters stored).
    /// A run of token characters that holds a rule's keyword, ends a line,
    /// is shorter than the rule's token and would be one had it gone on,
    /// is redacted. `tokens` are the keywords the prefilter found; the
    /// text's last run, when too short for the prefilter's gate, is
    /// searched again.
    fn cut_tokens(&self, text: &str, tokens: &[(usize, usize, usize)], found: &mut Vec<Finding>) {
        let b = text.as_bytes();
        let mut end = b.len();
        while end > 0 && b[end - 1].is_ascii_whitespace() {
            end -= 1;
        }
        // a longer run the prefilter has read: a cut token looks random
        let last = run_bounds(b, end, end).0;
        let short = (MIN_CUT_TAIL + 2..prefilter::MIN_RUN).contains(&(end - last))
            && b[last..end]
                .iter()
                .any(|c| c.is_ascii_digit() || c.is_ascii_uppercase());
        if tokens.is_empty() && !short {
            return;
        }
        let in_last_run = short
            .then(|| self.prefilter.token_prefixes(&text[last..end]))
            .into_iter()
            .flatten()
            .map(|(rule, start, stop)| (rule, last + start, last + stop));
        let named = tokens
            .iter()
            .copied()
            .filter(|&(rule, _, _)| self.prefilter.names_its_token(rule));
        for (i, keyword, keyword_end) in named.chain(in_last_run) {
            // a token starts at its keyword, or after a word glued to it
            // (`backup_ghp_…`); a keyword inside a run of letters and
            // digits (base64) is chance
            if keyword > 0 && b[keyword - 1].is_ascii_alphanumeric() {
                continue;
            }
            let (start, stop) = run_bounds(b, keyword, keyword_end);
            let ends_line = stop >= end || matches!(b[stop], b'\n' | b'\r');
            if !ends_line
                || stop - keyword_end < MIN_CUT_TAIL
                || found.iter().any(|f| f.start < stop && start < f.end)
            {
                continue;
            }
            let at = (keyword - start, keyword_end - start);
            if let Some(from) = self.would_be_token(i, &text[start..stop], at) {
                push(found, text, start + from..stop, self.rules[i], BY_TOKEN, i);
            }
        }
    }

    /// Where in `run` rule `i`'s token starts, when `run` (its keyword at
    /// `keyword`, ending at `after`) is shorter than the rule's token and
    /// matches its expression once filled out to that length with its own
    /// characters (they are of the token's alphabet: hex, base32…).
    fn would_be_token(
        &self,
        i: usize,
        run: &str,
        (keyword, after): (usize, usize),
    ) -> Option<usize> {
        let full = *self.token_lengths[i].get_or_init(|| {
            sample::expand(self.rules[i].sample, &mut sample::SplitMix::new(0))
                .secret
                .len()
        });
        let missing = full.checked_sub(run.len() - keyword).filter(|&n| n > 0)?;
        if placeholder(&run[keyword..]) {
            return None;
        }
        let own: Vec<u8> = run.as_bytes()[after..]
            .iter()
            .copied()
            .filter(u8::is_ascii_alphanumeric)
            .collect();
        if own.is_empty() {
            return None;
        }
        let mut whole = run.as_bytes().to_vec();
        whole.extend(own.iter().cycle().take(missing));
        let m = self.regex(i)?.find(whole.as_slice())?;
        (m.start() <= keyword && m.end() > run.len()).then_some(m.start())
    }

    /// Whether the configured allow-list keeps `secret`.
    fn allowed(&self, secret: &str) -> bool {
        self.allow
            .iter()
            .any(|a| a.get().is_some_and(|re| re.is_match(secret)))
    }

    /// The configured names in `text`, ignoring ASCII case, as whole
    /// words: not beside an ASCII letter, digit or `_` (`Ann` is not in
    /// `Annual`; a name in another script may carry a particle, `김민수가`).
    fn names_in(&self, text: &str, found: &mut Vec<Finding>) {
        if self.names.is_empty() {
            return;
        }
        let lower = text.to_ascii_lowercase();
        let b = text.as_bytes();
        let word = |i: usize| b[i].is_ascii_alphanumeric() || b[i] == b'_';
        for name in &self.names {
            for at in memchr::memmem::find_iter(lower.as_bytes(), name.as_bytes()) {
                let end = at + name.len();
                if (at == 0 || !word(at - 1)) && (end == b.len() || !word(end)) {
                    push(found, text, at..end, &NAME, BY_TOKEN, usize::MAX);
                }
            }
        }
    }

    /// The matches of token rule `i` within `near`.
    fn tokens(
        &self,
        i: usize,
        text: &str,
        near: &[Range<usize>],
        (mixed, strength): (bool, u8),
        found: &mut Vec<Finding>,
    ) {
        let Some(re) = self.regex(i) else { return };
        for window in near {
            // the window bounds the search; the text around it still
            // decides `\b` at its edges
            let input = Input::new(text.as_bytes()).range(window.clone());
            for caps in re.captures_iter(input) {
                let Some(m) = caps
                    .get_group(1)
                    .or_else(|| caps.get_match().map(|m| m.span()))
                else {
                    continue;
                };
                let Span { start, end } = m;
                let secret = &text.as_bytes()[start..end];
                let Ok(s) = std::str::from_utf8(secret) else {
                    // a match cutting a character: redact the characters
                    push(found, text, start..end, self.rules[i], strength, i);
                    continue;
                };
                if s.is_empty()
                    || placeholder(s)
                    || allow::is_public(s)
                    || (mixed && !value::is_mixed(s))
                {
                    continue;
                }
                push(found, text, start..end, self.rules[i], strength, i);
            }
        }
    }

    /// The provider rules (assigned rules) whose keywords the prefilter
    /// found within `key`, in rule order: the ones that may name its value.
    fn named_in(&self, assignments: &[(usize, usize)], key: Range<usize>) -> Vec<usize> {
        let from = assignments.partition_point(|&(at, _)| at < key.start);
        let mut named: Vec<usize> = assignments[from..]
            .iter()
            .take_while(|&&(at, _)| at < key.end)
            .map(|&(_, rule)| rule)
            .filter(|&rule| matches!(self.rules[rule].detect, Detect::Assigned { .. }))
            .collect();
        named.sort_unstable();
        named.dedup();
        named
    }

    /// Which rule, if any, finds a secret in `value` assigned to `key`:
    /// a provider rule among `contextual` whose keyword the key holds and
    /// whose shape the value has, else the generic rule of the key's name
    /// class when the value looks like a secret.
    fn judge(
        &self,
        key: &str,
        value: &str,
        quoted: bool,
        contextual: &[usize],
    ) -> Option<(usize, u8)> {
        for &i in contextual {
            let names_provider = self.rules[i]
                .keywords
                .iter()
                .any(|k| k.split('+').all(|part| starts_a_word(key, part)));
            if names_provider
                && self
                    .regex(i)
                    .is_some_and(|re| re.is_match(value.as_bytes()))
                && !allow::is_placeholder_token(value)
            {
                return Some((i, BY_PROVIDER_KEY));
            }
        }
        let class = names::classify(key)?;
        let i = self.generic[class.rank()]?;
        value::is_secret(value, class, quoted).then_some((i, BY_NAME))
    }

    /// Filters every string inside a JSON value in place. A string under a
    /// secret-named key is judged whole, as if assigned to it.
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
                // texts this filter changed, as they were
                let mut changed: Vec<(String, String)> = Vec::new();
                for (key, item) in map.iter_mut() {
                    if let Value::String(s) = item {
                        let filtered = match self.redact_assigned(key, s) {
                            Some((redacted, rule)) => {
                                report.redactions += 1;
                                report.rules.push(rule);
                                redacted
                            }
                            None => {
                                let (filtered, r) = self.filter_text(s);
                                report.absorb(r);
                                filtered
                            }
                        };
                        if filtered != *s {
                            changed.push((key.clone(), std::mem::replace(s, filtered)));
                        }
                        continue;
                    }
                    report.absorb(self.filter_value(item));
                }
                if !changed.is_empty() {
                    rederive_keys(map, &changed);
                }
                // a key is text too: a tool's free-form object (an MCP
                // vault's entries) can be keyed by the secret itself
                // (field test 9a)
                let renamed: Vec<(String, String)> = map
                    .keys()
                    .filter_map(|key| {
                        let (filtered, r) = self.filter_text(key);
                        report.absorb(r);
                        (filtered != *key).then(|| (key.clone(), filtered))
                    })
                    .collect();
                for (key, filtered) in renamed {
                    if let Some(item) = map.remove(&key) {
                        map.insert(filtered, item);
                    }
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
        report
    }

    /// `value` redacted whole (past an auth scheme) when it is a secret
    /// assigned to `key`, with the rule's id.
    fn redact_assigned(&self, key: &str, value: &str) -> Option<(String, &'static str)> {
        if key.len() < 2 || value.len() < 3 {
            return None;
        }
        let hits = self.prefilter.scan(key);
        let contextual = self.named_in(&hits.assignments, 0..key.len());
        let secret = assignment::without_scheme(value);
        let (i, _) = self.judge(key, &value[secret.clone()], true, &contextual)?;
        // a token rule names it better when one finds it
        let rule = self
            .find(value)
            .into_iter()
            .find(|f| f.strength == BY_TOKEN && f.start <= secret.start && f.end >= secret.end)
            .map_or(self.rules[i], |f| f.rule);
        let mut out = value[..secret.start].to_string();
        out.push_str(&marker(
            rule.id,
            &value.as_bytes()[secret.clone()],
            self.key.as_ref(),
        ));
        out.push_str(&value[secret.end..]);
        Some((out, rule.id))
    }
}

/// `patterns` ready to compile on first use, each checked now: an invalid
/// one is an error naming it (`what` says which list it is in).
fn compile_checked(patterns: &[String], what: &str) -> Result<Vec<LazyRegex>> {
    patterns
        .iter()
        .map(|p| {
            regex::Regex::new(p)
                .map_err(|e| Error::invalid(format!("{what} {p:?}"), e.to_string()))?;
            Ok(LazyRegex::new(p))
        })
        .collect()
}

/// How far before its keyword a token rule's match may start (a URL's
/// scheme and credentials before `sentry.io`), and how far after it a
/// match may end, on one line: the window runs from the start of the line
/// this far before the keyword to the end of the line this far after it.
const BEFORE_KEYWORD: usize = 256;
const AFTER_KEYWORD: usize = 1024;

/// Whether `rule`'s expression runs on the whole text rather than near its
/// keywords: a rule without keywords (personal data), or one that spans
/// lines (`(?s)`: a PEM block). An assigned rule's runs on one value.
fn searches_whole(rule: &Rule) -> bool {
    match rule.detect {
        Detect::Token { pattern, .. } => rule.keywords.is_empty() || pattern.starts_with("(?s)"),
        Detect::Assigned { .. } => false,
        Detect::Generic(_) | Detect::Scan(_) => true,
    }
}

/// Where token rule `i` runs: around each of its keywords the prefilter
/// found (`tokens`: (rule, start, end), ascending), merged. A rule without
/// keywords, or an expression that spans lines (`(?s)`: a PEM block), runs
/// on the whole text. Keeping the search near the keywords ties a text's
/// cost to its keywords, not to its length times the rules they call for.
fn near_keywords(
    text: &[u8],
    rule: &Rule,
    i: usize,
    tokens: &[(usize, usize, usize)],
) -> Vec<Range<usize>> {
    if searches_whole(rule) {
        return std::iter::once(0..text.len()).collect();
    }
    let from = tokens.partition_point(|&(r, _, _)| r < i);
    let mut out: Vec<Range<usize>> = Vec::new();
    for &(_, start, end) in tokens[from..].iter().take_while(|&&(r, _, _)| r == i) {
        let before = start.saturating_sub(BEFORE_KEYWORD);
        let start = memchr::memrchr(b'\n', &text[..before]).map_or(0, |p| p + 1);
        let after = (end + AFTER_KEYWORD).min(text.len());
        let end = memchr::memchr(b'\n', &text[after..]).map_or(text.len(), |p| after + p);
        match out.last_mut() {
            Some(last) if start <= last.end => last.end = last.end.max(end),
            _ => out.push(start..end),
        }
    }
    out
}

/// Whether `part` starts a word of `key` (`TWILIO_AUTH_TOKEN`,
/// `twilioAuthToken`, `X-Twilio-Key`; not `global` for `lob`), ignoring
/// ASCII case, with `_`, `-` and `.` alike (`new.relic.user.id` names
/// `new_relic` as `NEW_RELIC_USER_ID` does).
fn starts_a_word(key: &str, part: &str) -> bool {
    let fold = |c: u8| match c {
        b'-' | b'.' => b'_',
        c => c.to_ascii_lowercase(),
    };
    let (b, p) = (key.as_bytes(), part.as_bytes());
    if p.is_empty() || p.len() > b.len() {
        return false;
    }
    (0..=b.len() - p.len()).any(|i| {
        let starts = i == 0
            || !b[i - 1].is_ascii_alphanumeric()
            || (b[i].is_ascii_uppercase() && b[i - 1].is_ascii_lowercase());
        starts
            && b[i..i + p.len()]
                .iter()
                .zip(p)
                .all(|(&x, &y)| fold(x) == fold(y))
    })
}

/// Whether a secret a token or scan rule found is a placeholder instead:
/// one in the token's format (`ghp_xxxx…`), or, for a short one a person
/// may have typed (a URL's password), any placeholder word.
fn placeholder(s: &str) -> bool {
    allow::is_placeholder_token(s) || (s.len() <= MAX_TYPED && allow::is_placeholder(s))
}

/// A key beside a text it was made from (a task's `key` from its `title`,
/// a condition's `entity_id` from its `raw_text`: [`crate::key`]) is a
/// canonical form no rule recognises a secret in, so it follows its text:
/// made again from the text as filtered. `changed` holds the names of the
/// texts of `map` the filter changed, with what they were.
fn rederive_keys(map: &mut serde_json::Map<String, Value>, changed: &[(String, String)]) {
    let texts: Vec<(&str, &str, String)> = changed
        .iter()
        .filter_map(|(name, raw)| match map.get(name) {
            Some(Value::String(filtered)) => Some((name.as_str(), raw.as_str(), filtered.clone())),
            _ => None,
        })
        .collect();
    for (name, item) in map.iter_mut() {
        let Value::String(key) = item else {
            continue;
        };
        // the key as it was made (the filter may have changed part of it)
        let made = changed
            .iter()
            .find(|(n, _)| n == name)
            .map_or(key.as_str(), |(_, raw)| raw.as_str());
        let again = texts
            .iter()
            .filter(|(text, _, _)| text != name)
            .find_map(|(_, raw, filtered)| crate::key::rederive(made, raw, filtered));
        if let Some(again) = again {
            *key = again;
        }
    }
}

/// A message about to be printed or logged (an error echoing what a user
/// typed, a hook's log line) with every secret the built-in rules find
/// redacted. Its markers carry no hash: a message is not the log.
pub fn redact_message(text: &str) -> String {
    match PrivacyFilter::new(&[]) {
        Ok(f) => f.filter_text(text).0,
        Err(_) => text.to_string(),
    }
}

/// Fewest characters after its keyword a token cut short must keep to be
/// redacted: fewer say nothing of it.
const MIN_CUT_TAIL: usize = 6;

/// The run of token characters (letters, digits, `_ + = - /`) around
/// `start..end`: up to 64 bytes before it and 1 024 after.
fn run_bounds(b: &[u8], start: usize, end: usize) -> (usize, usize) {
    let token = |c: u8| c.is_ascii_alphanumeric() || b"_+=-/".contains(&c);
    let mut s = start;
    while s > 0 && start - s < 64 && token(b[s - 1]) {
        s -= 1;
    }
    let mut e = end;
    while e < b.len() && e - end < 1024 && token(b[e]) {
        e += 1;
    }
    (s, e)
}

/// Records a finding over `range`, widened to whole characters.
fn push(
    found: &mut Vec<Finding>,
    text: &str,
    range: Range<usize>,
    rule: &'static Rule,
    strength: u8,
    order: usize,
) {
    let mut start = range.start.min(text.len());
    let mut end = range.end.min(text.len());
    while start > 0 && !text.is_char_boundary(start) {
        start -= 1;
    }
    while end < text.len() && !text.is_char_boundary(end) {
        end += 1;
    }
    if end > start {
        found.push(Finding {
            start,
            end,
            rule,
            strength,
            order,
        });
    }
}

/// Sorts findings and merges overlapping ones: their union, under the rule
/// that names it best.
fn merge(mut found: Vec<Finding>) -> Vec<Finding> {
    found.sort_by_key(|f| (f.start, std::cmp::Reverse(f.end)));
    let mut merged: Vec<Finding> = Vec::with_capacity(found.len());
    for f in found {
        match merged.last_mut() {
            Some(last) if f.start < last.end => {
                if f.beats(last) {
                    last.rule = f.rule;
                    last.strength = f.strength;
                    last.order = f.order;
                }
                last.end = last.end.max(f.end);
            }
            _ => merged.push(f),
        }
    }
    merged
}
