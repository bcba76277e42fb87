//! `memlog serve` figures (`--serve`): the web viewer's API on a repository
//! of generated events, with the server's own time (its `Server-Timing`
//! header) and the round trip over loopback, next to `memlog search` for
//! the same queries.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use memlog_e2e::ServeProcess;
use memlog_e2e::http::{self, Reply};

use crate::{Row, generator, ms, percentile, run};

/// Server time of a reply, from `Server-Timing: app;dur=12.34`.
fn server_time(reply: &Reply) -> anyhow::Result<Duration> {
    let dur = reply
        .header("server-timing")
        .and_then(|v| v.split("dur=").nth(1))
        .and_then(|d| d.parse::<f64>().ok())
        .context("no Server-Timing header")?;
    Ok(Duration::from_secs_f64(dur / 1000.0))
}

/// `runs` GETs of `path`: (server times, round trips).
fn time_get(
    addr: &str,
    paths: &[String],
    runs: usize,
) -> anyhow::Result<(Vec<Duration>, Vec<Duration>)> {
    let (mut server, mut round) = (Vec::new(), Vec::new());
    for i in 0..runs {
        let path = &paths[i % paths.len()];
        let t = Instant::now();
        let reply = http::request(addr, "GET", path, &[], None)?;
        round.push(t.elapsed());
        if reply.status != 200 {
            bail!("GET {path}: {} {}", reply.status, reply.text());
        }
        server.push(server_time(&reply)?);
    }
    Ok((server, round))
}

fn p50_p95(samples: &mut [Duration]) -> String {
    let p50 = percentile(samples, 0.5);
    let p95 = percentile(samples, 0.95);
    format!("p50 {} / p95 {}", ms(p50), ms(p95))
}

fn encode(q: &str) -> String {
    q.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

pub fn bench(bin: &Path, seed: u64, events: usize, quick: bool) -> anyhow::Result<Vec<Row>> {
    let label = format!("{}k", events / 1000);
    let per_session = 100;
    let repo = crate::imported_repo(bin, seed, events)?;
    run(bin, repo.path(), &["index"])?;

    let mut command = Command::new(bin);
    command
        .current_dir(repo.path())
        .args(["serve", "--port", "0"]);
    let server = ServeProcess::spawn(command);
    let addr = server.addr.clone();
    let mut rows = Vec::new();

    // The first request opens the repository and the projections.
    let first = vec!["/api/sessions?limit=50".to_string()];
    let (mut cold, _) = time_get(&addr, &first, 1)?;
    let runs = if quick { 30 } else { 200 };
    let (mut server_t, mut round) = time_get(&addr, &first, runs)?;
    rows.push(Row {
        name: format!(
            "viewer timeline, first page (50 sessions), {label} events: server time ({runs} runs)"
        ),
        value: format!(
            "{} (first request after start: {})",
            p50_p95(&mut server_t),
            ms(cold[0])
        ),
        target: "≤ 200 ms".into(),
    });
    rows.push(Row {
        name: format!("viewer timeline, first page, {label} events: round trip over loopback"),
        value: p50_p95(&mut round),
        target: "—".into(),
    });
    cold.clear();

    let sessions: Vec<String> = (0..20)
        .map(|i| format!("/api/sessions/bench-{:06}", i * (events / per_session / 20)))
        .collect();
    let (mut server_t, _) = time_get(&addr, &sessions, if quick { 20 } else { 100 })?;
    rows.push(Row {
        name: format!("viewer session page ({per_session} events), {label} events: server time"),
        value: p50_p95(&mut server_t),
        target: "—".into(),
    });

    let queries = generator::queries(seed, 200);
    let paths: Vec<String> = queries
        .iter()
        .map(|q| format!("/api/search?q={}&limit=10", encode(q)))
        .collect();
    let (mut server_t, mut round) = time_get(&addr, &paths, paths.len())?;
    rows.push(Row {
        name: format!("viewer search (`/api/search`), {label} events, 200 queries: server time"),
        value: p50_p95(&mut server_t),
        target: "—".into(),
    });
    rows.push(Row {
        name: format!("viewer search, {label} events: round trip over loopback"),
        value: p50_p95(&mut round),
        target: "≤ `memlog search`".into(),
    });
    let mut cli = Vec::new();
    for q in queries.iter().take(if quick { 10 } else { 40 }) {
        cli.push(run(bin, repo.path(), &["search", q, "-n", "10", "--json"])?);
    }
    rows.push(Row {
        name: format!("`memlog search --json`, whole process, same queries, {label} events"),
        value: p50_p95(&mut cli),
        target: "—".into(),
    });
    Ok(rows)
}
