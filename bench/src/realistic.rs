//! A second seeded corpus, shaped like what a coding agent's hooks record
//! in a real repository: most events are tool observations whose output is
//! long (a file read back with line numbers, grep matches, a test run, a
//! compiler error, a diff), cut as the recorder cuts them (100 lines,
//! 10,000 bytes); answers run to paragraphs with code blocks; identifiers,
//! paths, hashes and numbers are many, so the term dictionary is large.
//!
//! The bench's own generator ([`crate::generator`]) writes one-line events
//! from a few hundred identifiers; searching and indexing that corpus says
//! little about a year of real sessions. The same seed always gives the
//! same sessions.

use serde_json::json;

use crate::generator::{Rng, identifier_of, snake};

const MODULES: &[&str] = &[
    "auth",
    "billing",
    "search",
    "indexer",
    "session",
    "cache",
    "router",
    "storage",
    "payments",
    "notifications",
    "users",
    "reports",
    "scheduler",
    "gateway",
    "metrics",
    "config",
    "migrations",
    "webhooks",
    "export",
    "audit",
    "queue",
    "ingest",
    "graph",
    "tenant",
    "invoice",
    "ledger",
    "mailer",
    "telemetry",
    "sandbox",
    "plugins",
];
const DIRS: &[&str] = &[
    "src",
    "src",
    "src",
    "lib",
    "crates/core/src",
    "app",
    "pkg",
    "internal",
    "tests",
    "web/src",
];
const VERBS: &[&str] = &[
    "get",
    "set",
    "load",
    "parse",
    "validate",
    "render",
    "sync",
    "fetch",
    "build",
    "resolve",
    "create",
    "update",
    "delete",
    "find",
    "list",
    "apply",
    "merge",
    "split",
    "encode",
    "decode",
    "flush",
    "retry",
    "schedule",
    "cancel",
    "notify",
    "compute",
    "normalize",
    "serialize",
    "deserialize",
    "register",
    "open",
    "close",
    "read",
    "write",
    "check",
    "ensure",
    "init",
    "handle",
    "dispatch",
    "collect",
];
const NOUNS: &[&str] = &[
    "User",
    "Token",
    "Invoice",
    "Query",
    "Config",
    "Session",
    "Order",
    "Report",
    "Route",
    "Index",
    "Account",
    "Tenant",
    "Webhook",
    "Payload",
    "Event",
    "Batch",
    "Cursor",
    "Segment",
    "Ledger",
    "Entry",
    "Schema",
    "Migration",
    "Job",
    "Worker",
    "Lease",
    "Lock",
    "Snapshot",
    "Manifest",
    "Credential",
    "Secret",
    "Policy",
    "Role",
    "Permission",
    "Header",
    "Request",
    "Response",
    "Handler",
    "Client",
    "Pool",
    "Connection",
    "Channel",
    "Message",
    "Topic",
    "Partition",
    "Offset",
    "Checkpoint",
    "Metric",
    "Span",
    "Trace",
    "Bucket",
    "Blob",
    "Chunk",
    "Frame",
    "Template",
    "Locale",
    "Currency",
    "Discount",
    "Coupon",
    "Refund",
    "Charge",
];
const SUFFIXES: &[&str] = &[
    "ById",
    "ForAccount",
    "Batch",
    "Async",
    "",
    "",
    "",
    "FromCache",
    "WithRetry",
    "Internal",
    "Unchecked",
    "V2",
    "s",
    "OrDefault",
    "InPlace",
];
const EXTS: &[&str] = &["rs", "rs", "ts", "tsx", "py", "go", "sql", "yaml"];
const PROBLEMS: &[&str] = &[
    "returns null when the id is missing",
    "panics on an empty input",
    "times out under load",
    "leaks a file handle",
    "double-counts retries",
    "ignores the timezone",
    "breaks on unicode names",
    "is slow with a cold cache",
    "deadlocks when two workers take the lease",
    "drops the last batch on shutdown",
    "rounds the currency twice",
    "reads a stale snapshot after failover",
    "sends the webhook before the commit",
    "loses the cursor after a restart",
    "fails the migration on an empty table",
    "logs the secret in plain text",
];
const PROSE: &[&str] = &[
    "The problem is that",
    "I looked at",
    "This happens because",
    "To fix it,",
    "The test now covers",
    "I kept the old behaviour for",
    "After the change,",
    "One thing to watch:",
    "The caller already handles",
    "We should also consider",
    "Next I will run",
    "It turns out that",
];
const CONNECTIVES: &[&str] = &[
    "so the value is checked before it is used",
    "which means the lock is held across the await",
    "and the retry loop never sees the error",
    "because the cache key does not include the tenant",
    "while the worker still holds the old connection",
    "so every request pays for a fresh parse",
    "and the index is rebuilt on every start",
    "which is why the test only failed on CI",
    "so the migration runs inside one transaction now",
    "and the timestamp is stored in UTC",
];
const KEYWORDS_RS: &[&str] = &[
    "let", "mut", "fn", "pub", "impl", "match", "if", "else", "return", "Ok", "Err", "Some",
    "None", "self", "async", "await", "use", "struct", "enum", "for", "in", "while",
];
const TYPES: &[&str] = &[
    "u64",
    "usize",
    "String",
    "&str",
    "Vec<u8>",
    "Option<Uuid>",
    "Result<(), Error>",
    "HashMap<String, Value>",
    "Arc<Mutex<State>>",
    "Duration",
    "bool",
];
const ERROR_CODES: &[&str] = &[
    "E0308", "E0382", "E0499", "E0502", "E0425", "E0599", "E0277", "E0106", "E0433", "E0061",
];
const ERROR_TEXTS: &[&str] = &[
    "mismatched types",
    "borrow of moved value",
    "cannot borrow as mutable more than once at a time",
    "cannot borrow as mutable because it is also borrowed as immutable",
    "cannot find value in this scope",
    "no method named found for struct",
    "the trait bound is not satisfied",
    "missing lifetime specifier",
    "failed to resolve: use of undeclared crate or module",
    "this function takes 2 arguments but 1 argument was supplied",
];
const COMMANDS: &[&str] = &[
    "cargo test",
    "cargo build",
    "cargo clippy --all-targets",
    "npm test",
    "pytest -x",
    "go test ./...",
    "git status",
    "git diff",
    "git log --oneline -n 20",
    "make lint",
];

