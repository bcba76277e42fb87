//! `memlog-bench --watch`: how fast `memlog watch` makes a ref update
//! searchable, and what it costs while nothing happens.
//!
//! The watcher runs as its own process (`memlog watch --json`, one line per
//! index run). Sessions arrive the way a teammate's do after a fetch: as a
//! commit on the memlog ref, with nothing in a journal, so the only way
//! they become searchable is the watcher reacting to the ref moving. The
//! latency is taken from the moment the ref update is durable to the moment
//! the watcher reports the run that indexed that commit; every session is
//! then searched for, to make sure it really is searchable.
//!
//! Then, with the real model, what a watcher holds in memory: once it has
//! embedded a few hundred realistic events, and once it has let its idle
//! model go (a laptop runs one watcher per open repository).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use memlog_format::{Draft, Kind};
use memlog_indexer::Projections;
use memlog_indexer::search::{SearchRequest, search};
use memlog_store::log::Log;
use memlog_store::{Recorder, Repo};
use serde_json::Value;

use crate::{Row, fresh_repo, generator, ms, percentile, run};

/// The watcher process, killed when dropped.
struct WatchProcess {
    child: Child,
    /// Each index run line and when it was read.
    runs: Receiver<(Instant, Value)>,
}

impl WatchProcess {
    fn start(
        bin: &Path,
        dir: &Path,
        extra: &[&str],
        stderr: Stdio,
    ) -> anyhow::Result<WatchProcess> {
        let mut child = Command::new(bin)
            .current_dir(dir)
            .args(["watch", "--json"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .context("starting memlog watch")?;
        let out = child.stdout.take().context("watch stdout")?;
        let (tx, runs) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str::<Value>(&line)
                    && tx.send((Instant::now(), v)).is_err()
                {
                    break;
                }
            }
        });
        Ok(WatchProcess { child, runs })
    }

    /// Waits for the run that indexed `commit`; returns when it was seen.
    fn wait_for_commit(&self, commit: &str, timeout: Duration) -> anyhow::Result<Instant> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let (at, run) = self
                .runs
                .recv_timeout(left)
                .with_context(|| format!("no index run for {commit} within {timeout:?}"))?;
            if let Some(e) = run.get("error") {
                bail!("index run failed: {e}");
            }
            if run["commit"] == commit {
                return Ok(at);
            }
        }
    }

    /// Index runs reported since the last call.
    fn drain(&self) -> usize {
        self.runs.try_iter().count()
    }

    /// The process's resident memory now, in MiB.
    fn resident_mib(&self) -> anyhow::Result<f64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .context("reading /proc/<pid>/status (Linux only)")?;
        let kb: f64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .context("no VmRSS in /proc/<pid>/status")?;
        Ok(kb / 1024.0)
    }

    /// User plus system CPU time of the process so far.
    fn cpu_time(&self) -> anyhow::Result<Duration> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id()))
            .context("reading /proc/<pid>/stat (Linux only)")?;
        // Fields after the command name, which is in parentheses and may
        // hold spaces: state is field 3, utime 14, stime 15.
        let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let ticks = |i: usize| -> anyhow::Result<u64> {
            Ok(fields
                .get(i)
                .context("short /proc/<pid>/stat")?
                .parse::<u64>()?)
        };
        let total = ticks(14 - 3)? + ticks(15 - 3)?;
        Ok(Duration::from_secs_f64(
            total as f64 / clock_ticks_per_second(),
        ))
    }
}

impl Drop for WatchProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn clock_ticks_per_second() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

