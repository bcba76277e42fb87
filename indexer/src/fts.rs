//! The full-text projection (tantivy): one document per live event.
//!
//! Fields: `key` (the first 64 bits of the event id, fast: maps a hit back
//! to its event; a number, not the 64-character id, because a term
//! dictionary of random hex strings is costly to build), `text` (the
//! searchable text, code-aware tokenizer, BM25), `kind`, `session` (raw,
//! fast), `ts` (milliseconds, fast, for ranges and recency), `tool` (raw) and
//! `files` (paths, path tokenizer). Text is not stored: the entity/edge
//! database holds the events.

use std::collections::HashSet;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tantivy::collector::TopDocs;
use tantivy::query::{
    BooleanQuery, BoostQuery, ConstScoreQuery, DisjunctionMaxQuery, Occur, Query, RangeQuery,
    TermQuery,
};
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STRING, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, Searcher, TantivyDocument, Term};

use crate::tokenizer;
use crate::{Error, Result};

/// The fields of the full-text schema.
#[derive(Clone, Copy)]
pub struct Fields {
    pub key: Field,
    pub text: Field,
    pub kind: Field,
    pub session: Field,
    pub ts: Field,
    pub tool: Field,
    pub files: Field,
}

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let indexed = |tok: &str| {
        TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(tok)
                .set_index_option(IndexRecordOption::WithFreqsAndPositions),
        )
    };
    let fields = Fields {
        key: b.add_u64_field("key", INDEXED | FAST),
        text: b.add_text_field("text", indexed(tokenizer::CODE)),
        kind: b.add_text_field("kind", STRING | FAST),
        session: b.add_text_field("session", STRING | FAST),
        ts: b.add_i64_field("ts", INDEXED | FAST),
        tool: b.add_text_field("tool", STRING),
        files: b.add_text_field("files", indexed(tokenizer::PATH)),
    };
    (b.build(), fields)
}

/// What goes into the index for one event.
pub struct FtsDoc<'a> {
    pub id: &'a str,
    pub text: &'a str,
    pub kind: &'a str,
    pub session: &'a str,
    pub ts_ms: i64,
    pub tool: Option<&'a str>,
    pub files: &'a [String],
}

/// An opened full-text index.
pub struct Fts {
    pub index: Index,
    pub fields: Fields,
    reader: IndexReader,
    /// `meta.json` as it was when the reader last loaded the segments.
    loaded: Mutex<Option<MetaStamp>>,
    meta_path: PathBuf,
}

/// What tells one `meta.json` from another: tantivy replaces the file on
/// every commit (a new inode), and the time and length say it too where
/// an inode number comes round again.
#[derive(Clone, Copy, PartialEq, Eq)]
struct MetaStamp {
    inode: u64,
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl MetaStamp {
    fn of(path: &Path) -> Option<MetaStamp> {
        let m = std::fs::metadata(path).ok()?;
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(&m);
        #[cfg(not(unix))]
        let inode = 0;
        Some(MetaStamp {
            inode,
            len: m.len(),
            modified: m.modified().ok(),
        })
    }
}

impl Fts {
    /// Creates a new index in `dir` (which must be empty or absent).
    pub fn create(dir: &Path) -> Result<Fts> {
        memlog_store::layout::create_dir_in_parent(dir)?;
        let (schema, fields) = schema();
        let index = Index::create_in_dir(dir, schema).map_err(|e| Error::fts(dir, e))?;
        tokenizer::register(&index);
        Fts::with_index(dir, index, fields)
    }

    /// An empty index in memory (see [`crate::Projections::empty`]).
    pub fn create_in_ram() -> Result<Fts> {
        let (schema, fields) = schema();
        let index = Index::create_in_ram(schema);
        tokenizer::register(&index);
        Fts::with_index(Path::new(":memory:"), index, fields)
    }

