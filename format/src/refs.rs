//! References found in text — URLs, GitHub issues (`owner/repo#123`), JIRA
//! keys (`ACME-412`) and file paths — and their canonical entity keys
//! (docs/DESIGN.md §4): `art:url:{sha1(url)}`, `art:gh_issue:{repo}:{num}`,
//! `art:jira:{KEY}`, and `file:{path}` for files.

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;

/// A reference to something outside the conversation.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reference {
    /// A web address.
    Url(String),
    /// A GitHub issue or pull request.
    GithubIssue {
        /// `owner/repo`.
        repo: String,
        /// Its number.
        number: u64,
    },
    /// A JIRA-style issue key (`ACME-12`).
    Jira(String),
    /// A file path.
    File(String),
}

impl Reference {
    /// The canonical entity key of the reference.
    pub fn key(&self) -> String {
        match self {
            Reference::Url(u) => format!("art:url:{}", sha1_hex(u.as_bytes())),
            Reference::GithubIssue { repo, number } => format!("art:gh_issue:{repo}:{number}"),
            Reference::Jira(k) => format!("art:jira:{k}"),
            Reference::File(p) => format!("file:{p}"),
        }
    }

    /// The entity type: `artifact` or `file`.
    pub fn entity_type(&self) -> &'static str {
        match self {
            Reference::File(_) => "file",
            _ => "artifact",
        }
    }

    /// A human title: the URL, `owner/repo#12`, the key or the path.
    pub fn title(&self) -> String {
        match self {
            Reference::Url(u) => u.clone(),
            Reference::GithubIssue { repo, number } => format!("{repo}#{number}"),
            Reference::Jira(k) | Reference::File(k) => k.clone(),
        }
    }
}

// Word boundaries are ASCII ones (`(?-u:\b)`): with Unicode ones the
// regex engine's DFA gives up at the first non-ASCII byte (a `→` of a file
// read back, an accented name) and every later match of the text was
// searched by the backtracker, a quarter of a rebuild's time on agent
// events. A key or path written flush against a letter of another script
// (`ACME-12에서`, Korean's particles) now counts, as it should.
static URL: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r#"https?://[^\s<>"'`)\]}]+"#).ok());
static GH_ISSUE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?:^|[\s(\[])([A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+)#([0-9]+)(?-u:\b)").ok()
});
static JIRA: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?-u:\b)([A-Z][A-Z0-9]{1,9})-([1-9][0-9]{0,6})(?-u:\b)").ok());
static PATH: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?:^|[\s(`'\x22])((?:\.{0,2}/)?(?:[A-Za-z0-9_.@-]+/)+[A-Za-z0-9_.@-]+\.[A-Za-z0-9]{1,8})(?-u:\b)").ok()
});

/// A bare file name with a common source or config extension (`db.rs`).
static FILE_NAME: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?:^|[\s(`'\x22])([A-Za-z0-9_@-][A-Za-z0-9_.@-]*\.(?:rs|py|ts|tsx|js|jsx|go|java|kt|rb|c|h|cc|cpp|hpp|cs|swift|php|sh|sql|toml|yaml|yml|json|md|html|css|scss|vue|lock|ini|cfg|proto))(?-u:\b)").ok()
});

/// Prefixes that look like JIRA keys but are not issue trackers.
const NOT_JIRA: &[&str] = &[
    "UTF", "SHA", "ISO", "RFC", "HTTP", "TLS", "SSL", "AES", "RSA", "MD", "UTC", "GMT", "ES", "IPV",
];

