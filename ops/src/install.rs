//! Connecting memlog to a coding agent: memlog's hook commands merged into
//! the agent's settings (which file, which events and in what form is the
//! agent's knowledge, [`Agent::edit_settings`]), and removed again.
//! Installing leaves the repository's index built ([`crate::index::after`]).

use std::path::{Path, PathBuf};

use memlog_agents::settings::Comments;
use memlog_agents::{AGENTS, Agent, HookTrust, Scope};

use crate::error::{Context, Result};
use crate::index::Indexed;
use crate::workspace;

/// What installing (or removing) an agent's hooks did.
#[derive(Clone, Debug)]
pub struct HooksInstalled {
    /// The settings file.
    pub path: PathBuf,
    /// How many hook events memlog now listens to there.
    pub events: usize,
    /// How many earlier memlog hook commands were removed.
    pub removed: usize,
    /// With `dry_run`: the file as it would be written, which was not.
    pub dry_run: Option<String>,
    /// For an agent that runs hooks only once trusted: whether it runs
    /// the ones just installed.
    pub trust: Option<HookTrust>,
    /// The index of the repository, built (or brought up to date) after
    /// installing, so that the first prompt finds the memory there is.
    pub index: Option<Indexed>,
    /// Events left out because the agent's version here predates them.
    pub left_out: Vec<String>,
    /// What was done with the file's comments (Gemini CLI's settings).
    pub comments: Comments,
    /// Where the file as it was is kept, when the edit dropped comments.
    pub backup: Option<PathBuf>,
}

/// Installs `agent`'s memlog hooks at `scope` (or with `install` false only
/// removes them), keeping everything else in its settings file; memlog's
/// earlier entries are always replaced. The project scopes are in the
/// working tree of the repository containing `dir`. The file is written as
/// [`write_settings_file`] says; with `dry_run` it is only returned.
pub fn hooks(
    dir: &Path,
    agent: &dyn Agent,
    scope: Scope,
    install: bool,
    dry_run: bool,
) -> Result<HooksInstalled> {
    let work_tree = match scope {
        Scope::User => None,
        Scope::Project | Scope::Local => Some(
            workspace::open(dir)?
                .work_tree
                .context("this repository has no working tree; use --user")?,
        ),
    };
    let path = agent.settings_file(scope, work_tree.as_deref())?;
    let current = match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).context(format_args!("reading {}", path.display())),
    };
    let exe = hook_program(scope)?;
    let edit = agent.edit_settings(&path, current.as_deref(), &exe, install)?;
    if dry_run {
        return Ok(HooksInstalled {
            path,
            events: edit.events,
            removed: edit.removed,
            dry_run: Some(edit.text.unwrap_or_default()),
            trust: None,
            index: None,
            left_out: edit.left_out,
            comments: edit.comments,
            backup: None,
        });
    }
    // comments the new text drops are kept in a copy of the file as it was
    let backup = match (&current, edit.comments) {
        (Some(text), Comments::Dropped) => Some(keep_backup(&linked_file(&path), text)?),
        _ => None,
    };
    match &edit.text {
        Some(text) => write_settings_file(&path, text)?,
        None if current.is_some() => {
            // the file was memlog's alone: through a link, its target
            let file = linked_file(&path);
            std::fs::remove_file(&file).context(format_args!("removing {}", file.display()))?;
        }
        None => {}
    }
    let trust = agent.hook_trust(&path, work_tree.as_deref());
    let index = match workspace::open(dir) {
        Ok(repo) if install => {
            // said now, not at the first session's end
            if let Err(e) = memlog_store::log::Log::new(&repo).check_ours() {
                crate::diag::warning(e);
            }
            repo.ensure_dirs()?;
            crate::index::after(&repo, false)
        }
        _ => None,
    };
    Ok(HooksInstalled {
        path,
        events: edit.events,
        removed: edit.removed,
        dry_run: None,
        trust,
        index,
        left_out: edit.left_out,
        comments: edit.comments,
        backup,
    })
}

