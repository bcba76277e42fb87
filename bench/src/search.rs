//! Search and indexing figures: rebuild, incremental index, search latency
//! in-process and whole-process, index size, peak RSS, and the same
//! queries through SQLite FTS5 as a yardstick.

use std::path::Path;
use std::time::{Duration, Instant};

use memlog_indexer::Projections;
use memlog_indexer::search::{SearchRequest, search};
use memlog_store::Repo;

use crate::{Row, generator, ms, percentile, run};

pub fn bench(bin: &Path, seed: u64, events: usize, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    let label = crate::size_label(events);
    let repo_dir = crate::imported_repo(bin, seed, events)?;

    let t = Instant::now();
    run(bin, repo_dir.path(), &["rebuild"])?;
    let rebuild = t.elapsed();
    rows.push(Row {
        name: format!("rebuild the index, {label} events (whole process)"),
        value: format!(
            "{:.1} s ({:.0} events/s)",
            rebuild.as_secs_f64(),
            events as f64 / rebuild.as_secs_f64()
        ),
        target: "≥ 50k events/s".into(),
    });

    // one more 1,000-event session on top, indexed incrementally
    let extra = tempfile::NamedTempFile::new()?;
    let mut r = generator::Rng::new(seed + 1);
    let lines: String = generator::session(&mut r, 9_999_999, 1000, 1_800_000_000)
        .into_iter()
        .map(|v| v.to_string() + "\n")
        .collect();
    std::fs::write(extra.path(), lines)?;
    run(
        bin,
        repo_dir.path(),
        &[
            "import",
            "jsonl",
            "--no-index",
            &extra.path().to_string_lossy(),
        ],
    )?;
    let t = Instant::now();
    run(bin, repo_dir.path(), &["index"])?;
    rows.push(Row {
        name: format!("incremental index of a 1,000-event session on {label} (whole process)"),
        value: ms(t.elapsed()),
        target: "≤ 200 ms".into(),
    });

    // An update leaves its database pages in the write-ahead log; copying
    // them into the database is deferred to `memlog watch`'s idle time (or
    // an update once the log passes 64 MB). Its cost, for the record:
    let repo = Repo::discover(repo_dir.path())?;
    let t = Instant::now();
    Projections::open(&repo)?.checkpoint(0)?;
    rows.push(Row {
        name: format!("…then the deferred database checkpoint of that update, on {label}"),
        value: ms(t.elapsed()),
        target: "-".into(),
    });

    let queries = generator::queries(seed, 200);
    let p = Projections::open(&repo)?;
    let mut inproc = Vec::new();
    for q in &queries {
        inproc.push(timed_search(
            &p,
            &repo,
            SearchRequest {
                query: q.clone(),
                limit: 10,
                ..Default::default()
            },
        )?);
    }
    rows.push(Row {
        name: format!("search, in-process, {label} events (200 queries)"),
        value: format!(
            "p50 {} / p95 {}",
            ms(percentile(&mut inproc.clone(), 0.5)),
            ms(percentile(&mut inproc, 0.95))
        ),
        target: "p50 ≤ 5 ms at 1M".into(),
    });

    let mut whole = Vec::new();
    let mut peak_kb = 0u64;
    for q in queries.iter().take(40) {
        let t = Instant::now();
        let out = std::process::Command::new("/usr/bin/time")
            .args(["-f", "%M"])
            .arg(bin)
            .args(["search", q, "-n", "10"])
            .current_dir(repo_dir.path())
            .output()?;
        whole.push(t.elapsed());
        let stderr = String::from_utf8_lossy(&out.stderr);
        if let Some(kb) = stderr
            .lines()
            .last()
            .and_then(|l| l.trim().parse::<u64>().ok())
        {
            peak_kb = peak_kb.max(kb);
        }
    }
    rows.push(Row {
        name: format!("`memlog search`, whole process, {label} events (40 runs)"),
        value: format!(
            "p50 {} / p95 {}",
            ms(percentile(&mut whole.clone(), 0.5)),
            ms(percentile(&mut whole, 0.95))
        ),
        target: "p50 ≤ 30 ms at 1M".into(),
    });
    rows.push(Row {
        name: format!("peak RSS of `memlog search`, {label} events"),
        value: format!("{:.0} MB", peak_kb as f64 / 1024.0),
        target: "≤ 300 MB".into(),
    });
    let index_dir = repo.memlog_dir.join("index");
    rows.push(Row {
        name: format!("index size on disk, {label} events (full-text + database)"),
        value: format!(
            "{:.0} MB + {:.0} MB",
            dir_size(&index_dir.join("fts")) as f64 / 1e6,
            file_size(&index_dir.join("graph.sqlite")) as f64 / 1e6
        ),
        target: "-".into(),
    });

    // SQLite FTS5 over the same texts, same queries, as a yardstick
    let fts5 = fts5_p50(&repo, &queries)?;
    let ours = percentile(&mut inproc.clone(), 0.5);
    rows.push(Row {
        name: format!("SQLite FTS5 on the same corpus, in-process p50, {label}"),
        value: format!(
            "{} (memlog / FTS5 = {:.2})",
            ms(fts5),
            ours.as_secs_f64() / fts5.as_secs_f64().max(1e-9)
        ),
        target: "-".into(),
    });
    Ok(())
}

/// Builds an FTS5 table of the indexed texts (unicode61 tokenizer, BM25)
/// and times the same queries (OR of their words, top 10 by rank).
fn fts5_p50(repo: &Repo, queries: &[String]) -> anyhow::Result<Duration> {
    let db = tempfile::NamedTempFile::new()?;
    let conn = rusqlite::Connection::open(db.path())?;
    conn.execute_batch("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; CREATE VIRTUAL TABLE t USING fts5(id UNINDEXED, text);")?;
    let src = rusqlite::Connection::open_with_flags(
        repo.memlog_dir.join("index/graph.sqlite"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )?;
    {
        let tx = conn.unchecked_transaction()?;
        let mut ins = tx.prepare("INSERT INTO t(id, text) VALUES (?1, ?2)")?;
        let mut sel = src.prepare("SELECT id, text FROM events")?;
        let mut rows = sel.query([])?;
        while let Some(r) = rows.next()? {
            ins.execute(rusqlite::params![
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?
            ])?;
        }
        drop(ins);
        tx.commit()?;
    }
    let mut stmt = conn.prepare("SELECT id FROM t WHERE t MATCH ?1 ORDER BY rank LIMIT 10")?;
    let mut times = Vec::new();
    for q in queries {
        let words: Vec<String> = q
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(|w| format!("\"{w}\""))
            .collect();
        if words.is_empty() {
            continue;
        }
        let expr = words.join(" OR ");
        let t = Instant::now();
        let ids: Vec<String> = stmt
            .query_map([&expr], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        times.push(t.elapsed());
        std::hint::black_box(ids);
    }
    Ok(percentile(&mut times, 0.5))
}

fn file_size(p: &Path) -> u64 {
    std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)
}

/// How long one in-process search takes.
pub fn timed_search(
    p: &Projections,
    repo: &Repo,
    request: SearchRequest,
) -> anyhow::Result<Duration> {
    let t = Instant::now();
    let hits = search(p, &repo.config.ranking, &request)?;
    let took = t.elapsed();
    std::hint::black_box(hits);
    Ok(took)
}

pub fn dir_size(p: &Path) -> u64 {
    std::fs::read_dir(p)
        .map(|d| d.flatten().map(|e| file_size(&e.path())).sum())
        .unwrap_or(0)
}
