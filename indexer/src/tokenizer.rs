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
    tokens: Tokens,
    /// Stems already computed (lowercased word → stem): a corpus repeats
    /// its words, and the Snowball stemmer was a tenth of a rebuild.
    stems: Stems,
    /// A chunk's words: (from, to, position).
    parts: Vec<(usize, usize, usize)>,
}

/// The tokens of the current text. Tokens past `len` are kept from earlier
/// texts so that their strings are written over instead of allocated: a
/// rebuild tokenizes millions of words.
#[derive(Clone, Default)]
struct Tokens {
    all: Vec<Token>,
    len: usize,
}

impl Tokens {
    fn clear(&mut self) {
        self.len = 0;
    }

    fn push(
        &mut self,
        text: &str,
        from: usize,
        to: usize,
        position: usize,
        position_length: usize,
    ) {
        if self.len == self.all.len() {
            self.all.push(Token::default());
        }
        let t = &mut self.all[self.len];
        t.offset_from = from;
        t.offset_to = to;
        t.position = position;
        t.position_length = position_length;
        t.text.clear();
        t.text.push_str(&text[from..to]);
        self.len += 1;
    }

    fn live(&mut self) -> &mut [Token] {
        &mut self.all[..self.len]
    }
}

/// A bounded memo of the stemmer's answers; one per analyzer, which
/// tantivy clones for each indexing thread and each query.
#[derive(Clone, Default)]
struct Stems {
    known: std::collections::HashMap<String, String>,
    lower: String,
}

impl Stems {
    /// Entries past which the memo starts over (a few MB at most).
    const MAX: usize = 1 << 16;

    /// Replaces `word` (ASCII letters) by its lowercased stem.
    fn stem(&mut self, word: &mut String) {
        self.lower.clear();
        self.lower.push_str(word);
        self.lower.make_ascii_lowercase();
        word.clear();
        if let Some(stem) = self.known.get(&self.lower) {
            word.push_str(stem);
            return;
        }
        let stem = frostem::Stemmer::new(frostem::Algorithm::English)
            .stem(&self.lower)
            .into_owned();
        word.push_str(&stem);
        if self.known.len() >= Self::MAX {
            self.known.clear();
        }
        self.known.insert(self.lower.clone(), stem);
    }
}

/// The tokens of one text.
pub struct CodeTokenStream<'a> {
    tokens: &'a mut [Token],
    /// Index of the next token; the current one is `next - 1`.
    next: usize,
}

impl Tokenizer for CodeTokenizer {
    type TokenStream<'a> = CodeTokenStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        self.tokens.clear();
        tokenize(
            text,
            self.whole_input_is_one_chunk,
            &mut self.parts,
            &mut self.tokens,
        );
        if self.stem {
            stem_words(self.tokens.live(), &mut self.stems);
        }
        CodeTokenStream {
            tokens: self.tokens.live(),
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
fn runs(s: &str, pred: impl Fn(char) -> bool) -> impl Iterator<Item = (usize, usize)> {
    let mut chars = s.char_indices();
    std::iter::from_fn(move || {
        let start = chars.by_ref().find(|&(_, c)| pred(c))?.0;
        let end = chars
            .by_ref()
            .find(|&(_, c)| !pred(c))
            .map_or(s.len(), |(i, _)| i);
        Some((start, end))
    })
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

/// camelCase / PascalCase / ACRONYMWord parts of an alphanumeric word, as
/// byte ranges handed to `part`. Digits stay with the part before them
/// (`utf8Decode` → utf8, Decode).
fn camel_parts(w: &str, mut part: impl FnMut(usize, usize)) {
    let mut chars = w.char_indices().peekable();
    let Some((_, mut prev)) = chars.next() else {
        return;
    };
    let mut start = 0;
    while let Some((i, c)) = chars.next() {
        if c.is_uppercase() {
            let next_lower = chars.peek().is_some_and(|&(_, n)| n.is_lowercase());
            if prev.is_lowercase() || prev.is_numeric() || (prev.is_uppercase() && next_lower) {
                part(start, i);
                start = i;
            }
        }
        prev = c;
    }
    part(start, w.len());
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

/// Words shorter than this are left as they are: the stemmer has little to
/// take from them, and short words are often abbreviations (`ids`, `ops`).
const MIN_STEMMED_LEN: usize = 4;

/// Replaces each plain word (one position, ASCII letters) by its English
/// stem, lowercased. Identifiers and paths span several positions or hold
/// other characters and stay as written.
fn stem_words(tokens: &mut [Token], stems: &mut Stems) {
    for t in tokens.iter_mut() {
        if t.position_length != 1
            || t.text.len() < MIN_STEMMED_LEN
            || !t.text.bytes().all(|b| b.is_ascii_alphabetic())
        {
            continue;
        }
        stems.stem(&mut t.text);
    }
}

fn tokenize(text: &str, one_chunk: bool, parts: &mut Vec<(usize, usize, usize)>, out: &mut Tokens) {
    let mut pos = 0usize;
    let mut chunk_of = |rs: usize, re: usize| {
        let Some((cs, ce)) = trim_chunk(text, rs, re) else {
            return;
        };
        // `path/to/file.rs:120:7` is the file plus a location: the location
        // would make every whole-chunk token unique, so it is dropped.
        let ce = strip_location(&text[cs..ce]).map_or(ce, |len| cs + len);
        let chunk = &text[cs..ce];
        parts.clear();
        for (ws, we) in runs(chunk, |c| c.is_alphanumeric()) {
            camel_parts(&chunk[ws..we], |ps, pe| {
                parts.push((cs + ws + ps, cs + ws + pe, pos));
                pos += 1;
            });
        }
        // Most chunks are one word: its token is all there is.
        if let [(f, t, p)] = parts[..] {
            out.push(text, f, t, p, 1);
            return;
        }
        let Some(&(_, _, first)) = parts.first() else {
            return;
        };
        let begin = out.len;
        out.push(text, cs, ce, first, parts.len());
        // identifiers inside a path or dotted name, and a path's basename
        let mut span = |a: usize, b: usize| {
            let mut inside = parts.iter().filter(|p| p.0 >= a && p.1 <= b);
            if let Some(&(_, _, at)) = inside.next() {
                let n = 1 + inside.count();
                if n > 1 && (a, b) != (cs, ce) {
                    out.push(text, a, b, at, n);
                }
            }
        };
        for (ss, se) in runs(chunk, |c| !is_segment_sep(c)) {
            span(cs + ss, cs + se);
        }
        if let Some(slash) = chunk.rfind(['/', '\\']) {
            span(cs + slash + 1, ce);
        }
        for &(f, t, p) in parts.iter() {
            out.push(text, f, t, p, 1);
        }
        // Positions must not decrease per term: by position, longest first.
        let toks = &mut out.all[begin..out.len];
        toks.sort_by_key(|t| {
            (
                t.position,
                std::cmp::Reverse(t.offset_to - t.offset_from),
                t.offset_from,
            )
        });
        // the same span twice (a one-segment basename): keep the first,
        // moving the others past the live tokens for reuse
        let mut kept = begin;
        for i in begin..out.len {
            let same = kept > begin && {
                let (a, b) = (&out.all[kept - 1], &out.all[i]);
                (a.offset_from, a.offset_to) == (b.offset_from, b.offset_to)
            };
            if !same {
                out.all.swap(kept, i);
                kept += 1;
            }
        }
        out.len = kept;
    };
    if one_chunk {
        chunk_of(0, text.len());
    } else {
        for (rs, re) in runs(text, is_chunk_char) {
            chunk_of(rs, re);
        }
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
