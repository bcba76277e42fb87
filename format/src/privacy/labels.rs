//! Password labels in scripts other than Latin: `Пароль: …`, `비밀번호: …`,
//! `パスワード：…`, `密码=…`, `contraseña: …`. The key-name rules read ASCII
//! words; these labels are found by their bytes, in a text that is not
//! ASCII only, and the value after `:` or `=` (full-width ones too) is
//! judged as a password's (field test 12c). Latin spellings (`Passwort`,
//! `Kennwort`, `mot de passe`, `contrasena`) are key words ([`super::names`]).

use std::ops::Range;
use std::sync::OnceLock;

use memchr::memmem::Finder;

use super::assignment;

/// The labels, as written (no case folding outside ASCII: each case a
/// label is written in is listed).
const LABELS: &[&str] = &[
    "пароль",
    "Пароль",
    "ПАРОЛЬ",
    "비밀번호",
    "パスワード",
    "密码",
    "密碼",
    "contraseña",
    "Contraseña",
    "CONTRASEÑA",
];

/// A searcher per label, built once per process.
fn finders() -> &'static [Finder<'static>] {
    static FINDERS: OnceLock<Vec<Finder<'static>>> = OnceLock::new();
    FINDERS.get_or_init(|| LABELS.iter().map(|l| Finder::new(l.as_bytes())).collect())
}

/// The values assigned to a label of [`LABELS`] in `text` (which holds a
/// byte outside ASCII), with whether each was quoted. A value must be
/// ASCII: a word of the label's own script after it is prose
/// (`Пароль: обязательное поле`).
pub(super) fn values(text: &str) -> Vec<(Range<usize>, bool)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    for finder in finders() {
        for at in finder.find_iter(b) {
            let Some(p) = past_operator(b, at + finder.needle().len()) else {
                continue;
            };
            if let Some((value, quoted)) = assignment::value_after_operator(b, p)
                && b[value.clone()].is_ascii()
            {
                out.push((value, quoted));
            }
        }
    }
    out
}

/// Past blanks, `:` or `=` (or their full-width forms `：` `＝`) and blanks
/// after `p`, if an operator is there.
fn past_operator(b: &[u8], mut p: usize) -> Option<usize> {
    let blanks = |p: &mut usize| {
        while b.get(*p).is_some_and(|c| *c == b' ' || *c == b'\t') {
            *p += 1;
        }
    };
    blanks(&mut p);
    let rest = &b[p..];
    p += if rest.starts_with(b":") || rest.starts_with(b"=") {
        1
    } else if rest.starts_with("：".as_bytes()) || rest.starts_with("＝".as_bytes()) {
        "：".len()
    } else {
        return None;
    };
    blanks(&mut p);
    Some(p)
}
