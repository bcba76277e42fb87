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
