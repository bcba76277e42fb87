//! Journals: where a live session's events go before they are sealed.
//!
//! `<common dir>/memlog/journal/<session>.jsonl` holds canonical event lines.
//! Every append takes an exclusive lock on the file, writes one or more whole
//! lines and fsyncs before returning, so an acknowledged event survives a
//! crash. Sealing holds the same lock from reading the journal until it is
//! removed, and an appender that finds its file unlinked under it starts over
//! on the new path, so no event can fall between a seal and a removal.
//!
//! A line cut short by a crash mid-append was never acknowledged: the next
//! append or seal drops it. Any other bad line is kept: a journal with bad
//! lines is moved to `journal/quarantine/` after sealing instead of deleted.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::shared::Sharing;

use memlog_format::segment::{self, LineProblem};
use memlog_format::{Draft, Event, Kind, time};
use serde_json::Value;

use crate::{Error, Result};

/// Longest session id memlog accepts (it becomes a file name).
pub const MAX_SESSION_LEN: usize = memlog_format::session_id::MAX_LEN;

/// Checks that a session id can name a journal file: 1–128 characters from
/// `A–Z a–z 0–9 . _ - : @ + =`, not starting with a dot
/// ([`memlog_format::session_id::check`], the rule of every way in).
pub fn validate_session(session: &str) -> Result<()> {
    if memlog_format::session_id::is_valid(session) {
        Ok(())
    } else {
        Err(Error::invalid(
            format!("session id {session:?}"),
            memlog_format::session_id::RULE,
        ))
    }
}

/// A fresh session id for events that do not come from an agent session:
/// `<prefix>-<UTC time>-<8 hex>`, unique per process and nanosecond.
pub fn mint_session(prefix: &str) -> String {
    let now = jiff::Timestamp::now();
    let seed = format!("{}-{}", now.as_nanosecond(), std::process::id());
    let hash = blake3::hash(seed.as_bytes()).to_hex();
    format!("{prefix}-{}-{}", now.strftime("%Y%m%dT%H%M%S"), &hash[..8])
}

/// The journal of one session.
pub struct Journal {
    session: String,
    path: PathBuf,
    /// The modes of the files and directories an append creates.
    sharing: Sharing,
}

impl Journal {
    /// The journal of `session` in `dir` (the session id is checked: it names a file).
    pub fn new(dir: &Path, session: &str) -> Result<Journal> {
        validate_session(session)?;
        Ok(Journal {
            session: session.to_string(),
            path: dir.join(format!("{session}.jsonl")),
            sharing: Sharing::Umask,
        })
    }

    /// The journal, its files made with a shared repository's modes: in a
    /// repository a group shares, another user's hooks append to it and
    /// seal it.
    pub fn shared(self, sharing: Sharing) -> Journal {
        Journal { sharing, ..self }
    }

    /// The session.
    pub fn session(&self) -> &str {
        &self.session
    }

    /// The journal file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one event and returns it with its `seq` and `id`.
    pub fn append(&self, draft: Draft) -> Result<Event> {
        let mut events = self.append_all(vec![draft])?;
        events
            .pop()
            .ok_or_else(|| Error::invalid(self.path.display().to_string(), "nothing appended"))
    }

    /// Appends events atomically (all lines in one write, one fsync).
    pub fn append_all(&self, drafts: Vec<Draft>) -> Result<Vec<Event>> {
        self.append_all_as(drafts, Durability::Synced)
    }

    /// Appends events atomically (all lines in one write), synced to disk
    /// or not as `durability` says.
    pub fn append_all_as(&self, drafts: Vec<Draft>, durability: Durability) -> Result<Vec<Event>> {
        self.append_locked(drafts, durability, false)
    }

    /// [`Journal::append_all_as`] for what an agent's hooks send: a draft
    /// that repeats a tool call or a turn's event just recorded (the hooks
    /// configured twice) is dropped (see [`without_repeats`]); returns the
    /// events appended.
    pub fn append_once_as(&self, drafts: Vec<Draft>, durability: Durability) -> Result<Vec<Event>> {
        self.append_locked(drafts, durability, true)
    }

