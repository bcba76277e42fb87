//! What is not a secret though it may look like one: placeholders
//! (`EXAMPLE`, `xxxx`, `changeme`, `<your-token>`, `${VAR}`), references to
//! where a secret lives (`os.environ[…]`, `process.env.X`), lockfile
//! hashes and image digests (`sha512-…`, `sha256:…`), public keys, UUIDs
//! and git SHAs, paths and plain URLs.

/// Substrings that mark a placeholder (compared in lower case).
const PLACEHOLDER_PARTS: &[&str] = &[
    "example",
    "xxxx",
    "****",
    "\u{2022}\u{2022}",
    "....",
    "changeme",
    "change_me",
    "change-me",
    "changeit",
    "placeholder",
    "dummy",
    "redacted",
    "your_",
    "your-",
    "yourtoken",
    "yourkey",
    "yoursecret",
    "yourpassword",
    "yourapikey",
    "insert_",
    "insert-",
    "replace_me",
    "replaceme",
    "_here",
    "-here",
    "fixme",
    "todo",
    "sample",
    "fake",
    "notreal",
    "not_real",
    "not-a-real",
    "do_not_use",
    "[private]",
];

/// Whole values that are words, not secrets (compared in lower case).
const PLACEHOLDER_WORDS: &[&str] = &[
    "password",
    "passwd",
    "secret",
    "token",
    "apikey",
    "api_key",
    "key",
    "test",
    "testing",
    "none",
    "null",
    "nil",
    "true",
    "false",
    "undefined",
    "empty",
    "string",
    "str",
    "required",
    "optional",
    "hidden",
    "masked",
    "n/a",
    "tbd",
    "pass",
    "user",
    "username",
    "foo",
    "bar",
    "baz",
    "foobar",
    "abc",
    "abc123",
    "mypassword",
    "mysecret",
    "mytoken",
    "default",
    "value",
];

/// Prefixes of digests and public keys: never secrets.
const PUBLIC_PREFIXES: &[&str] = &[
    "sha1-",
    "sha256-",
    "sha384-",
    "sha512-",
    "sha1:",
    "sha256:",
    "sha384:",
    "sha512:",
    "md5:",
    "md5-",
    "blake2b:",
    "blake3:",
    "h1:",
    "ssh-rsa",
    "ssh-ed25519",
    "ssh-dss",
    "ecdsa-sha2-",
    "sk-ssh-",
    "sk-ecdsa-",
    "-----begin public",
    "-----begin certificate",
    "-----begin rsa public",
    "-----begin pgp public",
    "-----begin openssh public",
    "-----begin ssh2 public",
    "pk_live_",
    "pk_test_",
    "npub1",
    "age1",
    "aaaab3nzac1yc2e",
    "aaaac3nzac1lzdi1nte5",
    "aaaae2vjzhnh",
];

