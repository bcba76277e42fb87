//! What `forget` events hide.
//!
//! A `forget` event's body names what to hide: `targets` (event ids),
//! `session` (a whole session) and/or `before` (every event older than a
//! timestamp), with an optional `reason`. Hidden events vanish from every
//! reader; the forget events themselves stay visible as the audit trail.
//! Hiding is not erasure: `memlog purge` removes the bytes from history.

use std::collections::HashSet;

use serde_json::Value;

use crate::{Event, Kind};

/// The union of all forget events seen.
#[derive(Clone, Debug, Default)]
pub struct Forgets {
    ids: HashSet<String>,
    sessions: HashSet<String>,
    before: Option<String>,
}

impl Forgets {
    /// What the `forget` events among `events` hide.
    pub fn from_events<'a>(events: impl IntoIterator<Item = &'a Event>) -> Forgets {
        let mut f = Forgets::default();
        for e in events {
            f.add(e);
        }
        f
    }

    /// Takes one event into account (ignored unless it is a `forget`).
    pub fn add(&mut self, event: &Event) {
        if event.kind != Kind::Forget {
            return;
        }
        if let Some(Value::Array(targets)) = event.body.get("targets") {
            self.ids
                .extend(targets.iter().filter_map(Value::as_str).map(str::to_string));
        }
        if let Some(s) = event.body.get("session").and_then(Value::as_str) {
            self.sessions.insert(s.to_string());
        }
        if let Some(b) = event.body.get("before").and_then(Value::as_str)
            && self.before.as_deref().is_none_or(|cur| b > cur)
        {
            self.before = Some(b.to_string());
        }
    }

    /// Whether nothing is hidden.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty() && self.sessions.is_empty() && self.before.is_none()
    }

    /// Whether `event` is hidden.
    pub fn hides(&self, event: &Event) -> bool {
        if event.kind == Kind::Forget {
            return false;
        }
        self.ids.contains(event.id.as_str())
            || self.sessions.contains(&event.session)
            || self
                .before
                .as_deref()
                .is_some_and(|b| event.ts.as_str() < b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::event::test_event as ev;

    #[test]
    fn hides_by_id_session_and_date_but_never_forgets() {
        let a = ev(
            "s1",
            "2026-01-01T00:00:00.000Z",
            Kind::Note,
            json!({"text": "a"}),
        );
        let b = ev(
            "s2",
            "2026-02-01T00:00:00.000Z",
            Kind::Note,
            json!({"text": "b"}),
        );
        let c = ev(
            "s3",
            "2026-03-01T00:00:00.000Z",
            Kind::Note,
            json!({"text": "c"}),
        );
        let f1 = ev(
            "x",
            "2026-04-01T00:00:00.000Z",
            Kind::Forget,
            json!({"targets": [a.id]}),
        );
        let f = Forgets::from_events([&f1]);
        assert!(f.hides(&a) && !f.hides(&b) && !f.hides(&f1));
        let f2 = ev(
            "x",
            "2026-04-01T00:00:00.000Z",
            Kind::Forget,
            json!({"session": "s2"}),
        );
        let f3 = ev(
            "x",
            "2026-05-01T00:00:00.000Z",
            Kind::Forget,
            json!({"before": "2026-02-15T00:00:00.000Z"}),
        );
        let f = Forgets::from_events([&f2, &f3]);
        assert!(f.hides(&a) && f.hides(&b) && !f.hides(&c) && !f.hides(&f3));
    }
}
