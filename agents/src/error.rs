use std::path::PathBuf;

impl Error {
    /// A payload that did not parse as JSON (`bytes` long), described
    /// without its content.
    pub fn malformed_payload(event: &str, bytes: usize, e: &serde_json::Error) -> Error {
        use serde_json::error::Category;
        Error::MalformedPayload {
            event: event.to_string(),
            bytes,
            problem: match e.classify() {
                Category::Eof => "it ends early",
                Category::Syntax => "a syntax error",
                Category::Data => "a value it cannot hold",
                Category::Io => "a read error",
            },
            line: e.line(),
            column: e.column(),
        }
    }
}

/// What can go wrong in this crate. Everything else (unknown hook events,
/// payloads of an unexpected shape, odd transcript lines) is data, not an
/// error: it is recorded or counted, never dropped silently.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The hook's stdin is not JSON at all. The message says where it
    /// stops parsing and never quotes it: it goes to `hooks.log`, and a
    /// payload carries prompts and tool output.
    #[error(
        "the {event} hook payload ({bytes} bytes) is not valid JSON: {problem} at line {line}, column {column}"
    )]
    MalformedPayload {
        /// The hook name the caller gave (the CLI argument).
        event: String,
        /// The payload's size.
        bytes: usize,
        /// What kind of problem: a syntax error, or input ending early.
        problem: &'static str,
        /// Where parsing stopped.
        line: usize,
        /// Where parsing stopped.
        column: usize,
    },

    /// A hook name that is not one of [`crate::HookEvent`]'s.
    #[error("unknown hook event {name:?}; known events: {known}")]
    UnknownHookEvent {
        /// The name given.
        name: String,
        /// The names memlog knows, for the message.
        known: String,
    },

    /// HOME is not set, and the agent keeps its files under it.
    #[error("HOME is not set")]
    NoHome,

    /// The folder an agent keeps its sessions in does not exist.
    #[error("no {what} at {} (give {noun} paths)", path.display())]
    NoSessions {
        /// What is missing: `Codex sessions`.
        what: &'static str,
        /// Where they were looked for.
        path: PathBuf,
        /// What to give instead: `session`.
        noun: &'static str,
    },

    /// A settings scope the agent does not have.
    #[error("{agent} has no {scope} settings")]
    NoScope {
        /// The agent.
        agent: &'static str,
        /// The scope asked for.
        scope: &'static str,
    },

    /// An agent's settings file memlog cannot edit without losing what is
    /// in it.
    #[error("{} {why}", path.display())]
    BadSettings {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },

    /// A file or folder (a transcript, a session folder) could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// The result of reading a payload or session file.
pub type Result<T, E = Error> = std::result::Result<T, E>;
