//! Capture identity: when two events, recorded by different paths, are the
//! same thing that happened in a session.
//!
//! An agent's session reaches memlog by two paths: its hooks while it runs
//! (one event per prompt, tool call and turn's answer, stamped with the
//! hook's clock) and its session file read later by an import (one event per
//! line, stamped with the line's time). The two never share an event id —
//! times, `seq` and `meta` differ — so an import checks what it brings
//! against what the session already holds ([`reconcile`]) and keeps only
//! what is missing.
//!
//! What makes an event the same as another of its session, its capture
//! [`key`]:
//!
//! - a tool call: its `tool_use_id` (the agent's own id for the call, in the
//!   hook payload and in the session file alike) when both events carry
//!   one; when either lacks it, its tool and input. Gemini CLI's hooks and
//!   Cursor's transcripts get no call id at all, and older Claude Code
//!   (1.0.98, 2.0.15) gave its PostToolUse hook none while its transcript
//!   has one: such a call matches the held call of the same tool and input
//!   (held calls of another id are other calls, whatever their input);
//! - a task event: its kind, task key and status (`status`, or `to` for a
//!   change), or the blockers it sets;
//! - any other event with a `body.text` (prompts, answers, summaries,
//!   notes): its kind and its text, trimmed;
//! - anything else (session start and end, recalls): nothing — those come
//!   from one path only and are deduplicated by id alone.
//!
//! Equal keys are matched by occurrence, in session order: a prompt the user
//! typed three times is three events, and an import holding it three times
//! adds none of them, one holding it four times adds one.
//!
//! Hooks record a turn's last answer (and, for Claude Code and Codex, what
//! it said between its calls, read from the transcript or rollout at Stop), where a session
//! file holds every piece of text the agent wrote, including what it said
//! before a tool call. So for a session that hooks captured (some event has `meta.hook`),
//! a turn whose answer the hooks recorded brings no earlier answer the
//! hooks left out; a turn whose Stop hook never ran (killed, timed out,
//! the agent killed) brings every answer it has, and a turn the hooks never
//! saw is imported whole. A turn is a user prompt and
//! what follows it up to the next, within one stream (the main
//! conversation, or one subagent's, `meta.agent_id`).

use std::collections::HashMap;

use serde_json::Value;

use crate::{Event, Kind};

/// The capture identity of an event (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Key {
    /// A tool call: the agent's id for it, when the event carries one, and
    /// its tool and input.
    Call {
        /// `body.tool_use_id`.
        id: Option<String>,
        /// The tool and its input, as one string.
        call: String,
    },
    /// Any other event.
    Other(String),
}

/// The capture identity of an event (see the module docs), if it has one.
pub fn key(event: &Event) -> Option<Key> {
    let text_of = |name: &str| event.body.get(name).and_then(Value::as_str);
    let id = text_of("tool_use_id").filter(|id| !id.is_empty());
    let call = || {
        let input = event
            .body
            .get("input")
            .map(|input| same_spelling(input).to_string())
            .unwrap_or_default();
        format!("{}\u{0}{input}", text_of("tool").unwrap_or(""))
    };
    if let Some(id) = id {
        return Some(Key::Call {
            id: Some(id.to_string()),
            call: call(),
        });
    }
    match event.kind {
        Kind::ToolObservation if text_of("text").is_none() => {
            // a call with neither id nor tool has nothing to match by
            text_of("tool")?;
            Some(Key::Call {
                id: None,
                call: call(),
            })
        }
        Kind::TaskCreated | Kind::TaskStatusChanged => {
            let task = text_of("key")?;
            let status = text_of("to").or_else(|| text_of("status")).unwrap_or("");
            Some(Key::Other(format!(
                "{}\u{0}{task}\u{0}{status}",
                event.kind.as_str()
            )))
        }
        Kind::TaskBlockersSet => {
            let task = text_of("key")?;
            let blockers = event.body.get("blockers").map(Value::to_string);
            Some(Key::Other(format!(
                "{}\u{0}{task}\u{0}{}",
                event.kind.as_str(),
                blockers.unwrap_or_default()
            )))
        }
        _ => {
            let text = text_of("text")?.trim();
            Some(Key::Other(format!("{}\u{0}{text}", event.kind.as_str())))
        }
    }
}

/// Argument names one agent spells differently on its two paths, and the
/// spelling a capture key uses: Cursor's hooks give a Write's file as
/// `file_path` and `content`, its transcripts as `path` and `contents`.
const ARGUMENT_SPELLINGS: [(&str, &str); 2] = [("path", "file_path"), ("contents", "content")];

