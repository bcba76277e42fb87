//! Personal data, redacted only when `.memlog.yaml` opts in (`privacy.pii:
//! true`): email addresses, phone numbers and IP addresses. Each is read by
//! hand, with the boundaries that keep ordinary text whole (a version such
//! as `1.2.3`, a date, a Rust path `a::b`, an npm `pkg@1.2.3`, a clone URL
//! `git@github.com:…`). The configured names are matched in
//! [`super::super::PrivacyFilter`], which holds the list.
//!
//! These rules have no keywords: the prefilter does not gate them, they run
//! on every text when enabled.

use std::net::Ipv6Addr;
use std::ops::Range;

use super::Family::Pii as F;
use super::{Detect, Rule};

pub(in crate::privacy) const RULES: &[Rule] = &[
    Rule {
        id: "email",
        family: F,
        keywords: &[],
        detect: Detect::Scan(emails),
        sample: "«{x:8}.{x:6}@{x:10}-mail.net»",
    },
    Rule {
        id: "phone-number",
        family: F,
        keywords: &[],
        detect: Detect::Scan(phones),
        sample: "«+1 415 {d:3} {d:4}»",
    },
    Rule {
        id: "ip-address",
        family: F,
        keywords: &[],
        detect: Detect::Scan(ip_addresses),
        sample: "«203.0.113.{d:2}»",
    },
];

/// Whether `b` glues to a word, so that a match beside it is part of
/// something longer.
fn word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Domains reserved for documentation and tests (RFC 2606, RFC 6761):
/// addresses there are examples, not people.
fn reserved_domain(domain: &str) -> bool {
    let d = domain.to_ascii_lowercase();
    ["example.com", "example.org", "example.net"].contains(&d.as_str())
        || [".example", ".test", ".invalid", ".localhost"]
            .iter()
            .any(|tld| d.ends_with(tld))
        || [".example.com", ".example.org", ".example.net"]
            .iter()
            .any(|s| d.ends_with(s))
}

/// Email addresses: a local part, `@`, and a domain of dotted labels whose
/// last is letters. Not `git@host:path` (a clone URL), not a method call
/// (`x@w.transpose()`), not an example domain.
fn emails(text: &str, out: &mut Vec<Range<usize>>) {
    let b = text.as_bytes();
    let local_byte = |c: u8| c.is_ascii_alphanumeric() || b"._%+-".contains(&c);
    for at in memchr::memchr_iter(b'@', b) {
        let mut start = at;
        while start > 0 && at - start < 64 && local_byte(b[start - 1]) {
            start -= 1;
        }
        while start < at && b[start] == b'.' {
            start += 1;
        }
        if start == at || (start > 0 && b[start - 1] == b'@') {
            continue;
        }
        let mut end = at + 1;
        while end < b.len()
            && end - at <= 253
            && (b[end].is_ascii_alphanumeric() || b"-.".contains(&b[end]))
        {
            end += 1;
        }
        while end > at + 1 && matches!(b[end - 1], b'.' | b'-') {
            end -= 1;
        }
        let domain = &text[at + 1..end];
        let tld = domain.rsplit('.').next().unwrap_or("");
        let labels_ok = domain
            .split('.')
            .all(|l| !l.is_empty() && !l.starts_with('-') && !l.ends_with('-'));
        if !domain.contains('.')
            || !labels_ok
            || !(2..=24).contains(&tld.len())
            || !tld.bytes().all(|c| c.is_ascii_alphabetic())
            || reserved_domain(domain)
            || b.get(end) == Some(&b'(')
            || (&text[start..at] == "git" && b.get(end) == Some(&b':'))
        {
            continue;
        }
        out.push(start..end);
    }
}

