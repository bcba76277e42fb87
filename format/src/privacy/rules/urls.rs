//! Credentials in URLs, HTTP headers and command lines.

use super::Family::Urls as F;
use std::ops::Range;

use super::{Detect, NameClass, Rule, token};

pub(super) const RULES: &[Rule] = &[
    Rule {
        id: "url-basic-auth",
        family: F,
        keywords: &["://"],
        detect: Detect::Scan(other_url_passwords),
        sample: "https://deploy:«{a:24}»@git.internal.net/team/app.git",
    },
    token(
        "curl-auth-user",
        F,
        &["curl"],
        r"\bcurl\b[^\n]*?\s(?:-u|--user)(?:\s+|=)?['\x22]?[^\s'\x22:]{0,100}:([^\s'\x22]{1,200})",
        "curl -s -u admin:«{a:16}» https://api.internal.net/v1/items",
    ).context(),
    token(
        "curl-auth-header",
        F,
        &["curl"],
        r"(?i)\bcurl\b[^\n]*?(?:-H|--header)\s*['\x22]?(?:Authorization|Proxy-Authorization|X-API-Key|X-Auth-Token|X-Api-Token|Private-Token|X-Access-Token)\s*:\s*(?:(?:Bearer|Basic|Token|Bot|Digest)\s+)?([^\s'\x22]{8,})",
        "curl -sS -H \"Authorization: Bearer «{w:48}»\" https://api.internal.net/v1/me",
    ).context(),
    token(
        "bearer-token",
        F,
        &["bearer"],
        r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]{16,}=*)",
        "the call needs Bearer «{b:48}» in the header",
    )
    .mixed()
    .context(),
    // session cookies: neither gitleaks nor detect-secrets has a rule,
    // and field test 12c found them kept whole
    Rule {
        id: "http-cookie",
        family: F,
        keywords: &["cookie", "curl"],
        detect: Detect::Scan(cookie_values),
        sample: "curl -H 'Cookie: sessionid=«{h:32}»; theme=dark' https://app.internal.net/",
    },
    token(
        "netrc-password",
        F,
        &["machine"],
        r"\bmachine\s+\S+\s+login\s+\S+\s+password\s+(\S+)",
        "machine api.internal.net login deploy password «{a:20}»",
    ).context(),
    token(
        "sshpass-password",
        F,
        &["sshpass"],
        r"\bsshpass\s+-p\s*['\x22]?([^\s'\x22]+)",
        "sshpass -p '«{a:16}»' ssh deploy@10.0.0.4",
    ).context(),
];

/// Shortest cookie value taken for a secret: a session id is longer, and
/// `theme=dark`, `lang=en-US` are not.
const MIN_COOKIE: usize = 16;

/// The secret-shaped values of cookies: those of a `Cookie:` header (every
/// one), of `Set-Cookie:` (the first: the rest are attributes), of
/// `--cookie`, `curl -b` and `document.cookie =`. A value is taken when it
/// is as random as a token's (a session id, a signed or JWT-like value),
/// so prose about cookies and `theme=dark` stay as they are.
fn cookie_values(text: &str, out: &mut Vec<Range<usize>>) {
    let b = text.as_bytes();
    let words =
        memchr::memmem::find_iter(b, b"ookie").chain(memchr::memmem::find_iter(b, b"OOKIE"));
    for at in words.filter_map(|i| i.checked_sub(1)) {
        let end = at + "cookie".len();
        let whole_word = b[at].eq_ignore_ascii_case(&b'c')
            && (at == 0 || !b[at - 1].is_ascii_alphanumeric())
            && !b
                .get(end)
                .is_some_and(|c| c.is_ascii_alphanumeric() || b"_-".contains(c));
        if !whole_word {
            continue;
        }
        let set = at >= 4 && b[at - 4..at].eq_ignore_ascii_case(b"set-");
        let flag = at >= 2 && &b[at - 2..at] == b"--";
        if let Some(p) = cookie_list_start(b, end, flag) {
            cookie_pairs(b, p, set, out);
        }
    }
    // curl's short flag: `curl -b 'sessionid=…'` (a file name has no `=`)
    for at in memchr::memmem::find_iter(b, b"curl") {
        let line_end = memchr::memchr(b'\n', &b[at..]).map_or(b.len(), |i| at + i);
        for flag in memchr::memmem::find_iter(&b[at..line_end], b" -b").map(|i| at + i + 3) {
            let mut p = flag;
            while p < line_end && b[p] == b' ' {
                p += 1;
            }
            if p == flag
                && b.get(p)
                    .is_some_and(|c| !b"'\"".contains(c) && !c.is_ascii_alphanumeric())
            {
                continue;
            }
            if matches!(b.get(p), Some(b'\'' | b'"')) {
                p += 1;
            }
            cookie_pairs(b, p, false, out);
        }
    }
}

/// Where the cookies named after `cookie` (ending at `end`) start: past
/// `:` or `=` (a header, a JSON key, `--cookie=`, `document.cookie =`) or,
/// for the `--cookie` flag, blanks; then past an opening quote.
fn cookie_list_start(b: &[u8], end: usize, flag: bool) -> Option<usize> {
    let mut p = end;
    if matches!(b.get(p), Some(b'"' | b'\'')) {
        p += 1;
    }
    let blanks = |p: &mut usize| {
        while b.get(*p).is_some_and(|c| *c == b' ' || *c == b'\t') {
            *p += 1;
        }
    };
    let before = p;
    blanks(&mut p);
    match b.get(p) {
        Some(b':' | b'=') => {
            p += 1;
            blanks(&mut p);
        }
        _ if flag && p > before => {}
        _ => return None,
    }
    if b.get(p) == Some(&b'\\') && matches!(b.get(p + 1), Some(b'"')) {
        p += 2;
    } else if matches!(b.get(p), Some(b'"' | b'\'')) {
        p += 1;
    }
    Some(p)
}

