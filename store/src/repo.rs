//! Locating memlog's home in a git repository.
//!
//! memlog is keyed by the repository's *common* git directory, so every
//! worktree of a repository shares one memory. Its private files live under
//! `<common dir>/memlog/`: `journal/` for live sessions and, for the indexer,
//! `index/`.

use std::cell::OnceCell;
use std::path::{Path, PathBuf};

use memlog_format::Config;
use memlog_format::paths::WorkRoots;

use crate::layout::Layout;
use crate::shared::Sharing;
use crate::{Error, Result};

/// The committer name of memlog's commits when git has no identity
/// configured (`user.name`, `committer.name`, `GIT_COMMITTER_NAME`).
pub const FALLBACK_NAME: &str = "memlog";
/// The committer email that goes with [`FALLBACK_NAME`].
pub const FALLBACK_EMAIL: &str = "memlog@localhost";

/// A repository and memlog's places in it. The git repository itself is
/// opened on first use ([`Repo::git`]): recording an event needs only the
/// places ([`crate::locate`]).
pub struct Repo {
    /// The git repository (gix), once opened.
    git: OnceCell<gix::Repository>,
    /// This worktree's own git directory.
    git_dir: PathBuf,
    /// The git common directory (shared by all worktrees).
    pub common_dir: PathBuf,
    /// The working tree of the worktree memlog was started in, if any.
    pub work_tree: Option<PathBuf>,
    /// `<common dir>/memlog`.
    pub memlog_dir: PathBuf,
    /// `.memlog.yaml` of the work tree (defaults when absent).
    pub config: Config,
    /// [`Repo::project`], worked out on first use.
    project: OnceCell<String>,
    /// Whether this is the personal store ([`Repo::personal_store`]): a
    /// bare repository of memlog's own, opened (or made) where it is, never
    /// discovered.
    store_only: bool,
    /// [`Repo::personal_store`], once worked out; `None` when the personal
    /// log is still on the legacy ref of this repository.
    personal: OnceCell<Option<Box<Repo>>>,
    /// [`Repo::sharing`], read on first use.
    sharing: OnceCell<Sharing>,
}

/// A repository's place and configuration, git not opened ([`Repo::place`]).
pub struct RepoPlace {
    git_dir: PathBuf,
    common_dir: PathBuf,
    work_tree: Option<PathBuf>,
    config: Config,
}

impl RepoPlace {
    /// The repository, git to be opened on first use.
    pub fn into_repo(self) -> Repo {
        Repo {
            git: OnceCell::new(),
            memlog_dir: self.common_dir.join("memlog"),
            git_dir: self.git_dir,
            common_dir: self.common_dir,
            work_tree: self.work_tree,
            config: self.config,
            project: OnceCell::new(),
            store_only: false,
            personal: OnceCell::new(),
            sharing: OnceCell::new(),
        }
    }
}

/// A repository git would refuse as another user's ("dubious ownership":
/// not owned by this user, not named by `safe.directory`) is refused.
fn refuse_untrusted(git: &gix::Repository) -> Result<()> {
    if git.git_dir_trust() == gix::sec::Trust::Full {
        return Ok(());
    }
    Err(Error::NotOwned {
        path: absolute(git.git_dir()),
    })
}

/// The refusal of a repository whose object format is not SHA-1, read from
/// its `config` (`extensions.objectformat`); gix, built for SHA-1 only,
/// says only that the configuration "could not be loaded".
fn unsupported_object_format(common_dir: &Path) -> Option<Error> {
    let format = config_value(common_dir, "extensions", "objectformat")?.to_ascii_lowercase();
    (format != "sha1").then(|| Error::ObjectFormat {
        path: common_dir.to_path_buf(),
        format,
    })
}

/// The value of `key` in the section `[section]` of the git `config` file
/// under `common_dir` (a subsection quoted, as `remote "origin"`), read
/// from the file: a hook cannot afford gix's whole configuration, nor a git
/// process. Section and key names compare without case, as git compares
/// them; a subsection exactly. A key without `=` is a boolean set to true,
/// as git reads it.
pub(crate) fn config_value(common_dir: &Path, section: &str, key: &str) -> Option<String> {
    let config = std::fs::read_to_string(common_dir.join("config")).ok()?;
    let wanted: String = section.split_whitespace().collect();
    let mut inside = false;
    for line in config.lines().map(str::trim) {
        if let Some(header) = line.strip_prefix('[') {
            let header: String = header.trim_end_matches(']').split_whitespace().collect();
            // the section's name without case, a quoted subsection exactly
            let (name, sub) = header.split_once('"').unwrap_or((&header, ""));
            let (wanted_name, wanted_sub) = wanted.split_once('"').unwrap_or((&wanted, ""));
            inside = name.eq_ignore_ascii_case(wanted_name) && sub == wanted_sub;
            continue;
        }
        let (name, value) = line.split_once('=').unwrap_or((line, "true"));
        if inside && name.trim().eq_ignore_ascii_case(key) {
            return Some(value.trim().trim_matches('"').to_string());
        }
    }
    None
}

