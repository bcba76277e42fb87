//! Vector figures: embedding throughput of the real model by batch size
//! (memlog's cached path against a bare fastembed loop), then, with the
//! deterministic stand-in embedder at 100k (or 1M) events: building the
//! vector projection with a cold and a warm cache, HNSW recall@10 against
//! exact search, hybrid search latency in-process, index size and RSS.

use std::path::Path;
use std::time::{Duration, Instant};

use memlog_indexer::Projections;
use memlog_indexer::embed::{Embedder, HashEmbedder, ModelEmbedder, ModelFiles, clip};
use memlog_indexer::embed_cache::EmbeddingCache;
use memlog_indexer::search::{SearchMode, SearchRequest};
use memlog_indexer::vectors::{VectorAccess, catch_up};
use memlog_store::Repo;

use crate::search::{dir_size, timed_search};
use crate::{Row, generator, ms, percentile, run};

/// Texts for the throughput runs: prompts and answers of the generator.
fn sample_texts(seed: u64, n: usize) -> Vec<String> {
    let corpus = generator::corpus(seed, n.div_ceil(20), 40);
    corpus
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| matches!(v["kind"].as_str(), Some("user_prompt" | "agent_response")))
        .filter_map(|v| v["text"].as_str().map(|t| clip(t).to_string()))
        .take(n)
        .collect()
}

/// Texts per second of the real model, memlog's path and bare fastembed,
/// at batch 16 (for the extrapolation); `None` without the model.
pub fn throughput(seed: u64, rows: &mut Vec<Row>) -> anyhow::Result<Option<f64>> {
    let files = ModelFiles::resolve(&Default::default());
    if !files.available() {
        eprintln!("embedding model not installed (scripts/install-assets): throughput skipped");
        return Ok(None);
    }
    // the cap is above every batch measured: the cache's chunks decide
    let mut model = ModelEmbedder::load(&files, 64)?;
    let texts = sample_texts(seed, 160);
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let mut at16 = None;
    for batch in [1usize, 8, 16, 32] {
        // alternated and repeated, best of three each: the machine is shared
        let (mut bare, mut ours) = (0f64, 0f64);
        for _ in 0..3 {
            let t = Instant::now();
            model
                .fastembed()
                .embed(&refs, Some(batch))
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            bare = bare.max(refs.len() as f64 / t.elapsed().as_secs_f64());
            let dir = tempfile::tempdir()?;
            let mut cache = EmbeddingCache::open(&dir.path().join("e.sqlite"))?;
            let t = Instant::now();
            cache.embed(&mut model, &refs, batch)?;
            ours = ours.max(refs.len() as f64 / t.elapsed().as_secs_f64());
        }
        if batch == 16 {
            at16 = Some(ours);
        }
        rows.push(Row {
            name: format!(
                "embedding throughput, MiniLM int8, batch {batch} ({} texts)",
                refs.len()
            ),
            value: format!(
                "{ours:.1} texts/s through the cache; bare fastembed {bare:.1} texts/s ({:+.0}%)",
                (ours / bare - 1.0) * 100.0
            ),
            target: "within 10% of bare fastembed".into(),
        });
    }
    Ok(at16)
}

