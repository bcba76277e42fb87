//! The keyword prefilter: one pass over a text finds every rule keyword in
//! it, so that only the rules whose keywords appear run (and have their
//! expressions compiled), and the assignment scanner looks only where a
//! secret-ish key may be.
//!
//! It is an Aho-Corasick automaton over the keywords of every rule, made a
//! full DFA: one table lookup per byte of text, whatever the number of
//! keywords, so a text's cost stays flat as rules are added. The
//! automaton of the built-in rules is built by the compiler (const
//! evaluation), so no process pays to build it: a hook that filters one
//! payload and exits starts with it ready. (An automaton built at run time
//! by the `aho-corasick` crate cost a hook 3.9 M instructions; the anchor
//! bitmap that replaced it then was cheap to build, but its cost grew with
//! the number of keywords, 5× from 10 rules to 299.)
//!
//! The automaton matches ignoring ASCII case and with `_`, `-` and `.`
//! alike; each match is then checked against its keyword as written: an
//! upper-case keyword must match exactly, and only a key's keyword
//! (`new_relic`, which a properties file writes `new.relic`) may be spelt
//! with another separator.

use super::rules::{BUILTIN, BUILTIN_COUNT, Detect, Rule};

/// One byte's class: its lower case, with the three separators one class;
/// bytes no built-in keyword holds share class 0.
const fn class_byte(b: u8) -> u8 {
    match b {
        b'-' | b'.' => b'_',
        b => b.to_ascii_lowercase(),
    }
}

/// The part of a keyword the text is searched for: `a+b` needs both in
/// the key, and the text is searched for `a`.
const fn searched(keyword: &'static str) -> &'static [u8] {
    let b = keyword.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'+' {
            return b.split_at(i).0;
        }
        i += 1;
    }
    b
}

/// Walks every keyword of `rules` the automaton holds (two bytes or
/// more): the rule's index and the keyword.
struct Keywords<'r> {
    rules: &'r [&'static Rule],
    rule: usize,
    keyword: usize,
}

impl<'r> Keywords<'r> {
    const fn of(rules: &'r [&'static Rule]) -> Self {
        Keywords {
            rules,
            rule: 0,
            keyword: 0,
        }
    }

    const fn next(&mut self) -> Option<(usize, &'static [u8])> {
        while self.rule < self.rules.len() {
            let keywords = self.rules[self.rule].keywords;
            if self.keyword < keywords.len() {
                let k = searched(keywords[self.keyword]);
                self.keyword += 1;
                if k.len() >= 2 {
                    return Some((self.rule, k));
                }
            } else {
                (self.rule, self.keyword) = (self.rule + 1, 0);
            }
        }
        None
    }
}

/// The byte classes of the built-in keywords: (class of every byte, how
/// many classes).
const CLASSES_OF_BUILTIN: ([u8; 256], usize) = {
    let mut seen = [false; 256];
    let mut words = Keywords::of(&BUILTIN);
    while let Some((_, k)) = words.next() {
        let mut i = 0;
        while i < k.len() {
            seen[class_byte(k[i]) as usize] = true;
            i += 1;
        }
    }
    let mut id = [0u8; 256];
    let mut n = 1;
    let mut b = 0;
    while b < 256 {
        if seen[b] {
            id[b] = n as u8;
            n += 1;
        }
        b += 1;
    }
    let mut class = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        class[b] = id[class_byte(b as u8) as usize];
        b += 1;
    }
    (class, n)
};

/// Each byte's class (for const evaluation, which may not read a static).
const CLASS_TABLE: [u8; 256] = CLASSES_OF_BUILTIN.0;
/// Each byte's class.
static CLASS: [u8; 256] = CLASS_TABLE;
/// How many classes (class 0: bytes no keyword holds).
const CLASSES: usize = CLASSES_OF_BUILTIN.1;
/// A state's row in the transition table: the classes rounded up to a
/// power of two, so that finding a row is a shift, not a multiplication,
/// on the scan's chain of dependent loads.
const STRIDE: usize = CLASSES.next_power_of_two();

/// How many keywords the built-in rules have.
const KEYWORDS: usize = {
    let (mut words, mut n) = (Keywords::of(&BUILTIN), 0);
    while words.next().is_some() {
        n += 1;
    }
    n
};

/// How many bytes the built-in keywords have.
const KEYWORD_BYTES: usize = {
    let (mut words, mut n) = (Keywords::of(&BUILTIN), 0);
    while let Some((_, k)) = words.next() {
        n += k.len();
    }
    n
};

