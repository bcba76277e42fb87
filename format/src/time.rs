//! Timestamps as memlog stores them: RFC 3339, UTC, milliseconds, `Z`.

use jiff::{Timestamp, tz::TimeZone};

use crate::{Error, Result};

/// The current time in memlog's form.
pub fn now() -> String {
    format(Timestamp::now())
}

/// `2026-11-22T05:27:21.123Z`
pub fn format(ts: Timestamp) -> String {
    ts.to_zoned(TimeZone::UTC)
        .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

/// [`parse_given`], in memlog's form.
pub fn normalize_given(input: &str) -> Result<String> {
    Ok(format(parse_given(input)?))
}

/// Parses an RFC 3339 timestamp with any offset and returns it in memlog's
/// form (UTC, milliseconds, truncated).
pub fn normalize(input: &str) -> Result<String> {
    Ok(format(parse(input)?))
}

/// Parses an RFC 3339 timestamp, or a bare date (`2026-11-22`, taken as UTC
/// midnight), as data holds them: the same instant on every machine, since
/// an event's id covers its time.
pub fn parse(input: &str) -> Result<Timestamp> {
    parse_in(input, TimeZone::UTC)
}

/// [`parse`] for a time a person gives (`--since`, `--before`, an MCP
/// tool's `since`): a bare date is midnight in the local time zone, the day
/// listings show, so that `--since` the day a listing shows an event on
/// finds it (in Seoul a UTC day missed the morning's events, field test 7).
pub fn parse_given(input: &str) -> Result<Timestamp> {
    parse_in(input, TimeZone::system())
}

fn parse_in(input: &str, zone: TimeZone) -> Result<Timestamp> {
    let trimmed = input.trim();
    if let Ok(ts) = trimmed.parse::<Timestamp>() {
        return Ok(ts);
    }
    if let Ok(date) = trimmed.parse::<jiff::civil::Date>()
        && let Ok(zoned) = date.to_zoned(zone)
    {
        return Ok(zoned.timestamp());
    }
    Err(Error::invalid(
        format!("timestamp {input:?}"),
        "expected RFC 3339 (2026-11-22T05:27:21Z) or a date (2026-11-22)",
    ))
}

/// Milliseconds since the epoch of a stored timestamp; 0 when it does not
/// parse (the index orders such events first).
pub fn to_ms(ts: &str) -> i64 {
    parse(ts).map(|t| t.as_millisecond()).unwrap_or(0)
}

/// `2026-11-22 14:27` from a stored timestamp: the minute in the local
/// time zone (`TZ`, else the system's), as `git log` shows times, for
/// listings; stored times are UTC, and a listing in UTC read 9 hours off
/// in Seoul. A timestamp that does not parse is shown as stored.
pub fn short(ts: &str) -> String {
    match parse(ts) {
        Ok(t) => short_local(t),
        Err(_) => ts
            .get(..16)
            .map(|s| s.replace('T', " "))
            .unwrap_or_else(|| ts.to_string()),
    }
}

/// Seconds since the epoch in memlog's form (the epoch itself for a time
/// out of range).
pub fn from_secs(secs: i64) -> String {
    format(Timestamp::from_second(secs).unwrap_or(Timestamp::UNIX_EPOCH))
}

fn short_local(t: Timestamp) -> String {
    t.to_zoned(TimeZone::system())
        .strftime("%Y-%m-%d %H:%M")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_offsets_and_precision() {
        assert_eq!(
            normalize("2026-11-22T07:27:21.123456+02:00").unwrap(),
            "2026-11-22T05:27:21.123Z"
        );
        assert_eq!(
            normalize("2026-11-22T05:27:21Z").unwrap(),
            "2026-11-22T05:27:21.000Z"
        );
        assert_eq!(normalize("2026-11-22").unwrap(), "2026-11-22T00:00:00.000Z");
        assert!(normalize("yesterday").is_err());
    }
}
