//! Antigravity CLI transcripts
//! (`~/.gemini/antigravity-cli/brain/<conversation>/.system_generated/logs/transcript_full.jsonl`,
//! shapes of captured agy 1.0.x transcripts) as memlog drafts.
//!
//! One step per line: `step_index`, `source` (`USER_EXPLICIT`, `MODEL`,
//! `SYSTEM`), `type`, `status` (`DONE`, `ERROR`, `RUNNING`), `created_at`,
//! and `content`, `thinking`, `tool_calls` as the step has them.
//!
//! - `USER_INPUT`: the prompt is the text inside `<USER_REQUEST>…</USER_REQUEST>`
//!   (agy adds metadata around it), a `user_prompt`;
//! - `PLANNER_RESPONSE`: its `content`, when there is one, an
//!   `agent_response` (its `thinking` is left out); its `tool_calls`
//!   (`{name, args}`, string arguments double-encoded, no call id) are
//!   matched in order with the steps that follow;
//! - any other step of the model (`RUN_COMMAND`, `VIEW_FILE`,
//!   `LIST_DIRECTORY`, `GENERIC`, …) is the execution of the next pending
//!   call: a `tool_observation` with the call's tool (without agy's
//!   `default_api:` prefix) and decoded arguments (without its display-only
//!   `toolAction` / `toolSummary`), the step's content as output (without
//!   agy's `Created At` / `Completed At` lines), failed when its status is
//!   `ERROR` or it reports a non-zero exit code. Its `tool_use_id` is
//!   `step:<step_index>`: agy has no call ids, and a step is numbered once.
//! - `SYSTEM_MESSAGE`, `CONVERSATION_HISTORY`, `CHECKPOINT`: not read.
//!
//! Every draft's `meta.ref` is `step:<step_index>` and its `ts` the step's
//! `created_at`.

use std::collections::VecDeque;
use std::path::Path;

use memlog_format::Kind;
use serde_json::{Map, Value};

use super::hooks::decode_argument;
use crate::sessions::{normalized_time, read_text, session_draft, text_body};
use crate::tool::{ToolCall, observe};
use crate::{HookOptions, Result, SessionFile};

/// Arguments agy adds for its own display, not the tool's.
const DISPLAY_ARGUMENTS: [&str; 2] = ["toolAction", "toolSummary"];

/// Arguments naming where a tool worked, in order of preference: the first
/// absolute one tells where the conversation ran.
const PLACE_ARGUMENTS: [&str; 5] = [
    "Cwd",
    "DirectoryPath",
    "SearchPath",
    "AbsolutePath",
    "TargetFile",
];

/// The conversation a transcript belongs to: its brain folder's name
/// (`brain/<id>/.system_generated/logs/transcript_full.jsonl`).
pub fn conversation_of(path: &Path) -> Option<&str> {
    path.ancestors().nth(3)?.file_name()?.to_str()
}

/// Reads one transcript.
pub fn read(path: &Path, options: &HookOptions) -> Result<SessionFile> {
    let (text, stem) = read_text(path)?;
    let session = conversation_of(path).unwrap_or(&stem).to_string();
    Ok(parse(&text, &session, options))
}

/// A call waiting for its execution step: tool and decoded arguments.
type PendingCall = (String, Value);

/// Converts a transcript's text, of conversation `session`.
pub fn parse(text: &str, session: &str, options: &HookOptions) -> SessionFile {
    let mut file = SessionFile {
        session_id: if session.is_empty() {
            options.agent.unknown_session()
        } else {
            session.to_string()
        },
        ..SessionFile::default()
    };
    let mut pending: VecDeque<PendingCall> = VecDeque::new();
    let mut drafts = Vec::new();
    let mut skipped = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(Value::Object(step)) = serde_json::from_str::<Value>(line) else {
            file.malformed += 1;
            continue;
        };
        let index = step.get("step_index").and_then(Value::as_u64);
        let (Some(index), Some(ts)) = (index, normalized_time(step.get("created_at"))) else {
            skipped += 1;
            continue;
        };
        let reference = format!("step:{index}");
        let content = step
            .get("content")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|c| !c.is_empty());
        let make = |kind: Kind, body: Map<String, Value>| {
            session_draft(&file.session_id, &ts, kind, body, options, &reference)
        };
        match step.get("type").and_then(Value::as_str).unwrap_or("") {
            "USER_INPUT" => {
                if let Some(prompt) = content.map(user_request).filter(|p| !p.is_empty()) {
                    drafts.push(make(Kind::UserPrompt, text_body(prompt)));
                }
            }
            "PLANNER_RESPONSE" => {
                if let Some(text) = content {
                    drafts.push(make(Kind::AgentResponse, text_body(text)));
                }
                for call in step
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let Some(name) = call.get("name").and_then(Value::as_str) else {
                        continue;
                    };
                    let tool = name
                        .strip_prefix("default_api:")
                        .unwrap_or(name)
                        .to_string();
                    let args = decoded_arguments(call.get("args"));
                    if file.cwd.is_none() {
                        file.cwd = place(&args);
                    }
                    pending.push_back((tool, args));
                }
            }
            "SYSTEM_MESSAGE" | "CONVERSATION_HISTORY" | "CHECKPOINT" => {}
            _ if step.get("source").and_then(Value::as_str) == Some("MODEL") => {
                let Some((tool, args)) = pending.pop_front() else {
                    skipped += 1;
                    continue;
                };
                if options.excludes(&tool) {
                    continue;
                }
                let output = content.map(without_times);
                let failed = step.get("status").and_then(Value::as_str) == Some("ERROR")
                    || output
                        .as_deref()
                        .and_then(exit_code)
                        .is_some_and(|c| c != 0);
                let observation = observe(&ToolCall {
                    tool: &tool,
                    input: Some(&args),
                    result_text: output.clone(),
                    tool_use_id: Some(&reference),
                    is_error: Some(failed),
                    exit_code: output.as_deref().and_then(exit_code),
                    ..ToolCall::default()
                });
                drafts.push(observation.draft(|body| make(Kind::ToolObservation, body)));
            }
            _ => skipped += 1,
        }
    }
    file.drafts = SessionFile::numbered(drafts);
    file.skipped = Some(skipped);
    file
}

