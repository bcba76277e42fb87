//! Databases and data platforms.

use super::Family::Databases as F;
use std::ops::Range;

use super::urls::{DATABASE_SCHEMES, url_passwords};
use super::{Detect, Rule, assigned, token};

pub(super) const RULES: &[Rule] = &[
    Rule {
        id: "database-url-password",
        family: F,
        keywords: &[
            "postgres",
            "mysql",
            "mariadb",
            "mongodb",
            "redis",
            "amqp",
            "mssql",
            "sqlserver",
            "clickhouse",
            "cockroach",
            "couchdb",
            "neo4j",
            "cassandra",
            "memcached",
            "snowflake",
        ],
        detect: Detect::Scan(database_url_passwords),
        sample: "postgres://app_user:«{a:20}»@db.internal:5432/app",
    },
    token(
        "planetscale-api-token",
        F,
        &["pscale_tkn_"],
        r"\b(pscale_tkn_[A-Za-z0-9_=.-]{32,64})",
        "pscale_tkn_{w:43}",
    ),
    token(
        "planetscale-oauth-token",
        F,
        &["pscale_oauth_"],
        r"\b(pscale_oauth_[A-Za-z0-9_=.-]{32,64})",
        "pscale_oauth_{w:43}",
    ),
    token(
        "planetscale-password",
        F,
        &["pscale_pw_"],
        r"\b(pscale_pw_[A-Za-z0-9_=.-]{32,64})",
        "pscale_pw_{w:43}",
    ),
    token(
        "clickhouse-cloud-api-secret-key",
        F,
        &["4b1d"],
        r"\b(4b1d[A-Za-z0-9]{38})\b",
        "4b1d{a:38}",
    ),
    token(
        "databricks-api-token",
        F,
        &["dapi"],
        r"\b(dapi[a-f0-9]{32}(?:-[0-9])?)\b",
        "dapi{h:32}",
    ),
    token(
        "supabase-access-token",
        F,
        &["sbp_"],
        r"\b(sbp_[a-f0-9]{40})\b",
        "sbp_{h:40}",
    ),
    assigned(
        "confluent-secret-key",
        F,
        &["confluent+secret"],
        "[A-Za-z0-9+/]{64}",
        "CONFLUENT_CLOUD_API_SECRET=«{a:64}»",
    ),
    assigned(
        "confluent-access-token",
        F,
        &["confluent"],
        "[A-Za-z0-9]{16}",
        "CONFLUENT_CLOUD_API_KEY=«{u:16}»",
    ),
    token(
        "redis-requirepass",
        F,
        &["requirepass"],
        r"\brequirepass\s+['\x22]?([^\s'\x22]{4,})",
        "requirepass «{a:24}»",
    )
    .context(),
    token(
        "mysql-cli-password",
        F,
        &["mysql"],
        r"\bmysql(?:dump|admin|sh)?\b[^\n]*?\s-p([^\s'\x22-][^\s'\x22]{3,})",
        "mysql -h db.internal -u root -p«{a:16}» app",
    )
    .context(),
];

/// [`url_passwords`] of database schemes.
fn database_url_passwords(text: &str, out: &mut Vec<Range<usize>>) {
    url_passwords(text, |s| DATABASE_SCHEMES.contains(&s), out);
}