pub fn bench_watch(bin: &Path, seed: u64, quick: bool) -> anyhow::Result<Vec<Row>> {
    let (base_events, seals, idle) = if quick {
        (2_000, 10, Duration::from_secs(10))
    } else {
        (20_000, 30, Duration::from_secs(60))
    };
    let dir = fresh_repo()?;
    // A log with some history, so each run is a real incremental update.
    let corpus = dir.path().join("base.jsonl");
    std::fs::write(&corpus, generator::corpus(seed, base_events / 100, 100))?;
    run(
        bin,
        dir.path(),
        &["import", "jsonl", "--no-index", &corpus.to_string_lossy()],
    )?;
    let repo = Repo::discover(dir.path())?;
    let watcher = WatchProcess::start(bin, dir.path(), &[], Stdio::inherit())?;
    let tip = Log::new(&repo)
        .tip()?
        .context("no memlog ref after import")?;
    // The first run builds the index from the whole log.
    watcher.wait_for_commit(&tip.to_string(), Duration::from_secs(120))?;

    let recorder = Recorder::new(&repo)?;
    let mut rng = generator::Rng::new(seed ^ 0x5eed);
    let mut latencies = Vec::with_capacity(seals);
    let mut probes = Vec::with_capacity(seals);
    for i in 0..seals {
        let session = format!("probe-{i}");
        let probe = format!("latencyprobe{i}x{}", rng.next_u64() % 1_000_000);
        let mut drafts: Vec<Draft> = generator::session(&mut rng, 0, 20, 1_767_225_600)
            .into_iter()
            .map(|v| {
                Draft::text(
                    &session,
                    v["ts"].as_str().unwrap_or_default(),
                    Kind::parse(v["kind"].as_str().unwrap_or("note")),
                    "bench",
                    v["text"].as_str().unwrap_or_default(),
                )
            })
            .collect();
        drafts.push(Draft::text(
            &session,
            memlog_format::time::now(),
            Kind::Note,
            "bench",
            format!("the probe word is {probe}"),
        ));
        // Sealed straight into a commit, like a fetch brings it.
        recorder.import(vec![(session, drafts)])?;
        let sealed_at = Instant::now();
        let tip = Log::new(&repo).tip()?.context("no memlog ref")?;
        let seen = watcher.wait_for_commit(&tip.to_string(), Duration::from_secs(30))?;
        latencies.push(seen.saturating_duration_since(sealed_at));
        probes.push(probe);
        // Let the watcher go quiet, so each seal is measured on its own.
        thread::sleep(Duration::from_millis(300));
        watcher.drain();
    }
    let projections = Projections::open(&repo)?;
    let ranking = repo.config.ranking.clone();
    for probe in &probes {
        let req = SearchRequest {
            query: probe.clone(),
            limit: 1,
            ..SearchRequest::default()
        };
        if search(&projections, &ranking, &req)?.is_empty() {
            bail!("{probe} was reported indexed but is not searchable");
        }
    }
    drop(projections);

    // Idle: nothing changes; the watcher should neither run nor spin.
    thread::sleep(Duration::from_secs(1));
    watcher.drain();
    let before = watcher.cpu_time()?;
    let start = Instant::now();
    thread::sleep(idle);
    let used = watcher.cpu_time()?.saturating_sub(before);
    let elapsed = start.elapsed();
    let idle_runs = watcher.drain();

    let p50 = percentile(&mut latencies, 0.5);
    let p95 = percentile(&mut latencies, 0.95);
    let max = percentile(&mut latencies, 1.0);
    Ok(vec![
        Row {
            name: format!(
                "`memlog watch`: ref update to searchable, {seals} sessions sealed onto a {base_events}-event log"
            ),
            value: format!("p50 {} / p95 {} / max {}", ms(p50), ms(p95), ms(max)),
            target: "p95 ≤ 1 s".into(),
        },
        Row {
            name: format!("`memlog watch`: idle CPU over {} s", elapsed.as_secs()),
            value: format!(
                "{:.3} % ({} of CPU time, {idle_runs} index runs)",
                100.0 * used.as_secs_f64() / elapsed.as_secs_f64(),
                ms(used)
            ),
            target: "< 1 %".into(),
        },
    ])
}

/// What a watcher holds in memory with the real model: after embedding
/// `events` realistic events, and after letting its model go (asked to
/// after 5 idle seconds rather than 5 minutes). No rows, with a message,
/// without the model.
pub fn bench_watch_memory(bin: &Path, seed: u64, quick: bool) -> anyhow::Result<Vec<Row>> {
    if !memlog_indexer::embed::ModelFiles::resolve(&Default::default()).available() {
        eprintln!("watch memory: skipped, the embedding model is not installed");
        return Ok(Vec::new());
    }
    let events = if quick { 100 } else { 1_000 };
    let dir = fresh_repo()?;
    std::fs::remove_file(dir.path().join(".memlog.yaml"))?;
    let corpus = dir.path().join("realistic.jsonl");
    std::fs::write(&corpus, crate::realistic::corpus(seed, events / 20, 20))?;
    run(
        bin,
        dir.path(),
        &["import", "jsonl", "--no-index", &corpus.to_string_lossy()],
    )?;
    let log = dir.path().join("watch.err");
    let watcher = WatchProcess::start(
        bin,
        dir.path(),
        &["--model-idle", "5"],
        Stdio::from(std::fs::File::create(&log)?),
    )?;
    // the watcher says each catch-up's end ("vectors: N events …") and
    // when it lets the model go
    let said = |what: &str, within: Duration| -> anyhow::Result<String> {
        let deadline = Instant::now() + within;
        loop {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            if let Some(line) = text.lines().find(|l| l.starts_with(what)) {
                return Ok(line.to_string());
            }
            if Instant::now() > deadline {
                bail!("memlog watch did not say {what:?} within {within:?}: {text}");
            }
            thread::sleep(Duration::from_millis(200));
        }
    };
    let started = Instant::now();
    let caught_up = said("vectors:", Duration::from_secs(900))?;
    let took = started.elapsed();
    let loaded = watcher.resident_mib()?;
    said("note: embedding model let go", Duration::from_secs(60))?;
    let let_go = watcher.resident_mib()?;
    Ok(vec![
        Row {
            name: format!(
                "`memlog watch`: resident memory after its catch-up of {events} realistic events ({}, {} s)",
                caught_up.trim_start_matches("vectors: "),
                took.as_secs()
            ),
            value: format!("{loaded:.0} MiB"),
            target: "≤ 300 MiB".into(),
        },
        Row {
            name: "`memlog watch`: resident memory once its idle model is let go".into(),
            value: format!("{let_go:.0} MiB"),
            target: "≤ 150 MiB".into(),
        },
    ])
}
