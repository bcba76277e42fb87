//! Hook figures, the way Claude Code runs them: a whole process per event,
//! its payload on stdin, on a repository with a large memory.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::json;

use crate::{Row, generator, ms, percentile, run};

pub(crate) fn time_hook(
    bin: &Path,
    dir: &Path,
    event: &str,
    payload: &serde_json::Value,
) -> anyhow::Result<std::time::Duration> {
    time_hook_in(bin, dir, event, payload, None)
}

/// [`time_hook`] with `MEMLOG_HOME` set to `home`.
fn time_hook_in(
    bin: &Path,
    dir: &Path,
    event: &str,
    payload: &serde_json::Value,
    home: Option<&Path>,
) -> anyhow::Result<std::time::Duration> {
    let t = Instant::now();
    let mut command = Command::new(bin);
    if let Some(home) = home {
        command.env("MEMLOG_HOME", home);
    }
    let mut child = command
        .args(["hook", event])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(payload.to_string().as_bytes())?;
    }
    child.wait()?;
    Ok(t.elapsed())
}

pub fn bench(
    bin: &Path,
    seed: u64,
    events: usize,
    runs: usize,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    let label = format!("{}k", events / 1000);
    let repo = crate::imported_repo(bin, seed, events)?;
    run(bin, repo.path(), &["index"])?;
    let cwd = repo.path().display().to_string();
    let queries = generator::queries(seed, runs);
    let mut post = Vec::new();
    let mut prompt = Vec::new();
    let mut stop = Vec::new();
    for (i, q) in queries.iter().enumerate() {
        let tool = json!({
            "session_id": "bench-hook", "cwd": cwd, "hook_event_name": "PostToolUse",
            "tool_name": "Read", "tool_input": {"file_path": "src/auth/token.rs"},
            "tool_response": {"type": "text", "file": {"filePath": "src/auth/token.rs", "content": format!("fn get_token_by_id() {{}} // {i}"), "numLines": 1}}
        });
        post.push(time_hook(bin, repo.path(), "PostToolUse", &tool)?);
        let p = json!({"session_id": "bench-hook", "cwd": cwd, "hook_event_name": "UserPromptSubmit", "prompt": q});
        prompt.push(time_hook(bin, repo.path(), "UserPromptSubmit", &p)?);
        // every seventh or so asks for facts (20 new events), the others
        // only look for cited memories
        let s = json!({"session_id": "bench-hook", "cwd": cwd, "hook_event_name": "Stop",
                       "stop_hook_active": false, "last_assistant_message": format!("Done with step {i}.")});
        stop.push(time_hook(bin, repo.path(), "Stop", &s)?);
    }
    rows.push(Row {
        name: format!("`memlog hook PostToolUse`, whole process, {label} events ({runs} runs)"),
        value: format!(
            "p50 {} / p95 {}",
            ms(percentile(&mut post.clone(), 0.5)),
            ms(percentile(&mut post, 0.95))
        ),
        target: "≤ 10 ms p50".into(),
    });
    rows.push(Row {
        name: format!(
            "`memlog hook UserPromptSubmit` with injection, {label} events ({runs} runs)"
        ),
        value: format!(
            "p50 {} / p95 {}",
            ms(percentile(&mut prompt.clone(), 0.5)),
            ms(percentile(&mut prompt, 0.95))
        ),
        target: "≤ 50 ms p50, ≤ 150 ms p95".into(),
    });
    rows.push(Row {
        name: format!(
            "`memlog hook Stop` (credits citations, asks for facts every 20 events), {label} events ({runs} runs)"
        ),
        value: format!(
            "p50 {} / p95 {}",
            ms(percentile(&mut stop.clone(), 0.5)),
            ms(percentile(&mut stop, 0.95))
        ),
        target: "≤ 20 ms p50".into(),
    });
    prompt_with_vectors(bin, repo.path(), &queries, &label, rows)
}

