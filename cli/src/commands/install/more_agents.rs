//! `memlog install antigravity|cursor|copilot|opencode`: the agents whose
//! only choice is where (the project, or with --user the user's settings);
//! what each writes is said on its variant in `InstallTarget`.

use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use memlog_agents::{Agent, Scope};

use super::agent::hooks;

/// Where memlog's hooks go.
#[derive(Args)]
pub(super) struct AgentHooksArgs {
    /// The user's settings, for every project (where the agent has them).
    #[arg(long)]
    user: bool,

    /// Print the resulting file instead of writing it.
    #[arg(long)]
    dry_run: bool,
}

pub(super) fn agent_hooks(
    dir: &Path,
    agent: &'static dyn Agent,
    args: AgentHooksArgs,
    install: bool,
) -> anyhow::Result<ExitCode> {
    let scope = if args.user {
        Scope::User
    } else {
        Scope::Project
    };
    hooks(dir, agent, scope, install, args.dry_run)
}