/// A call's input with every argument named as [`ARGUMENT_SPELLINGS`] name
/// it (where the input does not hold both spellings), so that the same
/// call matches from either path.
fn same_spelling(input: &Value) -> std::borrow::Cow<'_, Value> {
    use std::borrow::Cow;
    let Value::Object(map) = input else {
        return Cow::Borrowed(input);
    };
    let renames = |(other, key): &(&str, &str)| map.contains_key(*other) && !map.contains_key(*key);
    if !ARGUMENT_SPELLINGS.iter().any(renames) {
        return Cow::Borrowed(input);
    }
    let mut map = map.clone();
    for (other, key) in ARGUMENT_SPELLINGS {
        if !map.contains_key(key)
            && let Some(value) = map.remove(other)
        {
            map.insert(key.to_string(), value);
        }
    }
    Cow::Owned(Value::Object(map))
}

/// What a session already holds, counted by capture key.
#[derive(Clone, Debug, Default)]
pub struct Captured {
    counts: HashMap<String, usize>,
    /// Held tool calls, in session order: their id, tool and input, and
    /// whether an incoming call has matched them already.
    calls: Vec<HeldCall>,
    /// Places in `calls`, by id and by tool and input.
    by_id: HashMap<String, Vec<usize>>,
    by_call: HashMap<String, Vec<usize>>,
    by_hooks: bool,
}

#[derive(Clone, Debug)]
struct HeldCall {
    id: Option<String>,
    taken: bool,
}

impl Captured {
    /// The session's events so far (sealed, in journals, forgotten ones
    /// included: forgetting must not let an import bring an event back).
    pub fn of<'a>(events: impl IntoIterator<Item = &'a Event>) -> Captured {
        let mut captured = Captured::default();
        for event in events {
            captured.by_hooks |= event.meta.contains_key("hook");
            match key(event) {
                Some(Key::Call { id, call }) => {
                    let at = captured.calls.len();
                    if let Some(id) = &id {
                        captured.by_id.entry(id.clone()).or_default().push(at);
                    }
                    captured.by_call.entry(call).or_default().push(at);
                    captured.calls.push(HeldCall { id, taken: false });
                }
                Some(Key::Other(k)) => *captured.counts.entry(k).or_default() += 1,
                None => {}
            }
        }
        captured
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty() && self.calls.is_empty() && !self.by_hooks
    }

    fn holds(&self, key: &Key) -> bool {
        match key {
            Key::Call { id, call } => self.held_call(id.as_deref(), call).is_some(),
            Key::Other(k) => self.counts.get(k).is_some_and(|n| *n > 0),
        }
    }

    /// Uses up one occurrence of `key`; false when none is left.
    fn take(&mut self, key: &Key) -> bool {
        match key {
            Key::Call { id, call } => match self.held_call(id.as_deref(), call) {
                Some(at) => self.calls.get_mut(at).is_some_and(|held| {
                    held.taken = true;
                    true
                }),
                None => false,
            },
            Key::Other(k) => match self.counts.get_mut(k) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    true
                }
                _ => false,
            },
        }
    }

    /// The first held call not yet matched that is the call `id` and
    /// `call` describe: the one of the same id; else, when either lacks an
    /// id, one of the same tool and input.
    fn held_call(&self, id: Option<&str>, call: &str) -> Option<usize> {
        let free = |at: &&usize| self.calls.get(**at).is_some_and(|held| !held.taken);
        if let Some(at) = id
            .and_then(|id| self.by_id.get(id))
            .and_then(|places| places.iter().find(free))
        {
            return Some(*at);
        }
        self.by_call
            .get(call)?
            .iter()
            .filter(free)
            .find(|at| id.is_none() || self.calls.get(**at).is_some_and(|held| held.id.is_none()))
            .copied()
    }
}

/// The events of `incoming` (one session's, in session order) that
/// `captured` does not already hold, and how many were left out.
pub fn reconcile(mut captured: Captured, incoming: Vec<Event>) -> (Vec<Event>, usize) {
    if captured.is_empty() {
        return (incoming, 0);
    }
    let superseded = if captured.by_hooks {
        answers_hooks_would_not_record(&captured, &incoming)
    } else {
        vec![false; incoming.len()]
    };
    let total = incoming.len();
    let kept: Vec<Event> = incoming
        .into_iter()
        .zip(superseded)
        .filter(|(event, superseded)| {
            // a held copy is matched to its own occurrence even when that
            // one is left out: else a later turn's same text would take it
            let held = key(event).is_some_and(|k| captured.take(&k));
            !*superseded && !held
        })
        .map(|(event, _)| event)
        .collect();
    let left_out = total - kept.len();
    (kept, left_out)
}

