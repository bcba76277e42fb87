//! Context assembly: the most relevant memories for a prompt as markdown an
//! agent can read, grouped by session, each cited by its event id, within a
//! token budget.
//!
//! Tokens are counted with a documented approximation: one token per four
//! bytes of UTF-8 text, rounded up (close to what BPE tokenizers give for
//! English prose and code; conservative for most other text).

use std::collections::{HashMap, HashSet};

use memlog_format::{Config, EventId};
use serde::{Deserialize, Serialize};

use crate::Result;
use crate::projection::Projections;
use crate::search::{Hit, SearchRequest, search};

/// Approximate token count of `text`.
pub fn approx_tokens(text: &str) -> usize {
    text.len().div_ceil(4)
}

/// Memories considered before budgeting.
const CANDIDATES: usize = 32;
/// Most events injected for one prompt: as many as the budget holds,
/// short ones included (a cap of 16 left a third of the budget of a
/// memory of short turns unused, and the answer outside it).
const MAX_EVENTS: usize = 32;
/// Events injected once something is: those scoring at least this share of
/// the best one (the answer to a question is often worded unlike it, and
/// comes in as the best hit's neighbour).
const RELATIVE_FLOOR: f32 = 0.5;
/// The same for a personal memory, which makes the session it is given to
/// personal (its events then never reach the team): only one about what
/// the prompt asks, not one sharing a word with it (a user's own name in a
/// note and in a work prompt kept that session from the team, field test
/// 6).
const PERSONAL_FLOOR: f32 = 0.8;
/// And the share of the prompt its words must cover: in a young memory
/// every note scores near the best, and a personal one holding only the
/// user's name came in at 0.87 of it (field test 7: 0.09 of the prompt;
/// one about what the prompt asks covers half or more).
const PERSONAL_COVERAGE: f32 = 0.2;
/// Full-text hits whose stored vectors make the query vector when the
/// prompt has no embedding of its own (pseudo-relevance feedback).
const FEEDBACK_HITS: usize = 5;
/// The gate: whether anything in the memory is relevant enough to inject.
/// `cosine + fts × coverage + margin × lead − unseen × share + passage ×
/// held ≥ min`, from the best cosine of a hit to the prompt's vector, the
/// best full-text coverage of the prompt by a hit, that coverage's lead
/// over the [`MARGIN_RANK`]th best hit's (in a memory of long answers many
/// events cover a question in part, one about something it never saw as
/// well; what tells them apart is whether one stands out), the share of
/// the prompt's words that no event contains (a prompt about something the
/// memory never saw names things it lacks), and how much of the prompt one
/// sentence of a best hit holds ([`Recall::passage`]: reading the hit, not
/// only scoring it, since a long answer covers a short question's words
/// in scattered places). One set of weights per kind of
/// prompt vector, since a distilled vector's cosines run lower and separate
/// less sharply than the model's. Tuned on the even questions of the
/// shared LoCoMo and LongMemEval sets and their small memories, checked on
/// the odd ones (docs/TUNING.md).
#[derive(Clone, Copy, Debug)]
struct Gate {
    fts: f32,
    margin: f32,
    unseen: f32,
    passage: f32,
    min: f32,
}

impl Gate {
    fn passes(&self, cosine: f32, recall: &Recall) -> bool {
        cosine + self.fts * recall.best_fts + self.margin * recall.fts_lead
            - self.unseen * recall.unseen.unwrap_or(0.0)
            + self.passage * recall.passage
            >= self.min
    }
}

