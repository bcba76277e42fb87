//! The JSON object Claude Code writes to a hook's stdin.

use std::path::PathBuf;

use serde_json::Value;

use super::event::HookEvent;
use crate::{Error, Result};

/// A hook payload: the fields memlog uses, read tolerantly (a field of an
/// unexpected type counts as absent), plus the whole payload as it came.
///
/// Field names are Claude Code's (snake_case, as in the hooks reference and
/// the captured payloads); every field is optional because which ones are
/// present depends on the event and on the Claude Code version.
#[derive(Clone, Debug, PartialEq)]
pub struct Payload {
    /// The event: the payload's `hook_event_name` when it has one, else the
    /// name the caller gave; `None` when that name is not a known event.
    pub event: Option<HookEvent>,
    /// The event's name as recorded in `meta.hook`: the known event's
    /// name, or else the payload's `hook_event_name`, or else the caller's.
    pub event_name: String,
    /// The session (`session_id`).
    pub session_id: Option<String>,
    /// The session's transcript file.
    pub transcript_path: Option<PathBuf>,
    /// The directory Claude Code runs in.
    pub cwd: Option<String>,
    /// Claude Code's permission mode (`default`, `plan`, …).
    pub permission_mode: Option<String>,
    /// UserPromptSubmit: the text the user submitted.
    pub prompt: Option<String>,
    /// Tool events.
    pub tool_name: Option<String>,
    /// The tool's arguments.
    pub tool_input: Option<Value>,
    /// PostToolUse: what the tool returned (an object for built-in tools).
    pub tool_response: Option<Value>,
    /// The id tying a tool call to its result.
    pub tool_use_id: Option<String>,
    /// PostToolUseFailure: what went wrong, and whether the user
    /// interrupted the tool.
    pub error: Option<String>,
    /// PostToolUseFailure: whether the user interrupted the tool.
    pub is_interrupt: Option<bool>,
    /// SessionStart: `startup`, `resume`, `clear` or `compact`; and the model.
    pub source: Option<String>,
    /// SessionStart: the model.
    pub model: Option<String>,
    /// SessionEnd: `clear`, `logout`, `prompt_input_exit`, `other`, …
    pub reason: Option<String>,
    /// Stop, SubagentStop.
    pub stop_hook_active: Option<bool>,
    /// Stop, SubagentStop: the answer, when Claude Code sends it.
    pub last_assistant_message: Option<String>,
    /// Subagent events (and SessionStart under `claude --agent`).
    pub agent_id: Option<String>,
    /// The subagent's type.
    pub agent_type: Option<String>,
    /// The subagent's own transcript.
    pub agent_transcript_path: Option<PathBuf>,
    /// PreCompact: `manual` or `auto`, and what the user passed to `/compact`.
    pub trigger: Option<String>,
    /// PreCompact: what the user passed to `/compact`.
    pub custom_instructions: Option<String>,
    /// The payload exactly as parsed.
    pub raw: Value,
}

/// Parses a hook's stdin. `event_name` is the name the caller was invoked
/// with; the payload's own `hook_event_name` wins when present. Only input that is not JSON is an error: any JSON value yields a
/// payload, and [`crate::drafts`] records shapes it does not understand
/// rather than dropping them.
pub fn parse_payload(event_name: &str, bytes: &[u8]) -> Result<Payload> {
    Ok(Payload::from_value(
        event_name,
        parse_json(event_name, bytes)?,
    ))
}

/// A payload's JSON. A lone surrogate escape (`"\ud83d"`: what
/// JavaScript's `JSON.stringify` writes for a string cut inside an emoji)
/// is valid JSON that serde_json refuses; it becomes U+FFFD rather than
/// costing the whole event (a user's prompt).
fn parse_json(event_name: &str, bytes: &[u8]) -> Result<Value> {
    serde_json::from_slice(bytes).or_else(|e| {
        mend_lone_surrogates(bytes)
            .and_then(|mended| serde_json::from_slice(&mended).ok())
            .ok_or_else(|| Error::malformed_payload(event_name, bytes.len(), &e))
    })
}

