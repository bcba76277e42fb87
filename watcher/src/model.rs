//! The embedding model a `memlog watch` shares between its threads
//! ([`ModelSlot`]): the vector thread embeds new events with it, the warm
//! server the prompts and queries it is asked about.
//!
//! A watcher lives for as long as its sessions go on (and half an hour
//! after), one per repository: a laptop with a dozen repositories open
//! runs a dozen. The model is what weighs in each (190 MB resident with
//! it, 100 MB once let go), so a watcher lets it go after a while without a use
//! ([`MODEL_IDLE`] by default)
//! and loads it again when next needed: the vector thread waits for it,
//! the warm server answers without it meanwhile (as a hook alone would,
//! with the distilled prompt vector) and has it loaded in the background.
//! The model is loaded without ONNX Runtime's arena, and freed memory is
//! given back to the system after each catch-up, so a catch-up's large
//! batches do not stay resident.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use memlog_indexer::embed::{Embedder, ModelEmbedder};
use memlog_ops::{diag, semantic, workspace};

use crate::Result;
use crate::warm::Activity;

/// How long a watcher keeps the model without a use, by default: longer
/// than the pause between most prompts of a session, far shorter than the
/// watcher's own idle exit (`memlog watch --model-idle`).
pub const MODEL_IDLE: Duration = Duration::from_secs(5 * 60);

/// The model of a watcher, loaded or let go; shared through an [`Arc`].
pub struct ModelSlot {
    repo_dir: PathBuf,
    model: Mutex<Option<ModelEmbedder>>,
    /// The model's id and dimensions, known from its first load: a catch-up
    /// with nothing to embed needs them, not the model.
    identity: (String, usize),
    used: Activity,
    idle: Duration,
    loading: AtomicBool,
}

impl ModelSlot {
    /// The slot of the repository containing `dir`, with the model
    /// loaded, let go after `idle` without a use; `None` (said on stderr)
    /// when semantic search is off there.
    pub fn load(dir: &Path, idle: Duration) -> Result<Option<Arc<ModelSlot>>> {
        let repo = workspace::open(dir)?;
        let Some(model) = load_or_say(&repo) else {
            return Ok(None);
        };
        Ok(Some(Arc::new(ModelSlot {
            repo_dir: dir.to_path_buf(),
            identity: (model.model_id().to_string(), model.dim()),
            model: Mutex::new(Some(model)),
            used: Activity::default(),
            idle,
            loading: AtomicBool::new(false),
        })))
    }

    /// Runs `f` on the model, loading it first if it was let go (for the
    /// vector thread, which may wait). `None` when it cannot be loaded.
    pub fn with_loaded<R>(&self, f: impl FnOnce(&mut ModelEmbedder) -> R) -> Option<R> {
        let mut slot = self.model.lock().ok()?;
        if slot.is_none() {
            *slot = workspace::open(&self.repo_dir)
                .ok()
                .and_then(|repo| load_or_say(&repo));
            if slot.is_some() {
                diag::note("embedding model loaded again");
            }
        }
        self.used.touch();
        slot.as_mut().map(f)
    }

    /// The model as an [`Embedder`] that loads it only when a text is to
    /// be embedded: a catch-up that finds everything embedded (most index
    /// runs: a seal with its vectors cached, a forget) leaves a model
    /// that was let go unloaded.
    pub fn on_demand(&self) -> OnDemand<'_> {
        OnDemand(self)
    }

    /// Runs `f` on the model if it is loaded and free at once; else `None`
    /// (the caller does without, as a hook alone would), and a model let
    /// go starts loading in the background for the next request.
    pub fn with_ready<R>(self: &Arc<Self>, f: impl FnOnce(&mut ModelEmbedder) -> R) -> Option<R> {
        let mut slot = self.model.try_lock().ok()?;
        match slot.as_mut() {
            Some(model) => {
                self.used.touch();
                Some(f(model))
            }
            None => {
                drop(slot);
                self.load_in_background();
                None
            }
        }
    }

    fn load_in_background(self: &Arc<Self>) {
        if self.loading.swap(true, Ordering::AcqRel) {
            return;
        }
        let slot = Arc::clone(self);
        std::thread::spawn(move || {
            slot.with_loaded(|_| ());
            slot.loading.store(false, Ordering::Release);
        });
    }

    /// Lets the model go when it has not been used for its idle time,
    /// and gives what was freed back to the system.
    pub fn release_if_idle(&self) {
        if self.used.idle() < self.idle {
            return;
        }
        let Ok(mut slot) = self.model.try_lock() else {
            return;
        };
        if slot.take().is_some() {
            drop(slot);
            give_back_free_memory();
            diag::note(format_args!(
                "embedding model let go after {} s without a use (loaded again when needed)",
                self.idle.as_secs()
            ));
        }
    }

    /// How often an idle holder looks whether to let the model go.
    pub fn release_check(&self) -> Duration {
        self.idle
            .clamp(Duration::from_secs(1), Duration::from_secs(30))
    }
}

/// [`ModelSlot::on_demand`].
pub struct OnDemand<'s>(&'s ModelSlot);

impl Embedder for OnDemand<'_> {
    fn model_id(&self) -> &str {
        &self.0.identity.0
    }

    fn dim(&self) -> usize {
        self.0.identity.1
    }

    fn embed(&mut self, texts: &[&str]) -> memlog_indexer::Result<Vec<Vec<f32>>> {
        let identity = &self.0.identity;
        self.0
            .with_loaded(|model| {
                if (model.model_id(), model.dim()) != (identity.0.as_str(), identity.1) {
                    // the files changed under a running watcher: its
                    // vectors would mix two models
                    return Err(memlog_indexer::Error::Model(format!(
                        "the model changed while `memlog watch` ran ({} is now {}): restart it",
                        identity.0,
                        model.model_id()
                    )));
                }
                model.embed(texts)
            })
            .unwrap_or_else(|| {
                Err(memlog_indexer::Error::Model(
                    "the embedding model could not be loaded again".into(),
                ))
            })
    }
}

fn load_or_say(repo: &memlog_store::Repo) -> Option<ModelEmbedder> {
    match semantic::load_model_kept(repo) {
        Ok(Some(m)) => Some(m),
        Ok(None) => {
            diag::note(format_args!(
                "semantic search is off: {}",
                semantic::off_reason(repo)
            ));
            None
        }
        Err(e) => {
            diag::warning(format_args!(
                "semantic search is off: {}",
                memlog_ops::error::chain(&e)
            ));
            None
        }
    }
}

/// Has the allocator map every large block on its own, so that freeing it
/// gives it back at once: glibc otherwise raises its threshold after the
/// first large free and serves the next ones from heaps it keeps (the
/// model's buffers stayed resident after the model was let go).
pub fn map_large_blocks() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a tuning parameter of the allocator.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 256 * 1024);
    }
}

/// Returns the allocator's free memory to the system. glibc's malloc keeps
/// what a thread freed in that thread's arena, and ONNX Runtime's worker
/// threads free hundreds of megabytes after a batch: without this, a
/// watcher that embedded once stays that large for as long as it runs.
pub fn give_back_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free pages of the allocator's
    // heaps; it touches no memory in use and is safe from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}
