//! Reflection that runs by itself (issue 31): after a session ends, the
//! SessionEnd hook starts `memlog reflect` in the background, at most once
//! every `learn.reflect_every_minutes`; it retires the rules that stopped
//! being useful and keeps the promotion candidates it found in
//! `<memlog dir>/reflection.json`, which the next SessionStart briefing
//! offers to the agent with the exact command that promotes each.
//!
//! One reflection at a time (`<memlog dir>/reflect.lock`): sessions ending
//! back to back while the first reflection still ran (seconds on a large
//! memory, longer on a loaded machine) each started one, and they all ran
//! at once, competing with the prompts they were meant to serve. Now one
//! waits its turn, asleep (the others leave it to that one), and the turn
//! is skipped when a reflection that began after it was asked for has run
//! since.

use std::path::PathBuf;

use memlog_format::time;
use memlog_store::Repo;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Context, Result};
use crate::rules::{self, Candidate, Retired};

/// Most candidates offered in a briefing.
const OFFERED: usize = 3;

/// What one reflection did.
#[derive(Clone, Debug, Serialize)]
pub struct Reflected {
    /// Promotion candidates, for the agent to judge.
    pub candidates: Vec<Candidate>,
    /// Rules retired now.
    pub retired: Vec<Retired>,
    /// The commit that sealed the retirements.
    pub commit: Option<String>,
}

/// `<memlog dir>/reflection.json`: when reflection last ran and what it
/// found.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Saved {
    /// When it ran (RFC 3339).
    ts: String,
    /// When it began, in milliseconds (0 when saved by an older memlog).
    #[serde(default)]
    started_ms: i64,
    /// The candidates, as `memlog reflect --json` prints them.
    candidates: Vec<Value>,
}

fn saved_path(repo: &Repo) -> PathBuf {
    repo.layout().dir().join("reflection.json")
}

fn load(repo: &Repo) -> Option<Saved> {
    let bytes = std::fs::read(saved_path(repo)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Retires the rules due (as of `now_ms`), finds the promotion candidates,
/// and keeps them for the next briefing. The projections are opened as
/// every read opens them (brought up to date unless another writer holds
/// the index, with what it has not indexed yet read past its watermark):
/// waiting for that writer hung reflection while a watcher held the lock.
pub fn run(repo: &Repo, now_ms: i64) -> Result<Reflected> {
    let lock = lock_file(repo, "reflect.lock")?;
    // another reflection's result is as good: wait for it to be written
    lock.lock().context(format_args!(
        "locking {}",
        lock_path(repo, "reflect.lock").display()
    ))?;
    reflect(repo, now_ms)
}

/// [`run`] when reflection is [`due`], after waiting for one already
/// running; `None` when that one (or any that began after this call) has
/// made this one needless. What the SessionEnd hook starts.
pub fn run_if_due(repo: &Repo, now_ms: i64) -> Result<Option<Reflected>> {
    let asked = time::to_ms(&time::now());
    // One waiter at most (`reflect.queue.lock`): a reflection already
    // waiting will begin after this call, and so cover it.
    let queue = lock_file(repo, "reflect.queue.lock")?;
    if queue.try_lock().is_err() {
        return Ok(None);
    }
    let lock = lock_file(repo, "reflect.lock")?;
    lock.lock().context(format_args!(
        "locking {}",
        lock_path(repo, "reflect.lock").display()
    ))?;
    drop(queue);
    let covered = load(repo).is_some_and(|s| s.started_ms >= asked);
    if covered || !due(repo) {
        return Ok(None);
    }
    reflect(repo, now_ms).map(Some)
}

fn lock_path(repo: &Repo, name: &str) -> PathBuf {
    repo.layout().dir().join(name)
}

fn lock_file(repo: &Repo, name: &str) -> Result<std::fs::File> {
    let path = lock_path(repo, name);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .context(format_args!("opening {}", path.display()))?;
    repo.sharing()
        .apply(&path)
        .context(format_args!("sharing {}", path.display()))?;
    Ok(file)
}

fn reflect(repo: &Repo, now_ms: i64) -> Result<Reflected> {
    let started_ms = time::to_ms(&time::now());
    let p = crate::workspace::projections(repo)?;
    let (retired, commit) = rules::retire_due(repo, &p, &repo.config.learn, now_ms)?;
    let candidates = rules::candidates(&p)?;
    let saved = Saved {
        ts: time::now(),
        started_ms,
        candidates: candidates
            .iter()
            .map(serde_json::to_value)
            .collect::<std::result::Result<_, _>>()?,
    };
    let path = saved_path(repo);
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, serde_json::to_vec_pretty(&saved)?)
        .and_then(|()| repo.sharing().apply(&tmp))
        .context(format_args!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, &path).context(format_args!("replacing {}", path.display()))?;
    Ok(Reflected {
        candidates,
        retired,
        commit,
    })
}

/// Whether reflection is due: it never ran, or ran longer ago than
/// `learn.reflect_every_minutes` (0: after every session).
pub fn due(repo: &Repo) -> bool {
    let every = repo.config.learn.reflect_every_minutes;
    let Some(saved) = load(repo) else {
        return true;
    };
    let last = time::to_ms(&saved.ts);
    let now = time::to_ms(&time::now());
    now - last >= i64::try_from(every.saturating_mul(60_000)).unwrap_or(i64::MAX)
}

/// The candidates the last reflection kept (as `memlog reflect --json`
/// prints them) and when it ran; none before the first.
pub fn kept(repo: &Repo) -> (Option<String>, Vec<Value>) {
    load(repo).map_or((None, Vec::new()), |s| (Some(s.ts), s.candidates))
}

/// The briefing's offer: the candidates the last reflection found, each
/// with the command that promotes it; empty when there are none.
pub fn offer(repo: &Repo) -> String {
    let Some(saved) = load(repo) else {
        return String::new();
    };
    let mut md = String::new();
    for c in saved.candidates.iter().take(OFFERED) {
        let s = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("");
        let evidence: Vec<&str> = c
            .get("evidence")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .take(3)
            .map(|id| &id[..12.min(id.len())])
            .collect();
        if evidence.is_empty() {
            continue;
        }
        let text = memlog_format::event::one_line(s("text"), 200);
        md.push_str(&format!(
            "- {} (in {} sessions): {text}\n  promote if it holds: `memlog rules add --kind {} \"<the rule in your words>\" {}`\n",
            s("rule_kind"),
            c.get("sessions").and_then(Value::as_u64).unwrap_or(0),
            s("rule_kind"),
            evidence
                .iter()
                .map(|e| format!("--evidence {e}"))
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    if md.is_empty() {
        return md;
    }
    format!(
        "## memlog: rule candidates from reflection\nPatterns that repeat across sessions. Judge each (will it hold? does anything contradict it?) and promote only what will.\n{md}"
    )
}
