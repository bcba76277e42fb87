//! A seeded generator of realistic agent sessions in the neutral import
//! format: prompts, answers and tool observations that mention file paths
//! and code identifiers, so full-text search has something real to chew on.
//! The same seed always gives the same sessions.

use serde_json::json;

/// SplitMix64: tiny, fast, and stable forever (unlike a library RNG whose
/// stream may change between versions); the privacy filter's samples use
/// the same one.
pub use memlog_format::privacy::sample::SplitMix as Rng;

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
];
const VERBS: &[&str] = &[
    "get", "set", "load", "parse", "validate", "render", "sync", "fetch", "build", "resolve",
];
const NOUNS: &[&str] = &[
    "User", "Token", "Invoice", "Query", "Config", "Session", "Order", "Report", "Route", "Index",
];
const SUFFIXES: &[&str] = &[
    "ById",
    "ForAccount",
    "Batch",
    "Async",
    "",
    "FromCache",
    "WithRetry",
];
const PROBLEMS: &[&str] = &[
    "returns null when the id is missing",
    "panics on an empty input",
    "times out under load",
    "leaks a file handle",
    "double-counts retries",
    "ignores the timezone",
    "breaks on unicode names",
    "is slow with a cold cache",
];
const EXTS: &[&str] = &["rs", "ts", "py", "go"];

fn identifier(r: &mut Rng) -> String {
    identifier_of(r, VERBS, NOUNS, SUFFIXES)
}

/// A camelCase identifier: a verb, a noun and a suffix picked from these.
pub fn identifier_of(r: &mut Rng, verbs: &[&str], nouns: &[&str], suffixes: &[&str]) -> String {
    format!("{}{}{}", r.pick(verbs), r.pick(nouns), r.pick(suffixes))
}

/// `getUserById` as `get_user_by_id`.
pub fn snake(ident: &str) -> String {
    let mut out = String::new();
    for (i, c) in ident.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('_');
        }
        out.extend(c.to_lowercase());
    }
    out
}

fn path(r: &mut Rng) -> String {
    format!(
        "src/{}/{}.{}",
        r.pick(MODULES),
        snake(r.pick::<&str>(NOUNS)),
        r.pick(EXTS)
    )
}

/// One session of `events` neutral-format lines.
pub fn session(
    r: &mut Rng,
    index: usize,
    events: usize,
    start_secs: i64,
) -> Vec<serde_json::Value> {
    let session = format!("bench-{index:06}");
    let mut out = Vec::with_capacity(events);
    let mut t = start_secs;
    let focus = identifier(r);
    let focus_path = path(r);
    for i in 0..events {
        t += 1 + r.below(20) as i64;
        let ts = memlog_format::time::format(
            jiff::Timestamp::from_second(t).unwrap_or(jiff::Timestamp::UNIX_EPOCH),
        );
        let (kind, text) = match i % 5 {
            0 => (
                "user_prompt",
                format!(
                    "Fix {focus} in {focus_path}: it {}. Also check {} in {}.",
                    r.pick(PROBLEMS),
                    identifier(r),
                    path(r)
                ),
            ),
            1 | 3 => (
                "tool_observation",
                format!(
                    "{} {}\n{}:{}: fn {}() {{ /* {} */ }}",
                    r.pick(&["Read", "Grep", "Edit", "Bash"]),
                    path(r),
                    focus_path,
                    r.below(400) + 1,
                    snake(&identifier(r)),
                    r.pick(PROBLEMS)
                ),
            ),
            2 => (
                "agent_response",
                format!(
                    "I changed {focus} so it no longer {}; the caller {} in {} needed a guard too.",
                    r.pick(PROBLEMS),
                    identifier(r),
                    path(r)
                ),
            ),
            _ => (
                "note",
                format!(
                    "Decision: {} in the {} module uses {}.",
                    identifier(r),
                    r.pick(MODULES),
                    identifier(r)
                ),
            ),
        };
        out.push(json!({"session": session, "ts": ts, "kind": kind, "text": text, "ref": format!("{session}:{i}")}));
    }
    out
}

/// `sessions` sessions of `per_session` events each, as JSONL text.
pub fn corpus(seed: u64, sessions: usize, per_session: usize) -> String {
    jsonl(&mut Rng::new(seed), sessions, per_session, 3600, session)
}

/// `sessions` sessions of `per_session` events each, made by `session`
/// (index, events, start in seconds) and started `spacing` seconds apart
/// from 2026-01-01, as JSONL text.
pub fn jsonl(
    r: &mut Rng,
    sessions: usize,
    per_session: usize,
    spacing: i64,
    session: impl Fn(&mut Rng, usize, usize, i64) -> Vec<serde_json::Value>,
) -> String {
    let mut text = String::new();
    let base = 1_767_225_600; // 2026-01-01
    for s in 0..sessions {
        for line in session(r, s, per_session, base + (s as i64) * spacing) {
            text.push_str(&line.to_string());
            text.push('\n');
        }
    }
    text
}

/// Queries like the ones people and agents type: identifiers, paths,
/// problem descriptions, module names.
pub fn queries(seed: u64, n: usize) -> Vec<String> {
    let mut r = Rng::new(seed ^ 0x5eed);
    (0..n)
        .map(|i| match i % 4 {
            0 => identifier(&mut r),
            1 => format!("{} {}", r.pick(MODULES), r.pick(PROBLEMS)),
            2 => path(&mut r),
            _ => format!("why does {} {}", identifier(&mut r), r.pick(PROBLEMS)),
        })
        .collect()
}
