//! `--kills N`: crash safety under random SIGKILLs.
//!
//! One repository goes through N killed processes: `record`, `seal --all`,
//! `import jsonl`, `index` and `purge` (after a completed `forget`), each
//! killed at a random moment within its own measured duration. Only kills
//! that land while the process still runs count. Then memory is used as
//! a person would after a crash: `seal --all`, the killed imports run
//! again, `purge`, `index`. Afterwards every event whose command completed
//! is there exactly once, every killed `record` at most once, every
//! imported line exactly once, every forgotten event gone from `cat` and
//! from every git object, the index holds what the log holds, and
//! `memlog fsck` and `git fsck` are clean. Any failure ends the run with an
//! error naming it.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::Value;

use crate::Row;

/// The operations killed, in the order of the report.
const OPS: [&str; 5] = ["record", "seal", "import", "index", "purge"];
/// Sessions records go to (several, so that seals have journals to race).
const SESSIONS: u64 = 4;
/// Lines of each import file: 2 sessions of 6.
const IMPORT_SESSIONS: usize = 2;
const IMPORT_LINES: usize = 6;

/// xorshift64: reproducible kill moments from `--seed`.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// What the run knows it asked for.
#[derive(Default)]
struct Ledger {
    /// Texts of records that completed, with their ids.
    acknowledged: HashMap<String, String>,
    /// Texts of records that were killed: present at most once.
    killed: HashSet<String>,
    /// Import files, each run again after the kills.
    imports: Vec<PathBuf>,
    /// Texts of the lines of every import file.
    imported: HashSet<String>,
    /// Acknowledged texts forgotten (and purged).
    forgotten: HashSet<String>,
    /// Kills that landed, per operation.
    landed: HashMap<&'static str, usize>,
    /// Runs that finished before their kill, per operation.
    finished: HashMap<&'static str, usize>,
}