/// Keeps `text`, the settings file `file` as it was, beside it under a
/// name no earlier backup has (`<file>.memlog-backup`, then `-2`, …), with
/// the file's permissions (it may hold tokens).
fn keep_backup(file: &Path, text: &str) -> Result<PathBuf> {
    let permissions = std::fs::metadata(file).ok().map(|m| m.permissions());
    for n in 1..=100 {
        let mut name = file.as_os_str().to_owned();
        name.push(".memlog-backup");
        if n > 1 {
            name.push(format!("-{n}"));
        }
        let backup = PathBuf::from(name);
        if backup.exists() {
            continue;
        }
        write_new_file(&backup, text, permissions.as_ref())
            .context(format_args!("writing {}", backup.display()))?;
        return Ok(backup);
    }
    Err(crate::error::Error::Invalid(format!(
        "{}: 100 backups of it exist already; remove some",
        file.display()
    )))
}

/// How many symbolic links [`linked_file`] follows (the kernel's limit).
const MAX_LINKS: usize = 40;

/// The file `path` names: itself, or the file a symbolic link at `path`
/// points to, through any chain of links (relative ones from the link's
/// folder). A settings file kept in a dotfiles repository and linked into
/// place is edited there, and the link stays a link.
pub fn linked_file(path: &Path) -> PathBuf {
    let mut file = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        let Ok(target) = std::fs::read_link(&file) else {
            break;
        };
        file = match file.parent() {
            Some(folder) => folder.join(target),
            None => target,
        };
    }
    file
}

/// Writes a settings file's new `text` as its owner keeps it (field test
/// 12a: install replaced a linked `~/.claude/settings.json` by a plain
/// file, so the dotfiles never got the hooks, and made a private `0600`
/// file holding tokens world-readable): to the file a link points to
/// ([`linked_file`]), with the permissions the file had. The text goes to a
/// temporary file beside it, renamed over it, so that the agent never reads
/// half a file; where no file can be made there (a folder the user may
/// not write), the file is rewritten in place. A new file gets the
/// default permissions.
pub fn write_settings_file(path: &Path, text: &str) -> Result<()> {
    let file = linked_file(path);
    if let Some(parent) = file.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).context(format_args!("creating {}", parent.display()))?;
    }
    let permissions = std::fs::metadata(&file).ok().map(|m| m.permissions());
    let mut tmp = file.clone().into_os_string();
    tmp.push(".memlog-tmp");
    let tmp = PathBuf::from(tmp);
    match write_new_file(&tmp, text, permissions.as_ref()) {
        Ok(()) => std::fs::rename(&tmp, &file).or_else(|e| {
            let _ = std::fs::remove_file(&tmp);
            Err(e).context(format_args!("writing {}", file.display()))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied && permissions.is_some() => {
            let _ = std::fs::remove_file(&tmp);
            std::fs::write(&file, text).context(format_args!("writing {}", file.display()))
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e).context(format_args!("writing {}", tmp.display()))
        }
    }
}

/// Writes `text` to a new file at `tmp`, synced, with `permissions` (the
/// file it replaces had them): created with them, so that it is never
/// more open than that, and set again, as the umask may have narrowed them.
fn write_new_file(
    tmp: &Path,
    text: &str,
    permissions: Option<&std::fs::Permissions>,
) -> std::io::Result<()> {
    use std::io::Write;
    // a temporary file a crash left behind, whatever its permissions
    let _ = std::fs::remove_file(tmp);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    if let Some(permissions) = permissions {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        options.mode(permissions.mode());
    }
    let mut file = options.open(tmp)?;
    file.write_all(text.as_bytes())?;
    if let Some(permissions) = permissions {
        file.set_permissions(permissions.clone())?;
    }
    file.sync_all()
}

