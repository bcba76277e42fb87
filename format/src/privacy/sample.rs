//! Random secrets in a rule's documented format ([`Rule::sample`]), for the
//! rule tests and the bench's leak corpus: random bodies in the right
//! alphabet and length, never copied fixtures.
//!
//! A template is literal text with classes: `{a:N}` (or `{a:N-M}`) is N
//! random characters of class `a`, `{uuid}` a random UUID; `«…»` marks the
//! secret when the template holds more (a key name, a URL). Classes:
//!
//! | class | characters |
//! | --- | --- |
//! | `a` | `A-Z a-z 0-9` |
//! | `l` / `u` | `a-z 0-9` / `A-Z 0-9` |
//! | `h` / `H` | hex, lower / upper case |
//! | `d` | `0-9` |
//! | `b` | base64: `A-Z a-z 0-9 + /` |
//! | `w` | base64url: `A-Z a-z 0-9 _ -` |
//! | `L` / `x` / `X` | letters: both cases / lower / upper |
//! | `z` / `y` | base32: `A-Z 2-7` / `a-z 2-7` |
//! | `c` / `C` | bech32, lower / upper case |
//!
//! [`Rule::sample`]: super::rules::Rule::sample

/// A secret in its context.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// The template's text with every class drawn.
    pub text: String,
    /// The secret inside it (between `«` and `»`, else the whole text).
    pub secret: String,
    /// The runs of the secret that were drawn at random (a leak check
    /// looks for these: the literal parts, such as `https://` or a
    /// prefix, are everywhere).
    pub random: Vec<String>,
}

impl Sample {
    /// What a leak check looks for: the secret whole (from 10 bytes), and
    /// every piece of its random part long enough to mean something: 8
    /// bytes of a run (12 of a run of hex digits or digits, which hashes and
    /// times in any file would meet by chance).
    pub fn pieces(&self) -> Vec<&[u8]> {
        let mut pieces = Vec::new();
        if self.secret.len() >= 10 {
            pieces.push(self.secret.as_bytes());
        }
        for run in &self.random {
            let plain = run.bytes().all(|b| b.is_ascii_hexdigit());
            let (window, shortest) = if plain { (12, 12) } else { (8, 6) };
            if run.len() >= shortest {
                let n = run.len().min(window);
                pieces.extend((0..=run.len() - n).map(|i| &run.as_bytes()[i..i + n]));
            }
        }
        pieces
    }

    /// Whether `haystack` holds one of the [`Sample::pieces`]. Markers are
    /// the caller's to remove first: they name the rule, which may be the
    /// token's prefix.
    pub fn leaks_into(&self, haystack: &[u8]) -> bool {
        self.pieces()
            .into_iter()
            .any(|piece| haystack.windows(piece.len()).any(|w| w == piece))
    }
}

/// A small deterministic generator (SplitMix64): samples are reproducible
/// from a seed, and the model crate needs no random-number dependency.
#[derive(Clone, Debug)]
pub struct SplitMix(u64);

