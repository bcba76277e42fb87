//! `memlog-bench`: builds realistic memlogs from a seeded generator and
//! prints a table of figures against the project's targets.
//!
//! Run it with `scripts/bench` (release build). Whole-process figures run
//! the real `memlog` binary found next to this one.

mod build;
mod eval_sets;
mod file_recall;
mod generator;
mod hooks;
mod kills;
mod lean;
mod oneshot;
mod ort;
mod realistic;
mod search;
mod secrets;
mod serve;
mod team_year;
mod vectors;
mod watch;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Parser;
use memlog_format::{Draft, Kind};
use memlog_store::seal::{JournalSelection, seal_journals};
use memlog_store::{Recorder, Repo};

/// Benchmarks memlog and prints a markdown table.
#[derive(Parser)]
struct Args {
    /// Small sizes, for a smoke run.
    #[arg(long)]
    quick: bool,

    /// Seed of the session generator.
    #[arg(long, default_value_t = 42)]
    seed: u64,

    /// Write the generated corpus (neutral JSONL) here and exit.
    #[arg(long, value_name = "FILE")]
    generate: Option<PathBuf>,

    /// Also time `memlog sync` of two clones diverged by 10,000 sessions each
    /// (1,000 with --quick).
    #[arg(long)]
    sync: bool,

    /// Events to generate with --generate.
    #[arg(long, default_value_t = 100_000)]
    events: usize,

    /// The corpus --generate writes: the bench's own one-line events, or
    /// realistic agent events (long tool output, code, paths).
    #[arg(long, value_enum, default_value = "bench")]
    corpus: Corpus,

    /// Also measure indexing and search at 1M events (takes minutes).
    #[arg(long)]
    million: bool,

    /// Only the log figures (import, seal, record).
    #[arg(long)]
    log_only: bool,
    /// Benchmark `memlog watch` instead (latency from a ref update to
    /// searchable, idle CPU over 60 s, resident memory with the model);
    /// takes two and a half minutes.
    #[arg(long)]
    watch: bool,

    /// Also benchmark `memlog mcp` through the Python MCP client
    /// (scripts/install-assets installs it): memory_search round trips at
    /// 100k events, and the server's resident memory.
    #[arg(long)]
    mcp: bool,

    /// Also benchmark the web viewer (`memlog serve`): timeline, session
    /// and search requests at 100k events, server time and round trip,
    /// next to `memlog search`.
    #[arg(long)]
    serve: bool,
    /// Retrieval quality on ../shared/eval/locomo-dev (recall@k, MRR,
    /// nDCG per search mode, even and odd questions apart); needs the
    /// embedding model (scripts/install-assets). Skipped with a message
    /// when the set is absent.
    #[arg(long)]
    locomo: bool,

    /// Injection on ../shared/eval/locomo-dev: what the UserPromptSubmit
    /// hook would inject for each question, with and without a warm
    /// process (hit rate, evidence recall, tokens, injection for questions
    /// the memory cannot answer), on the even and odd questions apart.
    #[arg(long)]
    inject: bool,

    /// Retrieval and injection on the LongMemEval dev questions converted
    /// by the set's lme_to_events.py (see --lme-dir), abstention questions
    /// included. Each haystack is embedded once (30-50 s on two idle
    /// cores) and kept in --eval-work. Skipped with a message when absent.
    #[arg(long)]
    lme: bool,

    /// Where the converted LongMemEval files are (default:
    /// $MEMLOG_LME_DIR, else eval-data/lme/data-lme beside the repository).
    #[arg(long, value_name = "DIR")]
    lme_dir: Option<PathBuf>,

    /// Which LongMemEval files: `<PREFIX>_events.jsonl` and so on (`lme`:
    /// every dev question; lme_to_events.py --subset 120 writes `lme120`).
    #[arg(long, value_name = "PREFIX", default_value = "lme")]
    lme_prefix: String,

    /// Injection on small memories (10-50 events, a user's first weeks)
    /// cut from LoCoMo and, with --lme, from LongMemEval.
    #[arg(long)]
    small: bool,

