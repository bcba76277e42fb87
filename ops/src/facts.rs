//! Facts checked against the log before they are recorded (docs/DESIGN.md
//! §6, §12), one path for `memlog extract --facts` and the MCP tool
//! `memory_remember`: the events a fact names must be live, its quote must
//! be found in the event it quotes (the span and match become body
//! fields), the older memories it replaces or contradicts must exist, and
//! an older fact about the same subject with another value is superseded
//! unless the fact says what it replaces.

use std::collections::{BTreeSet, HashSet};

use memlog_format::align::{self, Span};
use memlog_format::privacy::Report;
use memlog_format::{Draft, Event, EventId, Kind, time};
use memlog_indexer::Projections;
use memlog_indexer::lookup;
use memlog_store::seal::{JournalSelection, seal_journals};
use memlog_store::{Recorder, Repo};
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::bail;
use crate::error::{Context, Error, Result, chain};
use crate::{ids, workspace};

/// The text a quote is looked up in: the event's text, or for a tool call
/// what the index holds of it (tool, telling inputs, output).
pub fn source_text(e: &Event) -> String {
    match e.text() {
        Some(t) => t.to_string(),
        None => memlog_indexer::derive::derive(e).text,
    }
}

/// Aligns `quote` in `source` at `threshold`: the span, and the evidence
/// fields of the fact's body (`quote`, `event`, `span`, `match`, `score`,
/// `matched_text`); `None` when the quote is not there.
pub fn align_quote(
    source: &Event,
    quote: &str,
    threshold: f32,
) -> Option<(Span, Map<String, Value>)> {
    let text = source_text(source);
    let span = align::align(&text, quote, threshold)?;
    let mut body = Map::new();
    body.insert("quote".into(), json!(quote));
    body.insert("event".into(), json!(source.id));
    body.insert("span".into(), json!([span.start, span.end]));
    body.insert("match".into(), json!(span.match_type.as_str()));
    body.insert(
        "score".into(),
        json!((span.score * 1000.0).round() / 1000.0),
    );
    body.insert("matched_text".into(), json!(span.slice(&text)));
    Some((span, body))
}

/// Words of a fact that say what it is about (no numbers), and the values
/// it gives (words with a digit).
fn subject_and_values(text: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut subject = BTreeSet::new();
    let mut values = BTreeSet::new();
    for w in memlog_format::key::normalize(text).split_whitespace() {
        if w.chars().any(|c| c.is_ascii_digit()) {
            values.insert(w.to_string());
        } else if w.chars().count() > 2 {
            subject.insert(w.to_string());
        }
    }
    (subject, values)
}

/// Whether `newer` says the same thing as `older` about the same subject
/// with another value ("the timeout is 30 minutes" → "… is 2 hours" does
/// not count: the unit word differs too; "… is 30 s" → "… is 45 s" does):
/// nearly the same subject words (Jaccard ≥ 0.8, at least two of them) and
/// different numbers. Conservative: a miss costs a ranking, a false match
/// would hide a true fact.
pub fn same_subject_other_value(older: &str, newer: &str) -> bool {
    let (a, va) = subject_and_values(older);
    let (b, vb) = subject_and_values(newer);
    if a.len() < 2 || b.len() < 2 || va.is_empty() || vb.is_empty() || va == vb {
        return false;
    }
    let inter = a.intersection(&b).count() as f32;
    let union = a.union(&b).count() as f32;
    inter / union >= 0.8
}

/// A fact (or note) proposed for memory, as a front-end received it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Proposal<'a> {
    /// What it says.
    pub text: &'a str,
    /// The words of its evidence it rests on, found in the first of them.
    pub quote: Option<&'a str>,
    /// The events it rests on: ids or unique prefixes.
    pub evidence: &'a [String],
    /// Older memories it replaces.
    pub supersedes: &'a [String],
    /// Older memories it contradicts.
    pub contradicts: &'a [String],
}

