//! Retrieval and injection quality on the shared evaluation sets, read where
//! they are and never copied into the repository:
//!
//! - LoCoMo dev (`../shared/eval/locomo-dev`): five long conversations
//!   between two friends, short turns;
//! - LongMemEval-S dev (`--lme-dir`, written by the set's
//!   `lme_to_events.py`): a user and an assistant with long answers, one
//!   haystack of ~490 turns per question, and abstention questions that
//!   nothing in their haystack answers;
//! - small memories cut from both (10–50 events, a user's first weeks):
//!   LoCoMo's conversations in runs of consecutive sessions, each
//!   LongMemEval haystack down to its answer sessions and a few others.
//!
//! Each conversation (haystack, small memory) is imported into a memlog of
//! its own with the real `memlog` binary (`import`, then `index`, which
//! embeds) under the work directory, where later runs find it: a haystack
//! is embedded once. A small memory's vectors come from the cache of the
//! memory it was cut from.
//!
//! Retrieval: each question searched in its own memory, by full text,
//! vectors, both (weighted or reciprocal-rank fusion) with the model's
//! embedding of the question, and both as a one-shot `memlog search` ranks
//! without a warm process (the distilled token-table vector); recall@k, MRR@10 and nDCG@10 over the evidence turns, as
//! the sets' `score.py` computes them.
//!
//! Injection: what the UserPromptSubmit hook would inject for each
//! question (`memlog_indexer::context`, as the hook calls it), without a
//! warm process and with one: whether anything is injected, whether an
//! evidence turn is among the injected events (hit), evidence recall over
//! them and tokens; then each memory is asked the next one's questions
//! ("foreign": nothing in it answers them), and the abstention questions
//! their own haystack, counting the injections that carry the turns the
//! set labels for them: the near miss a reference answer names ("you
//! mentioned your cat Luna but not your hamster"). Figures are given for the even and the odd
//! questions apart: the ranking and gate were tuned on the even ones.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use memlog_format::config::Fusion;
use memlog_indexer::Projections;
use memlog_indexer::context::{Assembled, recall, render};
use memlog_indexer::embed::{Embedder, ModelEmbedder, ModelFiles};
use memlog_indexer::embed_cache::{EmbeddingCache, text_hash};
use memlog_indexer::search::{SearchMode, SearchRequest, search};
use memlog_indexer::vectors::VectorAccess;
use memlog_store::Repo;
use serde_json::{Value, json};

use crate::{Row, git, run};

/// Most events in a small memory (unless its answer sessions alone have more).
const SMALL_MAX_EVENTS: usize = 50;

/// An evaluation set: its memories and the questions asked of them.
pub struct EvalSet {
    /// Shown in the table.
    pub name: String,
    /// Short name, for the dump files.
    key: String,
    /// Events of each memory, in the neutral import format.
    memories: BTreeMap<String, Vec<Value>>,
    /// Questions with their evidence refs; `conv` names their memory.
    queries: Vec<Value>,
    /// Questions nothing in their memory answers.
    abstention: Vec<Value>,
    /// For a memory cut from another, that one (whose embedding cache
    /// holds its vectors).
    parent: HashMap<String, String>,
}

/// The LoCoMo set beside the repository, if present.
pub fn find_locomo() -> Option<PathBuf> {
    let here = std::env::current_dir().ok()?;
    here.ancestors()
        .map(|a| a.join("shared/eval/locomo-dev"))
        .chain(
            here.ancestors()
                .map(|a| a.join("../shared/eval/locomo-dev")),
        )
        .find(|p| p.join("queries.jsonl").is_file())
}

/// The converted LongMemEval set: `dir` if given, else `$MEMLOG_LME_DIR`,
/// else `eval-data/lme/data-lme` beside the repository; `None` when
/// `<prefix>_queries.jsonl` is not there.
pub fn find_lme(dir: Option<&Path>, prefix: &str) -> Option<PathBuf> {
    let file = format!("{prefix}_queries.jsonl");
    if let Some(d) = dir {
        return d.join(&file).is_file().then(|| d.to_path_buf());
    }
    if let Some(d) = std::env::var_os("MEMLOG_LME_DIR").filter(|d| !d.is_empty()) {
        let d = PathBuf::from(d);
        return d.join(&file).is_file().then_some(d);
    }
    let here = std::env::current_dir().ok()?;
    here.ancestors()
        .map(|a| a.join("eval-data/lme/data-lme"))
        .chain(
            here.ancestors()
                .map(|a| a.join("../eval-data/lme/data-lme")),
        )
        .find(|p| p.join(&file).is_file())
}

