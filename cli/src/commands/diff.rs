use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use memlog_format::id;
use memlog_ops::diff;
use memlog_ops::memory_diff::{MemoryDiff, TaskChange, TaskChangeKind};
use memlog_ops::workspace;
use similar::{ChangeTag, TextDiff};

use crate::output;

/// Show what memory changed between two states of the memlog ref.
///
/// Prints sessions added (with their first prompt), events added by kind,
/// tasks created, changed and closed (with a diff of their state), files and
/// artifacts named for the first time, and forgets with what they hide (never
/// the hidden text). REVS is `A..B` (any revisions of the memlog ref, e.g.
/// `memlog~3..memlog`), `A..` (up to the tip) or one commit (what it added
/// to its first parent). Default: what the last seal or sync added
/// (`memlog@{1}..memlog`, or the tip's first parent when the reflog has no
/// entry).
#[derive(Args)]
pub struct DiffArgs {
    /// `A..B`, `A..` or one commit.
    revs: Option<String>,

    /// Output format: text, or markdown for a pull-request comment.
    #[arg(long, value_enum, default_value_t = DiffFormat::Text)]
    format: DiffFormat,

    /// Print the result as JSON (same as --format json).
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum DiffFormat {
    Text,
    Markdown,
    Json,
}

pub fn cmd_diff(dir: &Path, args: DiffArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open(dir)?;
    let computed = diff::compute(&repo, args.revs.as_deref())?;
    let format = if args.json {
        DiffFormat::Json
    } else {
        args.format
    };
    let diff = &computed.diff;
    let from_name = computed.from.map(|f| id::short(&f.to_string()).to_string());
    let to_name = id::short(&computed.to.to_string()).to_string();
    match format {
        DiffFormat::Json => output::print_json(&computed.document())?,
        DiffFormat::Text => print!("{}", render_text(diff, from_name.as_deref(), &to_name)),
        DiffFormat::Markdown => {
            print!("{}", render_markdown(diff, from_name.as_deref(), &to_name))
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn kinds_line(diff: &MemoryDiff) -> String {
    diff.events_by_kind
        .iter()
        .map(|(k, n)| format!("{n} {k}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn change_word(kind: TaskChangeKind) -> &'static str {
    match kind {
        TaskChangeKind::Created => "created",
        TaskChangeKind::Changed => "changed",
        TaskChangeKind::Closed => "closed",
    }
}

/// A line diff of a task's state (`-status: open` / `+status: done`);
/// unchanged fields are left out.
fn state_diff(task: &TaskChange) -> Vec<String> {
    let old = TaskChange::state_text(&task.before);
    let new = TaskChange::state_text(&task.after);
    TextDiff::from_lines(&old, &new)
        .iter_all_changes()
        .filter_map(|c| {
            let sign = match c.tag() {
                ChangeTag::Delete => '-',
                ChangeTag::Insert => '+',
                ChangeTag::Equal => return None,
            };
            Some(format!("{sign}{}", c.value().trim_end_matches('\n')))
        })
        .collect()
}

fn range_title(from: Option<&str>, to: &str) -> String {
    match from {
        Some(f) => format!("{f}..{to}"),
        None => format!("(empty)..{to}"),
    }
}

/// "3 event(s) added, 1 removed, 1 erased by 1 purge(s)"
fn counts(diff: &MemoryDiff) -> String {
    let mut s = format!("{} event(s) added", diff.events_added);
    if diff.events_removed > 0 {
        let _ = write!(s, ", {} removed", diff.events_removed);
    }
    if !diff.purges.is_empty() {
        let erased: usize = diff.purges.iter().map(|p| p.events.len()).sum();
        let _ = write!(s, ", {erased} erased by {} purge(s)", diff.purges.len());
    }
    s
}

fn render_text(diff: &MemoryDiff, from: Option<&str>, to: &str) -> String {
    let mut s = String::new();
    let _ = write!(s, "memory {}: ", range_title(from, to));
    if diff.is_empty() {
        s.push_str("no change\n");
        return s;
    }
    let _ = writeln!(s, "{}", counts(diff));
    if !diff.events_by_kind.is_empty() {
        let _ = writeln!(s, "  {}", kinds_line(diff));
    }
    if !diff.sessions_added.is_empty() {
        let _ = writeln!(s, "\nsessions added ({}):", diff.sessions_added.len());
        for a in &diff.sessions_added {
            let _ = writeln!(
                s,
                "  {}  {}  {} event(s)  {}",
                output::short_time(&a.start),
                a.session,
                a.events,
                a.first_prompt.as_deref().unwrap_or("-")
            );
        }
    }
    if !diff.tasks.is_empty() {
        let _ = writeln!(s, "\ntasks ({}):", diff.tasks.len());
        for t in &diff.tasks {
            let _ = writeln!(s, "  {:<8} {}  ({})", change_word(t.change), t.title, t.key);
            for line in state_diff(t) {
                let _ = writeln!(s, "      {line}");
            }
        }
    }
    if !diff.entities_added.is_empty() {
        let _ = writeln!(s, "\nentities added ({}):", diff.entities_added.len());
        for e in &diff.entities_added {
            let _ = writeln!(s, "  {:<8} {}", e.entity_type, e.title);
        }
    }
    if !diff.learned.is_empty() {
        let _ = writeln!(s, "\nlearned ({}):", diff.learned.len());
        for l in &diff.learned {
            let _ = writeln!(
                s,
                "  {:<12}  {}  [{}] {}",
                l.change,
                l.id.short(),
                l.label,
                l.text
            );
            if !l.refs.is_empty() {
                let _ = writeln!(s, "      {}", short_refs(&l.refs));
            }
            if let Some(note) = review_note(l) {
                let _ = writeln!(s, "      {note}");
            }
        }
    }
    if !diff.forgets.is_empty() {
        let _ = writeln!(s, "\nforgets ({}):", diff.forgets.len());
        for f in &diff.forgets {
            let _ = writeln!(
                s,
                "  {}  {}  {}{}",
                f.id.short(),
                output::short_time(&f.ts),
                what_it_hides(f),
                f.reason
                    .as_deref()
                    .map(|r| format!("  reason: {r}"))
                    .unwrap_or_default()
            );
            for h in &f.hides {
                let _ = writeln!(
                    s,
                    "      {}  {}  {}  {}",
                    h.id.short(),
                    h.kind,
                    h.session,
                    output::short_time(&h.ts)
                );
            }
        }
    }
    if !diff.purges.is_empty() {
        let _ = writeln!(
            s,
            "
purges ({}):",
            diff.purges.len()
        );
        for p in &diff.purges {
            let _ = writeln!(s, "  {}  {}", id::short(&p.name), purge_line(p));
            let _ = writeln!(s, "      {}", short_refs(&p.events));
        }
    }
    s
}

/// "erased 2 event(s) of 1 session(s) from history: 1 segment(s), 3
/// commit(s) rewritten (2026-11-27 10:00)"
fn purge_line(p: &memlog_ops::memory_diff::PurgeAdded) -> String {
    format!(
        "erased {} event(s) of {} session(s) from history: {} segment(s), {} commit(s) rewritten ({})",
        p.events.len(),
        p.sessions.len(),
        p.segments_rewritten,
        p.commits_rewritten,
        output::short_time(&p.ts)
    )
}

/// Event ids cut to 12 digits (session names as they are).
fn short_refs(refs: &[String]) -> String {
    refs.iter()
        .map(|r| {
            if r.len() == 64 && r.bytes().all(|b| b.is_ascii_hexdigit()) {
                &r[..12]
            } else {
                r.as_str()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Escapes text for a markdown table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

fn render_markdown(diff: &MemoryDiff, from: Option<&str>, to: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "### Memory changes `{}`\n", range_title(from, to));
    if diff.is_empty() {
        s.push_str("No change.\n");
        return s;
    }
    let _ = write!(s, "**{}**", counts(diff));
    if diff.events_by_kind.is_empty() {
        s.push_str("\n\n");
    } else {
        let _ = writeln!(s, ": {}\n", kinds_line(diff));
    }
    if !diff.sessions_added.is_empty() {
        let _ = writeln!(s, "#### Sessions added ({})\n", diff.sessions_added.len());
        s.push_str("| started | session | events | first prompt |\n|---|---|---|---|\n");
        for a in &diff.sessions_added {
            let _ = writeln!(
                s,
                "| {} | `{}` | {} | {} |",
                output::short_time(&a.start),
                cell(&a.session),
                a.events,
                cell(a.first_prompt.as_deref().unwrap_or("—"))
            );
        }
        s.push('\n');
    }
    if !diff.tasks.is_empty() {
        let _ = writeln!(s, "#### Tasks ({})\n", diff.tasks.len());
        for t in &diff.tasks {
            let _ = writeln!(
                s,
                "- **{}** {} (`{}`)",
                change_word(t.change),
                cell(&t.title),
                t.key
            );
            let lines = state_diff(t);
            if !lines.is_empty() {
                s.push_str("\n  ```diff\n");
                for line in lines {
                    let _ = writeln!(s, "  {line}");
                }
                s.push_str("  ```\n");
            }
        }
        s.push('\n');
    }
    if !diff.entities_added.is_empty() {
        let _ = writeln!(s, "#### Entities added ({})\n", diff.entities_added.len());
        for e in &diff.entities_added {
            let _ = writeln!(s, "- {} `{}`", e.entity_type, e.title);
        }
        s.push('\n');
    }
    if !diff.learned.is_empty() {
        let _ = writeln!(s, "#### Learned ({})\n", diff.learned.len());
        for l in &diff.learned {
            let _ = writeln!(
                s,
                "- **{}** `{}` [{}] {}{}{}",
                l.change.replace('_', " "),
                l.id.short(),
                cell(&l.label),
                cell(&l.text),
                if l.refs.is_empty() {
                    String::new()
                } else {
                    format!(" — {}", short_refs(&l.refs))
                },
                review_note(l)
                    .map(|note| format!(" — *{note}*"))
                    .unwrap_or_default()
            );
        }
        s.push('\n');
    }
    if !diff.forgets.is_empty() {
        let _ = writeln!(s, "#### Forgets ({})\n", diff.forgets.len());
        for f in &diff.forgets {
            let _ = writeln!(
                s,
                "- `{}` {}{}",
                f.id.short(),
                what_it_hides(f),
                f.reason
                    .as_deref()
                    .map(|r| format!(" — {}", cell(r)))
                    .unwrap_or_default()
            );
            for h in &f.hides {
                let _ = writeln!(
                    s,
                    "  - `{}` {} in `{}` ({})",
                    h.id.short(),
                    h.kind,
                    h.session,
                    output::short_time(&h.ts)
                );
            }
        }
    }
    if !diff.purges.is_empty() {
        let _ = writeln!(s, "#### Purges ({})\n", diff.purges.len());
        for p in &diff.purges {
            let _ = writeln!(
                s,
                "- `{}` {}: {}",
                id::short(&p.name),
                purge_line(p),
                short_refs(&p.events)
            );
        }
    }
    s
}

/// What a forget hides, in words: the events it hides that are still
/// stored, or, when a purge erased them all, how many it named.
fn what_it_hides(f: &memlog_ops::memory_diff::ForgetAdded) -> String {
    if f.hides.is_empty() {
        if !f.targets.is_empty() {
            return format!(
                "names {} event(s), none stored any more (purged)",
                f.targets.len()
            );
        }
        if let Some(session) = &f.session {
            return format!("forgets session {session}, none of whose events is stored any more");
        }
        if let Some(before) = &f.before {
            return format!("forgets everything before {before}, none of which is stored any more");
        }
    }
    format!("hides {} event(s)", f.hides.len())
}

/// Why no agent is given a rule the range added, if none is: the reviewer
/// reads `memlog diff` to decide, so a held rule says how.
fn review_note(l: &memlog_ops::memory_diff::Learned) -> Option<String> {
    match l.review? {
        "held" => Some(format!(
            "held for review: `memlog review accept|reject {}`",
            l.id.short()
        )),
        other => Some(format!("{other} in review: no agent is given it")),
    }
}
