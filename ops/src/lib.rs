//! # memlog-ops
//!
//! The operations every front-end of memlog shares — the command line, the
//! MCP server, the web viewer, the watcher daemon — so that each is written
//! once and the front-ends stay thin and never import each other.
//!
//! - [`workspace`]: opening the repository, the projections brought up to
//!   date first ([`workspace::KeptProjections`] for long-running servers),
//!   every live event, recording drafts;
//! - [`search`]: the one search recipe, from a front-end's arguments to
//!   ranked hits, with the query's vector ([`semantic`]: the embedding
//!   model, vector catch-up and status);
//! - [`ids`]: the one resolver of event ids and prefixes;
//! - writes: [`record`] (an event, a note), [`facts`] (the one
//!   verification of facts, for `extract` and MCP), [`tasks`] (task
//!   changes), [`import`] (neutral files and agents' session files),
//!   [`install`] (an agent's hook settings), [`rules`], [`concepts`];
//! - [`index`]: the projections brought up to date on request (and after
//!   `install` and `import`);
//! - [`scan`]: secret-shaped content already in the log;
//! - [`anchor`]: facts and rules anchored to the code they cite, and
//!   `memlog verify`, which checks them against the current tree;
//! - [`reflect`]: reflection run by itself after sessions, its candidates
//!   offered at SessionStart;
//! - [`review`]: the review queue of agents' facts and rules
//!   (`learn.review`), accept and reject as events;
//! - [`native`]: the agents' own memory files (CLAUDE.md, AGENTS.md,
//!   MEMORY.md), read into the log read-only, and the rules block
//!   `memlog rules export` owns in them;
//! - [`show`], [`forget`] (and reinforce), [`stats`], [`sessions`] (session
//!   listings and timeline pages), [`diff`] ([`memory_diff`]: what changed
//!   between two states of the log);
//! - [`context`]: the SessionStart briefing and the one renderer of a
//!   prompt's memories; [`file_recall`]: what memory knows about a file
//!   or command an agent is about to use (PreToolUse); [`hook`]: the hook
//!   driver, and [`background`] the work it hands to other processes;
//!   [`warm`]: the client of
//!   `memlog watch`'s warm server and its protocol; [`stop`]: what the Stop
//!   hook does (credit cited memories, ask for facts with [`extraction`]'s
//!   instruction).
//!
//! What differs between coding agents (their payloads, settings files,
//! session files, Stop contract) is asked of memlog-agents' `Agent`, never
//! decided here. Front-ends parse, make one call here, and print: they do
//! not build events or drive the store's `Recorder`.
//!
//! Operations return typed values or serde documents and never print to
//! stdout; notes and warnings go to stderr through [`diag`]. Only the
//! indexer speaks SQL.

pub mod anchor;
pub mod backfill;
pub mod background;
pub mod concepts;
pub mod context;
pub mod diag;
pub mod diff;
/// Errors of operations, and what the front-end libraries share of them.
pub mod error;
pub mod extraction;
pub mod facts;
pub mod file_recall;
pub mod forget;
pub mod hook;
pub mod ids;
pub mod import;
pub mod index;
pub mod install;
pub mod memory_diff;
pub mod native;
pub mod record;
pub mod reflect;
pub mod review;
pub mod rules;
pub mod scan;
pub mod search;
pub mod semantic;
pub mod sessions;
pub mod show;
pub mod shown;
pub mod stats;
pub mod stop;
pub mod tasks;
pub mod warm;
pub mod workspace;

pub use error::{Error, Result};