/// `UserPromptSubmit` once the memory has vectors (a stand-in embedder's:
/// the real model would take an hour at 100k events, and the hook reads
/// stored vectors the same whatever made them), with no warm process
/// (with the real model's distilled token table, when one is installed,
/// filed under the stand-in's name so that the hook takes that path, and
/// without one) and with `memlog watch` answering (its model off, so it
/// keeps no other vectors than these).
fn prompt_with_vectors(
    bin: &Path,
    dir: &Path,
    queries: &[String],
    label: &str,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    use memlog_indexer::embed::{Embedder, HashEmbedder};
    use memlog_indexer::embed_cache::EmbeddingCache;
    std::fs::write(dir.join(".memlog.yaml"), "embedding:\n  enabled: false\n")?;
    let repo = memlog_store::Repo::discover(dir)?;
    let index_dir = memlog_indexer::projection::index_dir(&repo);
    let cache_dir = tempfile::tempdir()?;
    let mut cache = EmbeddingCache::open(&cache_dir.path().join("e.sqlite"))?;
    memlog_indexer::vectors::catch_up(
        &index_dir,
        &mut HashEmbedder::new(384),
        &mut cache,
        64,
        &mut |_, _| {},
    )?;
    // the installed table, under the stand-in's name in a home of its own
    let home = tempfile::tempdir()?;
    let table = std::fs::read_dir(memlog_indexer::embed::memlog_home().join("token-vectors"))
        .ok()
        .and_then(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .find(|p| p.extension().is_some_and(|x| x == "bin"))
        });
    let distilled_home = match table {
        Some(table) => {
            let name = memlog_indexer::token_vectors::path_for(HashEmbedder::new(384).model_id());
            let target = home
                .path()
                .join("token-vectors")
                .join(name.file_name().unwrap_or_default());
            std::fs::create_dir_all(home.path().join("token-vectors"))?;
            std::fs::copy(&table, &target)?;
            true
        }
        None => {
            eprintln!(
                "no distilled token table installed (memlog index with the model makes one): the hook is timed without it only"
            );
            false
        }
    };
    let no_table = tempfile::tempdir()?;
    let cwd = dir.display().to_string();
    let time_prompts = |session: &str,
                        home: Option<&Path>|
     -> anyhow::Result<Vec<std::time::Duration>> {
        queries
            .iter()
            .map(|q| {
                let p = json!({"session_id": session, "cwd": cwd, "hook_event_name": "UserPromptSubmit", "prompt": q});
                time_hook_in(bin, dir, "UserPromptSubmit", &p, home)
            })
            .collect()
    };
    let mut distilled = if distilled_home {
        Some(time_prompts("bench-vectors-distilled", Some(home.path()))?)
    } else {
        None
    };
    let mut local = time_prompts("bench-vectors-local", Some(no_table.path()))?;
    let mut watch = crate::start_watch(bin, dir)?;
    let warm = time_prompts("bench-vectors-warm", None);
    let _ = watch.kill();
    let _ = watch.wait();
    let mut warm = warm?;
    let mut paths = Vec::new();
    if let Some(d) = distilled.as_mut() {
        paths.push(("no warm process, distilled token table", d));
    }
    paths.push(("no warm process, no token table", &mut local));
    paths.push(("`memlog watch` running", &mut warm));
    for (path, times) in paths {
        rows.push(Row {
            name: format!(
                "`memlog hook UserPromptSubmit` with vectors present, {path}, {label} events ({} runs)",
                times.len()
            ),
            value: format!(
                "p50 {} / p95 {}",
                ms(percentile(&mut times.clone(), 0.5)),
                ms(percentile(times, 0.95))
            ),
            target: "≤ 20 ms p50, ≤ 50 ms p95".into(),
        });
    }
    Ok(())
}

/// The prompt path on a busy machine (issue 32): a 20k-event memory, then
/// `runs` times a whole session through its hooks (prompt, answer,
/// SessionEnd, which seals it and starts a background `memlog index`) and
/// at once the next session's prompt, which asks about that answer; timed
/// quiet, then under two CPU burners and a writer that fsyncs without
/// pause. Every prompt must be injected the answer (the index does not
/// hold it yet: it is read directly), none skipped for the budget.
pub fn busy(bin: &Path, seed: u64, runs: usize, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    for watcher in [false, true] {
        busy_with(bin, seed, runs, watcher, rows)?;
    }
    Ok(())
}

