//! Canonical keys (docs/DESIGN.md §4): the same title always yields the same key.
//!
//! Steps (docs/DESIGN.md §4), exactly as the reference `make_canonical_key`:
//! 1. NFKC normalisation; 2. lowercase; 3. remove every character that is
//!    neither a word character nor whitespace (Python's `[^\w\s]`);
//! 4. collapse whitespace runs to one space and trim;
//! 5. prefix `project::` when a project is given;
//! 6. a key longer than 200 characters keeps its first 191 characters, then
//!    `_` and the first 8 hex digits of the MD5 of the whole key (UTF-8).
//!
//! Lengths count Unicode scalar values, as Python's `len` does.

use md5::{Digest, Md5};
use unicode_normalization::UnicodeNormalization;

/// Longest key, in characters.
pub const MAX_KEY_LENGTH: usize = 200;

/// Steps 1–4: the normalised form of a title.
pub fn normalize(title: &str) -> String {
    let lowered: String = title.nfkc().collect::<String>().to_lowercase();
    let mut out = String::with_capacity(lowered.len());
    let mut pending_space = false;
    for c in lowered.chars() {
        if is_space(c) {
            pending_space = true;
        } else if is_word(c) {
            if pending_space && !out.is_empty() {
                out.push(' ');
            }
            pending_space = false;
            out.push(c);
        }
        // Punctuation and symbols are removed without splitting words:
        // Python's re.sub(r'[^\w\s]', '') joins "foo-bar" into "foobar".
    }
    out
}

/// The canonical key of `title`, optionally in `project`'s namespace.
pub fn canonical_key(title: &str, project: Option<&str>) -> String {
    let normalized = normalize(title);
    // Python's `if project:` treats "" as no project.
    let key = match project.filter(|p| !p.is_empty()) {
        Some(p) => format!("{p}::{normalized}"),
        None => normalized,
    };
    if key.chars().count() <= MAX_KEY_LENGTH {
        return key;
    }
    let digest = Md5::digest(key.as_bytes());
    let hex: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    let head: String = key.chars().take(MAX_KEY_LENGTH - 9).collect();
    format!("{head}_{hex}")
}

/// `key` made again from `new` when it is the canonical key of `old` (in a
/// project's namespace or none, behind a scheme such as `cond:` or
/// `task:`): the same namespace and scheme, `new`'s words. `None` when
/// `key` is not made from `old`.
pub fn rederive(key: &str, old: &str, new: &str) -> Option<String> {
    if key == canonical_key(old, None) {
        return Some(canonical_key(new, None));
    }
    let (head, _) = key.split_once("::")?;
    let candidates = [("", head)].into_iter().chain(
        head.split_once(':')
            .filter(|(s, p)| !s.is_empty() && !p.is_empty()),
    );
    for (scheme, project) in candidates {
        let sep = if scheme.is_empty() { "" } else { ":" };
        if key == format!("{scheme}{sep}{}", canonical_key(old, Some(project))) {
            return Some(format!(
                "{scheme}{sep}{}",
                canonical_key(new, Some(project))
            ));
        }
    }
    None
}

/// Python's `\w` on str: alphanumeric characters and the underscore.
fn is_word(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// Python's `\s` on str: Unicode whitespace, plus the four separators
/// U+001C..U+001F that Python counts and Rust's `is_whitespace` does not.
fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_steps() {
        // NFKC folds full-width letters and ligatures; case is folded.
        assert_eq!(normalize("Ｆｉｘ the ﬁle"), "fix the file");
        // punctuation is dropped, not turned into a separator
        assert_eq!(normalize("Fix: the login-bug!!"), "fix the loginbug");
        // whitespace runs collapse and ends are trimmed
        assert_eq!(
            normalize("  add\t\tvector \n search  "),
            "add vector search"
        );
        // underscores and digits are word characters
        assert_eq!(normalize("snake_case v2"), "snake_case v2");
        // Korean is kept (Hangul syllables are letters); NFKC composes jamo
        assert_eq!(normalize("벡터 검색 구현하기!"), "벡터 검색 구현하기");
        assert_eq!(normalize("\u{1100}\u{1161}"), "가");
    }

    #[test]
    fn same_title_same_key() {
        assert_eq!(
            canonical_key("Implement Vector Search", Some("code-memory")),
            canonical_key("implement   vector search.", Some("code-memory"))
        );
        assert_eq!(
            canonical_key("Implement Vector Search", Some("code-memory")),
            "code-memory::implement vector search"
        );
        assert_eq!(canonical_key("Hello, World", None), "hello world");
    }

    /// Expected values printed by the reference Python function.
    #[test]
    fn matches_the_seed_python_reference() {
        assert_eq!(
            canonical_key("Émile's café — naïve résumé", None),
            "émiles café naïve résumé"
        );
        assert_eq!(canonical_key("x", Some("")), "x");
        let korean = canonical_key(&"벡터 검색 구현하기! ".repeat(20), Some("code-memory"));
        assert!(korean.ends_with("벡터_39f27141"), "{korean}");
        assert_eq!(korean.chars().count(), 200);
        let words = canonical_key(&"word ".repeat(60), Some("p"));
        assert!(words.ends_with(" wor_a75cb2e9"), "{words}");
    }

    #[test]
    fn long_keys_are_cut_with_an_md5_suffix() {
        let title = "word ".repeat(60);
        let key = canonical_key(&title, Some("p"));
        assert_eq!(key.chars().count(), MAX_KEY_LENGTH);
        let full = format!("p::{}", normalize(&title));
        let digest = Md5::digest(full.as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(key, format!("{}_{}", &full[..191], &hex[..8]));
        // exactly 200 characters is kept as is
        let exact = "a".repeat(200);
        assert_eq!(canonical_key(&exact, None), exact);
        // multi-byte characters are counted as characters
        let korean = "가".repeat(250);
        let k = canonical_key(&korean, None);
        assert_eq!(k.chars().count(), 200);
        assert!(k.starts_with(&"가".repeat(191)));
    }

    #[test]
    fn a_key_is_made_again_in_its_namespace_and_scheme() {
        let old = "Fix: the login bug";
        let new = "Fix: the [REDACTED] bug";
        for (key, expected) in [
            (
                canonical_key(old, Some("shop")),
                canonical_key(new, Some("shop")),
            ),
            (canonical_key(old, None), canonical_key(new, None)),
            (
                format!("cond:{}", canonical_key(old, Some("shop"))),
                format!("cond:{}", canonical_key(new, Some("shop"))),
            ),
        ] {
            assert_eq!(rederive(&key, old, new), Some(expected), "{key}");
        }
        // a key made from another text is left alone
        assert_eq!(rederive("shop::something else", old, new), None);
        assert_eq!(rederive("cli", old, new), None);
    }
}