/// Reads a JSON-lines file; an absent optional one is empty.
fn read_jsonl(path: &Path, optional: bool) -> anyhow::Result<Vec<Value>> {
    if optional && !path.exists() {
        return Ok(Vec::new());
    }
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).with_context(|| format!("a line of {}", path.display())))
        .collect()
}

/// The memory (conversation) an event belongs to: its ref's first part.
fn memory_of(event: &Value) -> String {
    event["ref"]
        .as_str()
        .and_then(|r| r.split(':').next())
        .unwrap_or("")
        .to_string()
}

fn str_of<'a>(v: &'a Value, field: &str) -> &'a str {
    v[field].as_str().unwrap_or("")
}

fn evidence_of(q: &Value) -> Vec<&str> {
    q["evidence"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Which half a question is in (0 even, 1 odd): LoCoMo's question number
/// (`conv-26-q12`), else the last hex digit of a LongMemEval id.
fn half(qid: &str) -> usize {
    let id = qid.trim_end_matches("_abs");
    if let Some(n) = id
        .rsplit_once("-q")
        .and_then(|(_, n)| n.parse::<usize>().ok())
    {
        return n % 2;
    }
    id.chars()
        .last()
        .and_then(|c| c.to_digit(16))
        .map_or(0, |d| d as usize % 2)
}

impl EvalSet {
    fn from_parts(
        name: String,
        key: &str,
        events: Vec<Value>,
        queries: Vec<Value>,
        abstention: Vec<Value>,
    ) -> EvalSet {
        let mut memories: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        for e in events {
            memories.entry(memory_of(&e)).or_default().push(e);
        }
        EvalSet {
            name,
            key: key.to_string(),
            memories,
            queries,
            abstention,
            parent: HashMap::new(),
        }
    }

    pub fn locomo(dir: &Path) -> anyhow::Result<EvalSet> {
        Ok(EvalSet::from_parts(
            "LoCoMo dev".into(),
            "locomo",
            read_jsonl(&dir.join("events.jsonl"), false)?,
            read_jsonl(&dir.join("queries.jsonl"), false)?,
            Vec::new(),
        ))
    }

    /// LongMemEval's own session ids hold characters a memlog session id
    /// may not (`gpt4_c27434e8_abs`'s `8c64ce26_3~2`): they become `_`.
    pub fn lme(dir: &Path, prefix: &str) -> anyhow::Result<EvalSet> {
        let queries = read_jsonl(&dir.join(format!("{prefix}_queries.jsonl")), false)?;
        let abstention = read_jsonl(&dir.join(format!("{prefix}_abs_queries.jsonl")), true)?;
        let mut events = read_jsonl(&dir.join(format!("{prefix}_events.jsonl")), false)?;
        for e in &mut events {
            let session = session_name(str_of(e, "session"));
            e["session"] = Value::String(session);
        }
        Ok(EvalSet::from_parts(
            format!("LongMemEval dev ({prefix})"),
            prefix,
            events,
            queries,
            abstention,
        ))
    }

    /// Small memories cut from this set: LoCoMo's conversations in runs of
    /// consecutive sessions of at most [`SMALL_MAX_EVENTS`] events, each
    /// asked the questions whose evidence lies in it; each LongMemEval
    /// haystack down to its answer sessions and as many of the others, in
    /// haystack order, as keep it within [`SMALL_MAX_EVENTS`].
    pub fn small(&self) -> EvalSet {
        let mut out = EvalSet {
            name: format!("small memories of {}", self.name),
            key: format!("small-{}", self.key),
            memories: BTreeMap::new(),
            queries: Vec::new(),
            abstention: Vec::new(),
            parent: HashMap::new(),
        };
        // a LongMemEval haystack is its question's: named by its id
        let by_qid = |qs: &[Value]| -> HashMap<String, Value> {
            qs.iter()
                .filter(|q| str_of(q, "qid") == str_of(q, "conv"))
                .map(|q| (str_of(q, "qid").to_string(), q.clone()))
                .collect()
        };
        let own = by_qid(&self.queries);
        let abstention = by_qid(&self.abstention);
        for (conv, events) in &self.memories {
            // sessions in the order they come
            let mut sessions: Vec<(&str, Vec<&Value>)> = Vec::new();
            for e in events {
                let s = str_of(e, "session");
                match sessions.last_mut() {
                    Some((last, evs)) if *last == s => evs.push(e),
                    _ => sessions.push((s, vec![e])),
                }
            }
            let question = own
                .get(conv)
                .map(|q| (q, false))
                .or_else(|| abstention.get(conv).map(|q| (q, true)));
            match question {
                // a LongMemEval haystack: its answer sessions and some others
                Some((q, abstains)) => {
                    let answers: Vec<String> = q["answer_sessions"]
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .filter_map(Value::as_str)
                                .map(|s| session_name(&format!("{conv}-{s}")))
                                .collect()
                        })
                        .unwrap_or_default();
                    let mut keep: Vec<bool> = sessions
                        .iter()
                        .map(|(s, _)| answers.iter().any(|a| a == s))
                        .collect();
                    let mut size: usize = sessions
                        .iter()
                        .zip(&keep)
                        .filter(|(_, k)| **k)
                        .map(|((_, evs), _)| evs.len())
                        .sum();
                    for (i, (_, evs)) in sessions.iter().enumerate() {
                        if !keep[i] && size + evs.len() <= SMALL_MAX_EVENTS {
                            keep[i] = true;
                            size += evs.len();
                        }
                    }
                    let name = format!("{conv}~small");
                    let cut: Vec<Value> = sessions
                        .iter()
                        .zip(&keep)
                        .filter(|(_, k)| **k)
                        .flat_map(|((_, evs), _)| evs.iter().map(|e| (*e).clone()))
                        .collect();
                    let mut q = q.clone();
                    q["conv"] = json!(name);
                    if abstains {
                        out.abstention.push(q);
                    } else {
                        out.queries.push(q);
                    }
                    out.memories.insert(name.clone(), cut);
                    out.parent.insert(name, conv.clone());
                }
                // a LoCoMo conversation: runs of consecutive sessions
                None => {
                    let mut runs: Vec<Vec<&Value>> = vec![Vec::new()];
                    for (_, evs) in &sessions {
                        if let Some(last) = runs.last()
                            && !last.is_empty()
                            && last.len() + evs.len() > SMALL_MAX_EVENTS
                        {
                            runs.push(Vec::new());
                        }
                        if let Some(last) = runs.last_mut() {
                            last.extend(evs.iter().copied());
                        }
                    }
                    for (i, run) in runs.into_iter().enumerate() {
                        let name = format!("{conv}~{}", i + 1);
                        let refs: std::collections::HashSet<&str> =
                            run.iter().map(|e| str_of(e, "ref")).collect();
                        let asked: Vec<Value> = self
                            .queries
                            .iter()
                            .filter(|q| str_of(q, "conv") == conv)
                            .filter(|q| {
                                let ev = evidence_of(q);
                                !ev.is_empty() && ev.iter().all(|r| refs.contains(r))
                            })
                            .map(|q| {
                                let mut q = q.clone();
                                q["conv"] = json!(name);
                                q
                            })
                            .collect();
                        if asked.is_empty() {
                            continue;
                        }
                        out.queries.extend(asked);
                        out.memories
                            .insert(name.clone(), run.into_iter().cloned().collect());
                        out.parent.insert(name, conv.clone());
                    }
                }
            }
        }
        out
    }

    fn asked_of(&self, conv: &str) -> Vec<&Value> {
        self.queries
            .iter()
            .filter(|q| str_of(q, "conv") == conv)
            .collect()
    }
}

