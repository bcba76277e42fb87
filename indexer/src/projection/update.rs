//! Bringing the projections up to date: an incremental update from the
//! watermark, or a rebuild into a fresh directory swapped in at the end;
//! the full-text commit and merges; leftovers of killed rebuilds.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use memlog_format::visibility::Forgets;
use memlog_format::{Event, segment};
use memlog_store::journal;
use memlog_store::log::Log;
use memlog_store::shared::Sharing;
use memlog_store::view::{Changes, View};
use memlog_store::{IndexLayout, Layout, Repo};
use tantivy::IndexWriter;

use crate::fts::Fts;
use crate::graph::Graph;
use crate::{Error, Result};

use super::batch::{Batch, Source, refresh_sessions};
use super::{
    IndexReport, JournalMark, JournalTail, MAX_UNMERGED_SEGMENTS, Projections, REBUILD_BUDGET,
    WAL_CHECKPOINT_BYTES, WRITER_BUDGET, WriterLock, index_dir,
};

impl Projections {
    /// Brings the projections up to date, rebuilding them when they are
    /// missing, damaged, from another schema, or behind a rewritten history.
    /// Waits for another writer to finish first.
    pub fn update(repo: &Repo) -> Result<IndexReport> {
        Projections::update_with_progress(repo, &mut |_, _| {})
    }