/// A proposal that passed: what its body gets besides its text.
#[derive(Clone, Debug)]
pub struct Verified {
    /// The events it rests on, resolved, without repeats.
    pub evidence: Vec<EventId>,
    /// The event its quote was found in, and where.
    pub quoted: Option<(Event, Span)>,
    /// Body fields: the evidence fields of [`align_quote`], `supersedes`,
    /// `contradicts` and `supersedes_detected`.
    pub fields: Map<String, Value>,
    /// Whether an event it rests on is personal: what is drawn from a
    /// personal event (its quote above all) is personal too, and never
    /// leaves this machine.
    pub personal: bool,
}

/// Checks proposed facts against the live log: the one verification of
/// facts (see the module documentation).
pub struct Verifier<'a> {
    repo: &'a Repo,
    projections: &'a Projections,
    threshold: f32,
    /// The live facts, for supersede detection and repeats.
    facts: Vec<Event>,
}

impl<'a> Verifier<'a> {
    /// A verifier aligning quotes at `threshold` (a similarity, 0 to 1).
    pub fn new(repo: &'a Repo, projections: &'a Projections, threshold: f32) -> Result<Self> {
        if !(0.0..=1.0).contains(&threshold) {
            bail!("the alignment threshold must be between 0 and 1");
        }
        let rows = workspace::of_kinds(projections, &[Kind::Fact.as_str()])?;
        Ok(Verifier {
            repo,
            projections,
            threshold,
            facts: workspace::exact_events(repo, rows)?,
        })
    }

    /// The live event `name` (an id or a unique prefix) names, exactly as
    /// logged; the reason as a message when there is none.
    fn event(&self, name: &str) -> Result<Event, String> {
        let id = ids::resolve(self.projections, name).map_err(|e| chain(&e))?;
        let found = (|| -> Result<Option<Event>> {
            let Some(row) = lookup::event(self.projections, &id)? else {
                return Ok(None);
            };
            Ok(workspace::exact_events(self.repo, vec![row])?.pop())
        })();
        match found {
            Ok(Some(e)) => Ok(e),
            Ok(None) => Err(format!("{id} is not a live event")),
            Err(e) => Err(chain(&e)),
        }
    }

    /// Checks one proposal of a `kind` (`fact` or `note`: only facts
    /// supersede what they did not name); `Err` says why it is rejected.
    pub fn check(&self, kind: &Kind, proposal: &Proposal<'_>) -> Result<Verified, String> {
        let mut evidence: Vec<Event> = Vec::with_capacity(proposal.evidence.len());
        for name in proposal.evidence {
            let e = self
                .event(name)
                .map_err(|why| format!("evidence {name:?}: {why}"))?;
            if !evidence.iter().any(|known| known.id == e.id) {
                evidence.push(e);
            }
        }
        // the older memories it replaces or contradicts must exist
        let mut links: Vec<(&str, Vec<EventId>)> = Vec::new();
        for (field, names) in [
            ("supersedes", proposal.supersedes),
            ("contradicts", proposal.contradicts),
        ] {
            let mut ids = Vec::new();
            for name in names {
                let e = self
                    .event(name)
                    .map_err(|why| format!("{field} {name:?}: {why}"))?;
                ids.push(e.id);
            }
            links.push((field, ids));
        }
        // an older fact about the same subject with another value is
        // superseded, unless the proposal says what it replaces
        let mut detected = Vec::new();
        if *kind == Kind::Fact && proposal.supersedes.is_empty() && proposal.contradicts.is_empty()
        {
            detected = self
                .facts
                .iter()
                .filter(|older| {
                    older
                        .text()
                        .is_some_and(|t| same_subject_other_value(t, proposal.text))
                })
                .map(|older| older.id.clone())
                .collect();
            if let Some((_, ids)) = links.iter_mut().find(|(f, _)| *f == "supersedes") {
                ids.extend(detected.iter().cloned());
            }
        }
        let mut fields = Map::new();
        let mut quoted = None;
        if let Some(quote) = proposal.quote {
            let Some(source) = evidence.first() else {
                return Err(
                    "a quote needs the event it quotes: give that event as evidence".to_string(),
                );
            };
            let Some((span, aligned)) = align_quote(source, quote, self.threshold) else {
                return Err(format!(
                    "the quote is not in event {} (nor anything with similarity ≥ {}); \
                     quote its exact words or drop the fact",
                    source.id.short(),
                    self.threshold
                ));
            };
            fields.extend(aligned);
            quoted = Some((source.clone(), span));
        }
        for (field, ids) in links.into_iter().filter(|(_, ids)| !ids.is_empty()) {
            fields.insert(field.into(), json!(ids));
        }
        if !detected.is_empty() {
            // said by memlog, not by the agent: reviewers should know
            fields.insert("supersedes_detected".into(), json!(true));
        }
        if *kind == Kind::Fact {
            crate::review::mark(self.repo, &mut fields);
            let quote = proposal.quote.unwrap_or_default();
            if let Some(anchor) = crate::anchor::anchor(self.repo, &[proposal.text, quote]) {
                fields.insert("anchor".into(), anchor);
            }
        }
        let personal = evidence
            .iter()
            .any(|e| memlog_format::scope::is_personal(&e.meta));
        Ok(Verified {
            evidence: evidence.into_iter().map(|e| e.id).collect(),
            quoted,
            fields,
            personal,
        })
    }