/// The gate with the prompt's embedding by the model (a warm process).
const EMBEDDED_GATE: Gate = Gate {
    fts: 0.2,
    margin: 0.1,
    unseen: 0.0,
    passage: 0.3,
    min: 0.68,
};
/// The gate with the prompt's distilled vector (no warm process).
const DISTILLED_GATE: Gate = Gate {
    fts: 0.1,
    margin: 0.2,
    unseen: 0.5,
    passage: 0.3,
    min: 0.35,
};
/// Full-text coverage a prompt's best hit needs when vectors exist but no
/// hit has one: no cosine vouches for it.
const UNVOUCHED_FTS: f32 = 0.75;
/// Which hit's full-text coverage the best one's lead is measured from.
const MARGIN_RANK: usize = 10;
/// The best hits whose passages the gate reads ([`Recall::passage`]).
const PASSAGE_HITS: usize = 5;
/// Tokens in a passage: about a sentence.
const PASSAGE_TOKENS: u32 = 16;
/// Events from which the unseen share counts in full (less in proportion
/// below: a small memory has yet to see most ordinary words).
const UNSEEN_FULL_WEIGHT_EVENTS: f32 = 300.0;
/// Longest text shown for one memory, in characters.
const ITEM_CHARS: usize = 480;
/// Of a long memory whose passage about the prompt lies past its start:
/// how much of its start is shown first, in characters (what it is about).
const HEAD_CHARS: usize = 120;
/// How far back from the passage's first word its sentence may start.
const SENTENCE_BACK: usize = 200;
/// How many characters of an event id are shown as its citation.
pub const CITATION_LEN: usize = 12;

/// An assembled context.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Assembled {
    /// Markdown; empty when nothing was relevant enough.
    pub markdown: String,
    /// Ids of the events included (full ids).
    pub cited: Vec<EventId>,
    /// Approximate tokens of `markdown`.
    pub tokens: usize,
    /// What ranked the memories for a prompt (absent for a briefing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranked_by: Option<QueryKind>,
    /// What the gate weighed ([`Recall::signals`]; absent for a
    /// briefing): recorded with what was injected, so that a memory given
    /// that should not have been can be told why afterwards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<serde_json::Value>,
    /// Why nothing was injected, when `markdown` is empty (for the hooks'
    /// log).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub withheld: Option<String>,
    /// Whether a memory included is personal: the session it is given to
    /// becomes personal from then on (its answer may repeat it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub personal: bool,
}

/// What the prompt's memories were ranked with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueryKind {
    /// The prompt's embedding by the model (a warm `memlog watch`).
    Embedded,
    /// The prompt's vector from the distilled token table
    /// ([`crate::token_vectors`]), made without the model.
    Distilled,
    /// The stored vectors of the best full-text hits (pseudo-relevance
    /// feedback): vectors exist but neither of the above is at hand.
    Feedback,
    /// Full text alone: no vectors.
    Text,
}

/// The ranked memories for a prompt and the evidence that any is relevant,
/// before the gate.
#[derive(Clone, Debug)]
pub struct Recall {
    /// Best first.
    pub hits: Vec<Hit>,
    /// What ranked them.
    pub query: QueryKind,
    /// Full-text coverage of the prompt by the best hit, in [0, 1].
    pub best_fts: f32,
    /// How far that coverage leads the [`MARGIN_RANK`]th best hit's (0
    /// when fewer hits cover any of the prompt).
    pub fts_lead: f32,
    /// Best cosine of a hit to the prompt's own vector, when it has one
    /// (embedded, or distilled with every word weighed alike).
    pub best_cosine: Option<f32>,
    /// Share of the prompt's words that no event contains (computed when
    /// the vector is distilled, which needs each word's rarity anyway).
    pub unseen: Option<f32>,
    /// How much of the prompt, its rare words weighing most, one sentence
    /// of one of the [`PASSAGE_HITS`] best hits holds
    /// ([`crate::fts::Fts::passage_coverage`]): a long answer about
    /// something else covers a short question's words in scattered places,
    /// one about what it asks holds them together.
    pub passage: f32,
    /// Best full-text coverage among the hits still waiting for their
    /// vector (embedding trails indexing; events not indexed yet have none),
    /// which no cosine can vouch for.
    pub awaiting_fts: f32,
    /// Whether a hit holds, as written, an identifier the prompt names
    /// (`SlidingWindowLimiter.allow`, `max_retries`): what tool output,
    /// which has no vector, is asked about by name.
    pub names_held: bool,
}

impl Recall {
    /// What the gate weighs, for evaluations (`memlog-bench --inject`).
    pub fn signals(&self) -> serde_json::Value {
        serde_json::json!({
            "query": self.query,
            "best_fts": self.best_fts,
            "fts_lead": self.fts_lead,
            "best_cosine": self.best_cosine,
            "unseen": self.unseen,
            "passage": self.passage,
        })
    }

