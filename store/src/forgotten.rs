//! What was forgotten on this machine, kept by fingerprint
//! (`<memlog dir>/forgotten`), so that an import never records it again.
//!
//! A forget hides events by id, and a purge erases their bytes; but the
//! agent's own session files (`~/.claude/projects/…`) still hold what was
//! said, and importing them derives events anew, with new ids. Each event
//! a forget hides leaves here a keyed fingerprint of what it says (its
//! kind and text, or for a tool call the tool and its input), and a forget
//! of a whole session leaves its id and the time (what the session records
//! later, resumed, is not forgotten); [`crate::Recorder::import`] leaves
//! out what matches. The file stays on this machine: the key is the
//! repository's marker key, so the fingerprints cannot be checked against
//! guesses elsewhere.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::PathBuf;

use memlog_format::{Draft, Event, Kind, canonical};
use serde_json::{Map, Value};

use crate::{Error, Repo, Result};

/// The fingerprints of what was forgotten here.
pub struct Forgotten {
    path: PathBuf,
    key: [u8; 32],
    events: HashSet<String>,
    /// Each session forgotten whole, with when.
    sessions: HashMap<String, String>,
}

impl Forgotten {
    /// Reads the repository's file (none yet: nothing forgotten).
    pub fn load(repo: &Repo) -> Result<Forgotten> {
        let layout = repo.layout();
        let secret = crate::privacy_key::load_or_create(&layout)?;
        let path = layout.forgotten();
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(Error::io(&path, e)),
        };
        let mut forgotten = Forgotten {
            path,
            key: blake3::derive_key("memlog forgotten fingerprints v1", &secret),
            events: HashSet::new(),
            sessions: HashMap::new(),
        };
        for line in text.lines() {
            match line.split_once(' ') {
                Some(("e", print)) => {
                    forgotten.events.insert(print.to_string());
                }
                Some(("s", rest)) => {
                    if let Some((session, until)) = rest.split_once(' ') {
                        forgotten.forget_session(session, until);
                    }
                }
                _ => {}
            }
        }
        Ok(forgotten)
    }

    /// Keeps the fingerprints of `events` and, for a forget of a whole
    /// session, its id.
    pub fn remember(&mut self, events: &[&Event], session: Option<&str>) -> Result<()> {
        let mut lines = String::new();
        for e in events {
            let print = self.print(&e.kind, &e.body);
            if self.events.insert(print.clone()) {
                lines.push_str(&format!("e {print}\n"));
            }
        }
        if let Some(s) = session {
            let now = memlog_format::time::now();
            self.forget_session(s, &now);
            lines.push_str(&format!("s {s} {now}\n"));
        }
        if lines.is_empty() {
            return Ok(());
        }
        let io = |e| Error::io(&self.path, e);
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .map_err(io)?;
        if let Some(memlog_dir) = self.path.parent() {
            crate::shared::Sharing::of_memlog_dir(memlog_dir)
                .apply(&self.path)
                .map_err(io)?;
        }
        file.write_all(lines.as_bytes()).map_err(io)?;
        file.sync_data().map_err(io)
    }

    fn forget_session(&mut self, session: &str, until: &str) {
        let latest = self.sessions.entry(session.to_string()).or_default();
        if until > latest.as_str() {
            *latest = until.to_string();
        }
    }

    /// Whether `draft` says what a forgotten event said, or belongs to a
    /// session forgotten whole after it was recorded.
    pub fn holds(&self, draft: &Draft) -> bool {
        self.sessions
            .get(&draft.session)
            .is_some_and(|until| draft.ts.as_str() <= until.as_str())
            || (!self.events.is_empty()
                && self.events.contains(&self.print(&draft.kind, &draft.body)))
    }

    fn print(&self, kind: &Kind, body: &Map<String, Value>) -> String {
        let said = match (body.get("text").and_then(Value::as_str), kind) {
            (Some(text), _) => text.trim().to_string(),
            (None, Kind::ToolObservation) => format!(
                "{}\n{}",
                body.get("tool").and_then(Value::as_str).unwrap_or(""),
                body.get("input")
                    .map(canonical::to_string)
                    .unwrap_or_default()
            ),
            (None, _) => canonical::to_string(&Value::Object(body.clone())),
        };
        let material = format!("{}\n{said}", kind.as_str());
        blake3::keyed_hash(&self.key, material.as_bytes())
            .to_hex()
            .to_string()
    }
}
