//! Personal scope: events that never leave this machine.
//!
//! An event is personal when its `meta.scope` is `"personal"` (FORMAT.md
//! §9). The mark is part of the event, hence of its id: a personal event and
//! a shared one never collapse into one. Writers route personal events to a
//! ref of their own that no sync or push of the memlog ref carries; readers
//! search them like the rest.
//!
//! What makes an event personal is decided once, on the write path: the
//! writer's explicit mark (`memlog note --personal`, `record --personal`,
//! an MCP argument), or the rules of `.memlog.yaml` ([`PersonalConfig`]): a
//! session, an agent, or a `<personal>` tag in the event's text. A session
//! that recorded one personal event keeps the rest of its events personal:
//! what follows a private word (the answer, the tool calls) repeats it.

use serde_json::{Map, Value};

use crate::Draft;
use crate::config::PersonalConfig;

/// The `meta` key holding an event's scope.
pub const SCOPE_KEY: &str = "scope";
/// The scope of events that stay on this machine.
pub const PERSONAL: &str = "personal";
/// The tag that marks a text personal (case-insensitive).
pub const PERSONAL_TAG: &str = "<personal>";

/// Where an event is kept: the shared log, or this machine only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// The memlog ref, shared by sync and push.
    Shared,
    /// A ref of its own, never synced or pushed.
    Personal,
}

impl Scope {
    /// The scope event metadata gives.
    pub fn of(meta: &Map<String, Value>) -> Scope {
        if is_personal(meta) {
            Scope::Personal
        } else {
            Scope::Shared
        }
    }
}

/// Whether event metadata marks it personal.
pub fn is_personal(meta: &Map<String, Value>) -> bool {
    meta.get(SCOPE_KEY).and_then(Value::as_str) == Some(PERSONAL)
}

/// Marks metadata personal.
pub fn mark_personal(meta: &mut Map<String, Value>) {
    meta.insert(SCOPE_KEY.into(), Value::String(PERSONAL.into()));
}

/// Whether the configured rules make `draft` personal: its session is
/// listed (an entry ending in `*` matches a prefix), its agent
/// (`meta.client`) is listed, or, with `tag` on, its `body.text` holds a
/// `<personal>` tag.
pub fn rules_make_personal(draft: &Draft, rules: &PersonalConfig) -> bool {
    let listed = |patterns: &[String], value: &str| {
        patterns.iter().any(|p| match p.strip_suffix('*') {
            Some(prefix) => value.starts_with(prefix),
            None => p == value,
        })
    };
    if listed(&rules.sessions, &draft.session) {
        return true;
    }
    if let Some(client) = draft.meta.get("client").and_then(Value::as_str)
        && listed(&rules.agents, client)
    {
        return true;
    }
    rules.tag
        && draft
            .body
            .get("text")
            .and_then(Value::as_str)
            .is_some_and(has_tag)
}

/// Whether `text` holds the `<personal>` tag, in any case.
pub fn has_tag(text: &str) -> bool {
    text.as_bytes()
        .windows(PERSONAL_TAG.len())
        .any(|w| w.eq_ignore_ascii_case(PERSONAL_TAG.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Kind;

    fn draft(session: &str, client: Option<&str>, text: &str) -> Draft {
        let mut d = Draft::text(session, "2026-01-01T00:00:00.000Z", Kind::Note, "p", text);
        if let Some(c) = client {
            d.meta.insert("client".into(), Value::String(c.into()));
        }
        d
    }

    #[test]
    fn rules_mark_sessions_agents_and_tags() {
        let rules = PersonalConfig {
            sessions: vec!["diary".into(), "me-*".into()],
            agents: vec!["gemini-cli".into()],
            tag: true,
        };
        assert!(rules_make_personal(&draft("diary", None, "x"), &rules));
        assert!(rules_make_personal(&draft("me-42", None, "x"), &rules));
        assert!(!rules_make_personal(&draft("diary2", None, "x"), &rules));
        assert!(rules_make_personal(
            &draft("s", Some("gemini-cli"), "x"),
            &rules
        ));
        assert!(!rules_make_personal(
            &draft("s", Some("codex"), "x"),
            &rules
        ));
        assert!(rules_make_personal(
            &draft("s", None, "my salary <Personal> is 10"),
            &rules
        ));
        let off = PersonalConfig {
            tag: false,
            ..rules
        };
        assert!(!rules_make_personal(
            &draft("s", None, "<personal> x"),
            &off
        ));
    }

    #[test]
    fn the_mark_is_meta_scope() {
        let mut meta = Map::new();
        assert!(!is_personal(&meta));
        mark_personal(&mut meta);
        assert!(is_personal(&meta));
        assert_eq!(meta["scope"], "personal");
    }
}
