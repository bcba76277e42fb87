use std::path::Path;

/// Errors of the projections.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading the log failed.
    #[error(transparent)]
    Log(#[from] memlog_store::Error),

    /// The data model refused something (a time, the configuration).
    #[error(transparent)]
    Format(#[from] memlog_format::Error),

    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },

    /// The full-text index failed.
    #[error("full-text index {path}: {message}")]
    Fts {
        /// Its directory.
        path: String,
        /// What tantivy said.
        message: String,
    },

    /// The database failed.
    #[error("index database {path}: {message}")]
    Sql {
        /// Its file.
        path: String,
        /// What SQLite said.
        message: String,
    },

    /// A projection file another version of memlog made (its schema or
    /// analyzer differs): the next index run rebuilds it.
    #[error("{what} was made by another version of memlog: {message}")]
    Outdated {
        /// Which file.
        what: String,
        /// What differs.
        message: String,
    },

    /// A projection file is damaged; rebuilding fixes it.
    #[error("{what} is damaged: {message}")]
    Corrupt {
        /// Which file.
        what: String,
        /// How it is damaged.
        message: String,
    },

    /// A projection file this user may not open: another user's, made
    /// in a repository several users share with modes that keep the others
    /// out (an older memlog, or a repository without `core.sharedRepository`).
    /// Not damage: rebuilding it would only take it from its owner, so it
    /// is left alone and the log is read around it.
    #[error("{path} {}", owner_words(*.owner))]
    NotPermitted {
        /// The file.
        path: String,
        /// Its owner, when another user than this process's.
        owner: Option<u32>,
    },

    /// The projections were never built (or were deleted): `memlog index`
    /// builds them, as `install` and `import` do.
    #[error("the index at {0} is not built yet")]
    NotBuilt(String),

    /// Another process is writing the projections right now.
    #[error("another memlog process is updating the index")]
    Busy,

    /// Another process held the projections' writer lock for longer than a
    /// caller would wait for it.
    #[error(
        "the index is being written by {holder}; waited {waited_secs} s for it, try again when it finishes"
    )]
    WriterBusy {
        /// Who holds the lock, as it wrote itself into `index.lock`.
        holder: String,
        /// How long the caller waited.
        waited_secs: u64,
    },

    /// The embedding model or ONNX Runtime is missing or failed.
    #[error("semantic search: {0}")]
    Model(String),

    /// A request that cannot be answered as asked.
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
        if let Some(denied) = Error::not_permitted(path) {
            return denied;
        }
        Error::Fts {
            path: path.display().to_string(),
            message: e.to_string(),
        }
    }
    /// [`Error::NotPermitted`] if a file of `path` (a database with its
    /// write-ahead log, or a directory's files) cannot be opened for
    /// reading and writing for lack of permission: what a failure to open
    /// or write a projection is checked for before it counts as damage.
    pub(crate) fn not_permitted(path: &Path) -> Option<Error> {
        let mut files = vec![path.to_path_buf()];
        if let Ok(entries) = std::fs::read_dir(path) {
            files.extend(entries.flatten().map(|e| e.path()));
        } else {
            for suffix in ["-wal", "-shm"] {
                let mut name = path.as_os_str().to_owned();
                name.push(suffix);
                files.push(name.into());
            }
        }
        files.into_iter().find_map(|file| {
            if !file.is_file() {
                return None;
            }
            let opened = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(&file);
            match opened {
                Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                    Some(Error::NotPermitted {
                        owner: memlog_store::shared::other_owner(&file),
                        path: file.display().to_string(),
                    })
                }
                _ => None,
            }
        })
    }

    /// A database error; SQLite's own words for a damaged file make it
    /// [`Error::Corrupt`], which an index run rebuilds (a malformed
    /// `graph.sqlite` failed every command until a person ran `memlog
    /// rebuild`, where damaged full-text files were rebuilt unasked).
    pub(crate) fn sql(path: &Path, e: impl std::fmt::Display) -> Error {
        if let Some(denied) = Error::not_permitted(path) {
            return denied;
        }
        let message = e.to_string();
        if DAMAGE.iter().any(|said| message.contains(said)) {
            return Error::Corrupt {
                what: path.display().to_string(),
                message,
            };
        }
        Error::Sql {
            path: path.display().to_string(),
            message,
        }
    }
}

impl Error {
    /// Whether the index could not be written here: a full disk, a
    /// read-only store, another user's files. Its readers then read what is
    /// there and the log beyond it; nothing is damaged. The full-text
    /// index and SQLite give only their own words for these.
    pub fn is_unwritable(&self) -> bool {
        use std::io::ErrorKind::*;
        let unwritable = |kind: std::io::ErrorKind| {
            matches!(
                kind,
                PermissionDenied | ReadOnlyFilesystem | StorageFull | QuotaExceeded
            )
        };
        match self {
            Error::Io { source, .. } => unwritable(source.kind()),
            Error::Log(memlog_store::Error::Io { source, .. }) => unwritable(source.kind()),
            Error::Fts { message, .. } | Error::Sql { message, .. } => {
                UNWRITABLE.iter().any(|said| message.contains(said))
            }
            Error::NotPermitted { .. } => true,
            _ => false,
        }
    }
}

/// How the full-text index (an `io::Error`'s kind and words) and SQLite
/// say that a file cannot be written.
const UNWRITABLE: [&str; 8] = [
    "StorageFull",
    "No space left on device",
    "database or disk is full",
    "ReadOnlyFilesystem",
    "Read-only file system",
    "attempt to write a readonly database",
    "PermissionDenied",
    "Permission denied",
];

/// How [`Error::NotPermitted`] names the file's owner.
fn owner_words(owner: Option<u32>) -> String {
    match owner {
        Some(uid) => format!(
            "belongs to another user (uid {uid}) and cannot be opened by this one: \
             it is theirs to fix (`core.sharedRepository` makes memlog's files the group's)"
        ),
        None => "cannot be opened by this user (permission denied)".to_string(),
    }
}

/// What SQLite says of a damaged database file (SQLITE_CORRUPT,
/// SQLITE_NOTADB).
const DAMAGE: [&str; 2] = ["database disk image is malformed", "file is not a database"];

/// The result of a projection operation.
pub type Result<T, E = Error> = std::result::Result<T, E>;
