//! Structured mutations of real samples for the bounded fuzz tests of
//! every crate (`#[path]`-included by hooks and store): byte flips,
//! deletions, insertions of random bytes or of tokens that break parsers,
//! duplicated ranges, truncations.
#![allow(dead_code)] // each includer uses what it needs

use proptest::prelude::*;

/// Fragments that break parsers in interesting ways: JSON and YAML
/// punctuation, extreme numbers, escapes, multi-byte text, newlines.
const TOKENS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "\"",
    ":",
    ",",
    "\\",
    "\\u0000",
    "\\ud800",
    "null",
    "true",
    "-1",
    "1e999",
    "18446744073709551616",
    "-0.0",
    "\n",
    "\r\n",
    "\t",
    "  ",
    "- ",
    "&a",
    "*a",
    "!!",
    "~",
    "|",
    ">",
    "#",
    "😀",
    "가",
    "\u{0}",
    "\u{feff}",
    "\"kind\":\"fact\"",
    "\"id\":",
    "\"body\":{}",
    "\"ts\":\"9999-99-99\"",
    "\"seq\":-1",
];

/// One edit of a sample: positions wrap around its length.
#[derive(Clone, Debug)]
pub enum Edit {
    Flip(usize, u8),
    Delete(usize, usize),
    Insert(usize, Vec<u8>),
    Token(usize, usize),
    Duplicate(usize, usize),
    Truncate(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(p, b)| Edit::Flip(p, b)),
        (any::<usize>(), 0usize..64).prop_map(|(p, n)| Edit::Delete(p, n)),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 0..16))
            .prop_map(|(p, b)| Edit::Insert(p, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(p, t)| Edit::Token(p, t)),
        (any::<usize>(), 0usize..256).prop_map(|(p, n)| Edit::Duplicate(p, n)),
        any::<usize>().prop_map(Edit::Truncate),
    ]
}

/// `sample` with `edits` applied (positions wrap around its length).
pub fn mutate(sample: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut out = sample.to_vec();
    for e in edits {
        let at = |p: usize, len: usize| if len == 0 { 0 } else { p % (len + 1) };
        match e {
            Edit::Flip(p, b) if !out.is_empty() => {
                let i = p % out.len();
                out[i] ^= b | 1;
            }
            Edit::Flip(..) => {}
            Edit::Delete(p, n) => {
                let i = at(*p, out.len());
                let end = (i + n).min(out.len());
                out.drain(i..end);
            }
            Edit::Insert(p, bytes) => {
                let i = at(*p, out.len());
                out.splice(i..i, bytes.iter().copied());
            }
            Edit::Token(p, t) => {
                let i = at(*p, out.len());
                out.splice(i..i, TOKENS[t % TOKENS.len()].bytes());
            }
            Edit::Duplicate(p, n) => {
                let i = at(*p, out.len());
                let end = (i + n).min(out.len());
                let copy = out[i..end].to_vec();
                out.splice(end..end, copy);
            }
            Edit::Truncate(p) => {
                let i = at(*p, out.len());
                out.truncate(i);
            }
        }
    }
    out
}

/// A few edits.
pub fn edits() -> impl Strategy<Value = Vec<Edit>> {
    prop::collection::vec(edit(), 1..8)
}

/// A JSON value of any type, a few levels deep.
pub fn json_value() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::{Value, json};
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        ".{0,24}".prop_map(Value::String),
        prop::sample::select(TOKENS).prop_map(|t| Value::String(t.to_string())),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::Array),
            prop::collection::btree_map("[a-z_]{1,12}", inner, 0..4)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

/// `value` with the node reached by `path` (indexes wrap around each
/// level's length) replaced by `with`: a field of the wrong type, an array
/// where an object was.
pub fn replace_node(value: &mut serde_json::Value, path: &[usize], with: serde_json::Value) {
    use serde_json::Value;
    let Some((first, rest)) = path.split_first() else {
        *value = with;
        return;
    };
    let child = match value {
        Value::Object(m) if !m.is_empty() => {
            let key = m.keys().nth(first % m.len()).cloned();
            key.and_then(|k| m.get_mut(&k))
        }
        Value::Array(a) if !a.is_empty() => {
            let n = a.len();
            a.get_mut(first % n)
        }
        _ => None,
    };
    match child {
        Some(c) if !rest.is_empty() => replace_node(c, rest, with),
        Some(c) => *c = with,
        None => *value = with,
    }
}