    /// Opens an existing index, checking it: a damaged one is an error
    /// ([`Error::Corrupt`]), never a panic, so the caller can rebuild it.
    pub fn open(dir: &Path) -> Result<Fts> {
        let opened = std::panic::catch_unwind(|| -> Result<Fts> {
            let index = Index::open_in_dir(dir).map_err(|e| Error::fts(dir, e))?;
            tokenizer::register(&index);
            let (expected, _) = schema();
            if index.schema() != expected {
                return Err(Error::Outdated {
                    what: dir.display().to_string(),
                    message: "its full-text schema differs".into(),
                });
            }
            let fields = field_set(&index.schema())?;
            Fts::with_index(dir, index, fields)
        });
        // another user's file is not damage (field test 12b: each user of
        // a shared repository took the other's index for damaged, and
        // rebuilt it)
        if !matches!(opened, Ok(Ok(_)))
            && let Some(denied) = Error::not_permitted(dir)
        {
            return Err(denied);
        }
        match opened {
            Ok(Ok(fts)) => Ok(fts),
            Ok(Err(Error::Fts { path, message })) => Err(Error::Corrupt {
                what: path,
                message,
            }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(Error::Corrupt {
                what: dir.display().to_string(),
                message: "the index could not be read (damaged files)".into(),
            }),
        }
    }

    /// The payload of the last commit (`meta.json`'s `payload`). Read on
    /// its own: tantivy's `load_metas` builds the whole schema again, a
    /// third parse of the file in every one-shot command.
    pub fn committed_payload(&self) -> Result<Option<String>> {
        #[derive(serde::Deserialize)]
        struct Committed {
            payload: Option<String>,
        }
        let corrupt = |message: String| Error::Corrupt {
            what: self.meta_path.display().to_string(),
            message,
        };
        let bytes = std::fs::read(&self.meta_path).map_err(|e| {
            Error::not_permitted(&self.meta_path).unwrap_or_else(|| corrupt(e.to_string()))
        })?;
        serde_json::from_slice::<Committed>(&bytes)
            .map(|c| c.payload)
            .map_err(|e| corrupt(e.to_string()))
    }

    /// Checks every file's checksum (slower than `open`; for fsck-like use).
    pub fn verify(&self) -> Result<()> {
        let bad = self.index.validate_checksum().map_err(|e| Error::Corrupt {
            what: "full-text index".into(),
            message: e.to_string(),
        })?;
        if bad.is_empty() {
            Ok(())
        } else {
            Err(Error::Corrupt {
                what: "full-text index".into(),
                message: format!("damaged files: {bad:?}"),
            })
        }
    }

    fn with_index(dir: &Path, index: Index, fields: Fields) -> Result<Fts> {
        let meta_path = dir.join("meta.json");
        let loaded = Mutex::new(MetaStamp::of(&meta_path));
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(|e| Error::fts(dir, e))?;
        Ok(Fts {
            index,
            fields,
            reader,
            loaded,
            meta_path,
        })
    }

    /// A writer with one indexing thread. Fails with [`Error::Busy`] when
    /// another process holds the index lock.
    ///
    /// One thread writes one segment (until `budget_bytes` fills), and a
    /// search pays for every segment: opening its files, looking each word
    /// up, pruning on its own. A rebuild with a thread per core left two
    /// segments at 20k and 100k events, and searches 5-8 % slower than on
    /// one; on two cores it was no faster either, the database being
    /// filled on the calling thread meanwhile (100k events: 1.17-1.28 s
    /// with two threads, 1.15-1.17 s with one; 1M: 14.5-15.2 s, 15.7 s).
    pub fn writer(&self, budget_bytes: usize) -> Result<IndexWriter> {
        let w = self.index.writer_with_num_threads(1, budget_bytes);
        let w = w.map_err(|e| match e {
            tantivy::TantivyError::LockFailure(..) => Error::Busy,
            other => Error::fts(Path::new("full-text index"), other),
        })?;
        // A writer killed before its commit leaves files no commit uses;
        // their names (segment and opstamp) come round again, and writing
        // one that exists fails (memlog-bench --kills found it). Removing
        // them first is tantivy's own garbage collection; best effort.
        let _ = w.garbage_collect_files().wait();
        Ok(w)
    }

    pub fn add(&self, writer: &IndexWriter, doc: &FtsDoc) -> Result<()> {
        let f = &self.fields;
        let mut d = TantivyDocument::new();
        d.add_u64(f.key, event_key(doc.id));
        d.add_text(f.text, doc.text);
        d.add_text(f.kind, doc.kind);
        d.add_text(f.session, doc.session);
        d.add_i64(f.ts, doc.ts_ms);
        if let Some(t) = doc.tool {
            d.add_text(f.tool, t);
        }
        for p in doc.files {
            d.add_text(f.files, p);
        }
        writer
            .add_document(d)
            .map_err(|e| Error::fts(Path::new("full-text index"), e))?;
        Ok(())
    }

    pub fn delete(&self, writer: &IndexWriter, id: &str) {
        writer.delete_term(Term::from_field_u64(self.fields.key, event_key(id)));
    }

    /// A searcher on the last committed state.
    pub fn searcher(&self) -> Result<Searcher> {
        // Reloading opens every segment afresh: a one-shot command, whose
        // reader was just built, skipped it and opened the index once
        // instead of twice. The file is looked at before the reload, so a
        // commit in between is at worst reloaded again next time.
        let now = MetaStamp::of(&self.meta_path);
        let mut loaded = self
            .loaded
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if now.is_none() || *loaded != now {
            self.reader
                .reload()
                .map_err(|e| Error::fts(Path::new("full-text index"), e))?;
            *loaded = now;
        }
        Ok(self.reader.searcher())
    }
}

fn field_set(schema: &Schema) -> Result<Fields> {
    let get = |name: &str| {
        schema.get_field(name).map_err(|_| Error::Corrupt {
            what: "full-text index".into(),
            message: format!("field {name} is missing"),
        })
    };
    Ok(Fields {
        key: get("key")?,
        text: get("text")?,
        kind: get("kind")?,
        session: get("session")?,
        ts: get("ts")?,
        tool: get("tool")?,
        files: get("files")?,
    })
}

/// Filters applied to a full-text search; none of them changes scores.
#[derive(Clone, Debug, Default)]
pub struct Filters {
    pub kinds: Vec<String>,
    pub session: Option<String>,
    pub since_ms: Option<i64>,
    pub until_ms: Option<i64>,
    pub file: Option<String>,
    /// Leave this session out (the live session, when injecting memories
    /// of earlier ones).
    pub exclude_session: Option<String>,
}

/// The first 64 bits of an event id (hex), the event's key in the index.
pub fn event_key(id: &str) -> u64 {
    id.get(..16)
        .and_then(|h| u64::from_str_radix(h, 16).ok())
        .unwrap_or(0)
}

/// One candidate from the full-text index.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// [`event_key`] of the event.
    pub key: u64,
    pub bm25: f32,
    /// BM25 divided by the score of an average document that contains every
    /// query term once: about the share of the query the event covers,
    /// capped at 1. Comparable across queries, unlike raw BM25.
    pub relevance: f32,
    pub ts_ms: i64,
    pub kind: String,
}

/// English function words left out of queries (not of the index): they
/// say nothing about what is asked, and counted in a query's coverage they
/// make a long question look irrelevant to the event that answers it.
const QUERY_STOPWORDS: &[&str] = &[
    "a", "about", "an", "and", "any", "are", "as", "at", "be", "been", "but", "by", "can", "could",
    "did", "do", "does", "for", "from", "had", "has", "have", "how", "i", "if", "in", "into", "is",
    "it", "its", "me", "my", "no", "not", "of", "on", "or", "our", "so", "such", "that", "the",
    "their", "then", "there", "these", "they", "this", "to", "us", "was", "we", "were", "what",
    "when", "where", "which", "who", "why", "will", "with", "would", "you", "your",
];

/// The analyzer of the `text` field, as the index registered it.
fn text_analyzer(index: &Index) -> tantivy::tokenizer::TextAnalyzer {
    index
        .tokenizers()
        .get(tokenizer::CODE)
        .unwrap_or_else(tokenizer::code_analyzer)
}

/// The query terms of `text` (analyzer tokens, deduplicated, function
/// words left out unless nothing else is left) with a flag for whole
/// identifiers, which are boosted.
pub fn query_terms(index: &Index, field: Field, text: &str) -> Vec<(Term, bool)> {
    let mut analyzer = text_analyzer(index);
    let mut seen = HashSet::new();
    let mut all = Vec::new();
    let mut stream = analyzer.token_stream(text);
    while let Some(tok) = stream.next() {
        if seen.insert(tok.text.clone()) {
            all.push((tok.text.clone(), tok.position_length > 1));
        }
    }
    let content: Vec<&(String, bool)> = all
        .iter()
        .filter(|(t, _)| !QUERY_STOPWORDS.contains(&t.as_str()))
        .collect();
    let chosen: Vec<&(String, bool)> = if content.is_empty() {
        all.iter().collect()
    } else {
        content
    };
    chosen
        .into_iter()
        .map(|(t, whole)| (Term::from_field_text(field, t), *whole))
        .collect()
}

/// Shortest word corrected when nothing contains it: shorter words have
/// too many neighbours one edit away to guess which was meant.
const MIN_CORRECTED_LEN: usize = 5;

/// The indexed term one edit away from `term` (a deletion, insertion,
/// substitution or transposition of ASCII letters and digits) that most
/// events contain, with that count; `None` when there is none or `term` is
/// short or not ASCII. A few hundred dictionary lookups: far cheaper than
/// a fuzzy automaton over the whole term dictionary, and the correction
/// then scores as the word itself would (BM25 with its own idf).
fn spelling_correction(searcher: &Searcher, term: &Term) -> tantivy::Result<Option<(Term, u64)>> {
    let value = term.value();
    let Some(word) = value.as_str() else {
        return Ok(None);
    };
    if word.len() < MIN_CORRECTED_LEN || !word.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Ok(None);
    }
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let w = word.as_bytes();
    let mut variants: Vec<Vec<u8>> = Vec::with_capacity(w.len() * 74 + 36);
    for i in 0..w.len() {
        variants.push([&w[..i], &w[i + 1..]].concat());
        if i + 1 < w.len() && w[i] != w[i + 1] {
            let mut t = w.to_vec();
            t.swap(i, i + 1);
            variants.push(t);
        }
        for &c in ALPHABET {
            if c != w[i] {
                let mut t = w.to_vec();
                t[i] = c;
                variants.push(t);
            }
        }
    }
    for i in 0..=w.len() {
        for &c in ALPHABET {
            variants.push([&w[..i], &[c], &w[i..]].concat());
        }
    }
    let field = term.field();
    let mut best: Option<(Term, u64)> = None;
    for v in variants {
        let Ok(text) = std::str::from_utf8(&v) else {
            continue;
        };
        let candidate = Term::from_field_text(field, text);
        let df = searcher.doc_freq(&candidate)?;
        if df > best.as_ref().map_or(0, |b| b.1) {
            best = Some((candidate, df));
        }
    }
    Ok(best)
}

