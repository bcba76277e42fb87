use std::fmt::Display;

/// Errors of an operation. Messages are written for the person at the
/// terminal (or the agent reading a tool result): each names the input it
/// is about and, where there is one, what to do.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The log in git.
    #[error(transparent)]
    Store(#[from] memlog_store::Error),

    /// The projections.
    #[error(transparent)]
    Index(#[from] memlog_indexer::Error),

    /// The data model (times, configuration, kinds).
    #[error(transparent)]
    Format(#[from] memlog_format::Error),

    /// A hook payload that does not parse.
    #[error(transparent)]
    Hook(#[from] memlog_agents::Error),

    /// A document that did not serialise.
    #[error(transparent)]
    Json(#[from] serde_json::Error),

    /// A file, socket or thread of the operating system.
    #[error(transparent)]
    Io(#[from] std::io::Error),

    /// A name that does not give one live event.
    #[error(transparent)]
    Id(#[from] memlog_format::IdError),

    /// A request that cannot be carried out as asked.
    #[error("{0}")]
    Invalid(String),

    /// What was being done when `source` failed.
    #[error("{what}")]
    Context {
        /// The step, in words (`reading the memlog ref`).
        what: String,
        /// Why it failed.
        #[source]
        source: Box<Error>,
    },
}

impl Error {
    /// Whether this is a read of the log that a clone git left incomplete
    /// on purpose could not make (a partial clone's left-out blob, a
    /// shallow clone's cut history): `memlog sync` or `git fetch
    /// --unshallow` repairs it, and nothing else is wrong.
    pub fn is_incomplete_clone(&self) -> bool {
        let incomplete = |e: &memlog_store::Error| {
            matches!(
                e,
                memlog_store::Error::PartialClone { .. } | memlog_store::Error::Shallow { .. }
            )
        };
        match self {
            Error::Store(e) | Error::Index(memlog_indexer::Error::Log(e)) => incomplete(e),
            _ => false,
        }
    }
}

/// The result of an operation.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Whether the request was at fault (an unknown kind or mode, an
    /// unreadable date, an id that names no event), not memlog: a server
    /// answers it as a bad request.
    pub fn is_bad_request(&self) -> bool {
        match self {
            Error::Invalid(_) | Error::Format(_) | Error::Id(_) => true,
            Error::Index(e) => matches!(e, memlog_indexer::Error::Invalid(_)),
            Error::Context { source, .. } => source.is_bad_request(),
            _ => false,
        }
    }
}

/// Says what was being done when an error happened.
pub trait Context<T> {
    /// Wraps the error in [`Error::Context`].
    fn context(self, what: impl Display) -> Result<T>;
}

impl<T, E: Into<Error>> Context<T> for std::result::Result<T, E> {
    fn context(self, what: impl Display) -> Result<T> {
        self.map_err(|e| Error::Context {
            what: what.to_string(),
            source: Box::new(e.into()),
        })
    }
}

impl<T> Context<T> for Option<T> {
    /// `None` becomes an [`Error::Invalid`] saying `what`.
    fn context(self, what: impl Display) -> Result<T> {
        self.ok_or_else(|| Error::Invalid(what.to_string()))
    }
}

/// The error and its causes on one line, `a: b: c`.
pub fn chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut out = err.to_string();
    let mut cause = err.source();
    while let Some(c) = cause {
        // an error that prints its source already ("{path}: {source}")
        // would otherwise say it twice
        let text = c.to_string();
        if !out.ends_with(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        cause = c.source();
    }
    out
}

/// Returns early with an [`Error::Invalid`] made of a format string (for
/// ops and the front-end libraries over it).
#[macro_export]
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::Error::Invalid(format!($($arg)*)))
    };
}