    /// [`Projections::update`], telling `progress(done, total)` how many
    /// of the new segments it has read (for a progress bar: a first build
    /// of a large log takes seconds).
    pub fn update_with_progress(
        repo: &Repo,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<IndexReport> {
        let _lock = WriterLock::acquire(repo)?;
        Projections::update_locked(repo, progress)
    }

    /// Like [`Projections::update`], but waits for another writer only up
    /// to `within`, then fails with [`Error::WriterBusy`] naming it.
    pub fn update_within(repo: &Repo, within: std::time::Duration) -> Result<IndexReport> {
        let _lock = WriterLock::acquire_within(repo, within)?;
        Projections::update_locked(repo, &mut |_, _| {})
    }

    /// Like [`Projections::update`], but returns `Ok(None)` at once if
    /// another process is writing (the caller reads what is there).
    pub fn try_update(repo: &Repo) -> Result<Option<IndexReport>> {
        match WriterLock::try_acquire(repo)? {
            Some(_lock) => Projections::update_locked(repo, &mut |_, _| {}).map(Some),
            None => Ok(None),
        }
    }

    fn update_locked(repo: &Repo, progress: &mut dyn FnMut(usize, usize)) -> Result<IndexReport> {
        let updated = Projections::update_or_rebuild(repo, progress);
        // tantivy and SQLite make their files with their own modes (0600
        // for tantivy's `meta.json`, 0644 for a database): in a shared
        // repository the other users' reads and updates need them too
        repo.sharing().apply_tree(&index_dir(repo));
        updated
    }

    fn update_or_rebuild(
        repo: &Repo,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<IndexReport> {
        let dir = index_dir(repo);
        let reason = match Projections::open_at(&dir) {
            Ok(mut p) => match p.apply(repo, false, progress) {
                Ok(Applied::Done(report)) => return Ok(report),
                Ok(Applied::NeedsRebuild(reason)) => reason,
                // damage found past the file's header, by a read
                Err(Error::Corrupt { what, message }) => format!("{what} is damaged ({message})"),
                Err(e) => return Err(e),
            },
            Err(Error::NotBuilt(_)) => NOT_BUILT.to_string(),
            Err(Error::Corrupt { what, message }) => format!("{what} is damaged ({message})"),
            Err(Error::Outdated { what, message }) => {
                format!("{what} was made by another version of memlog ({message})")
            }
            Err(e) => return Err(e),
        };
        let mut report = Projections::rebuild_locked(repo, progress)?;
        report.reason = Some(reason);
        Ok(report)
    }

    /// Deletes the projections and derives them again from the log.
    pub fn rebuild(repo: &Repo) -> Result<IndexReport> {
        let _lock = WriterLock::acquire(repo)?;
        let rebuilt = Projections::rebuild_locked(repo, &mut |_, _| {});
        repo.sharing().apply_tree(&index_dir(repo));
        let mut report = rebuilt?;
        report.reason = Some("requested".into());
        Ok(report)
    }

    fn rebuild_locked(repo: &Repo, progress: &mut dyn FnMut(usize, usize)) -> Result<IndexReport> {
        let dir = index_dir(repo);
        remove_leftovers(repo);
        let fresh = repo.layout().fresh_index_dir(std::process::id());
        let mut p = Projections::create_at(&fresh)?;
        let report = match p.apply(repo, true, progress)? {
            Applied::Done(r) => r,
            Applied::NeedsRebuild(reason) => {
                return Err(Error::Invalid(format!(
                    "rebuild could not complete: {reason}"
                )));
            }
        };
        p.graph.finish_bulk()?;
        drop(p);
        // Vectors cost a minute per 100k events to lay out again and stay
        // right across a rebuild: the next catch-up checks them row by row.
        // Failing to carry them only means they are made again.
        let _ = crate::vectors::adopt(&dir, &fresh);
        // Swap directories: readers that still have the old files open keep
        // reading them; new readers get the new index.
        let old = repo.layout().old_index_dir(std::process::id());
        if dir.exists() {
            std::fs::rename(&dir, &old).map_err(|e| Error::io(&dir, e))?;
        }
        std::fs::rename(&fresh, &dir).map_err(|e| Error::io(&fresh, e))?;
        let _ = std::fs::remove_dir_all(&old);
        Ok(IndexReport {
            rebuilt: true,
            ..report
        })
    }

    /// Indexes what is new since the watermark (everything, for a fresh
    /// index). Returns `NeedsRebuild` when history was rewritten.
    fn apply(
        &mut self,
        repo: &Repo,
        rebuilding: bool,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Applied> {
        let log = Log::new(repo);
        // The shared log and this machine's personal one, read as one.
        let view = View::read(repo)?;
        let indexed_commit = self.graph.get_meta("indexed_commit")?;
        let indexed_tree = self.graph.get_meta("indexed_tree")?;
        let mut report = IndexReport {
            commit: view.key(),
            ..Default::default()
        };

        // Which segments are new.
        let trees = view.trees(repo)?;
        let segments = if report.commit.is_none() {
            if indexed_commit.is_some() {
                return Ok(Applied::NeedsRebuild("the memlog ref was deleted".into()));
            }
            Vec::new()
        } else if indexed_commit != report.commit {
            match trees.changes_since(repo, indexed_tree.as_deref())? {
                Changes::Added(segments) => segments,
                Changes::Rewritten(reason) => return Ok(Applied::NeedsRebuild(reason)),
            }
        } else {
            Vec::new()
        };
        report.segments = segments.len();

        // A rebuild learns every forget first, so that nothing is indexed and
        // then deleted (deleted documents would skew BM25 statistics).
        let mut forgets = self.load_forgets()?;
        if rebuilding {
            for seg in &segments {
                let bytes = log.segment_blob(seg)?;
                if super::unindexed::memchr_forget(&bytes) {
                    for e in segment::decode_trusted(&bytes).0 {
                        forgets.add(&e);
                    }
                }
            }
        }

        let mut marks = if rebuilding {
            HashMap::new()
        } else {
            self.journal_marks()?
        };
        let budget = if rebuilding {
            REBUILD_BUDGET
        } else {
            WRITER_BUDGET
        };
        let writer = self.fts.writer(budget)?;
        let tx = self
            .graph
            .conn
            .transaction()
            .map_err(|e| Error::sql(&self.dir, e))?;
        let mut batch = Batch {
            fts: &self.fts,
            writer: &writer,
            tx: &tx,
            forgets,
            sessions: HashSet::new(),
            deleted: false,
            report: &mut report,
            now: memlog_format::time::now(),
            bulk: rebuilding,
            seen_events: HashSet::new(),
            seen_entities: HashSet::new(),
            tasks_changed: false,
            memory_changed: false,
            ranking_links: false,
            roots: repo.work_roots(),
        };
        for (done, seg) in segments.iter().enumerate() {
            progress(done, segments.len());
            let (events, problem) = log.read_segment(seg, false)?;
            if let Some(p) = problem {
                batch
                    .report
                    .warnings
                    .push(format!("{}: {}", p.path, p.problem));
            }
            for e in &events {
                batch.index(e, Source::Log)?;
            }
        }

        progress(segments.len(), segments.len());
        // Journals of running sessions.
        let files = journal::list(&repo.journal_dir())?;
        let present: HashSet<&str> = files.iter().map(|f| f.session.as_str()).collect();
        let gone: Vec<String> = marks
            .keys()
            .filter(|s| !present.contains(s.as_str()))
            .cloned()
            .collect();
        for session in gone {
            marks.remove(&session);
            batch.drop_unsealed(&session)?;
        }
        for f in &files {
            let Some(tail) = JournalTail::read(f, marks.get(&f.session), u64::MAX)? else {
                continue;
            };
            for p in tail.problems {
                batch.report.warnings.push(format!(
                    "{}, line after byte {}: {}",
                    f.path.display(),
                    tail.start,
                    p.message
                ));
            }
            for e in &tail.events {
                batch.index(e, Source::Journal)?;
                batch.report.journal_events += 1;
            }
            marks.insert(f.session.clone(), tail.mark);
        }
        let sessions: Vec<String> = batch.sessions.drain().collect();
        let deleted = batch.deleted;
        let tasks_changed = batch.tasks_changed;
        let memory_changed = batch.memory_changed;
        let ranking_links = batch.ranking_links;
        drop(batch);
        // Both halves carry the same generation: if a crash lands between
        // the two commits, they disagree on the next open and the index is
        // rebuilt, instead of the full-text half holding documents the
        // database does not know (or missing some it does).
        let generation = new_generation(&report, &marks);
        // Until their commits the halves are independent: the full-text
        // commit (flushing the indexing threads, a rebuild's merges) runs
        // beside the database's indexing, which a rebuild otherwise did
        // alone at the end. The full-text half still commits first.
        let (fts, dir) = (&self.fts, &self.dir);
        let committed = Committed {
            generation: &generation,
            rebuilding,
            deleted,
            sharing: repo.sharing(),
        };
        std::thread::scope(|scope| {
            let fts_commit = scope.spawn(|| commit_fts(fts, dir, writer, committed));
            let sql = (|| {
                if rebuilding {
                    // the tables are full: index them once
                    tx.execute_batch(crate::graph::INDEXES)
                        .map_err(|e| Error::sql(dir, e))?;
                }
                // After the indexes exist: artifacts that blockers name are
                // get-or-create, which needs the unique index on entities.
                if rebuilding || tasks_changed {
                    crate::tasks::refold::refold(&tx)?;
                }
                if rebuilding || memory_changed {
                    crate::memory::refold(&tx)?;
                }
                refresh_sessions(&tx, &sessions, rebuilding)
            })();
            let fts = fts_commit.join().unwrap_or_else(|_| {
                Err(Error::Invalid(
                    "the full-text commit stopped unexpectedly".into(),
                ))
            });
            fts.and(sql)
        })?;
        Graph::set_meta(&tx, "generation", &generation)?;
        // "absent" only from a rebuild that saw none; any later one makes
        // it "present" for good (a forgotten one too: the queries it saves
        // then run for nothing, which is only slower).
        if rebuilding || ranking_links {
            Graph::set_meta(
                &tx,
                crate::graph::RANKING_LINKS,
                if ranking_links { "present" } else { "absent" },
            )?;
        }
        Graph::set_meta(
            &tx,
            "indexed_commit",
            report.commit.as_deref().unwrap_or(""),
        )?;
        Graph::set_meta(&tx, "indexed_tree", &trees.watermark())?;
        Graph::set_meta(
            &tx,
            "journals",
            &serde_json::to_string(&marks).unwrap_or_else(|_| "{}".into()),
        )?;
        if report.commit.is_none() {
            tx.execute(
                "DELETE FROM meta WHERE key IN ('indexed_commit', 'indexed_tree')",
                [],
            )
            .map_err(|e| Error::sql(&self.dir, e))?;
        }
        tx.commit().map_err(|e| Error::sql(&self.dir, e))?;
        if !rebuilding {
            self.checkpoint(WAL_CHECKPOINT_BYTES)?;
        }
        Ok(Applied::Done(report))
    }

    /// Every forget the index has applied.
    pub(super) fn load_forgets(&self) -> Result<Forgets> {
        let mut stmt = self
            .graph
            .conn
            .prepare("SELECT event FROM forgets")
            .map_err(|e| Error::sql(&self.dir, e))?;
        let rows = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .map_err(|e| Error::sql(&self.dir, e))?;
        let mut forgets = Forgets::default();
        for line in rows {
            let line = line.map_err(|e| Error::sql(&self.dir, e))?;
            if let Ok(e) = Event::from_line(&line) {
                forgets.add(&e);
            }
        }
        Ok(forgets)
    }
}

/// The reason [`IndexReport::reason`] gives for building an index that
/// did not exist.
pub const NOT_BUILT: &str = "no index yet";

pub(super) enum Applied {
    Done(IndexReport),
    NeedsRebuild(String),
}

/// What a full-text commit is of.
#[derive(Clone, Copy)]
struct Committed<'g> {
    /// The run's generation, the commit's payload.
    generation: &'g str,
    /// Whether the run rebuilds the index.
    rebuilding: bool,
    /// Whether it deleted documents.
    deleted: bool,
    /// The modes of the files tantivy wrote.
    sharing: Sharing,
}

/// Commits the full-text half with its generation, and waits for the
/// merges worth waiting for.
fn commit_fts(fts: &Fts, dir: &Path, mut writer: IndexWriter, run: Committed) -> Result<()> {
    let Committed {
        generation,
        rebuilding,
        deleted,
        sharing,
    } = run;
    let mut prepared = writer.prepare_commit().map_err(|e| Error::fts(dir, e))?;
    prepared.set_payload(generation);
    prepared.commit().map_err(|e| Error::fts(dir, e))?;
    // at once: until then the other users of a shared repository cannot
    // open the commit (tantivy writes `meta.json` 0600, segments with the
    // umask's mode)
    let fts_dir = IndexLayout::new(dir).fts();
    sharing.apply_tree(&fts_dir);
    if deleted {
        merge_all(fts, &mut writer)?;
    }
    // Merging segments is what makes a small update slow (it was most of
    // the time of indexing one session); it is worth waiting for only when
    // segments have piled up, or after a rebuild. Otherwise merges started
    // by the commit are abandoned with the writer (tantivy collects their
    // files later) and the data is already committed.
    let segments = fts
        .index
        .searchable_segment_ids()
        .map(|ids| ids.len())
        .unwrap_or(0);
    if rebuilding || deleted || segments > MAX_UNMERGED_SEGMENTS {
        writer
            .wait_merging_threads()
            .map_err(|e| Error::fts(dir, e))?;
        sharing.apply_tree(&fts_dir);
    }
    Ok(())
}

/// Removes half-built or swapped-out index directories that a killed
/// rebuild left behind (the caller holds the writer lock, so none is live).
fn remove_leftovers(repo: &Repo) {
    let Ok(entries) = std::fs::read_dir(&repo.memlog_dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if Layout::is_index_leftover(&name) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// A token naming one run's committed state.
fn new_generation(report: &IndexReport, marks: &HashMap<String, JournalMark>) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let seed = format!(
        "{:?}|{}|{}|{}",
        report.commit,
        serde_json::to_string(marks).unwrap_or_default(),
        nanos,
        std::process::id()
    );
    blake3::hash(seed.as_bytes()).to_hex()[..16].to_string()
}

/// Merges every segment so that deleted documents stop counting in BM25
/// statistics (incremental and rebuilt indexes then score alike).
fn merge_all(fts: &Fts, writer: &mut IndexWriter) -> Result<()> {
    let ids = fts
        .index
        .searchable_segment_ids()
        .map_err(|e| Error::fts(Path::new("full-text index"), e))?;
    if ids.len() > 1
        || fts
            .index
            .searchable_segment_metas()
            .map(|m| m.iter().any(|s| s.has_deletes()))
            .unwrap_or(false)
    {
        let _ = writer.merge(&ids).wait();
    }
    Ok(())
}
