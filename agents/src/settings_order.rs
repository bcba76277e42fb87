//! Writing a settings file back in the order its user wrote it. serde_json
//! (without `preserve_order`, which would reorder every JSON memlog prints)
//! keeps objects sorted by key, so an install rewrote a committed
//! `.claude/settings.json` alphabetically: a noisy diff in a file a team
//! reviews. The order of every object's keys is read from the file as it
//! was ([`Order`]), and the edited settings are written in it, keys the
//! edit added last.

use std::collections::HashSet;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// The order of an object's keys as written, with that of the objects
/// within (by key, and by position in arrays).
#[derive(Debug, Default)]
pub(crate) struct Order {
    keys: Vec<(String, Order)>,
    items: Vec<Order>,
}

const NONE: &Order = &Order {
    keys: Vec::new(),
    items: Vec::new(),
};

impl Order {
    /// The order of `text` (a JSON document); none for anything else.
    pub(crate) fn of(text: &str) -> Order {
        serde_json::from_str(text).unwrap_or_default()
    }

    pub(crate) fn of_key(&self, key: &str) -> &Order {
        self.keys
            .iter()
            .find(|(k, _)| k == key)
            .map_or(NONE, |(_, o)| o)
    }
}

impl<'de> Deserialize<'de> for Order {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Order, D::Error> {
        d.deserialize_any(OrderVisitor)
    }
}

struct OrderVisitor;

impl<'de> Visitor<'de> for OrderVisitor {
    type Value = Order;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Order, A::Error> {
        let mut keys = Vec::new();
        while let Some((key, order)) = map.next_entry::<String, Order>()? {
            keys.push((key, order));
        }
        Ok(Order {
            keys,
            items: Vec::new(),
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Order, A::Error> {
        let mut items = Vec::new();
        while let Some(order) = seq.next_element::<Order>()? {
            items.push(order);
        }
        Ok(Order {
            keys: Vec::new(),
            items,
        })
    }

    fn visit_bool<E>(self, _: bool) -> Result<Order, E> {
        Ok(Order::default())
    }

    fn visit_i64<E>(self, _: i64) -> Result<Order, E> {
        Ok(Order::default())
    }

    fn visit_u64<E>(self, _: u64) -> Result<Order, E> {
        Ok(Order::default())
    }

    fn visit_f64<E>(self, _: f64) -> Result<Order, E> {
        Ok(Order::default())
    }

    fn visit_str<E>(self, _: &str) -> Result<Order, E> {
        Ok(Order::default())
    }

    fn visit_unit<E>(self) -> Result<Order, E> {
        Ok(Order::default())
    }
}

/// `value` as pretty JSON (serde_json's layout: two spaces, `"key": value`)
/// with each object's keys in `order`, then the ones it does not know.
pub(crate) fn pretty_in(value: &Value, order: &Order) -> String {
    let mut out = String::new();
    write(value, order, 0, &mut out);
    out
}

fn write(value: &Value, order: &Order, indent: usize, out: &mut String) {
    let pad = |n: usize, out: &mut String| out.extend(std::iter::repeat_n(' ', n));
    match value {
        Value::Object(map) if !map.is_empty() => {
            let mut seen = HashSet::new();
            let keys: Vec<&String> = order
                .keys
                .iter()
                .map(|(k, _)| k)
                .filter(|k| map.contains_key(k.as_str()) && seen.insert(k.as_str()))
                .chain(
                    map.keys()
                        .filter(|k| !order.keys.iter().any(|(o, _)| o == *k)),
                )
                .collect();
            out.push_str("{\n");
            for (i, key) in keys.iter().enumerate() {
                pad(indent + 2, out);
                out.push_str(&Value::String((*key).clone()).to_string());
                out.push_str(": ");
                write(&map[key.as_str()], order.of_key(key), indent + 2, out);
                out.push_str(if i + 1 < keys.len() { ",\n" } else { "\n" });
            }
            pad(indent, out);
            out.push('}');
        }
        Value::Array(items) if !items.is_empty() => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                pad(indent + 2, out);
                write(item, order.items.get(i).unwrap_or(NONE), indent + 2, out);
                out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
            }
            pad(indent, out);
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_keep_their_order_and_new_ones_come_last() {
        let text = r#"{"permissions": {"deny": [], "allow": ["Bash(ls)"]}, "env": {"Z": "1", "A": "2"}, "model": "x"}"#;
        let mut value: Value = serde_json::from_str(text).unwrap();
        value["hooks"] = serde_json::json!({"Stop": [{"type": "command"}]});
        let out = pretty_in(&value, &Order::of(text));
        let at = |s: &str| out.find(s).unwrap();
        assert!(at("\"permissions\"") < at("\"env\"") && at("\"env\"") < at("\"model\""));
        assert!(at("\"model\"") < at("\"hooks\""), "{out}");
        assert!(
            at("\"deny\"") < at("\"allow\"") && at("\"Z\"") < at("\"A\""),
            "{out}"
        );
        // the layout is serde_json's own
        let reparsed: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(reparsed, value);
        assert_eq!(
            pretty_in(&value, &Order::default()),
            serde_json::to_string_pretty(&value).unwrap()
        );
    }
}
