//! Strict matching of a title against known tasks (docs/DESIGN.md §5,
//! §4.1): an identity decision, so it confirms only when the best candidate
//! is both very close (score ≥ 0.92) and clearly ahead of the runner-up
//! (gap ≥ 0.03); between 0.75 and that, it only suggests; below, nothing.
//! Done and cancelled tasks are never candidates (the caller passes open
//! tasks only), and matching never creates anything.
//!
//! The score of a candidate is built from signals in [0, 1]:
//!
//! - lexical: on the titles as canonical keys normalise them, the better of
//!   the character similarity (`1 - edit distance / longer length`, for
//!   typos and small rewordings) and the word overlap (Dice coefficient,
//!   for reordered words);
//! - semantic: the cosine similarity of the titles' embeddings, when a
//!   [`Semantic`] scorer is given (the vector index, when installed).
//!
//! With both, they are weighted like the ranking's semantic and full-text
//! signals (0.4 : 0.25). Titles whose numbers differ (`Upgrade Postgres to
//! 15` and `… to 16`, two issue ids) are never confirmed as one task. The projection's fold uses the lexical signal only:
//! the entity tables must be a pure function of the log, and the vector
//! index may or may not exist when they are derived.

use std::collections::HashSet;

use memlog_format::key;
use serde::Serialize;

/// docs/DESIGN.md §5.
pub const CONFIRM_SCORE: f32 = 0.92;
/// Lead over the runner-up a confirmation needs.
pub const CONFIRM_GAP: f32 = 0.03;
/// Score from which a candidate is suggested.
pub const SUGGEST_SCORE: f32 = 0.75;
/// Weights of the semantic and lexical signals when both exist (the
/// ranking's semantic and full-text weights).
const SEMANTIC_WEIGHT: f32 = 0.4;
const LEXICAL_WEIGHT: f32 = 0.25;
/// How many candidates a suggestion lists.
pub const MAX_CANDIDATES: usize = 5;
/// Candidates scoring below this are not worth keeping with a condition.
pub const CANDIDATE_FLOOR: f32 = 0.3;

/// A semantic similarity between two texts, in [0, 1]; `None` when it
/// cannot tell (no model, no vector for one of them).
pub trait Semantic {
    /// The similarity of `a` and `b`.
    fn similarity(&self, a: &str, b: &str) -> Option<f32>;
}

/// A task that may be matched.
#[derive(Clone, Debug)]
pub struct Candidate<'a> {
    /// The task.
    pub entity_id: &'a str,
    /// Its title.
    pub title: &'a str,
}

/// A scored candidate.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scored {
    /// The task.
    pub entity_id: String,
    /// Its title.
    pub title: String,
    /// How close it is, in [0, 1].
    pub score: f32,
}

/// The decision.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "confidence", rename_all = "snake_case")]
pub enum Match {
    /// The same task, for sure.
    High {
        /// The task.
        best: Scored,
    },
    /// Probably one of these (best first); not to be acted on alone.
    Suggested {
        /// The candidates.
        candidates: Vec<Scored>,
    },
    /// Nothing close; `candidates` are the best below the suggestion
    /// threshold, for the record.
    None {
        /// The best candidates below the threshold.
        candidates: Vec<Scored>,
    },
}

impl Match {
    /// The candidates a condition keeps (docs/DESIGN.md §5): whatever was seen.
    pub fn candidates(&self) -> Vec<Scored> {
        match self {
            Match::High { best } => vec![best.clone()],
            Match::Suggested { candidates } | Match::None { candidates } => candidates.clone(),
        }
    }
}

/// Scores `title` against every candidate and decides.
pub fn match_title(
    title: &str,
    candidates: &[Candidate<'_>],
    semantic: Option<&dyn Semantic>,
) -> Match {
    let query = key::normalize(title);
    let query_words: HashSet<&str> = query.split(' ').filter(|w| !w.is_empty()).collect();
    let mut scored: Vec<Scored> = candidates
        .iter()
        .map(|c| {
            let norm = key::normalize(c.title);
            let lexical = lexical_similarity(&query, &query_words, &norm);
            let mut score = match semantic.and_then(|s| s.similarity(title, c.title)) {
                Some(sem) => {
                    (SEMANTIC_WEIGHT * sem + LEXICAL_WEIGHT * lexical)
                        / (SEMANTIC_WEIGHT + LEXICAL_WEIGHT)
                }
                None => lexical,
            };
            // Numbers name things (a version, an issue): titles whose
            // numbers differ are other tasks, however close their words.
            if numbers(&query) != numbers(&norm) {
                score = score.min(CONFIRM_SCORE - 0.01);
            }
            Scored {
                entity_id: c.entity_id.to_string(),
                title: c.title.to_string(),
                // three decimals: scores are shown and stored in events
                score: (score * 1000.0).round() / 1000.0,
            }
        })
        .collect();
    scored.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.entity_id.cmp(&b.entity_id))
    });
    scored.truncate(MAX_CANDIDATES);
    decide(scored)
}