/// The work directory (`work` if given, else a temporary one that the
/// guard keeps), the model, and a cache of the questions' embeddings.
pub struct Evaluation {
    work: PathBuf,
    _guard: Option<tempfile::TempDir>,
    model: ModelEmbedder,
    query_cache: EmbeddingCache,
    /// Dump lines, when asked for.
    dump: Option<PathBuf>,
}

impl Evaluation {
    pub fn open(work: Option<&Path>, dump: Option<&Path>) -> anyhow::Result<Evaluation> {
        let (work, guard) = match work {
            Some(w) => (w.to_path_buf(), None),
            None => {
                let tmp = tempfile::Builder::new().prefix("memlog-eval-").tempdir()?;
                (tmp.path().to_path_buf(), Some(tmp))
            }
        };
        std::fs::create_dir_all(&work)?;
        let files = ModelFiles::resolve(&Default::default());
        let model = ModelEmbedder::load(&files, 32)
            .context("the quality evaluations need the model (scripts/install-assets)")?;
        // the hook's query vectors without a warm process
        if memlog_indexer::token_vectors::TokenVectors::for_model(model.model_id())?.is_none() {
            eprintln!("distilling the token vectors of {}", model.model_id());
            memlog_indexer::token_vectors::distill(&files, model.model_id(), |_, _| {})?;
        }
        if let Some(d) = dump {
            std::fs::create_dir_all(d)?;
        }
        Ok(Evaluation {
            query_cache: EmbeddingCache::open(&work.join("queries.sqlite"))?,
            work,
            _guard: guard,
            model,
            dump: dump.map(Path::to_path_buf),
        })
    }

