//! Session ids. A session id names a journal file and stands in commit
//! trailers, so every way an event comes in (hooks, the command line,
//! imports of any format) checks it by this one rule.

/// Longest session id memlog accepts (it becomes a file name).
pub const MAX_LEN: usize = 128;

/// What a session id may be, for error messages.
pub const RULE: &str =
    "use 1-128 characters from A-Z a-z 0-9 . _ - : @ + = (not starting with '.')";

/// Whether `session` can name a journal file: 1–128 characters from
/// `A–Z a–z 0–9 . _ - : @ + =`, not starting with a dot (so `../evil`, an
/// empty id or a path never becomes one).
pub fn is_valid(session: &str) -> bool {
    !session.is_empty()
        && session.len() <= MAX_LEN
        && !session.starts_with('.')
        && session.chars().all(is_allowed)
}

/// Whether a session id may hold `c`: `A–Z a–z 0–9 . _ - : @ + =`.
pub fn is_allowed(c: char) -> bool {
    c.is_ascii_alphanumeric() || "._-:@+=".contains(c)
}

/// [`is_valid`], with an error that names the id and says what is allowed.
pub fn check(session: &str) -> Result<(), String> {
    if is_valid(session) {
        Ok(())
    } else {
        Err(format!("session id {session:?}: {RULE}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_empty_ids_are_refused() {
        for good in ["abc", "note-20261122T052721-1a2b3c4d", "a.b:c@d+e=f_g"] {
            assert!(check(good).is_ok(), "{good}");
        }
        let long = "x".repeat(MAX_LEN + 1);
        for bad in ["", "../evil", ".hidden", "a/b", "a b", "é", long.as_str()] {
            let e = check(bad).unwrap_err();
            assert!(e.contains("session id"), "{e}");
        }
    }
}
