//! The keyword prefilter: one pass over a text finds every rule keyword in
//! it, so that only the rules whose keywords appear run (and have their
//! expressions compiled), and the assignment scanner looks only where a
//! secret-ish key may be. Its cost grows with the text, barely with the
//! number of rules.
//!
//! It is a multi-pattern matcher built for a process that filters one
//! payload and exits. Each keyword is anchored on its rarest pair of
//! bytes (`ok` in `token`, `p_` in `ghp_`, `:/` in `://`); the text's
//! case-folded byte pairs are looked up in one bitmap of 8 KB of anchors,
//! which rejects almost every position in a few instructions, and the rare
//! survivors are checked against the keywords anchored there. Building it
//! costs about as much as scanning a few kilobytes. (An Aho-Corasick
//! automaton of the same keywords, from the `aho-corasick` crate, cost a
//! hook 3.9 M instructions to build, about what the whole PostToolUse hook
//! cost before, and 45 instructions a byte to run.)

use std::borrow::Cow;

use super::rules::{Detect, Rule};

/// Bytes folded for matching: ASCII letters to lower case (other bytes
/// may collide, which only lets a position through to the exact check).
fn fold(b: u8) -> u8 {
    b | 0x20
}

fn pair(a: u8, b: u8) -> u16 {
    u16::from(fold(a)) << 8 | u16::from(fold(b))
}

/// How often a folded byte turns up in code and prose, roughly (per
/// thousand), to anchor each keyword where the text rarely matches.
const fn frequency(b: u8) -> u32 {
    match b {
        b' ' => 150,
        b'e' => 110,
        b't' => 90,
        b'a' => 80,
        b'o' | b'i' => 75,
        b'n' => 70,
        b's' | b'r' => 65,
        b'h' | b'l' => 45,
        b'd' => 40,
        b'c' | b'\n' | b'.' | b'/' => 35,
        b'u' | b'_' => 30,
        b'm' | b':' => 28,
        b'p' | b'(' | b')' | b'"' | b',' | b';' => 25,
        b'f' => 22,
        b'g' | b'w' | b'y' | b'{' | b'}' => 20,
        b'b' | b'=' | b'-' | b'&' => 15,
        b'0'..=b'9' | b'v' | b'<' | b'>' | b'\'' => 10,
        b'k' => 8,
        b'x' => 5,
        b'+' | b'$' | b'#' => 3,
        b'j' | b'q' | b'z' | b'~' => 2,
        _ => 5,
    }
}

/// Pairs common in code and prose, whatever their bytes' frequencies.
const COMMON: &[u8] = b"\n  \n, ->. //: ::=>acalanarasatbecacechcodeeaecedeielemeneresetexfngehahehiicidifilinioisitlalelilllymamendnengnsntofomonoroupeprrarerirosesisssttatethtitourusve";

/// [`COMMON`] as a set of pairs, made at compile time.
static COMMON_PAIRS: [u64; 1024] = {
    let mut bits = [0u64; 1024];
    let mut i = 0;
    while i + 1 < COMMON.len() {
        let p = (COMMON[i] as usize) << 8 | COMMON[i + 1] as usize;
        bits[p >> 6] |= 1 << (p & 63);
        i += 2;
    }
    bits
};

/// [`frequency`] of every byte, made at compile time.
static FREQUENCY: [u32; 256] = {
    let mut table = [0; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = frequency(b as u8);
        b += 1;
    }
    table
};

/// How often the folded pair `a b` turns up, roughly.
fn pair_frequency(a: u8, b: u8) -> u32 {
    let p = usize::from(a) << 8 | usize::from(b);
    if COMMON_PAIRS[p >> 6] & (1 << (p & 63)) != 0 {
        return 10_000;
    }
    FREQUENCY[usize::from(a)] * FREQUENCY[usize::from(b)]
}

/// A set of 65,536 bits.
struct Bits(Box<[u64; 1024]>);

impl Bits {
    fn new() -> Bits {
        Bits(Box::new([0; 1024]))
    }

    fn set(&mut self, i: u16) {
        self.0[usize::from(i >> 6)] |= 1 << (i & 63);
    }
}

