//! Work the hooks hand to another process, so that the agent never waits
//! for it: `memlog index` after a seal or when a prompt finds the index
//! behind, `memlog seal --idle` for orphaned journals, `memlog watch`.
//! Each runs detached from the hook's process group (the agent may kill
//! that group when the hook ends), its output discarded; catch-up work at
//! the lowest CPU priority, so that the prompts it serves are not slowed
//! by it on a busy machine.

use std::process::Stdio;

use memlog_store::Repo;

/// How much CPU a background process may claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Priority {
    /// As the hook had (a server whose answers a hook waits for).
    Normal,
    /// Niceness 19: catch-up work, which any interactive process comes
    /// before.
    Low,
}

/// Runs `memlog -C <repo> ARGS…` in the background, detached. Best
/// effort: a hook never fails for it.
pub fn spawn(repo: &Repo, args: &[&str], priority: Priority) {
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut command = std::process::Command::new(exe);
    command
        .arg("-C")
        .arg(&repo.common_dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    // Spawned without a `pre_exec` step, std starts it with posix_spawn
    // (vfork): the hook resumes as soon as the child has exec'd, without
    // copying the hook's page tables first. Lowered between fork and exec
    // instead, it waited for a child already at niceness 19 to reach exec:
    // 120 ms on a machine with a build running, far more under load.
    let Ok(child) = command.spawn() else { return };
    #[cfg(unix)]
    if priority == Priority::Low {
        // SAFETY: setpriority is a system call on a pid this process just
        // made; its failure only leaves the child's priority as it was.
        unsafe {
            libc::setpriority(libc::PRIO_PROCESS as _, child.id() as _, 19);
        }
    }
    #[cfg(not(unix))]
    let _ = (priority, child);
}
