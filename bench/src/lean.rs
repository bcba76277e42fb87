//! The hot path, whole process (`--lean`): what an agent pays on every
//! prompt and tool call, each command run as its own process the way
//! Claude Code runs hooks. In one run, at 20k and 100k events:
//! `memlog search` against the `sqlite3` command-line shell querying an
//! FTS5 table of the same texts (the same queries, alternated, so both see
//! the same machine), on the bench's corpus and on realistic agent events
//! (long tool output, code, paths), the PostToolUse and UserPromptSubmit hooks, `memlog
//! record`, and `memlog --version` against a hello-world binary built with
//! the same profile (`memlog-bench-hello`).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::json;

use crate::{Corpus, Row, generator, ms, percentile, run, size_label};

/// Queries per size, each run by both `memlog search` and `sqlite3`.
const QUERIES: usize = 50;

pub fn bench(bin: &Path, seed: u64, sizes: &[usize], runs: usize) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    rows.extend(bench_version(bin, runs * 2)?);
    for &events in sizes {
        rows.extend(bench_size(bin, seed, events, runs)?);
    }
    Ok(rows)
}

/// Runs `cmd` to completion, its output discarded, and says how long it
/// took; a failure is an error (a benchmark of a failing command is no
/// benchmark).
pub(crate) fn time_process(cmd: &mut Command, stdin: Option<&[u8]>) -> anyhow::Result<Duration> {
    let t = Instant::now();
    let mut child = cmd
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("starting {cmd:?}"))?;
    if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(bytes)?;
    }
    let status = child.wait()?;
    let took = t.elapsed();
    if !status.success() {
        bail!("{cmd:?} failed ({status})");
    }
    Ok(took)
}

pub(crate) fn p50_p95(samples: &[Duration]) -> String {
    let mut s = samples.to_vec();
    format!(
        "p50 {} / p95 {}",
        ms(percentile(&mut s, 0.5)),
        ms(percentile(&mut s, 0.95))
    )
}

fn p50(samples: &[Duration]) -> Duration {
    percentile(&mut samples.to_vec(), 0.5)
}

/// The hello world built beside `bin` (`memlog-bench-hello`).
fn hello_binary(bin: &Path) -> anyhow::Result<std::path::PathBuf> {
    let hello = bin.with_file_name(format!(
        "memlog-bench-hello{}",
        std::env::consts::EXE_SUFFIX
    ));
    if !hello.exists() {
        bail!(
            "{} is missing: cargo build --release -p memlog-bench",
            hello.display()
        );
    }
    Ok(hello)
}

/// `memlog --version` and a hello world, alternated.
fn bench_version(bin: &Path, runs: usize) -> anyhow::Result<Vec<Row>> {
    let hello = hello_binary(bin)?;
    let mut ours = Vec::with_capacity(runs);
    let mut theirs = Vec::with_capacity(runs);
    for _ in 0..runs {
        ours.push(time_process(Command::new(bin).arg("--version"), None)?);
        theirs.push(time_process(&mut Command::new(&hello), None)?);
    }
    let gap = p50(&ours).as_secs_f64() - p50(&theirs).as_secs_f64();
    Ok(vec![Row {
        name: format!(
            "`memlog --version` / a hello-world binary of the same profile, whole process ({runs} runs each)"
        ),
        value: format!(
            "{} / {}: {:+.2} ms at p50",
            p50_p95(&ours),
            p50_p95(&theirs),
            gap * 1000.0
        ),
        target: "within 1 ms".into(),
    }])
}

fn bench_size(bin: &Path, seed: u64, events: usize, runs: usize) -> anyhow::Result<Vec<Row>> {
    let label = size_label(events);
    let mut rows = Vec::new();
    // Realistic agent events first: long tool output makes both sides'
    // indexes larger, and the one-line corpus below is what the hooks run on.
    {
        let repo = crate::imported_corpus(bin, Corpus::Realistic, seed, events)?;
        run(bin, repo.path(), &["index"])?;
        rows.push(search_vs_sqlite3(
            bin,
            repo.path(),
            Corpus::Realistic,
            seed,
            &label,
        )?);
    }
    let repo = crate::imported_repo(bin, seed, events)?;
    run(bin, repo.path(), &["index"])?;
    rows.push(search_vs_sqlite3(
        bin,
        repo.path(),
        Corpus::Bench,
        seed,
        &label,
    )?);
    rows.extend(hot_commands(bin, repo.path(), seed, &label, runs)?);
    Ok(rows)
}