/// The runs of digits in a normalised title, in order.
fn numbers(title: &str) -> Vec<&str> {
    title
        .split(|c: char| !c.is_ascii_digit())
        .filter(|run| !run.is_empty())
        .collect()
}

/// The reference `match_with_confidence` (docs/DESIGN.md §5) on candidates sorted best first.
pub fn decide(scored: Vec<Scored>) -> Match {
    let Some(top) = scored.first() else {
        return Match::None { candidates: scored };
    };
    if top.score < SUGGEST_SCORE {
        return Match::None { candidates: scored };
    }
    let runner_up = scored.get(1).map_or(0.0, |s| s.score);
    // f32 noise must not turn a gap of exactly 0.03 into a refusal
    if top.score >= CONFIRM_SCORE && top.score - runner_up >= CONFIRM_GAP - 1e-6 {
        return Match::High { best: top.clone() };
    }
    Match::Suggested {
        candidates: scored
            .into_iter()
            .filter(|s| s.score >= SUGGEST_SCORE)
            .collect(),
    }
}

/// The lexical signal between two normalised titles.
fn lexical_similarity(a: &str, a_words: &HashSet<&str>, b: &str) -> f32 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    if a == b {
        return 1.0;
    }
    let b_words: HashSet<&str> = b.split(' ').filter(|w| !w.is_empty()).collect();
    let shared = a_words.intersection(&b_words).count();
    let dice = 2.0 * shared as f32 / (a_words.len() + b_words.len()).max(1) as f32;
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let longer = a.len().max(b.len());
    // The character similarity matters only where it beats the word overlap
    // and the floor below which no score is kept: the distance is needed
    // only up to the matching bound (most pairs stop early).
    let needed = dice.max(CANDIDATE_FLOOR);
    let bound = ((1.0 - needed) * longer as f32).floor() as usize;
    match levenshtein_within(&a, &b, bound) {
        Some(d) => (1.0 - d as f32 / longer as f32).max(dice),
        None => dice,
    }
}

/// The edit distance between `a` and `b` if it is at most `bound`, else
/// `None`: only the diagonal band of width `2 * bound + 1` is computed, and
/// the computation stops once a whole row exceeds the bound (Ukkonen).
pub fn levenshtein_within(a: &[char], b: &[char], bound: usize) -> Option<usize> {
    if a.len().abs_diff(b.len()) > bound {
        return None;
    }
    const FAR: usize = usize::MAX / 2;
    let mut prev: Vec<usize> = (0..=b.len())
        .map(|j| if j <= bound { j } else { FAR })
        .collect();
    let mut row = vec![FAR; b.len() + 1];
    for i in 1..=a.len() {
        let from = i.saturating_sub(bound).max(1);
        let to = (i + bound).min(b.len());
        row.iter_mut().for_each(|c| *c = FAR);
        row[0] = if i <= bound { i } else { FAR };
        let mut best = row[0];
        for j in from..=to {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let value = (prev[j - 1] + cost).min(prev[j] + 1).min(row[j - 1] + 1);
            row[j] = value;
            best = best.min(value);
        }
        if best > bound {
            return None;
        }
        std::mem::swap(&mut prev, &mut row);
    }
    Some(prev[b.len()]).filter(|d| *d <= bound)
}