/// Boost of a whole identifier over its parts. A whole identifier scores
/// at least its boosted idf wherever it is found, whatever BM25's length
/// normalisation makes of a long text: the one long answer that names
/// `shopcli.plugins` ranked below short prompts holding only `shopcli` and
/// `plugins` (field test 9b).
const WHOLE_IDENTIFIER_BOOST: f32 = 2.0;

/// One term of a query as a search scores it.
struct QueryTerm {
    /// The term searched: the query's word, or the word one edit away that
    /// the index holds when it holds the query's not at all.
    term: Term,
    /// A whole identifier (boosted by [`WHOLE_IDENTIFIER_BOOST`]).
    whole: bool,
    /// How many events contain `term`.
    df: u64,
}

impl QueryTerm {
    fn boost(&self) -> f32 {
        if self.whole {
            WHOLE_IDENTIFIER_BOOST
        } else {
            1.0
        }
    }

    /// What the term adds to the score of an average document containing
    /// each term once, when `df` of `n` events contain it: with BM25 (k1 =
    /// 1.2, b = 0.75) a term found once in a document of average length
    /// scores its idf.
    fn ideal(&self, df: u64, n: f32) -> f32 {
        let df = df as f32;
        if df > 0.0 {
            self.boost() * (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
        } else if !self.whole {
            // A word nobody wrote still counts against coverage, as much
            // as the rarest word somebody did: more would make a question
            // worded unlike every memory look unanswerable in a small
            // memory, where every word is rare.
            (1.0 + (n - 0.5) / 1.5).ln()
        } else {
            0.0
        }
    }
}

impl Fts {
    /// The terms of `text` as a search scores them. A word no indexed
    /// event contains may be a typo of one that some does, unless
    /// `elsewhere` says other documents (events not indexed yet) hold it.
    fn weigh(
        &self,
        searcher: &Searcher,
        text: &str,
        elsewhere: &dyn Fn(&str) -> bool,
    ) -> Result<Vec<QueryTerm>> {
        let err = |e| Error::fts(Path::new("full-text index"), e);
        let mut terms = Vec::new();
        for (term, whole) in query_terms(&self.index, self.fields.text, text) {
            let df = searcher.doc_freq(&term).map_err(err)?;
            let held_elsewhere = || term.value().as_str().is_some_and(elsewhere);
            let corrected = (df == 0 && !whole && !held_elsewhere())
                .then(|| spelling_correction(searcher, &term))
                .transpose()
                .map_err(err)?
                .flatten();
            terms.push(match corrected {
                Some((corrected, df)) => QueryTerm {
                    term: corrected,
                    whole,
                    df,
                },
                None => QueryTerm { term, whole, df },
            });
        }
        Ok(terms)
    }

