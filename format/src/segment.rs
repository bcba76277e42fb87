//! Segments: content-addressed JSONL files, the unit memlog stores in git.
//!
//! A segment is the canonical lines of some events of one session, each line
//! ending in `\n`. Its name is the blake3 hash (hex) of its bytes and its path
//! in the memlog tree is `segments/<first two hex digits>/<hash>.jsonl`, so a
//! segment is immutable, verifiable, and two clones adding segments never
//! write the same path.

use crate::Event;

/// A session's events are split into segments of at most this many bytes
/// (a single larger event gets a segment of its own).
pub const MAX_SEGMENT_BYTES: usize = 4 << 20;

/// The tree directory that holds segments.
pub const SEGMENTS_DIR: &str = "segments";

/// One encoded segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// blake3 of its bytes, hex: its name.
    pub hash: String,
    /// The canonical lines, each ending in a newline.
    pub bytes: Vec<u8>,
}

impl Segment {
    /// Encodes events, in the order given, into segments of at most
    /// [`MAX_SEGMENT_BYTES`].
    pub fn encode<'a>(events: impl IntoIterator<Item = &'a Event>) -> Vec<Segment> {
        Segment::encode_with_limit(events, MAX_SEGMENT_BYTES)
    }

    /// [`Segment::encode`] with segments of at most `limit` bytes.
    pub fn encode_with_limit<'a>(
        events: impl IntoIterator<Item = &'a Event>,
        limit: usize,
    ) -> Vec<Segment> {
        let mut segments = Vec::new();
        let mut text = String::new();
        let mut line = String::with_capacity(1024);
        for event in events {
            line.clear();
            event.write_canonical(&mut line, true);
            if !text.is_empty() && text.len() + line.len() + 1 > limit {
                segments.push(Segment::from_bytes(std::mem::take(&mut text).into_bytes()));
            }
            text.push_str(&line);
            text.push('\n');
        }
        if !text.is_empty() {
            segments.push(Segment::from_bytes(text.into_bytes()));
        }
        segments
    }

    /// A segment of stored bytes, named by their hash.
    pub fn from_bytes(bytes: Vec<u8>) -> Segment {
        Segment {
            hash: blake3::hash(&bytes).to_hex().to_string(),
            bytes,
        }
    }

    /// `segments/<aa>/<hash>.jsonl`
    pub fn path(&self) -> String {
        path_for(&self.hash)
    }
}

/// The tree path of the segment whose hash is `hash`.
pub fn path_for(hash: &str) -> String {
    format!("{SEGMENTS_DIR}/{}/{hash}.jsonl", &hash[..2.min(hash.len())])
}

/// The hash named by a segment file name (`<hash>.jsonl`), if it is one.
pub fn hash_from_name(name: &str) -> Option<&str> {
    let hash = name.strip_suffix(".jsonl")?;
    (hash.len() == 64
        && hash
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()))
    .then_some(hash)
}

/// The ids of the events in segment bytes, read without decoding whole
/// events (for deduplication). Lines that do not parse are skipped.
pub fn ids(bytes: &[u8]) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct IdOnly<'a> {
        #[serde(borrow)]
        id: std::borrow::Cow<'a, str>,
    }
    bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .filter_map(|l| serde_json::from_slice::<IdOnly>(l).ok())
        .map(|x| x.id.into_owned())
        .collect()
}

/// Segment bytes without the lines of some events, byte for byte as they
/// were otherwise (FORMAT.md §3.2: how a purge rewrites a segment, the same
/// on every clone): the kept bytes, and the lines taken out. A line whose
/// id does not parse is kept.
pub fn split_out(bytes: &[u8], gone: impl Fn(&str) -> bool) -> (Vec<u8>, Vec<&[u8]>) {
    #[derive(serde::Deserialize)]
    struct IdOnly<'a> {
        #[serde(borrow)]
        id: std::borrow::Cow<'a, str>,
    }
    let mut kept = Vec::with_capacity(bytes.len());
    let mut removed = Vec::new();
    for line in bytes.split_inclusive(|b| *b == b'\n') {
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        let is_gone = serde_json::from_slice::<IdOnly>(body).is_ok_and(|x| gone(&x.id));
        if is_gone {
            removed.push(body);
        } else {
            kept.extend_from_slice(line);
        }
    }
    (kept, removed)
}

/// A problem found while decoding a segment or journal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineProblem {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong with it.
    pub message: String,
}