    fn append_locked(
        &self,
        drafts: Vec<Draft>,
        durability: Durability,
        once: bool,
    ) -> Result<Vec<Event>> {
        if let Some(d) = drafts.iter().find(|d| d.session != self.session) {
            return Err(Error::invalid(
                format!("event for session {:?}", d.session),
                format!("cannot go into the journal of session {:?}", self.session),
            ));
        }
        let io = |e| Error::io(&self.path, e);
        let mut file = self.open_locked(true)?.ok_or_else(|| {
            Error::invalid(
                self.path.display().to_string(),
                "journal could not be created",
            )
        })?;
        let len = drop_torn_tail(&mut file).map_err(io)?;
        let drafts = if once {
            without_repeats(&mut file, len, drafts).map_err(io)?
        } else {
            drafts
        };
        if drafts.is_empty() {
            return Ok(Vec::new());
        }
        let first_seq = if len == 0 {
            0
        } else {
            last_seq(&mut file, len).map_err(io)? + 1
        };
        let mut events = Vec::with_capacity(drafts.len());
        let mut bytes = Vec::new();
        for (seq, draft) in (first_seq..).zip(drafts) {
            let event = draft.into_event(seq);
            bytes.extend_from_slice(event.canonical_line().as_bytes());
            bytes.push(b'\n');
            events.push(event);
        }
        let synced = durability == Durability::Synced;
        let written = file
            .write_all(&bytes)
            .and_then(|_| if synced { file.sync_data() } else { Ok(()) });
        if let Err(e) = written {
            // Leave no partial line behind (disk full, quota): the journal
            // stays exactly as it was before this append, and one this
            // append created is gone (an empty journal was left for good,
            // field test 12b; a writer waiting for the lock finds it
            // unlinked and opens a new one).
            if len == 0 {
                let _ = fs::remove_file(&self.path);
            } else {
                let _ = file.set_len(len);
                let _ = file.sync_data();
            }
            return Err(io(e));
        }
        if len == 0
            && synced
            && let Some(dir) = self.path.parent()
        {
            // A new file's directory entry must be durable too.
            sync_dir(dir).map_err(|e| Error::io(dir, e))?;
        }
        Ok(events)
    }

    /// Opens and exclusively locks the journal, making sure the locked file is
    /// still the one at the path (a sealer may have removed it meanwhile).
    /// With `create` false, a missing journal gives `None`.
    fn open_locked(&self, create: bool) -> Result<Option<File>> {
        let io = |e| Error::io(&self.path, e);
        for _ in 0..1000 {
            let opened = OpenOptions::new()
                .read(true)
                .append(true)
                .create(create)
                .open(&self.path);
            let file = match opened {
                Ok(f) => f,
                Err(e) if !create && e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(e) if create && e.kind() == std::io::ErrorKind::NotFound => {
                    let dir = self.path.parent().unwrap_or(Path::new("."));
                    self.sharing
                        .create_dir_all(dir)
                        .map_err(|e| Error::io(dir, e))?;
                    continue;
                }
                Err(e) => return Err(io(e)),
            };
            file.lock().map_err(io)?;
            if same_file_at_path(&file, &self.path) {
                if create && file.metadata().is_ok_and(|m| m.len() == 0) {
                    // new (or still empty): the umask's mode until now
                    self.sharing.apply(&self.path).map_err(io)?;
                }
                return Ok(Some(file));
            }
            // Unlinked by a sealer between our open and our lock: retry.
        }
        Err(Error::invalid(
            self.path.display().to_string(),
            "journal kept being replaced while locking it",
        ))
    }

