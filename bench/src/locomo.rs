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

/// Reads a JSON-lines file of the set.
fn read_set(set: &Path, name: &str) -> anyhow::Result<Vec<Value>> {
    let p = set.join(name);
    let text = std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).context("a line of the set"))
        .collect()
}

/// What both evaluations start from: the set, a working directory
/// (`work` if given, else a temporary one that `_guard` keeps), the model
/// and a cache of the questions' embeddings.
struct Evaluation {
    events: Vec<Value>,
    queries: Vec<Value>,
    work: PathBuf,
    _guard: Option<tempfile::TempDir>,
    model: ModelEmbedder,
    query_cache: EmbeddingCache,
}

impl Evaluation {
    fn open(set: &Path, work: Option<&Path>) -> anyhow::Result<Evaluation> {
        let (work, guard) = match work {
            Some(w) => (w.to_path_buf(), None),
            None => {
                let tmp = tempfile::Builder::new()
                    .prefix("memlog-locomo-")
                    .tempdir()?;
                (tmp.path().to_path_buf(), Some(tmp))
            }
        };
        std::fs::create_dir_all(&work)?;
        let files = ModelFiles::resolve(&Default::default());
        let model = ModelEmbedder::load(&files, 16)
            .context("the LoCoMo evaluations need the model (scripts/install-assets)")?;
        // the hook's query vectors without a warm process
        if memlog_indexer::token_vectors::TokenVectors::for_model(model.model_id())?.is_none() {
            eprintln!("distilling the token vectors of {}", model.model_id());
            memlog_indexer::token_vectors::distill(&files, model.model_id(), |_, _| {})?;
        }
        Ok(Evaluation {
            events: read_set(set, "events.jsonl")?,
            queries: read_set(set, "queries.jsonl")?,
            query_cache: EmbeddingCache::open(&work.join("queries.sqlite"))?,
            work,
            _guard: guard,
            model,
        })
    }
}

/// One memlog per conversation under `work` (imported once, reused by
/// later runs), indexed with vectors: conversation name and directory.
fn conversations(
    bin: &Path,
    events: &[Value],
    work: &Path,
) -> anyhow::Result<Vec<(String, PathBuf)>> {
    let mut by_conv: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for e in events {
        let conv = e["ref"]
            .as_str()
            .and_then(|r| r.split(':').next())
            .unwrap_or("");
        by_conv.entry(conv.to_string()).or_default().push(e);
    }
    let mut out = Vec::new();
    for (conv, evs) in by_conv {
        let dir = work.join(&conv);
        if !dir.join(".git").exists() {
            std::fs::create_dir_all(&dir)?;
            git(&dir, &["init", "-q"])?;
            let mut f = std::fs::File::create(dir.join("events.jsonl"))?;
            for e in evs {
                writeln!(f, "{e}")?;
            }
            run(
                bin,
                &dir,
                &["import", "jsonl", "--no-index", "events.jsonl"],
            )?;
        }
        run(bin, &dir, &["index"])?;
        out.push((conv, dir));
    }
    Ok(out)
}

/// The runs compared: name, mode, fusion.
const RUNS: [(&str, SearchMode, Option<Fusion>); 4] = [
    ("fts", SearchMode::Fts, None),
    ("vector", SearchMode::Vector, None),
    ("hybrid", SearchMode::Hybrid, Some(Fusion::Weighted)),
    ("hybrid-rrf", SearchMode::Hybrid, Some(Fusion::Rrf)),
];

/// Hybrid search with the distilled query vector, as a one-shot `memlog
/// search` ranks when no `memlog watch` answers.
const DISTILLED_RUN: &str = "hybrid-distilled";