    /// Whether anything is relevant enough to inject: the [`Gate`] when the
    /// prompt has a vector, full text alone otherwise
    /// (`context.min_relevance`).
    pub fn confident(&self, config: &Config) -> bool {
        // A memory not embedded yet is judged as full text judges it, as
        // it would be in a memory without vectors.
        if self.awaiting_fts >= config.context.min_relevance {
            return true;
        }
        match (self.query, self.best_cosine) {
            (QueryKind::Embedded, Some(c)) => EMBEDDED_GATE.passes(c, self),
            (QueryKind::Distilled, Some(c)) => DISTILLED_GATE.passes(c, self),
            // vectors exist and none of the hits has one (tool output):
            // full text alone, holding most of the prompt's words or a name
            // it asks about, since long tool output shares a few words
            // with anything (a LICENSE text for "fitness for the marathon
            // plan")
            (QueryKind::Embedded | QueryKind::Distilled, None) => {
                let needs = if self.names_held {
                    config.context.min_relevance
                } else {
                    UNVOUCHED_FTS.max(config.context.min_relevance)
                };
                self.best_fts >= needs
            }
            _ => self.best_fts >= config.context.min_relevance,
        }
    }

    /// Why [`Recall::confident`] says no, in figures.
    pub fn why_not(&self, config: &Config) -> String {
        if self.hits.is_empty() {
            return "no memory shares a word with the prompt".into();
        }
        let mut why = format!(
            "nothing relevant enough (ranked by {:?}): best full-text coverage {:.2}",
            self.query, self.best_fts
        );
        if let Some(c) = self.best_cosine {
            why.push_str(&format!(", best cosine {c:.2}"));
        }
        if let Some(u) = self.unseen {
            why.push_str(&format!(", unseen words {u:.2}"));
        }
        why.push_str(&format!(", best passage {:.2}", self.passage));
        if self.best_cosine.is_none() {
            why.push_str(&format!(
                " (needs {:.2}: context.min_relevance)",
                config.context.min_relevance
            ));
        }
        why
    }
}

