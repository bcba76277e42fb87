//! The warm server (`memlog watch`), the server side of the warm path for hooks: a long-running `memlog watch` keeps the
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
use std::sync::Arc;
use std::time::Duration;

use memlog_indexer::Projections;
use memlog_indexer::projection::Reach;
use memlog_ops::context::answer;
use memlog_ops::warm::{ContextRequest, EmbedRequest, EmbedResponse, socket_path};

use crate::model::ModelSlot;
use crate::{Error, Result};
use memlog_store::Repo;

/// When a daemon was last of use (a request answered, an index run), for
/// `memlog watch --idle-exit`. Cheap to clone and share between threads.
#[derive(Clone, Debug)]
pub struct Activity {
    start: std::time::Instant,
    last_ms: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl Default for Activity {
    fn default() -> Self {
        Activity {
            start: std::time::Instant::now(),
            last_ms: Default::default(),
        }
    }
}

impl Activity {
    /// Notes a use now.
    pub fn touch(&self) {
        let now = self.start.elapsed().as_millis() as u64;
        self.last_ms
            .store(now, std::sync::atomic::Ordering::Relaxed);
    }

    /// Time since the last use (or the start).
    pub fn idle(&self) -> Duration {
        let last = self.last_ms.load(std::sync::atomic::Ordering::Relaxed);
        self.start
            .elapsed()
            .saturating_sub(Duration::from_millis(last))
    }
}

/// Serves context requests for as long as the process runs (the caller
/// gives it a thread of its own). [`answer`] computes a response from the
/// warm projections, reopened when a rebuild replaced the index directory.
#[cfg(unix)]
pub fn serve(repo: &Repo, embedder: Option<Arc<ModelSlot>>, activity: Activity) -> Result<()> {
    use memlog_indexer::embed::Embedder;
    use std::os::unix::net::{UnixListener, UnixStream};
    let path = socket_path(repo);
    // A socket file left by a killed server: nobody answers on it.
    if path.exists() && UnixStream::connect(&path).is_err() {
        let _ = std::fs::remove_file(&path);
    }
    let listener = UnixListener::bind(&path).map_err(|source| Error::Socket {
        path: path.clone(),
        source,
    })?;
    // the hooks of the whole group connect to it in a shared repository
    let _ = repo.sharing().apply(&path);
    let mut warm: Option<(Projections, u64)> = None;
    let build = memlog_ops::warm::build();
    // Blocking accept: an idle server costs nothing.
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        activity.touch();
        let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
        let identity = index_identity(repo);
        if warm
            .as_ref()
            .is_none_or(|(p, id)| *id != identity || !p.vectors_are_current())
        {
            // No index yet: the log is read past its (empty) watermark.
            warm = Projections::open(repo)
                .or_else(|_| Projections::empty())
                .ok()
                .map(|mut p| {
                    p.load_vectors();
                    (p, identity)
                });
        }
        let mut reader = BufReader::new(&stream);
        let mut line = String::new();
        if reader.read_line(&mut line).is_err() {
            continue;
        }
        if let Ok(req) = serde_json::from_str::<EmbedRequest>(&line) {
            // a model let go is not waited for: the client does without
            let response = embedder
                .as_ref()
                .and_then(|slot| {
                    slot.with_ready(|e| {
                        let model = e.model_id().to_string();
                        e.embed(&[req.embed.as_str()])
                            .ok()
                            .and_then(|mut v| v.pop())
                            .map(|vector| EmbedResponse {
                                model,
                                vector,
                                build: String::new(),
                            })
                    })
                })
                .flatten()
                .map(|r| EmbedResponse {
                    build: build.clone(),
                    ..r
                })
                .unwrap_or(EmbedResponse {
                    model: String::new(),
                    vector: Vec::new(),
                    build: build.clone(),
                });
            let Ok(mut out) = serde_json::to_string(&response) else {
                continue;
            };
            out.push('\n');
            let mut writer = &stream;
            let _ = writer.write_all(out.as_bytes());
            continue;
        }
        // Without an answer (no index open, a failed assembly) the reply
        // is one the client cannot read as context: the hook then
        // assembles it itself rather than taking "nothing relevant".
        let response = match (serde_json::from_str::<ContextRequest>(&line), &mut warm) {
            // a hook of another build ranks on its own (this index's
            // format may not be its)
            (Ok(req), _) if req.build != build => {
                Err(format!("this server is another build ({build})"))
            }
            (Ok(mut req), Some((p, _))) => {
                // What the watch loop has not indexed yet (a seal, a forget
                // a moment ago) holds in this answer already, read as a
                // hook alone would; failing to read it, the hook assembles
                // the context itself.
                let asking = Some(req.session.as_str());
                match p.read_unindexed(repo, Reach::Prompt { asking }) {
                    Ok(()) => {
                        if req.query_vector.is_none() && !req.prompt.is_empty() {
                            req.query_vector = embedder
                                .as_ref()
                                .and_then(|e| prompt_vector(e, p, &req.prompt));
                        }
                        answer(repo, p, &req)
                            .map_err(|e| e.to_string())
                            .and_then(|a| serde_json::to_value(&a).map_err(|e| e.to_string()))
                            .map(|mut a| {
                                if let Some(fields) = a.as_object_mut() {
                                    fields.insert("build".into(), build.clone().into());
                                }
                                a.to_string()
                            })
                    }
                    Err(e) => {
                        warm = None;
                        Err(format!("what the index lacks was not read: {e}"))
                    }
                }
            }
            (Ok(_), None) => Err("the index is not open".to_string()),
            (Err(e), _) => Err(format!("not a request: {e}")),
        };
        let mut out = response
            .unwrap_or_else(|e| serde_json::json!({ "error": e, "build": build }).to_string());
        out.push('\n');
        let mut writer = &stream;
        let _ = writer.write_all(out.as_bytes());
    }
    Ok(())
}

#[cfg(not(unix))]
pub fn serve(_: &Repo, _: Option<Arc<ModelSlot>>, _: Activity) -> Result<()> {
    Ok(())
}

/// The prompt's embedding when the model held is the one that made the
/// vectors and is loaded and free (else the context does without, as a
/// hook alone would: the vector thread holds the model while it embeds new
/// events, a model let go takes half a second to load, and a hook waiting
/// for either would miss its budget).
fn prompt_vector(embedder: &Arc<ModelSlot>, p: &Projections, prompt: &str) -> Option<Vec<f32>> {
    use memlog_indexer::embed::Embedder;
    let vectors = p.vectors()?;
    embedder
        .with_ready(|model| {
            if model.model_id() != vectors.meta.model {
                return None;
            }
            model.embed(&[prompt]).ok()?.pop()
        })
        .flatten()
}

/// Identity of the current index directory's database file (its inode),
/// which a rebuild replaces.
fn index_identity(repo: &Repo) -> u64 {
    let db = repo
        .layout()
        .index_dir()
        .join(memlog_store::layout::GRAPH_FILE);
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