    /// Vector figures: the real model's throughput by batch size and HNSW
    /// recall on 20k of its vectors (kept in bench-embeddings.sqlite beside
    /// the memlog binary, so only the first run embeds them), then, with a
    /// stand-in embedder at 100k events (1M with --million), cold build,
    /// warm rebuild, hybrid search latency, size and RSS.
    #[arg(long)]
    vectors: bool,

    /// Embedding throughput against the model's own speed: memlog's path
    /// and ONNX Runtime's Python session (scripts/install-assets --bench)
    /// on the same model, texts, threads and batch, alternated (a minute).
    #[arg(long)]
    embedding: bool,

    /// One-shot hybrid `memlog search` at 20k events with the real model's
    /// vectors (embedded once, then kept in bench-embeddings.sqlite beside
    /// the binary): without a warm process, with `memlog watch`, and the
    /// model loaded in the process (`--mode vector`).
    #[arg(long)]
    one_shot: bool,

    /// Keep the evaluation memlogs (and their embedding caches) here
    /// between runs, so that each conversation is embedded once.
    #[arg(long, value_name = "DIR", alias = "locomo-work")]
    eval_work: Option<PathBuf>,

    /// Write each question's ranked refs and the gate's signals as JSON
    /// lines into this directory (`<set>-retrieval.jsonl`,
    /// `<set>-inject.jsonl`), for studying ranking and gate offline.
    #[arg(long, value_name = "DIR", alias = "locomo-dump")]
    eval_dump: Option<PathBuf>,

    /// The hot path, whole process, at 20k and 100k events (10k with
    /// --quick): `memlog search` against the `sqlite3` CLI on an FTS5 table
    /// of the same texts, the PostToolUse and UserPromptSubmit hooks,
    /// `memlog record`, and `memlog --version` against a hello world.
    #[arg(long)]
    lean: bool,

    /// Index build speed: whole-process `memlog rebuild --no-vectors` at
    /// 20k and 100k events (10k with --quick) of the bench's corpus and of
    /// realistic agent events.
    #[arg(long)]
    build: bool,

    /// Crash safety instead: N random SIGKILLs during record, seal, import,
    /// index and purge, then checks that every event is there exactly once,
    /// forgotten ones are erased, and both fscks are clean (fails otherwise).
    #[arg(long, value_name = "N")]
    kills: Option<usize>,

    /// The prompt path on a busy machine: at 20k events, 30 prompt hooks
    /// each right after a session sealed, quiet and then under two CPU
    /// burners and a writer that fsyncs without pause (injections, p95).
    #[arg(long)]
    busy: bool,
    /// The privacy filter instead: secrets of every rule's format sent in
    /// every way (hooks, record, imports, MCP) and searched for in every
    /// byte under .git, ordinary texts altered, usage errors echoing
    /// secrets, and redaction throughput against the number of rules.
    #[arg(long)]
    secrets: bool,

    /// With --secrets: an older memlog binary, whose PostToolUse hook with
    /// a 64 KB tool output is timed against this one's (alternating runs);
    /// with --build, whose rebuilds run in turn with this one's (the row
    /// gives new / old).
    #[arg(long, value_name = "BIN")]
    baseline: Option<PathBuf>,

    /// File-aware recall (PreToolUse) on held-out sessions made here:
    /// precision, recall and the hook's time.
    #[arg(long)]
    file_recall: bool,

    /// A team's year instead: 50 engineers × 250 days × 4 sessions (2.5M
    /// events, one commit per session) shared through a bare remote; a
    /// day's sync at each quarter, a newcomer's clone and first index,
    /// search, the prompt hook and disk (with --quick: 10 engineers × 20
    /// days). Takes a long while: run it by hand, not in CI.
    #[arg(long)]
    team_year: bool,

    /// Run only the sections asked for (with --mcp: only the MCP one).
    #[arg(long)]
    only: bool,
}

/// Which generated corpus a figure is measured on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Corpus {
    /// The bench's own generator: one-line events, a few hundred identifiers.
    Bench,
    /// Agent events as hooks record them: long tool output, code, paths.
    Realistic,
}