/// memlog's hooks in one of an agent's settings files.
#[derive(Debug)]
pub struct InstalledHooks {
    /// The agent.
    pub agent: &'static dyn Agent,
    /// Which of its settings files.
    pub scope: Scope,
    /// The file.
    pub path: PathBuf,
    /// memlog's hook commands in it.
    pub hooks: usize,
    /// Whether the agent runs them, for an agent that asks trust first.
    pub trust: Option<HookTrust>,
    /// The memlog programs they run that are not on this machine (a
    /// settings file committed from another machine).
    pub missing: Vec<String>,
    /// The memlog programs they run that are on this machine but are not
    /// this binary (an older install first on `PATH`, which hooks naming
    /// `memlog` run): what they record and inject is that memlog's doing.
    pub elsewhere: Vec<String>,
    /// Whether installing again would write them otherwise: a plugin an
    /// earlier memlog wrote, without this one's fixes.
    pub outdated: bool,
    /// This machine's absolute paths of memlog in a committed (project)
    /// settings file, where installing again would name `memlog` by name:
    /// a teammate's clone has no such path (an earlier memlog always wrote
    /// the path, and an upgrade keeps the file as it was).
    pub machine_paths: Vec<String>,
    /// Events in the file the agent's version here does not know, for
    /// which it ignores the whole file, each said as a sentence.
    pub unknown_events: Vec<String>,
}

/// The program hooks run. The project's settings file is committed, and a
/// teammate's memlog is not at this machine's path: there it is `memlog`
/// by name when that name on `PATH` is this binary. Elsewhere, and when
/// PATH finds another program, this binary's absolute path, which runs
/// whatever PATH the agent starts with.
fn hook_program(scope: Scope) -> Result<PathBuf> {
    let exe = std::env::current_exe().context("locating the memlog binary")?;
    if scope == Scope::Project
        && let Some(name) = exe.file_name().and_then(|n| n.to_str())
        && let Some(found) = on_path(name)
        && same_file(&found, &exe)
    {
        return Ok(PathBuf::from(name));
    }
    Ok(exe)
}

/// The program a committed project file (`.mcp.json`, the agents' project
/// settings) names for memlog: see [`hook_program`].
pub fn project_program() -> Result<PathBuf> {
    hook_program(Scope::Project)
}

