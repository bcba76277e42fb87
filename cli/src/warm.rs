//! The warm path for hooks: a long-running `memlog watch` keeps the
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

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::time::Duration;

use memlog_indexer::Projections;
use memlog_indexer::context::Assembled;
use memlog_store::Repo;
use serde::{Deserialize, Serialize};

/// What a hook asks for.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ContextRequest {
    /// `SessionStart` (a briefing) or `UserPromptSubmit` (memories for the prompt).
    pub event: String,
    pub prompt: String,
    pub session: String,
}

/// A request for a query's embedding.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct EmbedRequest {
    embed: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct EmbedResponse {
    model: String,
    vector: Vec<f32>,
}

/// The model a warm server shares between its threads.
pub type SharedEmbedder = std::sync::Arc<std::sync::Mutex<memlog_indexer::embed::ModelEmbedder>>;

/// The socket of a repository's warm server.
pub fn socket_path(repo: &Repo) -> PathBuf {
    repo.memlog_dir.join("warm.sock")
}

/// Asks a running warm server; `None` when there is none or it does not
/// answer within `timeout`.
pub fn ask(repo: &Repo, request: &ContextRequest, timeout: Duration) -> Option<Assembled> {
    exchange(repo, request, timeout)
}

/// A query's embedding from a warm server that holds the model: its model
/// id and the vector; `None` when there is no such server.
pub fn ask_embedding(repo: &Repo, text: &str) -> Option<(String, Vec<f32>)> {
    let request = EmbedRequest {
        embed: text.to_string(),
    };
    let r: EmbedResponse = exchange(repo, &request, Duration::from_secs(5))?;
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

/// Serves context requests for as long as the process runs (the caller
/// gives it a thread of its own). `answer` computes a response from the
/// warm projections, reopened when a rebuild replaced the index directory.
#[cfg(unix)]
pub fn serve(
    repo: &Repo,
    embedder: Option<SharedEmbedder>,
    answer: impl Fn(&Repo, &Projections, &ContextRequest) -> anyhow::Result<Assembled>,
) -> anyhow::Result<()> {
    use memlog_indexer::embed::Embedder;
    use std::os::unix::net::{UnixListener, UnixStream};
    let path = socket_path(repo);
    // A socket file left by a killed server: nobody answers on it.
    if path.exists() && UnixStream::connect(&path).is_err() {
        let _ = std::fs::remove_file(&path);
    }
    let listener = UnixListener::bind(&path)?;
    let mut warm: Option<(Projections, u64)> = None;
    // Blocking accept: an idle server costs nothing.
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
        let identity = index_identity(repo);
        if warm.as_ref().is_none_or(|(_, id)| *id != identity) {
            warm = Projections::open(repo).ok().map(|p| (p, identity));
        }
        let mut reader = BufReader::new(&stream);
        let mut line = String::new();
        if reader.read_line(&mut line).is_err() {
            continue;
        }
        if let Ok(req) = serde_json::from_str::<EmbedRequest>(&line) {
            let response = embedder
                .as_ref()
                .and_then(|e| e.lock().ok())
                .and_then(|mut e| {
                    let model = e.model_id().to_string();
                    e.embed(&[req.embed.as_str()])
                        .ok()
                        .and_then(|mut v| v.pop())
                        .map(|vector| EmbedResponse { model, vector })
                })
                .unwrap_or(EmbedResponse {
                    model: String::new(),
                    vector: Vec::new(),
                });
            let mut out = serde_json::to_string(&response)?;
            out.push('\n');
            let mut writer = &stream;
            let _ = writer.write_all(out.as_bytes());
            continue;
        }
        let response = match (serde_json::from_str::<ContextRequest>(&line), &warm) {
            (Ok(req), Some((p, _))) => answer(repo, p, &req).unwrap_or_default(),
            _ => Assembled::default(),
        };
        let mut out = serde_json::to_string(&response)?;
        out.push('\n');
        let mut writer = &stream;
        let _ = writer.write_all(out.as_bytes());
    }
    Ok(())
}

#[cfg(not(unix))]
pub fn serve(
    _: &Repo,
    _: Option<SharedEmbedder>,
    _: impl Fn(&Repo, &Projections, &ContextRequest) -> anyhow::Result<Assembled>,
) -> anyhow::Result<()> {
    Ok(())
}

/// Identity of the current index directory's database file (its inode),
/// which a rebuild replaces.
fn index_identity(repo: &Repo) -> u64 {
    let db = memlog_indexer::projection::index_dir(repo).join("graph.sqlite");
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(db).map(|m| m.ino()).unwrap_or(0)
    }
    #[cfg(not(unix))]
    {
        let _ = db;
        0
    }
}
