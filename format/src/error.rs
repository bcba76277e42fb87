use std::path::PathBuf;

/// Errors of the memlog data layer. Each names the input it is about.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "{path}: not inside a git repository (memlog keeps its log in git; run `git init` first)"
    )]
    NotAGitRepo { path: PathBuf },

    #[error("could not open the git repository at {path}: {message}")]
    GitOpen { path: PathBuf, message: String },

    #[error("git: {0}")]
    Git(String),

    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("{path}: invalid configuration: {message}")]
    Config { path: PathBuf, message: String },

    #[error("{what}: {message}")]
    Invalid { what: String, message: String },

    #[error("{origin}, line {line}: {message}")]
    BadLine {
        origin: String,
        line: usize,
        message: String,
    },

    #[error(
        "no remote named and none configured: memory may hold private context, so memlog never \
         picks a remote by itself; run `memlog sync REMOTE`, or list the remotes in .memlog.yaml \
         as `sync: {{ remotes: [origin] }}`"
    )]
    NoSyncRemote,

    #[error("sync with {remote}: {message}")]
    Sync { remote: String, message: String },

    #[error("`{command}` failed: {message}")]
    GitCommand { command: String, message: String },

    #[error("the memlog ref {ref_name} kept moving; gave up after {attempts} attempts")]
    Contention { ref_name: String, attempts: u32 },
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn git(e: impl std::fmt::Display) -> Self {
        Error::Git(e.to_string())
    }

    pub(crate) fn invalid(what: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Invalid {
            what: what.into(),
            message: message.into(),
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