    /// Locks the journal for sealing and reads it. `None` if there is none.
    pub fn lock_for_seal(&self) -> Result<Option<LockedJournal>> {
        let Some(mut file) = self.open_locked(false)? else {
            return Ok(None);
        };
        let mut bytes = Vec::new();
        file.seek(SeekFrom::Start(0))
            .and_then(|_| file.read_to_end(&mut bytes))
            .map_err(|e| Error::io(&self.path, e))?;
        let (events, problems) = segment::decode(&bytes);
        Ok(Some(LockedJournal {
            session: self.session.clone(),
            path: self.path.clone(),
            sharing: self.sharing,
            _file: file,
            events,
            problems,
        }))
    }

    /// Removes from the journal, under its lock, the events `hidden` names
    /// (a purge of forgotten events a live session still holds), and
    /// returns them. The rest is written to a new file that replaces the
    /// journal with one rename, so a crash leaves the old journal or the
    /// new one; an append waiting for the lock finds the file replaced and
    /// opens the new one.
    pub fn remove_where(&self, hidden: &dyn Fn(&Event) -> bool) -> Result<Vec<Event>> {
        let Some(mut file) = self.open_locked(false)? else {
            return Ok(Vec::new());
        };
        let io = |e| Error::io(&self.path, e);
        let mut bytes = Vec::new();
        file.seek(SeekFrom::Start(0))
            .and_then(|_| file.read_to_end(&mut bytes))
            .map_err(io)?;
        let mut kept = Vec::with_capacity(bytes.len());
        let mut removed = Vec::new();
        for line in bytes.split_inclusive(|b| *b == b'\n') {
            let (events, _) = segment::decode(line);
            match <[Event; 1]>::try_from(events) {
                Ok([event]) if hidden(&event) => removed.push(event),
                _ => kept.extend_from_slice(line),
            }
        }
        if removed.is_empty() {
            return Ok(removed);
        }
        let dir = self.path.parent().unwrap_or(Path::new("."));
        // not `*.jsonl`: never listed as a journal
        let staged = dir.join(format!(".{}.purging", self.session));
        let write = || -> std::io::Result<()> {
            let mut out = File::create(&staged)?;
            out.write_all(&kept)?;
            out.sync_all()?;
            self.sharing.apply(&staged)?;
            fs::rename(&staged, &self.path)?;
            sync_dir(dir)
        };
        if let Err(e) = write() {
            let _ = fs::remove_file(&staged);
            return Err(io(e));
        }
        // the lock goes with `file`, after the rename
        drop(file);
        Ok(removed)
    }

    /// Reads the journal without locking (for readers that tolerate a
    /// concurrent append: a torn last line is skipped).
    pub fn read(&self) -> Result<(Vec<Event>, Vec<LineProblem>)> {
        match fs::read(&self.path) {
            Ok(bytes) => Ok(segment::decode(&bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((Vec::new(), Vec::new())),
            Err(e) => Err(Error::io(&self.path, e)),
        }
    }
}

/// Whether an append waits for its bytes to reach the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// fsync before returning: the events survive a power cut.
    Synced,
    /// Written (they survive the process, and every reader and sealer
    /// sees them) but not synced: the next synced append to the journal
    /// (the turn's next tool call or its Stop) or its seal makes them
    /// durable. For the prompt path, where a hook must not wait for the
    /// disk: an fsync behind another process's writes took hundreds of
    /// milliseconds.
    Deferred,
}

/// A journal held under its lock for sealing.
pub struct LockedJournal {
    /// The session.
    pub session: String,
    /// The journal file.
    pub path: PathBuf,
    /// The mode of the quarantine directory, if retiring makes it.
    sharing: Sharing,
    _file: File,
    /// The events that decoded.
    pub events: Vec<Event>,
    /// Lines that did not decode (a torn last line included).
    pub problems: Vec<LineProblem>,
}

impl LockedJournal {
    /// Whether some line other than a torn last one failed to decode.
    pub fn has_bad_lines(&self) -> bool {
        self.problems.iter().any(|p| !p.message.starts_with("torn"))
    }