/// The secret-shaped values of the `name=value; …` list at `p` (only the
/// first pair when `first_only`).
fn cookie_pairs(b: &[u8], mut p: usize, first_only: bool, out: &mut Vec<Range<usize>>) {
    let ends_name = |c: u8| c.is_ascii_whitespace() || b"=;,'\"\\".contains(&c);
    let ends_value = |c: u8| c.is_ascii_whitespace() || b";,'\"\\".contains(&c);
    loop {
        let name = p;
        while p < b.len() && p - name < 128 && !ends_name(b[p]) {
            p += 1;
        }
        if p == name || b.get(p) != Some(&b'=') {
            return;
        }
        p += 1;
        let quoted = b.get(p) == Some(&b'"');
        if quoted {
            p += 1;
        }
        let value = p;
        while p < b.len() && p - value < 4096 && !ends_value(b[p]) {
            p += 1;
        }
        if p - value >= MIN_COOKIE
            && std::str::from_utf8(&b[value..p])
                .is_ok_and(|v| crate::privacy::value::is_secret(v, NameClass::Token, true))
        {
            out.push(value..p);
        }
        if quoted && b.get(p) == Some(&b'"') {
            p += 1;
        }
        while b.get(p) == Some(&b' ') {
            p += 1;
        }
        if first_only || b.get(p) != Some(&b';') {
            return;
        }
        p += 1;
        while b.get(p) == Some(&b' ') {
            p += 1;
        }
    }
}

/// Database schemes, whose URLs are the databases family's.
pub(super) const DATABASE_SCHEMES: &[&str] = &[
    "postgres",
    "postgresql",
    "mysql",
    "mariadb",
    "mongodb",
    "mongodb+srv",
    "redis",
    "rediss",
    "amqp",
    "amqps",
    "mssql",
    "sqlserver",
    "clickhouse",
    "cockroachdb",
    "couchdb",
    "neo4j",
    "neo4j+s",
    "cassandra",
    "memcached",
    "snowflake",
];

/// The passwords of `scheme://user:password@host` URLs in `text` whose
/// scheme `wanted` accepts. Read by hand rather than by an expression:
/// `://` is in most texts, and compiling one cost a hook more than the
/// rest of the filter.
pub(super) fn url_passwords(
    text: &str,
    wanted: impl Fn(&str) -> bool,
    out: &mut Vec<Range<usize>>,
) {
    let b = text.as_bytes();
    let stops = |c: u8| c.is_ascii_whitespace() || b"/'\"`<>".contains(&c);
    for at in memchr::memmem::find_iter(b, b"://") {
        let mut start = at;
        while start > 0 && at - start < 20 && {
            let c = b[start - 1];
            c.is_ascii_alphanumeric() || b"+.-".contains(&c)
        } {
            start -= 1;
        }
        let scheme = &text[start..at];
        if !scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            || (start > 0 && b[start - 1].is_ascii_alphanumeric())
            || !wanted(&scheme.to_ascii_lowercase())
        {
            continue;
        }
        // the authority: up to a slash, a space or a quote
        let from = at + 3;
        let mut end = from;
        while end < b.len() && end - from < 300 && !stops(b[end]) {
            end += 1;
        }
        let authority = &b[from..end];
        // the last @ ends the user information; the first : in it starts the password
        let Some(last_at) = authority.iter().rposition(|&c| c == b'@') else {
            continue;
        };
        let Some(colon) = authority[..last_at].iter().position(|&c| c == b':') else {
            continue;
        };
        let host_starts = authority
            .get(last_at + 1)
            .is_some_and(|c| c.is_ascii_alphanumeric() || b"[.-".contains(c));
        if colon + 1 < last_at && host_starts && !authority[..colon].contains(&b'@') {
            out.push(from + colon + 1..from + last_at);
        }
    }
}

/// [`url_passwords`] of any scheme but a database's.
fn other_url_passwords(text: &str, out: &mut Vec<Range<usize>>) {
    url_passwords(text, |s| !DATABASE_SCHEMES.contains(&s), out);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn passwords(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        url_passwords(text, |_| true, &mut out);
        out.into_iter().map(|r| &text[r]).collect()
    }

    #[test]
    fn reads_the_password_of_a_url() {
        assert_eq!(
            passwords("https://deploy:s3cr3t@git.internal.net/a"),
            ["s3cr3t"]
        );
        // the last @ ends the user information, the first : starts the password
        assert_eq!(passwords("redis://u:p@ss:w@rd@cache:6379"), ["p@ss:w@rd"]);
        assert_eq!(passwords("see \"amqp://guest:pw99@mq\" there"), ["pw99"]);
        for none in [
            "https://git.internal.net/team/app.git",
            "ssh://git@github.com/org/repo",
            "https://host:8080/path@x",
            "https://u:@host",
            "://u:p@host",
        ] {
            assert!(passwords(none).is_empty(), "{none}");
        }
    }

    #[test]
    fn database_schemes_are_the_databases_rule() {
        let mut out = Vec::new();
        other_url_passwords("postgres://app:pw12345@db/app", &mut out);
        assert!(out.is_empty());
        other_url_passwords("ftp://app:pw12345@files/app", &mut out);
        assert_eq!(out.len(), 1);
    }
}
