//! JSON Lines files other programs wrote: the agents' session files and the
//! neutral import format, read the same way.
//!
//! A UTF-8 byte order mark before the first line (a file saved again by a
//! Windows editor) is not JSON: left in, it made that line malformed, and
//! a transcript lost its first prompt (field test 8a). Every reader of
//! such a file strips it first, with [`without_bom`] (bytes) or [`BOM`]
//! (a line read as text).

/// U+FEFF, the byte order mark, as text.
pub const BOM: char = '\u{feff}';

/// `bytes` without the UTF-8 byte order mark they may start with.
pub fn without_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_leading_mark_goes() {
        assert_eq!(without_bom(b"\xef\xbb\xbf{\"a\":1}\n"), b"{\"a\":1}\n");
        assert_eq!(without_bom(b"{}\n\xef\xbb\xbf{}"), b"{}\n\xef\xbb\xbf{}");
        assert_eq!(without_bom(b""), b"");
        let mut text = String::new();
        text.push(BOM);
        assert_eq!(without_bom(text.as_bytes()), b"");
    }
}