impl Corpus {
    /// `sessions` sessions of `per_session` events, as neutral JSONL.
    pub fn text(self, seed: u64, sessions: usize, per_session: usize) -> String {
        match self {
            Corpus::Bench => generator::corpus(seed, sessions, per_session),
            Corpus::Realistic => realistic::corpus(seed, sessions, per_session),
        }
    }

    /// `n` queries of the kind this corpus is searched with.
    pub fn queries(self, seed: u64, n: usize) -> Vec<String> {
        match self {
            Corpus::Bench => generator::queries(seed, n),
            Corpus::Realistic => realistic::queries(seed, n),
        }
    }

    /// How a table row names it.
    pub fn label(self) -> &'static str {
        match self {
            Corpus::Bench => "the bench corpus",
            Corpus::Realistic => "realistic agent events",
        }
    }
}

pub struct Row {
    pub name: String,
    pub value: String,
    pub target: String,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    if let Some(path) = &args.generate {
        let per_session = 100;
        let text = args
            .corpus
            .text(args.seed, args.events.div_ceil(per_session), per_session);
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
        return Ok(());
    }
    let bin = memlog_bin()?;
    let mut rows = Vec::new();
    if let Some(kills) = args.kills {
        rows.extend(kills::bench(&bin, args.seed, kills)?);
        print_table(rows);
        return Ok(());
    }
    if args.secrets {
        secrets::bench(&bin, args.seed, args.baseline.as_deref(), &mut rows)?;
        print_table(rows);
        return Ok(());
    }
    if args.team_year {
        let team = if args.quick {
            team_year::Team::quick()
        } else {
            team_year::Team::year()
        };
        team_year::bench(&bin, args.seed, &team, &mut rows)?;
        print_table(rows);
        return Ok(());
    }
    if args.watch {
        rows.extend(watch::bench_watch(&bin, args.seed, args.quick)?);
        rows.extend(watch::bench_watch_memory(&bin, args.seed, args.quick)?);
        print_table(rows);
        return Ok(());
    }
    let import_events = if args.quick { 10_000 } else { 100_000 };
    if !args.only {
        rows.push(bench_import(&bin, args.seed, import_events)?);
        rows.extend(bench_seal(&bin, if args.quick { 2 } else { 7 })?);
        rows.push(bench_record(&bin, if args.quick { 30 } else { 300 })?);
        if !args.log_only {
            let events = if args.quick { 10_000 } else { 100_000 };
            search::bench(&bin, args.seed, events, &mut rows)?;
            if args.million && !args.quick {
                search::bench(&bin, args.seed, 1_000_000, &mut rows)?;
            }
            hooks::bench(
                &bin,
                args.seed,
                events,
                if args.quick { 20 } else { 100 },
                &mut rows,
            )?;
        }
    }
    if args.lean {
        let (sizes, runs): (&[usize], usize) = if args.quick {
            (&[10_000], 20)
        } else {
            (&[20_000, 100_000], 100)
        };
        rows.extend(lean::bench(&bin, args.seed, sizes, runs)?);
    }
    if args.busy {
        hooks::busy(&bin, args.seed, if args.quick { 10 } else { 30 }, &mut rows)?;
    }
    if args.build {
        let sizes: &[usize] = if args.quick {
            &[10_000]
        } else {
            &[20_000, 100_000]
        };
        build::bench(&bin, args.baseline.as_deref(), args.seed, sizes, &mut rows)?;
    }
    if args.sync {
        rows.extend(bench_sync(
            &bin,
            args.seed,
            if args.quick { 1_000 } else { 10_000 },
        )?);
    }
    if args.embedding || args.vectors {
        let batch = memlog_format::config::EmbeddingConfig::default().batch_size;
        ort::bench(args.seed, batch, &mut rows)?;
    }
    if args.one_shot {
        let cache = bin.with_file_name("bench-embeddings.sqlite");
        oneshot::bench(&bin, args.seed, 20_000, &cache, &mut rows)?;
    }
    if args.vectors {
        let rate = vectors::throughput(args.seed, &mut rows)?;
        let cache = bin.with_file_name("bench-embeddings.sqlite");
        let real = if args.quick { 2_000 } else { 20_000 };
        vectors::real_recall(args.seed, real, &cache, &mut rows)?;
        let events = if args.quick { 10_000 } else { 100_000 };
        vectors::scale(&bin, args.seed, events, rate, true, &mut rows)?;
        if args.million && !args.quick {
            vectors::scale(&bin, args.seed, 1_000_000, rate, false, &mut rows)?;
        }
    }
    if args.locomo || args.inject || args.lme || args.small {
        quality(&bin, &args, &mut rows)?;
    }
    if args.file_recall {
        file_recall::bench(&bin, args.seed, args.quick, &mut rows)?;
    }
    if args.mcp {
        rows.extend(bench_mcp(&bin, args.seed, import_events, args.quick)?);
    }
    if args.serve {
        rows.extend(serve::bench(&bin, args.seed, import_events, args.quick)?);
    }
    print_table(rows);
    Ok(())
}

