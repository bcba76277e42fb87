//! The leak corpus: secrets drawn from every rule's documented format
//! (random bodies in the right alphabet and length, never copied
//! fixtures), each put where an agent meets one: a prompt, a command's
//! output, a `.env` or config file read, an answer, a note, an imported
//! transcript, an MCP memory.

use memlog_format::privacy::Rule;
use memlog_format::privacy::rules;
use memlog_format::privacy::sample::{Sample, SplitMix, expand};

/// The way a secret goes in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Channel {
    /// `memlog hook UserPromptSubmit`
    Prompt,
    /// `memlog hook PostToolUse`, a Bash command's output
    BashOutput,
    /// `memlog hook PostToolUse`, a Read of a config file
    FileRead,
    /// `memlog hook Stop`, the last answer
    Answer,
    /// `memlog note` and `memlog record --kind note`, in turn
    Note,
    /// `memlog import jsonl`
    ImportJsonl,
    /// `memlog import claude-code`
    ImportTranscript,
    /// `memlog mcp`, memory_remember
    Mcp,
}

impl Channel {
    pub const ALL: [Channel; 8] = [
        Channel::Prompt,
        Channel::BashOutput,
        Channel::FileRead,
        Channel::Answer,
        Channel::Note,
        Channel::ImportJsonl,
        Channel::ImportTranscript,
        Channel::Mcp,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Channel::Prompt => "hook: prompt",
            Channel::BashOutput => "hook: Bash output",
            Channel::FileRead => "hook: Read of a config file",
            Channel::Answer => "hook: answer (Stop)",
            Channel::Note => "note, record",
            Channel::ImportJsonl => "import jsonl",
            Channel::ImportTranscript => "import claude-code",
            Channel::Mcp => "mcp: memory_remember",
        }
    }
}

/// One secret in its event.
pub struct Secret {
    /// What the event carries beside the secret, `case-NNNN-` and ten
    /// random letters: the bench checks it arrived, and that the search of
    /// the bytes on disk finds it (a control: what is not a secret is
    /// found).
    pub nonce: String,
    pub rule: &'static Rule,
    pub sample: Sample,
    pub channel: Channel,
    /// The event's text (a file's content, a command's output).
    pub text: String,
    /// The file read or the command run, for tool events.
    pub path: String,
}

/// `per_rule` secrets of every built-in rule, channels taken in turn.
pub fn build(seed: u64, per_rule: usize) -> Vec<Secret> {
    let mut rng = SplitMix::new(seed);
    let mut out = Vec::new();
    for rule in rules::builtin() {
        for _ in 0..per_rule {
            let case = out.len();
            let sample = expand(rule.sample, &mut rng);
            let channel = Channel::ALL[case % Channel::ALL.len()];
            let style = rng.below(1 << 16);
            let letters: String = (0..10)
                .map(|_| char::from(b'a' + rng.below(26) as u8))
                .collect();
            let nonce = format!("case-{case:04}-{letters}");
            let (text, path) = place(channel, &sample.text, &nonce, style);
            out.push(Secret {
                nonce,
                rule,
                sample,
                channel,
                text,
                path,
            });
        }
    }
    out
}

/// The event text (and file or command) carrying `secret` through
/// `channel`; `style` picks among the usual phrasings and file syntaxes.
fn place(channel: Channel, secret: &str, nonce: &str, style: usize) -> (String, String) {
    let wrapped = wrap(secret, style / 11);
    let secret = wrapped.as_str();
    match channel {
        Channel::Prompt | Channel::ImportTranscript => {
            let asks = [
                "I keep getting 401 from the API with this, can you see why?",
                "the deploy fails after I set this, any idea?",
                "here is what I have in my config:",
            ];
            // the first prompt of a session is its commit's subject line
            let text = match style % 4 {
                3 => format!("why does {secret} give me a 401? [{nonce}]\n"),
                n => format!("[{nonce}] {}\n{secret}\n", asks[n]),
            };
            (text, String::new())
        }
        Channel::BashOutput => {
            let (command, output) = match style % 3 {
                0 => (
                    "env | sort",
                    format!("HOME=/home/dev\n{secret}\nPATH=/usr/bin:/bin\n"),
                ),
                1 => (
                    "kubectl logs deploy/api --tail=3",
                    format!(
                        "2026-03-04T10:15:00Z INFO starting worker\n2026-03-04T10:15:01Z DEBUG config loaded: {secret}\n2026-03-04T10:15:02Z INFO ready\n"
                    ),
                ),
                _ => (
                    "cat .env",
                    format!("# local settings\n{secret}\nDEBUG=true\n"),
                ),
            };
            (
                format!("{output}# {nonce}\n"),
                format!("{command} # {nonce}"),
            )
        }
        Channel::FileRead => {
            let (path, content) = config_file(secret, style);
            (format!("{content}# {nonce}\n"), format!("{nonce}/{path}"))
        }
        Channel::Answer => (
            format!(
                "[{nonce}] Done. I put it in the environment:\n\n```\n{secret}\n```\n\nRestart the server to pick it up."
            ),
            String::new(),
        ),
        Channel::Note | Channel::ImportJsonl | Channel::Mcp => (
            format!(
                "[{nonce}] The staging service uses this credential:\n{secret}\nRotate it after the demo."
            ),
            String::new(),
        ),
    }
}

