//! `memlog-bench --secrets`: how many secrets reach disk, and how much
//! ordinary code the filter alters, measured through the real binary.
//!
//! A corpus of secrets of every rule's format ([`corpus`]) goes in every
//! way ([`deliver`]): hooks with Claude Code's payloads, `record`, both
//! imports and the MCP server. The sessions are sealed and indexed, then
//! every byte under `.git` ([`disk`]) is searched for each secret. The
//! ordinary texts of `fixtures/privacy/ordinary/` are recorded as notes
//! and read back, to count those altered. [`throughput`] times the filter
//! itself against the number of rules, and [`hook`] the PostToolUse hook
//! with a 64 KB output against an older binary (`--baseline`).

mod corpus;
mod deliver;
mod disk;
mod hook;
mod throughput;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use corpus::Channel;

use crate::{Row, fresh_repo, git, run};

/// Secrets drawn from each rule.
const PER_RULE: usize = 2;

/// Mixed into the seed of the samples sent in failing hooks.
const ECHOES: u64 = 0xEC40;

pub fn bench(
    bin: &Path,
    seed: u64,
    baseline: Option<&Path>,
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    let corpus = corpus::build(seed, PER_RULE);
    let repo = fresh_repo()?;
    deliver::all(bin, repo.path(), &corpus)?;
    // other samples of every rule, for the errors
    let echoes = corpus::build(seed ^ ECHOES, 1);
    let failed = deliver::failing_hooks(bin, repo.path(), &echoes)?;
    run(bin, repo.path(), &["seal", "--all"])?;
    run(bin, repo.path(), &["index"])?;
    let remote = tempfile::Builder::new()
        .prefix("memlog-bench-remote-")
        .tempdir()?;
    git(remote.path(), &["init", "-q", "--bare"])?;
    let url = remote.path().display().to_string();
    git(repo.path(), &["remote", "add", "origin", &url])?;
    run(bin, repo.path(), &["sync", "origin"])?;
    let stored = Command::new(bin)
        .args(["cat"])
        .current_dir(repo.path())
        .output()?
        .stdout;
    let stored = String::from_utf8_lossy(&stored);
    let missing: Vec<String> = corpus
        .iter()
        .filter(|s| !stored.contains(&s.nonce))
        .map(|s| format!("{} ({})", s.nonce, s.channel.as_str()))
        .collect();
    if !missing.is_empty() {
        anyhow::bail!(
            "{} secrets never reached the log, so their figures would mean nothing: {}",
            missing.len(),
            missing.join(", ")
        );
    }
    let local = disk::read(&repo.path().join(".git"))?;
    let shared = disk::read(remote.path())?;
    let samples: Vec<_> = corpus.iter().map(|s| &s.sample).collect();
    let in_local = disk::leaked(&local, &samples)?;
    let in_shared = disk::leaked(&shared, &samples)?;
    let mut by_family: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut by_channel: BTreeMap<Channel, (usize, usize)> = BTreeMap::new();
    let mut leaks = Vec::new();
    for ((s, local), shared) in corpus.iter().zip(in_local).zip(in_shared) {
        let leaked = local || shared;
        for entry in [
            by_family.entry(s.rule.family.as_str()).or_default(),
            by_channel.entry(s.channel).or_default(),
        ] {
            entry.0 += 1;
            entry.1 += usize::from(leaked);
        }
        if leaked {
            leaks.push(format!(
                "{} via {}: {:?}",
                s.rule.id,
                s.channel.as_str(),
                s.text
            ));
        }
    }
    for leak in &leaks {
        eprintln!("leaked: {leak}");
    }
    let rules: std::collections::BTreeSet<&str> = corpus.iter().map(|s| s.rule.id).collect();
    let total = corpus.len();
    rows.push(Row {
        name: format!(
            "secrets reaching any byte under .git or on the remote ({total} secrets of {} rules, through hooks, note, record, import jsonl, import claude-code and MCP; sealed, indexed, synced to a bare remote)",
            rules.len()
        ),
        value: format!(
            "{} of {total} ({:.1} %)",
            leaks.len(),
            100.0 * leaks.len() as f64 / total as f64
        ),
        target: "≤ 3 %".into(),
    });
    for (family, (n, leaked)) in &by_family {
        rows.push(Row {
            name: format!("… family {family}"),
            value: format!("{leaked} of {n} leaked"),
            target: String::new(),
        });
    }
    for (channel, (n, leaked)) in &by_channel {
        rows.push(Row {
            name: format!("… way in: {}", channel.as_str()),
            value: format!("{leaked} of {n} leaked"),
            target: String::new(),
        });
    }
    let nonces: Vec<&str> = corpus.iter().map(|s| s.nonce.as_str()).collect();
    let seen = |disk: &disk::Disk| -> anyhow::Result<usize> {
        Ok(disk::found(disk, &nonces)?
            .into_iter()
            .filter(|f| *f)
            .count())
    };
    rows.push(Row {
        name: "control: the random word beside each secret, found by the same search (local .git, remote)".into(),
        value: format!("{} and {} of {total}", seen(&local)?, seen(&shared)?),
        target: format!("{total} and {total}"),
    });
    let failed_samples: Vec<_> = failed.iter().map(|s| &s.sample).collect();
    let log = disk::read_file(&repo.path().join(".git/memlog/hooks.log"))?;
    let logged = disk::leaked(&log, &failed_samples)?;
    for (s, _) in failed.iter().zip(&logged).filter(|(_, l)| **l) {
        eprintln!("logged: {} {:?}", s.rule.id, s.sample.text);
    }
    rows.push(Row {
        name: format!(
            "hook errors quoting a secret ({} payloads whose session id holds one), secrets in hooks.log",
            failed.len()
        ),
        value: format!("{}", logged.iter().filter(|l| **l).count()),
        target: "0".into(),
    });
    rows.push(usage_error_echo(bin, repo.path(), &corpus)?);
    let ordinary = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/privacy/ordinary");
    rows.push(ordinary_texts(bin, &ordinary)?);
    throughput::bench(seed, &ordinary, rows)?;
    if let Some(baseline) = baseline {
        rows.push(hook::ab(bin, baseline, seed)?);
    }
    Ok(())
}

