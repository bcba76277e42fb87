//! Event ids and the prefixes people give for them.
//!
//! An [`EventId`] is the blake3 hash (64 lowercase hex digits) of an
//! event's canonical JSON without its `id` (`format/FORMAT.md`). Listings
//! show its first [`EventId::SHORT`] digits ([`EventId::short`]); people
//! and agents name an event by a unique [`IdPrefix`] of at least
//! [`IdPrefix::MIN`] digits. Resolving a prefix against the live events is
//! `memlog-ops`' job (over the indexer's prefix query); what goes wrong
//! is an [`IdError`], which names the input.

use std::fmt;
use std::ops::Deref;

use serde::{Deserialize, Serialize};

/// The id of an event: 64 lowercase hex digits. Serialised as the bare
/// string, so the canonical JSON is what it always was.
///
/// It dereferences to `str`: an id is read as text everywhere (SQL
/// parameters, JSON, prefixes), and only its construction needs guarding.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct EventId(String);

impl EventId {
    /// Hex digits of a full id.
    pub const LEN: usize = 64;
    /// Hex digits of the short form shown in listings.
    pub const SHORT: usize = 12;

    /// A full id typed or received from outside: 64 lowercase hex digits.
    pub fn parse(input: &str) -> Result<EventId, IdError> {
        if input.len() == EventId::LEN && is_lower_hex(input) {
            Ok(EventId(input.to_string()))
        } else {
            Err(IdError::NotAnId {
                input: input.to_string(),
            })
        }
    }

    /// An id as stored (a log line, an index row), not checked here: the
    /// reader verifies it against the event's content
    /// ([`crate::Event::compute_id`]) and reports a mismatch with this text.
    pub fn unchecked(stored: String) -> EventId {
        EventId(stored)
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The 12-digit form used in every listing.
    pub fn short(&self) -> &str {
        short(&self.0)
    }

    /// The id as an owned string.
    pub fn into_string(self) -> String {
        self.0
    }
}

/// The first [`EventId::SHORT`] characters of an id given as text (a
/// search hit's, a citation's, a commit's: listings show commits the same
/// way), or all of it when shorter.
pub fn short(id: &str) -> &str {
    id.get(..EventId::SHORT).unwrap_or(id)
}

impl Deref for EventId {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for EventId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for EventId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for EventId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<EventId> for String {
    fn from(id: EventId) -> String {
        id.0
    }
}

impl PartialEq<str> for EventId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for EventId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<String> for EventId {
    fn eq(&self, other: &String) -> bool {
        &self.0 == other
    }
}

impl PartialEq<EventId> for String {
    fn eq(&self, other: &EventId) -> bool {
        *self == other.0
    }
}

impl PartialEq<EventId> for str {
    fn eq(&self, other: &EventId) -> bool {
        self == other.0
    }
}

impl PartialEq<EventId> for &str {
    fn eq(&self, other: &EventId) -> bool {
        *self == other.0
    }
}

/// What a person or an agent gave to name an event: the id or a prefix of
/// it, at least [`IdPrefix::MIN`] hex digits, lowercased.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdPrefix {
    digits: String,
    input: String,
}

impl IdPrefix {
    /// Fewest hex digits that name an event.
    pub const MIN: usize = 8;

    /// Trims and lowercases `input`, which must be [`IdPrefix::MIN`] to
    /// [`EventId::LEN`] hex digits.
    pub fn parse(input: &str) -> Result<IdPrefix, IdError> {
        let digits = input.trim().to_ascii_lowercase();
        if (IdPrefix::MIN..=EventId::LEN).contains(&digits.len()) && is_lower_hex(&digits) {
            Ok(IdPrefix {
                digits,
                input: input.to_string(),
            })
        } else {
            Err(IdError::NotAnId {
                input: input.to_string(),
            })
        }
    }

    /// The digits, lowercased.
    pub fn as_str(&self) -> &str {
        &self.digits
    }

    /// What was given, as given (for messages).
    pub fn input(&self) -> &str {
        &self.input
    }

    /// Whether `id` starts with this prefix.
    pub fn matches(&self, id: &str) -> bool {
        id.starts_with(&self.digits)
    }
}

impl fmt::Display for IdPrefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.digits)
    }
}

/// A name that does not give one live event. Each names the input.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    /// Not hex, or too short or long to be an id or a prefix of one.
    #[error(
        "{input:?} is not an event id (give the id, or at least its first {} hex digits)",
        IdPrefix::MIN
    )]
    NotAnId {
        /// What was given.
        input: String,
    },
    /// No live event has an id starting with it.
    #[error("no live event has id {input:?} (unknown, or forgotten)")]
    Unknown {
        /// What was given.
        input: String,
    },
    /// Several live events start with it.
    #[error(
        "{input:?} is ambiguous: several events start with it (e.g. {}); give more digits",
        examples.join(", ")
    )]
    Ambiguous {
        /// What was given.
        input: String,
        /// Some of the ids it could be, in their 16-digit form.
        examples: Vec<String>,
    },
}

fn is_lower_hex(s: &str) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn ids_are_64_lowercase_hex_digits_and_short_is_12() {
        let id = EventId::parse(ID).unwrap();
        assert_eq!(id.short(), "0123456789ab");
        assert_eq!(serde_json::to_string(&id).unwrap(), format!("\"{ID}\""));
        assert!(EventId::parse(&ID.to_uppercase()).is_err());
        assert!(EventId::parse(&ID[..63]).is_err());
        assert_eq!(short("abc"), "abc");
    }

    #[test]
    fn prefixes_are_trimmed_lowercased_and_at_least_8_digits() {
        let p = IdPrefix::parse(" 0123456789AB ").unwrap();
        assert_eq!(p.as_str(), "0123456789ab");
        assert!(p.matches(ID));
        let err = IdPrefix::parse("0123456").unwrap_err().to_string();
        assert!(
            err.contains("\"0123456\"") && err.contains("8 hex digits"),
            "{err}"
        );
        assert!(IdPrefix::parse("0123456z").is_err());
        assert!(IdPrefix::parse(&format!("{ID}0")).is_err());
    }
}
