//! Connecting memlog to a coding agent: memlog's hook commands merged into
//! the agent's settings (which file, which events and in what form is the
//! agent's knowledge, [`Agent::edit_settings`]), and removed again.

use std::path::{Path, PathBuf};

use memlog_agents::{Agent, Scope};

use crate::error::{Context, Result};
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
}

/// Installs `agent`'s memlog hooks at `scope` (or with `install` false only
/// removes them), keeping everything else in its settings file; memlog's
/// earlier entries are always replaced. The project scopes are in the
/// working tree of the repository containing `dir`. The file is replaced
/// atomically; with `dry_run` it is only returned.
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
    let exe = std::env::current_exe().context("locating the memlog binary")?;
    let edit = agent.edit_settings(&path, current.as_deref(), &exe, install)?;
    if dry_run {
        return Ok(HooksInstalled {
            path,
            events: edit.events,
            removed: edit.removed,
            dry_run: Some(edit.text.unwrap_or_default()),
        });
    }
    match &edit.text {
        Some(text) => {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .context(format_args!("creating {}", parent.display()))?;
            }
            let mut tmp = path.clone().into_os_string();
            tmp.push(".memlog-tmp");
            let tmp = PathBuf::from(tmp);
            std::fs::write(&tmp, text).context(format_args!("writing {}", tmp.display()))?;
            std::fs::rename(&tmp, &path).context(format_args!("writing {}", path.display()))?;
        }
        None if current.is_some() => {
            std::fs::remove_file(&path).context(format_args!("removing {}", path.display()))?;
        }
        None => {}
    }
    Ok(HooksInstalled {
        path,
        events: edit.events,
        removed: edit.removed,
        dry_run: None,
    })
}