/// The references in `text`, deduplicated, in a stable order.
pub fn extract(text: &str) -> Vec<Reference> {
    let mut out = Vec::new();
    if let Some(re) = URL.as_ref() {
        for m in re.find_iter(text) {
            let url = m.as_str().trim_end_matches(['.', ',', ';', ':', '!', '?']);
            out.push(Reference::Url(url.to_string()));
        }
    }
    // Text without URLs, so that paths and issue refs inside URLs do not
    // count twice.
    let rest = match URL.as_ref() {
        Some(re) => re.replace_all(text, " ").into_owned(),
        None => text.to_string(),
    };
    if let Some(re) = GH_ISSUE.as_ref() {
        for c in re.captures_iter(&rest) {
            if let (Some(repo), Some(num)) = (c.get(1), c.get(2))
                && let Ok(number) = num.as_str().parse()
            {
                out.push(Reference::GithubIssue {
                    repo: repo.as_str().to_string(),
                    number,
                });
            }
        }
    }
    if let Some(re) = JIRA.as_ref() {
        for c in re.captures_iter(&rest) {
            if let Some(project) = c.get(1)
                && !NOT_JIRA.contains(&project.as_str())
                && let Some(whole) = c.get(0)
            {
                out.push(Reference::Jira(whole.as_str().to_string()));
            }
        }
    }
    if let Some(re) = PATH.as_ref() {
        for c in re.captures_iter(&rest) {
            if let Some(p) = c.get(1)
                && !p.as_str().contains('#')
            {
                out.push(Reference::File(normalize_path(p.as_str())));
            }
        }
    }
    if let Some(re) = FILE_NAME.as_ref() {
        // A bare name is a file of its own unless a path above ends with it
        // (a set: a long tool output names hundreds).
        let mut known: HashSet<String> = out
            .iter()
            .filter_map(|r| match r {
                Reference::File(f) => Some(f.rsplit('/').next().unwrap_or(f).to_string()),
                _ => None,
            })
            .collect();
        for c in re.captures_iter(&rest) {
            if let Some(p) = c.get(1)
                && known.insert(p.as_str().to_string())
            {
                out.push(Reference::File(p.as_str().to_string()));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// A file path as a key: `./` dropped, backslashes as slashes.
pub fn normalize_path(path: &str) -> String {
    let p = path.replace('\\', "/");
    p.strip_prefix("./").unwrap_or(&p).to_string()
}

/// Lowercase hex SHA-1 (for `art:url:` keys, docs/DESIGN.md §4).
pub fn sha1_hex(bytes: &[u8]) -> String {
    use sha1::{Digest, Sha1};
    Sha1::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_urls_issues_jira_and_paths() {
        let refs = extract(
            "See https://example.com/a/b?x=1. Fixes acme/shop#42 and ACME-412 (not UTF-8); edited src/auth/login.rs and ./web/app.tsx",
        );
        assert!(refs.contains(&Reference::Url("https://example.com/a/b?x=1".into())));
        assert!(refs.contains(&Reference::GithubIssue {
            repo: "acme/shop".into(),
            number: 42
        }));
        assert!(refs.contains(&Reference::Jira("ACME-412".into())));
        assert!(refs.contains(&Reference::File("src/auth/login.rs".into())));
        assert!(refs.contains(&Reference::File("web/app.tsx".into())));
        assert!(
            !refs.contains(&Reference::File("login.rs".into())),
            "a path's basename is not a second file"
        );
        assert!(
            extract("helper in db.rs, not example.com").contains(&Reference::File("db.rs".into()))
        );
        assert!(
            !refs
                .iter()
                .any(|r| matches!(r, Reference::Jira(k) if k.starts_with("UTF")))
        );
        // the URL's path is not also a file
        assert!(
            !refs
                .iter()
                .any(|r| matches!(r, Reference::File(p) if p.contains("example.com")))
        );
    }

    #[test]
    fn references_flush_against_another_script_count() {
        // Korean particles follow a key or a file name without a space
        let refs = extract("ACME-12에서 고침: db.rs에 있던 버그, 12→ src/auth/login.rs → 끝");
        assert!(refs.contains(&Reference::Jira("ACME-12".into())));
        assert!(refs.contains(&Reference::File("db.rs".into())));
        assert!(refs.contains(&Reference::File("src/auth/login.rs".into())));
    }

    #[test]
    fn keys_follow_the_seed() {
        assert_eq!(
            Reference::Url("https://example.com".into()).key(),
            format!("art:url:{}", sha1_hex(b"https://example.com"))
        );
        assert_eq!(sha1_hex(b"abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
        assert_eq!(
            Reference::GithubIssue {
                repo: "o/r".into(),
                number: 7
            }
            .key(),
            "art:gh_issue:o/r:7"
        );
        assert_eq!(Reference::Jira("AB-1".into()).key(), "art:jira:AB-1");
    }
}