pub fn bench(
    bin: &Path,
    set: &Path,
    work: Option<&Path>,
    dump: Option<&Path>,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    let Evaluation {
        events,
        queries,
        work,
        _guard,
        mut model,
        mut query_cache,
    } = Evaluation::open(set, work)?;

    let mut results: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut dump_lines: Vec<String> = Vec::new();
    for (conv, dir) in conversations(bin, &events, &work)? {
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
            let mut record = |name: &'static str, hits: &[memlog_indexer::search::Hit]| {
                let refs: Vec<&str> = hits.iter().filter_map(|h| h.meta["ref"].as_str()).collect();
                results
                    .entry(name)
                    .or_default()
                    .push(serde_json::json!({"qid": q["qid"], "ranked_refs": refs}).to_string());
            };
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
                record(name, &hits);
            }
            // what a one-shot `memlog search` ranks with when no watcher
            // answers: the distilled query vector
            let question = q["question"].as_str().unwrap_or("");
            let hits = search(
                &p,
                &repo.config.ranking,
                &SearchRequest {
                    query: question.to_string(),
                    limit: 20,
                    query_vector: memlog_indexer::context::distilled_query(&p, question)?,
                    distilled: true,
                    ..Default::default()
                },
            )?;
            record(DISTILLED_RUN, &hits);
        }
    }
    if let Some(d) = dump {
        std::fs::write(d, dump_lines.join("\n"))?;
    }
    for name in RUNS.iter().map(|r| r.0).chain([DISTILLED_RUN]) {
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

/// Injection on the shared set: for each question, what the
/// UserPromptSubmit hook would inject (`memlog_indexer::context::assemble`
/// as the hook calls it), with no warm process (no query embedding) and
/// with one (the question's embedding): whether anything is injected,
/// whether an evidence turn is among the injected events (hit rate),
/// evidence recall over them and tokens; then each conversation is asked
/// the next one's questions, which nothing in it answers. Figures are given
/// for the even and the odd questions apart (the gate was tuned on the even
/// ones).
pub fn inject(
    bin: &Path,
    set: &Path,
    work: Option<&Path>,
    dump: Option<&Path>,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    use memlog_indexer::context::{recall, render};
    use memlog_indexer::vectors::VectorAccess;

    let Evaluation {
        events,
        queries,
        work,
        _guard,
        mut model,
        mut query_cache,
    } = Evaluation::open(set, work)?;
    let convs = conversations(bin, &events, &work)?;
    let mut dump_lines: Vec<String> = Vec::new();
    // [path][half]
    let mut own = [
        [Tally::default(), Tally::default()],
        [Tally::default(), Tally::default()],
    ];
    let mut foreign = [
        [Tally::default(), Tally::default()],
        [Tally::default(), Tally::default()],
    ];
    for (i, (conv, dir)) in convs.iter().enumerate() {
        let next = &convs[(i + 1) % convs.len()].0;
        let repo = Repo::discover(dir)?;
        let mut p = Projections::open(&repo)?;
        p.load_vectors_as(VectorAccess::Scan);
        let mut refs: std::collections::HashMap<String, String> = Default::default();
        let mut stmt = p.graph().conn.prepare("SELECT id, ref FROM events")?;
        for row in stmt.query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?))
        })? {
            let (id, r) = row?;
            refs.insert(id, r.unwrap_or_default());
        }
        drop(stmt);
        for (asked, tallies) in [(conv, &mut own), (next, &mut foreign)] {
            let qs: Vec<&Value> = queries
                .iter()
                .filter(|q| q["conv"] == asked.as_str())
                .collect();
            let texts: Vec<&str> = qs
                .iter()
                .map(|q| q["question"].as_str().unwrap_or(""))
                .collect();
            let (vectors, _) = query_cache.embed(&mut model, &texts, 16)?;
            for (q, v) in qs.iter().zip(vectors) {
                let half = usize::from(
                    q["qid"]
                        .as_str()
                        .and_then(|id| id.rsplit('q').next())
                        .and_then(|n| n.parse::<usize>().ok())
                        .unwrap_or(0)
                        % 2
                        == 1,
                );
                let evidence: Vec<&str> = q["evidence"]
                    .as_array()
                    .map(|a| a.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                for (path, vector) in [None, Some(v.as_slice())].into_iter().enumerate() {
                    let question = q["question"].as_str().unwrap_or("");
                    let r = recall(&p, &repo.config, question, None, vector)?;
                    let confident = r.confident(&repo.config);
                    let unseen = r.unseen;
                    let ungated = render(&p, r.hits, repo.config.context.budget_tokens)?;
                    let found_in = |a: &memlog_indexer::context::Assembled| {
                        let cited: Vec<&str> = a
                            .cited
                            .iter()
                            .filter_map(|id| refs.get(id.as_str()).map(String::as_str))
                            .collect();
                        evidence.iter().filter(|e| cited.contains(e)).count()
                    };
                    let found_ungated = found_in(&ungated);
                    // what the hook injects: all of it, or nothing
                    let (a, found) = if confident {
                        (ungated.clone(), found_ungated)
                    } else {
                        (Default::default(), 0)
                    };
                    tallies[path][half].add(&a, found, evidence.len());
                    if dump.is_some() {
                        dump_lines.push(
                            serde_json::json!({
                                "qid": q["qid"], "own": asked == conv, "path": path,
                                "half": half, "query": r.query, "best_fts": r.best_fts,
                                "best_cosine": r.best_cosine, "found": found_ungated,
                                "evidence": evidence.len(), "tokens": ungated.tokens,
                                "confident": confident, "unseen": unseen,
                            })
                            .to_string(),
                        );
                    }
                }
            }
        }
    }
    if let Some(d) = dump {
        std::fs::write(d, dump_lines.join("\n"))?;
    }
    for (path, name) in ["no warm process", "memlog watch running"]
        .iter()
        .enumerate()
    {
        for (half, which) in ["even", "odd"].iter().enumerate() {
            let o = &own[path][half];
            let f = &foreign[path][half];
            rows.push(Row {
                name: format!("LoCoMo injection, {name}, {which} questions ({})", o.questions),
                value: format!(
                    "injected {:.3}, hit {:.3}, evidence recall {:.3}, {:.0} tokens; foreign: injected {:.3}, {:.0} tokens",
                    o.rate(o.injected),
                    o.rate(o.hits),
                    o.recall / o.questions.max(1) as f64,
                    o.tokens as f64 / o.injected.max(1) as f64,
                    f.rate(f.injected),
                    f.tokens as f64 / f.injected.max(1) as f64,
                ),
                target: "hit ≥ 0.75, ≤ 1,000 tokens, foreign ≤ 0.10".into(),
            });
        }
    }
    Ok(())
}

/// Injection figures over a set of questions.
#[derive(Default)]
struct Tally {
    questions: usize,
    injected: usize,
    hits: usize,
    /// Sum of per-question evidence recall.
    recall: f64,
    /// Tokens injected, summed over the questions that got something.
    tokens: usize,
}

impl Tally {
    fn add(&mut self, a: &memlog_indexer::context::Assembled, found: usize, evidence: usize) {
        self.questions += 1;
        if !a.cited.is_empty() {
            self.injected += 1;
            self.tokens += a.tokens;
        }
        if found > 0 {
            self.hits += 1;
        }
        if evidence > 0 {
            self.recall += found as f64 / evidence as f64;
        }
    }

    fn rate(&self, n: usize) -> f64 {
        n as f64 / self.questions.max(1) as f64
    }
}
