//! The built-in secret rules: one table per family of providers, each rule
//! written from the provider's documented token format.
//!
//! A rule is one of four kinds ([`Detect`]):
//!
//! - a **token** that names itself (`ghp_…`, `xoxb-…`, `AKIA…`): a regular
//!   expression over ASCII, run only on a text that holds one of the rule's
//!   keywords (the prefilter, [`super::prefilter`]);
//! - a value **assigned** to a key that names the provider
//!   (`TWILIO_AUTH_TOKEN=<32 hex>`): the value must have the documented
//!   shape; the key and value are found by [`super::assignment`];
//! - a **generic** assignment: a key named like a secret (`password`,
//!   `client_secret`, `X-Api-Key`…) with a value shaped like one
//!   ([`super::value`]);
//! - a **scan** of a structure no expression reads well (the data of a
//!   Kubernetes `Secret`).
//!
//! Every rule carries a `sample`: its format as a template from which tests
//! and the bench draw random secrets ([`super::sample`]).

/// A UUID's shape, for provider keys that are one (`concat!`-able).
macro_rules! uuid {
    () => {
        "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    };
}

mod ai;
mod cicd;
mod cloud;
mod databases;
mod generic;
mod keys;
mod messaging;
mod observability;
mod payments;
mod pii;
mod registries;
mod saas;
mod urls;
mod vaults;
mod vcs;

use std::ops::Range;

/// Families of rules, for reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    /// Cloud and hosting providers (AWS, GCP, Azure, Cloudflare…).
    Cloud,
    /// Version control hosts (GitHub, GitLab, Bitbucket…).
    Vcs,
    /// Chat, email and SMS (Slack, Discord, Twilio, SendGrid…).
    Messaging,
    /// Payments and commerce (Stripe, Square, Shopify…).
    Payments,
    /// AI APIs (OpenAI, Anthropic, Hugging Face…).
    Ai,
    /// Package registries (npm, PyPI, RubyGems, Docker Hub…).
    Registries,
    /// CI/CD and developer tools (Harness, Postman, Sonar…).
    CiCd,
    /// Monitoring and observability (Datadog, Sentry, Grafana…).
    Observability,
    /// Other SaaS APIs (Airtable, Notion, Linear, Twitter…).
    Saas,
    /// Databases and data platforms (connection URLs, PlanetScale…).
    Databases,
    /// Secret managers (Vault, Doppler, 1Password).
    Vaults,
    /// Private keys and signed tokens (PEM blocks, JWT, age).
    Keys,
    /// Credentials in URLs and commands (`user:pass@`, `curl -u`).
    Urls,
    /// Secret-named keys with secret-shaped values.
    Generic,
    /// Patterns configured in `.memlog.yaml`.
    Custom,
    /// Personal data (emails, phone numbers, IP addresses, configured
    /// names), when `.memlog.yaml` opts in.
    Pii,
}

impl Family {
    /// The family's name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Cloud => "cloud",
            Family::Vcs => "vcs",
            Family::Messaging => "messaging",
            Family::Payments => "payments",
            Family::Ai => "ai",
            Family::Registries => "registries",
            Family::CiCd => "ci-cd",
            Family::Observability => "observability",
            Family::Saas => "saas",
            Family::Databases => "databases",
            Family::Vaults => "vaults",
            Family::Keys => "keys",
            Family::Urls => "urls",
            Family::Generic => "generic",
            Family::Custom => "custom",
            Family::Pii => "pii",
        }
    }

    /// Every family of built-in rules, in report order.
    pub const ALL: [Family; 14] = [
        Family::Cloud,
        Family::Vcs,
        Family::Messaging,
        Family::Payments,
        Family::Ai,
        Family::Registries,
        Family::CiCd,
        Family::Observability,
        Family::Saas,
        Family::Databases,
        Family::Vaults,
        Family::Keys,
        Family::Urls,
        Family::Generic,
    ];
}

/// What a key named like a secret names, which decides how secret-shaped
/// its value must be (a password may be short; a key only hinted at must
/// look random).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameClass {
    /// `password`, `passwd`, `pwd`, `DB_PASS`…
    Password,
    /// `secret`, `client_secret`…
    Secret,
    /// `token`, `access_token`, `_authToken`…
    Token,
    /// `api_key`, `apikey`, `X-Api-Key`, `private_key`, `signing_key`…
    ApiKey,
    /// `Authorization`, `auth` (HTTP headers, Docker's config).
    Auth,
    /// `credentials`, `creds`.
    Credential,
    /// An upper-case `*_KEY` variable (`STRIPE_KEY`): a key only by name.
    Key,
}

impl NameClass {
    /// How many classes there are.
    pub(crate) const COUNT: usize = 7;

    /// Its place in order of strength, strongest first: a name with both
    /// `password` and `key` is a password.
    pub(crate) const fn rank(self) -> usize {
        match self {
            NameClass::Password => 0,
            NameClass::Secret => 1,
            NameClass::Token => 2,
            NameClass::ApiKey => 3,
            NameClass::Auth => 4,
            NameClass::Credential => 5,
            NameClass::Key => 6,
        }
    }
}