    /// Call only once the events are durably sealed. Removes the journal, or
    /// moves it to `quarantine/` if it had bad lines; the lock is released
    /// when `self` drops, after the file is gone from its path.
    pub fn retire(self) -> Result<Option<PathBuf>> {
        let dir = self.path.parent().unwrap_or(Path::new(".")).to_path_buf();
        if self.has_bad_lines() {
            let qdir = dir.join("quarantine");
            self.sharing
                .create_dir_all(&qdir)
                .map_err(|e| Error::io(&qdir, e))?;
            let stamp = memlog_format::time::now().replace([':', '.'], "");
            let target = qdir.join(format!("{}.{stamp}.jsonl", self.session));
            fs::rename(&self.path, &target).map_err(|e| Error::io(&self.path, e))?;
            sync_dir(&dir).map_err(|e| Error::io(&dir, e))?;
            return Ok(Some(target));
        }
        fs::remove_file(&self.path).map_err(|e| Error::io(&self.path, e))?;
        sync_dir(&dir).map_err(|e| Error::io(&dir, e))?;
        Ok(None)
    }
}

/// A journal file found in the journal directory.
#[derive(Clone, Debug)]
pub struct JournalFile {
    /// The session (the file name without `.jsonl`).
    pub session: String,
    /// The file.
    pub path: PathBuf,
    /// Its size.
    pub bytes: u64,
    /// When it was last written, if the file system says.
    pub modified: Option<std::time::SystemTime>,
}

/// Lists the journals in `dir` (sorted by session id).
pub fn list(dir: &Path) -> Result<Vec<JournalFile>> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(dir, e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let name = entry.file_name().to_string_lossy().to_string();
        let Some(session) = name.strip_suffix(".jsonl") else {
            continue;
        };
        if validate_session(session).is_err() {
            continue;
        }
        let Ok(meta) = entry.metadata() else { continue };
        if !meta.is_file() {
            continue;
        }
        out.push(JournalFile {
            session: session.to_string(),
            path: entry.path(),
            bytes: meta.len(),
            modified: meta.modified().ok(),
        });
    }
    out.sort_by(|a, b| a.session.cmp(&b.session));
    Ok(out)
}

/// Truncates a final line without newline (an append interrupted by a
/// crash); returns the resulting length.
fn drop_torn_tail(file: &mut File) -> std::io::Result<u64> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(0);
    }
    let mut last = [0u8; 1];
    file.seek(SeekFrom::Start(len - 1))?;
    file.read_exact(&mut last)?;
    if last[0] == b'\n' {
        return Ok(len);
    }
    let keep = last_newline_before(file, len)?.map_or(0, |i| i + 1);
    file.set_len(keep)?;
    file.sync_data()?;
    Ok(keep)
}

/// Position of the last `\n` strictly before `end`.
fn last_newline_before(file: &mut File, end: u64) -> std::io::Result<Option<u64>> {
    const CHUNK: u64 = 8192;
    let mut pos = end;
    let mut buf = vec![0u8; CHUNK as usize];
    while pos > 0 {
        let start = pos.saturating_sub(CHUNK);
        let n = (pos - start) as usize;
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut buf[..n])?;
        if let Some(i) = buf[..n].iter().rposition(|b| *b == b'\n') {
            return Ok(Some(start + i as u64));
        }
        pos = start;
    }
    Ok(None)
}

/// How far back from a journal's end a turn in progress is looked for: its
/// prompt and the first of its tool calls.
const TURN_WINDOW: u64 = 16 * 1024;
/// A journal not written for this long has no turn in progress: its
/// session ended without a word (a crash, a closed terminal).
const TURN_IDLE: std::time::Duration = std::time::Duration::from_secs(15 * 60);

