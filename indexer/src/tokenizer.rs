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
pub const CODE: &str = "memlog_code_v4";
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
    /// Scratch for [`fold_accents`].
    folded: String,
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
        if !text.is_ascii() {
            fold_accents(self.tokens.live(), &mut self.folded);
        }
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

/// Characters of the scripts written without spaces between words (Han,
/// kana) and Hangul, whose words carry their particles (`검색을`): their
/// runs are cut into words and pairs of characters ([`cjk_parts`]), so that
/// a word finds the run that holds it (`佐藤` in `担当は佐藤さんです`).
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // Hiragana, Katakana
        | 0x3400..=0x4DBF    // CJK Extension A
        | 0x4E00..=0x9FFF    // CJK Unified Ideographs
        | 0xF900..=0xFAFF    // CJK Compatibility Ideographs
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0x1100..=0x11FF    // Hangul Jamo
        | 0x3130..=0x318F    // Hangul compatibility Jamo
        | 0xFF66..=0xFF9F    // half-width Katakana
        | 0x20000..=0x2FA1F  // CJK Extensions B.. and compatibility supplement
    )
}

/// The runs of `word` that are CJK and those that are not: (from, to, cjk).
fn script_segments(word: &str) -> impl Iterator<Item = (usize, usize, bool)> + '_ {
    let mut chars = word.char_indices().peekable();
    std::iter::from_fn(move || {
        let (start, first) = chars.next()?;
        let cjk = is_cjk(first);
        let mut end = start + first.len_utf8();
        while let Some(&(i, c)) = chars.peek() {
            if is_cjk(c) != cjk {
                break;
            }
            end = i + c.len_utf8();
            chars.next();
        }
        Some((start, end, cjk))
    })
}

/// A CJK run's parts. Japanese writes its words in kanji and katakana
/// and its grammar (particles, endings) in hiragana, so the run is cut
/// where the script changes: a katakana word is one part, hiragana between
/// words is left out (a prompt's `は`, `を`, `ています` would only dilute how
/// much of it a memory holds), and a run of Han characters (or Hangul) is
/// one part when it has two characters or fewer, else each pair of
/// neighbours (Chinese, long compounds: `金曜日` → `金曜`, `曜日`). A run of
/// hiragana alone is a word, one part.
fn cjk_parts(run: &str, mut part: impl FnMut(usize, usize)) {
    let chars: Vec<(usize, char)> = run.char_indices().collect();
    let only_hiragana = chars.iter().all(|(_, c)| script(*c) == Script::Hiragana);
    let end_of = |k: usize| chars.get(k).map_or(run.len(), |(at, _)| *at);
    let mut i = 0;
    while i < chars.len() {
        let class = script(chars[i].1);
        let mut j = i + 1;
        while j < chars.len() && script(chars[j].1) == class {
            j += 1;
        }
        match class {
            Script::Hiragana if !only_hiragana => {}
            Script::Han | Script::Hangul if j - i > 2 => {
                for (k, (at, _)) in chars.iter().enumerate().take(j - 1).skip(i) {
                    part(*at, end_of(k + 2));
                }
            }
            _ => part(chars[i].0, end_of(j)),
        }
        i = j;
    }
}

/// The CJK scripts [`cjk_parts`] tells apart.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Script {
    Hiragana,
    Katakana,
    Hangul,
    Han,
}

