//! What `memlog install|uninstall <agent>` does for every agent: memlog's
//! hooks written into the agent's settings (`memlog_ops::install`), and
//! what was done said.

use std::path::Path;
use std::process::ExitCode;

use memlog_agents::{Agent, HookTrust, Scope};

/// Installs (or removes) `agent`'s hooks at `scope` and says what was done.
pub(super) fn hooks(
    dir: &Path,
    agent: &'static dyn Agent,
    scope: Scope,
    install: bool,
    dry_run: bool,
) -> anyhow::Result<ExitCode> {
    let done = memlog_ops::install::hooks(dir, agent, scope, install, dry_run)?;
    if let Some(text) = &done.dry_run {
        print!("{text}");
    } else if install {
        let note = match &done.trust {
            Some(trust) => trust_note(agent, trust),
            None => agent
                .install_note()
                .map(|n| format!("; {n}"))
                .unwrap_or_default(),
        };
        println!(
            "memlog hooks installed in {} ({} events){note}",
            done.path.display(),
            done.events
        );
        for left_out in &done.left_out {
            println!("  {left_out}");
        }
        print_comments(&done);
        crate::commands::index::print_indexed(done.index.as_ref());
    } else {
        println!(
            "removed {} memlog hook(s) from {}",
            done.removed,
            done.path.display()
        );
        print_comments(&done);
    }
    Ok(ExitCode::SUCCESS)
}

/// What was done with the settings file's comments, never silently.
fn print_comments(done: &memlog_ops::install::HooksInstalled) {
    use memlog_agents::settings::Comments;
    match (done.comments, &done.backup) {
        (Comments::None, _) => {}
        (Comments::Kept, _) => {
            println!("  its comments are kept: memlog rewrote only its \"hooks\"")
        }
        (Comments::Dropped, Some(backup)) => println!(
            "  comments memlog could not keep (inside its \"hooks\", or the whole file's when \
             it could not edit \"hooks\" alone) are dropped; the file as it was is in {}",
            backup.display()
        ),
        (Comments::Dropped, None) => {
            println!("  comments memlog could not keep (inside its \"hooks\") are dropped")
        }
    }
}

/// What an agent that asks trust first will do with memlog's hooks:
/// `; Codex CLI runs them` or why not and what to do.
pub(crate) fn trust_note(agent: &dyn Agent, trust: &HookTrust) -> String {
    if trust.trusted() {
        return format!("; {} runs them (trusted)", agent.title());
    }
    format!(
        "; {} will not run them until they are trusted (not yet: {}): {}",
        agent.title(),
        trust.untrusted.join(", "),
        trust.how
    )
}