/// Edit distance in characters.
pub fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let up = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != cb))
                .min(up + 1)
                .min(row[j] + 1);
            diagonal = up;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tasks<'a>(titles: &'a [(&'a str, &'a str)]) -> Vec<Candidate<'a>> {
        titles
            .iter()
            .map(|(id, title)| Candidate {
                entity_id: id,
                title,
            })
            .collect()
    }

    #[test]
    fn near_identical_titles_are_confirmed() {
        let known = [
            ("t1", "Implement vector search"),
            ("t2", "Write the release notes"),
        ];
        let m = match_title("Implement vectors search", &tasks(&known), None);
        assert!(
            matches!(&m, Match::High { best } if best.entity_id == "t1"),
            "{m:?}"
        );
    }

    #[test]
    fn close_but_different_titles_are_only_suggested() {
        let known = [("t1", "Fix the login bug")];
        let m = match_title("Fix login bug", &tasks(&known), None);
        assert!(
            matches!(&m, Match::Suggested { candidates } if candidates[0].entity_id == "t1"),
            "{m:?}"
        );
        // reordered words
        let known = [("t1", "write tests for the parser")];
        let m = match_title("write the parser tests for", &tasks(&known), None);
        assert!(
            matches!(m, Match::High { .. }),
            "same words, any order: {m:?}"
        );
    }

    #[test]
    fn titles_whose_numbers_differ_are_other_tasks() {
        let known = [
            ("t1", "Upgrade Postgres to 15"),
            ("t2", "Fix issue 1234 in the CSV parser"),
        ];
        for other in ["Upgrade Postgres to 16", "Fix issue 1299 in the CSV parser"] {
            let m = match_title(other, &tasks(&known), None);
            assert!(!matches!(m, Match::High { .. }), "{other}: {m:?}");
        }
        let m = match_title("upgrade postgres to 15", &tasks(&known), None);
        assert!(matches!(m, Match::High { .. }), "the same numbers: {m:?}");
    }

    #[test]
    fn a_close_runner_up_prevents_confirmation() {
        let known = [
            ("t1", "Deploy to staging server"),
            ("t2", "Deploy to staging servers"),
        ];
        let m = match_title("Deploy to staging serverz", &tasks(&known), None);
        assert!(matches!(m, Match::Suggested { .. }), "{m:?}");
    }

    #[test]
    fn unrelated_titles_match_nothing() {
        let known = [("t1", "Configure CI caching")];
        let m = match_title("Migrate the database", &tasks(&known), None);
        assert!(matches!(m, Match::None { .. }), "{m:?}");
        assert!(matches!(match_title("x", &[], None), Match::None { .. }));
    }

    #[test]
    fn thresholds_are_the_seeds() {
        let s = |id: &str, score| Scored {
            entity_id: id.into(),
            title: id.into(),
            score,
        };
        assert!(matches!(decide(vec![s("a", 0.92)]), Match::High { .. }));
        assert!(matches!(
            decide(vec![s("a", 0.95), s("b", 0.92)]),
            Match::High { .. }
        ));
        assert!(matches!(
            decide(vec![s("a", 0.95), s("b", 0.93)]),
            Match::Suggested { .. }
        ));
        assert!(matches!(
            decide(vec![s("a", 0.91)]),
            Match::Suggested { .. }
        ));
        assert!(matches!(
            decide(vec![s("a", 0.75)]),
            Match::Suggested { .. }
        ));
        assert!(matches!(decide(vec![s("a", 0.74)]), Match::None { .. }));
    }

    struct Fixed(f32);
    impl Semantic for Fixed {
        fn similarity(&self, _: &str, _: &str) -> Option<f32> {
            Some(self.0)
        }
    }

    #[test]
    fn a_semantic_signal_joins_the_lexical_one() {
        let known = [("t1", "Set up continuous integration")];
        let m = match_title(
            "Configure the CI pipeline",
            &tasks(&known),
            Some(&Fixed(1.0)),
        );
        // (0.4 * 1.0 + 0.25 * lexical) / 0.65: lifted, yet not confirmed
        let lexical_only = match_title("Configure the CI pipeline", &tasks(&known), None);
        assert!(m.candidates()[0].score > lexical_only.candidates()[0].score + 0.4);
        assert!(!matches!(m, Match::High { .. }), "{m:?}");
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("벡터", "벡타"), 1);
        let chars = |s: &str| s.chars().collect::<Vec<_>>();
        for (a, b) in [
            ("kitten", "sitting"),
            ("", "abc"),
            ("flaw", "lawn"),
            ("same", "same"),
            ("abcdef", "azcdxf"),
        ] {
            let full = levenshtein(a, b);
            for bound in 0..8 {
                let banded = levenshtein_within(&chars(a), &chars(b), bound);
                assert_eq!(banded, (full <= bound).then_some(full), "{a} {b} {bound}");
            }
        }
    }
}
