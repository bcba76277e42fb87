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
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.push('{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_str(out, k);
                out.push(':');
                write(out, v);
            }
            out.push('}');
        }
    }
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

fn write_str(out: &mut String, s: &str) {
    // serde_json's escaping of a &str cannot fail; fall back to an empty
    // string rather than panic should that ever change.
    match serde_json::to_string(s) {
        Ok(escaped) => out.push_str(&escaped),
        Err(_) => out.push_str("\"\""),
    }
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
    fn keys_sort_by_bytes_not_chars() {
        // 'Z' (0x5a) < 'a' (0x61) < 'é' (0xc3 0xa9)
        let v = json!({"é": 1, "a": 2, "Z": 3});
        assert_eq!(to_string(&v), r#"{"Z":3,"a":2,"é":1}"#);
    }
}
