use std::path::Path;
use std::process::ExitCode;

use clap::Args;

use crate::stop::stop_signal;

/// Serve memory to agents over the Model Context Protocol (stdio).
///
/// Tools: memory_search, memory_get, memory_timeline, memory_remember,
/// memory_forget, memory_reinforce, memory_add_rule, memory_tasks,
/// memory_task_add, memory_task_update, memory_stats. Reads come from the
/// projections, refreshed before each call when the log moved on, so new
/// sessions show up without a restart. Notes and facts the agent remembers
/// go through the privacy filter into a journal of this server's own
/// session, sealed into one commit when the client closes the connection
/// (or later by `memlog seal --all`/`--idle` if the server was killed).
/// `memlog install mcp` prints the client configuration.
#[derive(Args)]
pub struct McpArgs {}

pub fn cmd_mcp(dir: &Path, _args: McpArgs) -> anyhow::Result<ExitCode> {
    memlog_mcp::serve(dir, stop_signal())?;
    Ok(ExitCode::SUCCESS)
}
