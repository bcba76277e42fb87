//! # memlog-store
//!
//! The log in git, and the only crate that writes it.
//!
//! - [`repo`]: the git repository and memlog's directory inside it, whose
//!   files [`layout`] names; [`locate`]: finding them by reading a few
//!   files, for the commands that need no more;
//! - [`journal`]: the per-session, locked, fsynced append file a live session
//!   writes to; [`record`]: the [`Recorder`] that filters drafts through the
//!   privacy rules into a journal, its markers keyed by the repository's
//!   [`privacy_key`];
//! - [`log`] and [`seal`]: the git ref (`refs/heads/memlog` by default) that
//!   holds one commit per sealed session, read and written with gix without
//!   ever touching HEAD, the index or the working tree, and the personal
//!   log beside it that never leaves the machine (sealed in a repository of
//!   its own, `personal_store`); [`sessions`]: which
//!   commit seals which session; [`view`]: both logs as readers see them;
//! - [`sync`] and [`purge`]: sharing the ref with remotes and erasing
//!   forgotten bytes from its history; [`remote`]: what both know of remotes;
//! - [`fsck`]: verifying hashes, ids, trailers and journals;
//! - [`code`]: how the user's code moved since a commit, for memories
//!   anchored to it (read-only).
//!
//! The data model (events, segments, privacy) is `memlog-format`'s.

pub mod code;
mod error;
pub mod forgotten;
pub mod fsck;
mod git_command;
mod history_lock;
mod incomplete;
pub mod journal;
pub mod layout;
pub mod locate;
pub mod log;
pub mod lost_ref;
mod objects;
mod personal_store;
pub mod privacy_key;
pub mod purge;
pub mod purge_record;
pub mod record;
mod ref_lock;
pub mod remote;
pub mod repo;
mod rewrite;
pub mod seal;
pub mod sessions;
pub mod shared;
pub mod sync;
pub mod view;

pub use error::{Error, Result};
pub use gix::ObjectId;
pub use layout::{IndexLayout, Layout};
pub use record::Recorder;
pub use repo::{Repo, RepoPlace};
