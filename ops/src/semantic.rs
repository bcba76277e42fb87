//! Semantic search for the front-ends: loading the model named by
//! `.memlog.yaml`, bringing vectors up to date after indexing (with
//! progress on stderr), embedding a query (which model embeds it is the
//! search recipe's choice, [`crate::search`]), and saying whether vectors
//! are on. Hooks never come here: they
//! stay on full text and the warm path.

use std::io::IsTerminal;

use memlog_indexer::Projections;
use memlog_indexer::embed::{Embedder, INSTALL_HINT, ModelEmbedder, ModelFiles};
use memlog_indexer::embed_cache::EmbeddingCache;
use memlog_indexer::projection::index_dir;
use memlog_indexer::token_vectors::{self, TokenVectors};
use memlog_indexer::vectors::{CatchUpReport, catch_up};
use memlog_store::Repo;
use serde_json::{Value, json};

use crate::diag;
use crate::error::{Context, Result};

/// The embedding cache ([`memlog_store::Layout::embeddings_cache`]):
/// outside the index directory, so a rebuild keeps it.
pub fn cache_path(repo: &Repo) -> std::path::PathBuf {
    repo.layout().embeddings_cache()
}

/// Whether the configured model and runtime are there (and enabled).
pub fn model_available(repo: &Repo) -> bool {
    ModelFiles::resolve(&repo.config.embedding).available()
}

/// Loads the configured model; `Ok(None)` when it is not installed (or
/// disabled), an error when it is there but fails to load.
pub fn load_model(repo: &Repo) -> Result<Option<ModelEmbedder>> {
    load_model_as(repo, ModelEmbedder::load)
}

/// [`load_model`] for a process that keeps the model between uses (see
/// [`ModelEmbedder::load_kept`]).
pub fn load_model_kept(repo: &Repo) -> Result<Option<ModelEmbedder>> {
    load_model_as(repo, ModelEmbedder::load_kept)
}

fn load_model_as(
    repo: &Repo,
    load: fn(&ModelFiles, usize) -> memlog_indexer::Result<ModelEmbedder>,
) -> Result<Option<ModelEmbedder>> {
    if !model_available(repo) {
        return Ok(None);
    }
    let files = ModelFiles::resolve(&repo.config.embedding);
    load(&files, repo.config.embedding.batch_size)
        .map(Some)
        .context("loading the embedding model")
}

/// Embeds the events the vectors lack, with `embedder` if given (a warm
/// process keeps one), else loading the configured model. `Ok(None)` when
/// vectors are off or another process is catching up.
pub fn catch_up_vectors(
    repo: &Repo,
    embedder: Option<&mut dyn Embedder>,
    quiet: bool,
) -> Result<Option<CatchUpReport>> {
    let own_model = embedder.is_none();
    if own_model && model_available(repo) {
        // nothing to embed: the model's load (0.5 s, 280 MB) is not paid
        let files = ModelFiles::resolve(&repo.config.embedding);
        // (a check that cannot tell leaves it to the catch-up)
        if let Ok(Some(done)) =
            memlog_indexer::vectors::caught_up(&index_dir(repo), &files.model_name())
            && matches!(TokenVectors::for_model(&done.model), Ok(Some(_)))
        {
            return Ok(Some(done));
        }
    }
    let mut loaded;
    let embedder: &mut dyn Embedder = match embedder {
        Some(e) => e,
        None => match load_model(repo)? {
            Some(m) => {
                loaded = m;
                &mut loaded
            }
            None => return Ok(None),
        },
    };
    let bar = diag::ProgressBar::new(
        "embedding",
        "events",
        !quiet && std::io::stderr().is_terminal(),
    );
    let run = |embedder: &mut dyn Embedder| -> memlog_indexer::Result<_> {
        let mut cache = EmbeddingCache::open(&cache_path(repo))?;
        catch_up(
            &index_dir(repo),
            embedder,
            &mut cache,
            repo.config.embedding.batch_size,
            &mut |done, pending| bar.set(done, pending),
        )
    };
    let report = match run(embedder) {
        // the cache only saves embedding again: a damaged one (which failed
        // every index run, while doctor said nothing) starts afresh
        Err(memlog_indexer::Error::Corrupt { what, message })
            if std::path::Path::new(&what) == cache_path(repo) =>
        {
            diag::note(format_args!(
                "the embedding cache {what} is damaged ({message}): starting it afresh"
            ));
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{what}{suffix}"));
            }
            run(embedder)
        }
        other => other,
    };
    share_vectors(repo);
    let report = report?;
    if report.as_ref().is_some_and(|r| r.pending > 0) {
        bar.finish();
    }
    if own_model {
        ensure_token_vectors(repo, embedder.model_id(), quiet);
    }
    Ok(report)
}

