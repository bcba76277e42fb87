//! The evidence aligner (docs/DESIGN.md §6, principle 4: "the LLM gives only a
//! quote; the pipeline computes the span"). A quote is looked up in the
//! text of the event it is said to come from: exactly first, else as the
//! window of the text with the smallest edit distance to it, accepted when
//! its similarity `1 - distance / max(quote length, window length)` is at
//! least the threshold (0.85 by default).
//!
//! Offsets count Unicode scalar values (characters), not bytes, so a span
//! means the same thing to any reader of the text (Korean included).
//!
//! The fuzzy search is the classic approximate substring match (Sellers):
//! one dynamic-programming pass over the text finds, for every end
//! position, the cheapest window ending there — every window of every
//! length at once, in O(text × quote) time instead of trying windows one by
//! one.

use serde::Serialize;

/// The fuzzy threshold (docs/DESIGN.md §6).
pub const DEFAULT_THRESHOLD: f32 = 0.85;

/// Quotes longer than this (characters) are not searched fuzzily: the cost
/// grows with text × quote, and an LLM quoting that much is paraphrasing.
pub const MAX_FUZZY_QUOTE: usize = 2_000;

/// How a quote was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchType {
    /// The quote is in the text as given.
    Exact,
    /// A window close enough to the quote.
    Fuzzy,
}

impl MatchType {
    /// `exact` or `fuzzy`, as facts store it.
    pub fn as_str(self) -> &'static str {
        match self {
            MatchType::Exact => "exact",
            MatchType::Fuzzy => "fuzzy",
        }
    }
}

/// Where a quote is in a text: characters `start..end`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Span {
    /// First character of the quote in the text.
    pub start: usize,
    /// One past its last character.
    pub end: usize,
    /// 1.0 for an exact match, else the similarity of the window.
    pub score: f32,
    #[serde(rename = "match")]
    /// How it was found.
    pub match_type: MatchType,
}

impl Span {
    /// The characters of `text` the span covers.
    pub fn slice(&self, text: &str) -> String {
        text.chars()
            .skip(self.start)
            .take(self.end - self.start)
            .collect()
    }
}

/// Finds `quote` in `text`: the first exact occurrence, else the most
/// similar window if its similarity reaches `threshold`; `None` otherwise
/// (and for an empty quote).
pub fn align(text: &str, quote: &str, threshold: f32) -> Option<Span> {
    let quote = quote.trim();
    if quote.is_empty() {
        return None;
    }
    if let Some(byte) = text.find(quote) {
        let start = text[..byte].chars().count();
        return Some(Span {
            start,
            end: start + quote.chars().count(),
            score: 1.0,
            match_type: MatchType::Exact,
        });
    }
    let q: Vec<char> = quote.chars().collect();
    if q.len() > MAX_FUZZY_QUOTE {
        return None;
    }
    let t: Vec<char> = text.chars().collect();
    let (start, end, distance) = best_window(&t, &q)?;
    let longest = q.len().max(end - start).max(1);
    let score = 1.0 - distance as f32 / longest as f32;
    (score >= threshold).then_some(Span {
        start,
        end,
        score,
        match_type: MatchType::Fuzzy,
    })
}

