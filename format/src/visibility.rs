//! What `forget` events hide.
//!
//! A `forget` event's body names what to hide: `targets` (event ids),
//! `session` (a whole session, as far as it went when it was forgotten: a
//! session the agent resumes later under the same id is recorded and seen
//! again) and/or `before` (every event older than a timestamp), with an
//! optional `reason`. Hidden events vanish from every
//! reader; the forget events themselves stay visible as the audit trail.
//! Hiding is not erasure: `memlog purge` removes the bytes from history.
//!
//! Forgetting reaches what was derived (docs/DESIGN.md §11): a `forget`
//! records in `derived` the events made from what it hides — facts aligned
//! to it, memories giving it as evidence, summaries and recalls quoting its
//! words, and what a session the memory was injected into repeated of it
//! (an agent's answer echoing a leaked host name to a teammate) — found by
//! [`derived_from`] when it was recorded. Independently, an
//! event whose source ([`sources`]) a forget names by id is hidden too, so
//! that a fact recorded later, or elsewhere, follows its source; so is a
//! rule's retirement, which repeats the rule's text, and a rule all of
//! whose evidence is hidden, which then stands on nothing.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::{Event, EventId, Kind};

/// Fewest characters of a hidden event's text that count as a quote of it
/// (shorter texts — "yes", "fix it" — are everywhere).
pub const MIN_QUOTE_CHARS: usize = 20;
/// A hidden text longer than this is quoted by any of its lines of at
/// least [`LINE_QUOTE_CHARS`] characters; a shorter one only as a whole.
pub const WHOLE_QUOTE_CHARS: usize = 200;
/// See [`WHOLE_QUOTE_CHARS`].
pub const LINE_QUOTE_CHARS: usize = 40;
/// In a session that a recall gave a hidden event, this many of its words
/// in a row, one of them distinctive (a digit, or 14 letters or more),
/// repeated by an agent's answer in the session (answering from the memory
/// it was given) count as a quote of it.
pub const ECHO_WORDS: usize = 8;

/// The union of all forget events seen.
#[derive(Clone, Debug, Default)]
pub struct Forgets {
    ids: HashSet<String>,
    /// Each session forgotten, with the time of its latest forget: what
    /// it recorded until then is hidden.
    sessions: HashMap<String, String>,
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
        for field in ["targets", "derived"] {
            if let Some(Value::Array(ids)) = event.body.get(field) {
                self.ids
                    .extend(ids.iter().filter_map(Value::as_str).map(str::to_string));
            }
        }
        if let Some(s) = event.body.get("session").and_then(Value::as_str) {
            let until = self.sessions.entry(s.to_string()).or_default();
            if event.ts > *until {
                *until = event.ts.clone();
            }
        }
        if let Some(b) = event.body.get("before").and_then(Value::as_str)
            && self.before.as_deref().is_none_or(|cur| b > cur)
        {
            self.before = Some(b.to_string());
        }
    }

    /// Hides these events by id as well (events a purge erased, named by
    /// its record).
    pub fn hide_ids<'a>(&mut self, ids: impl IntoIterator<Item = &'a str>) {
        self.ids.extend(ids.into_iter().map(str::to_string));
    }

    /// Whether nothing is hidden.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty() && self.sessions.is_empty() && self.before.is_none()
    }

    /// Whether a forget hides the whole of `session`.
    pub fn hides_session(&self, session: &str) -> bool {
        self.sessions.contains_key(session)
    }

    /// Whether `event` is hidden.
    pub fn hides(&self, event: &Event) -> bool {
        if event.kind == Kind::Forget {
            return false;
        }
        self.ids.contains(event.id.as_str())
            || sources(event).iter().any(|s| self.ids.contains(*s))
            || unfounded(event, |id| self.ids.contains(id))
            || self
                .sessions
                .get(&event.session)
                .is_some_and(|until| event.ts <= *until)
            || self
                .before
                .as_deref()
                .is_some_and(|b| event.ts.as_str() < b)
    }
}