/// Gives the vectors and the embedding cache a shared repository's modes:
/// their files are made with the umask's and SQLite's (0644), and the
/// other users of the group catch up on them too.
fn share_vectors(repo: &Repo) {
    let sharing = repo.sharing();
    if !sharing.is_shared() {
        return;
    }
    sharing.apply_tree(&memlog_store::IndexLayout::new(index_dir(repo)).vectors());
    for suffix in ["", "-wal", "-shm"] {
        let mut path = cache_path(repo).into_os_string();
        path.push(suffix);
        sharing.apply_tree(std::path::Path::new(&path));
    }
}

/// Distils the token-vector table of the model that makes the vectors when
/// there is none (once per model and machine, about a minute of CPU): a
/// hook then ranks with a vector of the prompt itself without loading the
/// model ([`memlog_indexer::token_vectors`]). Never fails the caller: a
/// tokenizer the table cannot follow leaves hooks on pseudo-relevance
/// feedback, which is said on stderr.
fn ensure_token_vectors(repo: &Repo, model_id: &str, quiet: bool) {
    if matches!(TokenVectors::for_model(model_id), Ok(Some(_))) {
        return;
    }
    let files = ModelFiles::resolve(&repo.config.embedding);
    let tty = !quiet && std::io::stderr().is_terminal();
    let result = token_vectors::distill(&files, model_id, |done, total| {
        if tty {
            diag::progress(format_args!(
                "distilling token vectors for hooks (once per model) {done}/{total}"
            ));
        }
    });
    if tty {
        diag::end_progress();
    }
    // said on a terminal only: `memlog doctor` names the table or why
    // there is none
    match result {
        Ok(Some(d)) if tty => diag::note(format_args!(
            "hooks now rank with the prompt's meaning: {} token vectors in {}",
            d.rows,
            d.path.display()
        )),
        Err(e) if tty => diag::note(format_args!("hooks rank without token vectors: {e}")),
        _ => {}
    }
}

/// The vector of `query` by `model`, or why not: a model other than
/// `vectors_model`, the one that made the vectors (their distances would
/// mean nothing), or a failure to embed.
pub fn embed_query(
    model: &mut ModelEmbedder,
    vectors_model: &str,
    query: &str,
) -> Result<Vec<f32>, String> {
    if model.model_id() != vectors_model {
        return Err(format!(
            "the vectors were made by {vectors_model} but the configured model is {}; run `memlog index`",
            model.model_id()
        ));
    }
    model
        .embed(&[query])
        .map_err(|e| e.to_string())?
        .pop()
        .ok_or_else(|| "the model returned no vector".to_string())
}

/// Why vectors are off, with how to turn them on.
pub fn off_reason(repo: &Repo) -> String {
    let files = ModelFiles::resolve(&repo.config.embedding);
    let missing = files.missing();
    if missing.is_empty() {
        "no vectors yet; run `memlog index`".to_string()
    } else {
        format!("{}; {INSTALL_HINT}", missing.join("; "))
    }
}

/// Vector status for `memlog doctor` and `memlog stats`.
pub fn status(repo: &Repo) -> Value {
    let files = ModelFiles::resolve(&repo.config.embedding);
    let missing = files.missing();
    let mut opened = Projections::open(repo).ok();
    let events_embeddable = opened
        .as_ref()
        .and_then(|p| memlog_indexer::vectors::embeddable_events(p).ok());
    let vectors = opened.as_mut().and_then(|p| {
        p.load_vectors_as(memlog_indexer::vectors::VectorAccess::Scan);
        p.take_vectors()
    });
    json!({
        "on": missing.is_empty() && vectors.is_some(),
        "model_installed": missing.is_empty(),
        // lossy: `json!` panics on a path that is not UTF-8 (a folder
        // named in another encoding)
        "model_dir": lossy(&files.model_dir),
        "runtime": lossy(&files.runtime),
        "missing": missing,
        "how_to_enable": if missing.is_empty() { Value::Null } else { Value::from(INSTALL_HINT) },
        "model": vectors.as_ref().map(|v| v.meta.model.clone()),
        "vectors": vectors.as_ref().map_or(0, |v| v.rows()),
        "embeddable_events": events_embeddable,
        "cache": lossy(&cache_path(repo)),
    })
}

fn lossy(path: &std::path::Path) -> String {
    path.to_string_lossy().into_owned()
}

/// One line for text output.
pub fn status_line(s: &Value) -> String {
    if s["on"].as_bool() == Some(true) {
        format!(
            "on ({} vectors of {} events, model {})",
            s["vectors"],
            s["embeddable_events"],
            s["model"].as_str().unwrap_or("?")
        )
    } else if s["model_installed"].as_bool() == Some(true) {
        // (a fresh clone after `memlog sync`: the next session's watcher
        // embeds it unasked, field test 9b)
        "not yet: the model is installed and nothing is embedded yet; the next session's \
         `memlog watch` embeds it, or `memlog index` does now"
            .to_string()
    } else {
        let missing: Vec<&str> = s["missing"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        format!(
            "off (full-text search only): {}; to turn them on, {INSTALL_HINT}",
            missing.join("; ")
        )
    }
}