/// Whether `value` is a placeholder, a word, or a reference to where a
/// secret lives (a variable, a template, a marker of an earlier
/// redaction).
pub(super) fn is_placeholder(value: &str) -> bool {
    let v = value.trim();
    if v.is_empty() {
        return true;
    }
    let lower = v.to_ascii_lowercase();
    if PLACEHOLDER_PARTS.iter().any(|p| lower.contains(p))
        || PLACEHOLDER_WORDS.contains(&lower.as_str())
    {
        return true;
    }
    let b = v.as_bytes();
    let first = b[0];
    let last = b[b.len() - 1];
    // <your-token>, {token}, [REDACTED…], ${VAR}, $VAR, $(cmd), %VAR%,
    // {{ var }}, #{var}, %(name)s
    if (first == b'<' && last == b'>')
        || (first == b'{' && last == b'}')
        || (first == b'%' && last == b'%' && b.len() > 2)
        || lower.starts_with("[redacted")
        || lower.starts_with("${")
        || lower.starts_with("$(")
        || lower.starts_with("#{")
        || lower.starts_with("%(")
        || lower.contains("{{")
        || (first == b'$'
            && b.get(1)
                .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_'))
    {
        return true;
    }
    few_distinct(v) || is_sequence(&lower)
}

/// Whether a token a rule found is a placeholder in the token's format
/// (`ghp_xxxxxxxx…`, `AKIAIOSFODNN7EXAMPLE`, `sk-…****`). Only what no
/// random body holds counts: a word like `todo` turns up by chance in
/// long random tokens.
pub(super) fn is_placeholder_token(token: &str) -> bool {
    let lower = token.to_ascii_lowercase();
    lower.contains("example")
        || lower.starts_with("[redacted")
        || few_distinct(token)
        || has_run(token, 5, b"xX*.#")
        || token.contains('\u{2022}')
}

/// Whether `v` holds `n` equal bytes in a row, of `of`.
fn has_run(v: &str, n: usize, of: &[u8]) -> bool {
    let mut run = 0;
    let mut prev = 0u8;
    for b in v.bytes() {
        run = if b == prev { run + 1 } else { 1 };
        prev = b;
        if run >= n && of.contains(&b) {
            return true;
        }
    }
    false
}

/// Whether `value` is a digest, a lockfile hash or a public key.
pub(super) fn is_public(value: &str) -> bool {
    let lower = value.trim_start().to_ascii_lowercase();
    PUBLIC_PREFIXES.iter().any(|p| lower.starts_with(p))
}

/// `aaaaaaaa`, `12121212`: at most three distinct characters.
fn few_distinct(v: &str) -> bool {
    let mut seen: Vec<u8> = Vec::with_capacity(4);
    for b in v.bytes() {
        if !seen.contains(&b) {
            if seen.len() == 3 {
                return false;
            }
            seen.push(b);
        }
    }
    true
}

/// `12345678`, `abcdefgh`: an ascending run of the alphabet or digits.
fn is_sequence(lower: &str) -> bool {
    lower.len() >= 6
        && lower
            .as_bytes()
            .windows(2)
            .all(|w| w[1] == w[0].wrapping_add(1))
}

/// A UUID (any case).
pub(super) fn is_uuid(v: &str) -> bool {
    let b = v.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// A hex digest of a usual length (MD5, SHA-1/git, SHA-256, SHA-512).
pub(super) fn is_hex_digest(v: &str) -> bool {
    matches!(v.len(), 32 | 40 | 64 | 128) && v.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Whether an unquoted value is code rather than a literal: a variable, a
/// call, an index, a type, a member path (`os.environ`, `self.token`,
/// `Token::new`, `Option<String>`, `&str`).
pub(super) fn is_code(v: &str) -> bool {
    let Some(first) = v.bytes().next() else {
        return true;
    };
    if b"$@%&*([{<!#~`=\\|^".contains(&first) {
        return true;
    }
    if v.contains(['(', ')', '[', ']', '{', '}', '<', '>'])
        || v.contains("::")
        || v.contains("->")
        || v.contains("=>")
    {
        return true;
    }
    is_member_path(v)
}

/// `a.b`, `settings.SECRET_KEY`, `process.env.TOKEN`: identifiers joined
/// by dots.
fn is_member_path(v: &str) -> bool {
    v.contains('.')
        && v.split('.').all(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

/// A file path (`/etc/ssl/key.pem`, `./secrets/token.txt`, `~/.npmrc`,
/// `C:\keys\id`): short word-like segments, which random tokens with a
/// slash do not have.
pub(super) fn is_path(v: &str) -> bool {
    let rest = v
        .strip_prefix("~/")
        .or_else(|| v.strip_prefix("./"))
        .or_else(|| v.strip_prefix("../"))
        .or_else(|| v.strip_prefix('/'));
    let windows = v.len() > 3 && v.as_bytes()[1] == b':' && v.as_bytes()[2] == b'\\';
    let Some(rest) = rest.or(if windows { Some(&v[3..]) } else { None }) else {
        return false;
    };
    let segments: Vec<&str> = rest.split(['/', '\\']).filter(|s| !s.is_empty()).collect();
    !segments.is_empty()
        && segments.iter().all(|s| {
            s.len() <= 40
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._-@".contains(&b))
        })
        && (segments.len() >= 2 || segments.iter().any(|s| s.contains('.')))
        && segments.iter().map(|s| s.len()).sum::<usize>() / segments.len() <= 16
}

/// A URL that carries no password (`https://host/path?x=1`). Credentials
/// in a URL are the URL rules' business.
pub(super) fn is_plain_url(v: &str) -> bool {
    let Some((scheme, rest)) = v.split_once("://") else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    !scheme.is_empty()
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+.-".contains(&b))
        && !authority.contains('@')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders() {
        for v in [
            "AKIAIOSFODNN7EXAMPLE",
            "xxxxxxxxxxxxxxxx",
            "changeme",
            "<your-token>",
            "${GITHUB_TOKEN}",
            "$TOKEN",
            "$(gh auth token)",
            "{{ .Values.token }}",
            "%API_KEY%",
            "[REDACTED:github-pat:12ab]",
            "your_api_key_here",
            "********",
            "aaaaaaaa",
            "12345678",
            "None",
        ] {
            assert!(is_placeholder(v), "{v}");
        }
        for v in ["hunter2x", "sk_test_4eC39HqLyjWDarjtT1zdp7dc", "q8Vt2mZk"] {
            assert!(!is_placeholder(v), "{v}");
        }
    }

    #[test]
    fn code_paths_urls() {
        for v in [
            "os.environ",
            "process.env.TOKEN",
            "self.token",
            "Token::new",
            "getToken()",
            "&str",
            "Option<String>",
        ] {
            assert!(is_code(v), "{v}");
        }
        assert!(!is_code("hunter2"));
        assert!(!is_code("abc.def+ghi/jkl"));
        for v in [
            "/etc/ssl/private/server.key",
            "~/.npmrc",
            "./secrets/token.txt",
        ] {
            assert!(is_path(v), "{v}");
        }
        assert!(!is_path("/9j4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgH"));
        assert!(is_plain_url("https://registry.npmjs.org/react"));
        assert!(!is_plain_url("https://u:p@host/x"));
    }

    #[test]
    fn public_shapes() {
        assert!(is_public(
            "sha512-Xo3OuJ+PWIYkTBmr2N9Zl5bYQyJ6fR5/aYv1Bn8UTHQ=="
        ));
        assert!(is_public("sha256:4b2f5c1e9d0a"));
        assert!(is_public("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI"));
        assert!(is_uuid("123e4567-e89b-12d3-a456-426614174000"));
        assert!(is_hex_digest("3f2a9c0d1e4b5a6978877665544332211000ffee"));
    }
}
