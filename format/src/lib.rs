//! # memlog-format
//!
//! The contract of memlog's data, and the only crate that writes it.
//!
//! memlog records what a coding agent does as an append-only log of
//! [`Event`]s. This crate owns everything about that log that another tool
//! would need to read or write it faithfully:
//!
//! - [`event`]: the event model and its [`canonical`] JSON form, whose blake3
//!   hash is the event's id (identical content, identical id, stored once);
//! - [`privacy`]: `<private>` spans and secret shapes are removed *before* an
//!   event reaches any byte on disk, and long tool outputs are cut;
//! - [`key`]: canonical keys for identity decisions (seed 000 §4.3);
//! - [`journal`]: the per-session, locked, fsynced append file a live session
//!   writes to;
//! - [`segment`]: content-addressed JSONL files, the unit stored in git;
//! - [`log`] and [`seal`]: the git ref (`refs/heads/memlog` by default) that
//!   holds one commit per sealed session, read and written with gix without
//!   ever touching HEAD, the index or the working tree;
//! - [`visibility`]: `forget` events and what they hide;
//! - [`task`]: the task state machine and its invariants (seed 002), and
//!   [`align`]: the evidence aligner for extracted facts (seed 000 §4.12) —
//!   pure functions shared by the writers and the indexer.
//!
//! Nothing here knows about search indexes, Claude Code or the command line.
//! The byte-level specification is `FORMAT.md` next to this crate.

pub mod align;
pub mod canonical;
pub mod config;
mod error;
pub mod event;
pub mod fsck;
mod git_command;
pub mod journal;
pub mod key;
pub mod log;
pub mod memory_diff;
pub mod neutral;
mod objects;
pub mod privacy;
pub mod purge;
pub mod record;
pub mod refs;
pub mod repo;
pub mod seal;
pub mod segment;
mod sessions;
pub mod sync;
pub mod task;
pub mod time;
pub mod visibility;

pub use config::Config;
pub use error::{Error, Result};
pub use event::{Draft, Event, Kind};
pub use gix::ObjectId;
pub use record::Recorder;
pub use repo::Repo;