/// Ranks the memories for `prompt`, leaving out `exclude_session` (the
/// session asking), from the same hybrid ranking as `memlog search`.
///
/// With `query_vector` (the prompt's embedding, by the model the vectors
/// were made with) the vectors are searched. Without one, no model is
/// loaded: the prompt's vector comes from the distilled token table when
/// there is one, else from the stored vectors of the best full-text hits;
/// either only reranks the full-text candidates and their session
/// neighbours (scanning every stored vector would cost a hook more than
/// the rest of its work).
pub fn recall(
    p: &Projections,
    config: &Config,
    prompt: &str,
    exclude_session: Option<&str>,
    query_vector: Option<&[f32]>,
) -> Result<Recall> {
    let filters = crate::fts::Filters {
        exclude_session: exclude_session.map(str::to_string),
        ..Default::default()
    };
    let vectors = p.vectors().filter(|v| v.rows() > 0);
    // the vector that ranks, and the one whose best cosine the gate weighs
    let (query, vector, gate_vector, unseen) = match (vectors, query_vector) {
        (Some(v), Some(q)) if q.len() == v.meta.dim => (
            QueryKind::Embedded,
            Some(q.to_vec()),
            Some(q.to_vec()),
            None,
        ),
        (Some(v), _) => match distilled(p, &v.meta, prompt)? {
            Some(d) => (
                QueryKind::Distilled,
                Some(d.ranking),
                Some(d.gate),
                Some(d.unseen),
            ),
            None => (QueryKind::Feedback, None, None, None),
        },
        (None, _) => (QueryKind::Text, None, None, None),
    };
    let hits = search(
        p,
        &config.ranking,
        &SearchRequest {
            query: prompt.to_string(),
            limit: CANDIDATES,
            filters,
            query_vector: vector,
            rerank_only: query == QueryKind::Distilled,
            feedback: if query == QueryKind::Feedback {
                FEEDBACK_HITS
            } else {
                0
            },
            ..Default::default()
        },
    )?;
    // another live session's question being answered now is no memory,
    // nor evidence that any is relevant; nor is a call whose words were
    // withheld (memlog's own tools, the agents' memory files): its line
    // said "[withheld: …]" and cost the block a line (a field test)
    let hits: Vec<Hit> = hits
        .into_iter()
        .filter(|h| !p.unindexed().in_progress(&h.id) && !says_nothing(h))
        .collect();
    let mut coverage: Vec<f32> = hits.iter().map(|h| h.parts.fts).collect();
    coverage.sort_by(|a, b| b.total_cmp(a));
    let best_fts = coverage.first().copied().unwrap_or(0.0);
    let fts_lead = best_fts - coverage.get(MARGIN_RANK - 1).copied().unwrap_or(0.0);
    let (best_cosine, awaiting_fts) = match (&gate_vector, vectors) {
        (Some(q), Some(v)) => {
            let keys: Vec<u64> = hits.iter().map(|h| crate::fts::event_key(&h.id)).collect();
            let found = v.vectors_of(&keys)?;
            let awaiting = hits
                .iter()
                .zip(&keys)
                .filter(|(h, k)| {
                    crate::derive::is_worth_embedding(&h.kind) && !found.contains_key(k)
                })
                .map(|(h, _)| h.parts.fts)
                .fold(0.0f32, f32::max);
            // no hit with a vector (tool output, which is never embedded,
            // or a memory still being embedded): no cosine vouches either
            // way, and full text judges, as in a memory without vectors
            let best = (!found.is_empty()).then(|| {
                found
                    .values()
                    .map(|e| crate::embed::dot(q, e))
                    .fold(0.0f32, f32::max)
            });
            (best, awaiting)
        }
        _ => (None, 0.0),
    };
    let texts: Vec<&str> = hits
        .iter()
        .take(PASSAGE_HITS)
        .map(|h| h.text.as_str())
        .collect();
    let passage = p
        .fts
        .passage_coverage(prompt, &texts, PASSAGE_TOKENS)?
        .into_iter()
        .fold(0.0f32, f32::max);
    // only a gate without a cosine reads it (it lowercases the hits)
    let names_held = best_cosine.is_none() && crate::search::names_held(prompt, &hits);
    Ok(Recall {
        hits,
        query,
        best_fts,
        fts_lead,
        best_cosine,
        unseen,
        passage,
        awaiting_fts,
        names_held,
    })
}

/// The prompt's distilled vectors ([`Distilled`]), as the hook makes them
/// when no warm process embeds it; `None` without vectors or a table.
pub fn prompt_distilled(p: &Projections, prompt: &str) -> Result<Option<Distilled>> {
    let Some(v) = p.vectors().filter(|v| v.rows() > 0) else {
        return Ok(None);
    };
    distilled(p, &v.meta, prompt)
}

/// A prompt as the distilled token table sees it.
pub struct Distilled {
    /// Each word weighted by how rare it is in the memory (words no event
    /// contains cannot point at one and weigh nothing).
    pub ranking: Vec<f32>,
    /// Every word alike, so that a prompt about something the memory lacks
    /// is not judged by its few words that happen to occur.
    pub gate: Vec<f32>,
    /// Share of the words (punctuation aside) that no event contains,
    /// scaled down in a memory of fewer than
    /// [`UNSEEN_FULL_WEIGHT_EVENTS`].
    pub unseen: f32,
}

/// The distilled token table of the model that made the vectors, when
/// there is one. A damaged or foreign table is as good as none here
/// (`memlog doctor` reports it).
fn table_for(meta: &crate::vectors::VectorMeta) -> Option<crate::token_vectors::TokenVectors> {
    crate::token_vectors::TokenVectors::for_model(&meta.model)
        .ok()
        .flatten()
        .filter(|t| t.dim() == meta.dim)
}