    /// The full-text relevance to `query` of texts this index does not hold
    /// yet (events logged since its last update), as [`Fts::search`] will
    /// give each once they are indexed: its BM25 on the statistics of this
    /// index and of `texts` together (so that a word only they hold is as
    /// rare as it is, and one they all hold as common), over the ideal score
    /// counted the same way. 0 for a text without any of the query's words.
    pub fn relevance_of(&self, query: &str, texts: &[&str]) -> Result<Vec<f32>> {
        use tantivy::fieldnorm::FieldNormReader;
        use tantivy::query::{Bm25StatisticsProvider, Bm25Weight};
        type Counts = std::collections::HashMap<String, u32>;
        let mut analyzer = text_analyzer(&self.index);
        let counted: Vec<(u32, Counts)> = texts
            .iter()
            .map(|text| {
                let mut freq = Counts::default();
                let mut length = 0u32;
                let mut stream = analyzer.token_stream(text);
                while let Some(tok) = stream.next() {
                    length += 1;
                    *freq.entry(tok.text.clone()).or_default() += 1;
                }
                (length, freq)
            })
            .collect();
        let tf = |freq: &Counts, term: &Term| {
            let value = term.value();
            value.as_str().and_then(|w| freq.get(w)).copied()
        };
        let searcher = self.searcher()?;
        let held = |w: &str| counted.iter().any(|(_, f)| f.contains_key(w));
        let terms = self.weigh(&searcher, query, &held)?;
        let err = |e| Error::fts(Path::new("full-text index"), e);
        // with the texts: more documents, their tokens, their terms
        let added = texts.len() as u64;
        let live = (searcher.num_docs() + added) as f32;
        let docs = searcher.total_num_docs().map_err(err)? + added;
        let tokens = searcher.total_num_tokens(self.fields.text).map_err(err)?
            + counted.iter().map(|(l, _)| u64::from(*l)).sum::<u64>();
        let average = tokens as f32 / docs.max(1) as f32;
        let dfs: Vec<u64> = terms
            .iter()
            .map(|t| {
                t.df + counted
                    .iter()
                    .filter(|(_, f)| tf(f, &t.term).is_some())
                    .count() as u64
            })
            .collect();
        let ideal: f32 = terms
            .iter()
            .zip(&dfs)
            .map(|(t, df)| t.ideal(*df, live))
            .sum();
        Ok(counted
            .iter()
            .map(|(length, freq)| {
                let norm = FieldNormReader::fieldnorm_to_id(*length);
                let score: f32 = terms
                    .iter()
                    .zip(&dfs)
                    .filter_map(|(t, df)| {
                        let n = tf(freq, &t.term)?;
                        let bm25 = Bm25Weight::for_one_term(*df, docs, average)
                            .boost_by(t.boost())
                            .score(norm, n);
                        Some(if t.whole {
                            bm25.max(t.ideal(*df, live))
                        } else {
                            bm25
                        })
                    })
                    .sum();
                if ideal > 0.0 {
                    (score / ideal).min(1.0)
                } else {
                    0.0
                }
            })
            .collect())
    }