/// [`busy`] without a warm watcher, or with the one SessionStart starts.
fn busy_with(
    bin: &Path,
    seed: u64,
    runs: usize,
    watcher: bool,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    let events = 20_000;
    let repo = crate::imported_repo(bin, seed, events)?;
    let minutes = if watcher { 30 } else { 0 };
    std::fs::write(
        repo.path().join(".memlog.yaml"),
        format!("embedding:\n  enabled: false\nhooks:\n  warm_watcher_idle_minutes: {minutes}\n"),
    )?;
    run(bin, repo.path(), &["index"])?;
    let quiet = prompts_after_seals(bin, repo.path(), "quiet", runs)?;
    let load = Load::start(repo.path())?;
    let busy = prompts_after_seals(bin, repo.path(), "busy", runs);
    let (fsyncs, burned) = load.stop();
    // the watcher SessionStart started must be gone before the repository
    memlog_e2e::let_the_watcher_go(repo.path());
    let busy = busy?;
    let path = if watcher {
        "SessionStart's `memlog watch` answering"
    } else {
        "no warm watcher"
    };
    for (label, mut r) in [
        ("quiet machine".to_string(), quiet),
        (
            format!(
                "2 CPU burners + a writer fsyncing without pause ({fsyncs} fsyncs, {:.0} CPU-s burnt)",
                burned
            ),
            busy,
        ),
    ] {
        rows.push(Row {
            name: format!(
                "`memlog hook UserPromptSubmit` right after a session sealed, {}k events, {path}, {label} ({runs} runs)",
                events / 1000
            ),
            value: format!(
                "p50 {} / p95 {}, injected {}/{runs}, skipped for the budget {}",
                ms(percentile(&mut r.times.clone(), 0.5)),
                ms(percentile(&mut r.times, 0.95)),
                r.injected,
                r.over_budget
            ),
            target: "0 skipped, ≤ 100 ms p95".into(),
        });
    }
    Ok(())
}

/// What the prompts after seals gave.
struct AfterSeals {
    times: Vec<std::time::Duration>,
    injected: usize,
    over_budget: usize,
}

/// `runs` sessions, each followed at once by the next one's prompt about
/// its answer.
fn prompts_after_seals(
    bin: &Path,
    dir: &Path,
    tag: &str,
    runs: usize,
) -> anyhow::Result<AfterSeals> {
    let cwd = dir.display().to_string();
    let log = dir.join(".git/memlog/hooks.log");
    let over = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains("over the"))
            .count()
    };
    let over_before = over();
    let log_before = std::fs::metadata(&log).map_or(0, |m| m.len() as usize);
    let mut out = AfterSeals {
        times: Vec::with_capacity(runs),
        injected: 0,
        over_budget: 0,
    };
    for i in 0..runs {
        let session = format!("{tag}-{i}");
        // a word of its own for each session (the next prompt's earlier
        // twins must not be its best match)
        let name = codename(tag, i);
        let answer = format!(
            "The {name} dashboard reads its figures from the vault-{name} store, refreshed hourly."
        );
        for (event, extra) in [
            ("SessionStart", json!({"source": "startup"})),
            (
                "UserPromptSubmit",
                json!({"prompt": format!("Why is the {name} dashboard stale?")}),
            ),
            (
                "Stop",
                json!({"stop_hook_active": false, "last_assistant_message": answer}),
            ),
            ("SessionEnd", json!({"reason": "other"})),
        ] {
            let mut p = json!({"session_id": session, "cwd": cwd, "hook_event_name": event});
            if let (Some(p), Some(extra)) = (p.as_object_mut(), extra.as_object()) {
                p.extend(extra.clone());
            }
            time_hook(bin, dir, event, &p)?;
        }
        let p = json!({
            "session_id": format!("{session}-next"), "cwd": cwd, "hook_event_name": "UserPromptSubmit",
            "prompt": follow_up(&name, i)
        });
        let (took, stdout) = hook_output(bin, dir, "UserPromptSubmit", &p)?;
        out.times.push(took);
        if stdout.contains(&format!("vault-{name}")) {
            out.injected += 1;
        } else {
            let why = std::fs::read_to_string(&log).unwrap_or_default();
            eprintln!(
                "{session}: not injected ({} ms); hooks.log ends with: {}; printed: {}",
                took.as_millis(),
                why.lines().last().unwrap_or(""),
                stdout.chars().take(600).collect::<String>()
            );
        }
    }
    out.over_budget = over() - over_before;
    // where slow and skipped prompts spent their time, as the hooks said
    let said = std::fs::read_to_string(&log).unwrap_or_default();
    for line in said
        .get(log_before..)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("slow context") || l.contains("over the"))
    {
        eprintln!("{tag}: {line}");
    }
    Ok(out)
}