impl Repo {
    /// Finds the repository containing `start` and reads its configuration.
    pub fn discover(start: &Path) -> Result<Repo> {
        if let Some(found) = crate::locate::locate(start) {
            let (repo, config_error) = Repo::from_located(found);
            return config_error.map_or(Ok(repo), Err);
        }
        let git = gix::discover_with_environment_overrides(start).map_err(|e| {
            let message = e.to_string();
            if message.contains("not a git repository")
                || message.contains("Could not find a git repository")
                || message.contains("No git repository")
            {
                Error::NotAGitRepo {
                    path: absolute(start),
                }
            } else {
                Error::GitOpen {
                    path: start.to_path_buf(),
                    message,
                }
            }
        })?;
        refuse_untrusted(&git)?;
        Repo::from_git(git)
    }

    /// Wraps an already opened repository.
    pub fn from_git(git: gix::Repository) -> Result<Repo> {
        let (repo, config_error) = Repo::from_git_lenient(git);
        config_error.map_or(Ok(repo), Err)
    }

    /// Finds the repository like [`Repo::discover`], but a configuration
    /// that does not load is returned beside a repository with the default
    /// configuration (for callers that must still know where memlog lives,
    /// such as a hook logging the problem).
    pub fn discover_lenient(start: &Path) -> Result<(Repo, Option<Error>)> {
        if let Some(found) = crate::locate::locate(start) {
            return Ok(Repo::from_located(found));
        }
        let git = gix::discover_with_environment_overrides(start).map_err(|e| Error::GitOpen {
            path: start.to_path_buf(),
            message: e.to_string(),
        })?;
        refuse_untrusted(&git)?;
        Ok(Repo::from_git_lenient(git))
    }

    fn from_located(found: crate::locate::Located) -> (Repo, Option<Error>) {
        Repo::with_places(
            OnceCell::new(),
            found.git_dir,
            found.common_dir,
            Some(found.work_tree),
        )
    }

    fn from_git_lenient(git: gix::Repository) -> (Repo, Option<Error>) {
        let git_dir = absolute(git.git_dir());
        let common_dir = absolute(git.common_dir());
        let work_tree = git.workdir().map(absolute);
        Repo::with_places(OnceCell::from(git), git_dir, common_dir, work_tree)
    }

    fn with_places(
        git: OnceCell<gix::Repository>,
        git_dir: PathBuf,
        common_dir: PathBuf,
        work_tree: Option<PathBuf>,
    ) -> (Repo, Option<Error>) {
        let (config, error) = match &work_tree {
            Some(dir) => match Config::load_from_dir(dir) {
                Ok(c) => (c, None),
                Err(e) => (Config::default(), Some(e.into())),
            },
            None => (Config::default(), None),
        };
        let error = unsupported_object_format(&common_dir).or(error);
        (
            Repo {
                memlog_dir: common_dir.join("memlog"),
                git,
                git_dir,
                common_dir,
                work_tree,
                config,
                project: OnceCell::new(),
                store_only: false,
                personal: OnceCell::new(),
                sharing: OnceCell::new(),
            },
            error,
        )
    }

    /// Where this repository is, with its configuration: what another
    /// thread takes along to make a [`Repo`] of (gix's handle cannot cross
    /// threads, and finding the repository and reading its configuration
    /// again cost a hook's worker a quarter of its start).
    pub fn place(&self) -> RepoPlace {
        RepoPlace {
            git_dir: self.git_dir.clone(),
            common_dir: self.common_dir.clone(),
            work_tree: self.work_tree.clone(),
            config: self.config.clone(),
        }
    }

