//! One-shot hybrid `memlog search` with the model installed (`--one-shot`):
//! whole process, on 20k events of the bench's corpus with the real
//! model's vectors, when no `memlog watch` runs (the query's vector from
//! the distilled token table, as the prompt hook's) and when one does (its
//! loaded model embeds the query); beside them, `--mode vector`, which
//! still loads the model in the process, as every hybrid search did. The
//! embeddings are kept in `cache` across runs (the first run embeds about
//! 12k short texts).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, bail};
use memlog_indexer::embed::ModelFiles;

use crate::lean::{p50_p95, time_process};
use crate::{Corpus, Row, run, size_label};

/// Queries timed in each setting, after one pass that warms the page cache.
const QUERIES: usize = 50;
/// Runs of `--mode vector` (half a second each).
const MODEL_RUNS: usize = 5;

pub fn bench(
    bin: &Path,
    seed: u64,
    events: usize,
    cache: &Path,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    let label = size_label(events);
    let name = |how: &str| {
        format!(
            "one-shot hybrid `memlog search`, whole process, {label} events with MiniLM vectors, {how}"
        )
    };
    if !ModelFiles::resolve(&Default::default()).available() {
        rows.push(Row {
            name: name("no warm process"),
            value: "skipped: the model is not installed (scripts/install-assets)".into(),
            target: "p50 ≤ 50 ms".into(),
        });
        return Ok(());
    }
    let repo = crate::imported_corpus(bin, Corpus::Bench, seed, events)?;
    let dir = repo.path();
    // embedding on: the default configuration
    std::fs::remove_file(dir.join(".memlog.yaml"))?;
    let kept = memlog_store::Repo::discover(dir)?
        .layout()
        .embeddings_cache();
    if cache.exists() {
        std::fs::copy(cache, &kept).context("copying the kept embeddings")?;
    }
    eprintln!("embedding {label} events for the one-shot search rows (kept for later runs)");
    let took = run(bin, dir, &["index"])?;
    eprintln!("indexed in {:.0} s", took.as_secs_f64());
    std::fs::copy(&kept, cache).context("keeping the embeddings")?;

    let queries = crate::generator::queries(seed, QUERIES);
    let check = Command::new(bin)
        .current_dir(dir)
        .args(["search", "--json", &queries[0]])
        .output()?;
    let found: serde_json::Value = serde_json::from_slice(&check.stdout)?;
    if found["semantic"] != true {
        bail!("a one-shot hybrid search did not rank by meaning: {found}");
    }
    let time_all = |extra: &[&str]| -> anyhow::Result<Vec<Duration>> {
        let mut times = Vec::new();
        for pass in 0..2 {
            for q in &queries {
                let t = time_process(
                    Command::new(bin)
                        .args(["search", q, "-n", "10"])
                        .args(extra)
                        .current_dir(dir),
                    None,
                )?;
                if pass == 1 {
                    times.push(t);
                }
            }
        }
        Ok(times)
    };
    let distilled = time_all(&[])?;
    let mut model = Vec::new();
    for q in queries.iter().take(MODEL_RUNS) {
        model.push(time_process(
            Command::new(bin)
                .args(["search", q, "-n", "10", "--mode", "vector"])
                .current_dir(dir),
            None,
        )?);
    }
    let mut watch = crate::start_watch(bin, dir)?;
    let warm = time_all(&[]);
    let _ = watch.kill();
    let _ = watch.wait();
    let warm = warm?;
    rows.push(Row {
        name: name("no warm process: the distilled query vector"),
        value: p50_p95(&distilled),
        target: "p50 ≤ 50 ms".into(),
    });
    rows.push(Row {
        name: name("`memlog watch` running: its model embeds the query"),
        value: p50_p95(&warm),
        target: "p50 ≤ 50 ms".into(),
    });
    rows.push(Row {
        name: name(&format!(
            "`--mode vector`, the model loaded in the process ({MODEL_RUNS} runs)"
        )),
        value: p50_p95(&model),
        target: "(what every one-shot hybrid search cost before)".into(),
    });
    Ok(())
}