    /// One memlog per memory of `set` under the work directory (imported
    /// once, reused by later runs), indexed with vectors: name and
    /// directory.
    fn memories(&mut self, bin: &Path, set: &EvalSet) -> anyhow::Result<Vec<(String, PathBuf)>> {
        let mut out = Vec::new();
        let total = set.memories.len();
        for (i, (conv, events)) in set.memories.iter().enumerate() {
            let dir = self.work.join(conv);
            if !dir.join(".git").exists() {
                eprintln!("{}: importing {conv} ({}/{total})", set.name, i + 1);
                std::fs::create_dir_all(&dir)?;
                git(&dir, &["init", "-q"])?;
                let mut f = std::fs::File::create(dir.join("events.jsonl"))?;
                for e in events {
                    writeln!(f, "{e}")?;
                }
                drop(f);
                run(
                    bin,
                    &dir,
                    &["import", "jsonl", "--no-index", "events.jsonl"],
                )?;
                if let Some(parent) = set.parent.get(conv) {
                    self.seed_cache(&self.work.join(parent), &dir, events)?;
                }
            }
            // (cache lookups only, once embedded: also completes a memory an
            // earlier run was stopped in)
            if !set.parent.contains_key(conv) {
                self.prefill_cache(&dir, events)?;
            }
            run(bin, &dir, &["index"])?;
            out.push((conv.clone(), dir));
        }
        Ok(out)
    }

    /// Embeds the texts of `events` into the embedding cache of the memlog
    /// at `dir`, shortest first, so that `memlog index` finds them there: a
    /// batch of texts of about the same length pads less (a haystack
    /// alternates short questions with answers the model reads 256 tokens
    /// of).
    fn prefill_cache(&mut self, dir: &Path, events: &[Value]) -> anyhow::Result<()> {
        let mut cache = EmbeddingCache::open(&Repo::discover(dir)?.layout().embeddings_cache())?;
        let mut texts: Vec<&str> = events
            .iter()
            .map(|e| str_of(e, "text"))
            .filter(|t| !t.is_empty())
            .collect();
        texts.sort_by_key(|t| memlog_indexer::embed::clip(t).len());
        let started = std::time::Instant::now();
        let (_, used) = cache.embed(&mut self.model, &texts, 32)?;
        if used.embedded > 0 {
            eprintln!(
                "  embedded {} texts in {:.0} s",
                used.embedded,
                started.elapsed().as_secs_f64()
            );
        }
        Ok(())
    }

    /// Copies the vectors of `events` from the embedding cache of the
    /// memlog at `from` into that of `to`, so that indexing `to` embeds
    /// nothing `from` has.
    fn seed_cache(&self, from: &Path, to: &Path, events: &[Value]) -> anyhow::Result<()> {
        let Ok(from) = Repo::discover(from) else {
            return Ok(());
        };
        let source = from.layout().embeddings_cache();
        if !source.exists() {
            return Ok(());
        }
        let source = EmbeddingCache::open(&source)?;
        let mut target = EmbeddingCache::open(&Repo::discover(to)?.layout().embeddings_cache())?;
        let model = self.model.model_id();
        let mut found = Vec::new();
        for e in events {
            let h = text_hash(str_of(e, "text"));
            if let Some(v) = source.get(model, &h)? {
                found.push((h, v));
            }
        }
        let items: Vec<_> = found.iter().map(|(h, v)| (*h, v.as_slice())).collect();
        target.put_many(model, &items)?;
        Ok(())
    }

    fn write_dump(&self, set: &EvalSet, what: &str, lines: &[String]) -> anyhow::Result<()> {
        if let Some(d) = &self.dump {
            std::fs::write(
                d.join(format!("{}-{what}.jsonl", set.key)),
                lines.join("\n"),
            )?;
        }
        Ok(())
    }
}

