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
        &["pass", "pwd", "pw"],
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
];