fn script(c: char) -> Script {
    match c as u32 {
        0x3040..=0x309F => Script::Hiragana,
        0x30A0..=0x30FF | 0xFF66..=0xFF9F => Script::Katakana,
        0xAC00..=0xD7AF | 0x1100..=0x11FF | 0x3130..=0x318F => Script::Hangul,
        _ => Script::Han,
    }
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

/// Latin letters without their accents (`ørnhøj` → `ornhoj`, `Zürich`
/// → `Zurich`, `straße` → `strasse`), before stemming: a name is typed
/// without them as often as with, and both must meet.
fn fold_accents(tokens: &mut [Token], folded: &mut String) {
    use unicode_normalization::UnicodeNormalization;
    use unicode_normalization::char::is_combining_mark;
    for t in tokens.iter_mut() {
        if t.text.is_ascii() || !t.text.chars().any(is_latin_extended) {
            continue;
        }
        folded.clear();
        for c in t.text.chars() {
            if !is_latin_extended(c) {
                folded.push(c);
                continue;
            }
            match c {
                'ø' => folded.push('o'),
                'Ø' => folded.push('O'),
                'æ' => folded.push_str("ae"),
                'Æ' => folded.push_str("AE"),
                'œ' => folded.push_str("oe"),
                'Œ' => folded.push_str("OE"),
                'ß' => folded.push_str("ss"),
                'đ' | 'ð' => folded.push('d'),
                'Đ' | 'Ð' => folded.push('D'),
                'ł' => folded.push('l'),
                'Ł' => folded.push('L'),
                'þ' => folded.push_str("th"),
                'Þ' => folded.push_str("TH"),
                'ı' => folded.push('i'),
                _ => folded.extend(std::iter::once(c).nfd().filter(|m| !is_combining_mark(*m))),
            }
        }
        std::mem::swap(&mut t.text, folded);
    }
}

/// Latin letters past ASCII (Latin-1, Latin Extended A and B, Latin
/// Extended Additional).
fn is_latin_extended(c: char) -> bool {
    matches!(c as u32, 0xC0..=0x24F | 0x1E00..=0x1EFF) && c != '×' && c != '÷'
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
            let word = &chunk[ws..we];
            let base = cs + ws;
            let mut part = |ps: usize, pe: usize| {
                parts.push((base + ps, base + pe, pos));
                pos += 1;
            };
            if word.is_ascii() {
                camel_parts(word, &mut part);
                continue;
            }
            for (ss, se, cjk) in script_segments(word) {
                let segment = &word[ss..se];
                if cjk {
                    cjk_parts(segment, |a, b| part(ss + a, ss + b));
                } else {
                    camel_parts(segment, |a, b| part(ss + a, ss + b));
                }
            }
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
        // a sentence written without spaces is no identifier to match
        // whole: its words are its parts
        if chunk.is_ascii() || !chunk.chars().any(is_cjk) {
            out.push(text, cs, ce, first, parts.len());
        }
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

    #[test]
    fn cjk_runs_are_indexed_by_pairs_of_characters() {
        // a word of a run without spaces is found by its pair
        let note = tokens("担当は佐藤さんです");
        assert!(note.iter().any(|t| t.starts_with("佐藤@")), "{note:?}");
        assert_eq!(tokens("佐藤"), ["佐藤@0"]);
        assert_eq!(tokens("凍"), ["凍@0"]);
        // Hangul with its particle: the word is one of the pairs
        let korean = tokens("검색을");
        assert!(korean.iter().any(|t| t.starts_with("검색@")), "{korean:?}");
        // Japanese: words where the script changes, grammar left out
        assert_eq!(
            tokens("佐藤さんは何を担当していますか"),
            ["佐藤@0", "何@1", "担当@2"]
        );
        assert_eq!(
            tokens("デプロイは金曜日"),
            ["デプロイ@0", "金曜@1", "曜日@2"]
        );
        // Chinese: pairs; hiragana alone is a word
        assert_eq!(tokens("支付服务"), ["支付@0", "付服@1", "服务@2"]);
        assert_eq!(tokens("すし"), ["すし@0"]);
        // CJK beside Latin letters in one word
        let mixed = tokens("deploy金曜日");
        assert!(mixed.iter().any(|t| t.starts_with("deploy@")), "{mixed:?}");
        assert!(mixed.iter().any(|t| t.starts_with("金曜@")), "{mixed:?}");
    }

    #[test]
    fn accents_fold_so_a_name_meets_its_plain_spelling() {
        assert_eq!(tokens("ørnhøj"), tokens("ornhoj"));
        assert_eq!(tokens("Zürich"), tokens("zurich"));
        assert_eq!(tokens("déploiement"), tokens("deploiement"));
        assert_eq!(tokens("straße"), tokens("strasse"));
        // other scripts are left as they are
        assert_eq!(tokens("Москва"), ["москва@0"]);
    }
}