/// Whether `event` is a rule whose evidence (`body.evidence`) is all
/// `gone`: a rule proven by nothing left. (A rule that loses some of its
/// evidence still stands on the rest.)
fn unfounded(event: &Event, gone: impl Fn(&str) -> bool) -> bool {
    if event.kind != Kind::Rule {
        return false;
    }
    let Some(Value::Array(ids)) = event.body.get("evidence") else {
        return false;
    };
    !ids.is_empty() && ids.iter().all(|id| id.as_str().is_some_and(&gone))
}

/// The events `event` was made from, by id: a fact's source event
/// (`body.event`), the rule a `rule_retired` event retires (it repeats the
/// rule's text: `body.target`) and the evidence a remembered memory gives
/// (`meta.evidence`).
pub fn sources(event: &Event) -> Vec<&str> {
    if event.kind == Kind::Forget {
        return Vec::new();
    }
    let mut out = Vec::new();
    let source = match event.kind {
        Kind::Fact => "event",
        Kind::RuleRetired => "target",
        _ => "",
    };
    if let Some(id) = event.body.get(source).and_then(Value::as_str) {
        out.push(id);
    }
    if let Some(Value::Array(ids)) = event.meta.get("evidence") {
        out.extend(ids.iter().filter_map(Value::as_str));
    }
    out
}

/// The words of an event another may quote: its text, a tool's output or
/// error.
fn quotable(event: &Event) -> impl Iterator<Item = &str> {
    ["text", "output", "error"]
        .into_iter()
        .filter_map(|k| event.body.get(k).and_then(Value::as_str))
        .map(str::trim)
        .filter(|t| t.chars().count() >= MIN_QUOTE_CHARS)
}

/// What an event says that could quote another: a summary's text, a
/// recall's query.
fn quoting(event: &Event) -> Option<&str> {
    match event.kind {
        Kind::SessionSummary => event.text(),
        Kind::Recall => event.body.get("query").and_then(Value::as_str),
        _ => None,
    }
}

/// Whether `text` quotes `hidden` (see [`WHOLE_QUOTE_CHARS`]).
fn quotes(text: &str, hidden: &str) -> bool {
    if hidden.chars().count() <= WHOLE_QUOTE_CHARS {
        return text.contains(hidden);
    }
    hidden
        .lines()
        .map(str::trim)
        .filter(|l| l.chars().count() >= LINE_QUOTE_CHARS)
        .any(|l| text.contains(l))
}

/// The lowercase words of `text` (runs of letters and digits).
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

/// Every run of [`ECHO_WORDS`] words of `text` that holds a distinctive
/// word, each as one string. Common prose ("let me know if you want me to
/// make any other changes") is every agent's, and no echo of a memory.
fn word_runs(text: &str) -> Vec<String> {
    let w: Vec<String> = words(text).collect();
    w.windows(ECHO_WORDS)
        .filter(|run| run.iter().any(|word| distinctive(word)))
        .map(|run| run.join(" "))
        .collect()
}

/// A word that names something rather than says it: one holding a digit
/// (`zz97`, `v2`), or a long one (a token, an identifier run together).
fn distinctive(word: &str) -> bool {
    word.chars().any(|c| c.is_ascii_digit()) || word.chars().count() >= 14
}

/// Whether a recall `event` gave its session one of the `gone` events.
fn gave(event: &Event, gone: &HashSet<&str>) -> bool {
    event.kind == Kind::Recall
        && event
            .body
            .get("targets")
            .and_then(Value::as_array)
            .is_some_and(|ids| {
                ids.iter()
                    .any(|id| id.as_str().is_some_and(|id| gone.contains(id)))
            })
}