/// The prompt's vectors from the distilled token table of the model that
/// made the vectors, when there is one.
fn distilled(
    p: &Projections,
    meta: &crate::vectors::VectorMeta,
    prompt: &str,
) -> Result<Option<Distilled>> {
    let Some(table) = table_for(meta) else {
        return Ok(None);
    };
    let words = table.words(prompt);
    let pieces: Vec<Vec<usize>> = words.iter().map(|w| table.pieces(w)).collect();
    let rarity = p.fts.word_rarity(&words)?;
    let analyzed = rarity.iter().flatten().count();
    let unseen =
        rarity.iter().flatten().filter(|r| **r <= 0.0).count() as f32 / analyzed.max(1) as f32;
    // A small memory has yet to see most ordinary words: what it lacks
    // says little about the prompt until it holds a few hundred events.
    let docs = p.fts.num_docs()? as f32;
    let unseen = unseen * (docs / UNSEEN_FULL_WEIGHT_EVENTS).min(1.0);
    let rarity: Vec<f32> = rarity.into_iter().map(|r| r.unwrap_or(0.0)).collect();
    let ranking = table.embed(&pieces, &rarity);
    let gate = table.embed(&pieces, &vec![1.0; words.len()]);
    Ok(ranking.zip(gate).map(|(ranking, gate)| Distilled {
        ranking,
        gate,
        unseen,
    }))
}

/// The vector a search ranks by meaning with when no model is loaded (a
/// one-shot `memlog search`): the query's words summed from the distilled
/// token table of the model that made the vectors, each weighted by its
/// inverse document frequency in the memory. Unlike the hook's, which only
/// reranks what full text found, this vector also searches, so a word no
/// event contains weighs as the rarest rather than nothing (a paraphrase
/// names in other words what the memory holds). On the shared LoCoMo set,
/// hybrid R@5 0.629 and R@10 0.713 with it, 0.621 and 0.729 with the
/// model's embedding of the question; the hook's weights gave 0.625 and
/// 0.711, the table's alone 0.608 and 0.702. `None` without vectors or a
/// table for their model.
pub fn distilled_query(p: &Projections, query: &str) -> Result<Option<Vec<f32>>> {
    let Some(table) = p.vectors().and_then(|v| table_for(&v.meta)) else {
        return Ok(None);
    };
    let words = table.words(query);
    let pieces: Vec<Vec<usize>> = words.iter().map(|w| table.pieces(w)).collect();
    let weights: Vec<f32> = p
        .fts
        .word_idf(&words)?
        .into_iter()
        .map(|r| r.unwrap_or(0.0))
        .collect();
    Ok(table.embed(&pieces, &weights))
}

/// Assembles the context for `prompt` within `budget` tokens, leaving out
/// `exclude_session` (the session asking): [`recall`], then nothing unless
/// [`Recall::confident`], else [`render`].
pub fn assemble(
    p: &Projections,
    config: &Config,
    prompt: &str,
    budget: usize,
    exclude_session: Option<&str>,
    query_vector: Option<&[f32]>,
) -> Result<Assembled> {
    let recall = recall(p, config, prompt, exclude_session, query_vector)?;
    let ranked_by = Some(recall.query);
    let gate = Some(recall.signals());
    let assembled = if recall.confident(config) {
        let a = render(p, prompt, recall.hits, budget)?;
        let withheld = a
            .markdown
            .is_empty()
            .then(|| format!("no memory fits the {budget}-token budget"));
        Assembled { withheld, ..a }
    } else {
        Assembled {
            withheld: Some(recall.why_not(config)),
            ..Assembled::default()
        }
    };
    Ok(Assembled {
        ranked_by,
        gate,
        ..assembled
    })
}

/// Whether a hit is a tool call whose words were withheld from the log:
/// its tool and the marker are all it holds.
fn says_nothing(h: &Hit) -> bool {
    use memlog_format::scope::{WITHHELD, WITHHELD_MEMLOG};
    h.kind == "tool_observation" && (h.text.contains(WITHHELD_MEMLOG) || h.text.contains(WITHHELD))
}

