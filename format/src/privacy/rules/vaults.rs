//! Secret managers.

use super::Family::Vaults as F;
use super::{Rule, assigned, token};

pub(super) const RULES: &[Rule] = &[
    token(
        "1password-secret-key",
        F,
        &["A3-"],
        r"\b(A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5})\b",
        "A3-{u:6}-{u:6}-{u:5}-{u:5}-{u:5}-{u:5}",
    ),
    token(
        "1password-service-account-token",
        F,
        &["ops_eyJ"],
        r"\b(ops_eyJ[A-Za-z0-9+/_-]{100,}={0,3})",
        "ops_eyJ{b:300}",
    ),
    token(
        "vault-service-token",
        F,
        &["hvs."],
        r"\b(hvs\.[A-Za-z0-9_-]{90,120})",
        "hvs.{w:95}",
    ),
    token(
        "vault-batch-token",
        F,
        &["hvb."],
        r"\b(hvb\.[A-Za-z0-9_-]{138,300})",
        "hvb.{w:150}",
    ),
    assigned(
        "vault-legacy-token",
        F,
        &["vault"],
        "s\\.[A-Za-z0-9]{24}",
        "VAULT_TOKEN=«s.{a:24}»",
    ),
    token(
        "doppler-api-token",
        F,
        &[
            "dp.pt.",
            "dp.st.",
            "dp.sa.",
            "dp.ct.",
            "dp.scim.",
            "dp.audit.",
        ],
        r"\b(dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44})\b",
        "dp.pt.{a:43}",
    ),
    assigned(
        "infisical-token",
        F,
        &["infisical"],
        "st\\.[A-Za-z0-9.-]{40,}",
        "INFISICAL_TOKEN=«st.{l:36}.{h:32}»",
    ),
];
