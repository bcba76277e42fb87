//! Whether a value assigned to a secret-named key is shaped like a secret:
//! `hunter2` and `wJalrXUtnFEMI/K7MDENG` are; `str`, `None`,
//! `Option<String>`, `os.environ["TOKEN"]`, `${TOKEN}` and `sha512-…` are
//! not. How random it must look depends on what the key names: a password
//! may be short and plain, a key only hinted at by its name must look
//! random.

use super::allow;
use super::rules::NameClass;

/// Counts over a value's bytes.
struct Shape {
    len: usize,
    lower: usize,
    upper: usize,
    digits: usize,
    /// Bytes that are none of the above.
    symbols: usize,
    /// Shannon entropy, bits per byte.
    entropy: f64,
}

impl Shape {
    fn of(v: &str) -> Shape {
        let mut counts = [0usize; 256];
        let (mut lower, mut upper, mut digits, mut symbols) = (0, 0, 0, 0);
        for b in v.bytes() {
            counts[b as usize] += 1;
            match b {
                b'a'..=b'z' => lower += 1,
                b'A'..=b'Z' => upper += 1,
                b'0'..=b'9' => digits += 1,
                _ => symbols += 1,
            }
        }
        Shape {
            len: v.len(),
            lower,
            upper,
            digits,
            symbols,
            entropy: entropy(&counts, v.len()),
        }
    }

    /// Letters with at most `_ - .` between them: a word or an identifier
    /// (`string`, `Option`, `user_access_token`), unless its case is mixed
    /// the way random letters are.
    fn wordlike(&self, v: &str) -> bool {
        let letters = self.lower + self.upper;
        let joiners = v.bytes().filter(|b| b"_-.".contains(b)).count();
        self.digits == 0 && letters + joiners == self.len && !random_case(v)
    }
}

/// Shannon entropy in bits per byte of a histogram over `len` bytes.
pub(super) fn entropy(counts: &[usize; 256], len: usize) -> f64 {
    if len == 0 {
        return 0.0;
    }
    let n = len as f64;
    counts
        .iter()
        .filter(|c| **c > 0)
        .map(|c| {
            let p = *c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

/// Whether `value`, assigned to a key of `class` (`quoted` when it was a
/// string literal), is a secret.
pub(super) fn is_secret(value: &str, class: NameClass, quoted: bool) -> bool {
    // the cheap shape first: most values a secret-named key holds in code
    // (`request.headers()`, `None`) fail it, and the allow-lists' substring
    // searches cost a hook more than the rest of the judgement
    if value.len() < 3
        || value.len() > 4096
        || value.bytes().any(|b| b.is_ascii_whitespace())
        || (!quoted && allow::is_code(value))
    {
        return false;
    }
    let s = Shape::of(value);
    let shaped = match class {
        NameClass::Password => {
            let digits_only = s.digits == s.len;
            let long_enough = s.len >= if quoted { 4 } else { 6 };
            long_enough && (digits_only || !s.wordlike(value))
        }
        NameClass::Secret
        | NameClass::Token
        | NameClass::ApiKey
        | NameClass::Auth
        | NameClass::Credential => {
            s.len >= 8
                && s.digits < s.len
                && !s.wordlike(value)
                && s.entropy >= if quoted { 2.5 } else { 3.0 }
        }
        NameClass::Key => {
            // a digit, or letters whose case switches at random: 32
            // random letters and digits hold no digit one time in 300
            s.len >= 16
                && (s.digits > 0 || random_case(value))
                && s.lower + s.upper > 0
                && s.entropy >= 3.2
                && !allow::is_uuid(value)
                && !allow::is_hex_digest(value)
                && !s.wordlike(value)
                && s.symbols * 4 < s.len
        }
    };
    // the allow-lists only once the shape matched: they cost more
    shaped
        && !is_placeholder(value)
        && !allow::is_public(value)
        && !allow::is_path(value)
        && !allow::is_plain_url(value)
}

/// A placeholder (`changeme`, `<your-token>`), short enough to be one.
fn is_placeholder(value: &str) -> bool {
    value.len() <= super::MAX_PLACEHOLDER && allow::is_placeholder(value)
}

/// Whether letters switch case the way random ones do rather than the
/// way words do: `toOGLEZKGlkKpVfT` does, `TokenAuthenticationMiddleware`
/// and `XMLHttpRequest` do not.
fn random_case(v: &str) -> bool {
    let letters: Vec<u8> = v.bytes().filter(u8::is_ascii_alphabetic).collect();
    let upper = letters.iter().filter(|b| b.is_ascii_uppercase()).count();
    let switches = letters
        .windows(2)
        .filter(|w| w[0].is_ascii_uppercase() != w[1].is_ascii_uppercase())
        .count();
    let share = upper as f64 / letters.len().max(1) as f64;
    letters.len() >= 12
        && (0.15..=0.85).contains(&share)
        && (switches * 4 >= letters.len() || (letters.len() >= 24 && switches * 6 >= letters.len()))
}

/// Whether a token found by a rule looks random: both cases, and a digit
/// or letters switching case at random (`sk-learn-tutorial` does not).
pub(super) fn is_mixed(v: &str) -> bool {
    let s = Shape::of(v);
    s.upper > 0 && s.lower > 0 && (s.digits > 0 || random_case(v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use NameClass::*;

    #[test]
    fn secrets_and_not() {
        for (v, class, quoted, want) in [
            ("hunter2", Password, false, true),
            ("hunter2", Password, true, true),
            ("384756", Password, false, true),
            ("str", Password, false, false),
            ("string", Password, false, false),
            ("Password", Password, true, false),
            ("None", Token, false, false),
            ("Option", Token, false, false),
            ("os.environ", Token, false, false),
            (
                "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq9Lr2t1Kc",
                Secret,
                false,
                true,
            ),
            ("3f2a9c0d1e4b5a69", Token, true, true),
            ("await", Token, false, false),
            ("user_access_token", Token, false, false),
            ("2026-01-01", Token, true, false),
            ("sha512-Xo3OuJ+PWIYkTBmr2N9Zl5bYQyJ6fR5", Token, true, false),
            ("/etc/ssl/private/server.key", ApiKey, true, false),
            ("https://example.org/token", Token, true, false),
            ("kP3nX9qL2vR8sT4w", Key, false, true),
            ("123e4567-e89b-12d3-a456-426614174000", Key, false, false),
            ("user-profile-v2", Key, false, false),
        ] {
            assert_eq!(is_secret(v, class, quoted), want, "{v} {class:?} {quoted}");
        }
    }
}