    /// The (event, quote, text) of every live fact, to tell a fact
    /// recorded before.
    fn recorded(&self) -> HashSet<(String, String, String)> {
        self.facts
            .iter()
            .filter_map(|e| {
                let s = |k: &str| e.body.get(k).and_then(Value::as_str).map(str::to_string);
                Some((s("event")?, s("quote")?, s("text")?))
            })
            .collect()
    }
}

/// One fact of a facts file (`memlog extract --facts`), as given.
#[derive(Clone, Debug, Serialize)]
pub struct Given {
    /// Its place in the file, from 0.
    pub index: usize,
    /// What it says.
    pub text: String,
    /// The words of the event it rests on.
    pub quote: String,
    /// That event: its id or a unique prefix.
    pub event: String,
    /// Older memories it replaces.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub supersedes: Vec<String>,
    /// Older memories it contradicts.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub contradicts: Vec<String>,
}

/// A fact that was not recorded, and why.
#[derive(Clone, Debug, Serialize)]
pub struct Rejected {
    /// The fact.
    #[serde(flatten)]
    pub fact: Given,
    /// Why.
    pub reason: String,
}

/// A fact recorded.
#[derive(Clone, Debug, Serialize)]
pub struct Recorded {
    /// The `fact` event.
    pub id: EventId,
    /// What it says.
    pub text: String,
    /// The event its quote was found in.
    pub event: EventId,
    /// Where.
    #[serde(flatten)]
    pub span: Span,
}

/// What `memlog extract --facts` did with a facts file.
#[derive(Clone, Debug, Serialize)]
pub struct Extracted {
    /// The facts recorded.
    pub recorded: Vec<Recorded>,
    /// The facts rejected, with why.
    pub rejected: Vec<Rejected>,
    /// Facts the log held already (or given twice).
    pub already_recorded: usize,
    /// The session they were recorded in, when any were.
    pub session: Option<String>,
    /// Its commit.
    pub commit: Option<String>,
}