/// `memlog search` and the `sqlite3` shell on an FTS5 table of the same
/// texts, the same queries, alternated.
fn search_vs_sqlite3(
    bin: &Path,
    repo: &Path,
    corpus: Corpus,
    seed: u64,
    label: &str,
) -> anyhow::Result<Row> {
    let fts5 = tempfile::NamedTempFile::new()?;
    fill_fts5(&repo.join(".git/memlog/index/graph.sqlite"), fts5.path())?;
    let sqlite3 = which("sqlite3");

    let queries = corpus.queries(seed, QUERIES);
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    // Twice over the queries: the first pass warms the page cache for both.
    for pass in 0..2 {
        for q in &queries {
            let t = time_process(
                Command::new(bin)
                    .args(["search", q, "-n", "10"])
                    .current_dir(repo),
                None,
            )?;
            let s = match &sqlite3 {
                Some(sqlite3) => Some(time_process(
                    Command::new(sqlite3)
                        .arg("-readonly")
                        .arg(fts5.path())
                        .arg(fts5_query(q)),
                    None,
                )?),
                None => None,
            };
            if pass == 1 {
                ours.push(t);
                theirs.extend(s);
            }
        }
    }
    Ok(Row {
        name: format!(
            "`memlog search` / `sqlite3` CLI on an FTS5 table of the same texts, whole process, {label} events of {} ({QUERIES} queries each)",
            corpus.label()
        ),
        value: if theirs.is_empty() {
            format!("{} / sqlite3 not installed", p50_p95(&ours))
        } else {
            format!(
                "{} / {}: **{:.1}×** faster at p50",
                p50_p95(&ours),
                p50_p95(&theirs),
                p50(&theirs).as_secs_f64() / p50(&ours).as_secs_f64().max(1e-9)
            )
        },
        target: "≥ 3× faster".into(),
    })
}

/// The hooks and record, alternated, on the same repository, with the
/// hello world among them: this machine's speed drifts, and the hello
/// world says how fast it was while they ran.
fn hot_commands(
    bin: &Path,
    repo: &Path,
    seed: u64,
    label: &str,
    runs: usize,
) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    let cwd = repo.display().to_string();
    let prompts = generator::queries(seed ^ 1, runs);
    let (mut post, mut prompt, mut record) = (Vec::new(), Vec::new(), Vec::new());
    let mut hello_times = Vec::new();
    let hello = hello_binary(bin)?;
    for (i, q) in prompts.iter().enumerate() {
        hello_times.push(time_process(&mut Command::new(&hello), None)?);
        let tool = json!({
            "session_id": "bench-lean", "cwd": cwd, "hook_event_name": "PostToolUse",
            "tool_name": "Read", "tool_input": {"file_path": "src/auth/token.rs"},
            "tool_response": {"type": "text", "file": {"filePath": "src/auth/token.rs", "content": format!("fn get_token_by_id() {{}} // {i}"), "numLines": 1}}
        });
        post.push(time_process(
            Command::new(bin)
                .args(["hook", "PostToolUse"])
                .current_dir(repo),
            Some(tool.to_string().as_bytes()),
        )?);
        let p = json!({"session_id": "bench-lean", "cwd": cwd, "hook_event_name": "UserPromptSubmit", "prompt": q});
        prompt.push(time_process(
            Command::new(bin)
                .args(["hook", "UserPromptSubmit"])
                .current_dir(repo),
            Some(p.to_string().as_bytes()),
        )?);
        let text = format!("Edited src/auth/token.rs: getTokenById now checks expiry (run {i})");
        record.push(time_process(
            Command::new(bin)
                .args([
                    "record",
                    "--session",
                    "bench-lean-record",
                    "--kind",
                    "note",
                    "--text",
                    &text,
                ])
                .current_dir(repo),
            None,
        )?);
    }
    rows.push(Row {
        name: format!(
            "hello world, whole process, run between the commands below ({runs} runs): how fast the machine was meanwhile"
        ),
        value: p50_p95(&hello_times),
        target: "(reference)".into(),
    });
    rows.push(Row {
        name: format!("`memlog hook PostToolUse`, whole process, {label} events ({runs} runs)"),
        value: p50_p95(&post),
        target: "p50 ≤ 3 ms".into(),
    });
    rows.push(Row {
        name: format!("`memlog record`, whole process, {label} events ({runs} runs)"),
        value: p50_p95(&record),
        target: "p50 ≤ 2 ms".into(),
    });
    rows.push(Row {
        name: format!(
            "`memlog hook UserPromptSubmit` with injection, whole process, {label} events ({runs} runs)"
        ),
        value: p50_p95(&prompt),
        target: "p50 ≤ 10 ms at 100k".into(),
    });
    Ok(rows)
}

/// The FTS5 form of a query: its words, quoted, joined by OR (the same
/// expression the in-process yardstick uses), as one SQL statement.
fn fts5_query(q: &str) -> String {
    let words: Vec<String> = q
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| format!("\"{w}\""))
        .collect();
    format!(
        "SELECT id FROM t WHERE t MATCH '{}' ORDER BY rank LIMIT 10;",
        words.join(" OR ")
    )
}

/// An FTS5 table (unicode61 tokenizer, BM25) of the indexed events' texts.
fn fill_fts5(graph: &Path, db: &Path) -> anyhow::Result<()> {
    let conn = rusqlite::Connection::open(db)?;
    conn.execute_batch(
        "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; CREATE VIRTUAL TABLE t USING fts5(id UNINDEXED, text);",
    )?;
    let src =
        rusqlite::Connection::open_with_flags(graph, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let tx = conn.unchecked_transaction()?;
    {
        let mut ins = tx.prepare("INSERT INTO t(id, text) VALUES (?1, ?2)")?;
        let mut sel = src.prepare("SELECT id, text FROM events")?;
        let mut rows = sel.query([])?;
        while let Some(r) = rows.next()? {
            ins.execute(rusqlite::params![
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?
            ])?;
        }
    }
    tx.commit()?;
    conn.execute_batch("INSERT INTO t(t) VALUES ('optimize');")?;
    Ok(())
}

/// `name` on the PATH, if there.
fn which(name: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}