/// HNSW recall@10 on real MiniLM vectors: `n` generator texts embedded by
/// the model into a vector projection of their own (past the exact tail, so
/// the graph answers), queried with the embedded generator queries. The
/// embeddings are kept in `cache` across runs: the first run embeds them
/// (about 6 minutes for 20k texts here).
pub fn real_recall(seed: u64, n: usize, cache: &Path, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    let files = ModelFiles::resolve(&Default::default());
    if !files.available() {
        return Ok(());
    }
    let mut model = ModelEmbedder::load(&files, 32)?;
    let dir = tempfile::tempdir()?;
    let db = rusqlite::Connection::open(dir.path().join("graph.sqlite"))?;
    db.execute_batch(
        "CREATE TABLE events (key INTEGER NOT NULL, kind TEXT NOT NULL, text TEXT NOT NULL)",
    )?;
    let tx = db.unchecked_transaction()?;
    for (i, text) in sample_texts(seed, n).iter().enumerate() {
        tx.execute(
            "INSERT INTO events(key, kind, text) VALUES (?1, 'note', ?2)",
            rusqlite::params![i as i64 + 1, text],
        )?;
    }
    tx.commit()?;
    let mut cache = EmbeddingCache::open(cache)?;
    let t = Instant::now();
    let report = catch_up(dir.path(), &mut model, &mut cache, 32, &mut |done, all| {
        if done % 2048 < 256 {
            eprint!("\rembedding for the recall run: {done}/{all}");
        }
    })?
    .ok_or_else(|| anyhow::anyhow!("vectors were locked"))?;
    eprintln!();
    let took = t.elapsed();
    let index = memlog_indexer::vectors::VectorIndex::open(&dir.path().join("vectors"))?
        .ok_or_else(|| anyhow::anyhow!("no vector projection"))?;
    let queries = generator::queries(seed, 200);
    let refs: Vec<&str> = queries.iter().map(String::as_str).collect();
    let query_vectors = Embedder::embed(&mut model, &refs)?;
    let (found, wanted) = recall_at_10(&index, &query_vectors, None)?;
    // narrower graph searches, for choosing the breadth
    let narrower: Vec<String> = [25, 50, 100]
        .iter()
        .map(|&ef| {
            recall_at_10(&index, &query_vectors, Some(ef))
                .map(|(f, w)| format!("{:.3} at ef {ef}", f as f64 / w.max(1) as f64))
        })
        .collect::<anyhow::Result<_>>()?;
    rows.push(Row {
        name: format!(
            "HNSW recall@10 against exact search, {} MiniLM vectors, {} queries",
            report.rows,
            queries.len()
        ),
        value: format!(
            "{:.3} (vectors and graph {:.0} s, {} texts embedded, {} from the cache; {})",
            found as f64 / wanted.max(1) as f64,
            took.as_secs_f64(),
            report.embedded,
            report.cached,
            narrower.join(", ")
        ),
        target: "≥ 0.95".into(),
    });
    Ok(())
}

/// Hits of the graph among the exact top 10 (a hit tied with the exact
/// 10th counts), and how many were wanted.
fn recall_at_10(
    index: &memlog_indexer::vectors::VectorIndex,
    queries: &[Vec<f32>],
    breadth: Option<usize>,
) -> anyhow::Result<(usize, usize)> {
    let (mut found, mut wanted) = (0, 0);
    for v in queries {
        let exact = index.search_exact(v, 10)?;
        let kth = exact.last().map_or(f32::MIN, |h| h.cosine - 1e-6);
        let approx = match breadth {
            Some(ef) => index.search_with_breadth(v, 10, None, ef)?,
            None => index.search(v, 10, None)?,
        };
        wanted += exact.len();
        found += approx.iter().filter(|h| h.cosine >= kth).count();
    }
    Ok((found, wanted))
}