/// The ids of the prompts of `journal`'s turn in progress: the user
/// prompts after its last answer (or session end), read from its last
/// [`TURN_WINDOW`] bytes; none for a journal idle for [`TURN_IDLE`]. Another session's question being answered right
/// now is no memory for a session running beside it, and near its words it
/// drew the rest of a prompt's context after it (field test 6).
pub fn prompts_in_progress(journal: &JournalFile) -> Result<Vec<String>> {
    let idle = journal
        .modified
        .and_then(|m| m.elapsed().ok())
        .is_some_and(|age| age > TURN_IDLE);
    if idle {
        return Ok(Vec::new());
    }
    let mut file = match File::open(&journal.path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(&journal.path, e)),
    };
    let len = file
        .metadata()
        .map_err(|e| Error::io(&journal.path, e))?
        .len();
    let start = len.saturating_sub(TURN_WINDOW);
    let mut tail = Vec::with_capacity((len - start) as usize);
    file.seek(SeekFrom::Start(start))
        .and_then(|_| file.read_to_end(&mut tail))
        .map_err(|e| Error::io(&journal.path, e))?;
    let tail = String::from_utf8_lossy(&tail);
    let mut prompts = Vec::new();
    // a window that starts inside a line cuts it: that line is not read
    for line in tail
        .lines()
        .skip(usize::from(start > 0))
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
    {
        let kind = |k: Kind| line.contains(&format!("\"kind\":\"{}\"", k.as_str()));
        if kind(Kind::AgentResponse) || kind(Kind::SessionEnd) {
            break;
        }
        if kind(Kind::UserPrompt)
            && let Ok(e) = Event::from_line(line)
            && e.kind == Kind::UserPrompt
        {
            prompts.push(e.id.to_string());
        }
    }
    Ok(prompts)
}

/// How far back from a journal's end a repeat is looked for: a repeat
/// comes at once (two hooks for one event), and tool output is cut to a
/// few kilobytes, so this holds the last dozens of events.
const REPEAT_WINDOW: u64 = 128 * 1024;

/// How close in time a turn's event and its repeat are, for an agent that
/// gives no turn id (Gemini CLI): two hooks for one event run side by side
/// or one after the other, well within this; a user who sends the same
/// words again after an interrupt takes longer (10 s dropped such prompts,
/// field test 7).
const REPEAT_MS: i64 = 2_000;

/// The kinds an agent sends once per turn or session and without an id:
/// a second copy is recognised by time and place ([`repeats_turn`]).
const TURN_KINDS: [Kind; 5] = [
    Kind::SessionStart,
    Kind::UserPrompt,
    Kind::AgentResponse,
    Kind::SessionEnd,
    Kind::SessionSummary,
];

/// Whether a draft without an agent id of its own is compared by time and
/// place ([`repeats_turn`]): a turn's kinds, and a tool call that has no
/// call id (Gemini CLI's hooks give none: hooks configured twice recorded
/// each of its calls twice, field test 12a). The same call with the same
/// output within [`REPEAT_MS`] in one turn is one call.
fn compared_in_turn(draft: &Draft) -> bool {
    TURN_KINDS.contains(&draft.kind) || draft.kind == Kind::ToolObservation
}