/// For each incoming event, whether it is an answer that hooks would not
/// have recorded: not the last answer of a turn whose answer the hooks
/// recorded. A turn whose Stop hook never ran (killed, timed out, the
/// agent killed) has none of its answers held: all it said is imported
/// (only its last answer was, and a killed Stop lost the rest for good).
fn answers_hooks_would_not_record(captured: &Captured, incoming: &[Event]) -> Vec<bool> {
    // Turns as runs of indices, per stream.
    let mut turns: Vec<Vec<usize>> = Vec::new();
    let mut open: HashMap<&str, usize> = HashMap::new();
    for (i, event) in incoming.iter().enumerate() {
        let stream = event
            .meta
            .get("agent_id")
            .and_then(Value::as_str)
            .unwrap_or("");
        if event.kind == Kind::UserPrompt || !open.contains_key(stream) {
            open.insert(stream, turns.len());
            turns.push(Vec::new());
        }
        if let Some(turn) = open.get(stream).and_then(|t| turns.get_mut(*t)) {
            turn.push(i);
        }
    }
    let mut superseded = vec![false; incoming.len()];
    for turn in turns {
        let answers: Vec<usize> = turn
            .into_iter()
            .filter(|i| {
                incoming
                    .get(*i)
                    .is_some_and(|e| e.kind == Kind::AgentResponse)
            })
            .collect();
        // the turn's own answer, which a Stop hook that ran recorded: a
        // text said in another turn too ("Running step.") says nothing of
        // this one's Stop
        let answered = answers
            .last()
            .and_then(|i| incoming.get(*i))
            .and_then(key)
            .is_some_and(|k| captured.holds(&k));
        if !answered {
            continue;
        }
        if let Some((_, earlier)) = answers.split_last() {
            for i in earlier {
                superseded[*i] = true;
            }
        }
    }
    superseded
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, json};

    use super::*;
    use crate::Draft;

    fn event(seq: u64, kind: Kind, body: Value, meta: Value) -> Event {
        let mut d = Draft::new(
            "s",
            format!("2026-01-01T00:00:{seq:02}.000Z"),
            kind,
            "p",
            body.as_object().cloned().unwrap_or_default(),
        );
        d.meta = meta.as_object().cloned().unwrap_or_else(Map::new);
        d.into_event(seq)
    }

    fn text(seq: u64, kind: Kind, text: &str, meta: Value) -> Event {
        event(seq, kind, json!({ "text": text }), meta)
    }

    fn tool(seq: u64, id: &str, meta: Value) -> Event {
        event(
            seq,
            Kind::ToolObservation,
            json!({"tool": "Read", "tool_use_id": id, "output": "x"}),
            meta,
        )
    }

    fn texts(events: &[Event]) -> Vec<String> {
        events
            .iter()
            .map(|e| e.text().unwrap_or("(tool)").to_string())
            .collect()
    }

    /// A turn as hooks record it, and as the transcript holds it.
    fn hooked_turn(with_answer: bool) -> (Vec<Event>, Vec<Event>) {
        let hook = |name: &str| json!({ "hook": name });
        let mut hooked = vec![
            event(
                0,
                Kind::SessionStart,
                json!({"source": "startup"}),
                hook("SessionStart"),
            ),
            text(
                1,
                Kind::UserPrompt,
                "What is in a.txt?",
                hook("UserPromptSubmit"),
            ),
            tool(2, "toolu_1", hook("PostToolUse")),
        ];
        if with_answer {
            hooked.push(text(3, Kind::AgentResponse, "It says hello.", hook("Stop")));
        }
        let line = |r: &str| json!({ "ref": r });
        let transcript = vec![
            text(0, Kind::UserPrompt, "What is in a.txt?", line("u1")),
            text(1, Kind::AgentResponse, "Let me look.", line("a1")),
            tool(2, "toolu_1", line("a2")),
            text(3, Kind::AgentResponse, "It says hello.\n", line("a3")),
        ];
        (hooked, transcript)
    }

    #[test]
    fn a_turn_the_hooks_recorded_whole_adds_nothing() {
        let (hooked, transcript) = hooked_turn(true);
        let (kept, left_out) = reconcile(Captured::of(&hooked), transcript);
        assert!(kept.is_empty(), "{:?}", texts(&kept));
        assert_eq!(left_out, 4);
    }

    #[test]
    fn a_turn_whose_stop_hook_never_ran_adds_all_it_said() {
        let (hooked, transcript) = hooked_turn(false);
        let (kept, left_out) = reconcile(Captured::of(&hooked), transcript);
        assert_eq!(texts(&kept), ["Let me look.", "It says hello.\n"]);
        assert_eq!(left_out, 2);
    }

    #[test]
    fn a_turn_the_hooks_never_saw_is_imported_whole() {
        let (hooked, mut transcript) = hooked_turn(true);
        let line = |r: &str| json!({ "ref": r });
        transcript.extend([
            text(4, Kind::UserPrompt, "And b.txt?", line("u2")),
            text(5, Kind::AgentResponse, "Looking.", line("a4")),
            tool(6, "toolu_2", line("a5")),
            text(7, Kind::AgentResponse, "It is empty.", line("a6")),
        ]);
        let (kept, _) = reconcile(Captured::of(&hooked), transcript);
        assert_eq!(
            texts(&kept),
            ["And b.txt?", "Looking.", "(tool)", "It is empty."]
        );
    }

    /// A second turn whose Stop was killed, saying first what the first
    /// turn said too: all it said is imported (a field test: the repeated
    /// text made the turn look answered, and was dropped).
    #[test]
    fn a_text_of_another_turn_does_not_answer_this_one() {
        let hook = |name: &str| json!({ "hook": name });
        let line = |r: &str| json!({ "ref": r });
        let hooked = vec![
            text(
                0,
                Kind::UserPrompt,
                "What is in a.txt?",
                hook("UserPromptSubmit"),
            ),
            tool(1, "toolu_1", hook("PostToolUse")),
            text(2, Kind::AgentResponse, "Let me look.", hook("Stop")),
            text(3, Kind::AgentResponse, "It says hello.", hook("Stop")),
            text(4, Kind::UserPrompt, "And b.txt?", hook("UserPromptSubmit")),
            tool(5, "toolu_2", hook("PostToolUse")),
        ];
        let transcript = vec![
            text(0, Kind::UserPrompt, "What is in a.txt?", line("u1")),
            text(1, Kind::AgentResponse, "Let me look.", line("a1")),
            tool(2, "toolu_1", line("a2")),
            text(3, Kind::AgentResponse, "It says hello.", line("a3")),
            text(4, Kind::UserPrompt, "And b.txt?", line("u2")),
            text(5, Kind::AgentResponse, "Let me look.", line("a4")),
            tool(6, "toolu_2", line("a5")),
            text(7, Kind::AgentResponse, "It is empty.", line("a6")),
        ];
        let (kept, _) = reconcile(Captured::of(&hooked), transcript);
        assert_eq!(texts(&kept), ["Let me look.", "It is empty."]);
    }

    #[test]
    fn repeated_texts_match_by_occurrence() {
        let note = |seq, t: &str| text(seq, Kind::UserPrompt, t, json!({}));
        let held = [note(0, "continue"), note(1, "continue")];
        let incoming = vec![
            note(0, "continue"),
            note(1, "continue"),
            note(2, "continue"),
        ];
        let (kept, left_out) = reconcile(Captured::of(&held), incoming);
        assert_eq!((kept.len(), left_out), (1, 2));
    }

    #[test]
    fn without_hooks_every_answer_counts_on_its_own() {
        let imported = vec![
            text(0, Kind::UserPrompt, "q", json!({"ref": "u1"})),
            text(1, Kind::AgentResponse, "first", json!({"ref": "a1"})),
        ];
        let mut grown = imported.clone();
        grown.push(text(2, Kind::AgentResponse, "second", json!({"ref": "a2"})));
        let (kept, _) = reconcile(Captured::of(&imported), grown);
        assert_eq!(texts(&kept), ["second"]);
    }

    #[test]
    fn calls_without_an_id_match_by_tool_and_input() {
        let call = |seq, command: &str| {
            event(
                seq,
                Kind::ToolObservation,
                json!({"tool": "run_shell_command", "input": {"command": command}, "output": "x"}),
                json!({}),
            )
        };
        let held = [call(0, "ls")];
        let (kept, _) = reconcile(Captured::of(&held), vec![call(0, "ls"), call(1, "pwd")]);
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].body["input"]["command"], "pwd");
    }

    /// Field test 8a: Claude Code 1.0.98 and 2.0.15 gave PostToolUse no
    /// `tool_use_id`, their transcripts have one; a hooked session imported
    /// held every call twice.
    #[test]
    fn a_call_without_an_id_matches_one_with_an_id_by_tool_and_input() {
        let bash = |seq, id: Option<&str>, command: &str, meta: Value| {
            let mut body = json!({"tool": "Bash", "input": {"command": command}, "output": "x"});
            if let Some(id) = id {
                body["tool_use_id"] = json!(id);
            }
            event(seq, Kind::ToolObservation, body, meta)
        };
        let hook = json!({"hook": "PostToolUse"});
        let line = json!({"ref": "a2"});
        // the hook's copy has no id, the transcript's has one
        let (mut hooked, mut transcript) = hooked_turn(true);
        hooked[2] = bash(2, None, "echo ran", hook.clone());
        transcript[2] = bash(2, Some("toolu_1"), "echo ran", line.clone());
        let (kept, left_out) = reconcile(Captured::of(&hooked), transcript);
        assert!(kept.is_empty(), "{:?}", texts(&kept));
        assert_eq!(left_out, 4);
        // and the other way round
        let held = [bash(0, Some("toolu_1"), "echo ran", hook.clone())];
        let (kept, _) = reconcile(
            Captured::of(&held),
            vec![bash(0, None, "echo ran", line.clone())],
        );
        assert!(kept.is_empty());
        // one held id-less call matches one incoming call, not two
        let held = [bash(0, None, "echo ran", hook.clone())];
        let incoming = vec![
            bash(0, Some("toolu_1"), "echo ran", line.clone()),
            bash(1, Some("toolu_2"), "echo ran", line.clone()),
        ];
        let (kept, _) = reconcile(Captured::of(&held), incoming);
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].body["tool_use_id"], "toolu_2");
    }

    #[test]
    fn calls_of_two_ids_stay_two_calls_whatever_their_input() {
        let bash = |seq, id: &str| {
            event(
                seq,
                Kind::ToolObservation,
                json!({"tool": "Bash", "tool_use_id": id, "input": {"command": "ls"}}),
                json!({}),
            )
        };
        let (kept, _) = reconcile(
            Captured::of(&[bash(0, "toolu_1")]),
            vec![bash(0, "toolu_2")],
        );
        assert_eq!(kept.len(), 1);
        // a call of the same id matches however its input reads
        let mut other_input = bash(0, "toolu_1");
        other_input
            .body
            .insert("input".into(), json!({"command": "ls -a"}));
        let (kept, _) = reconcile(Captured::of(&[bash(0, "toolu_1")]), vec![other_input]);
        assert!(kept.is_empty());
    }

    #[test]
    fn a_files_path_and_text_match_however_the_path_spells_them() {
        let write = |seq, input: Value| {
            event(
                seq,
                Kind::ToolObservation,
                json!({"tool": "Write", "input": input}),
                json!({}),
            )
        };
        // Cursor: hooks, then its transcript.
        let held = [write(0, json!({"file_path": "/w/a.js", "content": "x\n"}))];
        let incoming = vec![
            write(0, json!({"path": "/w/a.js", "contents": "x\n"})),
            write(1, json!({"path": "/w/b.js", "contents": "x\n"})),
        ];
        let (kept, left_out) = reconcile(Captured::of(&held), incoming);
        assert_eq!(left_out, 1);
        assert_eq!(kept[0].body["input"]["path"], "/w/b.js", "stored as read");
        // An input holding both spellings keeps them apart.
        let both = json!({"path": "a", "file_path": "b"});
        assert_eq!(same_spelling(&both).as_ref(), &both);
    }

    #[test]
    fn task_events_match_by_key_and_status() {
        let task = |seq, kind, body: Value| event(seq, kind, body, json!({}));
        let held = [task(
            0,
            Kind::TaskCreated,
            json!({"key": "k1", "title": "T", "status": "open"}),
        )];
        let incoming = vec![
            task(
                0,
                Kind::TaskCreated,
                json!({"key": "k1", "title": "T", "status": "open"}),
            ),
            task(
                1,
                Kind::TaskStatusChanged,
                json!({"key": "k1", "from": "open", "to": "done"}),
            ),
        ];
        let (kept, _) = reconcile(Captured::of(&held), incoming);
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].kind, Kind::TaskStatusChanged);
    }

    #[test]
    fn blocker_events_match_by_key_and_blockers() {
        let blockers = |seq, on: &str| {
            event(
                seq,
                Kind::TaskBlockersSet,
                json!({"key": "k1", "mode": "add", "blockers": [{"kind": "task", "entity_id": on}]}),
                json!({}),
            )
        };
        let held = [blockers(0, "task:a")];
        let (kept, left_out) = reconcile(
            Captured::of(&held),
            vec![blockers(0, "task:a"), blockers(1, "task:b")],
        );
        assert_eq!(left_out, 1);
        assert_eq!(kept[0].body["blockers"][0]["entity_id"], "task:b");
    }
}
