//! # memlog-format
//!
//! The contract of memlog's data: the pure model, with no I/O beyond reading
//! a configuration file and no git.
//!
//! memlog records what a coding agent does as an append-only log of
//! [`Event`]s. This crate owns everything about that log that another tool
//! would need to read or write it faithfully:
//!
//! - [`event`]: the event model and its [`canonical`] JSON form, whose blake3
//!   hash is the event's id (identical content, identical id, stored once);
//!   [`id`]: [`EventId`], its short form, and the [`IdPrefix`] people give;
//! - [`privacy`]: `<private>` spans and secret shapes are removed *before* an
//!   event reaches any byte on disk, and long tool outputs are cut;
//! - [`key`]: canonical keys for identity decisions (docs/DESIGN.md §4);
//!   [`capture`]: when an imported event is one a hook already recorded;
//! - [`segment`]: content-addressed JSONL files, the unit stored in git;
//!   [`session_id`]: the one rule session ids follow;
//! - [`scope`]: personal events, which never leave the machine;
//! - [`visibility`]: `forget` events and what they hide;
//! - [`task`]: the task state machine and its invariants (docs/DESIGN.md §5), and
//!   [`align`]: the evidence aligner for extracted facts (docs/DESIGN.md §6) —
//!   pure functions shared by the writers and the indexer;
//! - [`refs`]: references (files, URLs, issues) found in text; [`command`]:
//!   the command line of a shell tool call, under any agent's name for it;
//! - [`neutral`]: the neutral import format, and [`jsonl`]: how every
//!   JSON Lines file another program wrote is read; [`config`]: `.memlog.yaml`;
//!   [`time`]: timestamps.
//!
//! Writing the log (journals, sealing into git, sync, purge) is
//! `memlog-store`'s job; nothing here knows about git, search indexes,
//! Claude Code or the command line. The byte-level specification is
//! `FORMAT.md` next to this crate.

pub mod align;
pub mod canonical;
pub mod capture;
pub mod command;
pub mod config;
mod error;
pub mod event;
pub mod id;
pub mod jsonl;
pub mod key;
pub mod neutral;
pub mod paths;
pub mod privacy;
pub mod refs;
pub mod scope;
pub mod segment;
pub mod session_id;
pub mod task;
pub mod time;
pub mod visibility;

pub use config::Config;
pub use error::{Error, Result};
pub use event::{Draft, Event, Kind};
pub use id::{EventId, IdError, IdPrefix};
