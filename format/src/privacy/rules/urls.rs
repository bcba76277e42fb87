//! Credentials in URLs, HTTP headers and command lines.

use super::Family::Urls as F;
use std::ops::Range;

use super::{Detect, Rule, token};

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
