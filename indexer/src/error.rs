use std::path::Path;

/// Errors of the projections.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Log(#[from] memlog_store::Error),

    #[error(transparent)]
    Format(#[from] memlog_format::Error),

    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },

    #[error("full-text index {path}: {message}")]
    Fts { path: String, message: String },

    #[error("index database {path}: {message}")]
    Sql { path: String, message: String },

    /// A projection file is damaged; rebuilding fixes it.
    #[error("{what} is damaged: {message}")]
    Corrupt { what: String, message: String },

    /// Another process is writing the projections right now.
    #[error("another memlog process is updating the index")]
    Busy,

    /// The embedding model or ONNX Runtime is missing or failed.
    #[error("semantic search: {0}")]
    Model(String),

    #[error("{0}")]
    Invalid(String),
}

impl Error {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Error {
        Error::Io {
            path: path.display().to_string(),
            source,
        }
    }
    pub(crate) fn fts(path: &Path, e: impl std::fmt::Display) -> Error {
        Error::Fts {
            path: path.display().to_string(),
            message: e.to_string(),
        }
    }
    pub(crate) fn sql(path: &Path, e: impl std::fmt::Display) -> Error {
        Error::Sql {
            path: path.display().to_string(),
            message: e.to_string(),
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