    /// This worktree's own git directory.
    pub fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    /// The git repository, opened on first use.
    pub fn git(&self) -> Result<&gix::Repository> {
        if let Some(git) = self.git.get() {
            return Ok(git);
        }
        if self.store_only {
            let git = crate::personal_store::open_or_init(&self.git_dir)?;
            return Ok(self.git.get_or_init(|| git));
        }
        let start = self.work_tree.as_deref().unwrap_or(&self.git_dir);
        let mut git =
            gix::discover_with_environment_overrides(start).map_err(|e| Error::GitOpen {
                path: start.to_path_buf(),
                message: e.to_string(),
            })?;
        // memlog's commits and their reflog entries need an identity; a
        // machine with none configured (a container, CI, a fresh laptop)
        // gets a documented fallback instead of a seal that fails.
        git.committer_or_set_fallback(FALLBACK_NAME, FALLBACK_EMAIL)
            .map_err(Error::git)?;
        Ok(self.git.get_or_init(|| git))
    }

    /// Where this machine's personal log is kept: a bare repository of its
    /// own under memlog's directory ([`crate::personal_store`]), so that no
    /// git command of this repository (a mirror push, a bundle, a fetch from
    /// this machine, a local clone) can carry it. A personal log still on
    /// this repository's legacy ref is moved there first; where it cannot
    /// be (a read-only store), it is read where it is.
    pub fn personal_store(&self) -> &Repo {
        if self.store_only {
            return self;
        }
        let store = self
            .personal
            .get_or_init(|| crate::personal_store::place(self).map(Box::new));
        store.as_deref().unwrap_or(self)
    }

    /// The personal store's repository (see [`Repo::personal_store`]):
    /// its git directory is `dir`, everything memlog keeps is this one's.
    pub(crate) fn store_at(&self, dir: PathBuf) -> Repo {
        Repo {
            git: OnceCell::new(),
            git_dir: dir.clone(),
            common_dir: dir,
            work_tree: None,
            memlog_dir: self.memlog_dir.clone(),
            config: self.config.clone(),
            project: OnceCell::from(self.project()),
            store_only: true,
            personal: OnceCell::new(),
            sharing: OnceCell::new(),
        }
    }

    /// Whether this is a personal store rather than a repository.
    pub fn is_personal_store(&self) -> bool {
        self.store_only
    }

    /// The checked-out branch (short name) and HEAD commit of the user's
    /// code, if any.
    pub fn code_position(&self) -> (Option<String>, Option<String>) {
        crate::locate::head(&self.git_dir, &self.common_dir)
    }

    /// The files memlog keeps in its directory.
    pub fn layout(&self) -> Layout {
        Layout::new(&self.memlog_dir)
    }

    /// `<common dir>/memlog/journal`.
    pub fn journal_dir(&self) -> PathBuf {
        self.layout().journal_dir()
    }

    /// Creates memlog's directories (idempotent).
    pub fn ensure_dirs(&self) -> Result<()> {
        self.create_memlog_dir()?;
        let dir = self.journal_dir();
        self.sharing()
            .create_dir_all(&dir)
            .map_err(|e| Error::io(&dir, e))
    }

    /// Creates `<common dir>/memlog`, never the git directory itself
    /// ([`crate::layout::create_dir_in_parent`]), with the mode of a
    /// shared repository's directories.
    pub fn create_memlog_dir(&self) -> Result<()> {
        crate::layout::create_dir_in_parent(&self.memlog_dir)?;
        self.sharing()
            .apply(&self.memlog_dir)
            .map_err(|e| Error::io(&self.memlog_dir, e))
    }

    /// How the repository's `core.sharedRepository` widens the modes of
    /// what memlog creates in it ([`crate::shared`]); the personal store's
    /// are its repository's.
    pub fn sharing(&self) -> Sharing {
        *self
            .sharing
            .get_or_init(|| Sharing::of_memlog_dir(&self.memlog_dir))
    }

    /// The project name recorded in events: the configured one, else the
    /// name of the repository `origin` points at (the same in every clone
    /// of a team, whatever each clone's directory is called: tasks are
    /// keyed by project), else the name of the repository's directory (the
    /// same in every worktree).
    pub fn project(&self) -> String {
        self.project.get_or_init(|| self.project_uncached()).clone()
    }