/// The user's own words in a `USER_INPUT` step.
fn user_request(content: &str) -> &str {
    const OPEN: &str = "<USER_REQUEST>";
    const CLOSE: &str = "</USER_REQUEST>";
    match content.find(OPEN) {
        Some(start) => {
            let rest = &content[start + OPEN.len()..];
            rest[..rest.find(CLOSE).unwrap_or(rest.len())].trim()
        }
        None => content.trim(),
    }
}

/// A call's arguments decoded, without agy's display-only ones.
fn decoded_arguments(args: Option<&Value>) -> Value {
    let Some(Value::Object(args)) = args else {
        return Value::Object(Map::new());
    };
    Value::Object(
        args.iter()
            .filter(|(k, _)| !DISPLAY_ARGUMENTS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), decode_argument(v)))
            .collect(),
    )
}

/// Where a call worked, when an argument names an absolute path.
fn place(args: &Value) -> Option<String> {
    PLACE_ARGUMENTS
        .iter()
        .filter_map(|k| args.get(*k).and_then(Value::as_str))
        .find(|p| p.starts_with('/'))
        .map(str::to_string)
}

/// A step's content without agy's leading `Created At:` / `Completed At:`
/// lines.
fn without_times(content: &str) -> String {
    content
        .lines()
        .skip_while(|l| l.starts_with("Created At:") || l.starts_with("Completed At:"))
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}

/// The exit code a command's output reports (`… exit code: 1`, `exited
/// with code 1`).
fn exit_code(output: &str) -> Option<i64> {
    let lower = output.to_ascii_lowercase();
    let at = lower
        .find("exit code")
        .or_else(|| lower.find("exited with code"))?;
    lower[at..]
        .split(|c: char| !c.is_ascii_digit() && c != '-')
        .find(|w| !w.is_empty() && *w != "-")
        .and_then(|w| w.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRANSCRIPT: &str = include_str!(
        "../../../fixtures/antigravity/brain/7b2e4f10-3c5d-4a8e-9f21-6d0c8b4a2e57/.system_generated/logs/transcript_full.jsonl"
    );

    fn options() -> HookOptions {
        HookOptions {
            agent: &crate::antigravity::Antigravity,
            ..HookOptions::new("shop")
        }
    }

    /// Field test 12a: agy names its shell's command `CommandLine`, which
    /// the check for memlog's own calls did not read: `memlog search` and
    /// the personal note it printed were imported into a shared event.
    #[test]
    fn memlogs_own_call_is_withheld_and_personal() {
        let transcript = TRANSCRIPT
            .replace("npm ci", "memlog search freeze")
            .replace("added 12 packages", "(personal) heliotrope");
        let f = parse(&transcript, "c1", &options());
        crate::tool::assert_own_call_kept_private(f.drafts.iter().map(|(_, d)| d), "heliotrope");
    }

    #[test]
    fn prompts_calls_and_answers() {
        let f = parse(TRANSCRIPT, "c1", &options());
        let kinds: Vec<&str> = f.drafts.iter().map(|(_, d)| d.kind.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "user_prompt",
                "tool_observation",
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
        let read = &f.drafts[1].1;
        assert_eq!(read.body["tool"], "view_file");
        assert_eq!(read.body["input"]["AbsolutePath"], "/work/shop/notes.txt");
        assert!(read.body["input"].get("toolAction").is_none());
        assert_eq!(read.body["tool_use_id"], "step:3");
        assert!(
            read.body["output"]
                .as_str()
                .unwrap()
                .contains("freeze: Wednesday")
        );
        assert_eq!(read.body["success"], true);
        let denied = &f.drafts[2].1;
        assert_eq!(denied.body["success"], false);
        let failed = &f.drafts[6].1;
        assert_eq!(failed.body["tool"], "run_command");
        assert_eq!(failed.body["input"]["CommandLine"], "npm test");
        assert_eq!(failed.body["metadata"]["exit_code"], 1);
        assert_eq!(failed.body["success"], false);
        assert_eq!(f.cwd.as_deref(), Some("/work/shop/notes.txt"));
        assert!(
            f.drafts
                .iter()
                .all(|(_, d)| d.meta["client"] == "antigravity")
        );
        assert_eq!(parse(TRANSCRIPT, "c1", &options()), f);
    }

    #[test]
    fn exit_codes_are_read_from_the_output() {
        assert_eq!(exit_code("The command failed with exit code: 2"), Some(2));
        assert_eq!(exit_code("Process exited with code 0."), Some(0));
        assert_eq!(exit_code("ok"), None);
    }
}
