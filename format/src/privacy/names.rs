//! Which key names name a secret: `password`, `DB_PASS`, `client_secret`,
//! `apiToken`, `X-Api-Key`, `AWS_SECRET_ACCESS_KEY`… but not `max_tokens`,
//! `token_type`, `password_hash`, `public_key` or `get_token_by_id`.
//!
//! A name is cut into lower-case words (on `_ - . :` and camelCase); the
//! words say what it names, and a describing last word (`…_type`,
//! `…_count`, `…_path`) says it names something about a secret rather than
//! the secret itself.

use super::rules::NameClass;

/// Last words that make a name describe a secret rather than hold one.
const DESCRIBING: &[&str] = &[
    "id",
    "ids",
    "name",
    "names",
    "type",
    "types",
    "kind",
    "count",
    "counts",
    "len",
    "length",
    "size",
    "limit",
    "limits",
    "max",
    "min",
    "url",
    "uri",
    "urls",
    "endpoint",
    "path",
    "paths",
    "file",
    "files",
    "filename",
    "dir",
    "directory",
    "env",
    "var",
    "variable",
    "field",
    "fields",
    "header",
    "headers",
    "prefix",
    "suffix",
    "format",
    "mode",
    "policy",
    "label",
    "hint",
    "placeholder",
    "prompt",
    "usage",
    "used",
    "budget",
    "version",
    "index",
    "idx",
    "position",
    "regex",
    "pattern",
    "hash",
    "hashed",
    "digest",
    "fingerprint",
    "expiry",
    "expires",
    "expiration",
    "expired",
    "ttl",
    "timeout",
    "lifetime",
    "location",
    "ref",
    "arn",
    "scope",
    "scopes",
    "audience",
    "issuer",
    "alg",
    "algorithm",
    "encoding",
    "required",
    "enabled",
    "disabled",
    "valid",
    "visible",
    "mask",
    "masked",
    "strength",
    "reset",
    "rotation",
    "provider",
    "source",
    "manager",
    "list",
    "map",
    "cache",
    "column",
    "table",
    "input",
    "button",
    "text",
    "message",
    "error",
    "errors",
    "callback",
    "handler",
    "class",
    "schema",
    "description",
    "desc",
    "title",
    "help",
    "tooltip",
    "lookup",
    "check",
    "checker",
    "validator",
    "generator",
    "request",
    "response",
    "param",
    "params",
    "parameter",
    "option",
    "options",
    "store",
    "policies",
    "rule",
    "rules",
    "at",
    "date",
    "time",
    "ms",
    "seconds",
    "display",
    "confirm",
    "confirmation",
    "changed",
    "updated",
    "created",
    "last",
    "bytes",
    "bits",
];

/// First words that make a name a flag or a count about secrets.
const QUALIFYING_FIRST: &[&str] = &[
    "max", "min", "num", "total", "is", "has", "use", "uses", "enable", "show", "allow", "require",
    "requires", "count", "no", "skip", "should", "can",
];

/// Words before `key` that make it a secret key (`api_key`, `signingKey`).
const KEY_QUALIFIERS: &[&str] = &[
    "api",
    "access",
    "secret",
    "private",
    "signing",
    "sign",
    "encryption",
    "encrypt",
    "enc",
    "master",
    "license",
    "licence",
    "account",
    "app",
    "application",
    "client",
    "consumer",
    "auth",
    "service",
    "admin",
    "subscription",
    "shared",
    "hmac",
    "jwt",
    "crypt",
    "crypto",
    "storage",
    "deploy",
    "ssh",
    "gpg",
    "pgp",
    "write",
    "session",
    "cookie",
    "webhook",
    "partner",
    "merchant",
    "developer",
    "dev",
    "bot",
    "integration",
    "management",
    "mgmt",
    "root",
    "primary",
    "secondary",
    "live",
    "prod",
    "production",
    "server",
    "rest",
    "sdk",
    "x",
    "personal",
    "user",
    "org",
    "organization",
    "project",
    "team",
    "tenant",
    "ingest",
    "publishable",
];

/// Longest key name considered, and most words.
const MAX_KEY: usize = 128;
const MAX_WORDS: usize = 16;

/// The class of secret `key` names, if it names one.
pub(super) fn classify(key: &str) -> Option<NameClass> {
    if key.len() > MAX_KEY {
        return None;
    }
    let lower = key.to_ascii_lowercase();
    let mut spans = [(0, 0); MAX_WORDS];
    let mut n = 0;
    split(key, |s, e| {
        if n < MAX_WORDS {
            spans[n] = (s, e);
            n += 1;
        }
    });
    let words: Vec<&str> = spans[..n].iter().map(|&(s, e)| &lower[s..e]).collect();
    let (first, last) = (*words.first()?, *words.last()?);
    if DESCRIBING.contains(&last) || QUALIFYING_FIRST.contains(&first) {
        return None;
    }
    if words.iter().any(|w| *w == "public" || *w == "pub") {
        return None;
    }
    let mut best: Option<NameClass> = None;
    let mut consider = |class: NameClass| {
        if best.is_none_or(|b| class.rank() < b.rank()) {
            best = Some(class);
        }
    };
    for (i, &w) in words.iter().enumerate() {
        if w.contains("password")
            || w.contains("passwd")
            || w.contains("passphrase")
            || matches!(w, "pass" | "pwd" | "pw" | "pword")
            || is_password_elsewhere(w)
        {
            consider(NameClass::Password);
        } else if w.contains("secret") {
            consider(NameClass::Secret);
        } else if w.contains("token") && !w.contains("tokeniz") && !w.ends_with("tokens") {
            consider(NameClass::Token);
        } else if matches!(w, "credential" | "credentials" | "creds" | "cred") {
            consider(NameClass::Credential);
        } else if matches!(w, "authorization" | "auth") {
            consider(NameClass::Auth);
        } else if let Some(prefix) = w.strip_suffix("keys").or_else(|| w.strip_suffix("key")) {
            let qualifier = if prefix.is_empty() {
                i.checked_sub(1).map(|p| words[p])
            } else {
                Some(prefix)
            };
            if qualifier.is_some_and(|q| KEY_QUALIFIERS.contains(&q)) {
                consider(NameClass::ApiKey);
            } else if prefix.is_empty() && words.len() >= 2 && is_upper_snake(key) {
                consider(NameClass::Key);
            }
        }
    }
    best
}