/// The markdown of `hits` (best first) within `budget` tokens: those
/// scoring at least half the best one, deduplicated, grouped by session,
/// each cited by id, a long one by its passage about `prompt`
/// ([`excerpt`]); memories withheld for review left out
/// ([`crate::review`]).
pub fn render(p: &Projections, prompt: &str, hits: Vec<Hit>, budget: usize) -> Result<Assembled> {
    // memories waiting for review (or rejected) are never injected
    let withheld = crate::review::withheld(p)?;
    let hits: Vec<Hit> = hits
        .into_iter()
        .filter(|h| !withheld.contains(&h.id))
        .collect();
    let top = hits.first().map_or(0.0, |h| h.score);
    let is_personal = |h: &Hit| {
        h.meta
            .as_object()
            .is_some_and(memlog_format::scope::is_personal)
    };
    let relevant: Vec<Hit> = hits
        .into_iter()
        .filter(|h| {
            if is_personal(h) {
                h.score >= top * PERSONAL_FLOOR && h.parts.fts >= PERSONAL_COVERAGE
            } else {
                h.score >= top * RELATIVE_FLOOR
            }
        })
        .collect();
    // deduplicate by normalised text
    let mut seen = HashSet::new();
    let relevant: Vec<Hit> = relevant
        .into_iter()
        .filter(|h| {
            // the start, and the end as written: long answers often open
            // alike
            let head: String = h.text.chars().take(300).collect();
            let text = h.text.trim_end();
            let tail = text
                .char_indices()
                .rev()
                .nth(199)
                .map_or(text, |(i, _)| &text[i..]);
            seen.insert((memlog_format::key::normalize(&head), tail.to_string()))
        })
        .take(MAX_EVENTS)
        .collect();
    // a prompt comes with its turn's answer, and an agent's words before a
    // tool call do not stand in for it
    let turns = crate::search::turns(p, &relevant)?;
    let mut relevant: Vec<Hit> = relevant
        .into_iter()
        .filter(|h| !turns.narration.contains(&h.id))
        .collect();
    for answer in turns.answers {
        // personal memory comes only by its own relevance (the floors above)
        if !is_personal(&answer) && !relevant.iter().any(|h| h.id == answer.id) {
            relevant.push(answer);
        }
    }
    let personal: HashSet<&EventId> = relevant
        .iter()
        .filter(|h| is_personal(h))
        .map(|h| &h.id)
        .collect();
    // sessions in order of their best hit
    let mut order: Vec<String> = Vec::new();
    let mut by_session: HashMap<String, Vec<&Hit>> = HashMap::new();
    for h in &relevant {
        if !by_session.contains_key(&h.session) {
            order.push(h.session.clone());
        }
        by_session.entry(h.session.clone()).or_default().push(h);
    }
    // the prompt's passage weights, made for the first long memory shown
    let mut weights = None;
    let header = "## Memory from earlier sessions (memlog)\nRelevant events, most relevant sessions first; cite them by [id].\n";
    let mut markdown = String::from(header);
    let mut cited = Vec::new();
    let mut used = approx_tokens(header);
    'sessions: for session in order {
        let mut items = by_session.remove(&session).unwrap_or_default();
        items.sort_by(|a, b| a.ts.cmp(&b.ts));
        let title = session_title(p, &session)?;
        let heading = format!(
            "\n### {} · {}{}\n",
            items
                .first()
                .map(|h| h.ts.get(..10).unwrap_or(&h.ts))
                .unwrap_or(""),
            session,
            title.map(|t| format!(" — {t}")).unwrap_or_default()
        );
        let mut block = heading;
        let mut block_ids = Vec::new();
        for h in items {
            let text = excerpt(p, &mut weights, prompt, &h.text)?;
            let mut superseded = h.superseded_by.as_ref().map_or(String::new(), |next| {
                format!(
                    " (superseded by [{}])",
                    &next[..CITATION_LEN.min(next.len())]
                )
            });
            if let Some(caveat) = &h.caveat {
                superseded.push_str(&format!(" ({caveat})"));
            }
            // labelled: the session it is given to stays on this machine
            if personal.contains(&h.id) {
                superseded.push_str(&format!(" {}", memlog_format::scope::PERSONAL_LABEL));
            }
            let line = format!(
                "- [{}] {}{superseded}: {}\n",
                &h.id[..CITATION_LEN.min(h.id.len())],
                h.kind,
                text
            );
            if used + approx_tokens(&block) + approx_tokens(&line) > budget {
                if !block_ids.is_empty() {
                    markdown.push_str(&block);
                    cited.extend(block_ids);
                }
                break 'sessions;
            }
            block.push_str(&line);
            block_ids.push(h.id.clone());
        }
        used += approx_tokens(&block);
        markdown.push_str(&block);
        cited.extend(block_ids);
    }
    if cited.is_empty() {
        return Ok(Assembled::default());
    }
    let tokens = approx_tokens(&markdown);
    Ok(Assembled {
        personal: cited.iter().any(|id| personal.contains(id)),
        markdown,
        cited,
        tokens,
        ranked_by: None,
        gate: None,
        withheld: None,
    })
}