/// How a rule finds its secrets.
#[derive(Clone, Copy)]
pub enum Detect {
    /// A regular expression (bytes, ASCII); capture group 1, when there is
    /// one, is the secret, else the whole match. `mixed`: the secret must
    /// look random (a guard for formats loose enough to meet words).
    /// Unless `context`, the keyword is part of the token, and a keyword
    /// whose run of token characters is too short to hold one (`pat` in
    /// `path`) does not run the rule.
    Token {
        /// The expression.
        pattern: &'static str,
        /// Whether the secret must look random.
        mixed: bool,
        /// Whether the keyword is context around the secret (`curl`,
        /// `://`, `private key`) rather than part of it.
        context: bool,
        /// Whether the secret is told in words near its keyword ("the
        /// password is …"): any other rule that finds the same span names
        /// it better.
        told: bool,
    },
    /// A value assigned to a key whose name holds one of the keywords
    /// (`a+b`: both), matching `value` whole (ASCII, case-insensitive).
    Assigned {
        /// The value's shape.
        value: &'static str,
    },
    /// A value assigned to a key of this class, shaped like a secret.
    Generic(NameClass),
    /// A function finding secret ranges in a text.
    Scan(fn(&str, &mut Vec<Range<usize>>)),
}

/// One built-in rule.
#[derive(Clone, Copy)]
pub struct Rule {
    /// Its id, as markers show it (`slack-bot-token`).
    pub id: &'static str,
    /// Its family.
    pub family: Family,
    /// Words one of which a text must hold for the rule to run (matched
    /// ignoring ASCII case unless the keyword has an upper-case letter).
    pub keywords: &'static [&'static str],
    /// How it detects.
    pub detect: Detect,
    /// The format as a template ([`super::sample`]); `«…»` marks the
    /// secret when the template holds more than the secret.
    pub sample: &'static str,
}

/// A self-naming token rule.
pub(crate) const fn token(
    id: &'static str,
    family: Family,
    keywords: &'static [&'static str],
    pattern: &'static str,
    sample: &'static str,
) -> Rule {
    Rule {
        id,
        family,
        keywords,
        detect: Detect::Token {
            pattern,
            mixed: false,
            context: false,
            told: false,
        },
        sample,
    }
}

impl Rule {
    /// This token rule with its keyword as context around the secret, not
    /// part of it (`curl`, `://`, `private key`).
    pub(crate) const fn context(mut self) -> Rule {
        if let Detect::Token { context, .. } = &mut self.detect {
            *context = true;
        }
        self
    }

    /// This token rule for a secret told in words near its keyword ("the
    /// AWS secret key is …"): the keyword is context, the secret must look
    /// random, and a rule naming the same span names it better.
    pub(crate) const fn told(mut self) -> Rule {
        if let Detect::Token {
            context,
            mixed,
            told,
            ..
        } = &mut self.detect
        {
            *context = true;
            *mixed = true;
            *told = true;
        }
        self
    }

    /// This token rule with a secret that must look random.
    pub(crate) const fn mixed(mut self) -> Rule {
        if let Detect::Token { mixed, .. } = &mut self.detect {
            *mixed = true;
        }
        self
    }
}

/// A rule for a value assigned to a key naming the provider.
pub(crate) const fn assigned(
    id: &'static str,
    family: Family,
    keywords: &'static [&'static str],
    value: &'static str,
    sample: &'static str,
) -> Rule {
    Rule {
        detect: Detect::Assigned { value },
        ..token(id, family, keywords, "", sample)
    }
}

/// The built-in rule lists, provider rules first (a more specific rule
/// names a secret that a generic one also finds).
const LISTS: [&[Rule]; 14] = [
    cloud::RULES,
    vcs::RULES,
    messaging::RULES,
    payments::RULES,
    ai::RULES,
    registries::RULES,
    cicd::RULES,
    observability::RULES,
    saas::RULES,
    databases::RULES,
    vaults::RULES,
    keys::RULES,
    urls::RULES,
    generic::RULES,
];

/// How many built-in rules there are.
pub(crate) const BUILTIN_COUNT: usize = {
    let mut n = 0;
    let mut l = 0;
    while l < LISTS.len() {
        n += LISTS[l].len();
        l += 1;
    }
    n
};

/// Every built-in rule, in [`LISTS`] order, made at compile time (the
/// keyword automaton is built from it by the compiler too).
pub(crate) const BUILTIN: [&Rule; BUILTIN_COUNT] = {
    let mut out = [&LISTS[0][0]; BUILTIN_COUNT];
    let (mut l, mut n) = (0, 0);
    while l < LISTS.len() {
        let mut i = 0;
        while i < LISTS[l].len() {
            out[n] = &LISTS[l][i];
            (i, n) = (i + 1, n + 1);
        }
        l += 1;
    }
    out
};

/// Every built-in rule, provider rules first.
pub fn builtin() -> Vec<&'static Rule> {
    BUILTIN.to_vec()
}

/// The personal-data rules (emails, phone numbers, IP addresses), which
/// run only when `.memlog.yaml` opts in; they have no keywords, so every
/// text is scanned for them.
pub fn pii() -> Vec<&'static Rule> {
    pii::RULES.iter().collect()
}