/// Retrieval and injection quality on the shared sets that are present.
fn quality(bin: &Path, args: &Args, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    let mut eval =
        eval_sets::Evaluation::open(args.eval_work.as_deref(), args.eval_dump.as_deref())?;
    let locomo = match eval_sets::find_locomo() {
        Some(dir) => Some(eval_sets::EvalSet::locomo(&dir)?),
        None => {
            eprintln!("LoCoMo set not found (../shared/eval/locomo-dev): skipped");
            None
        }
    };
    let lme = if args.lme {
        match eval_sets::find_lme(args.lme_dir.as_deref(), &args.lme_prefix) {
            Some(dir) => Some(eval_sets::EvalSet::lme(&dir, &args.lme_prefix)?),
            None => {
                eprintln!(
                    "LongMemEval set not found ({}_queries.jsonl in --lme-dir, $MEMLOG_LME_DIR or ../eval-data/lme/data-lme): skipped",
                    args.lme_prefix
                );
                None
            }
        }
    } else {
        None
    };
    if let Some(set) = &locomo {
        if args.locomo {
            eval_sets::retrieval(bin, &mut eval, set, rows)?;
        }
        if args.inject {
            eval_sets::injection(bin, &mut eval, set, rows)?;
        }
    }
    if let Some(set) = &lme {
        eval_sets::retrieval(bin, &mut eval, set, rows)?;
        eval_sets::injection(bin, &mut eval, set, rows)?;
    }
    if args.small {
        for set in locomo.iter().chain(&lme) {
            eval_sets::injection(bin, &mut eval, &set.small(), rows)?;
        }
    }
    Ok(())
}

fn print_table(rows: Vec<Row>) {
    println!("| benchmark | result | target |");
    println!("|---|---|---|");
    for r in rows {
        println!("| {} | {} | {} |", r.name, r.value, r.target);
    }
}

/// The memlog binary next to this one.
fn memlog_bin() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let bin = exe.with_file_name(format!("memlog{}", std::env::consts::EXE_SUFFIX));
    if !bin.exists() {
        bail!(
            "{} is missing: cargo build --release -p memlog",
            bin.display()
        );
    }
    Ok(bin)
}

pub(crate) fn git(dir: &Path, args: &[&str]) -> anyhow::Result<()> {
    let status = Command::new("git").current_dir(dir).args(args).status()?;
    if !status.success() {
        bail!("git {args:?} failed");
    }
    Ok(())
}

/// A new repository. Semantic search is off in it (`.memlog.yaml`), so
/// that full-text figures do not include embedding, which is measured on
/// its own (`--vectors`, `--locomo`).
pub fn fresh_repo() -> anyhow::Result<tempfile::TempDir> {
    let dir = tempfile::Builder::new().prefix("memlog-bench-").tempdir()?;
    git(dir.path(), &["init", "-q"])?;
    std::fs::write(
        dir.path().join(".memlog.yaml"),
        "embedding:\n  enabled: false\n",
    )?;
    Ok(dir)
}

/// "100k", "1M".
pub fn size_label(events: usize) -> String {
    if events >= 1_000_000 {
        format!("{}M", events / 1_000_000)
    } else {
        format!("{}k", events / 1000)
    }
}