/// The events among `events` derived from the `hidden` ones, transitively
/// (a fact of a fact), in the order of `events`, excluding the hidden ones:
/// facts, evidence-giving memories and rule retirements whose [`sources`]
/// are hidden, rules whose evidence is all hidden, summaries and recalls
/// that quote a hidden event's words, and, in a session a recall gave a
/// hidden event, every agent answer repeating [`ECHO_WORDS`] of its words
/// in a row (not transitively). Recalls that only cite a hidden event by id keep it: the id is not
/// its words.
pub fn derived_from(hidden: &[&Event], events: &[Event]) -> Vec<EventId> {
    let mut gone: HashSet<&str> = hidden.iter().map(|e| e.id.as_str()).collect();
    let mut texts: Vec<&str> = hidden.iter().flat_map(|e| quotable(e)).collect();
    let mut runs: HashSet<String> = texts.iter().flat_map(|t| word_runs(t)).collect();
    let mut derived = Vec::new();
    loop {
        let before = derived.len();
        let fed: HashSet<&str> = events
            .iter()
            .filter(|e| gave(e, &gone))
            .map(|e| e.session.as_str())
            .collect();
        for e in events {
            if gone.contains(e.id.as_str()) || e.kind == Kind::Forget {
                continue;
            }
            let from_source =
                sources(e).iter().any(|s| gone.contains(s)) || unfounded(e, |id| gone.contains(id));
            let quoting = quoting(e).is_some_and(|q| texts.iter().any(|t| quotes(q, t)));
            // what the agent said, not what its tools read (a README read
            // in that session shares sentences with anything)
            let echoing = e.kind == Kind::AgentResponse
                && fed.contains(e.session.as_str())
                && quotable(e).any(|q| word_runs(q).iter().any(|r| runs.contains(r)));
            if from_source || quoting {
                gone.insert(e.id.as_str());
                for t in quotable(e) {
                    texts.push(t);
                    runs.extend(word_runs(t));
                }
                derived.push(e.id.clone());
            } else if echoing {
                // an echo is taken, but its other words are its own: they
                // take nothing more
                gone.insert(e.id.as_str());
                derived.push(e.id.clone());
            }
        }
        if derived.len() == before {
            return derived;
        }
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

    #[test]
    fn derived_events_follow_what_they_were_made_from() {
        let secret = "the staging password is hunter2, rotate it monthly";
        let a = ev(
            "s1",
            "2026-01-01T00:00:00.000Z",
            Kind::UserPrompt,
            json!({"text": secret}),
        );
        let fact = ev(
            "f",
            "2026-01-02T00:00:00.000Z",
            Kind::Fact,
            json!({"text": "staging password rotates monthly", "event": a.id, "quote": "rotate it monthly"}),
        );
        let fact_of_fact = ev(
            "f",
            "2026-01-03T00:00:00.000Z",
            Kind::Fact,
            json!({"text": "monthly rotation", "event": fact.id, "quote": "monthly"}),
        );
        let summary = ev(
            "s1",
            "2026-01-04T00:00:00.000Z",
            Kind::SessionSummary,
            json!({"text": format!("The user said: {secret}.")}),
        );
        let citing = ev(
            "s2",
            "2026-01-05T00:00:00.000Z",
            Kind::Recall,
            json!({"targets": [a.id], "query": "how do we rotate passwords?"}),
        );
        let unrelated = ev(
            "s2",
            "2026-01-05T00:00:00.000Z",
            Kind::SessionSummary,
            json!({"text": "We talked about rotation."}),
        );
        let all = vec![
            a.clone(),
            fact.clone(),
            fact_of_fact.clone(),
            summary.clone(),
            citing.clone(),
            unrelated.clone(),
        ];
        let derived = derived_from(&[&a], &all);
        assert_eq!(
            derived,
            vec![fact.id.clone(), fact_of_fact.id.clone(), summary.id.clone()]
        );
        // a forget naming the source hides its facts even if recorded before them
        let f = ev(
            "x",
            "2026-04-01T00:00:00.000Z",
            Kind::Forget,
            json!({"targets": [a.id]}),
        );
        let f = Forgets::from_events([&f]);
        assert!(f.hides(&fact) && !f.hides(&citing) && !f.hides(&unrelated));
        // a forget's `derived` list hides like its targets
        let f = ev(
            "x",
            "2026-04-01T00:00:00.000Z",
            Kind::Forget,
            json!({"targets": [a.id], "derived": [summary.id]}),
        );
        assert!(Forgets::from_events([&f]).hides(&summary));
    }

    #[test]
    fn rules_follow_their_evidence_and_retirements_their_rule() {
        let note = |text: &str| {
            ev(
                "s1",
                "2026-01-01T00:00:00.000Z",
                Kind::Note,
                json!({ "text": text }),
            )
        };
        let (a, b) = (
            note("deploys go out on tuesdays"),
            note("no deploy on fridays"),
        );
        let rule = ev(
            "r",
            "2026-01-02T00:00:00.000Z",
            Kind::Rule,
            json!({"text": "deploy early in the week", "evidence": [a.id, b.id]}),
        );
        let retired = ev(
            "r2",
            "2026-01-03T00:00:00.000Z",
            Kind::RuleRetired,
            json!({"target": rule.id, "text": "deploy early in the week"}),
        );
        let all = vec![a.clone(), b.clone(), rule.clone(), retired.clone()];
        // one piece of evidence gone: the rule still stands on the other
        assert!(derived_from(&[&a], &all).is_empty());
        let forget = |ids: &[&EventId]| {
            Forgets::from_events([&ev(
                "x",
                "2026-04-01T00:00:00.000Z",
                Kind::Forget,
                json!({ "targets": ids }),
            )])
        };
        assert!(!forget(&[&a.id]).hides(&rule));
        // all of it gone: the rule, and its retirement with it
        assert_eq!(
            derived_from(&[&a, &b], &all),
            vec![rule.id.clone(), retired.id.clone()]
        );
        assert!(forget(&[&a.id, &b.id]).hides(&rule));
        // a forgotten rule takes its retirement (which repeats its text)
        assert!(forget(&[&rule.id]).hides(&retired));
        assert_eq!(derived_from(&[&rule], &all), vec![retired.id.clone()]);
    }

    /// A teammate's agent given the memory by a recall, and answering
    /// from it: the answer repeats the leak and goes with it. The same
    /// words in a session no recall gave it are left (a field test: the
    /// purge left the teammate's echo on the remote, injected into every
    /// next prompt).
    #[test]
    fn an_answer_echoing_an_injected_memory_is_derived_from_it() {
        let leak = ev(
            "alice",
            "2026-01-01T00:00:00.000Z",
            Kind::AgentResponse,
            json!({"text": "Noted: the billing prod database host is dbprod-zz97.corp.internal, \
                            reachable from the VPN only."}),
        );
        let leak_polite = ev(
            "alice",
            "2026-01-01T00:00:01.000Z",
            Kind::AgentResponse,
            json!({"text": "Saved. Let me know if you want me to make any other changes."}),
        );
        let recall = ev(
            "bob",
            "2026-01-02T00:00:00.000Z",
            Kind::Recall,
            json!({"targets": [leak.id, leak_polite.id], "query": "which host is the billing database?"}),
        );
        let prompt = ev(
            "bob",
            "2026-01-02T00:00:01.000Z",
            Kind::UserPrompt,
            json!({"text": "which host is the billing prod database?"}),
        );
        let echo = ev(
            "bob",
            "2026-01-02T00:00:02.000Z",
            Kind::AgentResponse,
            json!({"text": "From memory: the billing prod database host is dbprod-zz97.corp.internal."}),
        );
        let elsewhere = ev(
            "carol",
            "2026-01-03T00:00:00.000Z",
            Kind::AgentResponse,
            json!({"text": "From memory: the billing prod database host is dbprod-zz97.corp.internal."}),
        );
        // a tool's output that shares a sentence, and answers that share
        // only common prose, or words of the README that output read
        let read = ev(
            "bob",
            "2026-01-02T00:00:03.000Z",
            Kind::ToolObservation,
            json!({"tool": "Bash", "output": "README: the billing prod database host is \
                   dbprod-zz97.corp.internal, reachable from the VPN only. Deploys run on v2 runners."}),
        );
        let polite = ev(
            "bob",
            "2026-01-02T00:00:04.000Z",
            Kind::AgentResponse,
            json!({"text": "Done. Let me know if you want me to make any other changes."}),
        );
        let readme = ev(
            "bob",
            "2026-01-02T00:00:05.000Z",
            Kind::AgentResponse,
            json!({"text": "The README says deploys run on v2 runners every night."}),
        );
        let all = vec![
            leak.clone(),
            leak_polite.clone(),
            recall.clone(),
            prompt.clone(),
            echo.clone(),
            read.clone(),
            polite.clone(),
            readme.clone(),
            elsewhere.clone(),
        ];
        assert_eq!(
            derived_from(&[&leak, &leak_polite], &all),
            vec![echo.id.clone()]
        );
    }
}