/// Drops the drafts that repeat an event already near the journal's end.
/// An agent that runs memlog's hooks twice (user and project settings
/// naming two memlog binaries, which the agent does not merge) sends every
/// prompt, answer and tool call twice; memory must hold each once. A
/// repeat has the same kind and body (the metadata is not compared: two
/// memlog versions may write it differently) and is
/// - for a tool call, the same call (`tool_use_id`, in the body or the
///   metadata);
/// - for a turn's prompt, answer, start, end or summary, or a call with no
///   id ([`compared_in_turn`]), an event
///   of the same turn, within [`REPEAT_MS`] ([`repeats_turn`]): the same
///   words sent again after an answer are a new turn.
fn without_repeats(file: &mut File, len: u64, drafts: Vec<Draft>) -> std::io::Result<Vec<Draft>> {
    if len == 0
        || drafts
            .iter()
            .all(|d| call_id(d).is_none() && !compared_in_turn(d))
    {
        return Ok(drafts);
    }
    let start = len.saturating_sub(REPEAT_WINDOW);
    let mut tail = vec![0u8; (len - start) as usize];
    file.seek(SeekFrom::Start(start))?;
    file.read_exact(&mut tail)?;
    let tail = String::from_utf8_lossy(&tail);
    // a window that starts inside a line cuts it: that line is not read
    let lines: Vec<&str> = tail.lines().skip(usize::from(start > 0)).collect();
    Ok(drafts
        .into_iter()
        .filter(|d| {
            let probe = d.clone().into_event(0);
            match call_id(d) {
                Some(id) => !repeats_call(&lines, id, &probe),
                None if compared_in_turn(d) => !repeats_turn(&lines, &probe),
                None => true,
            }
        })
        .collect())
}

/// Whether `lines` hold tool call `id` with `probe`'s kind and body.
fn repeats_call(lines: &[&str], id: &str, probe: &Event) -> bool {
    let needle = format!("\"tool_use_id\":{}", Value::String(id.to_string()));
    lines
        .iter()
        .filter(|l| l.contains(&needle))
        .filter_map(|l| Event::from_line(l).ok())
        .any(|e| e.kind == probe.kind && e.body == probe.body)
}

/// Whether `lines` hold `probe` sent a moment ago in the same turn: an
/// event of its kind and body within [`REPEAT_MS`] with nothing between
/// that starts another turn for it (an answer for a prompt, a prompt for
/// an answer, either for the rest). A prompt or a session's start, end or
/// summary is compared with the latest of its kind only; an answer with
/// each of its turn, since a Stop records what the agent said between
/// its calls before the answer.
fn repeats_turn(lines: &[&str], probe: &Event) -> bool {
    let barrier: &[Kind] = match probe.kind {
        Kind::UserPrompt => &[Kind::AgentResponse],
        Kind::AgentResponse => &[Kind::UserPrompt],
        _ => &[Kind::UserPrompt, Kind::AgentResponse],
    };
    for line in lines.iter().rev() {
        // only a line that names one of the kinds asked about is parsed
        // (the canonical line writes the key as `"kind":"…"`)
        let named = |k: &Kind| line.contains(&format!("\"kind\":\"{}\"", k.as_str()));
        if !(named(&probe.kind) || barrier.iter().any(named)) {
            continue;
        }
        let Ok(e) = Event::from_line(line) else {
            continue;
        };
        if barrier.contains(&e.kind) {
            return false;
        }
        if e.kind == probe.kind {
            // the agent's own id of the turn, when it gives one (Claude
            // Code's `prompt_id`, Codex's `turn_id`): the same words sent
            // again after an interrupt are another turn, however soon
            let turn = |e: &Event| {
                e.meta
                    .get("turn_id")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            };
            let other_turn = matches!((turn(&e), turn(probe)), (Some(a), Some(b)) if a != b);
            if e.body == probe.body
                && !other_turn
                && (time::to_ms(&e.ts) - time::to_ms(&probe.ts)).abs() <= REPEAT_MS
            {
                return true;
            }
            // an answer, or a call, is compared with each of its turn's:
            // a Stop records what was said between calls before the
            // answer, and calls run side by side
            if !matches!(probe.kind, Kind::AgentResponse | Kind::ToolObservation) {
                return false;
            }
        }
    }
    false
}

/// The agent's id of the tool call a draft records, if it has one.
fn call_id(draft: &Draft) -> Option<&str> {
    draft
        .body
        .get("tool_use_id")
        .or_else(|| draft.meta.get("tool_use_id"))
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
}

