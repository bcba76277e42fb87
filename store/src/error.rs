use std::path::PathBuf;

/// Errors of the git-backed log. Each names the input it is about.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The path is not inside a git repository.
    #[error(
        "{path}: not inside a git repository (memlog keeps its log in git; run `git init` first)"
    )]
    NotAGitRepo {
        /// Where the search for a repository started.
        path: PathBuf,
    },

    /// The repository belongs to another user and git's `safe.directory`
    /// does not name it: git refuses it ("dubious ownership"), and so does
    /// memlog, which would leave files there its owner cannot remove.
    #[error(
        "{path} belongs to another user: git refuses it (\"dubious ownership\"), and memlog writes nothing there; if it is yours to write, add it to git's safe.directory"
    )]
    NotOwned {
        /// The repository's git directory.
        path: PathBuf,
    },

    /// A repository whose objects are named by another hash than SHA-1
    /// (`git init --object-format=sha256`): memlog's git library reads
    /// SHA-1 repositories only, so nothing is recorded there (a journal
    /// could never be sealed).
    #[error(
        "{path}: a repository of {format} object names (extensions.objectformat), which memlog does not support yet; nothing is recorded here"
    )]
    ObjectFormat {
        /// The repository's git directory.
        path: PathBuf,
        /// Its object format.
        format: String,
    },

    /// gix could not open the repository.
    #[error("could not open the git repository at {path}: {message}")]
    GitOpen {
        /// The repository's path.
        path: PathBuf,
        /// What gix said.
        message: String,
    },

    /// A git operation failed.
    #[error("git: {0}")]
    Git(String),

    /// An object of the log that a partial clone (`git clone --filter`)
    /// left out: git fetches such objects when it needs them, gix (which
    /// memlog reads with) does not, so `memlog sync` fetches them.
    #[error(
        "git: object {id} of the log is not in this repository: it is a partial clone (`git \
         clone --filter`), which left the memlog ref's contents out, and memlog does not fetch \
         them while it reads; run `memlog sync {remote}` to bring them"
    )]
    PartialClone {
        /// The missing object.
        id: String,
        /// The remote git fetches left-out objects from.
        remote: String,
    },

    /// A commit of the log beyond the depth of a shallow clone (`git clone
    /// --depth`): the history of the memlog ref is cut off there.
    #[error(
        "git: commit {id} of the log is not in this repository: it is a shallow clone (`git \
         clone --depth`), which cut the memlog ref's history off; run `git fetch --unshallow \
         {remote}`"
    )]
    Shallow {
        /// The missing commit.
        id: String,
        /// The remote to fetch the history from (`<remote>` when the
        /// repository has several).
        remote: String,
    },

    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },

    /// An input that is not what it should be.
    #[error("{what}: {message}")]
    Invalid {
        /// The input.
        what: String,
        /// What is wrong with it.
        message: String,
    },

    /// `memlog sync` without a remote named or configured.
    #[error(
        "no remote named and none configured: memory may hold private context, so memlog never \
         picks a remote by itself; run `memlog sync REMOTE`, or list the remotes in .memlog.yaml \
         as `sync: {{ remotes: [origin] }}`"
    )]
    NoSyncRemote,

    /// A sync with a remote failed.
    #[error("sync with {remote}: {message}")]
    Sync {
        /// The remote.
        remote: String,
        /// Why.
        message: String,
    },

    /// A remote's ref of the log's name holds something else than a memlog
    /// log (a code branch named `memlog`): nothing is merged or pushed.
    #[error(
        "sync with {remote}: its {ref_name} is not a memlog log: {why}. Nothing was merged or \
         pushed, and the local log is unchanged. {advice}"
    )]
    NotAMemlogLog {
        /// The remote.
        remote: String,
        /// The ref.
        ref_name: String,
        /// What gives it away.
        why: String,
        /// What to do: put the log back when hand-made commits sit on it,
        /// else keep memory elsewhere.
        advice: String,
    },

    /// The local ref of the log's name holds something else than a memlog
    /// log (the user's own branch named `memlog`): memlog writes nothing
    /// on it.
    #[error(
        "{ref_name} is not memlog's log: {why}. memlog wrote nothing to it; the session stays \
         in its journal. Rename that branch (`git branch -m memlog <new name>`), or keep memory \
         on a ref of its own (`ref: refs/heads/agent-memory` in .memlog.yaml), then run \
         `memlog seal --all`"
    )]
    ForeignRef {
        /// The ref.
        ref_name: String,
        /// What gives it away.
        why: String,
    },

    /// The log's ref is the branch a working tree has checked out: moving
    /// it would leave that tree's index on the old commit, and the user's
    /// next `git commit` there would delete what the seal added.
    #[error(
        "{ref_name} is checked out in {worktree}: memlog never moves a branch under a working \
         tree (its next commit would delete the new memory). The session stays in its journal; \
         switch that working tree off it (`git -C {worktree} switch --detach`), and the \
         next seal takes it"
    )]
    CheckedOut {
        /// The ref.
        ref_name: String,
        /// The working tree that has it checked out.
        worktree: String,
    },

    /// A `git` command run as a child process failed.
    #[error("`{command}` failed: {message}")]
    GitCommand {
        /// The command line.
        command: String,
        /// Its error output.
        message: String,
    },

    /// A segment whose bytes do not hash to its name: what it holds is not
    /// what was sealed.
    #[error(
        "segment {path}: its bytes hash to {actual}, not to its name; the log is damaged \
         (run `memlog fsck`)"
    )]
    DamagedSegment {
        /// The segment's path in the tree.
        path: String,
        /// What its bytes hash to.
        actual: String,
    },

    /// The memlog ref kept moving under a compare-and-swap update, or
    /// another process kept its lock.
    #[error(
        "the memlog ref {ref_name} kept moving, or stayed locked; gave up after {attempts} attempts{holder}"
    )]
    Contention {
        /// The ref.
        ref_name: String,
        /// How many updates were tried.
        attempts: u32,
        /// What held the ref, when a lock file says (", held by …").
        holder: String,
    },

    /// One compare-and-swap update of the ref lost a race: the ref moved,
    /// or another process holds its lock. A retry on the new tip resolves it.
    #[error("the memlog ref {ref_name} is being updated by another process: {message}")]
    RefRace {
        /// The ref.
        ref_name: String,
        /// What git said.
        message: String,
    },

    /// An error of the data model (configuration, journal lines, privacy).
    #[error(transparent)]
    Format(#[from] memlog_format::Error),
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

/// The result of a store operation.
pub type Result<T, E = Error> = std::result::Result<T, E>;