/// An opened memory and the ref of each of its events.
struct Memory {
    repo: Repo,
    p: Projections,
    /// Event id to the set's ref.
    refs: HashMap<String, String>,
}

impl Memory {
    fn open(dir: &Path, model: &str, what: &str) -> anyhow::Result<Memory> {
        let repo = Repo::discover(dir)?;
        let mut p = Projections::open(&repo)?;
        // as a hook and a one-shot search read them
        p.load_vectors_as(VectorAccess::Scan);
        if p.vectors().is_none_or(|v| v.meta.model != model) {
            bail!("{what}: the index has no vectors of {model}");
        }
        let mut refs = HashMap::new();
        let mut stmt = p.graph().conn.prepare("SELECT id, ref FROM events")?;
        for row in stmt.query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?))
        })? {
            let (id, r) = row?;
            refs.insert(id, r.unwrap_or_default());
        }
        drop(stmt);
        Ok(Memory { repo, p, refs })
    }
}

/// The searches compared: name, mode, fusion, whether the query vector is
/// the distilled one ([`memlog_indexer::context::distilled_query`], as a
/// one-shot `memlog search` ranks).
const RUNS: [(&str, SearchMode, Option<Fusion>, bool); 5] = [
    ("fts", SearchMode::Fts, None, false),
    ("vector", SearchMode::Vector, None, false),
    ("hybrid", SearchMode::Hybrid, Some(Fusion::Weighted), false),
    ("hybrid-rrf", SearchMode::Hybrid, Some(Fusion::Rrf), false),
    (
        "hybrid, distilled",
        SearchMode::Hybrid,
        Some(Fusion::Weighted),
        true,
    ),
];

/// Retrieval figures over some questions (sums).
#[derive(Default, Clone)]
struct Ranked {
    n: usize,
    r1: f64,
    r5: f64,
    r10: f64,
    mrr: f64,
    ndcg: f64,
}

impl Ranked {
    /// As the sets' `score.py`: duplicates collapsed to their first place.
    fn add(&mut self, ranked: &[&str], evidence: &[&str]) {
        let mut seen = std::collections::HashSet::new();
        let ranked: Vec<&str> = ranked.iter().copied().filter(|r| seen.insert(*r)).collect();
        let ev: std::collections::HashSet<&str> = evidence.iter().copied().collect();
        if ev.is_empty() {
            return;
        }
        let recall = |k: usize| {
            ranked.iter().take(k).filter(|r| ev.contains(*r)).count() as f64 / ev.len() as f64
        };
        self.n += 1;
        self.r1 += recall(1);
        self.r5 += recall(5);
        self.r10 += recall(10);
        self.mrr += ranked
            .iter()
            .take(10)
            .position(|r| ev.contains(r))
            .map_or(0.0, |i| 1.0 / (i as f64 + 1.0));
        let dcg: f64 = ranked
            .iter()
            .take(10)
            .enumerate()
            .filter(|(_, r)| ev.contains(*r))
            .map(|(i, _)| 1.0 / (i as f64 + 2.0).log2())
            .sum();
        let idcg: f64 = (0..ev.len().min(10))
            .map(|i| 1.0 / (i as f64 + 2.0).log2())
            .sum();
        self.ndcg += dcg / idcg;
    }

    fn merged(&self, other: &Ranked) -> Ranked {
        Ranked {
            n: self.n + other.n,
            r1: self.r1 + other.r1,
            r5: self.r5 + other.r5,
            r10: self.r10 + other.r10,
            mrr: self.mrr + other.mrr,
            ndcg: self.ndcg + other.ndcg,
        }
    }

    fn mean(&self, sum: f64) -> f64 {
        sum / self.n.max(1) as f64
    }
}

