use std::path::PathBuf;

/// Errors of the data model. Each names the input it is about.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },

    /// `.memlog.yaml` is not valid.
    #[error("{path}: invalid configuration: {message}")]
    Config {
        /// The configuration file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },

    /// An input that is not what it should be.
    #[error("{what}: {message}")]
    Invalid {
        /// The input.
        what: String,
        /// What is wrong with it.
        message: String,
    },

    /// A line of an imported file that does not parse.
    #[error("{origin}, line {line}: {message}")]
    BadLine {
        /// The file (or `-`).
        origin: String,
        /// Its 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn invalid(what: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Invalid {
            what: what.into(),
            message: message.into(),
        }
    }
}

/// The result of a model operation.
pub type Result<T, E = Error> = std::result::Result<T, E>;
