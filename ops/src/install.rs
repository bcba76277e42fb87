//! Connecting memlog to a coding agent: memlog's hook commands merged into
//! the agent's JSON settings (which file, which events and in what form is
//! the agent's knowledge, [`memlog_agents::settings`]), and removed again.
//! Installing leaves the repository's index built ([`crate::index::after`]).

use std::path::{Path, PathBuf};

use memlog_agents::{Agent, Scope, settings};
use serde_json::{Value, json};

use crate::bail;
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
    /// The index of the repository, built (or brought up to date) after
    /// installing, so that the first prompt finds the memory there is.
    pub index: Option<Indexed>,
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
    let mut settings: Value = match std::fs::read_to_string(&path) {
        Ok(text) if !text.trim().is_empty() => serde_json::from_str(&text).context(
            format_args!("{} is not valid JSON; fix it first", path.display()),
        )?,
        Ok(_) => json!({}),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => json!({}),
        Err(e) => return Err(e).context(format_args!("reading {}", path.display())),
    };
    let Value::Object(root) = &mut settings else {
        bail!("{} is not a JSON object", path.display());
    };
    let exe = std::env::current_exe().context("locating the memlog binary")?;
    let hook_settings = agent.hook_settings();
    let removed = settings::apply(root, &exe, hook_settings, install);
    let text = serde_json::to_string_pretty(&settings)? + "\n";
    let events = if install {
        hook_settings.events.len()
    } else {
        0
    };
    if dry_run {
        return Ok(HooksInstalled {
            path,
            events,
            removed,
            dry_run: Some(text),
            index: None,
        });
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).context(format_args!("creating {}", parent.display()))?;
    }
    let tmp = path.with_extension("json.memlog-tmp");
    std::fs::write(&tmp, &text).context(format_args!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, &path).context(format_args!("writing {}", path.display()))?;
    let index = match workspace::open(dir) {
        Ok(repo) if install => {
            repo.ensure_dirs()?;
            crate::index::after(&repo, false)
        }
        _ => None,
    };
    Ok(HooksInstalled {
        path,
        events,
        removed,
        dry_run: None,
        index,
    })
}