/// Retrieval quality of `set`: each question searched in its own memory
/// in each of [`RUNS`].
pub fn retrieval(
    bin: &Path,
    eval: &mut Evaluation,
    set: &EvalSet,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    let memories = eval.memories(bin, set)?;
    // [run][half]
    let mut tally: Vec<[Ranked; 2]> = vec![Default::default(); RUNS.len()];
    let mut dump: Vec<String> = Vec::new();
    for (conv, dir) in &memories {
        let m = Memory::open(dir, eval.model.model_id(), conv)?;
        let qs = set.asked_of(conv);
        let texts: Vec<&str> = qs.iter().map(|q| str_of(q, "question")).collect();
        let (vectors, _) = eval.query_cache.embed(&mut eval.model, &texts, 16)?;
        for (q, embedded) in qs.iter().zip(vectors) {
            let question = str_of(q, "question");
            let evidence = evidence_of(q);
            let h = half(str_of(q, "qid"));
            // what a one-shot `memlog search` ranks with when no watcher
            // answers
            let distilled = memlog_indexer::context::distilled_query(&m.p, question)?;
            let mut ranked_by_run = Vec::new();
            for (i, (name, mode, fusion, use_distilled)) in RUNS.iter().enumerate() {
                let query_vector = if *use_distilled {
                    distilled.clone()
                } else {
                    Some(embedded.clone())
                };
                let hits = search(
                    &m.p,
                    &m.repo.config.ranking,
                    &SearchRequest {
                        query: question.to_string(),
                        limit: 20,
                        mode: *mode,
                        fusion: *fusion,
                        query_vector,
                        distilled: *use_distilled,
                        ..Default::default()
                    },
                )?;
                let refs: Vec<&str> = hits.iter().filter_map(|h| h.meta["ref"].as_str()).collect();
                tally[i][h].add(&refs, &evidence);
                if eval.dump.is_some() {
                    ranked_by_run.push(json!({"run": name, "refs": refs}));
                }
            }
            if eval.dump.is_some() {
                dump.push(
                    json!({"qid": q["qid"], "half": h, "evidence": evidence, "runs": ranked_by_run})
                        .to_string(),
                );
            }
        }
    }
    eval.write_dump(set, "retrieval", &dump)?;
    for (i, (name, ..)) in RUNS.iter().enumerate() {
        let [even, odd] = &tally[i];
        let all = even.merged(odd);
        rows.push(Row {
            name: format!("{} ({} questions), {name}", set.name, all.n),
            value: format!(
                "R@1 {:.3}, R@5 {:.3}, R@10 {:.3}, MRR@10 {:.3}, nDCG@10 {:.3}; even/odd R@5 {:.3}/{:.3}, R@10 {:.3}/{:.3}",
                all.mean(all.r1),
                all.mean(all.r5),
                all.mean(all.r10),
                all.mean(all.mrr),
                all.mean(all.ndcg),
                even.mean(even.r5),
                odd.mean(odd.r5),
                even.mean(even.r10),
                odd.mean(odd.r10),
            ),
            target: if name.starts_with("hybrid") {
                "R@5 and R@10 ≥ fts".into()
            } else {
                "reference".into()
            },
        });
    }
    Ok(())
}