/// What a memory shows of `text`, on one line within [`ITEM_CHARS`]: all
/// of a short one; of a long one (an agent's answer of pages), its start
/// and, when the passage holding most of `prompt` lies past what the start
/// shows, that passage from its sentence on. The answer's conclusion is
/// what a follow-up asks about, not its heading.
fn excerpt(
    p: &Projections,
    weights: &mut Option<crate::fts::PassageWeights>,
    prompt: &str,
    text: &str,
) -> Result<String> {
    use memlog_format::event::one_line;
    if text.chars().nth(ITEM_CHARS).is_none() {
        return Ok(one_line(text, ITEM_CHARS));
    }
    let weights = match weights {
        Some(w) => w,
        None => weights.insert(p.fts().passage_weights(prompt)?),
    };
    let Some(at) = p.fts().best_passage(weights, text, PASSAGE_TOKENS) else {
        return Ok(one_line(text, ITEM_CHARS));
    };
    if text[..at]
        .chars()
        .nth(ITEM_CHARS - HEAD_CHARS - 1)
        .is_none()
    {
        return Ok(one_line(text, ITEM_CHARS));
    }
    let floor = at.saturating_sub(SENTENCE_BACK);
    let from = text[..at]
        .char_indices()
        .rev()
        .take_while(|(i, _)| *i >= floor)
        .find(|(_, c)| matches!(c, '.' | '!' | '?' | '\n'))
        .map_or(at, |(i, c)| i + c.len_utf8());
    // (the start, longer than shown, ends in an ellipsis)
    Ok(format!(
        "{} {}",
        one_line(text, HEAD_CHARS),
        one_line(&text[from..], ITEM_CHARS - HEAD_CHARS)
    ))
}

/// The first line of a session's first prompt (unless a forget hides it).
fn session_title(p: &Projections, session: &str) -> Result<Option<String>> {
    Ok(crate::overview::session(p, session)?
        .and_then(|r| r.first_prompt)
        .map(|t| memlog_format::event::truncate_chars(t.lines().next().unwrap_or(""), 80)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recall(query: QueryKind, cosine: f32, best_fts: f32, fts_lead: f32, passage: f32) -> Recall {
        Recall {
            hits: Vec::new(),
            query,
            best_fts,
            fts_lead,
            best_cosine: Some(cosine),
            unseen: Some(0.0),
            passage,
            awaiting_fts: 0.0,
            names_held: false,
        }
    }

    #[test]
    fn the_warm_gate_reads_whether_a_hit_holds_the_prompt_together() {
        let config = Config::default();
        // a memory of long answers: ten of them cover the prompt as well
        // as the best does, its words scattered over each, none of them
        // closely in meaning
        assert!(!recall(QueryKind::Embedded, 0.45, 0.8, 0.05, 0.1).confident(&config));
        // the same, the prompt's words together in one sentence of one
        assert!(recall(QueryKind::Embedded, 0.45, 0.8, 0.05, 0.7).confident(&config));
        // close in meaning alone
        assert!(recall(QueryKind::Embedded, 0.69, 0.0, 0.0, 0.0).confident(&config));
    }

    #[test]
    fn the_local_gate_weighs_a_passage_that_holds_the_prompt() {
        let config = Config::default();
        // the same cosine and coverage: words scattered, then together
        assert!(!recall(QueryKind::Distilled, 0.22, 0.3, 0.0, 0.1).confident(&config));
        assert!(recall(QueryKind::Distilled, 0.22, 0.3, 0.0, 0.5).confident(&config));
    }
}