/// The secret as it sits in running text: alone, quoted, in backticks or
/// parentheses, ending a sentence, in a query string, a table, an escaped
/// JSON string, an attribute or a list. A multi-line secret stays as it is.
fn wrap(secret: &str, style: usize) -> String {
    if secret.contains('\n') {
        return secret.to_string();
    }
    match style % 10 {
        0 => secret.to_string(),
        1 => format!("{{\"value\": \"{secret}\"}}"),
        2 => format!("`{secret}`"),
        3 => format!("(got {secret})"),
        4 => format!("It is {secret}."),
        5 => format!("https://api.internal.net/v1/items?page=2&access={secret}&sort=asc"),
        6 => format!("| staging | {secret} | rotated |"),
        7 => format!("{{\"body\": \"{{\\\"cred\\\": \\\"{secret}\\\"}}\"}}"),
        8 => format!("<meta data-value=\"{secret}\">"),
        _ => format!("- {secret}\n- next"),
    }
}

/// A `KEY=value` sample's name and value.
fn env_pair(text: &str) -> Option<(&str, &str)> {
    let (key, value) = text.split_once('=')?;
    let named = key
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    (named && !text.contains('\n') && !value.is_empty()).then_some((key, value))
}

fn camel(key: &str) -> String {
    let mut out = String::new();
    for (i, word) in key.split('_').filter(|w| !w.is_empty()).enumerate() {
        let word = word.to_ascii_lowercase();
        if i == 0 {
            out.push_str(&word);
        } else {
            let mut chars = word.chars();
            if let Some(c) = chars.next() {
                out.push(c.to_ascii_uppercase());
                out.extend(chars);
            }
        }
    }
    out
}

/// A config file holding the secret, in one of the syntaxes agents read:
/// a `KEY=value` sample is written in that syntax, anything else as it is.
fn config_file(secret: &str, style: usize) -> (String, String) {
    let Some((key, value)) = env_pair(secret) else {
        return (
            "notes/credentials.md".into(),
            format!("# Credentials\n\n{secret}\n"),
        );
    };
    let lower = key.to_ascii_lowercase();
    let camel = camel(key);
    let (path, content) = match style % 11 {
        0 => (".env", format!("APP_ENV=staging\n{key}={value}\n")),
        1 => (
            "config/app.yaml",
            format!("service:\n  name: api\n  {lower}: {value}\n"),
        ),
        2 => (
            "config/settings.json",
            format!("{{\n  \"name\": \"api\",\n  \"{camel}\": \"{value}\"\n}}\n"),
        ),
        3 => (
            "config/app.toml",
            format!("[service]\nname = \"api\"\n{lower} = \"{value}\"\n"),
        ),
        4 => (
            "web.config",
            format!("<appSettings>\n  <add key=\"{key}\" value=\"{value}\" />\n</appSettings>\n"),
        ),
        5 => (
            "internal/config/config.go",
            format!("func load() {{\n\t{camel} := \"{value}\"\n\tuse({camel})\n}}\n"),
        ),
        6 => (
            "Makefile",
            format!("{key} ?= {value}\n\ndeploy:\n\t./deploy.sh\n"),
        ),
        7 => (
            "config/services.php",
            format!("<?php\nreturn [\n    '{lower}' => '{value}',\n];\n"),
        ),
        8 => (
            "scripts/env.sh",
            format!("#!/bin/sh\nexport {key}=\"{value}\"\n"),
        ),
        9 => ("app.ini", format!("[service]\n{lower} = {value}\n")),
        _ => (
            "application.properties",
            format!("server.port=8080\n{}={value}\n", lower.replace('_', ".")),
        ),
    };
    (path.into(), content)
}