/// For studying ranking and gate offline: the question's words with their
/// rarity in the memory, its full-text terms with their document
/// frequency, and each event's full-text relevance, BM25, cosines (to the
/// question's embedding and to its two distilled vectors) and which terms
/// it contains, with its kind, length and session, as one JSON line.
fn every_signal(m: &Memory, q: &Value, asked: &str, embedded: &[f32]) -> anyhow::Result<String> {
    #[derive(Default)]
    struct Signals {
        fts: f32,
        bm25: f32,
        cosine: f32,
        ranking: f32,
        gate: f32,
        terms: u64,
    }
    let question = str_of(q, "question");
    let fts = m.p.fts();
    let mut by_key: HashMap<u64, Signals> = HashMap::new();
    for c in fts.search(question, &Default::default(), 100_000)? {
        let s = by_key.entry(c.key).or_default();
        s.fts = c.relevance;
        s.bm25 = c.bm25;
    }
    // which of the question's terms each event contains
    let searcher = fts.searcher()?;
    let mut terms = Vec::new();
    for (bit, (term, _)) in memlog_indexer::fts::query_terms(&fts.index, fts.fields.text, question)
        .into_iter()
        .take(64)
        .enumerate()
    {
        let query =
            tantivy::query::TermQuery::new(term.clone(), tantivy::schema::IndexRecordOption::Basic);
        let docs = searcher.search(&query, &tantivy::collector::DocSetCollector)?;
        for addr in &docs {
            let keys = searcher
                .segment_reader(addr.segment_ord)
                .fast_fields()
                .u64("key")?;
            if let Some(key) = keys.first(addr.doc_id) {
                by_key.entry(key).or_default().terms |= 1 << bit;
            }
        }
        terms.push(json!([term.value().as_str().unwrap_or(""), docs.len()]));
    }
    let distilled = memlog_indexer::context::prompt_distilled(&m.p, question)?;
    if let Some(index) = m.p.vectors() {
        for h in index.search_exact(embedded, usize::MAX)? {
            by_key.entry(h.key).or_default().cosine = h.cosine;
        }
        if let Some(d) = &distilled {
            for h in index.search_exact(&d.ranking, usize::MAX)? {
                by_key.entry(h.key).or_default().ranking = h.cosine;
            }
            for h in index.search_exact(&d.gate, usize::MAX)? {
                by_key.entry(h.key).or_default().gate = h.cosine;
            }
        }
    }
    let words: Vec<Value> = match memlog_indexer::token_vectors::TokenVectors::for_model(
        &m.p.vectors()
            .map(|v| v.meta.model.clone())
            .unwrap_or_default(),
    )? {
        Some(table) => {
            let words = table.words(question);
            let rarity = fts.word_rarity(&words)?;
            words
                .into_iter()
                .zip(rarity)
                .map(|(w, r)| json!([w, r]))
                .collect()
        }
        None => Vec::new(),
    };
    let mut events = Vec::new();
    let mut stmt = m.p.graph().conn.prepare(
        "SELECT key, ref, kind, length(text), session FROM events ORDER BY session, ts, seq",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let key = r.get::<_, i64>(0)? as u64;
        let s = by_key.get(&key);
        events.push(json!([
            r.get::<_, Option<String>>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, i64>(3)?,
            r.get::<_, String>(4)?,
            s.map_or(0.0, |s| s.fts),
            s.map_or(0.0, |s| s.bm25),
            s.map_or(0.0, |s| s.cosine),
            s.map_or(0.0, |s| s.ranking),
            s.map_or(0.0, |s| s.gate),
            s.map_or(0, |s| s.terms),
        ]));
    }
    Ok(json!({
        "qid": q["qid"], "asked": asked, "half": half(str_of(q, "qid")),
        "evidence": if asked == "own" { evidence_of(q) } else { Vec::new() },
        "docs": searcher.num_docs(), "words": words, "terms": terms,
        "unseen": distilled.map(|d| d.unseen),
        "columns": ["ref", "kind", "chars", "session", "fts", "bm25", "cosine", "ranking", "gate", "terms"],
        "events": events,
    })
    .to_string())
}

/// Injection figures over some questions.
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
    fn add(&mut self, a: &Assembled, found: usize, evidence: usize) {
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

    fn mean_tokens(&self) -> f64 {
        self.tokens as f64 / self.injected.max(1) as f64
    }
}