/// The facts of a facts file: a JSON array, `{"facts": [...]}`, one fact,
/// or one fact per line. Malformed entries are rejected with a reason; a
/// file that is not JSON at all is an error.
pub fn parse_file(raw: &str) -> Result<(Vec<Given>, Vec<Rejected>)> {
    let items: Vec<Value> = match serde_json::from_str::<Value>(raw) {
        Ok(Value::Array(items)) => items,
        Ok(Value::Object(mut m)) if m.contains_key("facts") => match m.remove("facts") {
            Some(Value::Array(items)) => items,
            _ => bail!("\"facts\" must be an array"),
        },
        Ok(one @ Value::Object(_)) => vec![one],
        Ok(_) => bail!("expected an array of facts, {{\"facts\": [...]}} or one fact per line"),
        Err(_) => raw
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(n, l)| {
                serde_json::from_str(l).context(format_args!("line {} is not JSON", n + 1))
            })
            .collect::<Result<_>>()?,
    };
    let mut facts = Vec::new();
    let mut rejected = Vec::new();
    for (index, item) in items.into_iter().enumerate() {
        let s = |k: &str| {
            item.get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .trim()
                .to_string()
        };
        let text = Some(s("text"))
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| s("fact"));
        let list = |k: &str| -> Vec<String> {
            match item.get(k) {
                Some(Value::String(one)) if !one.trim().is_empty() => vec![one.trim().to_string()],
                Some(Value::Array(many)) => many
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|v| v.trim().to_string())
                    .filter(|v| !v.is_empty())
                    .collect(),
                _ => Vec::new(),
            }
        };
        let fact = Given {
            index,
            text,
            quote: s("quote"),
            event: s("event"),
            supersedes: list("supersedes"),
            contradicts: list("contradicts"),
        };
        let missing: Vec<&str> = [
            ("text", &fact.text),
            ("quote", &fact.quote),
            ("event", &fact.event),
        ]
        .into_iter()
        .filter(|(_, v)| v.is_empty())
        .map(|(k, _)| k)
        .collect();
        if missing.is_empty() {
            facts.push(fact);
        } else {
            rejected.push(Rejected {
                reason: format!("missing {}", missing.join(", ")),
                fact,
            });
        }
    }
    Ok((facts, rejected))
}

/// Records the facts of a facts file that pass the [`Verifier`] at
/// `threshold`, in a session of their own sealed into one commit; the
/// others are listed with why, and facts recorded before are skipped.
/// `rejected` are the file's malformed entries ([`parse_file`]).
pub fn extract(
    repo: &Repo,
    facts: Vec<Given>,
    mut rejected: Vec<Rejected>,
    threshold: f32,
) -> Result<Extracted> {
    let projections = workspace::projections(repo)?;
    let verifier = Verifier::new(repo, &projections, threshold)?;
    let mut known = verifier.recorded();
    let session = memlog_store::journal::mint_session("facts");
    // facts drawn from personal events: a session of their own, personal
    let personal_session = memlog_store::journal::mint_session("personal");
    let now = time::now();
    let mut drafts = Vec::new();
    let mut accepted: Vec<(Given, EventId, Span)> = Vec::new();
    let mut skipped = 0usize;
    for fact in facts {
        let proposal = Proposal {
            text: &fact.text,
            quote: Some(&fact.quote),
            evidence: std::slice::from_ref(&fact.event),
            supersedes: &fact.supersedes,
            contradicts: &fact.contradicts,
        };
        let (fields, source, span, personal) = match verifier.check(&Kind::Fact, &proposal) {
            Ok(Verified {
                quoted: Some((source, span)),
                fields,
                personal,
                ..
            }) => (fields, source, span, personal),
            Ok(_) => continue,
            Err(reason) => {
                rejected.push(Rejected { fact, reason });
                continue;
            }
        };
        // already logged, or given twice in this file
        if !known.insert((source.id.to_string(), fact.quote.clone(), fact.text.clone())) {
            skipped += 1;
            continue;
        }
        let mut body = Map::new();
        body.insert("text".into(), json!(fact.text));
        body.extend(fields);
        let mut draft = Draft::new(
            if personal {
                &personal_session
            } else {
                &session
            },
            &now,
            Kind::Fact,
            source.project.clone(),
            body,
        );
        if personal {
            memlog_format::scope::mark_personal(&mut draft.meta);
        }
        drafts.push(draft);
        accepted.push((fact, source.id, span));
    }
    drop(projections);
    let (stored, commit) = workspace::record(repo, drafts, true)?;
    let recorded: Vec<Recorded> = stored
        .iter()
        .zip(accepted)
        .map(|(e, (fact, event, span))| Recorded {
            id: e.id.clone(),
            text: fact.text,
            event,
            span,
        })
        .collect();
    let session = stored
        .iter()
        .find(|e| e.session == session)
        .or(stored.first())
        .map(|e| e.session.clone());
    Ok(Extracted {
        session,
        recorded,
        rejected,
        already_recorded: skipped,
        commit,
    })
}

