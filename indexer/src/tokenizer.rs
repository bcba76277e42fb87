//! A tokenizer for text that contains code.
//!
//! It splits identifiers into words (`getUserById` → get, user, by, id;
//! `get_user_by_id` → get, user, by, id; `src/auth/login.rs` → src, auth,
//! login, rs) and also emits each whole identifier or path, at the position
//! of its first word, so that a search for `user` finds `getUserById` while a
//! search for `getUserById` ranks the exact identifier first. Lowercasing is
//! a filter after it (camelCase detection needs the case).
//!
//! Plain English words are indexed by their Snowball stem (`deployment`,
//! `deploying` → `deploy`), so that a question finds an answer worded with
//! another form of the same word; whole identifiers and paths are kept as
//! written. The query side runs the same analyzer, so both meet on the stem.

use tantivy::Index;
use tantivy::tokenizer::{
    LowerCaser, RemoveLongFilter, TextAnalyzer, Token, TokenStream, Tokenizer,
};

/// Name of the analyzer for free text. It changes with what the analyzer
/// emits: an index built by another version has another name in its schema,
/// which makes it rebuild.
pub const CODE: &str = "memlog_code_v2";
/// Name of the analyzer for file paths (the whole value is one chunk).
pub const PATH: &str = "memlog_path";

/// Registers memlog's analyzers on an index. Tantivy stores only their
/// names, so this must run after every create or open, in every process.
pub fn register(index: &Index) {
    index.tokenizers().register(CODE, code_analyzer());
    index.tokenizers().register(PATH, path_analyzer());
}

/// The analyzer for free text (see the module doc).
pub fn code_analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(CodeTokenizer {
        stem: true,
        ..CodeTokenizer::default()
    })
    .filter(RemoveLongFilter::limit(256))
    .filter(LowerCaser)
    .build()
}

fn path_analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(CodeTokenizer {
        whole_input_is_one_chunk: true,
        ..CodeTokenizer::default()
    })
    .filter(RemoveLongFilter::limit(1024))
    .filter(LowerCaser)
    .build()
}

/// Splits text into identifiers, their words and paths (see the module doc).
#[derive(Clone, Default)]
pub struct CodeTokenizer {
    /// Treat the whole input as one chunk (file paths may contain spaces).
    whole_input_is_one_chunk: bool,
    /// Replace plain English words by their stem.
    stem: bool,
    buf: Vec<Token>,
}

/// The tokens of one text.
pub struct CodeTokenStream<'a> {
    tokens: &'a mut Vec<Token>,
    /// Index of the next token; the current one is `next - 1`.
    next: usize,
}

impl Tokenizer for CodeTokenizer {
    type TokenStream<'a> = CodeTokenStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        self.buf.clear();
        tokenize(text, self.whole_input_is_one_chunk, &mut self.buf);
        if self.stem {
            stem_words(&mut self.buf);
        }
        CodeTokenStream {
            tokens: &mut self.buf,
            next: 0,
        }
    }
}

impl TokenStream for CodeTokenStream<'_> {
    fn advance(&mut self) -> bool {
        if self.next < self.tokens.len() {
            self.next += 1;
            true
        } else {
            false
        }
    }
    fn token(&self) -> &Token {
        &self.tokens[self.next - 1]
    }
    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.next - 1]
    }
}

/// Characters that may belong to an identifier or path chunk.
fn is_chunk_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '/' | '\\' | '.' | '-' | ':')
}

/// Separators inside a chunk between identifiers (`_` is not one, so
/// `get_user_by_id` stays one identifier).
fn is_segment_sep(c: char) -> bool {
    matches!(c, '/' | '\\' | '.' | '-' | ':')
}