/// A fresh repository holding the generator's corpus of `events` events
/// (sessions of 100), imported with the real binary.
pub fn imported_repo(bin: &Path, seed: u64, events: usize) -> anyhow::Result<tempfile::TempDir> {
    imported_corpus(bin, Corpus::Bench, seed, events)
}

/// A fresh repository holding `corpus`'s `events` events (sessions of
/// 100), imported with the real binary.
pub fn imported_corpus(
    bin: &Path,
    corpus: Corpus,
    seed: u64,
    events: usize,
) -> anyhow::Result<tempfile::TempDir> {
    let repo = fresh_repo()?;
    let file = tempfile::NamedTempFile::new()?;
    std::fs::write(file.path(), corpus.text(seed, events / 100, 100))?;
    run(
        bin,
        repo.path(),
        &[
            "import",
            "jsonl",
            "--no-index",
            &file.path().to_string_lossy(),
        ],
    )?;
    Ok(repo)
}

pub fn run(bin: &Path, dir: &Path, args: &[&str]) -> anyhow::Result<Duration> {
    let t = Instant::now();
    let out = Command::new(bin).current_dir(dir).args(args).output()?;
    let elapsed = t.elapsed();
    if !out.status.success() {
        bail!("memlog {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(elapsed)
}

/// Runs the Python `script` with `request` on its standard input and
/// reads the JSON object it prints.
pub fn python_json(
    python: &Path,
    script: &Path,
    request: &serde_json::Value,
) -> anyhow::Result<serde_json::Value> {
    use std::io::Write;
    let mut child = Command::new(python)
        .arg(script)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .with_context(|| format!("starting {}", python.display()))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(request.to_string().as_bytes())?;
    }
    let out = child.wait_with_output()?;
    if !out.status.success() {
        bail!("{} failed ({})", script.display(), out.status);
    }
    serde_json::from_slice(&out.stdout)
        .with_context(|| format!("reading {}'s report", script.display()))
}

/// Starts `memlog watch` in `dir` and waits until its warm socket is there
/// (the model, when there is one, is loaded by then).
pub fn start_watch(bin: &Path, dir: &Path) -> anyhow::Result<std::process::Child> {
    let watch = Command::new(bin)
        .arg("watch")
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    let socket = memlog_store::Repo::discover(dir)?.layout().warm_socket();
    let deadline = Instant::now() + Duration::from_secs(120);
    while !socket.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(watch)
}

pub fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let i = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[i.min(samples.len() - 1)]
}

pub fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn bench_import(bin: &Path, seed: u64, events: usize) -> anyhow::Result<Row> {
    let per_session = 100;
    let text = generator::corpus(seed, events / per_session, per_session);
    let file = tempfile::NamedTempFile::new()?;
    std::fs::write(file.path(), text)?;
    let path = file.path().to_string_lossy().to_string();
    let mut times = Vec::new();
    for _ in 0..3 {
        let repo = fresh_repo()?;
        times.push(run(
            bin,
            repo.path(),
            &["import", "jsonl", "--no-index", &path],
        )?);
    }
    let median = percentile(&mut times, 0.5);
    Ok(Row {
        name: format!(
            "import {events} events ({} sessions), whole process",
            events / per_session
        ),
        value: format!(
            "{:.0} events/s ({})",
            events as f64 / median.as_secs_f64(),
            ms(median)
        ),
        target: "≥ 100k events/s".into(),
    })
}