/// "Password" in other languages, as a word of a key: German `Passwort`
/// and `Kennwort`, French `mot de passe` (its last word: `mot_de_passe`,
/// or `passe` before a colon), Spanish `contraseña` (`contrasena` in
/// ASCII), and the labels of [`super::labels`] as JSON keys
/// (`{"пароль": …}`).
fn is_password_elsewhere(word: &str) -> bool {
    if matches!(
        word,
        "passwort" | "kennwort" | "passe" | "contrasena" | "motdepasse"
    ) {
        return true;
    }
    !word.is_ascii()
        && matches!(
            word.to_lowercase().as_str(),
            "пароль" | "비밀번호" | "パスワード" | "密码" | "密碼" | "contraseña"
        )
}

/// `STRIPE_KEY`, `ACME_API_TOKEN`: an environment variable's style.
fn is_upper_snake(key: &str) -> bool {
    key.contains('_') && !key.bytes().any(|b| b.is_ascii_lowercase())
}

/// Calls `word` with the byte range of each word of a key name: split on
/// `_ - . : / $`, spaces and camelCase boundaries (`APIKey` gives `API`,
/// `Key`).
fn split(key: &str, mut word: impl FnMut(usize, usize)) {
    let b = key.as_bytes();
    let mut start = 0;
    for i in 0..=b.len() {
        let separator = i == b.len() || b"_-.:/$ ".contains(&b[i]);
        let boundary = !separator
            && i > start
            && b[i].is_ascii_uppercase()
            && (b[i - 1].is_ascii_lowercase()
                || b[i - 1].is_ascii_digit()
                || (b[i - 1].is_ascii_uppercase()
                    && b.get(i + 1).is_some_and(u8::is_ascii_lowercase)));
        if separator || boundary {
            if i > start {
                word(start, i);
            }
            start = if separator { i + 1 } else { i };
        }
    }
}

/// The lower-case words of a key name ([`split`]).
#[cfg(test)]
fn words(key: &str) -> Vec<String> {
    let mut out = Vec::new();
    split(key, |s, e| out.push(key[s..e].to_ascii_lowercase()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_every_style() {
        assert_eq!(
            words("AWS_SECRET_ACCESS_KEY"),
            ["aws", "secret", "access", "key"]
        );
        assert_eq!(words("apiToken"), ["api", "token"]);
        assert_eq!(words("X-API-Key"), ["x", "api", "key"]);
        assert_eq!(words("APIKey"), ["api", "key"]);
        assert_eq!(
            words("spring.datasource.password"),
            ["spring", "datasource", "password"]
        );
    }

    #[test]
    fn names() {
        use NameClass::*;
        for (key, want) in [
            ("password", Some(Password)),
            ("DB_PASS", Some(Password)),
            ("db_pwd", Some(Password)),
            ("mysqlPassword", Some(Password)),
            ("client_secret", Some(Secret)),
            ("AWS_SECRET_ACCESS_KEY", Some(Secret)),
            ("apiToken", Some(Token)),
            ("_authToken", Some(Token)),
            ("x_token", Some(Token)),
            ("X-Api-Key", Some(ApiKey)),
            ("apikey", Some(ApiKey)),
            ("signingKey", Some(ApiKey)),
            ("private_key", Some(ApiKey)),
            ("Authorization", Some(Auth)),
            ("auth", Some(Auth)),
            ("credentials", Some(Credential)),
            ("STRIPE_KEY", Some(Key)),
            ("AccountKey", Some(ApiKey)),
            ("max_tokens", None),
            ("token_type", None),
            ("prompt_tokens", None),
            ("password_hash", None),
            ("secret_name", None),
            ("public_key", None),
            ("cache_key", None),
            ("primary_key", Some(ApiKey)),
            ("key", None),
            ("tokenizer", None),
            ("author", None),
            ("bypass", None),
            ("passenger", None),
            ("get_token_by_id", None),
            ("is_secret", None),
            ("api_key_id", None),
            ("Passwort", Some(Password)),
            ("DB_KENNWORT", Some(Password)),
            ("mot_de_passe", Some(Password)),
            ("contrasena", Some(Password)),
            ("Пароль", Some(Password)),
            ("비밀번호", Some(Password)),
            ("passenger", None),
            ("passes", None),
        ] {
            assert_eq!(classify(key), want, "{key}");
        }
    }
}
