//! Verification of the log: reports problems, never fixes them.
//!
//! - every segment reachable from any commit of the memlog ref hashes to its
//!   name, and each of its lines is a valid event, in canonical form, whose
//!   id matches its content;
//! - every seal commit names its session and the number of events it adds,
//!   and that number is right; every merge commit keeps all the segments of
//!   its parents (a union); a purge-record commit adds its record and no
//!   segment;
//! - the shared log holds no personal event, and the personal ref
//!   (FORMAT.md §9) is checked like the shared one;
//! - every journal line decodes (a torn last line is only a note: it was an
//!   interrupted, unacknowledged append).

use std::collections::{HashMap, HashSet};

use memlog_format::scope::Scope;
use memlog_format::segment;
use serde::Serialize;

use crate::journal::{self, Journal};
use crate::log::{Log, SegmentRef, trailers};
use crate::purge_record::{PURGE_TRAILER, records_in_tree};
use crate::{Repo, Result};

/// One problem found.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Problem {
    /// What it is about: a segment path, a commit id or a journal path.
    pub place: String,
    /// What is wrong.
    pub message: String,
}

/// The result of a check.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FsckReport {
    /// Commits of the memlog ref checked.
    pub commits: usize,
    /// Segments checked.
    pub segments: usize,
    /// Events read from them.
    pub events: usize,
    /// Journals of live sessions checked.
    pub journals: usize,
    /// Events read from the journals.
    pub journal_events: usize,
    /// Damage found.
    pub problems: Vec<Problem>,
    /// Things worth knowing that are not damage (torn journal tails).
    pub notes: Vec<Problem>,
}