fn bench_seal(bin: &Path, runs: usize) -> anyhow::Result<Vec<Row>> {
    let repo_dir = fresh_repo()?;
    let repo = Repo::discover(repo_dir.path())?;
    repo.ensure_dirs()?;
    let recorder = Recorder::new(&repo)?;
    let mut r = generator::Rng::new(7);
    let fill = |session: &str, r: &mut generator::Rng| -> anyhow::Result<()> {
        let drafts: Vec<Draft> = generator::session(r, 0, 1000, 1_767_225_600)
            .into_iter()
            .map(|v| {
                let kind = Kind::parse(v["kind"].as_str().unwrap_or("note"));
                Draft::text(
                    session,
                    v["ts"].as_str().unwrap_or_default(),
                    kind,
                    "bench",
                    v["text"].as_str().unwrap_or_default(),
                )
            })
            .collect();
        recorder.record(drafts)?;
        Ok(())
    };
    let mut in_process = Vec::new();
    for i in 0..runs {
        let session = format!("seal-{i}");
        fill(&session, &mut r)?;
        let t = Instant::now();
        let report = seal_journals(&repo, &JournalSelection::Session(session))?;
        in_process.push(t.elapsed());
        if report.sealed.first().map(|s| s.added) != Some(1000) {
            bail!("seal did not add 1000 events");
        }
    }
    let mut whole = Vec::new();
    for i in 0..runs {
        let session = format!("seal-cli-{i}");
        fill(&session, &mut r)?;
        whole.push(run(bin, repo_dir.path(), &["seal", "--session", &session])?);
    }
    Ok(vec![
        Row {
            name: "seal a 1,000-event session, in-process (median)".into(),
            value: ms(percentile(&mut in_process, 0.5)),
            target: "≤ 50 ms".into(),
        },
        Row {
            name: "seal a 1,000-event session, whole process (median)".into(),
            value: ms(percentile(&mut whole, 0.5)),
            target: "≤ 50 ms".into(),
        },
    ])
}

fn bench_record(bin: &Path, runs: usize) -> anyhow::Result<Row> {
    let repo = fresh_repo()?;
    run(bin, repo.path(), &["init"])?;
    let mut times = Vec::with_capacity(runs);
    for i in 0..runs {
        let text = format!("Edited src/auth/token.rs: getTokenById now checks expiry (run {i})");
        times.push(run(
            bin,
            repo.path(),
            &[
                "record",
                "--session",
                "bench",
                "--kind",
                "note",
                "--text",
                &text,
            ],
        )?);
    }
    let p50 = percentile(&mut times, 0.5);
    let p95 = percentile(&mut times, 0.95);
    Ok(Row {
        name: format!("`memlog record`, whole process ({runs} runs)"),
        value: format!("p50 {} / p95 {}", ms(p50), ms(p95)),
        target: "≤ 5 ms median".into(),
    })
}

/// Writes `sessions` generated sessions of 5 events each, their ids
/// prefixed by `clone` so two clones seal different sessions.
fn sessions_file(
    seed: u64,
    sessions: usize,
    clone: &str,
) -> anyhow::Result<tempfile::NamedTempFile> {
    let text =
        generator::corpus(seed, sessions, 5).replace("\"bench-", &format!("\"{clone}-bench-"));
    let file = tempfile::NamedTempFile::new()?;
    std::fs::write(file.path(), text)?;
    Ok(file)
}