/// Decodes segment (or journal) bytes: every complete line that is a valid
/// event, and a problem for every line that is not. A final line without a
/// newline is reported as torn.
pub fn decode(bytes: &[u8]) -> (Vec<Event>, Vec<LineProblem>) {
    decode_lines(bytes, true)
}

/// Like [`decode`], but trusts the ids (for segments whose bytes were already
/// verified against their name; `fsck` verifies every id).
pub fn decode_trusted(bytes: &[u8]) -> (Vec<Event>, Vec<LineProblem>) {
    decode_lines(bytes, false)
}

fn decode_lines(bytes: &[u8], verify_ids: bool) -> (Vec<Event>, Vec<LineProblem>) {
    let mut events = Vec::new();
    let mut problems = Vec::new();
    let mut rest = bytes;
    let mut line_no = 0;
    while !rest.is_empty() {
        line_no += 1;
        let (line, complete) = match rest.iter().position(|b| *b == b'\n') {
            Some(i) => {
                let l = &rest[..i];
                rest = &rest[i + 1..];
                (l, true)
            }
            None => {
                let l = rest;
                rest = &[];
                (l, false)
            }
        };
        if !complete {
            problems.push(LineProblem {
                line: line_no,
                message: "torn last line (no newline): an interrupted write".into(),
            });
            break;
        }
        let parsed = std::str::from_utf8(line)
            .map_err(|e| format!("not UTF-8: {e}"))
            .and_then(|l| {
                if verify_ids {
                    Event::from_line(l)
                } else {
                    serde_json::from_str(l)
                        .map_err(|e| format!("not JSON: {e}"))
                        .and_then(Event::from_value)
                }
            });
        match parsed {
            Ok(e) => events.push(e),
            Err(message) => problems.push(LineProblem {
                line: line_no,
                message,
            }),
        }
    }
    (events, problems)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Draft, Kind};

    fn events(n: u64) -> Vec<Event> {
        (0..n)
            .map(|i| {
                Draft::text(
                    "s",
                    "2026-11-22T05:27:21.123Z",
                    Kind::Note,
                    "p",
                    format!("note {i}"),
                )
                .into_event(i)
            })
            .collect()
    }

    #[test]
    fn splits_on_the_byte_limit_and_round_trips() {
        let evs = events(10);
        let one = Segment::encode(&evs);
        assert_eq!(one.len(), 1);
        let line_len = evs[0].canonical_line().len() + 1;
        let split = Segment::encode_with_limit(&evs, line_len * 3);
        assert_eq!(split.len(), 4);
        let decoded: Vec<Event> = split.iter().flat_map(|s| decode(&s.bytes).0).collect();
        assert_eq!(decoded, evs);
        let ids: Vec<String> = split.iter().flat_map(|s| ids(&s.bytes)).collect();
        assert_eq!(ids, evs.iter().map(|e| e.id.clone()).collect::<Vec<_>>());
        assert!(
            one[0]
                .path()
                .starts_with(&format!("segments/{}/", &one[0].hash[..2]))
        );
        assert_eq!(
            hash_from_name(&format!("{}.jsonl", one[0].hash)),
            Some(one[0].hash.as_str())
        );
        assert_eq!(hash_from_name("README.md"), None);
    }

    #[test]
    fn split_out_keeps_the_other_lines_byte_for_byte() {
        let evs = events(4);
        let seg = &Segment::encode(&evs)[0];
        let gone = [evs[1].id.as_str(), evs[3].id.as_str()];
        let (kept, removed) = split_out(&seg.bytes, |id| gone.contains(&id));
        assert_eq!(kept, Segment::encode([&evs[0], &evs[2]])[0].bytes);
        assert_eq!(removed.len(), 2);
        assert_eq!(removed[0], evs[1].canonical_line().as_bytes());
        let (all, none) = split_out(&seg.bytes, |_| false);
        assert_eq!((all, none.len()), (seg.bytes.clone(), 0));
        let (empty, _) = split_out(&seg.bytes, |_| true);
        assert!(empty.is_empty());
    }

    #[test]
    fn decode_reports_bad_and_torn_lines() {
        let mut bytes = events(1)[0].canonical_line().into_bytes();
        bytes.extend_from_slice(b"\n{not json}\n{\"v\":1");
        let (evs, problems) = decode(&bytes);
        assert_eq!(evs.len(), 1);
        assert_eq!(problems.len(), 2);
        assert_eq!(problems[0].line, 2);
        assert!(problems[1].message.contains("torn"));
    }
}
