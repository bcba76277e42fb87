//! One indexing run's batch: each event into the full-text index and the
//! database (rows, entities, edges), forgets applied, sessions' rows
//! recomputed.

use std::collections::HashSet;
use std::path::Path;

use memlog_format::paths::WorkRoots;
use memlog_format::refs::Reference;
use memlog_format::visibility::Forgets;
use memlog_format::{Event, Kind};
use rusqlite::{Transaction, params};
use tantivy::IndexWriter;

use crate::derive::{self, Derived};
use crate::fts::{Fts, FtsDoc};
use crate::{Error, Result};

use super::IndexReport;

#[derive(Clone, Copy, PartialEq)]
pub(super) enum Source {
    Log,
    Journal,
}

impl Source {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Source::Log => "log",
            Source::Journal => "journal",
        }
    }
}

/// One run of indexing: the open writer and transaction.
pub(super) struct Batch<'a> {
    pub(super) fts: &'a Fts,
    pub(super) writer: &'a IndexWriter,
    pub(super) tx: &'a Transaction<'a>,
    pub(super) forgets: Forgets,
    pub(super) sessions: HashSet<String>,
    pub(super) deleted: bool,
    pub(super) report: &'a mut IndexReport,
    pub(super) now: String,
    /// A rebuild: tables have no indexes yet, every forget is known up
    /// front, and uniqueness is checked in memory.
    pub(super) bulk: bool,
    /// Keys (not ids: no string hashing per event) of the events indexed.
    pub(super) seen_events: HashSet<u64>,
    pub(super) seen_entities: HashSet<String>,
    /// Task events were added or events removed: the task rows are
    /// derived again at the end of the run.
    pub(super) tasks_changed: bool,
    /// Likewise for the `memory` table (levels' counts).
    pub(super) memory_changed: bool,
    /// An event search reads on every query was added
    /// ([`crate::search::read_by_ranking`]).
    pub(super) ranking_links: bool,
    /// The repository's worktrees: file entities are named relative to them.
    pub(super) roots: WorkRoots,
}

