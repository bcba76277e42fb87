//! The keyword prefilter: one Aho-Corasick pass over a text finds every
//! rule keyword in it, so that only the rules whose keywords appear are
//! run (and their expressions compiled), and the assignment scanner looks
//! only where a secret-ish key may be. Its cost grows with the text, not
//! with the number of rules.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};

use super::rules::{Detect, Rule};

/// What one keyword triggers: a rule, and for a keyword written with an
/// upper-case letter, the exact bytes it must match.
#[derive(Clone, Copy)]
struct Trigger {
    rule: usize,
    exact: Option<&'static [u8]>,
}

/// The automaton over every rule's keywords.
pub(super) struct Prefilter {
    automaton: Option<AhoCorasick>,
    triggers: Vec<Vec<Trigger>>,
    /// Whether a rule reads assignments (assigned and generic rules).
    assigns: Vec<bool>,
}

/// What the prefilter found in a text.
pub(super) struct Hits {
    /// For each rule, whether one of its keywords is in the text.
    pub rules: Vec<bool>,
    /// Where keywords of assignment rules start (ascending, deduplicated).
    pub assignments: Vec<usize>,
}

impl Prefilter {
    pub(super) fn new(rules: &[&'static Rule]) -> Prefilter {
        let mut keywords: Vec<String> = Vec::new();
        let mut triggers: Vec<Vec<Trigger>> = Vec::new();
        for (i, rule) in rules.iter().enumerate() {
            for keyword in rule.keywords {
                // `a+b` needs both in the key: the automaton looks for `a`
                let first = keyword.split('+').next().unwrap_or(keyword);
                let lower = first.to_ascii_lowercase();
                let exact = (lower != first).then_some(first.as_bytes());
                let trigger = Trigger { rule: i, exact };
                match keywords.iter().position(|k| *k == lower) {
                    Some(at) => triggers[at].push(trigger),
                    None => {
                        keywords.push(lower);
                        triggers.push(vec![trigger]);
                    }
                }
            }
        }
        // The contiguous NFA builds in a fraction of a DFA's time, which a
        // hook pays on every run.
        let automaton = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .kind(Some(AhoCorasickKind::ContiguousNFA))
            .build(&keywords)
            .ok();
        let assigns = rules
            .iter()
            .map(|r| matches!(r.detect, Detect::Assigned { .. } | Detect::Generic(_)))
            .collect();
        Prefilter {
            automaton,
            triggers,
            assigns,
        }
    }

    /// The rules whose keywords `text` holds, and where assignment
    /// keywords are.
    pub(super) fn scan(&self, text: &str) -> Hits {
        let mut hits = Hits {
            rules: vec![false; self.assigns.len()],
            assignments: Vec::new(),
        };
        let Some(automaton) = &self.automaton else {
            // (cannot happen: the keywords are few and short) every rule runs
            hits.rules.iter_mut().for_each(|r| *r = true);
            return hits;
        };
        let bytes = text.as_bytes();
        for m in automaton.find_overlapping_iter(bytes) {
            for t in &self.triggers[m.pattern().as_usize()] {
                if t.exact.is_some_and(|e| &bytes[m.start()..m.end()] != e) {
                    continue;
                }
                hits.rules[t.rule] = true;
                if self.assigns[t.rule] && hits.assignments.last() != Some(&m.start()) {
                    hits.assignments.push(m.start());
                }
            }
        }
        hits.assignments.sort_unstable();
        hits.assignments.dedup();
        hits
    }
}
