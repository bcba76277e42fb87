//! What memlog's commands printed of personal memory, for the hooks.
//!
//! An agent that reads a personal event back through memlog in its shell
//! and repeats it in its answer carries it into a shared session. memlog's
//! own output labels such events ("(personal)", `"scope":"personal"`), and a
//! hook that sees the label in a call's output keeps the rest of the session
//! here. But the output the hook sees is what the command line printed:
//! `memlog search … | grep -o …`, `… --json | jq -r .text` or a script
//! running memlog drop the label (field test 7). So a command that prints a
//! personal event also touches a marker in memlog's folder, and a hook
//! recording a tool call finds it newer than the session's journal was
//! before the call: something run during the call printed personal memory.
//! Another session's read at the same moment makes this one personal too,
//! which errs on the side of the user's privacy.

use std::time::SystemTime;

use memlog_format::Event;
use memlog_store::Repo;

const MARKER: &str = "personal-shown";

/// Notes that this command printed `events`, if one of them is personal.
pub fn note<'e>(repo: &Repo, events: impl IntoIterator<Item = &'e Event>) {
    if events
        .into_iter()
        .any(|e| memlog_format::scope::is_personal(&e.meta))
    {
        mark(repo);
    }
}

/// Notes that this command printed a personal event.
pub fn mark(repo: &Repo) {
    let path = repo.layout().dir().join(MARKER);
    // a store that cannot be written has no hooks recording either
    let _ = std::fs::write(&path, b"").and_then(|()| repo.sharing().apply(&path));
}

/// Whether a memlog command printed a personal event after `since`.
pub fn since(repo: &Repo, since: SystemTime) -> bool {
    std::fs::metadata(repo.layout().dir().join(MARKER))
        .and_then(|m| m.modified())
        .is_ok_and(|printed| printed >= since)
}