/// At most this many lines and bytes of a tool's output are recorded (the
/// recorder's defaults, `capture.max_output_lines` and `max_output_bytes`).
const MAX_OUTPUT_LINES: usize = 100;
const MAX_OUTPUT_BYTES: usize = 10_000;

fn identifier(r: &mut Rng) -> String {
    identifier_of(r, VERBS, NOUNS, SUFFIXES)
}

fn path(r: &mut Rng) -> String {
    format!(
        "{}/{}/{}.{}",
        r.pick(DIRS),
        r.pick(MODULES),
        snake(r.pick::<&str>(NOUNS)),
        r.pick(EXTS)
    )
}

fn hex(r: &mut Rng, len: usize) -> String {
    let v = r.next_u64();
    format!("{v:016x}")[..len.min(16)].to_string()
}

/// One line of code, Rust-flavoured, naming identifiers of the session.
fn code_line(r: &mut Rng, focus: &str) -> String {
    let ident = if r.below(3) == 0 {
        focus.to_string()
    } else {
        identifier(r)
    };
    let var = snake(r.pick::<&str>(NOUNS));
    match r.below(10) {
        0 => format!(
            "pub fn {}(&self, {var}: {}) -> {} {{",
            snake(&ident),
            r.pick(TYPES),
            r.pick(TYPES)
        ),
        1 => format!("    let {var} = self.{}({var}_id)?;", snake(&ident)),
        2 => format!(
            "    if {var}.is_empty() {{ return Err(Error::{}); }}",
            r.pick(NOUNS)
        ),
        3 => format!("    // {}", r.pick(PROBLEMS)),
        4 => format!("    match {}(&{var}).await {{", snake(&ident)),
        5 => format!(
            "        Ok(v) => {}.insert(v.{}, {var}),",
            snake(r.pick::<&str>(NOUNS)),
            snake(r.pick::<&str>(NOUNS))
        ),
        6 => format!(
            "        Err(e) => tracing::warn!(\"{} failed: {{e}}\", {}),",
            snake(&ident),
            r.below(1000)
        ),
        7 => "    }".to_string(),
        8 => format!(
            "use crate::{}::{{{}, {}}};",
            r.pick(MODULES),
            r.pick(NOUNS),
            r.pick(NOUNS)
        ),
        _ => format!(
            "    {} {} = {}::{}({}, {});",
            r.pick(KEYWORDS_RS),
            var,
            r.pick(NOUNS),
            snake(&identifier(r)),
            r.below(4096),
            r.pick(&["true", "false", "None", "&cfg", "ctx.clone()"])
        ),
    }
}