/// Maximal runs of characters satisfying `pred`, as byte ranges.
fn runs(s: &str, pred: impl Fn(char) -> bool) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    for (i, c) in s.char_indices() {
        match (pred(c), start) {
            (true, None) => start = Some(i),
            (false, Some(st)) => {
                out.push((st, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(st) = start {
        out.push((st, s.len()));
    }
    out
}

/// Trims characters that are neither alphanumeric nor `_` at both ends.
fn trim_chunk(text: &str, s: usize, e: usize) -> Option<(usize, usize)> {
    let keep = |c: char| c.is_alphanumeric() || c == '_';
    let sub = &text[s..e];
    let a = sub.find(keep)?;
    let b = sub.rfind(keep)?;
    let b_end = b + sub[b..].chars().next()?.len_utf8();
    Some((s + a, s + b_end))
}

/// camelCase / PascalCase / ACRONYMWord parts of an alphanumeric word.
/// Digits stay with the part before them (`utf8Decode` → utf8, Decode).
fn camel_parts(w: &str) -> Vec<(usize, usize)> {
    let cs: Vec<(usize, char)> = w.char_indices().collect();
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..cs.len() {
        let (bi, c) = cs[i];
        let p = cs[i - 1].1;
        let next_lower = cs.get(i + 1).is_some_and(|x| x.1.is_lowercase());
        let boundary = c.is_uppercase()
            && (p.is_lowercase() || p.is_numeric() || (p.is_uppercase() && next_lower));
        if boundary {
            out.push((start, bi));
            start = bi;
        }
    }
    if start < w.len() {
        out.push((start, w.len()));
    }
    out
}

/// Length of `chunk` without a trailing `:<digits>` location (`a.rs:12:5`
/// → `a.rs`), if it has one and something is left.
fn strip_location(chunk: &str) -> Option<usize> {
    let mut end = chunk.len();
    loop {
        let head = &chunk[..end];
        let digits = head.len() - head.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 || !head[..end - digits].ends_with(':') {
            break;
        }
        end -= digits + 1;
    }
    (end < chunk.len() && end > 0).then_some(end)
}

fn token(text: &str, from: usize, to: usize, position: usize, position_length: usize) -> Token {
    Token {
        offset_from: from,
        offset_to: to,
        position,
        text: text[from..to].to_string(),
        position_length,
    }
}

/// Words shorter than this are left as they are: the stemmer has little to
/// take from them, and short words are often abbreviations (`ids`, `ops`).
const MIN_STEMMED_LEN: usize = 4;

/// Replaces each plain word (one position, ASCII letters) by its English
/// stem, lowercased. Identifiers and paths span several positions or hold
/// other characters and stay as written.
fn stem_words(tokens: &mut [Token]) {
    let stemmer = frostem::Stemmer::new(frostem::Algorithm::English);
    for t in tokens.iter_mut() {
        if t.position_length != 1
            || t.text.len() < MIN_STEMMED_LEN
            || !t.text.bytes().all(|b| b.is_ascii_alphabetic())
        {
            continue;
        }
        let lower = t.text.to_ascii_lowercase();
        t.text = stemmer.stem(&lower).into_owned();
    }
}

fn tokenize(text: &str, one_chunk: bool, out: &mut Vec<Token>) {
    let chunks = if one_chunk {
        vec![(0, text.len())]
    } else {
        runs(text, is_chunk_char)
    };
    let mut pos = 0usize;
    for (rs, re) in chunks {
        let Some((cs, ce)) = trim_chunk(text, rs, re) else {
            continue;
        };
        // `path/to/file.rs:120:7` is the file plus a location: the location
        // would make every whole-chunk token unique, so it is dropped.
        let ce = strip_location(&text[cs..ce]).map_or(ce, |len| cs + len);
        let chunk = &text[cs..ce];
        // words: (from, to, position)
        let mut parts: Vec<(usize, usize, usize)> = Vec::new();
        for (ws, we) in runs(chunk, |c| c.is_alphanumeric()) {
            for (ps, pe) in camel_parts(&chunk[ws..we]) {
                parts.push((cs + ws + ps, cs + ws + pe, pos));
                pos += 1;
            }
        }
        if parts.is_empty() {
            continue;
        }
        let mut toks: Vec<Token> = Vec::with_capacity(parts.len() + 2);
        if parts.len() > 1 {
            toks.push(token(text, cs, ce, parts[0].2, parts.len()));
        }
        // identifiers inside a path or dotted name, and a path's basename
        let span = |a: usize, b: usize, toks: &mut Vec<Token>| {
            let inside: Vec<&(usize, usize, usize)> =
                parts.iter().filter(|p| p.0 >= a && p.1 <= b).collect();
            if inside.len() > 1 && (a, b) != (cs, ce) {
                toks.push(token(text, a, b, inside[0].2, inside.len()));
            }
        };
        for (ss, se) in runs(chunk, |c| !is_segment_sep(c)) {
            span(cs + ss, cs + se, &mut toks);
        }
        if let Some(slash) = chunk.rfind(['/', '\\']) {
            span(cs + slash + 1, ce, &mut toks);
        }
        for &(f, t, p) in &parts {
            toks.push(token(text, f, t, p, 1));
        }
        // Positions must not decrease per term: by position, longest first.
        toks.sort_by_key(|t| {
            (
                t.position,
                std::cmp::Reverse(t.offset_to - t.offset_from),
                t.offset_from,
            )
        });
        toks.dedup_by_key(|t| (t.offset_from, t.offset_to));
        out.extend(toks);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(text: &str) -> Vec<String> {
        let mut a = code_analyzer();
        let mut s = a.token_stream(text);
        let mut out = Vec::new();
        while let Some(t) = s.next() {
            out.push(format!("{}@{}", t.text, t.position));
        }
        out
    }

    #[test]
    fn splits_identifiers_and_keeps_them_whole() {
        assert_eq!(
            tokens("getUserById"),
            ["getuserbyid@0", "get@0", "user@1", "by@2", "id@3"]
        );
        assert_eq!(
            tokens("get_user_by_id"),
            ["get_user_by_id@0", "get@0", "user@1", "by@2", "id@3"]
        );
        assert_eq!(
            tokens("src/auth/login.rs"),
            [
                "src/auth/login.rs@0",
                "src@0",
                "auth@1",
                "login.rs@2",
                "login@2",
                "rs@3"
            ]
        );
        assert_eq!(
            tokens("HTTPServer ok"),
            ["httpserver@0", "http@0", "server@1", "ok@2"]
        );
        assert_eq!(tokens("getUsers"), ["getusers@0", "get@0", "user@1"]);
        assert_eq!(tokens("벡터 검색"), ["벡터@0", "검색@1"]);
        assert_eq!(tokens("deploying deployments"), ["deploy@0", "deploy@1"]);
        assert_eq!(
            tokens("src/a.rs:12:5 x"),
            ["src/a.rs@0", "src@0", "a.rs@1", "a@1", "rs@2", "x@3"]
        );
    }
}
