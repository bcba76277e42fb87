//! Retrieval quality on the shared LoCoMo set (`../shared/eval/locomo-dev`):
//! each conversation is imported into a fresh memlog with the real `memlog`
//! binary (`import`, then `index`, which embeds), every question is searched
//! in its own conversation in each mode, and the shared scorer turns the
//! ranked evidence refs into recall@k, MRR@10 and nDCG@10. The set is read
//! where it is and never copied into the repository.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use memlog_format::config::Fusion;
use memlog_indexer::Projections;
use memlog_indexer::embed::{Embedder, ModelEmbedder, ModelFiles};
use memlog_indexer::embed_cache::EmbeddingCache;
use memlog_indexer::search::{SearchMode, SearchRequest, search};
use memlog_store::Repo;
use serde_json::Value;

use crate::{Row, git, run};

/// The set beside the repository, if present.
pub fn find_set() -> Option<PathBuf> {
    let here = std::env::current_dir().ok()?;
    here.ancestors()
        .map(|a| a.join("shared/eval/locomo-dev"))
        .chain(
            here.ancestors()
                .map(|a| a.join("../shared/eval/locomo-dev")),
        )
        .find(|p| p.join("queries.jsonl").is_file())
}

/// The runs compared: name, mode, fusion.
const RUNS: [(&str, SearchMode, Option<Fusion>); 4] = [
    ("fts", SearchMode::Fts, None),
    ("vector", SearchMode::Vector, None),
    ("hybrid", SearchMode::Hybrid, Some(Fusion::Weighted)),
    ("hybrid-rrf", SearchMode::Hybrid, Some(Fusion::Rrf)),
];

pub fn bench(
    bin: &Path,
    set: &Path,
    work: Option<&Path>,
    dump: Option<&Path>,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    let read = |name: &str| -> anyhow::Result<Vec<Value>> {
        let p = set.join(name);
        let text =
            std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))?;
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).context("a line of the set"))
            .collect()
    };
    let events = read("events.jsonl")?;
    let queries = read("queries.jsonl")?;
    let tmp;
    let work = match work {
        Some(w) => w.to_path_buf(),
        None => {
            tmp = tempfile::Builder::new()
                .prefix("memlog-locomo-")
                .tempdir()?;
            tmp.path().to_path_buf()
        }
    };
    std::fs::create_dir_all(&work)?;
    let files = ModelFiles::resolve(&Default::default());
    let mut model =
        ModelEmbedder::load(&files, 16).context("the LoCoMo evaluation needs the model")?;
    let mut query_cache = EmbeddingCache::open(&work.join("queries.sqlite"))?;

    let mut by_conv: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for e in &events {
        let conv = e["ref"]
            .as_str()
            .and_then(|r| r.split(':').next())
            .unwrap_or("");
        by_conv.entry(conv.to_string()).or_default().push(e);
    }
    let mut results: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut dump_lines: Vec<String> = Vec::new();
    for (conv, evs) in &by_conv {
        let dir = work.join(conv);
        if !dir.join(".git").exists() {
            std::fs::create_dir_all(&dir)?;
            git(&dir, &["init", "-q"])?;
            let mut f = std::fs::File::create(dir.join("events.jsonl"))?;
            for e in evs {
                writeln!(f, "{e}")?;
            }
            run(bin, &dir, &["import", "jsonl", "events.jsonl"])?;
        }
        run(bin, &dir, &["index"])?;
        let repo = Repo::discover(&dir)?;
        let mut p = Projections::open(&repo)?;
        p.load_vectors();
        if p.vectors().is_none_or(|v| v.meta.model != model.model_id()) {
            bail!("{conv}: the index has no vectors of {}", model.model_id());
        }
        let qs: Vec<&Value> = queries
            .iter()
            .filter(|q| q["conv"] == conv.as_str())
            .collect();
        let texts: Vec<&str> = qs
            .iter()
            .map(|q| q["question"].as_str().unwrap_or(""))
            .collect();
        let (vectors, _) = query_cache.embed(&mut model, &texts, 16)?;
        if dump.is_some() {
            dump_signals(&p, &qs, &vectors, &mut dump_lines)?;
        }
        for (q, v) in qs.iter().zip(vectors) {
            for (name, mode, fusion) in RUNS {
                let hits = search(
                    &p,
                    &repo.config.ranking,
                    &SearchRequest {
                        query: q["question"].as_str().unwrap_or("").to_string(),
                        limit: 20,
                        mode,
                        fusion,
                        query_vector: Some(v.clone()),
                        ..Default::default()
                    },
                )?;
                let refs: Vec<&str> = hits.iter().filter_map(|h| h.meta["ref"].as_str()).collect();
                results
                    .entry(name)
                    .or_default()
                    .push(serde_json::json!({"qid": q["qid"], "ranked_refs": refs}).to_string());
            }
        }
    }
    if let Some(d) = dump {
        std::fs::write(d, dump_lines.join("\n"))?;
    }
    for (name, _, _) in RUNS {
        let path = work.join(format!("results-{name}.jsonl"));
        std::fs::write(
            &path,
            results.get(name).map(|r| r.join("\n")).unwrap_or_default(),
        )?;
        let out = Command::new("python3")
            .arg(set.join("score.py"))
            .arg(&path)
            .args(["--name", name])
            .output()
            .context("running the shared scorer (python3 score.py)")?;
        if !out.status.success() {
            bail!("score.py: {}", String::from_utf8_lossy(&out.stderr));
        }
        let stdout = String::from_utf8_lossy(&out.stdout);
        let summary: Value = stdout
            .lines()
            .last()
            .and_then(|l| serde_json::from_str(l).ok())
            .context("score.py printed no summary")?;
        let o = &summary["overall"];
        let f = |k: &str| o[k].as_f64().unwrap_or(0.0);
        rows.push(Row {
            name: format!("LoCoMo dev ({} questions), {name}", o["n"]),
            value: format!(
                "R@1 {:.3}, R@5 {:.3}, R@10 {:.3}, MRR@10 {:.3}, nDCG@10 {:.3}",
                f("recall@1"),
                f("recall@5"),
                f("recall@10"),
                f("mrr@10"),
                f("ndcg@10")
            ),
            target: if name == "hybrid" {
                "R@10 ≥ 0.68, R@5 ≥ 0.56, above fts and vector".into()
            } else {
                "reference: BM25 R@10 0.561, dense 0.475, RRF 0.633".into()
            },
        });
    }
    Ok(())
}

