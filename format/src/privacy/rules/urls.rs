//! Credentials in URLs, HTTP headers and command lines.

use super::Family::Urls as F;
use super::{Detect, Rule, context_token};

pub(super) const RULES: &[Rule] = &[
    context_token(
        "url-basic-auth",
        F,
        &["://"],
        r"\b[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s:/@'\x22`<>]{0,100}:([^\s/'\x22`<>]{1,200})@[A-Za-z0-9\[.-]",
        "https://deploy:«{a:24}»@git.internal.net/team/app.git",
    ),
    context_token(
        "curl-auth-user",
        F,
        &["curl"],
        r"\bcurl\b[^\n]*?\s(?:-u|--user)(?:\s+|=)?['\x22]?[^\s'\x22:]{0,100}:([^\s'\x22]{1,200})",
        "curl -s -u admin:«{a:16}» https://api.internal.net/v1/items",
    ),
    context_token(
        "curl-auth-header",
        F,
        &["curl"],
        r"(?i)\bcurl\b[^\n]*?(?:-H|--header)\s*['\x22]?(?:Authorization|Proxy-Authorization|X-API-Key|X-Auth-Token|X-Api-Token|Private-Token|X-Access-Token)\s*:\s*(?:(?:Bearer|Basic|Token|Bot|Digest)\s+)?([^\s'\x22]{8,})",
        "curl -sS -H \"Authorization: Bearer «{w:48}»\" https://api.internal.net/v1/me",
    ),
    Rule {
        id: "bearer-token",
        family: F,
        keywords: &["bearer"],
        detect: Detect::Token {
            pattern: r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]{16,}=*)",
            mixed: true,
            context: true,
        },
        sample: "the call needs Bearer «{b:48}» in the header",
    },
    context_token(
        "netrc-password",
        F,
        &["machine"],
        r"\bmachine\s+\S+\s+login\s+\S+\s+password\s+(\S+)",
        "machine api.internal.net login deploy password «{a:20}»",
    ),
    context_token(
        "sshpass-password",
        F,
        &["sshpass"],
        r"\bsshpass\s+-p\s*['\x22]?([^\s'\x22]+)",
        "sshpass -p '«{a:16}»' ssh deploy@10.0.0.4",
    ),
];