/// The window `start..end` of `t` with the least edit distance to `q`;
/// among equals, the one whose length is nearest the quote's (a dropped
/// last letter and a changed one cost the same, and the quote's length is
/// the better guess), then the earliest.
fn best_window(t: &[char], q: &[char]) -> Option<(usize, usize, usize)> {
    if t.is_empty() {
        return None;
    }
    // Column j of the DP: cost[i] = least distance between q[..i] and a
    // window of t ending at j; origin[i] = where that window starts.
    let m = q.len();
    let mut cost: Vec<usize> = (0..=m).collect();
    let mut origin: Vec<usize> = vec![0; m + 1];
    let mut best: Option<(usize, usize, usize)> = None;
    for (j, &c) in t.iter().enumerate() {
        // A window may start anywhere: q[..0] costs nothing at j + 1.
        let mut diag_cost = cost[0];
        let mut diag_origin = origin[0];
        cost[0] = 0;
        origin[0] = j + 1;
        for i in 1..=m {
            let (up_cost, up_origin) = (cost[i], origin[i]);
            let substitute = diag_cost + usize::from(q[i - 1] != c);
            let skip_text = up_cost + 1;
            let skip_quote = cost[i - 1] + 1;
            let (next_cost, next_origin) = if substitute <= skip_text && substitute <= skip_quote {
                (substitute, diag_origin)
            } else if skip_quote <= skip_text {
                (skip_quote, origin[i - 1])
            } else {
                (skip_text, up_origin)
            };
            diag_cost = up_cost;
            diag_origin = up_origin;
            cost[i] = next_cost;
            origin[i] = next_origin;
        }
        let candidate = (origin[m], j + 1, cost[m]);
        let rank = |(start, end, cost): (usize, usize, usize)| (cost, (end - start).abs_diff(m));
        if best.is_none_or(|b| rank(candidate) < rank(b)) {
            best = Some(candidate);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str =
        "We decided to add rate limiting to the login endpoint because of brute-force attempts.";

    #[test]
    fn exact_quotes_get_their_span_and_full_confidence() {
        let span = align(
            TEXT,
            "rate limiting to the login endpoint",
            DEFAULT_THRESHOLD,
        )
        .unwrap();
        assert_eq!(span.match_type, MatchType::Exact);
        assert_eq!(span.score, 1.0);
        assert_eq!(span.slice(TEXT), "rate limiting to the login endpoint");
        assert_eq!((span.start, span.end), (18, 53));
    }

    #[test]
    fn paraphrased_quotes_within_the_threshold_are_fuzzy() {
        // an LLM's small slips: a changed letter, a dropped word's letter
        let span = align(
            TEXT,
            "rate limitting to the logn endpoint",
            DEFAULT_THRESHOLD,
        )
        .unwrap();
        assert_eq!(span.match_type, MatchType::Fuzzy);
        assert!(span.score >= 0.85 && span.score < 1.0, "{span:?}");
        assert_eq!(span.slice(TEXT), "rate limiting to the login endpoint");
        // a quote with different case and punctuation
        let span = align(
            TEXT,
            "Rate limiting to the login endpoint,",
            DEFAULT_THRESHOLD,
        )
        .unwrap();
        assert_eq!(span.match_type, MatchType::Fuzzy);
        assert!(
            span.slice(TEXT).starts_with("ate limiting") || span.slice(TEXT).starts_with("rate")
        );
    }

    #[test]
    fn quotes_that_are_not_there_are_rejected() {
        assert_eq!(
            align(TEXT, "we moved the database to Postgres", DEFAULT_THRESHOLD),
            None
        );
        assert_eq!(align(TEXT, "", DEFAULT_THRESHOLD), None);
        assert_eq!(align("", "rate", DEFAULT_THRESHOLD), None);
        // too different: about one character in four changed
        assert_eq!(
            align(TEXT, "rote lemiteng ta tha lagin", DEFAULT_THRESHOLD),
            None
        );
    }

    #[test]
    fn korean_spans_count_characters() {
        let text = "오늘 회의에서 벡터 검색을 먼저 구현하기로 결정했다.";
        let span = align(text, "벡터 검색을 먼저 구현하기로", DEFAULT_THRESHOLD).unwrap();
        assert_eq!(span.match_type, MatchType::Exact);
        assert_eq!((span.start, span.end), (8, 23));
        assert_eq!(span.slice(text), "벡터 검색을 먼저 구현하기로");
        // one syllable changed out of fifteen characters
        let span = align(text, "벡터 검색을 먼저 구현하기를", DEFAULT_THRESHOLD).unwrap();
        assert_eq!(span.match_type, MatchType::Fuzzy);
        assert_eq!((span.start, span.end), (8, 23));
    }

    #[test]
    fn the_first_of_two_occurrences_is_taken() {
        let text = "retry the job. Later: retry the job.";
        let span = align(text, "retry the job", DEFAULT_THRESHOLD).unwrap();
        assert_eq!(span.start, 0);
        let fuzzy = align(text, "retry the jb", DEFAULT_THRESHOLD).unwrap();
        assert_eq!(fuzzy.start, 0);
    }
}
