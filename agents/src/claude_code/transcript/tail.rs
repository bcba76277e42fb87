//! The last answer of a live transcript (what Stop and SubagentStop
//! record), read from the file's end only.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::Value;

use super::lines::{assistant_texts, line_ts, starts_a_turn};

/// How much of a live transcript's end [`turn_texts`] reads first; four
/// times more each time the turn's prompt is not in it.
pub const TAIL_BYTES: u64 = 256 * 1024;
/// The most of a transcript's end [`turn_texts`] reads: a turn is rarely
/// longer (a few large file reads made one of 372 KB, whose first texts a
/// fixed 256 KiB tail lost; one of 300 tool calls, 1.5 MB).
const MAX_TURN_BYTES: u64 = 16 * 1024 * 1024;

/// Which lines of a transcript [`last_assistant_text`] looks at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SidechainScope {
    /// The main conversation (`isSidechain` false or absent): Stop.
    MainOnly,
    /// Subagent lines inlined in the main transcript (Claude Code 1.x):
    /// SubagentStop without its own transcript.
    SidechainOnly,
    /// Every line: a subagent's own transcript.
    Any,
}

/// The text of the last assistant message of the current turn of a live
/// transcript, reading its end ([`turn_texts`]): the text blocks of
/// the last assistant message (by `message.id`, which current Claude Code
/// spreads over several lines) that has text, provided no user prompt
/// follows it. `None` when the file cannot be read, or the turn has no
/// text (an earlier turn's answer is never returned twice).
pub fn last_assistant_text(path: &Path, scope: SidechainScope) -> Option<String> {
    turn_texts(path, scope).pop().map(|t| t.text)
}

/// A piece of text the agent wrote in a turn: one assistant message's
/// text blocks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnText {
    /// Its line's time (memlog form), when the line has one.
    pub ts: Option<String>,
    /// The message's text blocks, joined by a blank line.
    pub text: String,
}

/// Every assistant message with text in the current turn of a live
/// transcript (after its last user prompt), in order, reading the file's
/// end back to that prompt (at most [`MAX_TURN_BYTES`]): what the agent
/// said between its tool calls, and last its answer. Empty when the file
/// cannot be read.
pub fn turn_texts(path: &Path, scope: SidechainScope) -> Vec<TurnText> {
    let mut max = TAIL_BYTES;
    loop {
        let Ok((tail, whole)) = read_tail(path, max) else {
            return Vec::new();
        };
        let (texts, prompt_found) = texts_after_prompt(&tail, scope);
        if prompt_found || whole || max >= MAX_TURN_BYTES {
            return texts;
        }
        max = (max * 4).min(MAX_TURN_BYTES);
    }
}

/// The texts of the turn at the end of `tail`, and whether its prompt was
/// found (else the turn may have begun before `tail`).
fn texts_after_prompt(tail: &[u8], scope: SidechainScope) -> (Vec<TurnText>, bool) {
    let mut prompt_found = false;
    // (message id, time, texts last first), last message first
    let mut messages: Vec<(Option<String>, Option<String>, Vec<String>)> = Vec::new();
    for raw_line in tail.split(|b| *b == b'\n').rev() {
        let Ok(Value::Object(line)) = serde_json::from_slice::<Value>(raw_line) else {
            continue;
        };
        let sidechain = line.get("isSidechain").and_then(Value::as_bool) == Some(true);
        let in_scope = match scope {
            SidechainScope::MainOnly => !sidechain,
            SidechainScope::SidechainOnly => sidechain,
            SidechainScope::Any => true,
        };
        if !in_scope {
            continue;
        }
        let Some(message) = line.get("message").and_then(Value::as_object) else {
            continue;
        };
        match line.get("type").and_then(Value::as_str) {
            Some("user") if starts_a_turn(&line, message) => {
                prompt_found = true;
                break;
            }
            Some("assistant") => {
                let line_texts = assistant_texts(message);
                if line_texts.is_empty() {
                    continue;
                }
                let id = message
                    .get("id")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                let ts = line_ts(&line);
                match messages.last_mut() {
                    // one message spread over several lines: its first
                    // line's time
                    Some((last, first_ts, texts)) if *last == id && id.is_some() => {
                        texts.extend(line_texts.into_iter().rev());
                        if ts.is_some() {
                            *first_ts = ts;
                        }
                    }
                    _ => messages.push((id, ts, line_texts.into_iter().rev().collect())),
                }
            }
            _ => {}
        }
    }
    let texts = messages
        .into_iter()
        .rev()
        .filter_map(|(_, ts, mut texts)| {
            texts.reverse();
            let text = texts.join("\n\n");
            (!text.trim().is_empty()).then_some(TurnText { ts, text })
        })
        .collect();
    (texts, prompt_found)
}

/// The last `max` bytes of the file from a line's start, and whether they
/// are the whole file.
fn read_tail(path: &Path, max: u64) -> std::io::Result<(Vec<u8>, bool)> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    let start = len.saturating_sub(max);
    file.seek(SeekFrom::Start(start))?;
    let mut buf = Vec::with_capacity((len - start) as usize);
    file.read_to_end(&mut buf)?;
    if start > 0 {
        // The first line was cut: drop it.
        match buf.iter().position(|b| *b == b'\n') {
            Some(end) => {
                buf.drain(..=end);
            }
            None => buf.clear(),
        }
    }
    Ok((buf, start == 0))
}