/// A usage error echoing a private key typed as `--text KEY` (which clap
/// reads as an option): is the key on stderr?
fn usage_error_echo(bin: &Path, dir: &Path, corpus: &[corpus::Secret]) -> anyhow::Result<Row> {
    let keys: Vec<&corpus::Secret> = corpus
        .iter()
        .filter(|s| s.sample.secret.starts_with('-'))
        .collect();
    let mut echoed = 0;
    for s in &keys {
        let out = Command::new(bin)
            .args([
                "record",
                "--session",
                "x",
                "--kind",
                "note",
                "--text",
                &s.sample.text,
            ])
            .current_dir(dir)
            .output()?;
        if s.sample.leaks_into(&out.stderr) || s.sample.leaks_into(&out.stdout) {
            echoed += 1;
        }
    }
    Ok(Row {
        name: format!(
            "usage errors echoing a secret typed as an argument ({} keys as `--text KEY`)",
            keys.len()
        ),
        value: format!("{echoed} echoed"),
        target: "0".into(),
    })
}

/// The ordinary texts recorded as notes and read back: how many changed.
fn ordinary_texts(bin: &Path, dir: &Path) -> anyhow::Result<Row> {
    let repo = fresh_repo()?;
    let mut paths: Vec<_> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    paths.sort();
    let mut altered = Vec::new();
    for (i, path) in paths.iter().enumerate() {
        let text = std::fs::read_to_string(path)?;
        let session = format!("ordinary-{i}");
        run(
            bin,
            repo.path(),
            &[
                "record",
                "--session",
                &session,
                "--kind",
                "note",
                &format!("--text={text}"),
            ],
        )?;
        let out = Command::new(bin)
            .args(["cat", "--session", &session])
            .current_dir(repo.path())
            .output()?;
        let event: serde_json::Value = serde_json::from_slice(&out.stdout)?;
        if event["body"]["text"].as_str() != Some(text.as_str()) {
            altered.push(
                path.file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .to_string(),
            );
        }
    }
    for a in &altered {
        eprintln!("altered: {a}");
    }
    Ok(Row {
        name: format!(
            "ordinary texts altered (code, lockfiles, UUIDs, SHAs, digests, public keys, placeholders; {} texts recorded as notes)",
            paths.len()
        ),
        value: format!("{} of {}", altered.len(), paths.len()),
        target: "≤ 1".into(),
    })
}