/// `s` as a memlog session id: characters it may not hold become `_`.
fn session_name(s: &str) -> String {
    s.chars()
        .map(|c| {
            if memlog_format::session_id::is_allowed(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Whom a question is asked of.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Asked {
    /// Its own memory.
    Own,
    /// Another memory, which cannot answer it.
    Foreign,
    /// Its own memory, which does not hold the answer.
    Abstention,
}

/// The hook's two paths: no warm process, a warm `memlog watch`.
const PATHS: [&str; 2] = ["no warm process", "memlog watch running"];

/// Injection on `set`: what the hook injects for its own questions, the
/// next memory's questions and the abstention questions.
pub fn injection(
    bin: &Path,
    eval: &mut Evaluation,
    set: &EvalSet,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    let memories = eval.memories(bin, set)?;
    // memories asked their neighbours' questions: those that have questions
    let asking: Vec<&String> = memories
        .iter()
        .map(|(c, _)| c)
        .filter(|c| !set.asked_of(c).is_empty())
        .collect();
    // [path][half]
    let mut own: [[Tally; 2]; 2] = Default::default();
    let mut foreign: [[Tally; 2]; 2] = Default::default();
    let mut abstention: [Tally; 2] = Default::default();
    let mut dump: Vec<String> = Vec::new();
    let mut signals: Vec<String> = Vec::new();
    for (conv, dir) in &memories {
        let m = Memory::open(dir, eval.model.model_id(), conv)?;
        let mut asked: Vec<(Asked, Vec<&Value>)> = vec![(Asked::Own, set.asked_of(conv))];
        // the next memory with questions that was not cut from the same
        // conversation (a later run of the same friends' sessions would
        // share their names and lives)
        let origin = |c: &str| set.parent.get(c).map_or(c, String::as_str).to_string();
        if let Some(i) = asking.iter().position(|c| *c == conv) {
            let next = (1..asking.len())
                .map(|k| asking[(i + k) % asking.len()])
                .find(|c| origin(c) != origin(conv));
            if let Some(next) = next {
                asked.push((Asked::Foreign, set.asked_of(next)));
            }
        }
        asked.push((
            Asked::Abstention,
            set.abstention
                .iter()
                .filter(|q| str_of(q, "conv") == conv)
                .collect(),
        ));
        for (who, qs) in asked {
            let texts: Vec<&str> = qs.iter().map(|q| str_of(q, "question")).collect();
            let (vectors, _) = eval.query_cache.embed(&mut eval.model, &texts, 16)?;
            let who_name = match who {
                Asked::Own => "own",
                Asked::Foreign => "foreign",
                Asked::Abstention => "abstention",
            };
            for (q, v) in qs.iter().zip(vectors) {
                let h = half(str_of(q, "qid"));
                if eval.dump.is_some() {
                    signals.push(every_signal(&m, q, who_name, &v)?);
                }
                // a foreign question has no evidence in this memory; an
                // abstention question's labelled turns are the near miss its
                // reference answer names ("you mentioned your cat, not a
                // hamster")
                let evidence = if who == Asked::Foreign {
                    Vec::new()
                } else {
                    evidence_of(q)
                };
                for (path, vector) in [None, Some(v.as_slice())].into_iter().enumerate() {
                    let question = str_of(q, "question");
                    let r = recall(&m.p, &m.repo.config, question, None, vector)?;
                    let confident = r.confident(&m.repo.config);
                    let signals = r.signals();
                    let hits: Vec<Value> = if eval.dump.is_some() {
                        r.hits
                            .iter()
                            .map(|h| json!([h.meta["ref"], h.score, h.parts.fts]))
                            .collect()
                    } else {
                        Vec::new()
                    };
                    let ungated =
                        render(&m.p, question, r.hits, m.repo.config.context.budget_tokens)?;
                    let cited: Vec<&str> = ungated
                        .cited
                        .iter()
                        .filter_map(|id| m.refs.get(id.as_str()).map(String::as_str))
                        .collect();
                    let found_ungated = evidence.iter().filter(|e| cited.contains(e)).count();
                    // what the hook injects: all of it, or nothing
                    let (a, found) = if confident {
                        (ungated.clone(), found_ungated)
                    } else {
                        (Assembled::default(), 0)
                    };
                    match who {
                        Asked::Own => own[path][h].add(&a, found, evidence.len()),
                        Asked::Foreign => foreign[path][h].add(&a, 0, 0),
                        Asked::Abstention => abstention[path].add(&a, found, evidence.len()),
                    }
                    if eval.dump.is_some() {
                        dump.push(
                            json!({
                                "qid": q["qid"], "memory": conv,
                                "asked": who_name,
                                "path": path, "half": h, "found": found_ungated,
                                "evidence": evidence.len(), "tokens": ungated.tokens,
                                "confident": confident, "signals": signals,
                                "hits": hits,
                            })
                            .to_string(),
                        );
                    }
                }
            }
        }
    }
    eval.write_dump(set, "inject", &dump)?;
    eval.write_dump(set, "signals", &signals)?;
    for (path, name) in PATHS.iter().enumerate() {
        for (h, which) in ["even", "odd"].iter().enumerate() {
            let o = &own[path][h];
            let f = &foreign[path][h];
            rows.push(Row {
                name: format!(
                    "{} injection, {name}, {which} questions ({})",
                    set.name, o.questions
                ),
                value: format!(
                    "injected {:.3}, hit {:.3}, evidence recall {:.3}, {:.0} tokens; foreign ({}): injected {:.3}, {:.0} tokens",
                    o.rate(o.injected),
                    o.rate(o.hits),
                    o.recall / o.questions.max(1) as f64,
                    o.mean_tokens(),
                    f.questions,
                    f.rate(f.injected),
                    f.mean_tokens(),
                ),
                target: "hit ≥ 0.80 (small: 0.70), ≤ 1,000 tokens, foreign ≤ 0.10".into(),
            });
        }
        let a = &abstention[path];
        if a.questions > 0 {
            rows.push(Row {
                name: format!(
                    "{} abstention, {name} ({} questions)",
                    set.name, a.questions
                ),
                value: format!(
                    "injected {:.3}, {:.0} tokens; {} of the {} injected carry the near miss the set labels (what its reference answer says was mentioned instead)",
                    a.rate(a.injected),
                    a.mean_tokens(),
                    a.hits,
                    a.injected,
                ),
                target: "injected ≤ 0.20".into(),
            });
        }
    }
    Ok(())
}