/// What is wrong with the memlog servers of a project's `.mcp.json` (those
/// whose arguments hold `mcp`), each said as a sentence, and whether it
/// keeps memory from working. The file is committed: an earlier memlog
/// wrote this machine's binary and `-C` this clone's path into it, so a
/// teammate's agent served (and wrote into) the clone that wrote it, or
/// nothing.
pub fn mcp_config_problems(root: &Path) -> Vec<(String, bool)> {
    let file = root.join(".mcp.json");
    let Ok(text) = std::fs::read_to_string(&file) else {
        return Vec::new();
    };
    let Ok(config) = serde_json::from_str::<serde_json::Value>(&text) else {
        return vec![(
            format!(
                "{} is not valid JSON: the agent starts none of its servers",
                file.display()
            ),
            true,
        )];
    };
    let Some(servers) = config.get("mcpServers").and_then(|s| s.as_object()) else {
        return Vec::new();
    };
    let here = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let mut problems = Vec::new();
    for (name, server) in servers {
        let args: Vec<&str> = server
            .get("args")
            .and_then(|a| a.as_array())
            .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
            .unwrap_or_default();
        let Some(command) = server.get("command").and_then(|c| c.as_str()) else {
            continue;
        };
        if !args.contains(&"mcp")
            || !Path::new(command)
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("memlog"))
        {
            continue;
        }
        let again = "`memlog install mcp --write` again names `memlog mcp`, which serves the clone it is started in";
        if let Some(dir) = args.windows(2).find(|w| w[0] == "-C").map(|w| w[1]) {
            let served = std::fs::canonicalize(dir).unwrap_or_else(|_| PathBuf::from(dir));
            if served != here {
                problems.push((
                    format!(
                        "{}: the {name:?} server serves {dir}, not this clone: its agent searches \
                         and writes that memory; {again}",
                        file.display()
                    ),
                    true,
                ));
                continue;
            }
        }
        if !program_exists(command) {
            problems.push((
                format!(
                    "{}: the {name:?} server runs {command}, which is not on this machine: the \
                         agent has no memory tools; {again}",
                    file.display()
                ),
                true,
            ));
        } else if Path::new(command).is_absolute() || args.contains(&"-C") {
            problems.push((
                format!(
                    "{}: the {name:?} server names this machine's paths in a file the project \
                         commits: a teammate's clone has none such; {again}",
                    file.display()
                ),
                false,
            ));
        }
    }
    problems
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The first file called `name` in `PATH`'s folders.
fn on_path(name: &str) -> Option<PathBuf> {
    let dirs = std::env::var_os("PATH")?;
    std::env::split_paths(&dirs)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Whether `program` (a path, or a name `PATH` finds) is this binary.
fn runs_this_binary(program: &str) -> bool {
    let path = Path::new(program);
    let found = if path.components().count() > 1 {
        Some(path.to_path_buf())
    } else {
        on_path(program)
    };
    match (found, std::env::current_exe()) {
        (Some(found), Ok(exe)) => same_file(&found, &exe),
        _ => true,
    }
}

/// Whether `program` runs here: a path that exists, or a bare name found
/// on `PATH`.
fn program_exists(program: &str) -> bool {
    let path = Path::new(program);
    if path.components().count() > 1 {
        return path.is_file();
    }
    on_path(program).is_some()
}

/// Where memlog's hooks are installed for the repository containing `dir`
/// (every agent's project, local and user settings), and whether each
/// agent runs them. Unreadable settings files are left out.
pub fn status(dir: &Path) -> Result<Vec<InstalledHooks>> {
    Ok(installed(workspace::open(dir)?.work_tree.as_deref()))
}

/// Where memlog's hooks are installed for every project: the agents' user
/// settings, which run outside any repository too.
pub fn user_status() -> Vec<InstalledHooks> {
    installed(None)
}

/// memlog's hooks in the agents' settings files of the project at
/// `work_tree` and of the user (the user's alone without a work tree).
fn installed(work_tree: Option<&Path>) -> Vec<InstalledHooks> {
    let mut found = Vec::new();
    for agent in AGENTS {
        let mut seen = Vec::new();
        let scopes: &[Scope] = match work_tree {
            Some(_) => &[Scope::Project, Scope::Local, Scope::User],
            None => &[Scope::User],
        };
        for &scope in scopes {
            let Ok(path) = agent.settings_file(scope, work_tree) else {
                continue;
            };
            if seen.contains(&path) {
                continue;
            }
            seen.push(path.clone());
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let Some(hooks) = agent.hooks_in(&text) else {
                continue;
            };
            let project = work_tree.filter(|_| scope != Scope::User);
            let (missing, present): (Vec<String>, Vec<String>) =
                hooks.programs.into_iter().partition(|p| !program_exists(p));
            let (elsewhere, here): (Vec<String>, Vec<String>) =
                present.into_iter().partition(|p| !runs_this_binary(p));
            let machine_paths = if scope == Scope::Project {
                let by_name = hook_program(scope).is_ok_and(|p| p.components().count() == 1);
                here.into_iter()
                    .filter(|p| by_name && Path::new(p).components().count() > 1)
                    .collect()
            } else {
                Vec::new()
            };
            let unknown_events = memlog_agents::settings::unknown_in(agent.hook_settings(), &text)
                .iter()
                .map(|u| {
                    format!(
                        "`{}` here is {}, which ignores this whole file (its hooks and every other setting in it): it names {}, known from {}; `memlog install {}` again leaves it out, or upgrade",
                        u.program,
                        u.version,
                        u.event,
                        u.since,
                        agent.name()
                    )
                })
                .collect();
            found.push(InstalledHooks {
                agent,
                scope,
                unknown_events,
                trust: agent.hook_trust(&path, project),
                path,
                hooks: hooks.hooks,
                missing,
                elsewhere,
                outdated: hooks.outdated,
                machine_paths,
            });
        }
    }
    found
}