fn memlog(bin: &Path, dir: &Path, args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new(bin)
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()?;
    if !out.status.success() {
        bail!(
            "memlog {args:?} failed after the kills: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Runs `memlog args` and SIGKILLs it after `delay`. Returns its stdout
/// when it finished first, `None` when the kill landed.
fn killed_run(
    bin: &Path,
    dir: &Path,
    args: &[String],
    delay: Duration,
) -> anyhow::Result<Option<String>> {
    let mut child = Command::new(bin)
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let deadline = Instant::now() + delay;
    loop {
        if let Some(status) = child.try_wait()? {
            let mut out = String::new();
            if let Some(mut s) = child.stdout.take() {
                s.read_to_string(&mut out)?;
            }
            if !status.success() {
                // a run may meet the wreck of an earlier kill and refuse:
                // that is allowed, losing or duplicating data is not
                return Ok(Some(String::new()));
            }
            return Ok(Some(out));
        }
        if Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    let _ = child.kill(); // SIGKILL
    let _ = child.wait();
    Ok(None)
}

/// Runs the kills and the checks; rows for the table.
pub fn bench(bin: &Path, seed: u64, kills: usize) -> anyhow::Result<Vec<Row>> {
    let repo = crate::fresh_repo()?;
    match run_kills(bin, repo.path(), seed, kills) {
        Ok(rows) => Ok(rows),
        Err(e) => {
            // keep the wreck for a post-mortem
            let kept = repo.keep();
            Err(e.context(format!("repository kept at {}", kept.display())))
        }
    }
}

fn run_kills(bin: &Path, dir: &Path, seed: u64, kills: usize) -> anyhow::Result<Vec<Row>> {
    let files = tempfile::tempdir()?;
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut ledger = Ledger::default();
    // How long each operation takes when left alone (kept up to date).
    let mut typical: HashMap<&'static str, Duration> = HashMap::new();
    let started = Instant::now();
    let mut n = 0u64;
    let mut attempts = 0usize;
    while ledger.landed.values().sum::<usize>() < kills {
        attempts += 1;
        if attempts > kills * 20 + 100 {
            bail!(
                "only {} of {kills} kills landed in {attempts} attempts",
                ledger.landed.values().sum::<usize>()
            );
        }
        let op = OPS[(rng.next() % OPS.len() as u64) as usize];
        n += 1;
        let args: Vec<String> = match op {
            "record" => {
                let text = format!("kill-bench record {n} {:016x}", rng.next());
                ledger.killed.insert(text.clone());
                vec![
                    "record".into(),
                    "--session".into(),
                    format!("kills-{}", rng.next() % SESSIONS),
                    "--kind".into(),
                    "note".into(),
                    "--text".into(),
                    text,
                ]
            }
            "seal" => {
                record_acknowledged(bin, dir, &mut ledger, &mut rng, n)?;
                vec!["seal".into(), "--all".into()]
            }
            "import" => {
                let file = files.path().join(format!("import-{n}.jsonl"));
                let mut text = String::new();
                for s in 0..IMPORT_SESSIONS {
                    for i in 0..IMPORT_LINES {
                        let line = format!("kill-bench import {n} session {s} line {i}");
                        text.push_str(
                            &serde_json::json!({
                                "session": format!("import-{n}-{s}"),
                                "ts": format!("2026-01-01T00:{:02}:{:02}Z", s, i),
                                "kind": "note",
                                "text": line,
                                "ref": format!("import-{n}-{s}#{i}"),
                            })
                            .to_string(),
                        );
                        text.push('\n');
                        ledger.imported.insert(line);
                    }
                }
                std::fs::write(&file, text)?;
                ledger.imports.push(file.clone());
                vec![
                    "import".into(),
                    "jsonl".into(),
                    file.to_string_lossy().into_owned(),
                ]
            }
            "index" => {
                record_acknowledged(bin, dir, &mut ledger, &mut rng, n)?;
                vec!["index".into()]
            }
            _ => {
                // forget one acknowledged record (completed), then purge
                let candidates: Vec<(String, String)> = ledger
                    .acknowledged
                    .iter()
                    .filter(|(t, _)| !ledger.forgotten.contains(*t))
                    .map(|(t, id)| (t.clone(), id.clone()))
                    .collect();
                let Some((text, id)) = candidates
                    .get((rng.next() % candidates.len().max(1) as u64) as usize)
                    .cloned()
                else {
                    continue;
                };
                memlog(bin, dir, &["seal", "--all"])?;
                memlog(bin, dir, &["forget", &id, "--reason", "kill bench"])?;
                ledger.forgotten.insert(text);
                vec!["purge".into()]
            }
        };
        let usual = *typical.entry(op).or_insert(Duration::ZERO);
        if usual.is_zero() {
            // measure it once, unkilled
            let t = Instant::now();
            let out = killed_run(bin, dir, &args, Duration::from_secs(600))?;
            typical.insert(op, t.elapsed());
            note_finished(op, &args, out, &mut ledger);
            continue;
        }
        let span = (usual.as_micros() as u64 * 6 / 5).max(1_000);
        let delay = Duration::from_micros(rng.next() % span);
        let t = Instant::now();
        match killed_run(bin, dir, &args, delay)? {
            Some(out) => {
                // finished first: its duration refreshes the estimate
                let elapsed = t.elapsed();
                typical.insert(op, (usual + elapsed) / 2);
                note_finished(op, &args, Some(out), &mut ledger);
            }
            None => *ledger.landed.entry(op).or_default() += 1,
        }
    }
    let kill_time = started.elapsed();

    // After the crashes, as a person would: seal, import again, purge.
    memlog(bin, dir, &["seal", "--all"])?;
    for file in &ledger.imports {
        memlog(bin, dir, &["import", "jsonl", &file.to_string_lossy()])?;
    }
    memlog(bin, dir, &["purge"])?;
    memlog(bin, dir, &["index"])?;
    let checked = check(bin, dir, &ledger)?;

    let landed = |op: &str| ledger.landed.get(op).copied().unwrap_or(0);
    Ok(vec![
        Row {
            name: format!("SIGKILLs landed ({attempts} runs)"),
            value: format!(
                "{} (record {}, seal {}, import {}, index {}, purge {})",
                ledger.landed.values().sum::<usize>(),
                landed("record"),
                landed("seal"),
                landed("import"),
                landed("index"),
                landed("purge")
            ),
            target: format!("{kills}"),
        },
        Row {
            name: "events afterwards".into(),
            value: format!(
                "{} live, each exactly once; {} forgotten and purged",
                checked,
                ledger.forgotten.len()
            ),
            target: "none lost, none twice".into(),
        },
        Row {
            name: "fsck after the kills".into(),
            value: "memlog fsck and git fsck clean".into(),
            target: "clean".into(),
        },
        Row {
            name: "time".into(),
            value: format!("{:.0} s of kills", kill_time.as_secs_f64()),
            target: "-".into(),
        },
    ])
}

/// Records one note to completion (seal and index need something to do).
fn record_acknowledged(
    bin: &Path,
    dir: &Path,
    ledger: &mut Ledger,
    rng: &mut Rng,
    n: u64,
) -> anyhow::Result<()> {
    let text = format!("kill-bench acknowledged {n} {:016x}", rng.next());
    let session = format!("kills-{}", rng.next() % SESSIONS);
    let id = memlog(
        bin,
        dir,
        &[
            "record",
            "--session",
            &session,
            "--kind",
            "note",
            "--text",
            &text,
        ],
    )?;
    ledger.acknowledged.insert(text, id.trim().to_string());
    Ok(())
}

/// Books a run that finished before its kill.
fn note_finished(op: &'static str, args: &[String], out: Option<String>, ledger: &mut Ledger) {
    *ledger.finished.entry(op).or_default() += 1;
    if op == "record"
        && let (Some(out), Some(text)) = (out, args.last())
        && !out.trim().is_empty()
    {
        ledger.killed.remove(text);
        ledger
            .acknowledged
            .insert(text.clone(), out.trim().to_string());
    }
}

/// The checks after recovery; returns the number of live events.
fn check(bin: &Path, dir: &Path, ledger: &Ledger) -> anyhow::Result<usize> {
    let cat = memlog(bin, dir, &["cat"])?;
    let mut ids: HashMap<String, usize> = HashMap::new();
    let mut texts: HashMap<String, usize> = HashMap::new();
    let mut live = 0usize;
    for line in cat.lines() {
        let e: Value = serde_json::from_str(line).context("a line of memlog cat")?;
        if e["kind"] == "forget" {
            continue;
        }
        live += 1;
        *ids.entry(e["id"].as_str().unwrap_or_default().to_string())
            .or_default() += 1;
        if let Some(t) = e["body"]["text"].as_str() {
            *texts.entry(t.to_string()).or_default() += 1;
        }
    }
    if let Some((id, n)) = ids.iter().find(|(_, n)| **n > 1) {
        bail!("event {id} is in memory {n} times");
    }
    let count = |t: &str| texts.get(t).copied().unwrap_or(0);
    for t in ledger.acknowledged.keys() {
        let want = usize::from(!ledger.forgotten.contains(t));
        if count(t) != want {
            bail!("{t:?} is there {} times, not {want}", count(t));
        }
    }
    for t in &ledger.killed {
        if count(t) > 1 {
            bail!("the killed record {t:?} is there {} times", count(t));
        }
    }
    for t in &ledger.imported {
        if count(t) != 1 {
            bail!("imported line {t:?} is there {} times, not once", count(t));
        }
    }
    let objects = Command::new("git")
        .current_dir(dir)
        .args(["cat-file", "--batch-all-objects", "--batch"])
        .output()?
        .stdout;
    for t in &ledger.forgotten {
        if objects.windows(t.len()).any(|w| w == t.as_bytes()) {
            bail!("the forgotten {t:?} is still in a git object after purge");
        }
    }
    let indexed: Value = serde_json::from_str(&memlog(
        bin,
        dir,
        &[
            "sql",
            "SELECT count(*) AS n FROM events WHERE kind != 'forget'",
            "--json",
        ],
    )?)?;
    if indexed[0]["n"].as_u64() != Some(live as u64) {
        bail!("the index holds {} events, the log {live}", indexed[0]["n"]);
    }
    let fsck: Value = serde_json::from_str(&memlog(bin, dir, &["fsck", "--json"])?)?;
    if fsck["problems"].as_array().is_none_or(|p| !p.is_empty()) {
        bail!("memlog fsck: {fsck}");
    }
    let git_fsck = Command::new("git")
        .current_dir(dir)
        .args(["fsck", "--strict", "--no-dangling"])
        .output()?;
    if !git_fsck.status.success() {
        bail!("git fsck: {}", String::from_utf8_lossy(&git_fsck.stderr));
    }
    Ok(live)
}
