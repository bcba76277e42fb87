//! Canonical JSON: the one byte form of a JSON value that memlog hashes and
//! stores.
//!
//! Object keys are sorted by their UTF-8 bytes, there is no whitespace,
//! strings are escaped exactly as `serde_json` escapes them (`"`, `\`, and
//! control characters; everything else is raw UTF-8), and a floating-point
//! number with an integral value in the exactly representable range
//! (|x| < 2^53) is written as an integer. The writer sorts keys itself rather
//! than trusting the map type, so a feature flag elsewhere in a build (such as
//! `serde_json/preserve_order`) cannot change the bytes.

use serde_json::{Number, Value};

/// Largest integer magnitude an `f64` represents exactly.
const EXACT_F64_INT: f64 = 9_007_199_254_740_992.0;

/// The canonical bytes of `value`.
pub fn to_string(value: &Value) -> String {
    let mut out = String::with_capacity(256);
    write(&mut out, value);
    out
}

/// Appends the canonical form of `value` to `out`.
pub fn write(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_str(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => write_map(out, map),
    }
}

/// Appends the canonical form of a JSON object.
pub fn write_map(out: &mut String, map: &serde_json::Map<String, Value>) {
    let sorted = map
        .keys()
        .zip(map.keys().skip(1))
        .all(|(a, b)| a.as_bytes() < b.as_bytes());
    out.push('{');
    if sorted {
        // serde_json's default map is a BTreeMap: already in byte order.
        for (i, (k, v)) in map.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            write_str(out, k);
            out.push(':');
            write(out, v);
        }
    } else {
        let mut entries: Vec<(&String, &Value)> = map.iter().collect();
        entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        for (i, (k, v)) in entries.into_iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            write_str(out, k);
            out.push(':');
            write(out, v);
        }
    }
    out.push('}');
}

/// Rewrites integral floats as integers in place, so that a value equals
/// what reading its canonical form back gives.
pub fn normalize(value: &mut Value) {
    match value {
        Value::Number(n) => {
            if let Some(f) = n.as_f64().filter(|_| n.is_f64())
                && f.fract() == 0.0
                && f.abs() < EXACT_F64_INT
            {
                *n = Number::from(f as i64);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(normalize),
        Value::Object(map) => map.values_mut().for_each(normalize),
        Value::Null | Value::Bool(_) | Value::String(_) => {}
    }
}

fn write_number(out: &mut String, n: &Number) {
    if let Some(f) = n.as_f64().filter(|_| n.is_f64())
        && f.fract() == 0.0
        && f.abs() < EXACT_F64_INT
    {
        out.push_str(&(f as i64).to_string());
        return;
    }
    out.push_str(&n.to_string());
}

/// Appends a JSON string, escaped exactly as serde_json escapes: `"`, `\\`,
/// `\b \f \n \r \t`, other control characters as `\u00xx`, nothing else.
pub fn write_str(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: &str = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0x00..=0x1f => "",
            _ => continue,
        };
        // Every byte matched above is ASCII, so `i` is a char boundary.
        out.push_str(&s[start..i]);
        if escape.is_empty() {
            out.push_str("\\u00");
            out.push(HEX[(b >> 4) as usize] as char);
            out.push(HEX[(b & 0xf) as usize] as char);
        } else {
            out.push_str(escape);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sorts_keys_and_drops_whitespace() {
        let v = json!({"b": 1, "a": {"z": [1, 2, {"y": null, "x": true}], "m": "é\n\"q\""}});
        assert_eq!(
            to_string(&v),
            r#"{"a":{"m":"é\n\"q\"","z":[1,2,{"x":true,"y":null}]},"b":1}"#
        );
    }

    #[test]
    fn integral_floats_become_integers() {
        assert_eq!(
            to_string(&json!([1.0, -3.0, 2.5, 1e300])),
            "[1,-3,2.5,1e+300]"
        );
    }

    #[test]
    fn strings_escape_like_serde_json() {
        let all: String = (0u8..0x80).map(char::from).chain("é€😀".chars()).collect();
        assert_eq!(to_string(&json!(all)), serde_json::to_string(&all).unwrap());
    }

    #[test]
    fn keys_sort_by_bytes_not_chars() {
        // 'Z' (0x5a) < 'a' (0x61) < 'é' (0xc3 0xa9)
        let v = json!({"é": 1, "a": 2, "Z": 3});
        assert_eq!(to_string(&v), r#"{"Z":3,"a":2,"é":1}"#);
    }
}