/// Phone numbers: international (`+` and 8–15 digits in groups, `+82 10
/// 1234 5678`, `+14155550123`) or national in groups joined by `-` or `.`,
/// or with an area code in parentheses (`010-1234-5678`, `415.555.0123`,
/// `(415) 555-0123`): 9–11 digits, 2–4 groups, the last of 4. Dates,
/// versions, times, ids and UUIDs do not have that shape.
fn phones(text: &str, out: &mut Vec<Range<usize>>) {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let starts = (b[i] == b'+' && b.get(i + 1).is_some_and(u8::is_ascii_digit))
            || (b[i] == b'(' && b.get(i + 1).is_some_and(u8::is_ascii_digit))
            || b[i].is_ascii_digit();
        let free = i == 0 || !(word_byte(b[i - 1]) || b".-/:+#@$%,".contains(&b[i - 1]));
        if starts
            && free
            && let Some(end) = phone_at(b, i)
        {
            out.push(i..end);
            i = end;
            continue;
        }
        // skip the rest of a run of digits: a number is judged from its start
        if b[i].is_ascii_digit() {
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
}

/// The end of the phone number starting at `start`, if one does.
fn phone_at(b: &[u8], start: usize) -> Option<usize> {
    let plus = b[start] == b'+';
    let mut p = start + usize::from(plus);
    let mut groups: Vec<usize> = Vec::new();
    let mut paren = false;
    let mut sep: Option<u8> = None;
    let mut end = p;
    loop {
        // a group: digits, or digits in parentheses (an area code)
        let open = b.get(p) == Some(&b'(');
        if open {
            if paren || groups.len() > usize::from(plus) {
                break;
            }
            p += 1;
        }
        let digits_start = p;
        while p < b.len() && b[p].is_ascii_digit() && p - digits_start < 15 {
            p += 1;
        }
        let n = p - digits_start;
        if n == 0 {
            break;
        }
        if open {
            if b.get(p) != Some(&b')') {
                return None;
            }
            p += 1;
            paren = true;
        }
        groups.push(n);
        end = p;
        // a separator, then the next group
        let Some(&c) = b.get(p) else { break };
        let after_paren = open;
        let next_starts = |q: usize| {
            b.get(q)
                .is_some_and(|&d| d.is_ascii_digit() || (d == b'(' && !paren))
        };
        if after_paren && next_starts(p) {
            continue;
        }
        if !matches!(c, b' ' | b'-' | b'.') || !next_starts(p + 1) {
            break;
        }
        // after an area code in parentheses or a country code, any
        // separator; the groups after it share one
        if !after_paren && (!plus || groups.len() != 1) {
            match sep {
                Some(s) if s != c => return None,
                _ => sep = Some(c),
            }
        }
        p += 1;
    }
    if b.get(end).is_some_and(|&c| word_byte(c) || c == b'@') {
        return None;
    }
    let digits: usize = groups.iter().sum();
    let last = *groups.last()?;
    let ok = if plus {
        (8..=15).contains(&digits) && (groups.len() == 1 || (1..=3).contains(&groups[0]))
    } else {
        (9..=11).contains(&digits)
            && (2..=4).contains(&groups.len())
            && last == 4
            && (2..=4).contains(&groups[0])
            && (paren || matches!(sep, Some(b'-' | b'.')))
    };
    ok.then_some(end)
}

/// IP addresses: dotted IPv4 (not loopback, `0.0.0.0` nor a netmask
/// `255.…`; not part of a longer dotted number, which is a version) and
/// IPv6 with `::` or all eight groups (not `::1`; a Rust path `a::b` or a
/// time `10:15:00` is not one).
fn ip_addresses(text: &str, out: &mut Vec<Range<usize>>) {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let free = i == 0 || !(word_byte(b[i - 1]) || b[i - 1] == b'.');
        if b[i].is_ascii_digit()
            && free
            && let Some(end) = ipv4_at(b, i)
        {
            out.push(i..end);
            i = end;
            continue;
        }
        if (b[i].is_ascii_hexdigit() || b[i] == b':') && (i == 0 || !word_byte(b[i - 1])) {
            let mut end = i;
            while end < b.len() && (b[end].is_ascii_hexdigit() || b[end] == b':') {
                end += 1;
            }
            if let Some(range) = ipv6_in(b, i, end) {
                out.push(range);
            }
            i = end.max(i + 1);
            continue;
        }
        i += 1;
    }
}

/// The end of the IPv4 address starting at `start`, if one does.
fn ipv4_at(b: &[u8], start: usize) -> Option<usize> {
    let mut octets = [0u32; 4];
    let mut p = start;
    for (k, octet) in octets.iter_mut().enumerate() {
        if k > 0 {
            if b.get(p) != Some(&b'.') {
                return None;
            }
            p += 1;
        }
        let from = p;
        while p < b.len() && b[p].is_ascii_digit() && p - from < 4 {
            *octet = *octet * 10 + u32::from(b[p] - b'0');
            p += 1;
        }
        if p == from || p - from > 3 || *octet > 255 {
            return None;
        }
    }
    // a fifth part (`1.2.3.4.5`) or a word glued on is something else
    let glued = b.get(p).is_some_and(|&c| word_byte(c))
        || (b.get(p) == Some(&b'.') && b.get(p + 1).is_some_and(u8::is_ascii_digit));
    let ordinary = octets == [0, 0, 0, 0] || octets[0] == 127 || octets[0] == 255;
    (!glued && !ordinary).then_some(p)
}