    /// Whether one of `files` (paths an event touched or names) passes the
    /// file filter `file`, as the `files` field matches it.
    pub fn names_file(&self, files: &[String], file: &str) -> bool {
        let wanted = memlog_format::refs::normalize_path(file).to_lowercase();
        let Some(mut analyzer) = self.index.tokenizers().get(tokenizer::PATH) else {
            return false;
        };
        files.iter().any(|f| {
            let mut stream = analyzer.token_stream(f);
            let mut found = false;
            while let Some(tok) = stream.next() {
                found |= tok.text == wanted;
            }
            found
        })
    }

    /// The best `limit` events for `text` under `filters`, by BM25.
    pub fn search(&self, text: &str, filters: &Filters, limit: usize) -> Result<Vec<Candidate>> {
        self.search_beside(text, filters, limit, &|_| false)
    }

    /// [`Fts::search`] beside other documents (the unindexed tail): a word
    /// no indexed event contains is not taken for a typo of one that some
    /// does when `elsewhere` says those documents hold it.
    pub fn search_beside(
        &self,
        text: &str,
        filters: &Filters,
        limit: usize,
        elsewhere: &dyn Fn(&str) -> bool,
    ) -> Result<Vec<Candidate>> {
        let f = self.fields;
        if limit == 0 {
            return Ok(Vec::new());
        }
        let searcher = self.searcher()?;
        let terms = self.weigh(&searcher, text, elsewhere)?;
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let n = searcher.num_docs() as f32;
        let ideal: f32 = terms.iter().map(|t| t.ideal(t.df, n)).sum();
        let mut should: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for t in terms {
            let q: Box<dyn Query> = if t.whole {
                // its BM25, but never less than its boosted idf
                let boost = t.boost();
                let at_least = ConstScoreQuery::new(
                    Box::new(TermQuery::new(t.term.clone(), IndexRecordOption::Basic)),
                    t.ideal(t.df, n),
                );
                let bm25 = BoostQuery::new(
                    Box::new(TermQuery::new(t.term, IndexRecordOption::WithFreqs)),
                    boost,
                );
                Box::new(DisjunctionMaxQuery::new(vec![
                    Box::new(bm25),
                    Box::new(at_least),
                ]))
            } else {
                Box::new(TermQuery::new(t.term, IndexRecordOption::WithFreqs))
            };
            should.push((Occur::Should, q));
        }
        let text_query = BooleanQuery::new(should);
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        let filter = |q: Box<dyn Query>| -> (Occur, Box<dyn Query>) {
            (Occur::Must, Box::new(ConstScoreQuery::new(q, 0.0)))
        };
        if !filters.kinds.is_empty() {
            let any: Vec<(Occur, Box<dyn Query>)> = filters
                .kinds
                .iter()
                .map(|k| {
                    let q: Box<dyn Query> = Box::new(TermQuery::new(
                        Term::from_field_text(f.kind, k),
                        IndexRecordOption::Basic,
                    ));
                    (Occur::Should, q)
                })
                .collect();
            clauses.push(filter(Box::new(BooleanQuery::new(any))));
        }
        if let Some(s) = &filters.session {
            clauses.push(filter(Box::new(TermQuery::new(
                Term::from_field_text(f.session, s),
                IndexRecordOption::Basic,
            ))));
        }
        if filters.since_ms.is_some() || filters.until_ms.is_some() {
            let lo = filters.since_ms.map_or(Bound::Unbounded, |v| {
                Bound::Included(Term::from_field_i64(f.ts, v))
            });
            let hi = filters.until_ms.map_or(Bound::Unbounded, |v| {
                Bound::Excluded(Term::from_field_i64(f.ts, v))
            });
            clauses.push(filter(Box::new(RangeQuery::new(lo, hi))));
        }
        if let Some(file) = &filters.file {
            let path = memlog_format::refs::normalize_path(file).to_lowercase();
            clauses.push(filter(Box::new(TermQuery::new(
                Term::from_field_text(f.files, &path),
                IndexRecordOption::Basic,
            ))));
        }
        if let Some(s) = &filters.exclude_session {
            clauses.push((
                Occur::MustNot,
                Box::new(TermQuery::new(
                    Term::from_field_text(f.session, s),
                    IndexRecordOption::Basic,
                )),
            ));
        }
        // Without filters the disjunction is searched as it is, so that
        // tantivy can skip blocks that cannot reach the top (block-max WAND);
        // wrapped in a conjunction it would score every matching document.
        // (Fetching the excluded session's documents and dropping them
        // kept the disjunction for a prompt's recall, but at 100k events
        // WAND then took half as many instructions again as scoring every
        // match of a prompt's many common words.)
        let query: Box<dyn Query> = if clauses.is_empty() {
            Box::new(text_query)
        } else {
            clauses.insert(0, (Occur::Must, Box::new(text_query)));
            Box::new(BooleanQuery::new(clauses))
        };
        collect(&searcher, query.as_ref(), limit, ideal)
    }

