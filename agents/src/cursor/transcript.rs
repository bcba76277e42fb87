//! Cursor agent transcripts
//! (`~/.cursor/projects/<project>/agent-transcripts/<conversation>.jsonl`,
//! or `<conversation>/<conversation>.jsonl` from the IDE; shapes of
//! captured 2026 transcripts) as memlog drafts.
//!
//! One message per line, `{"role", "message": {"content": [blocks]}}`, in
//! Claude's block shapes but with less in them: no times, no ids, no tool
//! results.
//!
//! - `user`: its text blocks, a `user_prompt` — the query inside
//!   `<user_query>…</user_query>`, without the `<timestamp>` Cursor may put
//!   first;
//! - `assistant`: its text blocks, an `agent_response`; each `tool_use`
//!   block (`name`, `input`) a `tool_observation` without output or
//!   outcome.
//!
//! With no times in the file, every draft is stamped with the file's last
//! change (the same on every import of an unchanged file; a session that
//! grew is reconciled by capture identity); its `meta.ref` is
//! `line:<n>:<block>`.

use std::path::Path;

use memlog_format::Kind;
use serde_json::Value;

use crate::sessions::{read_text, session_draft, text_body};
use crate::tool::{ToolCall, observe};
use crate::{Error, HookOptions, Result, SessionFile};

/// Reads one transcript; the file's name is the conversation.
pub fn read(path: &Path, options: &HookOptions) -> Result<SessionFile> {
    let (text, stem) = read_text(path)?;
    let modified = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .map_err(|e| Error::io(path, e))?;
    let ts = jiff::Timestamp::try_from(modified)
        .map(memlog_format::time::format)
        .unwrap_or_else(|_| memlog_format::time::now());
    Ok(parse(&text, &stem, &ts, options))
}

/// Converts a transcript's text of conversation `session`, every draft at
/// `ts`.
pub fn parse(text: &str, session: &str, ts: &str, options: &HookOptions) -> SessionFile {
    let mut file = SessionFile {
        session_id: if session.is_empty() {
            options.agent.unknown_session()
        } else {
            session.to_string()
        },
        ..SessionFile::default()
    };
    let mut drafts = Vec::new();
    let mut skipped = 0;
    for (n, line) in text.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        let Ok(Value::Object(line)) = serde_json::from_str::<Value>(line) else {
            file.malformed += 1;
            continue;
        };
        let blocks = line
            .get("message")
            .and_then(|m| m.get("content"))
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let texts: Vec<&str> = blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect();
        let joined = texts.join("\n");
        let reference = |block: usize| format!("line:{n}:{block}");
        match line.get("role").and_then(Value::as_str) {
            Some("user") => {
                let prompt = user_query(&joined);
                if !prompt.is_empty() {
                    drafts.push(session_draft(
                        &file.session_id,
                        ts,
                        Kind::UserPrompt,
                        text_body(prompt),
                        options,
                        &reference(0),
                    ));
                }
            }
            Some("assistant") => {
                if !joined.trim().is_empty() {
                    drafts.push(session_draft(
                        &file.session_id,
                        ts,
                        Kind::AgentResponse,
                        text_body(joined.trim()),
                        options,
                        &reference(0),
                    ));
                }
                for (i, block) in blocks.iter().enumerate() {
                    if block.get("type").and_then(Value::as_str) != Some("tool_use") {
                        continue;
                    }
                    let Some(tool) = block.get("name").and_then(Value::as_str) else {
                        continue;
                    };
                    if options.excludes(tool) {
                        continue;
                    }
                    let observation = observe(&ToolCall {
                        tool,
                        input: block.get("input"),
                        ..ToolCall::default()
                    });
                    drafts.push(observation.draft(|body| {
                        session_draft(
                            &file.session_id,
                            ts,
                            Kind::ToolObservation,
                            body,
                            options,
                            &reference(i + 1),
                        )
                    }));
                }
            }
            _ => skipped += 1,
        }
    }
    file.drafts = SessionFile::numbered(drafts);
    file.skipped = Some(skipped);
    file
}

/// What the user typed: the text inside `<user_query>`, without a leading
/// `<timestamp>…</timestamp>`.
fn user_query(text: &str) -> &str {
    let mut rest = text.trim();
    if let Some(after) = rest.strip_prefix("<timestamp>")
        && let Some(end) = after.find("</timestamp>")
    {
        rest = after[end + "</timestamp>".len()..].trim();
    }
    if let Some(after) = rest.strip_prefix("<user_query>") {
        rest = after
            .rfind("</user_query>")
            .map_or(after, |end| &after[..end])
            .trim();
    }
    rest
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRANSCRIPT: &str = include_str!(
        "../../../fixtures/cursor/agent-transcripts/c0ffee00-1111-4222-8333-444455556666.jsonl"
    );

    #[test]
    fn prompts_calls_and_answers() {
        let options = HookOptions {
            agent: &crate::cursor::Cursor,
            ..HookOptions::new("shop")
        };
        let ts = "2026-11-26T11:05:00.000Z";
        let f = parse(
            TRANSCRIPT,
            "c0ffee00-1111-4222-8333-444455556666",
            ts,
            &options,
        );
        let kinds: Vec<&str> = f.drafts.iter().map(|(_, d)| d.kind.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "user_prompt",
                "agent_response",
                "tool_observation",
                "agent_response",
                "user_prompt",
                "tool_observation",
                "tool_observation",
                "agent_response"
            ]
        );
        assert_eq!(
            f.drafts[0].1.body["text"],
            "When is the freeze? Check notes.txt"
        );
        assert_eq!(
            f.drafts[4].1.body["text"],
            "<timestamp>is mine</timestamp> add a test"
        );
        assert_eq!(f.drafts[2].1.body["tool"], "Shell");
        assert_eq!(f.drafts[2].1.body["input"]["command"], "cat notes.txt");
        assert!(
            f.drafts
                .iter()
                .all(|(_, d)| d.ts == ts && d.meta["client"] == "cursor")
        );
        assert_eq!(
            parse(
                TRANSCRIPT,
                "c0ffee00-1111-4222-8333-444455556666",
                ts,
                &options
            ),
            f
        );
    }
}
