//! A team's year (`--team-year`): 50 engineers × 250 working days × 4
//! sessions, 50 events each (50,000 sessions, 2.5M events, one commit
//! each), shared through a bare remote as a team would.
//!
//! The year is written day by day (a day's 200 sessions imported on the
//! writer's clone, which stands for everyone else, and pushed). A laptop
//! follows it: at the end of each quarter it catches up, then the team
//! works one more day and the laptop's `memlog sync` of that day (fetch,
//! checks, fast-forward) and the index update are timed, so the four rows
//! show whether a day's sync stays flat as the log grows. At the end a
//! newcomer clones the whole year and indexes it; search and the prompt
//! hook are timed on it, and the disk the repository and the index take.
//!
//! Semantic vectors are left off (`embedding.enabled: false`): embedding
//! 2.5M events with the local model would take about ten hours on a laptop
//! (docs: README, "A team's year").

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::json;

use crate::{Row, generator, git, ms, percentile, run};

/// The size of the simulated team.
pub struct Team {
    pub engineers: usize,
    pub days: usize,
    pub sessions_per_day: usize,
    pub events_per_session: usize,
}

impl Team {
    pub fn year() -> Team {
        Team {
            engineers: 50,
            days: 250,
            sessions_per_day: 4,
            events_per_session: 50,
        }
    }

    pub fn quick() -> Team {
        Team {
            engineers: 10,
            days: 20,
            sessions_per_day: 4,
            events_per_session: 50,
        }
    }

    fn sessions_a_day(&self) -> usize {
        self.engineers * self.sessions_per_day
    }

    fn events(&self) -> usize {
        self.days * self.sessions_a_day() * self.events_per_session
    }
}

/// One working day of the whole team, as neutral JSONL: every engineer's
/// sessions, spread over the day.
fn day_file(team: &Team, seed: u64, day: usize) -> anyhow::Result<tempfile::NamedTempFile> {
    let mut r = generator::Rng::new(seed ^ (day as u64).wrapping_mul(0x9e37_79b9));
    let base = 1_767_225_600 + (day as i64) * 86_400; // from 2026-01-01
    let mut text = String::new();
    for e in 0..team.engineers {
        for s in 0..team.sessions_per_day {
            let index = (day * team.engineers + e) * team.sessions_per_day + s;
            let start = base + 8 * 3600 + (s as i64) * 7200 + (e as i64) * 13;
            for line in generator::session(&mut r, index, team.events_per_session, start) {
                text.push_str(&line.to_string());
                text.push('\n');
            }
        }
    }
    let file = tempfile::NamedTempFile::new()?;
    std::fs::write(file.path(), text)?;
    Ok(file)
}

fn clone_of(remote: &Path, root: &Path, name: &str) -> anyhow::Result<(PathBuf, Duration)> {
    let t = Instant::now();
    git(root, &["clone", "-q", &remote.to_string_lossy(), name])?;
    let took = t.elapsed();
    let dir = root.join(name);
    std::fs::write(
        dir.join(".memlog.yaml"),
        "embedding:\n  enabled: false\nsync:\n  remotes: [origin]\n",
    )?;
    Ok((dir, took))
}

/// Bytes under `dir`, every file at any depth.
fn du(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(e.path()),
                Ok(_) => total += e.metadata().map(|m| m.len()).unwrap_or(0),
                Err(_) => {}
            }
        }
    }
    total
}

fn mb(bytes: u64) -> String {
    format!("{:.0} MB", bytes as f64 / 1e6)
}

fn secs(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

fn count_objects(dir: &Path) -> anyhow::Result<String> {
    let out = Command::new("git")
        .current_dir(dir)
        .args(["count-objects", "-v"])
        .output()
        .context("git count-objects")?;
    let text = String::from_utf8_lossy(&out.stdout);
    let field = |k: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(k))
            .map(|v| v.trim().to_string())
            .unwrap_or_default()
    };
    Ok(format!(
        "{} loose, {} in {} pack(s)",
        field("count:"),
        field("in-pack:"),
        field("packs:")
    ))
}