impl FsckReport {
    /// Whether no damage was found (notes do not count).
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Checks both logs and the journals of `repo`.
pub fn check(repo: &Repo) -> Result<FsckReport> {
    let mut report = FsckReport::default();
    check_log(&Log::new(repo), Scope::Shared, &mut report)?;
    check_log(&Log::personal(repo), Scope::Personal, &mut report)?;
    let dir = repo.journal_dir();
    for j in journal::list(&dir)? {
        report.journals += 1;
        let (events, problems) = Journal::new(&dir, &j.session)?.read()?;
        report.journal_events += events.len();
        for p in problems {
            let entry = Problem {
                place: j.path.display().to_string(),
                message: format!("line {}: {}", p.line, p.message),
            };
            if p.message.starts_with("torn") {
                report.notes.push(entry);
            } else {
                report.problems.push(entry);
            }
        }
    }
    Ok(report)
}

/// Checks the segments and commits of one log.
fn check_log(log: &Log, scope: Scope, report: &mut FsckReport) -> Result<()> {
    let commits = log.commits()?;
    report.commits += commits.len();
    // A purge recorded in the log whose old history came back (a plain git
    // merge of a clone from before it): the purged bytes are reachable.
    if let Some(tip) = log.tip()? {
        let ids: HashSet<_> = commits.iter().map(|c| c.id).collect();
        let tree = log.commit(tip)?.tree;
        for (name, record) in crate::purge_record::records_in_tree(log, tree)? {
            if let Some(old) = record.old_commits().find(|c| ids.contains(c)) {
                report.problems.push(Problem {
                    place: format!("{} commit {old}", log.ref_name()),
                    message: format!(
                        "the history still holds a commit purge {name} replaced (its purged \
                         bytes came back, with a merge of a history from before it): run \
                         `memlog purge`, or `memlog sync` with the remote"
                    ),
                });
            }
        }
    }

    if scope == Scope::Shared {
        for r in crate::purge::refs_holding_purged(log.repo())? {
            report.problems.push(Problem {
                place: r.clone(),
                message: "reaches history a purge replaced: it holds the purged bytes, and a \
                          `git push --all` (or `--tags`) shares them again; delete it \
                          (`git update-ref -d <ref>`), then run `memlog purge`"
                    .into(),
            });
        }
    }

    // Every distinct segment reachable from any commit.
    let mut segments: HashMap<String, SegmentRef> = HashMap::new();
    let mut seen_trees = HashSet::new();
    for c in &commits {
        if !seen_trees.insert(c.tree) {
            continue;
        }
        for s in log.segments_in_tree(c.tree)? {
            segments.entry(s.hash.clone()).or_insert(s);
        }
    }
    report.segments += segments.len();

    let mut counts: HashMap<String, usize> = HashMap::new();
    let mut sorted: Vec<&SegmentRef> = segments.values().collect();
    sorted.sort_by(|a, b| a.hash.cmp(&b.hash));
    for seg in sorted {
        let place = segment::path_for(&seg.hash);
        let bytes = log.segment_blob(seg)?;
        let actual = blake3::hash(&bytes).to_hex().to_string();
        if actual != seg.hash {
            report.problems.push(Problem {
                place,
                message: format!("content hashes to {actual}, not to its name"),
            });
            continue;
        }
        let (events, lines) = segment::decode(&bytes);
        for p in lines {
            report.problems.push(Problem {
                place: place.clone(),
                message: format!("line {}: {}", p.line, p.message),
            });
        }
        let text = String::from_utf8_lossy(&bytes);
        for (i, (line, event)) in text.lines().zip(events.iter()).enumerate() {
            if line != event.canonical_line() {
                report.problems.push(Problem {
                    place: place.clone(),
                    message: format!(
                        "line {}: event {} is not in canonical form",
                        i + 1,
                        event.id
                    ),
                });
            }
            if scope == Scope::Shared && Scope::of(&event.meta) == Scope::Personal {
                report.problems.push(Problem {
                    place: place.clone(),
                    message: format!(
                        "line {}: event {} is personal, yet in the shared log {}",
                        i + 1,
                        event.id,
                        log.ref_name()
                    ),
                });
            }
        }
        report.events += events.len();
        counts.insert(seg.hash.clone(), events.len());
    }

    for c in &commits {
        if c.parents.len() > 1 {
            // A merge (memlog sync or git merge) is a union: it must keep
            // every segment of every parent.
            for p in &c.parents {
                let parent_tree = log.commit(*p)?.tree;
                let dropped = log.diff_trees(parent_tree, c.tree)?.removed;
                if !dropped.is_empty() {
                    report.problems.push(Problem {
                        place: format!("commit {}", c.id),
                        message: format!(
                            "merge drops {} segment(s) of parent {p} (a merge must be a union)",
                            dropped.len()
                        ),
                    });
                }
            }
            continue;
        }
        let place = format!("commit {}", c.id);
        let added = log.added_segments(c)?;
        if let Some(name) = trailers(&c.message).get(PURGE_TRAILER) {
            // A purge record's commit adds the record, nothing else.
            let records = records_in_tree(log, c.tree)?;
            if !records.iter().any(|(n, _)| n == name) {
                report.problems.push(Problem {
                    place: place.clone(),
                    message: format!("{PURGE_TRAILER}: {name} but its tree has no such record"),
                });
            }
            if !added.is_empty() {
                report.problems.push(Problem {
                    place,
                    message: format!("a purge record's commit adds {} segment(s)", added.len()),
                });
            }
            continue;
        }
        if c.session.is_none() {
            report.problems.push(Problem {
                place: place.clone(),
                message: "no Memlog-Session trailer".into(),
            });
        }
        let added: usize = added
            .iter()
            .map(|s| counts.get(&s.hash).copied().unwrap_or(0))
            .sum();
        match c.events {
            Some(n) if n as usize == added => {}
            Some(n) => report.problems.push(Problem {
                place,
                message: format!("Memlog-Events says {n} but the commit adds {added} events"),
            }),
            None => report.problems.push(Problem {
                place,
                message: "no Memlog-Events trailer".into(),
            }),
        }
    }
    Ok(())
}