fn git_output(dir: &Path, args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new("git").current_dir(dir).args(args).output()?;
    if !out.status.success() {
        bail!("git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Two clones of a bare remote share a small memlog, then each imports
/// `sessions` sessions of its own; the first syncs (a fast-forward push),
/// and the second's `memlog sync` (fetch, union merge, push; indexing left
/// out) is timed.
fn bench_sync(bin: &Path, seed: u64, sessions: usize) -> anyhow::Result<Vec<Row>> {
    let root = tempfile::Builder::new()
        .prefix("memlog-bench-sync-")
        .tempdir()?;
    let remote = root.path().join("remote.git");
    git(root.path(), &["init", "-q", "--bare", "remote.git"])?;
    let remote_path = remote.to_string_lossy().to_string();
    let mut clones = Vec::new();
    for name in ["a", "b"] {
        git(root.path(), &["clone", "-q", &remote_path, name])?;
        clones.push(root.path().join(name));
    }
    let (a, b) = (&clones[0], &clones[1]);
    let base = sessions_file(seed, 10, "base")?;
    run(
        bin,
        a,
        &[
            "import",
            "jsonl",
            "--no-index",
            &base.path().to_string_lossy(),
        ],
    )?;
    run(bin, a, &["sync", "origin", "--no-index"])?;
    run(bin, b, &["sync", "origin", "--no-index"])?;
    for (clone, name, s) in [(a, "a", seed + 1), (b, "b", seed + 2)] {
        let file = sessions_file(s, sessions, name)?;
        run(
            bin,
            clone,
            &[
                "import",
                "jsonl",
                "--no-index",
                &file.path().to_string_lossy(),
            ],
        )?;
    }
    run(bin, a, &["sync", "origin", "--no-index"])?;
    let elapsed = run(bin, b, &["sync", "origin", "--no-index"])?;
    let merges = git_output(b, &["rev-list", "--merges", "--count", "refs/heads/memlog"])?;
    let commits = git_output(b, &["rev-list", "--count", "refs/heads/memlog"])?;
    let tip_a = {
        run(bin, a, &["sync", "origin", "--no-index"])?;
        git_output(a, &["rev-parse", "refs/heads/memlog"])?
    };
    let tip_b = git_output(b, &["rev-parse", "refs/heads/memlog"])?;
    if tip_a != tip_b {
        bail!("clones did not converge after sync");
    }
    Ok(vec![
        Row {
            name: format!(
                "`memlog sync` of two clones diverged by {sessions} sessions each ({commits} commits after), whole process"
            ),
            value: format!("{:.2} s", elapsed.as_secs_f64()),
            target: "—".into(),
        },
        Row {
            name: "merge commits made by that sync".into(),
            value: merges,
            target: "1".into(),
        },
    ])
}

/// The Python of the project's venv with the MCP client, if installed.
fn python_mcp_client() -> Option<PathBuf> {
    let venv = std::env::var_os("MEMLOG_PY_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/py"));
    let python = venv.join("bin/python");
    python.exists().then_some(python)
}

/// `memory_search` round trips through the reference MCP client (the
/// Python `mcp` package, via tests/mcp/client.py) on a repository of
/// `events` generated events, and the server's resident memory when idle
/// (started, initialized, nothing asked yet) and after the searches.
fn bench_mcp(bin: &Path, seed: u64, events: usize, quick: bool) -> anyhow::Result<Vec<Row>> {
    let Some(python) = python_mcp_client() else {
        return Ok(vec![Row {
            name: "`memory_search` through the MCP client".into(),
            value: "skipped: the Python MCP client is not installed (scripts/install-assets)"
                .into(),
            target: "p50 ≤ 10 ms".into(),
        }]);
    };
    let repo = imported_repo(bin, seed, events)?;
    // Build the projections first: the benchmark is about serving.
    run(bin, repo.path(), &["index"])?;
    let runs = if quick { 50 } else { 300 };
    let queries = [
        "getUserById",
        "validate token expiry",
        "billing invoice",
        "src/auth",
        "parseConfigFromCache",
        "scheduler timeout",
        "fetch order batch",
        "render report",
        "cache miss",
        "router resolve route",
    ];
    let request = serde_json::json!({
        "memlog": bin,
        "repo": repo.path(),
        "bench": {
            "tool": "memory_search",
            "args": {"query": queries[0], "limit": 10},
            "queries": queries,
            "runs": runs,
            "warmup": 10,
        },
    });
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/mcp/client.py");
    let report = python_json(&python, &script, &request)?;
    let bench = &report["bench"];
    let ms_of = |k: &str| {
        bench[k]
            .as_f64()
            .map(|v| format!("{v:.2} ms"))
            .unwrap_or("-".into())
    };
    let mib_of = |k: &str| {
        bench[k]
            .as_f64()
            .map(|kib| format!("{:.1} MiB", kib / 1024.0))
            .unwrap_or("-".into())
    };
    Ok(vec![
        Row {
            name: format!(
                "`memory_search` round trip through the Python MCP client, {events} events ({runs} calls)"
            ),
            value: format!("p50 {} / p95 {}", ms_of("p50_ms"), ms_of("p95_ms")),
            target: "p50 ≤ 10 ms".into(),
        },
        Row {
            name: "`memlog mcp` resident memory: idle / after the searches".into(),
            value: format!("{} / {}", mib_of("idle_rss_kib"), mib_of("rss_after_kib")),
            target: "—".into(),
        },
    ])
}