/// One keyword: its bytes, whether they must match exactly (a keyword
/// written with an upper-case letter) or ignoring ASCII case (one written
/// in lower case), where its anchor pair is, and its rule.
struct Keyword {
    /// Borrowed from the rule unless it is another spelling of its key.
    bytes: Cow<'static, [u8]>,
    /// Its anchor pair, folded (what the keywords are sorted by).
    pair: u16,
    exact: bool,
    anchor: usize,
    rule: usize,
}

/// The matcher over every rule's keywords.
pub(super) struct Prefilter {
    /// The anchor pairs.
    anchors: Bits,
    /// Keywords sorted by anchor pair.
    keywords: Vec<Keyword>,
    /// Each anchor pair's run of `keywords`, by [`slot`]: (pair, start,
    /// end), open-addressed.
    runs: Box<[(u16, u16, u16); SLOTS]>,
    /// Whether a rule reads assignments (assigned and generic rules).
    assigns: Vec<bool>,
    /// Whether a rule's keyword is part of its token, which must then be
    /// long enough (`pat` in `path` does not run the Airtable rule).
    gated: Vec<bool>,
}

/// The first `i` from `from` where the folded pair ending at `i` is an
/// anchor, and that pair (`p`: the pair ending at `from - 1`). The hot
/// loop, kept small so that it runs in registers.
#[inline(never)]
fn next_anchor(anchors: &Bits, b: &[u8], from: usize, mut p: u16) -> Option<(usize, u16)> {
    let bits = &*anchors.0;
    let mut i = from;
    while i < b.len() {
        p = p << 8 | u16::from(fold(b[i]));
        if bits[usize::from(p >> 6)] & (1 << (p & 63)) != 0 {
            return Some((i, p));
        }
        i += 1;
    }
    None
}

/// Slots of the run table (a power of two, well above the anchors).
const SLOTS: usize = 1024;

/// The first slot an anchor pair is looked for in.
fn slot(p: u16) -> usize {
    (u32::from(p).wrapping_mul(0x9E37_79B1) >> 22) as usize
}

/// The shortest run of token characters a keyword that is part of a token
/// must lie in: every such format is longer.
const MIN_RUN: usize = 16;

/// Bytes of a token, for [`MIN_RUN`].
fn in_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"_+=-/".contains(&b)
}