/// The `seq` of the last line of a journal whose length is `len` and whose
/// last byte is a newline. A last line that does not parse counts as seq of
/// its line number, so numbering still moves forward.
fn last_seq(file: &mut File, len: u64) -> std::io::Result<u64> {
    let start = last_newline_before(file, len - 1)?.map_or(0, |i| i + 1);
    let mut line = vec![0u8; (len - 1 - start) as usize];
    file.seek(SeekFrom::Start(start))?;
    file.read_exact(&mut line)?;
    #[derive(serde::Deserialize)]
    struct SeqOnly {
        seq: u64,
    }
    match serde_json::from_slice::<SeqOnly>(&line) {
        Ok(s) => Ok(s.seq),
        Err(_) => {
            file.seek(SeekFrom::Start(0))?;
            let mut all = Vec::new();
            file.read_to_end(&mut all)?;
            Ok(all.iter().filter(|b| **b == b'\n').count() as u64)
        }
    }
}

#[cfg(unix)]
fn same_file_at_path(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.ino() == b.ino() && a.dev() == b.dev(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file_at_path(_file: &File, path: &Path) -> bool {
    path.exists()
}

/// fsyncs a directory so that entries created or removed in it are durable.
pub fn sync_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memlog_format::Kind;

    fn draft(session: &str, text: &str) -> Draft {
        Draft::text(session, memlog_format::time::now(), Kind::Note, "p", text)
    }

    #[test]
    fn appends_number_events_and_survive_torn_tails() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::new(dir.path(), "s1").unwrap();
        assert_eq!(j.append(draft("s1", "a")).unwrap().seq, 0);
        assert_eq!(j.append(draft("s1", "b")).unwrap().seq, 1);
        // simulate a crash mid-append
        let mut f = OpenOptions::new().append(true).open(j.path()).unwrap();
        f.write_all(b"{\"v\":1,\"id\":\"tor").unwrap();
        drop(f);
        assert_eq!(j.append(draft("s1", "c")).unwrap().seq, 2);
        let (events, problems) = j.read().unwrap();
        assert_eq!(
            events.iter().map(|e| e.seq).collect::<Vec<_>>(),
            vec![0, 1, 2]
        );
        assert!(problems.is_empty());
    }

    #[test]
    fn a_tool_call_sent_twice_is_recorded_once() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::new(dir.path(), "s1").unwrap();
        let call = |id: &str, output: &str| {
            let mut d = draft("s1", "x");
            d.kind = Kind::ToolObservation;
            d.body = serde_json::json!({"tool": "Bash", "output": output, "tool_use_id": id})
                .as_object()
                .unwrap()
                .clone();
            d
        };
        let once = |d: Draft| j.append_once_as(vec![d], Durability::Synced).unwrap();
        assert_eq!(once(call("toolu_1", "ok")).len(), 1);
        // the same hook twice, with other events in between
        j.append(draft("s1", "a prompt")).unwrap();
        assert!(once(call("toolu_1", "ok")).is_empty());
        // another call, or the same id with other content, is kept
        assert_eq!(once(call("toolu_2", "ok")).len(), 1);
        assert_eq!(once(call("toolu_1", "other")).len(), 1);
        // events without a call id, and plain appends, are never dropped
        assert_eq!(once(draft("s1", "a prompt")).len(), 1);
        assert_eq!(j.append_all(vec![call("toolu_2", "ok")]).unwrap().len(), 1);
        assert_eq!(j.read().unwrap().0.len(), 6);
    }

    /// Gemini CLI's hooks give no call id: hooks configured twice (user and
    /// project settings) sent every call twice, and each was recorded twice
    /// (field test 12a). The same call and output within a moment, in one
    /// turn, is one call; the same call run again later, or after a
    /// prompt, is another.
    #[test]
    fn a_call_without_an_id_sent_twice_at_once_is_recorded_once() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::new(dir.path(), "s1").unwrap();
        let call = |command: &str, secs: &str| {
            let ts = format!("2026-11-27T10:00:{secs}Z");
            let mut d = Draft::text("s1", ts, Kind::ToolObservation, "p", "x");
            d.body = serde_json::json!({"tool": "run_shell_command",
                "input": {"command": command}, "output": "ok"})
            .as_object()
            .unwrap()
            .clone();
            d
        };
        let once = |d: Draft| j.append_once_as(vec![d], Durability::Synced).unwrap().len();
        assert_eq!(once(call("echo a", "00.000")), 1);
        assert_eq!(once(call("echo b", "00.010")), 1);
        // the second hook's copies, a moment later
        assert_eq!(once(call("echo a", "00.030")), 0);
        assert_eq!(once(call("echo b", "00.040")), 0);
        // run again later: another call
        assert_eq!(once(call("echo a", "05.000")), 1);
        assert_eq!(j.read().unwrap().0.len(), 3);
    }

    #[test]
    fn a_prompt_or_answer_sent_twice_at_once_is_recorded_once() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::new(dir.path(), "s1").unwrap();
        let turn = |kind: Kind, text: &str, secs: &str| {
            let ts = format!("2026-11-27T10:00:{secs}Z");
            Draft::text("s1", ts, kind, "p", text)
        };
        // (kind, text, time, appended): each sent by the hooks in turn
        let (prompt, answer) = (Kind::UserPrompt, Kind::AgentResponse);
        let sent = [
            (prompt.clone(), "yes", "00.000", 1),
            // the other hook, a moment later (after the first one's recall)
            (Kind::Recall, "", "00.020", 1),
            (prompt.clone(), "yes", "00.040", 0),
            // a Stop's texts (said between calls, then the answer), twice
            (answer.clone(), "looking", "02.000", 1),
            (answer.clone(), "done", "03.000", 1),
            (answer.clone(), "looking", "02.000", 0),
            (answer.clone(), "done", "03.010", 0),
            // the same words after an answer are a new turn, and so are
            // they after a while
            (prompt.clone(), "yes", "04.000", 1),
            (prompt.clone(), "yes", "30.000", 1),
            (prompt.clone(), "no", "30.100", 1),
        ];
        for (kind, text, secs, appended) in sent {
            let n = j
                .append_once_as(vec![turn(kind.clone(), text, secs)], Durability::Synced)
                .unwrap()
                .len();
            assert_eq!(n, appended, "{kind:?} {text:?} at {secs}");
        }
        // plain appends are never dropped
        assert_eq!(
            j.append_all(vec![turn(prompt, "no", "30.200")])
                .unwrap()
                .len(),
            1
        );
        assert_eq!(j.read().unwrap().0.len(), 8);
    }

    #[test]
    fn rejects_unsafe_session_ids_and_foreign_events() {
        let dir = tempfile::tempdir().unwrap();
        for bad in ["", "../x", ".hidden", "a/b", "a b"] {
            assert!(Journal::new(dir.path(), bad).is_err(), "{bad:?}");
        }
        let j = Journal::new(dir.path(), "s1").unwrap();
        assert!(j.append(draft("s2", "x")).is_err());
    }

    #[test]
    fn seal_lock_reads_and_retire_removes() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::new(dir.path(), "s1").unwrap();
        j.append(draft("s1", "a")).unwrap();
        let locked = j.lock_for_seal().unwrap().unwrap();
        assert_eq!(locked.events.len(), 1);
        assert_eq!(locked.retire().unwrap(), None);
        assert!(!j.path().exists());
        assert!(j.lock_for_seal().unwrap().is_none());
        // a journal with a bad line is quarantined, not deleted
        j.append(draft("s1", "b")).unwrap();
        let mut f = OpenOptions::new().append(true).open(j.path()).unwrap();
        f.write_all(b"garbage\n").unwrap();
        let locked = j.lock_for_seal().unwrap().unwrap();
        assert!(locked.has_bad_lines());
        let moved = locked.retire().unwrap().unwrap();
        assert!(moved.exists());
        assert_eq!(list(dir.path()).unwrap().len(), 0);
    }
}