impl SplitMix {
    /// A generator from a seed.
    pub fn new(seed: u64) -> SplitMix {
        SplitMix(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// One of `items` (`items` not empty).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

fn alphabet(class: char) -> Option<&'static [u8]> {
    Some(match class {
        'a' => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
        'l' => b"abcdefghijklmnopqrstuvwxyz0123456789",
        'u' => b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
        'h' => b"0123456789abcdef",
        'H' => b"0123456789ABCDEF",
        'd' => b"0123456789",
        'b' => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
        'w' => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-",
        'L' => b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
        'x' => b"abcdefghijklmnopqrstuvwxyz",
        'X' => b"ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        'z' => b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567",
        'y' => b"abcdefghijklmnopqrstuvwxyz234567",
        'c' => b"qpzry9x8gf2tvdw0s3jn54khce6mua7l",
        'C' => b"QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
        _ => return None,
    })
}

/// One piece of a template.
enum Piece<'t> {
    Literal(&'t str),
    Class(&'static [u8], usize, usize),
    Uuid,
    SecretStart,
    SecretEnd,
}

/// Reads `{class:N}`, `{class:N-M}` or `{uuid}` at the start of `s`.
fn class_at(s: &str) -> Option<(Piece<'static>, usize)> {
    let close = s.find('}')?;
    let inner = &s[1..close];
    if inner == "uuid" {
        return Some((Piece::Uuid, close + 1));
    }
    let (class, count) = inner.split_once(':')?;
    let mut chars = class.chars();
    let alphabet = alphabet(chars.next()?)?;
    if chars.next().is_some() {
        return None;
    }
    let (min, max) = match count.split_once('-') {
        Some((a, b)) => (a.parse().ok()?, b.parse().ok()?),
        None => {
            let n = count.parse().ok()?;
            (n, n)
        }
    };
    Some((Piece::Class(alphabet, min, max), close + 1))
}

fn pieces(template: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut literal_start = 0;
    let mut i = 0;
    while i < template.len() {
        let rest = &template[i..];
        let special = if rest.starts_with('{') {
            class_at(rest)
        } else if rest.starts_with('«') {
            Some((Piece::SecretStart, '«'.len_utf8()))
        } else if rest.starts_with('»') {
            Some((Piece::SecretEnd, '»'.len_utf8()))
        } else {
            None
        };
        match special {
            Some((piece, len)) => {
                if literal_start < i {
                    out.push(Piece::Literal(&template[literal_start..i]));
                }
                out.push(piece);
                i += len;
                literal_start = i;
            }
            None => i += rest.chars().next().map_or(1, char::len_utf8),
        }
    }
    if literal_start < template.len() {
        out.push(Piece::Literal(&template[literal_start..]));
    }
    out
}

/// Draws a sample of `template`.
pub fn expand(template: &str, rng: &mut SplitMix) -> Sample {
    let mut counts = SplitMix::new(rng.next_u64());
    render(
        template,
        |alphabet, n, out| {
            for _ in 0..n {
                out.push(*rng.pick(alphabet) as char);
            }
        },
        |min, max| min + counts.below(max - min + 1),
    )
}

/// The template with every class filled with `x` (a placeholder in the
/// format's shape, which no rule may redact).
pub fn placeholder(template: &str) -> Sample {
    render(
        template,
        |_, n, out| out.extend(std::iter::repeat_n('x', n)),
        |min, _| min,
    )
}

fn render(
    template: &str,
    mut fill: impl FnMut(&'static [u8], usize, &mut String),
    mut count: impl FnMut(usize, usize) -> usize,
) -> Sample {
    let mut text = String::new();
    let mut secret_range: Option<(usize, Option<usize>)> = None;
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for piece in pieces(template) {
        let start = text.len();
        match piece {
            Piece::Literal(s) => text.push_str(s),
            Piece::Class(alphabet, min, max) => {
                let n = count(min, max.max(min));
                fill(alphabet, n, &mut text);
                runs.push((start, text.len()));
            }
            Piece::Uuid => {
                let hex = b"0123456789abcdef";
                for (i, n) in [8, 4, 4, 4, 12].into_iter().enumerate() {
                    if i > 0 {
                        text.push('-');
                    }
                    fill(hex, n, &mut text);
                }
                runs.push((start, text.len()));
            }
            Piece::SecretStart => secret_range = Some((text.len(), None)),
            Piece::SecretEnd => {
                if let Some((start, None)) = secret_range {
                    secret_range = Some((start, Some(text.len())));
                }
            }
        }
    }
    let (start, end) = match secret_range {
        Some((start, end)) => (start, end.unwrap_or(text.len())),
        None => (0, text.len()),
    };
    let random = runs
        .into_iter()
        .map(|(s, e)| (s.max(start), e.min(end)))
        .filter(|(s, e)| s < e)
        .map(|(s, e)| text[s..e].to_string())
        .collect();
    Sample {
        secret: text[start..end].to_string(),
        text,
        random,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates() {
        let mut rng = SplitMix::new(7);
        let s = expand("ghp_{a:36}", &mut rng);
        assert_eq!(s.text.len(), 40);
        assert_eq!(s.text, s.secret);
        assert!(s.text.starts_with("ghp_"));
        let s = expand("TOKEN=«{h:32}»", &mut rng);
        assert_eq!(s.secret.len(), 32);
        assert_eq!(s.text, format!("TOKEN={}", s.secret));
        assert_eq!(s.random, std::slice::from_ref(&s.secret));
        let s = expand("{\"a\": \"«{uuid}»\"}", &mut rng);
        assert_eq!(s.secret.len(), 36);
        assert!(s.text.starts_with("{\"a\": \""));
        let s = expand("sk_live_{a:24-99}", &mut rng);
        assert!((32..=107).contains(&s.text.len()));
        assert_eq!(placeholder("KEY=«{h:4}»").text, "KEY=xxxx");
    }
}