/// How many states the automaton of the built-in keywords has: the root
/// and one per distinct prefix (by class), counted by building their trie.
const STATES: usize = {
    let mut child = [0u16; (KEYWORD_BYTES + 1) * CLASSES];
    let mut n = 1;
    let mut words = Keywords::of(&BUILTIN);
    while let Some((_, k)) = words.next() {
        let mut s = 0;
        let mut i = 0;
        while i < k.len() {
            let at = s * CLASSES + CLASS_TABLE[k[i] as usize] as usize;
            if child[at] == 0 {
                child[at] = n as u16;
                n += 1;
            }
            s = child[at] as usize;
            i += 1;
        }
    }
    n
};

/// No state (the end of a chain of failure links).
const NONE: u16 = u16::MAX;

/// What a state reports: a keyword ending there and how to check it.
#[derive(Clone, Copy)]
struct Found {
    /// The keyword as written (the part searched for).
    keyword: &'static [u8],
    /// Its rule, by its index in the rules the automaton was built from.
    rule: u16,
    /// It has an upper-case letter: it must match exactly.
    exact: bool,
    /// A key's keyword (an assigned rule's): any separator matches.
    any_separator: bool,
}

const NOTHING: Found = Found {
    keyword: b"",
    rule: 0,
    exact: false,
    any_separator: false,
};

/// The automaton: a DFA whose states are the keywords' prefixes.
pub(super) struct Automaton {
    /// The next state, at `state * STRIDE + class`.
    next: [u16; STATES * STRIDE],
    /// Whether a keyword ends in the state or along its failure links.
    reports: [bool; STATES],
    /// The state's own keywords: `found[starts[s]..starts[s + 1]]`.
    starts: [u16; STATES + 1],
    found: [Found; KEYWORDS],
    /// The nearest state along the failure links with keywords of its own.
    more: [u16; STATES],
}

/// The keywords of the rules a filter was given do not fit an automaton
/// the size of the built-in one (only rules other than the built-in ones
/// can do that).
#[derive(Debug)]
pub(super) struct TooManyKeywords;