impl Batch<'_> {
    pub(super) fn sql(&self, e: rusqlite::Error) -> Error {
        Error::sql(Path::new("graph.sqlite"), e)
    }

    pub(super) fn index(&mut self, e: &Event, source: Source) -> Result<()> {
        if e.kind == Kind::Forget {
            self.tx
                .prepare_cached("INSERT OR IGNORE INTO forgets(id, event) VALUES (?1, ?2)")
                .and_then(|mut st| st.execute(params![e.id.as_str(), e.canonical_line()]))
                .map_err(|x| self.sql(x))?;
            self.forgets.add(e);
            // A rebuild learned every forget before indexing anything.
            if !self.bulk {
                self.hide_forgotten(e)?;
            }
        }
        if self.forgets.hides(e) {
            return self.note_hidden(&e.id);
        }
        if self.bulk && !self.seen_events.insert(crate::fts::event_key(&e.id)) {
            return Ok(());
        }
        let d = derive::derive_in(e, &self.roots);
        // every row gives back its event exactly (`lookup`)
        let body = crate::lookup::stored_body(e, &d.text);
        let mut meta = String::new();
        memlog_format::canonical::write_map(&mut meta, &e.meta);
        let inserted = self
            .tx
            .prepare_cached(
                "INSERT OR IGNORE INTO events(id, key, session, seq, ts, ts_ms, kind, project, text, tool, ref, body, meta, source)
                 VALUES (?1, ?14, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            )
            .and_then(|mut st| {
                st.execute(params![
                    e.id.as_str(),
                    e.session,
                    e.seq as i64,
                    e.ts,
                    memlog_format::time::to_ms(&e.ts),
                    e.kind.as_str(),
                    e.project,
                    d.text,
                    d.tool,
                    e.external_ref(),
                    body,
                    meta,
                    source.as_str(),
                    crate::fts::event_key(&e.id) as i64,
                ])
            })
            .map_err(|x| self.sql(x))?;
        if inserted == 0 {
            if source == Source::Log {
                self.tx
                    .prepare_cached(
                        "UPDATE events SET source = 'log' WHERE key = ?1 AND id = ?2 AND source = 'journal'",
                    )
                    .and_then(|mut st| st.execute(params![crate::fts::event_key(&e.id) as i64, e.id.as_str()]))
                    .map_err(|x| self.sql(x))?;
            }
            return Ok(());
        }
        self.report.events_added += 1;
        self.sessions.insert(e.session.clone());
        self.tasks_changed |= crate::tasks::refold::TASK_KINDS.contains(&e.kind);
        self.memory_changed |= crate::memory::MEMORY_KINDS.contains(&e.kind);
        self.ranking_links |= crate::search::read_by_ranking(e);
        self.link(e, &d)?;
        if !d.text.is_empty() {
            let files = d.files();
            self.fts.add(
                self.writer,
                &FtsDoc {
                    id: &e.id,
                    text: &d.text,
                    kind: e.kind.as_str(),
                    session: &e.session,
                    ts_ms: memlog_format::time::to_ms(&e.ts),
                    tool: d.tool.as_deref(),
                    files: &files,
                },
            )?;
        }
        Ok(())
    }

    /// Entities and edges of one event: its session, the files it touched
    /// and the artifacts and files it mentions.
    pub(super) fn link(&mut self, e: &Event, d: &Derived) -> Result<()> {
        let session_id = format!("session:{}", e.session);
        self.entity(&session_id, "session", &e.session, &e.session)?;
        for path in &d.touched {
            let key = format!("file:{path}");
            self.entity(&key, "file", &key, path)?;
            self.edge(&session_id, "touches", &key, &e.id, &e.ts)?;
        }
        for r in &d.mentions {
            let key = r.key();
            self.entity(&key, r.entity_type(), &key, &r.title())?;
            // A file the event touched already has its `touches` edge.
            if matches!(r, Reference::File(p) if d.touched.contains(p)) {
                continue;
            }
            self.edge(&session_id, "mentions", &key, &e.id, &e.ts)?;
        }
        Ok(())
    }

    pub(super) fn entity(&mut self, id: &str, kind: &str, key: &str, title: &str) -> Result<()> {
        if !self.seen_entities.insert(id.to_string()) {
            return Ok(());
        }
        let sql = if self.bulk {
            // uniqueness is kept in `seen_entities` until indexes exist;
            // entities known before this batch cannot exist in a rebuild
            "INSERT INTO entities(entity_id, entity_type, canonical_key, title, title_norm, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)"
        } else {
            "INSERT OR IGNORE INTO entities(entity_id, entity_type, canonical_key, title, title_norm, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)"
        };
        self.tx
            .prepare_cached(sql)
            .and_then(|mut st| {
                st.execute(params![
                    id,
                    kind,
                    key,
                    title,
                    memlog_format::key::normalize(title),
                    self.now
                ])
            })
            .map_err(|x| self.sql(x))?;
        Ok(())
    }

    pub(super) fn edge(
        &self,
        src: &str,
        rel: &str,
        dst: &str,
        evidence: &str,
        ts: &str,
    ) -> Result<()> {
        self.tx
            .prepare_cached(
                // an event is indexed once, so its edges are new
                "INSERT INTO edges(src_id, rel_type, dst_id, evidence, ts) VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .and_then(|mut st| st.execute(params![src, rel, dst, evidence, ts]))
            .map_err(|x| self.sql(x))?;
        Ok(())
    }

    /// Removes already indexed events that a new forget hides.
    pub(super) fn hide_forgotten(&mut self, forget: &Event) -> Result<()> {
        let mut victims: Vec<(String, String)> = Vec::new();
        {
            let mut by_id = self
                .tx
                .prepare("SELECT id, session FROM events WHERE key = ?1 AND id = ?2")
                .map_err(|x| self.sql(x))?;
            // What was derived from a target follows it (format::visibility):
            // facts aligned to it, a rule's retirements, memories giving it
            // as evidence.
            let mut from_source = self
                .tx
                .prepare(
                    "SELECT id, session FROM events
                     WHERE (kind = 'fact' AND json_valid(body) AND json_extract(body, '$.event') = ?1)
                        OR (kind = 'rule_retired' AND json_valid(body) AND json_extract(body, '$.target') = ?1)
                        OR (meta LIKE '%\"evidence\"%' AND json_valid(meta)
                            AND EXISTS (SELECT 1 FROM json_each(meta, '$.evidence') WHERE value = ?1))",
                )
                .map_err(|x| self.sql(x))?;
            for field in ["targets", "derived"] {
                let Some(serde_json::Value::Array(targets)) = forget.body.get(field) else {
                    continue;
                };
                for t in targets.iter().filter_map(|t| t.as_str()) {
                    let rows = by_id
                        .query_map(params![crate::fts::event_key(t) as i64, t], |r| {
                            Ok((r.get(0)?, r.get(1)?))
                        })
                        .map_err(|x| self.sql(x))?;
                    for row in rows {
                        victims.push(row.map_err(|x| self.sql(x))?);
                    }
                    let rows = from_source
                        .query_map(params![t], |r| Ok((r.get(0)?, r.get(1)?)))
                        .map_err(|x| self.sql(x))?;
                    for row in rows {
                        victims.push(row.map_err(|x| self.sql(x))?);
                    }
                }
            }
            let mut wide = self
                .tx
                .prepare(
                    "SELECT id, session FROM events WHERE kind != 'forget' AND ((session = ?1 AND ts <= ?3) OR ts < ?2)",
                )
                .map_err(|x| self.sql(x))?;
            let session = forget
                .body
                .get("session")
                .and_then(|v| v.as_str())
                .unwrap_or("\u{0}");
            let before = forget
                .body
                .get("before")
                .and_then(|v| v.as_str())
                .unwrap_or("");
            if session != "\u{0}" || !before.is_empty() {
                let rows = wide
                    .query_map(params![session, before, forget.ts], |r| {
                        Ok((r.get(0)?, r.get(1)?))
                    })
                    .map_err(|x| self.sql(x))?;
                for row in rows {
                    victims.push(row.map_err(|x| self.sql(x))?);
                }
            }
        }
        victims.sort();
        victims.dedup();
        for (id, session) in victims {
            self.remove(&id, &session)?;
            self.note_hidden(&id)?;
            self.sessions.insert(session);
            self.report.events_hidden += 1;
        }
        Ok(())
    }

    pub(super) fn remove(&mut self, id: &str, session: &str) -> Result<()> {
        self.tx
            .execute(
                "DELETE FROM events WHERE key = ?1 AND id = ?2",
                params![crate::fts::event_key(id) as i64, id],
            )
            .map_err(|x| self.sql(x))?;
        // An event's edges start at its session (see `link`).
        self.tx
            .execute(
                "DELETE FROM edges WHERE src_id = ?1 AND evidence = ?2",
                params![format!("session:{session}"), id],
            )
            .map_err(|x| self.sql(x))?;
        self.fts.delete(self.writer, id);
        self.deleted = true;
        self.tasks_changed = true;
        self.memory_changed = true;
        Ok(())
    }

    /// Counts an event hidden by a forget (`memlog stats`), once.
    pub(super) fn note_hidden(&self, id: &str) -> Result<()> {
        self.tx
            .prepare_cached("INSERT OR IGNORE INTO hidden(id) VALUES (?1)")
            .and_then(|mut st| st.execute([id]))
            .map_err(|x| self.sql(x))?;
        Ok(())
    }

    /// A journal vanished: its events that were never sealed (the journal
    /// was quarantined or deleted by hand) leave the projections.
    pub(super) fn drop_unsealed(&mut self, session: &str) -> Result<()> {
        let ids: Vec<String> = {
            let mut stmt = self
                .tx
                .prepare("SELECT id FROM events WHERE session = ?1 AND source = 'journal'")
                .map_err(|x| self.sql(x))?;
            let rows = stmt
                .query_map([session], |r| r.get(0))
                .map_err(|x| self.sql(x))?;
            rows.collect::<std::result::Result<_, _>>()
                .map_err(|x| self.sql(x))?
        };
        for id in ids {
            self.remove(&id, session)?;
        }
        self.sessions.insert(session.to_string());
        Ok(())
    }
}

pub(super) const SESSION_ROWS: &str = "INSERT INTO sessions(session, project, first_ts, last_ts, events, prompts, tool_calls, first_prompt, branch)
     SELECT session, min(project), min(ts), max(ts), count(*),
            sum(kind = 'user_prompt'), sum(kind = 'tool_observation'),
            (SELECT text FROM events p WHERE p.session = e.session AND p.kind = 'user_prompt' ORDER BY ts, seq LIMIT 1),
            (SELECT json_extract(meta, '$.branch') FROM events b WHERE b.session = e.session AND json_extract(meta, '$.branch') IS NOT NULL ORDER BY ts, seq LIMIT 1)
     FROM events e";

/// Recomputes the `sessions` rows of the given sessions (of all of them in
/// a rebuild) from `events`.
pub(super) fn refresh_sessions(tx: &Transaction, sessions: &[String], all: bool) -> Result<()> {
    let err = |e| Error::sql(Path::new("graph.sqlite"), e);
    if all {
        tx.execute("DELETE FROM sessions", []).map_err(err)?;
        tx.execute(&format!("{SESSION_ROWS} GROUP BY session"), [])
            .map_err(err)?;
        return Ok(());
    }
    let mut delete = tx
        .prepare("DELETE FROM sessions WHERE session = ?1")
        .map_err(err)?;
    let mut insert = tx
        .prepare(&format!(
            "{SESSION_ROWS} WHERE session = ?1 GROUP BY session"
        ))
        .map_err(err)?;
    for s in sessions {
        delete.execute([s]).map_err(err)?;
        insert.execute([s]).map_err(err)?;
    }
    Ok(())
}