    /// Up to `limit` events whose files (touched or mentioned) include
    /// `file`, leaving out `exclude_session`; unranked (relevance 0).
    pub fn touching(
        &self,
        file: &str,
        exclude_session: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Candidate>> {
        let f = self.fields;
        let path = memlog_format::refs::normalize_path(file).to_lowercase();
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = vec![(
            Occur::Must,
            Box::new(TermQuery::new(
                Term::from_field_text(f.files, &path),
                IndexRecordOption::Basic,
            )),
        )];
        if let Some(s) = exclude_session {
            clauses.push((
                Occur::MustNot,
                Box::new(TermQuery::new(
                    Term::from_field_text(f.session, s),
                    IndexRecordOption::Basic,
                )),
            ));
        }
        let searcher = self.searcher()?;
        collect(&searcher, &BooleanQuery::new(clauses), limit, 0.0)
    }

    /// How much of `query` each of `texts` holds in one passage: the most,
    /// over runs of `window` consecutive tokens, of the query's terms found
    /// in the run, each weighed by its rarity among the events (`ln((n + 1)
    /// / (df + 1))`, a term no event contains as the rarest), over the
    /// weight of them all; in [0, 1]. A long text holds a short query's
    /// words scattered over paragraphs about something else; a text about
    /// what the query asks holds them together.
    pub fn passage_coverage(&self, query: &str, texts: &[&str], window: u32) -> Result<Vec<f32>> {
        let weights = self.term_weights(query)?;
        let total: f32 = weights.values().sum();
        if total <= 0.0 {
            return Ok(vec![0.0; texts.len()]);
        }
        let mut analyzer = text_analyzer(&self.index);
        Ok(texts
            .iter()
            .map(|text| {
                // (position, term) of each query term in the text
                let mut found: Vec<(u32, &str)> = Vec::new();
                let mut stream = analyzer.token_stream(text);
                while let Some(tok) = stream.next() {
                    if let Some((word, _)) = weights.get_key_value(tok.text.as_str()) {
                        found.push((tok.position as u32, word.as_str()));
                    }
                }
                let mut best = 0.0f32;
                let mut start = 0;
                for end in 0..found.len() {
                    while found[end].0.saturating_sub(found[start].0) >= window {
                        start += 1;
                    }
                    let run: HashSet<&str> = found[start..=end].iter().map(|(_, w)| *w).collect();
                    let held: f32 = run.iter().filter_map(|w| weights.get(*w)).sum();
                    best = best.max(held / total);
                }
                best.min(1.0)
            })
            .collect())
    }

    /// Each analyzed term of `query`, weighed by its rarity among the
    /// events (`ln((n + 1) / (df + 1))`).
    fn term_weights(&self, query: &str) -> Result<std::collections::HashMap<String, f32>> {
        let searcher = self.searcher()?;
        let n = searcher.num_docs() as f32;
        let mut weights: std::collections::HashMap<String, f32> = Default::default();
        for (term, _) in query_terms(&self.index, self.fields.text, query) {
            let df = searcher
                .doc_freq(&term)
                .map_err(|e| Error::fts(Path::new("full-text index"), e))?
                as f32;
            if let Some(word) = term.value().as_str() {
                weights.insert(word.to_string(), ((n + 1.0) / (df + 1.0)).ln());
            }
        }
        Ok(weights)
    }

    /// The weights [`Fts::best_passage`] finds a passage of `query` by:
    /// each of its words (by [`passage_key`]) with its rarity among the
    /// events ([`Fts::word_idf`]), and a little for every word (a memory
    /// the index does not hold yet, a session sealed a moment ago, has
    /// rarities of zero). Made once for all the texts of one prompt.
    pub fn passage_weights(&self, query: &str) -> Result<PassageWeights> {
        let mut words: Vec<String> = passage_words(query)
            .map(|(_, w)| w.to_lowercase())
            .filter(|w| w.chars().count() >= 3)
            .collect();
        words.sort();
        words.dedup();
        let idf = self.word_idf(&words)?;
        Ok(PassageWeights(
            words
                .iter()
                .zip(idf)
                .filter_map(|(w, r)| Some((passage_key(w), r? + 0.1)))
                .collect(),
        ))
    }

    /// Where in `text` the passage of `window` words holding most of the
    /// query `weights` were made for starts: the byte offset of its first
    /// query word; `None` when no word is there. Words are matched by
    /// [`passage_key`], not by the analyzer: a memory of pages is read
    /// once per prompt, on the hook's path.
    pub fn best_passage(&self, weights: &PassageWeights, text: &str, window: u32) -> Option<usize> {
        let weights = &weights.0;
        if weights.is_empty() {
            return None;
        }
        let found: Vec<(usize, usize, String)> = passage_words(text)
            .enumerate()
            .filter(|(_, (_, word))| word.len() >= 3)
            .filter_map(|(position, (offset, word))| {
                let key = passage_key(word);
                weights
                    .contains_key(&key)
                    .then_some((position, offset, key))
            })
            .collect();
        let window = window as usize;
        let mut best: Option<(f32, usize)> = None;
        let mut start = 0;
        for end in 0..found.len() {
            while found[end].0.saturating_sub(found[start].0) >= window {
                start += 1;
            }
            let run: HashSet<&str> = found[start..=end]
                .iter()
                .map(|(_, _, k)| k.as_str())
                .collect();
            let held: f32 = run.iter().filter_map(|k| weights.get(*k)).sum();
            if best.is_none_or(|(b, _)| held > b) {
                best = Some((held, found[start].1));
            }
        }
        best.map(|(_, offset)| offset)
    }

    /// How rare each of `words` is among the events: `ln((n + 1) / (df +
    /// 1))` of its rarest analyzed term that some event contains (a word's
    /// stem and identifier parts are terms); 0 for a word no event
    /// contains; `None` for one the analyzer drops whole (punctuation).
    pub fn word_rarity(&self, words: &[String]) -> Result<Vec<Option<f32>>> {
        self.rarity_of(words, false)
    }

    /// As [`Fts::word_rarity`], but a term no event contains counts as the
    /// rarest of all (`ln(n + 1)`), as an inverse document frequency does.
    pub fn word_idf(&self, words: &[String]) -> Result<Vec<Option<f32>>> {
        self.rarity_of(words, true)
    }

    fn rarity_of(&self, words: &[String], unseen_rarest: bool) -> Result<Vec<Option<f32>>> {
        let searcher = self.searcher()?;
        let n = searcher.num_docs() as f32;
        let mut analyzer = text_analyzer(&self.index);
        let mut out = Vec::with_capacity(words.len());
        for word in words {
            let mut rarity = None;
            let mut stream = analyzer.token_stream(word);
            while let Some(tok) = stream.next() {
                let term = Term::from_field_text(self.fields.text, &tok.text);
                let df = searcher
                    .doc_freq(&term)
                    .map_err(|e| Error::fts(Path::new("full-text index"), e))?
                    as f32;
                let r = if df > 0.0 || unseen_rarest {
                    ((n + 1.0) / (df + 1.0)).ln()
                } else {
                    0.0
                };
                rarity = Some(rarity.map_or(r, |x: f32| x.max(r)));
            }
            out.push(rarity);
        }
        Ok(out)
    }

    /// Number of live documents.
    pub fn num_docs(&self) -> Result<u64> {
        Ok(self.searcher()?.num_docs())
    }
}

type FastValues = (Option<u64>, Option<String>, Option<i64>);

/// The fast-field columns a hit is read from, opened once per segment and
/// search: opening one parses its header, which cost more than reading
/// the values of every hit.
/// The `limit` best documents for `query`, as candidates (`ideal`: the
/// score of an average document holding the whole query, for relevance).
fn collect(
    searcher: &Searcher,
    query: &dyn Query,
    limit: usize,
    ideal: f32,
) -> Result<Vec<Candidate>> {
    let err = |e| Error::fts(Path::new("full-text index"), e);
    let top = searcher
        .search(query, &TopDocs::with_limit(limit).order_by_score())
        .map_err(err)?;
    let mut out = Vec::with_capacity(top.len());
    let mut columns: Vec<Option<FastColumns>> = Vec::new();
    columns.resize_with(searcher.segment_readers().len(), || None);
    for (score, addr) in top {
        let segment = addr.segment_ord as usize;
        let cols = match columns.get_mut(segment) {
            Some(Some(c)) => c,
            Some(slot) => slot
                .insert(FastColumns::open(searcher.segment_reader(addr.segment_ord)).map_err(err)?),
            None => continue,
        };
        let (key, kind, ts_ms) = cols.read(addr.doc_id).map_err(err)?;
        let Some(key) = key else { continue };
        out.push(Candidate {
            key,
            bm25: score,
            relevance: if ideal > 0.0 {
                (score / ideal).min(1.0)
            } else {
                0.0
            },
            ts_ms: ts_ms.unwrap_or(0),
            kind: kind.unwrap_or_default(),
        });
    }
    Ok(out)
}

struct FastColumns {
    ts: tantivy::columnar::Column<i64>,
    key: tantivy::columnar::Column<u64>,
    kind: Option<tantivy::columnar::StrColumn>,
}

impl FastColumns {
    fn open(segment: &tantivy::SegmentReader) -> tantivy::Result<FastColumns> {
        let ff = segment.fast_fields();
        Ok(FastColumns {
            ts: ff.i64("ts")?,
            key: ff.u64("key")?,
            kind: ff.str("kind")?,
        })
    }

    fn read(&self, doc: tantivy::DocId) -> tantivy::Result<FastValues> {
        let kind = match &self.kind {
            Some(col) => match col.term_ords(doc).next() {
                Some(ord) => {
                    let mut s = String::new();
                    col.ord_to_str(ord, &mut s)?;
                    Some(s)
                }
                None => None,
            },
            None => None,
        };
        Ok((self.key.first(doc), kind, self.ts.first(doc)))
    }
}

/// A query's words with their weights ([`Fts::passage_weights`]).
#[derive(Clone, Debug, Default)]
pub struct PassageWeights(std::collections::HashMap<String, f32>);

/// The words of `text` (runs of letters and digits; `compute_invoice_total`
/// is three) with their byte offsets.
fn passage_words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(move |w| (w.as_ptr() as usize - text.as_ptr() as usize, w))
}

/// What a word is matched by in a passage: its first five characters,
/// lower-cased (`rounding` and `rounds` meet), a crude stem that costs
/// nothing.
fn passage_key(word: &str) -> String {
    word.chars().take(5).flat_map(char::to_lowercase).collect()
}