impl Automaton {
    /// The automaton of `rules`' keywords (a const fn: the built-in one is
    /// made by the compiler).
    const fn build(rules: &[&'static Rule]) -> Result<Automaton, TooManyKeywords> {
        let mut a = Automaton {
            next: [0; STATES * STRIDE],
            reports: [false; STATES],
            starts: [0; STATES + 1],
            found: [NOTHING; KEYWORDS],
            more: [NONE; STATES],
        };
        // the trie: a transition to 0 (the root) is no child yet
        let mut end = [0u16; KEYWORDS];
        let mut own = [0u16; STATES];
        let (mut states, mut n) = (1, 0);
        let mut words = Keywords::of(rules);
        while let Some((rule, k)) = words.next() {
            if n == KEYWORDS {
                return Err(TooManyKeywords);
            }
            let mut s = 0;
            let mut i = 0;
            while i < k.len() {
                let at = s * STRIDE + CLASS_TABLE[k[i] as usize] as usize;
                if a.next[at] == 0 {
                    if states == STATES {
                        return Err(TooManyKeywords);
                    }
                    a.next[at] = states as u16;
                    states += 1;
                }
                s = a.next[at] as usize;
                i += 1;
            }
            let mut exact = false;
            let mut i = 0;
            while i < k.len() {
                exact |= k[i].is_ascii_uppercase();
                i += 1;
            }
            a.found[n] = Found {
                keyword: k,
                rule: rule as u16,
                exact,
                any_separator: matches!(rules[rule].detect, Detect::Assigned { .. }),
            };
            end[n] = s as u16;
            own[s] += 1;
            n += 1;
        }
        // each state's own keywords, in order of state
        let mut s = 0;
        while s < STATES {
            a.starts[s + 1] = a.starts[s] + own[s];
            s += 1;
        }
        let mut sorted = [NOTHING; KEYWORDS];
        let mut filled = [0u16; STATES];
        let mut i = 0;
        while i < n {
            let s = end[i] as usize;
            sorted[(a.starts[s] + filled[s]) as usize] = a.found[i];
            filled[s] += 1;
            i += 1;
        }
        a.found = sorted;
        // failure links, breadth first: a missing transition takes the
        // failure state's, whose row is complete (it is shallower)
        let mut fail = [0u16; STATES];
        let mut queue = [0u16; STATES];
        let (mut head, mut tail) = (0, 0);
        let mut c = 0;
        while c < CLASSES {
            let t = a.next[c];
            if t != 0 {
                queue[tail] = t;
                tail += 1;
            }
            c += 1;
        }
        while head < tail {
            let s = queue[head] as usize;
            head += 1;
            let f = fail[s] as usize;
            a.more[s] = if own[f] > 0 { f as u16 } else { a.more[f] };
            a.reports[s] = own[s] > 0 || a.more[s] != NONE;
            let mut c = 0;
            while c < CLASSES {
                let t = a.next[s * STRIDE + c];
                let via = a.next[f * STRIDE + c];
                if t != 0 {
                    fail[t as usize] = via;
                    queue[tail] = t;
                    tail += 1;
                } else {
                    a.next[s * STRIDE + c] = via;
                }
                c += 1;
            }
        }
        Ok(a)
    }

    /// The keywords ending in state `s`, its own and along its failure
    /// links.
    fn ending_in(&self, mut s: usize) -> impl Iterator<Item = &Found> {
        std::iter::from_fn(move || {
            if s == usize::from(NONE) {
                return None;
            }
            let own = &self.found[usize::from(self.starts[s])..usize::from(self.starts[s + 1])];
            s = usize::from(self.more[s]);
            Some(own)
        })
        .flatten()
    }
}

/// The automaton of the built-in rules' keywords, made at compile time.
static BUILTIN_AUTOMATON: Automaton = match Automaton::build(&BUILTIN) {
    Ok(a) => a,
    Err(_) => panic!("the built-in keywords fit the automaton sized for them"),
};

impl Found {
    /// Whether `text` (the bytes it matched, ignoring case and
    /// separators) is this keyword as it must be spelt.
    fn spelt(&self, text: &[u8]) -> bool {
        text.iter().zip(self.keyword).all(|(&t, &k)| match k {
            b'_' | b'-' | b'.' => t == k || self.any_separator,
            _ if self.exact => t == k,
            _ => t.eq_ignore_ascii_case(&k),
        })
    }
}

/// The shortest run of token characters a keyword that is part of a token
/// must lie in: every such format is longer.
pub(super) const MIN_RUN: usize = 16;

/// Bytes of a token, for [`MIN_RUN`].
fn in_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"_+=-/".contains(&b)
}

/// Whether the keyword at `b[start..end]` lies in a run of token
/// characters that could hold a token: long enough, and random-looking (a
/// digit, `+` or `=`; both cases without a slash; or one case without a
/// slash or a word separator), which words, paths and identifiers rarely
/// are (`pat` in `src/path/to` is not). It looks 64 characters each way:
/// base64 holds a slash one time in 64 and no digit, `+` or `=` for 32
/// characters one time in 400, so a reach of 32 let a 1Password token
/// through now and then (found by the property test).
fn could_be_token(b: &[u8], start: usize, end: usize) -> bool {
    const REACH: usize = 64;
    let (mut upper, mut lower, mut slash, mut joined, mut random) = (0, 0, false, false, false);
    let mut count = |c: u8| {
        upper += usize::from(c.is_ascii_uppercase());
        lower += usize::from(c.is_ascii_lowercase());
        slash |= c == b'/';
        joined |= c == b'_' || c == b'-';
        random |= c.is_ascii_digit() || c == b'+' || c == b'=';
    };
    b[start..end].iter().for_each(|&c| count(c));
    let mut s = start;
    while s > 0 && start - s < REACH && in_token(b[s - 1]) {
        s -= 1;
        count(b[s]);
    }
    let mut e = end;
    while e < b.len() && e - end < REACH && in_token(b[e]) {
        count(b[e]);
        e += 1;
    }
    let one_case = upper == 0 || lower == 0;
    e - s >= MIN_RUN
        && (random
            || (upper >= 3 && lower >= 3 && !slash)
            // `AKIAQRBFIPSLYEQDQPQQ`: base32 without a digit, which no
            // word nor constant name (`MAX_RETRIES`) is
            || (one_case && !slash && !joined && upper + lower >= MIN_RUN))
}

/// What the prefilter found in a text.
pub(super) struct Hits {
    /// For each rule, whether one of its keywords is in the text.
    pub rules: Vec<bool>,
    /// Where keywords of assignment rules start, with their rule
    /// (ascending, deduplicated).
    pub assignments: Vec<(usize, usize)>,
    /// Where keywords of token rules are, with their rule: (rule, start,
    /// end), ascending.
    pub tokens: Vec<(usize, usize, usize)>,
}