/// `bytes` with each `\uXXXX` escape of a surrogate that is not half of
/// a pair replaced by `\ufffd`; `None` when there is none.
fn mend_lone_surrogates(bytes: &[u8]) -> Option<Vec<u8>> {
    let surrogate = |at: usize| -> Option<u16> {
        let hex = bytes.get(at..at + 6)?;
        if hex[0] != b'\\' || hex[1] != b'u' {
            return None;
        }
        let v = u16::from_str_radix(std::str::from_utf8(&hex[2..]).ok()?, 16).ok()?;
        (0xD800..=0xDFFF).contains(&v).then_some(v)
    };
    let mut out = Vec::with_capacity(bytes.len());
    let (mut i, mut in_string, mut mended) = (0, false, false);
    while i < bytes.len() {
        let b = bytes[i];
        if !in_string {
            in_string = b == b'"';
            out.push(b);
            i += 1;
            continue;
        }
        match b {
            b'"' => {
                in_string = false;
                out.push(b);
                i += 1;
            }
            b'\\' => match surrogate(i) {
                Some(0xD800..=0xDBFF) if surrogate(i + 6).is_some_and(|low| low >= 0xDC00) => {
                    // a pair: both halves as they are
                    out.extend_from_slice(&bytes[i..i + 12]);
                    i += 12;
                }
                Some(_) => {
                    out.extend_from_slice(b"\\ufffd");
                    mended = true;
                    i += 6;
                }
                None => {
                    // any other escape: itself and the character it escapes
                    out.extend_from_slice(&bytes[i..(i + 2).min(bytes.len())]);
                    i += 2;
                }
            },
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    mended.then_some(out)
}

/// Parses a hook's stdin for an agent with its own payload shapes:
/// `translate` turns the event it was installed for and the JSON into the
/// shared protocol's event name and payload.
pub fn parse_translated(
    event_name: &str,
    bytes: &[u8],
    translate: fn(&str, Value) -> (String, Value),
) -> Result<Payload> {
    let raw = parse_json(event_name, bytes)?;
    let (name, common) = translate(event_name, raw);
    Ok(Payload::from_value(&name, common))
}

impl Payload {
    /// Reads the known fields of an already parsed payload.
    pub fn from_value(event_name: &str, raw: Value) -> Payload {
        let text = |key: &str| raw.get(key).and_then(Value::as_str).map(str::to_string);
        let flag = |key: &str| raw.get(key).and_then(Value::as_bool);
        let path = |key: &str| text(key).filter(|p| !p.is_empty()).map(PathBuf::from);
        let declared = text("hook_event_name").filter(|name| !name.is_empty());
        // A payload that names its event is believed, even when memlog does
        // not know that event: it is then recorded as an unknown hook
        // rather than read as the event the caller expected.
        let event = match &declared {
            Some(name) => HookEvent::parse(name),
            None => HookEvent::parse(event_name),
        };
        let name = match (event, &declared) {
            (Some(known), _) => known.as_str().to_string(),
            (None, Some(declared)) => declared.clone(),
            (None, _) => event_name.to_string(),
        };
        Payload {
            event,
            event_name: name,
            session_id: text("session_id").filter(|s| !s.is_empty()),
            transcript_path: path("transcript_path"),
            cwd: text("cwd"),
            permission_mode: text("permission_mode"),
            prompt: text("prompt"),
            tool_name: text("tool_name").filter(|s| !s.is_empty()),
            tool_input: raw.get("tool_input").cloned(),
            tool_response: raw.get("tool_response").cloned(),
            tool_use_id: text("tool_use_id"),
            error: text("error"),
            is_interrupt: flag("is_interrupt"),
            source: text("source"),
            model: text("model"),
            reason: text("reason"),
            stop_hook_active: flag("stop_hook_active"),
            last_assistant_message: text("last_assistant_message"),
            agent_id: text("agent_id").filter(|s| !s.is_empty()),
            agent_type: text("agent_type").filter(|s| !s.is_empty()),
            agent_transcript_path: path("agent_transcript_path"),
            trigger: text("trigger"),
            custom_instructions: text("custom_instructions"),
            raw,
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_lone_surrogate_costs_one_character_not_the_event() {
        let mended = |json: &str| {
            parse_payload("UserPromptSubmit", json.as_bytes())
                .map(|p| p.prompt.unwrap_or_default())
                .map_err(|e| e.to_string())
        };
        assert_eq!(
            mended(r#"{"prompt":"rocket \ud83d to prod"}"#).unwrap(),
            "rocket \u{fffd} to prod"
        );
        assert_eq!(
            mended(r#"{"prompt":"\udc00 end"}"#).unwrap(),
            "\u{fffd} end"
        );
        // a pair, and an escaped backslash before a u, are left alone
        assert_eq!(
            mended(r#"{"prompt":"\ud83d\ude80 \\ud83d \ud83d"}"#).unwrap(),
            "🚀 \\ud83d \u{fffd}"
        );
        // still not JSON
        assert!(mended(r#"{"prompt":"\ud83d"#).is_err());
    }
    use super::*;

    #[test]
    fn reads_known_fields_and_keeps_the_rest() {
        let p = parse_payload(
            "user-prompt-submit",
            br#"{"session_id":"s1","hook_event_name":"UserPromptSubmit","prompt":"hi","extra":[1]}"#,
        )
        .unwrap();
        assert_eq!(p.event, Some(HookEvent::UserPromptSubmit));
        assert_eq!(p.event_name, "UserPromptSubmit");
        assert_eq!(p.session_id.as_deref(), Some("s1"));
        assert_eq!(p.prompt.as_deref(), Some("hi"));
        assert_eq!(p.raw["extra"], serde_json::json!([1]));
    }

    #[test]
    fn the_payload_names_the_event_when_it_can() {
        let p = parse_payload("stop", br#"{"hook_event_name":"SubagentStop"}"#).unwrap();
        assert_eq!(p.event, Some(HookEvent::SubagentStop));
        let p = parse_payload("stop", br#"{"session_id":"s"}"#).unwrap();
        assert_eq!(p.event, Some(HookEvent::Stop));
        let p = parse_payload("stop", br#"{"hook_event_name":"Notification"}"#).unwrap();
        assert_eq!(p.event, None);
        let p = parse_payload("notify", br#"{"hook_event_name":"Notification"}"#).unwrap();
        assert_eq!(p.event, None);
        assert_eq!(p.event_name, "Notification");
        let p = parse_payload("notify", b"[1,2]").unwrap();
        assert_eq!((p.event, p.event_name.as_str()), (None, "notify"));
    }

    #[test]
    fn wrong_types_count_as_absent_and_bad_json_is_an_error() {
        let p = parse_payload("Stop", br#"{"session_id":7,"stop_hook_active":"yes"}"#).unwrap();
        assert_eq!(p.session_id, None);
        assert_eq!(p.stop_hook_active, None);
        let err = parse_payload("Stop", b"{not json").unwrap_err();
        assert!(matches!(err, Error::MalformedPayload { .. }), "{err}");
        // said without the payload's content (the message goes to hooks.log)
        let cut = br#"{"prompt": "my password is hunter2"#;
        let err = parse_payload("Stop", cut).unwrap_err().to_string();
        assert!(!err.contains("hunter2"), "{err}");
        assert!(err.contains(&format!("({} bytes)", cut.len())), "{err}");
        assert!(err.contains("it ends early"), "{err}");
        assert!(parse_payload("Stop", b"").is_err());
    }
}