/// Cuts an output as the recorder does: head and tail lines around a
/// marker, then bytes.
fn cut(lines: Vec<String>) -> String {
    let lines = if lines.len() > MAX_OUTPUT_LINES {
        let head = MAX_OUTPUT_LINES / 2;
        let tail = MAX_OUTPUT_LINES - head;
        let mut out = lines[..head].to_vec();
        out.push(format!(
            "[… {} lines cut …]",
            lines.len() - MAX_OUTPUT_LINES
        ));
        out.extend_from_slice(&lines[lines.len() - tail..]);
        out
    } else {
        lines
    };
    let mut text = lines.join("\n");
    if text.len() > MAX_OUTPUT_BYTES {
        let mut end = MAX_OUTPUT_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

/// A tool call as the recorder indexes it: the tool, its telling input,
/// then the output.
fn tool_observation(r: &mut Rng, focus: &str, focus_path: &str) -> String {
    let mut lines = Vec::new();
    match r.below(10) {
        // Read: a file with line numbers
        0..=2 => {
            let file = if r.below(2) == 0 {
                focus_path.to_string()
            } else {
                path(r)
            };
            lines.push(format!("Read\n{file}"));
            let start = 1 + r.below(300);
            for i in 0..(20 + r.below(160)) {
                lines.push(format!("{:>6}→{}", start + i, code_line(r, focus)));
            }
        }
        // Grep: matches across files
        3 | 4 => {
            let pattern = if r.below(2) == 0 {
                snake(focus)
            } else {
                identifier(r)
            };
            lines.push(format!("Grep\n{pattern}"));
            for _ in 0..(3 + r.below(40)) {
                lines.push(format!(
                    "{}:{}:{}",
                    path(r),
                    1 + r.below(900),
                    code_line(r, focus).trim()
                ));
            }
        }
        // Bash: a test run, a build error, git
        5..=7 => {
            let command = r.pick(COMMANDS);
            lines.push(format!("Bash\n{command}"));
            match *command {
                "cargo build" | "cargo clippy --all-targets" => {
                    lines.push(format!(
                        "   Compiling {} v0.{}.{} ({})",
                        r.pick(MODULES),
                        r.below(9),
                        r.below(20),
                        r.pick(DIRS)
                    ));
                    for _ in 0..(1 + r.below(4)) {
                        let line = 1 + r.below(600);
                        let file = if r.below(2) == 0 {
                            focus_path.to_string()
                        } else {
                            path(r)
                        };
                        lines.push(format!(
                            "error[{}]: {}",
                            r.pick(ERROR_CODES),
                            r.pick(ERROR_TEXTS)
                        ));
                        lines.push(format!("  --> {file}:{line}:{}", 1 + r.below(60)));
                        lines.push("   |".into());
                        lines.push(format!("{line:>3} | {}", code_line(r, focus).trim()));
                        lines.push(format!(
                            "   |     ^^^^^^ expected `{}`, found `{}`",
                            r.pick(TYPES),
                            r.pick(TYPES)
                        ));
                    }
                    lines.push(format!(
                        "error: could not compile `{}` due to previous error",
                        r.pick(MODULES)
                    ));
                }
                "git status" | "git diff" | "git log --oneline -n 20" => {
                    for _ in 0..(3 + r.below(30)) {
                        lines.push(match r.below(3) {
                            0 => format!("{} {} {}", hex(r, 7), r.pick(PROSE), identifier(r)),
                            1 => format!("        modified:   {}", path(r)),
                            _ => format!("{}{}", r.pick(&["+", "-", " "]), code_line(r, focus)),
                        });
                    }
                }
                _ => {
                    let tests = 5 + r.below(80);
                    lines.push(format!("running {tests} tests"));
                    let mut failed = Vec::new();
                    for _ in 0..tests {
                        let name = format!("{}::tests::{}", r.pick(MODULES), snake(&identifier(r)));
                        let ok = r.below(12) != 0;
                        lines.push(format!(
                            "test {name} ... {}",
                            if ok { "ok" } else { "FAILED" }
                        ));
                        if !ok {
                            failed.push(name);
                        }
                    }
                    for name in &failed {
                        lines.push(format!("---- {name} stdout ----"));
                        lines.push(format!(
                            "thread '{name}' panicked at {}:{}:{}:",
                            path(r),
                            1 + r.below(500),
                            1 + r.below(40)
                        ));
                        lines.push(format!(
                            "assertion `left == right` failed: {}",
                            r.pick(PROBLEMS)
                        ));
                        lines.push(format!("  left: {}", r.below(100_000)));
                        lines.push(format!(" right: {}", r.below(100_000)));
                    }
                    lines.push(format!(
                        "test result: {}. {} passed; {} failed; 0 ignored; finished in {}.{:02}s",
                        if failed.is_empty() { "ok" } else { "FAILED" },
                        tests - failed.len(),
                        failed.len(),
                        r.below(30),
                        r.below(100)
                    ));
                }
            }
        }
        // Edit: the snippet after the change
        8 => {
            let file = focus_path.to_string();
            lines.push(format!("Edit\n{file}"));
            lines.push(format!(
                "The file {file} has been updated. Here's the result of running `cat -n` on a snippet of the edited file:"
            ));
            let start = 1 + r.below(400);
            for i in 0..(5 + r.below(25)) {
                lines.push(format!("{:>6}→{}", start + i, code_line(r, focus)));
            }
        }
        // Glob: paths
        _ => {
            lines.push(format!("Glob\n**/{}*", r.pick(MODULES)));
            for _ in 0..(2 + r.below(60)) {
                lines.push(path(r));
            }
        }
    }
    cut(lines)
}

fn sentence(r: &mut Rng, focus: &str, focus_path: &str) -> String {
    match r.below(4) {
        0 => format!(
            "{} `{focus}` in {focus_path} {}, {}.",
            r.pick(PROSE),
            r.pick(PROBLEMS),
            r.pick(CONNECTIVES)
        ),
        1 => format!(
            "{} `{}` in {} {}.",
            r.pick(PROSE),
            identifier(r),
            path(r),
            r.pick(CONNECTIVES)
        ),
        2 => format!(
            "{} the {} module {}.",
            r.pick(PROSE),
            r.pick(MODULES),
            r.pick(CONNECTIVES)
        ),
        _ => format!(
            "{} `{}` now returns `{}` instead of panicking.",
            r.pick(PROSE),
            snake(&identifier(r)),
            r.pick(TYPES)
        ),
    }
}

fn agent_response(r: &mut Rng, focus: &str, focus_path: &str) -> String {
    let mut out = Vec::new();
    for _ in 0..(1 + r.below(4)) {
        let para: Vec<String> = (0..(1 + r.below(4)))
            .map(|_| sentence(r, focus, focus_path))
            .collect();
        out.push(para.join(" "));
        if r.below(3) == 0 {
            let code: Vec<String> = (0..(3 + r.below(15)))
                .map(|_| code_line(r, focus))
                .collect();
            out.push(format!("```rust\n{}\n```", code.join("\n")));
        }
    }
    out.join("\n\n")
}

fn user_prompt(r: &mut Rng, focus: &str, focus_path: &str) -> String {
    match r.below(4) {
        0 => format!(
            "`{focus}` in {focus_path} {}. Can you find why and fix it? Also check `{}` in {}.",
            r.pick(PROBLEMS),
            identifier(r),
            path(r)
        ),
        1 => format!(
            "I get this when I run {}:\n\nerror[{}]: {}\n  --> {focus_path}:{}:{}\n\nwhat is wrong?",
            r.pick(COMMANDS),
            r.pick(ERROR_CODES),
            r.pick(ERROR_TEXTS),
            1 + r.below(500),
            1 + r.below(60)
        ),
        2 => format!(
            "Refactor {} so that `{}` does not {}. Keep the public API.",
            path(r),
            identifier(r),
            r.pick(PROBLEMS)
        ),
        _ => format!(
            "Run the tests for the {} module and tell me what fails.",
            r.pick(MODULES)
        ),
    }
}

/// One session of `events` neutral-format lines.
pub fn session(
    r: &mut Rng,
    index: usize,
    events: usize,
    start_secs: i64,
) -> Vec<serde_json::Value> {
    let session = format!("real-{index:06}");
    let mut out = Vec::with_capacity(events);
    let mut t = start_secs;
    let focus = identifier(r);
    let focus_path = path(r);
    for i in 0..events {
        t += 1 + r.below(40) as i64;
        let ts = memlog_format::time::format(
            jiff::Timestamp::from_second(t).unwrap_or(jiff::Timestamp::UNIX_EPOCH),
        );
        // A prompt, then the agent's tool calls and answers; now and then
        // a note or a fact it kept.
        let (kind, text) = match (i % 20, r.below(20)) {
            (0, _) | (10, _) => ("user_prompt", user_prompt(r, &focus, &focus_path)),
            (_, 0) => (
                "note",
                format!(
                    "Decision: `{}` in {} {}; {}.",
                    identifier(r),
                    path(r),
                    r.pick(CONNECTIVES),
                    r.pick(PROBLEMS)
                ),
            ),
            (_, 1) => (
                "fact",
                format!(
                    "`{focus}` lives in {focus_path} and {}.",
                    r.pick(CONNECTIVES)
                ),
            ),
            (_, 2..=5) => ("agent_response", agent_response(r, &focus, &focus_path)),
            _ => ("tool_observation", tool_observation(r, &focus, &focus_path)),
        };
        out.push(json!({"session": session, "ts": ts, "kind": kind, "text": text, "ref": format!("{session}:{i}")}));
    }
    out
}

/// `sessions` sessions of `per_session` events each, as JSONL text.
pub fn corpus(seed: u64, sessions: usize, per_session: usize) -> String {
    crate::generator::jsonl(
        &mut Rng::new(seed ^ 0x7ea1),
        sessions,
        per_session,
        7200,
        session,
    )
}

/// What people and agents search such a memory for: identifiers, paths,
/// error codes and messages, test names, questions in words.
pub fn queries(seed: u64, n: usize) -> Vec<String> {
    let mut r = Rng::new(seed ^ 0x5eed_7ea1);
    (0..n)
        .map(|i| match i % 6 {
            0 => identifier(&mut r),
            1 => path(&mut r),
            2 => format!("{} {}", r.pick(ERROR_CODES), r.pick(ERROR_TEXTS)),
            3 => format!("why does {} {}", identifier(&mut r), r.pick(PROBLEMS)),
            4 => format!("{} {}", r.pick(MODULES), r.pick(PROBLEMS)),
            _ => snake(&identifier(&mut r)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_corpus_and_outputs_are_cut() {
        let a = corpus(7, 3, 100);
        assert_eq!(a, corpus(7, 3, 100));
        let mut kinds = std::collections::HashMap::new();
        for line in a.lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let text = v["text"].as_str().unwrap();
            assert!(text.len() <= MAX_OUTPUT_BYTES + 4, "{}", text.len());
            *kinds
                .entry(v["kind"].as_str().unwrap().to_string())
                .or_insert(0) += 1;
        }
        assert!(kinds["tool_observation"] > kinds["agent_response"]);
        assert!(kinds["user_prompt"] >= 30);
    }
}