/// Whether the keyword at `b[start..end]` lies in a run of token
/// characters that could hold a token: long enough, and random-looking (a
/// digit, `+` or `=`; both cases without a slash; or one case without a
/// slash or a word separator), which words, paths and identifiers rarely
/// are (`pat` in `src/path/to` is not).
fn could_be_token(b: &[u8], start: usize, end: usize) -> bool {
    const REACH: usize = 32;
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

/// A key's keyword as it is and, when it holds a separator
/// (`new_relic`, `dd-api`), with each of `_`, `-` and `.` in its place: a
/// properties file writes `new.relic.license.key`, an environment
/// `NEW_RELIC_…`.
fn spellings(keyword: &'static str) -> Vec<Cow<'static, [u8]>> {
    let mut out: Vec<Cow<'static, [u8]>> = vec![Cow::Borrowed(keyword.as_bytes())];
    if keyword.contains(SEPARATORS) {
        for sep in SEPARATORS {
            let variant: Cow<'static, [u8]> =
                Cow::Owned(keyword.replace(SEPARATORS, &sep.to_string()).into_bytes());
            if !out.contains(&variant) {
                out.push(variant);
            }
        }
    }
    out
}

/// Separators between the words of a key name, any of which a provider's
/// keyword may be spelt with.
const SEPARATORS: [char; 3] = ['_', '-', '.'];

/// What the prefilter found in a text.
pub(super) struct Hits {
    /// For each rule, whether one of its keywords is in the text.
    pub rules: Vec<bool>,
    /// Where keywords of assignment rules start (ascending, deduplicated).
    pub assignments: Vec<usize>,
}

impl Prefilter {
    pub(super) fn new(rules: &[&'static Rule]) -> Prefilter {
        let mut keywords: Vec<Keyword> = Vec::with_capacity(rules.len() * 4);
        for (i, rule) in rules.iter().enumerate() {
            let mut push = |bytes: Cow<'static, [u8]>| {
                let anchor = (0..bytes.len() - 1)
                    .min_by_key(|&o| pair_frequency(fold(bytes[o]), fold(bytes[o + 1])))
                    .unwrap_or(0);
                keywords.push(Keyword {
                    exact: bytes.iter().any(u8::is_ascii_uppercase),
                    pair: pair(bytes[anchor], bytes[anchor + 1]),
                    bytes,
                    anchor,
                    rule: i,
                });
            };
            for &keyword in rule.keywords {
                // `a+b` needs both in the key: the text is searched for `a`
                let first = keyword.split('+').next().unwrap_or(keyword);
                if first.len() < 2 {
                    continue;
                }
                // a key's words may be joined by any separator; a token's
                // prefix is spelt one way
                if matches!(rule.detect, Detect::Assigned { .. }) {
                    spellings(first).into_iter().for_each(&mut push);
                } else {
                    push(Cow::Borrowed(first.as_bytes()));
                }
            }
        }
        // by the pair computed once (every process that records builds
        // this: folding the pair again in each comparison was 13 % of a
        // `memlog record`'s instructions)
        let key = |k: &Keyword| k.pair;
        keywords.sort_unstable_by_key(key);
        let mut anchors = Bits::new();
        // (pair, start, end), end 0 for an empty slot
        let mut runs = Box::new([(0u16, 0u16, 0u16); SLOTS]);
        let mut i = 0;
        while i < keywords.len() {
            let p = key(&keywords[i]);
            let mut end = i;
            while end < keywords.len() && key(&keywords[end]) == p {
                end += 1;
            }
            anchors.set(p);
            let mut at = slot(p);
            while runs[at].2 != 0 {
                at = (at + 1) % SLOTS;
            }
            runs[at] = (p, i as u16, end as u16);
            i = end;
        }
        let assigns = rules
            .iter()
            .map(|r| matches!(r.detect, Detect::Assigned { .. } | Detect::Generic(_)))
            .collect();
        let gated = rules
            .iter()
            .map(|r| matches!(r.detect, Detect::Token { context: false, .. }))
            .collect();
        Prefilter {
            anchors,
            keywords,
            runs,
            assigns,
            gated,
        }
    }

    /// The keywords anchored on the folded pair `p`.
    fn run_of(&self, p: u16) -> &[Keyword] {
        let mut at = slot(p);
        loop {
            let (pair, start, end) = self.runs[at];
            if end == 0 {
                return &[];
            }
            if pair == p {
                return &self.keywords[usize::from(start)..usize::from(end)];
            }
            at = (at + 1) % SLOTS;
        }
    }

    /// The rules whose keywords `text` holds, and where assignment
    /// keywords are.
    pub(super) fn scan(&self, text: &str) -> Hits {
        let mut hits = Hits {
            rules: vec![false; self.assigns.len()],
            assignments: Vec::new(),
        };
        let b = text.as_bytes();
        let mut from = 1;
        let mut p: u16 = b.first().map_or(0, |&c| u16::from(fold(c)));
        while let Some((i, at)) = next_anchor(&self.anchors, b, from, p) {
            (from, p) = (i + 1, at);
            for k in self.run_of(p) {
                let Some(start) = (i - 1).checked_sub(k.anchor) else {
                    continue;
                };
                let Some(found) = b.get(start..start + k.bytes.len()) else {
                    continue;
                };
                let matches = if k.exact {
                    found == &*k.bytes
                } else {
                    found.eq_ignore_ascii_case(&k.bytes)
                };
                if !matches
                    || (self.gated[k.rule] && !could_be_token(b, start, start + k.bytes.len()))
                {
                    continue;
                }
                hits.rules[k.rule] = true;
                if self.assigns[k.rule] {
                    hits.assignments.push(start);
                }
            }
        }
        hits.assignments.sort_unstable();
        hits.assignments.dedup();
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
        let p = Prefilter::new(&all);
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
    fn anchors_on_rare_pairs() {
        let anchor = |k: &'static str| {
            let rule: &'static Rule = Box::leak(Box::new(Rule {
                id: "t",
                family: rules::Family::Generic,
                keywords: Box::leak(Box::new([k])),
                detect: Detect::Generic(rules::NameClass::Token),
                sample: "",
            }));
            let p = Prefilter::new(&[rule]);
            let k = &p.keywords[0];
            String::from_utf8_lossy(&k.bytes[k.anchor..k.anchor + 2]).into_owned()
        };
        assert_eq!(anchor("token"), "ok");
        assert_eq!(anchor("ghp_"), "p_");
        assert_eq!(anchor("://"), ":/");
    }
}
