use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;
use memlog_format::align::{self, Span};
use memlog_format::{Draft, Event, EventId, IdError, Kind, time};
use memlog_indexer::Projections;
use memlog_ops::error::chain;
use memlog_ops::extraction;
use memlog_ops::facts;
use memlog_ops::ids;
use memlog_ops::workspace;
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::output;

/// Record facts extracted by an LLM, each tied to the exact words of the
/// event it came from.
///
/// FILE (or `-` for stdin) holds a JSON array of facts, `{"facts": [...]}`,
/// or one fact per line. A fact is `{"text": "...", "quote": "...",
/// "event": "ID"}`: the fact, the words of the event it rests on, and that
/// event's id (or a unique prefix). memlog never calls an LLM: it aligns
/// each quote in the event's text (exactly, else the closest window with a
/// similarity of at least 0.85) and records a `fact` event with the span
/// (in characters) and the match type. Facts whose quote cannot be found,
/// or whose event does not exist, are rejected and listed; facts already
/// recorded are skipped. A fact that replaces or contradicts an older
/// one names it: `"supersedes": "ID"` or `"contradicts": "ID"`.
///
/// `--prompt SESSION` prints the instruction that asks an agent for a
/// session's facts (the one the Stop hook gives): the session's compact
/// view with event ids, the three steps, and how to hand the facts back.
#[derive(Args)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["facts", "prompt"])))]
pub struct ExtractArgs {
    /// The facts file (`-` for stdin).
    #[arg(long = "facts", value_name = "FILE")]
    facts: Option<PathBuf>,

    /// Print the extraction instruction for this session instead
    /// (`latest`: the session of the latest prompt).
    #[arg(long, value_name = "SESSION")]
    prompt: Option<String>,