/// For studying fusion offline: every event's full-text relevance and
/// cosine for each question, one JSON line per question.
fn dump_signals(
    p: &Projections,
    qs: &[&Value],
    vectors: &[Vec<f32>],
    out: &mut Vec<String>,
) -> anyhow::Result<()> {
    let mut refs: std::collections::HashMap<u64, String> = Default::default();
    let mut stmt = p.graph().conn.prepare("SELECT key, ref FROM events")?;
    for row in stmt.query_map([], |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, Option<String>>(1)?))
    })? {
        let (k, r) = row?;
        refs.insert(k as u64, r.unwrap_or_default());
    }
    let Some(index) = p.vectors() else {
        return Ok(());
    };
    for (q, v) in qs.iter().zip(vectors) {
        let question = q["question"].as_str().unwrap_or("");
        let mut signals: BTreeMap<String, (f32, f32, f32)> = BTreeMap::new();
        for c in p.fts().search(question, &Default::default(), 5000)? {
            if let Some(r) = refs.get(&c.key) {
                signals.entry(r.clone()).or_default().0 = c.relevance;
                signals.entry(r.clone()).or_default().1 = c.bm25;
            }
        }
        for h in index.search_exact(v, usize::MAX)? {
            if let Some(r) = refs.get(&h.key) {
                signals.entry(r.clone()).or_default().2 = h.cosine;
            }
        }
        out.push(
            serde_json::json!({
                "qid": q["qid"],
                "signals": signals.iter().map(|(r, s)| serde_json::json!([r, s.0, s.1, s.2])).collect::<Vec<_>>(),
            })
            .to_string(),
        );
    }
    Ok(())
}