/// A note or fact to remember, as an agent proposed it through a tool.
#[derive(Clone, Debug)]
pub struct Remember<'a> {
    /// `Note` or `Fact`.
    pub kind: Kind,
    /// The client proposing it (`meta.client`).
    pub client: &'a str,
    /// The session it joins.
    pub session: &'a str,
    /// What it says, its evidence and links.
    pub proposal: Proposal<'a>,
    /// Keep it on this machine (FORMAT.md §9): it is then a small session
    /// of its own, sealed at once on the personal ref, so that the
    /// caller's session stays shared.
    pub personal: bool,
}

/// A note or fact remembered.
#[derive(Clone, Debug)]
pub struct Remembered {
    /// The event as stored.
    pub event: Event,
    /// The events it rests on.
    pub evidence: Vec<EventId>,
    /// What the privacy filter did.
    pub report: Report,
}

/// Longest note or fact remembered.
pub const MAX_REMEMBER_BYTES: usize = 64 * 1024;

/// Appends a note or fact to the live session `remember.session`, after
/// the [`Verifier`]'s checks, through the same privacy filter as every
/// other write.
pub fn remember(
    repo: &Repo,
    projections: &Projections,
    remember: &Remember<'_>,
) -> Result<Remembered> {
    let proposal = &remember.proposal;
    let text = proposal.text.trim();
    if text.is_empty() {
        bail!("text is empty: say what to remember");
    }
    if text.len() > MAX_REMEMBER_BYTES {
        bail!(
            "text is {} bytes; keep a memory under {MAX_REMEMBER_BYTES} bytes",
            text.len()
        );
    }
    let quote = proposal.quote.map(str::trim).filter(|q| !q.is_empty());
    if quote.is_some() && (remember.kind != Kind::Fact || proposal.evidence.is_empty()) {
        bail!("a quote belongs to a fact: give kind \"fact\" and the event it quotes as evidence");
    }
    let verified = Verifier::new(repo, projections, align::DEFAULT_THRESHOLD)?
        .check(
            &remember.kind,
            &Proposal {
                text,
                quote,
                ..*proposal
            },
        )
        .map_err(|reason| Error::Invalid(format!("rejected: {reason}")))?;
    let project = verified
        .quoted
        .as_ref()
        .map_or_else(|| repo.project(), |(source, _)| source.project.clone());
    // What rests on a personal event is personal too. A personal event
    // makes the rest of its session personal: it gets a session of its own.
    let personal = remember.personal || verified.personal;
    let own = personal.then(|| memlog_store::journal::mint_session("personal"));
    let mut draft = Draft::text(
        own.as_deref().unwrap_or(remember.session),
        time::now(),
        remember.kind.clone(),
        project,
        text.to_string(),
    );
    draft.meta = remember_meta(remember.client, &verified.evidence);
    if personal {
        memlog_format::scope::mark_personal(&mut draft.meta);
    }
    draft.body.extend(verified.fields);
    repo.ensure_dirs()?;
    let (mut events, report) = Recorder::new(repo)?.record(vec![draft])?;
    let event = events.pop().context("nothing was recorded")?;
    if let Some(session) = own {
        seal_journals(repo, &JournalSelection::Session(session))?;
    }
    Ok(Remembered {
        event,
        evidence: verified.evidence,
        report,
    })
}

fn remember_meta(client: &str, evidence: &[EventId]) -> Map<String, Value> {
    let mut meta = Map::new();
    meta.insert("client".into(), Value::String(client.into()));
    if !evidence.is_empty() {
        meta.insert(
            "evidence".into(),
            Value::Array(
                evidence
                    .iter()
                    .map(|e| Value::String(e.to_string()))
                    .collect(),
            ),
        );
    }
    meta
}

#[cfg(test)]
mod tests {
    use super::same_subject_other_value as same;

    #[test]
    fn a_new_value_for_the_same_subject_is_found() {
        assert!(same(
            "The checkout session timeout is 30 minutes",
            "The checkout session timeout is 120 minutes"
        ));
        assert!(!same(
            "The checkout session timeout is 30 minutes",
            "The checkout session timeout is 30 minutes"
        ));
        assert!(!same("The retry limit is 3", "The checkout timeout is 5"));
        assert!(!same(
            "Emails are stored lowercased",
            "Emails are stored hashed"
        ));
    }
}