/// The next session's question about `name`'s answer, worded one of
/// eight ways, each sharing a word with the answer besides the name: a
/// person does not ask the same sentence 30 times, and 16 earlier
/// questions worded alike (all in memory, each sharing every word but the
/// name) outrank the answer, which shares fewer of the question's words
/// (the same ranking on main's binary before this round).
fn follow_up(name: &str, i: usize) -> String {
    const ASKED: [&str; 8] = [
        "Where does {} get its figures from?",
        "Which store feeds the {} dashboard?",
        "Remind me which store {} reads from.",
        "What does the {} dashboard read its figures from?",
        "{} figures: which vault store are they from?",
        "Which vault does the {} dashboard read?",
        "Is the {} store refreshed hourly?",
        "Tell me again where the {} figures come from.",
    ];
    ASKED[i % ASKED.len()].replace("{}", name)
}

/// A made-up word, letters only (the tokenizer splits digits off), one
/// for each `tag` and `i` below 512.
fn codename(tag: &str, i: usize) -> String {
    const SYLLABLES: [&str; 8] = ["ka", "lo", "mi", "ru", "se", "ta", "vo", "zu"];
    format!(
        "{}{}{}{}x",
        &tag[..1],
        SYLLABLES[i % 8],
        SYLLABLES[i / 8 % 8],
        SYLLABLES[i / 64 % 8]
    )
}

/// A hook's time and what it printed.
pub fn hook_output(
    bin: &Path,
    dir: &Path,
    event: &str,
    payload: &serde_json::Value,
) -> anyhow::Result<(std::time::Duration, String)> {
    let t = Instant::now();
    let mut child = Command::new(bin)
        .args(["hook", event])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(payload.to_string().as_bytes())?;
    }
    let output = child.wait_with_output()?;
    Ok((t.elapsed(), String::from_utf8_lossy(&output.stdout).into()))
}

/// Two threads that burn a core each, and one that writes and fsyncs a
/// file beside the repository without pause, until stopped.
struct Load {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    burners: Vec<std::thread::JoinHandle<f64>>,
    writer: std::thread::JoinHandle<u64>,
    _scratch: tempfile::TempDir,
}

impl Load {
    fn start(near: &Path) -> anyhow::Result<Load> {
        use std::sync::atomic::Ordering;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let burners = (0..2)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let t = Instant::now();
                    let mut x = 1u64;
                    while !stop.load(Ordering::Relaxed) {
                        for _ in 0..10_000 {
                            x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005) + 1);
                        }
                    }
                    t.elapsed().as_secs_f64()
                })
            })
            .collect();
        // on the repository's file system, where the journal is synced
        let scratch = tempfile::Builder::new()
            .prefix("memlog-bench-fsync-")
            .tempdir_in(near.parent().unwrap_or(near))?;
        let path = scratch.path().join("writer.bin");
        let writer = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let chunk = vec![7u8; 256 << 10];
                let mut fsyncs = 0u64;
                let Ok(mut f) = std::fs::File::create(&path) else {
                    return 0;
                };
                let mut written = 0usize;
                while !stop.load(Ordering::Relaxed) {
                    if f.write_all(&chunk).and_then(|_| f.sync_data()).is_err() {
                        break;
                    }
                    fsyncs += 1;
                    written += chunk.len();
                    // stays within 64 MB of disk
                    if written >= 64 << 20 {
                        let _ = f.set_len(0);
                        let _ = std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(0));
                        written = 0;
                    }
                }
                fsyncs
            })
        };
        Ok(Load {
            stop,
            burners,
            writer,
            _scratch: scratch,
        })
    }

    /// Stops the load: fsyncs made, CPU-seconds burnt.
    fn stop(self) -> (u64, f64) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let burned = self.burners.into_iter().filter_map(|b| b.join().ok()).sum();
        (self.writer.join().unwrap_or(0), burned)
    }
}