    fn project_uncached(&self) -> String {
        if let Some(p) = &self.config.project {
            return p.clone();
        }
        if let Some(name) = origin_name(&self.common_dir) {
            return name;
        }
        let dir = if self.common_dir.file_name().is_some_and(|n| n == ".git") {
            self.common_dir.parent().unwrap_or(&self.common_dir)
        } else {
            &self.common_dir
        };
        dir.file_name()
            .map(|n| n.to_string_lossy().trim_end_matches(".git").to_string())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "default".to_string())
    }

    /// The ref holding the log.
    pub fn ref_name(&self) -> &str {
        &self.config.ref_name
    }

    /// Every working tree of the repository, with the file holding its
    /// `HEAD`: the main one (unless the repository is bare; a bare one's
    /// `HEAD` names its default branch, not a checkout), then each linked
    /// `git worktree`.
    pub fn worktrees(&self) -> Vec<(PathBuf, PathBuf)> {
        let mut trees = Vec::new();
        let bare = self
            .git()
            .ok()
            .and_then(|git| git.config_snapshot().boolean("core.bare"))
            .unwrap_or(false);
        // the main tree: this one when started there (a submodule's git
        // directory is not in its tree), else the common directory's parent
        let main = match &self.work_tree {
            Some(tree) if self.git_dir == self.common_dir => Some(tree.clone()),
            _ => self.common_dir.parent().map(Path::to_path_buf),
        };
        if !bare && let Some(main) = main {
            trees.push((main, self.common_dir.join("HEAD")));
        }
        let linked = std::fs::read_dir(self.common_dir.join("worktrees"));
        for entry in linked.into_iter().flatten().flatten() {
            let dir = entry.path();
            // `gitdir` holds the linked tree's `.git` file
            let tree = std::fs::read_to_string(dir.join("gitdir"))
                .ok()
                .and_then(|git| PathBuf::from(git.trim()).parent().map(PathBuf::from));
            if let Some(tree) = tree {
                trees.push((tree, dir.join("HEAD")));
            }
        }
        trees
    }

    /// The directories the repository's files live under: this worktree,
    /// the main one and every linked one (`<common dir>/worktrees/*/gitdir`
    /// names each one's `.git` file), as given and canonical. All of them
    /// share one memory, so a file is one entity whichever worktree an
    /// event named it from.
    pub fn work_roots(&self) -> WorkRoots {
        let mut dirs: Vec<PathBuf> = self.work_tree.iter().cloned().collect();
        if self.common_dir.file_name().is_some_and(|n| n == ".git")
            && let Some(main) = self.common_dir.parent()
        {
            dirs.push(main.to_path_buf());
        }
        if let Ok(entries) = std::fs::read_dir(self.common_dir.join("worktrees")) {
            for entry in entries.flatten() {
                if let Ok(gitdir) = std::fs::read_to_string(entry.path().join("gitdir"))
                    && let Some(root) = Path::new(gitdir.trim()).parent()
                {
                    dirs.push(root.to_path_buf());
                }
            }
        }
        let mut names = Vec::new();
        for d in dirs {
            names.push(d.to_string_lossy().into_owned());
            names.push(absolute(&d).to_string_lossy().into_owned());
        }
        WorkRoots::new(names)
    }
}

fn absolute(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// The repository name of `remote.origin.url` in the git config under
/// `common_dir` (`git@host:team/shop.git` and `https://host/team/shop`
/// give `shop`), read from the file: a hook cannot afford a git process.
fn origin_name(common_dir: &Path) -> Option<String> {
    let url = config_value(common_dir, "remote \"origin\"", "url")?;
    let url = url.trim_end_matches('/');
    let last = url.rsplit(['/', ':', '\\']).next()?;
    let name = last.strip_suffix(".git").unwrap_or(last);
    (!name.is_empty()).then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_names_the_project_in_every_url_form() {
        let dir = tempfile::tempdir().unwrap();
        let name = |url: &str| {
            std::fs::write(
                dir.path().join("config"),
                format!(
                    "[core]\n\tbare = false\n[remote \"upstream\"]\n\turl = /x/other.git\n\
                     [remote \"origin\"]\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n\turl = {url}\n"
                ),
            )
            .unwrap();
            origin_name(dir.path())
        };
        for url in [
            "git@github.com:acme/shop.git",
            "https://github.com/acme/shop",
            "https://github.com/acme/shop.git/",
            "/srv/git/shop.git",
            "ssh://git@host:22/acme/shop.git",
        ] {
            assert_eq!(name(url).as_deref(), Some("shop"), "{url}");
        }
        std::fs::write(dir.path().join("config"), "[core]\n\tbare = false\n").unwrap();
        assert_eq!(origin_name(dir.path()), None);
    }
}
