//! Which commits seal which session: an index of the memlog history kept
//! in `<memlog dir>/sessions.cache`, so that sealing a session does not walk
//! the whole history to learn whether (and where) it was sealed before.
//!
//! The cache holds every commit reachable from the tip it was built for,
//! with the session each one seals. It is brought up to date by walking
//! from the current tip only until known commits. If its tip is no longer
//! in the history (a purge rewrote it), it is rebuilt. It is a cache:
//! missing or unreadable, it is rebuilt, and writing it may fail silently.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use gix::ObjectId;
use memlog_format::{Event, segment};

use crate::log::{Log, PERSONAL_REF};
use crate::shared::Sharing;
use crate::{Repo, Result};

const HEADER: &str = "memlog-sessions-cache 1";

/// Commits of the history and the sessions they seal.
#[derive(Default)]
pub struct SessionCommits {
    tip: Option<ObjectId>,
    /// Every known commit and the session it seals (None: a merge).
    commits: HashMap<ObjectId, Option<String>>,
}

impl SessionCommits {
    /// The index for the history of `tip`, from the cache where it can be.
    pub fn at(repo: &Repo, log: &Log, tip: ObjectId) -> Result<SessionCommits> {
        let path = SessionCommits::path(repo, log);
        let mut cache = SessionCommits::load(&path).unwrap_or_default();
        if cache.tip == Some(tip) {
            return Ok(cache);
        }
        let mut new = Vec::new();
        let mut reached_old_tip = cache.tip.is_none();
        let mut stack = vec![tip];
        let mut seen = HashSet::new();
        while let Some(id) = stack.pop() {
            if !seen.insert(id) {
                continue;
            }
            if Some(id) == cache.tip {
                reached_old_tip = true;
            }
            if cache.commits.contains_key(&id) {
                continue;
            }
            let info = log.commit(id)?;
            stack.extend(info.parents.iter().copied());
            new.push((
                id,
                if info.parents.len() > 1 {
                    None
                } else {
                    info.session
                },
            ));
        }
        if !reached_old_tip {
            // History was rewritten: start over from the tip.
            cache = SessionCommits::default();
            return SessionCommits::rebuild(&path, log, tip, cache);
        }
        cache.commits.extend(new);
        cache.tip = Some(tip);
        cache.save(&path);
        Ok(cache)
    }

    fn rebuild(
        path: &Path,
        log: &Log,
        tip: ObjectId,
        mut cache: SessionCommits,
    ) -> Result<SessionCommits> {
        for c in log.commits_from(tip)? {
            cache
                .commits
                .insert(c.id, if c.parents.len() > 1 { None } else { c.session });
        }
        cache.tip = Some(tip);
        cache.save(path);
        Ok(cache)
    }

    /// Whether `id` is a commit of the history.
    pub fn contains(&self, id: &ObjectId) -> bool {
        self.commits.contains_key(id)
    }

    /// The commits that seal any of `sessions`, with the session each seals.
    pub fn commits_of<'a>(
        &'a self,
        sessions: &'a HashSet<String>,
    ) -> impl Iterator<Item = (&'a str, ObjectId)> + 'a {
        self.commits.iter().filter_map(|(id, s)| {
            s.as_deref()
                .filter(|s| sessions.contains(*s))
                .map(|s| (s, *id))
        })
    }

    /// One cache per log: the shared and the personal histories differ.
    fn path(repo: &Repo, log: &Log) -> PathBuf {
        if log.ref_name() == PERSONAL_REF {
            repo.layout().personal_sessions_cache()
        } else {
            repo.layout().sessions_cache()
        }
    }

    fn load(path: &Path) -> Option<SessionCommits> {
        let text = std::fs::read_to_string(path).ok()?;
        let mut lines = text.lines();
        if lines.next()? != HEADER {
            return None;
        }
        let tip = ObjectId::from_hex(lines.next()?.as_bytes()).ok()?;
        let mut commits = HashMap::new();
        for line in lines {
            let (id, session) = line.split_once(' ').unwrap_or((line, ""));
            let id = ObjectId::from_hex(id.as_bytes()).ok()?;
            commits.insert(id, (!session.is_empty()).then(|| session.to_string()));
        }
        Some(SessionCommits {
            tip: Some(tip),
            commits,
        })
    }

    /// Writes the cache (temporary file, then rename); a failure only means
    /// the next seal walks more.
    fn save(&self, path: &Path) {
        let Some(tip) = self.tip else { return };
        let mut text = format!("{HEADER}\n{tip}\n");
        for (id, session) in &self.commits {
            text.push_str(&id.to_string());
            if let Some(s) = session {
                text.push(' ');
                text.push_str(s);
            }
            text.push('\n');
        }
        let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
        let sharing = path.parent().map(Sharing::of_memlog_dir);
        let written =
            std::fs::write(&tmp, text).and_then(|()| sharing.map_or(Ok(()), |s| s.apply(&tmp)));
        if written.is_ok() && std::fs::rename(&tmp, path).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
}

/// For each wanted session, the ids of its events already sealed in the
/// history of `tip`.
pub fn sealed_ids(
    repo: &Repo,
    log: &Log,
    tip: ObjectId,
    sessions: &HashSet<String>,
) -> Result<HashMap<String, HashSet<String>>> {
    let mut out: HashMap<String, HashSet<String>> = HashMap::new();
    let index = SessionCommits::at(repo, log, tip)?;
    for (session, id) in index.commits_of(sessions) {
        let commit = log.commit(id)?;
        let ids = out.entry(session.to_string()).or_default();
        for seg in log.added_segments(&commit)? {
            ids.extend(segment::ids(&log.segment_blob(&seg)?));
        }
    }
    Ok(out)
}

/// For each wanted session, its events already sealed in the history of
/// `tip` (forgotten ones included).
pub fn sealed_events(
    repo: &Repo,
    log: &Log,
    tip: ObjectId,
    sessions: &HashSet<String>,
) -> Result<HashMap<String, Vec<Event>>> {
    let mut out: HashMap<String, Vec<Event>> = HashMap::new();
    let index = SessionCommits::at(repo, log, tip)?;
    for (session, id) in index.commits_of(sessions) {
        let commit = log.commit(id)?;
        let events = out.entry(session.to_string()).or_default();
        for seg in log.added_segments(&commit)? {
            let (found, _) = log.read_segment(&seg, false)?;
            events.extend(found.into_iter().filter(|e| e.session == session));
        }
    }
    Ok(out)
}