/// The matcher over every rule's keywords.
pub(super) struct Prefilter {
    automaton: Automata,
    /// Whether a rule reads assignments (assigned and generic rules).
    assigns: Vec<bool>,
    /// Whether a rule's keyword is part of its token, which must then be
    /// long enough (`pat` in `path` does not run the Airtable rule).
    gated: Vec<bool>,
    /// Whether a rule is a token rule (its expression runs around its
    /// keywords).
    token: Vec<bool>,
}

/// The automaton of other rules than the built-in ones, built at run time.
/// Kept out of line: building it takes its arrays' size of stack (720 KB),
/// and a caller that inlined it reserved (and touched) that stack in every
/// process, 175 page faults a hook, whether it built one or not.
#[inline(never)]
fn own_automaton(rules: &[&'static Rule]) -> Result<Box<Automaton>, TooManyKeywords> {
    Ok(Box::new(Automaton::build(rules)?))
}

/// The built-in automaton, or one of other rules (the bench's subsets).
enum Automata {
    Builtin,
    Own(Box<Automaton>),
}

impl Prefilter {
    pub(super) fn new(rules: &[&'static Rule]) -> Result<Prefilter, TooManyKeywords> {
        // the built-in rules, then only rules without keywords (personal
        // data): the automaton made at compile time serves. (By id: a
        // const's rules are not one address in every use, and building the
        // automaton again cost each hook 175 page faults.)
        let builtin = rules.len() >= BUILTIN_COUNT
            && rules.iter().zip(BUILTIN).all(|(a, b)| a.id == b.id)
            && rules[BUILTIN_COUNT..].iter().all(|r| r.keywords.is_empty());
        let automaton = if builtin {
            Automata::Builtin
        } else {
            Automata::Own(own_automaton(rules)?)
        };
        Ok(Prefilter {
            automaton,
            assigns: rules
                .iter()
                .map(|r| matches!(r.detect, Detect::Assigned { .. } | Detect::Generic(_)))
                .collect(),
            gated: rules
                .iter()
                .map(|r| matches!(r.detect, Detect::Token { context: false, .. }))
                .collect(),
            token: rules
                .iter()
                .map(|r| matches!(r.detect, Detect::Token { .. }))
                .collect(),
        })
    }

    fn automaton(&self) -> &Automaton {
        match &self.automaton {
            Automata::Builtin => &BUILTIN_AUTOMATON,
            Automata::Own(a) => a,
        }
    }

    /// Calls `found` with the rule, start and end of every keyword in `b`,
    /// spelt as it must be.
    #[inline(always)]
    fn each_keyword(&self, b: &[u8], mut found: impl FnMut(usize, usize, usize)) {
        let a = self.automaton();
        let mut s = 0;
        for (i, &byte) in b.iter().enumerate() {
            s = usize::from(a.next[s * STRIDE + usize::from(CLASS[usize::from(byte)])]);
            if !a.reports[s] {
                continue;
            }
            let end = i + 1;
            for keyword in a.ending_in(s) {
                let start = end - keyword.keyword.len();
                if keyword.spelt(&b[start..end]) {
                    found(usize::from(keyword.rule), start, end);
                }
            }
        }
    }

    /// The keywords of self-naming tokens (`ghp_`, `xoxb-`) in `text`, as
    /// (rule, start, end), however short the run they are in: a token cut
    /// short at a text's end ([`super::PrivacyFilter`]) is too short for
    /// the run [`Prefilter::scan`] asks of one.
    pub(super) fn token_prefixes(&self, text: &str) -> Vec<(usize, usize, usize)> {
        let mut out = Vec::new();
        self.each_keyword(text.as_bytes(), |rule, start, end| {
            if self.gated[rule] {
                out.push((rule, start, end));
            }
        });
        out
    }

    /// Whether rule `i`'s keyword is part of its token (a self-naming
    /// token: `ghp_`, `xoxb-`).
    pub(super) fn names_its_token(&self, i: usize) -> bool {
        self.gated[i]
    }

    /// The rules whose keywords `text` holds, and where assignment
    /// keywords are.
    pub(super) fn scan(&self, text: &str) -> Hits {
        let mut hits = Hits {
            rules: vec![false; self.assigns.len()],
            assignments: Vec::new(),
            tokens: Vec::new(),
        };
        let b = text.as_bytes();
        self.each_keyword(b, |rule, start, end| {
            if self.gated[rule] && !could_be_token(b, start, end) {
                return;
            }
            hits.rules[rule] = true;
            if self.assigns[rule] {
                hits.assignments.push((start, rule));
            }
            if self.token[rule] {
                hits.tokens.push((rule, start, end));
            }
        });
        hits.assignments.sort_unstable();
        hits.assignments.dedup();
        hits.tokens.sort_unstable();
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::privacy::rules;

    #[test]
    fn finds_every_keyword_anywhere_in_any_case() {
        let all = rules::builtin();
        let p = Prefilter::new(&all).unwrap();
        assert!(matches!(p.automaton, Automata::Builtin));
        for (i, rule) in all.iter().enumerate() {
            for keyword in rule.keywords {
                let first = keyword.split('+').next().unwrap_or(keyword);
                // a token's keyword needs a token around it
                let pad = if p.gated[i] {
                    "X9".repeat(MIN_RUN)
                } else {
                    String::new()
                };
                let texts = if first.bytes().any(|b| b.is_ascii_uppercase()) {
                    vec![format!("..{first}{pad}"), format!("{first}{pad}..")]
                } else {
                    vec![
                        format!("..{first}{pad}"),
                        format!("{}{pad}..", first.to_ascii_uppercase()),
                        format!("x{first}{pad}x"),
                    ]
                };
                for text in texts {
                    let hits = p.scan(&text);
                    assert!(hits.rules[i], "{} not found in {text:?}", rule.id);
                }
            }
        }
        // an upper-case keyword must match exactly
        let sk = all.iter().position(|r| r.id == "twilio-api-key").unwrap();
        assert!(!p.scan("task sk1").rules[sk]);
        // nor does a keyword in a word too short to be a token
        let airtable = all
            .iter()
            .position(|r| r.id == "airtable-personnal-access-token")
            .unwrap();
        assert!(!p.scan("see src/path/to/file.rs").rules[airtable]);
    }

    #[test]
    fn a_keys_keyword_takes_any_separator_and_a_tokens_only_its_own() {
        let all = rules::builtin();
        let p = Prefilter::new(&all).unwrap();
        let rule = |id: &str| all.iter().position(|r| r.id == id).unwrap();
        let keyed = all
            .iter()
            .position(|r| {
                matches!(r.detect, Detect::Assigned { .. })
                    && r.keywords.iter().any(|k| searched(k).contains(&b'_'))
            })
            .unwrap();
        let keyword = std::str::from_utf8(searched(all[keyed].keywords[0])).unwrap();
        for sep in ["-", ".", "_"] {
            let text = format!("{}=abc", keyword.replace('_', sep));
            let hits = p.scan(&text);
            assert!(hits.rules[keyed], "{} not found in {text:?}", all[keyed].id);
            assert!(hits.assignments.contains(&(0, keyed)), "{text:?}");
        }
        let ghp = rule("github-pat");
        let token = format!("ghp_{}", "aB3".repeat(12));
        assert!(p.scan(&token).rules[ghp]);
        assert!(!p.scan(&token.replace('_', "-")).rules[ghp]);
    }

    #[test]
    fn overlapping_and_nested_keywords_are_all_found() {
        let all = rules::builtin();
        let p = Prefilter::new(&all).unwrap();
        // `secret` inside `client_secret`, `token` inside `access_token`
        let hits = p.scan("x = {client_secret: 1, refresh_access_token: 2}");
        let generic = |id: &str| hits.rules[all.iter().position(|r| r.id == id).unwrap()];
        assert!(generic("generic-secret") && generic("generic-token"));
    }

    #[test]
    fn a_subset_of_the_rules_gets_an_automaton_of_its_own() {
        let all = rules::builtin();
        let some: Vec<_> = all.iter().copied().step_by(7).collect();
        let own = Prefilter::new(&some).unwrap();
        assert!(matches!(own.automaton, Automata::Own(_)));
        let full = Prefilter::new(&all).unwrap();
        let text =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/privacy/tests.rs"))
                .unwrap();
        let (a, b) = (own.scan(&text), full.scan(&text));
        for (i, r) in some.iter().enumerate() {
            let j = all.iter().position(|x| x.id == r.id).unwrap();
            assert_eq!(a.rules[i], b.rules[j], "{}", r.id);
        }
    }
}
