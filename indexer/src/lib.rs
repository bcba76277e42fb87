//! # memlog-indexer
//!
//! Projections derived from memlog's log, and the searches they answer.
//!
//! The log (read through `memlog-store`, in `memlog-format`'s model) is the
//! only source of truth. This crate derives from it, under
//! `<git common dir>/memlog/index/` (`memlog_store::Layout`):
//!
//! - a full-text index ([`fts`], tantivy) with a code-aware [`tokenizer`];
//! - vectors of the events worth recalling ([`vectors`], HNSW), made by a
//!   local sentence-embedding model ([`embed`]) through a cache that
//!   outlives rebuilds ([`embed_cache`]); they trail the full-text index and
//!   are optional: without a model, search is full-text only; a table of
//!   word-piece vectors distilled from the model ([`token_vectors`]) gives
//!   hooks a prompt's vector without loading it;
//! - an entity/edge database ([`graph`], SQLite) with events, sessions,
//!   files, artifacts and the edges between them, queryable with SQL;
//!
//! kept up to date incrementally, or rebuilt from scratch, by
//! [`projection::Projections`] (open and freshness, lock, update, batch),
//! with one writer at a time; what the log holds beyond them (a session
//! sealed a moment ago, live journals) is read past their watermark
//! ([`projection::Unindexed`]) and searched with them. Task entities are folded by [`tasks`]
//! (fold, refold into the database, queries); memory levels by [`memory`]
//! (read back by [`standing`]); reinforcement by [`reinforce`].
//! [`lookup`] reads events back by id prefix, session or time;
//! [`overview`] holds the summary queries the front-ends need (stats
//! counts, the briefing's recent sessions, timeline pages, entities and
//! edges). [`search`] ranks events (docs/DESIGN.md §7) and [`context`]
//! assembles the most relevant ones for a prompt within a token budget.
//! This is the only crate that speaks SQL; nothing here knows about Claude
//! Code or the command line.

pub mod anchors;
pub mod context;
pub mod derive;
pub mod embed;
pub mod embed_cache;
pub mod entities;
mod error;
pub mod event_keys;
pub mod file_recall;
#[expect(
    missing_docs,
    reason = "another branch is rewriting this file; its docs land with it"
)]
pub mod fts;
pub mod graph;
pub mod lookup;
pub mod matcher;
pub mod memory;
pub mod overview;
pub mod projection;
pub mod reinforce;
pub mod review;
#[expect(
    missing_docs,
    reason = "another branch is rewriting this file; its docs land with it"
)]
pub mod search;
pub mod session_row;
pub mod standing;
pub mod supersede;
pub mod tasks;
pub mod token_vectors;
pub mod tokenizer;
pub mod vectors;

pub use error::{Error, Result};
pub use projection::{IndexReport, Projections};