fn rss_kb(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

pub fn scale(
    bin: &Path,
    seed: u64,
    events: usize,
    model_rate: Option<f64>,
    fresh_too: bool,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    let label = crate::size_label(events);
    let repo_dir = crate::imported_repo(bin, seed, events)?;
    run(bin, repo_dir.path(), &["index", "--no-vectors"])?;
    let repo = Repo::discover(repo_dir.path())?;
    let index_dir = memlog_indexer::projection::index_dir(&repo);
    let cache_dir = tempfile::tempdir()?;
    let mut cache = EmbeddingCache::open(&cache_dir.path().join("e.sqlite"))?;
    let mut stand_in = HashEmbedder::new(384);

    let t = Instant::now();
    let cold = catch_up(&index_dir, &mut stand_in, &mut cache, 64, &mut |_, _| {})?
        .ok_or_else(|| anyhow::anyhow!("vectors were locked"))?;
    let cold_time = t.elapsed();
    rows.push(Row {
        name: format!(
            "vectors of {label} events ({} embeddable), stand-in embedder, cold cache",
            cold.pending
        ),
        value: format!(
            "{:.1} s ({} embedded; HNSW build included)",
            cold_time.as_secs_f64(),
            cold.embedded
        ),
        target: "—".into(),
    });

    // `memlog rebuild`: full text and graph derived again, vectors kept
    // after checking each row against the rebuilt events.
    let t = Instant::now();
    Projections::rebuild(&repo)?;
    let indexed = t.elapsed();
    let warm = catch_up(&index_dir, &mut stand_in, &mut cache, 64, &mut |_, _| {})?
        .ok_or_else(|| anyhow::anyhow!("vectors were locked"))?;
    let warm_time = t.elapsed();
    rows.push(Row {
        name: format!("`memlog rebuild` of {label} events with vectors, warm"),
        value: format!(
            "{:.2} s: full text and graph {:.2} s, vectors {:.2} s ({} kept, {} embedded)",
            warm_time.as_secs_f64(),
            indexed.as_secs_f64(),
            (warm_time - indexed).as_secs_f64(),
            warm.kept,
            warm.embedded
        ),
        target: "0 embedded, at full-text speed".into(),
    });
    // (at 1M, laying the graph out again is the cold figure once more)
    if fresh_too {
        std::fs::remove_dir_all(index_dir.join("vectors"))?;
        let t = Instant::now();
        let fresh = catch_up(&index_dir, &mut stand_in, &mut cache, 64, &mut |_, _| {})?
            .ok_or_else(|| anyhow::anyhow!("vectors were locked"))?;
        rows.push(Row {
            name: format!("vectors of {label} events made again (`rebuild --fresh-vectors`)"),
            value: format!(
                "{:.1} s ({} embedded, {} from the cache; the HNSW build is the time)",
                t.elapsed().as_secs_f64(),
                fresh.embedded,
                fresh.cached
            ),
            target: "0 embedded".into(),
        });
    }
    if let Some(rate) = model_rate {
        rows.push(Row {
            name: format!("cold vectors of {label} events with MiniLM (extrapolated)"),
            value: format!(
                "≈ {:.0} min ({} texts at {rate:.0} texts/s); warm as above",
                cold.embedded as f64 / rate / 60.0,
                cold.embedded
            ),
            target: "—".into(),
        });
    }

    let rss_before = rss_kb("VmRSS:");
    let mut p = Projections::open(&repo)?;
    let t = Instant::now();
    p.load_vectors();
    let load_time = t.elapsed();
    let rss_open = rss_kb("VmRSS:");
    let index = p
        .vectors()
        .ok_or_else(|| anyhow::anyhow!("no vector projection"))?;
    let queries = generator::queries(seed, 200);
    let vectors: Vec<Vec<f32>> = queries.iter().map(|q| stand_in.vector(q)).collect();
    let (found, wanted) = recall_at_10(index, &vectors, None)?;
    let hybrid = |p: &Projections, q: &str, v: &[f32]| {
        timed_search(
            p,
            &repo,
            SearchRequest {
                query: q.to_string(),
                limit: 10,
                mode: SearchMode::Hybrid,
                query_vector: Some(v.to_vec()),
                ..Default::default()
            },
        )
    };
    let mut times: Vec<Duration> = Vec::new();
    for (q, v) in queries.iter().zip(&vectors) {
        times.push(hybrid(&p, q, v)?);
    }
    // what one `memlog search` does: no graph, every row scanned
    let mut scanning = Projections::open(&repo)?;
    scanning.load_vectors_as(VectorAccess::Scan);
    let mut scan_times: Vec<Duration> = Vec::new();
    for (q, v) in queries.iter().zip(&vectors).take(40) {
        scan_times.push(hybrid(&scanning, q, v)?);
    }
    rows.push(Row {
        name: format!("HNSW recall@10 against exact search, {label} stand-in vectors"),
        value: format!("{:.3}", found as f64 / wanted.max(1) as f64),
        target: "— (real vectors: above)".into(),
    });
    rows.push(Row {
        name: format!("hybrid search in-process, {label} events, p50 / p95"),
        value: format!(
            "{} / {}",
            ms(percentile(&mut times, 0.5)),
            ms(percentile(&mut times, 0.95))
        ),
        target: "≤ 15 ms at 1M".into(),
    });
    rows.push(Row {
        name: format!("loading the HNSW graph, {label} events (once per `memlog mcp` / `serve`)"),
        value: format!("{:.2} s", load_time.as_secs_f64()),
        target: "—".into(),
    });
    rows.push(Row {
        name: format!(
            "hybrid search scanning every vector (one `memlog search`), {label} events, p50 / p95"
        ),
        value: format!(
            "{} / {}",
            ms(percentile(&mut scan_times, 0.5)),
            ms(percentile(&mut scan_times, 0.95))
        ),
        target: "—".into(),
    });
    rows.push(Row {
        name: format!("vector projection size, {label} events"),
        value: format!(
            "{:.1} MB on disk; opening it adds {:.0} MB RSS (peak RSS of the bench {:.0} MB)",
            dir_size(&index_dir.join("vectors")) as f64 / 1e6,
            rss_open.saturating_sub(rss_before) as f64 / 1024.0,
            rss_kb("VmHWM:") as f64 / 1024.0
        ),
        target: "—".into(),
    });
    Ok(())
}