pub fn bench(bin: &Path, seed: u64, team: &Team, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    let root = tempfile::Builder::new()
        .prefix("memlog-bench-team-")
        .tempdir()?;
    let remote = root.path().join("remote.git");
    git(
        root.path(),
        &["init", "-q", "--bare", "-b", "main", "remote.git"],
    )?;
    // the code's first commit, as any repository has
    let (writer, _) = clone_of(&remote, root.path(), "team")?;
    git(
        &writer,
        &[
            "-c",
            "user.name=memlog-bench",
            "-c",
            "user.email=bench@localhost",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "init",
        ],
    )?;
    git(&writer, &["push", "-q", "origin", "main"])?;

    let label = format!(
        "{} engineers × {} days × {} sessions ({} sessions, {:.2}M events)",
        team.engineers,
        team.days,
        team.sessions_per_day,
        team.days * team.sessions_a_day(),
        team.events() as f64 / 1e6
    );
    let quarters: Vec<usize> = (1..=4).map(|q| team.days * q / 4).collect();
    let mut laptop: Option<PathBuf> = None;
    let mut writing = Duration::ZERO;
    let mut day_syncs = Vec::new();
    for day in 0..team.days {
        let file = day_file(team, seed, day)?;
        let t = Instant::now();
        run(
            bin,
            &writer,
            &[
                "import",
                "jsonl",
                "--no-index",
                &file.path().to_string_lossy(),
            ],
        )?;
        writing += t.elapsed();
        let is_quarter_day = quarters.contains(&(day + 1));
        if is_quarter_day && let Some(l) = &laptop {
            // the day the laptop has not seen yet
            run(bin, &writer, &["sync", "--no-index"])?;
            let t = Instant::now();
            run(bin, l, &["sync", "--no-index"])?;
            let synced = t.elapsed();
            let t = Instant::now();
            run(bin, l, &["index"])?;
            day_syncs.push((day + 1, synced, t.elapsed()));
        } else if day + 2 == quarters.iter().copied().find(|q| *q > day + 1).unwrap_or(0) {
            // The laptop catches up to the eve of a quarter's last day.
            run(bin, &writer, &["sync", "--no-index"])?;
            let l = match &laptop {
                Some(l) => l.clone(),
                None => clone_of(&remote, root.path(), "laptop")?.0,
            };
            run(bin, &l, &["sync", "--no-index"])?;
            run(bin, &l, &["index"])?;
            laptop = Some(l);
        }
    }
    run(bin, &writer, &["sync", "--no-index"])?;
    rows.push(Row {
        name: format!(
            "team year: {label}, written day by day (`memlog import` of each day's sessions)"
        ),
        value: format!(
            "{} ({:.0} events/s)",
            secs(writing),
            team.events() as f64 / writing.as_secs_f64()
        ),
        target: "—".into(),
    });
    for (day, synced, indexed) in &day_syncs {
        rows.push(Row {
            name: format!(
                "team year: a day's `memlog sync` ({} new sessions, fast-forward) then `memlog index`, at day {day} ({:.2}M events)",
                team.sessions_a_day(),
                (day * team.sessions_a_day() * team.events_per_session) as f64 / 1e6
            ),
            value: format!("sync {} + index {}", ms(*synced), ms(*indexed)),
            target: "sync ≤ 2 s, index ≤ 2 s (≤ 10 s on the day it waits for a merge)".into(),
        });
    }

    // A newcomer: clone the year, take the log, index it.
    let (newcomer, cloned) = clone_of(&remote, root.path(), "newcomer")?;
    let t = Instant::now();
    run(bin, &newcomer, &["sync", "--no-index"])?;
    let took = t.elapsed();
    let t = Instant::now();
    run(bin, &newcomer, &["index"])?;
    let indexed = t.elapsed();
    rows.push(Row {
        name: "team year: a newcomer's `git clone` / first `memlog sync` / first `memlog index` (full text and graph)".into(),
        value: format!("{} / {} / {}", secs(cloned), secs(took), secs(indexed)),
        target: "first index ≤ 2 min (a year, 2.5M events)".into(),
    });

    // Search and the prompt hook on the whole year.
    let queries = generator::queries(seed, 40);
    let mut searches = Vec::new();
    for q in &queries {
        searches.push(run(bin, &newcomer, &["search", q, "--mode", "fts"])?);
    }
    let cwd = newcomer.display().to_string();
    let mut prompts = Vec::new();
    for q in &queries {
        let p = json!({"session_id": "team-year-hook", "cwd": cwd,
                       "hook_event_name": "UserPromptSubmit", "prompt": q});
        prompts.push(crate::hooks::time_hook(
            bin,
            &newcomer,
            "UserPromptSubmit",
            &p,
        )?);
    }
    rows.push(Row {
        name: format!(
            "team year: `memlog search`, whole process, {} runs",
            queries.len()
        ),
        value: format!(
            "p50 {} / p95 {}",
            ms(percentile(&mut searches.clone(), 0.5)),
            ms(percentile(&mut searches, 0.95))
        ),
        target: "p50 ≤ 50 ms".into(),
    });
    rows.push(Row {
        name: format!(
            "team year: `memlog hook UserPromptSubmit` with injection, {} runs",
            queries.len()
        ),
        value: format!(
            "p50 {} / p95 {}",
            ms(percentile(&mut prompts.clone(), 0.5)),
            ms(percentile(&mut prompts, 0.95))
        ),
        target: "p50 ≤ 50 ms".into(),
    });

    // Disk.
    let objects = newcomer.join(".git/objects");
    let index = newcomer.join(".git/memlog/index");
    rows.push(Row {
        name: "team year: disk of a clone: git objects (as cloned) / the index".into(),
        value: format!(
            "{} ({}) / {}",
            mb(du(&objects)),
            count_objects(&newcomer)?,
            mb(du(&index))
        ),
        target: "—".into(),
    });
    let before = du(&writer.join(".git/objects"));
    let t = Instant::now();
    git(&writer, &["gc", "-q"])?;
    rows.push(Row {
        name: "team year: the writer's git objects as sealed / after `git gc` (how long it took)"
            .into(),
        value: format!(
            "{} / {} ({})",
            mb(before),
            mb(du(&writer.join(".git/objects"))),
            secs(t.elapsed())
        ),
        target: "—".into(),
    });
    rows.push(Row {
        name: "team year: the remote (bare, as pushed)".into(),
        value: format!("{} ({})", mb(du(&remote)), count_objects(&remote)?),
        target: "—".into(),
    });
    let commits = crate::git_output(&newcomer, &["rev-list", "--count", "refs/heads/memlog"])?;
    let expected = team.days * team.sessions_a_day();
    if commits.trim() != expected.to_string() {
        bail!("the year has {commits} commits, not {expected}");
    }
    Ok(())
}
