//! The warm path for hooks, client side: a long-running `memlog watch` keeps the
//! projections open and answers hooks' context requests over a Unix socket
//! (`<memlog dir>/warm.sock`), so a hook pays neither opening the indexes
//! nor, once vectors exist, loading an embedding model. A hook that finds
//! no listener, or no answer within its budget, assembles the context
//! itself (full-text and graph ranking alone).
//!
//! Protocol: one JSON request line, one JSON response line per connection.
//! A request is a [`ContextRequest`] or `{"embed": TEXT}`, answered with
//! `{"model": ID, "vector": [...]}` by a server that holds the model (so
//! `memlog search` and the MCP server need not load it per query).
//!
//! Both sides name their [`build`]: a server of another build (the memlog
//! of before an upgrade, still running) ranks with other code and rebuilds
//! the index to its own format, so its answers are not taken, and it is
//! stopped; the next SessionStart starts one of this build.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::time::Duration;

use memlog_indexer::context::Assembled;
use memlog_store::Repo;
use serde::{Deserialize, Serialize};

/// What a hook asks for.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ContextRequest {
    /// `SessionStart` (a briefing) or `UserPromptSubmit` (memories for the prompt).
    pub event: String,
    /// The prompt (empty at `SessionStart`).
    pub prompt: String,
    /// The session asking, left out of its own context.
    pub session: String,
    /// The prompt's embedding, by the model the vectors were made with:
    /// the server fills it in when it holds that model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query_vector: Option<Vec<f32>>,
    /// The asking program's [`build`].
    #[serde(default)]
    pub build: String,
}

/// This program's build, as the warm protocol names it: its version, the
/// index format it reads and writes, and the executable file (its size and
/// time: a reinstalled binary is another build, and a process whose file
/// was replaced has none).
pub fn build() -> String {
    let exe = std::env::current_exe()
        .and_then(std::fs::metadata)
        .ok()
        .map(|m| {
            let at = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            format!("{}:{at}", m.len())
        })
        .unwrap_or_default();
    format!(
        "{} {} {} {exe}",
        env!("CARGO_PKG_VERSION"),
        memlog_indexer::tokenizer::CODE,
        memlog_indexer::graph::SCHEMA_VERSION
    )
}

/// A request for a query's embedding.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EmbedRequest {
    /// The text to embed.
    pub embed: String,
}

/// The answer to an [`EmbedRequest`]: empty when the server has no model.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EmbedResponse {
    /// The model's id.
    pub model: String,
    /// The text's vector.
    pub vector: Vec<f32>,
    /// The server's [`build`].
    #[serde(default)]
    pub build: String,
}

/// The socket of a repository's warm server.
pub fn socket_path(repo: &Repo) -> PathBuf {
    repo.layout().warm_socket()
}

/// Whether a warm server listens on the repository's socket.
pub fn answers(repo: &Repo) -> bool {
    #[cfg(unix)]
    {
        std::os::unix::net::UnixStream::connect(socket_path(repo)).is_ok()
    }
    #[cfg(not(unix))]
    {
        let _ = repo;
        false
    }
}

/// The path a UserPromptSubmit hook would take now, and how it ranks:
/// `vectors_model` is the model that made the vectors, when there are any.
pub fn hook_path(repo: &Repo, vectors_model: Option<&str>) -> (&'static str, String) {
    let starts = match repo.config.hooks.warm_watcher_idle_minutes {
        0 => "run `memlog watch`, or set hooks.warm_watcher_idle_minutes to have SessionStart start one".to_string(),
        n => format!("SessionStart starts `memlog watch --idle-exit {n}`"),
    };
    // which process, so that a user can find it (and stop it)
    let watcher = std::fs::read_to_string(repo.layout().watch_lock())
        .ok()
        .map(|pid| pid.trim().to_string())
        .filter(|pid| !pid.is_empty())
        .map_or_else(
            || "`memlog watch`".to_string(),
            |pid| format!("`memlog watch` (pid {pid})"),
        );
    let listening = match server_build(repo) {
        Some(theirs) if theirs != build() => {
            return (
                "local",
                format!(
                    "{watcher} is another build's (memlog {}, from before an upgrade): its answers are not taken, and the next prompt hook stops it; until SessionStart starts one of this build, the hook ranks alone",
                    theirs.split(' ').next().unwrap_or("?")
                ),
            );
        }
        Some(_) => true,
        None => false,
    };
    match (listening, vectors_model) {
        (true, Some(_)) => (
            "warm",
            format!("{watcher} answers: hybrid ranking with the prompt's own embedding"),
        ),
        (true, None) => (
            "warm",
            format!("{watcher} answers from open indexes: full text (no vectors yet)"),
        ),
        (false, Some(model)) => {
            let table = memlog_indexer::token_vectors::path_for(model);
            let ranking = match memlog_indexer::token_vectors::TokenVectors::open(&table) {
                Ok(Some(_)) => format!(
                    "the hook ranks alone: full text, reranked by the prompt's vector from the distilled token table {} (no model loaded)",
                    table.display()
                ),
                Ok(None) => format!(
                    "the hook ranks alone: full text, reranked by the stored vectors of its best hits (no model loaded; `memlog index` distils the token table {} that lets it use the prompt's own vector)",
                    table.display()
                ),
                Err(e) => format!(
                    "the hook ranks alone: full text, reranked by the stored vectors of its best hits ({e}; delete it and run `memlog index`)"
                ),
            };
            (
                "local",
                format!("{ranking}; for the prompt's own embedding, {starts}"),
            )
        }
        (false, None) => (
            "local",
            format!("the hook ranks alone on full text; for the warm path, {starts}"),
        ),
    }
}

