//! Generic assignments: a key named like a secret, a value shaped like one
//! ([`super::super::names`] and [`super::super::value`] decide both). The
//! keywords only point the scanner at candidate keys.

use super::Family::Generic as F;
use super::{Detect, NameClass, Rule};

const fn generic(
    id: &'static str,
    keywords: &'static [&'static str],
    class: NameClass,
    sample: &'static str,
) -> Rule {
    Rule {
        id,
        family: F,
        keywords,
        detect: Detect::Generic(class),
        sample,
    }
}

pub(super) const RULES: &[Rule] = &[
    generic(
        "generic-password",
        &["pass", "pwd", "pw", "kennwort", "contrasena"],
        NameClass::Password,
        "DB_PASSWORD=«{a:16}»",
    ),
    generic(
        "generic-secret",
        &["secret"],
        NameClass::Secret,
        "client_secret: \"«{w:40}»\"",
    ),
    generic(
        "generic-token",
        &["token"],
        NameClass::Token,
        "{\"access_token\": \"«{a:40}»\"}",
    ),
    generic(
        "generic-api-key",
        &["key"],
        NameClass::ApiKey,
        "X-Api-Key: «{a:32}»",
    ),
    generic(
        "authorization-header",
        &["auth"],
        NameClass::Auth,
        "Authorization: Basic «{b:40}»",
    ),
    generic(
        "generic-credential",
        &["cred"],
        NameClass::Credential,
        "credentials = \"«{a:32}»\"",
    ),
    generic("generic-key", &["key"], NameClass::Key, "ACME_KEY=«{a:32}»"),
    // a password said in words: "the password is …" (a value that looks
    // random, without the sentence's closing punctuation; "the password
    // is required" is not one)
    super::token(
        "password-in-text",
        F,
        &["password", "passwd", "passphrase"],
        r#"(?i:password|passwd|passphrase)\s+(?:is|was|=|:)\s+["'`]?([^\s"'`]{7,63}[^\s"'`.,;:!?)])"#,
        "the password is «{a:16}»",
    )
    .told(),
];