    /// Fuzzy alignment threshold (similarity, 0 to 1).
    #[arg(long, default_value_t = align::DEFAULT_THRESHOLD)]
    threshold: f32,

    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

/// One fact as given.
#[derive(Clone, Debug, Serialize)]
struct Given {
    index: usize,
    text: String,
    quote: String,
    event: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    supersedes: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    contradicts: Vec<String>,
}

#[derive(Serialize)]
struct Rejected {
    #[serde(flatten)]
    fact: Given,
    reason: String,
}

#[derive(Serialize)]
struct Recorded {
    id: EventId,
    text: String,
    event: EventId,
    #[serde(flatten)]
    span: Span,
}

pub fn cmd_extract(dir: &Path, args: ExtractArgs) -> anyhow::Result<ExitCode> {
    if let Some(session) = &args.prompt {
        let repo = workspace::open(dir)?;
        let projections = workspace::projections(&repo)?;
        let text = extraction::prompt_for(&projections, session)?;
        if args.json {
            output::print_json(&json!({"session": session, "instruction": text}))?;
        } else {
            print!("{text}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let Some(facts_file) = args.facts.clone() else {
        bail!("name the facts file: --facts FILE (or - for stdin)");
    };
    if !(0.0..=1.0).contains(&args.threshold) {
        bail!("--threshold must be between 0 and 1");
    }
    let facts_path = facts_file.as_path();
    let raw = if facts_path == Path::new("-") {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .context("reading facts from stdin")?;
        s
    } else {
        std::fs::read_to_string(facts_path)
            .with_context(|| format!("reading {}", facts_path.display()))?
    };
    let (facts, mut rejected) = parse_facts(&raw)
        .with_context(|| format!("{} is not a facts file", facts_path.display()))?;
    let repo = workspace::open_for_writing(dir)?;
    let events = workspace::live(&repo, false)?;
    let projections = workspace::projections(&repo)?;
    let by_id: HashMap<&str, &Event> = events.iter().map(|e| (e.id.as_str(), e)).collect();
    let mut known: HashSet<(String, String, String)> = events
        .iter()
        .filter(|e| e.kind == Kind::Fact)
        .filter_map(|e| {
            let s = |k: &str| e.body.get(k).and_then(Value::as_str).map(str::to_string);
            Some((s("event")?, s("quote")?, s("text")?))
        })
        .collect();

    let session = memlog_store::journal::mint_session("facts");
    let now = time::now();
    let mut drafts = Vec::new();
    let mut accepted: Vec<(Given, EventId, Span)> = Vec::new();
    let mut skipped = 0usize;
    for fact in facts {
        let source = match find_event(&projections, &by_id, &fact.event) {
            Ok(e) => e,
            Err(reason) => {
                rejected.push(Rejected { fact, reason });
                continue;
            }
        };
        // the older memories it replaces or contradicts must exist
        let mut links: Vec<(&str, Vec<EventId>)> = Vec::new();
        let mut bad_link = None;
        for (field, names) in [
            ("supersedes", &fact.supersedes),
            ("contradicts", &fact.contradicts),
        ] {
            let mut ids = Vec::new();
            for name in names {
                match find_event(&projections, &by_id, name) {
                    Ok(e) => ids.push(e.id.clone()),
                    Err(reason) => bad_link = Some(format!("{field} {name:?}: {reason}")),
                }
            }
            links.push((field, ids));
        }
        if let Some(reason) = bad_link {
            rejected.push(Rejected { fact, reason });
            continue;
        }
        // an older fact about the same subject with another value is
        // superseded, unless the agent said what this one replaces
        let mut detected = Vec::new();
        if fact.supersedes.is_empty() && fact.contradicts.is_empty() {
            for older in events.iter().filter(|e| e.kind == Kind::Fact) {
                if older
                    .text()
                    .is_some_and(|t| facts::same_subject_other_value(t, &fact.text))
                {
                    detected.push(older.id.clone());
                }
            }
            if let Some((_, ids)) = links.iter_mut().find(|(f, _)| *f == "supersedes") {
                ids.extend(detected.iter().cloned());
            }
        }
        let Some((span, evidence)) = facts::align_quote(source, &fact.quote, args.threshold) else {
            rejected.push(Rejected {
                reason: format!(
                    "the quote is not in event {} (nor anything with similarity ≥ {})",
                    source.id.short(),
                    args.threshold
                ),
                fact,
            });
            continue;
        };
        // already logged, or given twice in this file
        if !known.insert((source.id.to_string(), fact.quote.clone(), fact.text.clone())) {
            skipped += 1;
            continue;
        }
        let mut body = Map::new();
        body.insert("text".into(), json!(fact.text));
        body.extend(evidence);
        for (field, ids) in links.into_iter().filter(|(_, ids)| !ids.is_empty()) {
            body.insert(field.into(), json!(ids));
        }
        if !detected.is_empty() {
            // said by memlog, not by the agent: reviewers should know
            body.insert("supersedes_detected".into(), json!(true));
        }
        drafts.push(Draft::new(
            &session,
            &now,
            Kind::Fact,
            source.project.clone(),
            body,
        ));
        accepted.push((fact, source.id.clone(), span));
    }
    let (stored, commit) = workspace::record(&repo, drafts, true)?;
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
    if args.json {
        output::print_json(&json!({
            "recorded": recorded,
            "rejected": rejected,
            "already_recorded": skipped,
            "session": (!recorded.is_empty()).then_some(&session),
            "commit": commit,
        }))?;
    } else {
        for r in &recorded {
            println!(
                "{}  {} {}..{} of {}: {}",
                r.id.short(),
                r.span.match_type.as_str(),
                r.span.start,
                r.span.end,
                r.event.short(),
                r.text
            );
        }
        for r in &rejected {
            println!("rejected #{}: {} ({})", r.fact.index, r.fact.text, r.reason);
        }
        println!(
            "{} recorded, {} rejected, {} already recorded",
            recorded.len(),
            rejected.len(),
            skipped
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The facts of a file; malformed entries are rejected with a reason, a
/// file that is not JSON at all is an error.
fn parse_facts(raw: &str) -> anyhow::Result<(Vec<Given>, Vec<Rejected>)> {
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
                serde_json::from_str(l).with_context(|| format!("line {} is not JSON", n + 1))
            })
            .collect::<anyhow::Result<_>>()?,
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

/// The event a fact names: by id, or by a unique prefix (the resolver
/// every command uses).
fn find_event<'a>(
    projections: &Projections,
    by_id: &HashMap<&str, &'a Event>,
    name: &str,
) -> Result<&'a Event, String> {
    if let Some(e) = by_id.get(name.to_ascii_lowercase().as_str()) {
        return Ok(e);
    }
    let id = ids::resolve(projections, name).map_err(|e| chain(&e))?;
    by_id.get(id.as_str()).copied().ok_or_else(|| {
        IdError::Unknown {
            input: name.to_string(),
        }
        .to_string()
    })
}