/// The build a listening warm server names, `None` when none answers. The
/// probe names no build, which every server refuses at once, naming its own.
pub fn server_build(repo: &Repo) -> Option<String> {
    let probe = ContextRequest {
        event: String::new(),
        prompt: String::new(),
        session: String::new(),
        query_vector: None,
        build: String::new(),
    };
    let answer: serde_json::Value = exchange(repo, &probe, Duration::from_secs(2))?;
    answer
        .get("build")
        .and_then(|b| b.as_str())
        .map(str::to_string)
}

/// Asks a running warm server; `None` when there is none or it does not
/// answer within `timeout`.
pub fn ask(repo: &Repo, request: &ContextRequest, timeout: Duration) -> Option<Assembled> {
    let mut answer: serde_json::Value = exchange(repo, request, timeout)?;
    if !of_this_build(repo, answer.get("build").and_then(|b| b.as_str())) {
        return None;
    }
    if let Some(fields) = answer.as_object_mut() {
        fields.remove("build");
    }
    serde_json::from_value(answer).ok()
}

/// Whether a server's answer comes from a server of this build; one of
/// another build is stopped.
fn of_this_build(repo: &Repo, theirs: Option<&str>) -> bool {
    if theirs == Some(build().as_str()) {
        return true;
    }
    stop_server(repo);
    false
}

/// Stops the repository's warm server (the `memlog watch` whose pid its
/// lock file holds), when that process is a `memlog watch` still.
fn stop_server(repo: &Repo) {
    let Some(pid) = std::fs::read_to_string(repo.layout().watch_lock())
        .ok()
        .and_then(|p| p.trim().parse::<i32>().ok())
        .filter(|p| *p > 1 && *p != std::process::id() as i32)
    else {
        return;
    };
    // a pid reused by another program is left alone
    let watching = std::fs::read(format!("/proc/{pid}/cmdline"))
        .is_ok_and(|c| c.split(|b| *b == 0).any(|arg| arg == b"watch"));
    #[cfg(unix)]
    if watching {
        // SAFETY: kill(2) with a pid and a signal number has no memory effects.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
    }
    #[cfg(not(unix))]
    let _ = watching;
}

/// A query's embedding from a warm server that holds the model: its model
/// id and the vector; `None` when there is no such server.
pub fn ask_embedding(repo: &Repo, text: &str) -> Option<(String, Vec<f32>)> {
    let request = EmbedRequest {
        embed: text.to_string(),
    };
    let r: EmbedResponse = exchange(repo, &request, Duration::from_secs(5))?;
    if !of_this_build(repo, Some(r.build.as_str())) {
        return None;
    }
    (!r.vector.is_empty()).then_some((r.model, r.vector))
}

#[cfg(unix)]
fn exchange<Q: Serialize, A: serde::de::DeserializeOwned>(
    repo: &Repo,
    request: &Q,
    timeout: Duration,
) -> Option<A> {
    use std::os::unix::net::UnixStream;
    let path = socket_path(repo);
    if !path.exists() || timeout.is_zero() {
        return None;
    }
    let mut stream = UnixStream::connect(&path).ok()?;
    stream.set_read_timeout(Some(timeout)).ok()?;
    stream.set_write_timeout(Some(timeout)).ok()?;
    let mut line = serde_json::to_string(request).ok()?;
    line.push('\n');
    stream.write_all(line.as_bytes()).ok()?;
    let mut reader = BufReader::new(stream);
    let mut answer = String::new();
    reader.read_line(&mut answer).ok()?;
    serde_json::from_str(&answer).ok()
}

#[cfg(not(unix))]
fn exchange<Q: Serialize, A: serde::de::DeserializeOwned>(
    _: &Repo,
    _: &Q,
    _: Duration,
) -> Option<A> {
    None
}