/// The IPv6 address that is the run `b[start..end]` of hex digits and
/// colons (a trailing colon trimmed), if it is one.
fn ipv6_in(b: &[u8], start: usize, mut end: usize) -> Option<Range<usize>> {
    // a word glued on, or an IPv4 tail (`::ffff:1.2.3.4`, not read)
    if b.get(end).is_some_and(|&c| word_byte(c))
        || (b.get(end) == Some(&b'.') && b.get(end + 1).is_some_and(u8::is_ascii_digit))
    {
        return None;
    }
    while end > start && b[end - 1] == b':' && !b[start..end].ends_with(b"::") {
        end -= 1;
    }
    let run = std::str::from_utf8(&b[start..end]).ok()?;
    let groups = run.split(':').filter(|g| !g.is_empty()).count();
    let shaped = (run.contains("::") && groups >= 2) || groups == 8;
    if !shaped || !run.bytes().any(|c| c.is_ascii_digit()) {
        return None;
    }
    let addr: Ipv6Addr = run.parse().ok()?;
    (!addr.is_loopback() && !addr.is_unspecified()).then_some(start..end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(scan: fn(&str, &mut Vec<Range<usize>>), text: &str) -> Vec<String> {
        let mut out = Vec::new();
        scan(text, &mut out);
        out.into_iter().map(|r| text[r].to_string()).collect()
    }

    #[test]
    fn emails_and_not() {
        for (text, want) in [
            (
                "mail jane.doe+dev@corp-mail.co.uk today",
                vec!["jane.doe+dev@corp-mail.co.uk"],
            ),
            ("Author: Jane Doe <jane@acme.io>", vec!["jane@acme.io"]),
            (
                "write to Kim.Min-Su@univ.ac.kr.",
                vec!["Kim.Min-Su@univ.ac.kr"],
            ),
            (
                "12345+jdoe@users.noreply.github.com",
                vec!["12345+jdoe@users.noreply.github.com"],
            ),
        ] {
            assert_eq!(found(emails, text), want, "{text}");
        }
        for text in [
            "git clone git@github.com:org/repo.git",
            "npm i lodash@4.17.21 @types/node",
            "@app.route('/') and @property",
            "y = x@w.transpose()",
            "user@localhost and admin@example.com, a@b.test",
            "a @ b.com",
        ] {
            assert!(found(emails, text).is_empty(), "{text}");
        }
    }

    #[test]
    fn phones_and_not() {
        for (text, want) in [
            ("call +1 415 555 0123 now", "+1 415 555 0123"),
            ("+82 10-1234-5678", "+82 10-1234-5678"),
            ("tel: 010-1234-5678", "010-1234-5678"),
            ("office 02-312-4567.", "02-312-4567"),
            ("(415) 555-0123", "(415) 555-0123"),
            ("415.555.0123", "415.555.0123"),
            ("+14155550123", "+14155550123"),
            ("+44 (20) 7946 0958", "+44 (20) 7946 0958"),
        ] {
            assert_eq!(found(phones, text), vec![want], "{text}");
        }
        for text in [
            "2026-03-04T10:15:00Z",
            "04-03-2026 and 2026.03.04",
            "version 1.22.3 and 10.0.19041.1",
            "id 4211 and 1234567890123",
            "550e8400-e29b-41d4-a716-446655440000",
            "ports 8080-9090, 1-2-3-4",
            "123 456 7890 rows",
            "sha 1234-5678-9012",
            "a+1-555-0123",
        ] {
            assert!(
                found(phones, text).is_empty(),
                "{text}: {:?}",
                found(phones, text)
            );
        }
    }

    #[test]
    fn ips_and_not() {
        for (text, want) in [
            ("ssh deploy@10.0.4.17 -p 22", vec!["10.0.4.17"]),
            (
                "client 203.0.113.9:443 and 192.168.1.20/24",
                vec!["203.0.113.9", "192.168.1.20"],
            ),
            (
                "from 2001:db8:85a3::8a2e:370:7334 via fe80::1ff:fe23:4567:890a",
                vec!["2001:db8:85a3::8a2e:370:7334", "fe80::1ff:fe23:4567:890a"],
            ),
            (
                "[2001:0db8:0000:0000:0000:ff00:0042:8329]",
                vec!["2001:0db8:0000:0000:0000:ff00:0042:8329"],
            ),
        ] {
            assert_eq!(found(ip_addresses, text), want, "{text}");
        }
        for text in [
            "listening on 0.0.0.0:8080 and 127.0.0.1, mask 255.255.255.0",
            "version 1.2.3, 10.0.19041.1, v1.2.3.4, 1.2.3.4.5",
            "std::fmt::Display, Vec::<u8>::new(), abc::def, a::b",
            "at 10:15:00, mac 00:1a:2b:3c:4d:5e, ::1 and ::",
            "300.1.2.3",
        ] {
            assert!(
                found(ip_addresses, text).is_empty(),
                "{text}: {:?}",
                found(ip_addresses, text)
            );
        }
    }
}
