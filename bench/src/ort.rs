//! Embedding throughput against the model's own speed: memlog's path
//! (the embedding cache, batches of texts of similar length, memlog's
//! tokenizer and pooling) and ONNX Runtime's Python session running the
//! same model file on the same texts' token ids with the same thread count
//! and batch size (`bench/ort_session.py`), alternated in one run; beside
//! them, fastembed given the texts in the order they come, fenced blocks
//! uncut (what memlog did before it sorted batches and cut them).

use std::path::{Path, PathBuf};
use std::time::Instant;

use memlog_indexer::embed::{ModelEmbedder, ModelFiles, clip, dot};
use memlog_indexer::embed_cache::EmbeddingCache;

use crate::{Corpus, Row};

/// Texts embedded per round.
const TEXTS: usize = 384;
/// Rounds of each side, alternated.
const ROUNDS: usize = 3;
/// Texts fastembed embeds in arrival order, uncut, once: at about one text
/// a second, all of them in every round took the row a quarter of an hour.
const ARRIVAL_TEXTS: usize = 64;

/// The Python of the bench's ONNX Runtime venv, if installed.
fn python() -> Option<PathBuf> {
    let venv = std::env::var_os("MEMLOG_ORT_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/py-ort"));
    let python = venv.join("bin/python");
    python.exists().then_some(python)
}

/// What memlog embeds of the realistic corpus: prompts, answers, notes and
/// facts (cut and clipped by memlog as it embeds them).
fn texts(seed: u64) -> Vec<String> {
    Corpus::Realistic
        .text(seed, TEXTS.div_ceil(20), 100)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| {
            v["kind"]
                .as_str()
                .is_some_and(memlog_indexer::derive::is_worth_embedding)
        })
        .filter_map(|v| v["text"].as_str().map(str::to_string))
        .take(TEXTS)
        .collect()
}

struct PythonRun {
    seconds: f64,
    first: Vec<Vec<f32>>,
}

fn python_round(
    python: &Path,
    model: &Path,
    threads: usize,
    batch: usize,
    ids: &[Vec<i64>],
) -> anyhow::Result<PythonRun> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("ort_session.py");
    let request = serde_json::json!({
        "model": model, "threads": threads, "batch": batch, "ids": ids,
    });
    let report = crate::python_json(python, &script, &request)?;
    let first = report["first"]
        .as_array()
        .map(|vs| {
            vs.iter()
                .map(|v| {
                    v.as_array()
                        .map(|xs| {
                            xs.iter()
                                .filter_map(|x| x.as_f64())
                                .map(|x| x as f32)
                                .collect()
                        })
                        .unwrap_or_default()
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(PythonRun {
        seconds: report["seconds"].as_f64().unwrap_or(f64::NAN),
        first,
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The rows; skipped (said in the row) without the model or the venv.
pub fn bench(seed: u64, batch: usize, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    let name = format!(
        "embedding throughput, MiniLM int8, {TEXTS} prompts, answers, notes and facts of realistic agent events, batch {batch}: memlog / ONNX Runtime's Python session (same model file, token ids, threads and batch; alternated, median of {ROUNDS})"
    );
    let target = "≥ 0.8× ONNX Runtime".to_string();
    let files = ModelFiles::resolve(&Default::default());
    if !files.available() {
        rows.push(Row {
            name,
            value: "skipped: the model is not installed (scripts/install-assets)".into(),
            target,
        });
        return Ok(());
    }
    let Some(python) = python() else {
        rows.push(Row {
            name,
            value:
                "skipped: ONNX Runtime for Python is not installed (scripts/install-assets --bench)"
                    .into(),
            target,
        });
        return Ok(());
    };
    let mut model = ModelEmbedder::load(&files, batch)?;
    let texts = texts(seed);
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let ids = model.token_ids(&refs)?;
    // what memlog gave the model before: clipped, uncut, in arrival order
    let clipped: Vec<&str> = refs.iter().take(ARRIVAL_TEXTS).map(|t| clip(t)).collect();
    let tokens: usize = ids.iter().map(Vec::len).sum();
    // what the model would read without the fenced blocks' cut
    let uncut: usize = refs
        .iter()
        .map(|t| {
            model
                .fastembed()
                .tokenizer
                .encode(clip(t), true)
                .map(|e| e.get_ids().len())
                .map_err(|e| anyhow::anyhow!("{e}"))
        })
        .sum::<anyhow::Result<usize>>()?;
    let model_file = files.model_dir.join("model.onnx");
    let (mut ours, mut theirs, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    let mut agreement = f32::INFINITY;
    for _ in 0..ROUNDS {
        let dir = tempfile::tempdir()?;
        let mut cache = EmbeddingCache::open(&dir.path().join("e.sqlite"))?;
        let t = Instant::now();
        let (vectors, _) = cache.embed(&mut model, &refs, batch)?;
        let mine = refs.len() as f64 / t.elapsed().as_secs_f64();
        let run = python_round(&python, &model_file, model.threads(), batch, &ids)?;
        let yours = refs.len() as f64 / run.seconds;
        for (a, b) in vectors.iter().zip(&run.first) {
            agreement = agreement.min(dot(a, b));
        }
        ours.push(mine);
        theirs.push(yours);
        ratios.push(mine / yours);
    }
    let t = Instant::now();
    model
        .fastembed()
        .embed(&clipped, Some(batch))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let arrival = clipped.len() as f64 / t.elapsed().as_secs_f64();
    rows.push(Row {
        name,
        value: format!(
            "{:.1} / {:.1} texts/s: **{:.2}×** ({} threads, {:.0} tokens a text, {:.0} before fenced blocks were cut; cosine of the two sides' vectors ≥ {agreement:.4}); fastembed in arrival order, uncut, {:.1} texts/s (the first {} texts, once)",
            median(ours),
            median(theirs),
            median(ratios),
            model.threads(),
            tokens as f64 / ids.len().max(1) as f64,
            uncut as f64 / ids.len().max(1) as f64,
            arrival,
            clipped.len(),
        ),
        target,
    });
    Ok(())
}
