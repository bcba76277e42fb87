use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use memlog_indexer::Projections;
use serde_json::json;

use memlog_ops::workspace;

use crate::output;

/// Check memlog's setup: the index, semantic search and the agents' hooks.
///
/// Says whether the projections exist and are up to date, and whether
/// semantic search is on: where the embedding model and ONNX Runtime are
/// expected (`.memlog.yaml`'s `embedding` section, else $MEMLOG_HOME or
/// ~/.cache/memlog), which files are missing and how to install them, and
/// how many events have vectors. Without the model memlog works on full
/// text and the graph alone. Last, the path a UserPromptSubmit hook would
/// take now: warm (a running `memlog watch` ranks with the prompt's own
/// embedding) or local (the hook ranks alone, without loading a model).
/// And where memlog's hooks are installed, for each agent, and whether the
/// agent runs them: Codex CLI skips hooks the user has not trusted (in
/// `/hooks`), without a word; doctor names those and says how to trust
/// them.
///
/// Last, the memlog server of the project's `.mcp.json`, when it names
/// another clone or a program not on this machine, and the hooks that
/// failed in the last 7 days (hooks.log): what they recorded is missing.
///
/// Exits 1 when something it found keeps memory from working: hooks that
/// run a program not on this machine, hooks the agent does not trust, a
/// damaged index, an MCP server of another clone or of no program.
#[derive(Args)]
pub struct DoctorArgs {
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn cmd_doctor(dir: &Path, args: DoctorArgs) -> anyhow::Result<ExitCode> {
    let repo = match workspace::open(dir) {
        Ok(repo) => repo,
        Err(memlog_ops::Error::Store(e @ memlog_store::Error::NotAGitRepo { .. })) => {
            return outside_a_repository(&e, &args);
        }
        Err(e) => return Err(e.into()),
    };
    let mut damaged = false;
    let mut read_only = None;
    let index = match Projections::open(&repo) {
        Ok(p) => {
            if p.is_fresh(&repo)? {
                "up to date".to_string()
            } else {
                "behind the log (read commands and `memlog index` update it)".to_string()
            }
        }
        Err(memlog_indexer::Error::NotBuilt(_)) => {
            "not built yet; `memlog index` builds it (so do `memlog install` and `memlog import`), and hooks read the log directly meanwhile".to_string()
        }
        Err(memlog_indexer::Error::Outdated { .. }) => {
            "made by another version of memlog; the next `memlog index` (or read command) rebuilds it, and hooks read the log directly meanwhile".to_string()
        }
        Err(e) => match unwritable(&repo) {
            // a read-only mount, another user's store: nothing is broken
            Some(why) => {
                let line = format!(
                    "cannot be opened here ({why}): commands and hooks read the log directly, \
                     and nothing can be recorded here"
                );
                read_only = Some(why);
                line
            }
            // another user's file, in a repository several users share
            None if matches!(e, memlog_indexer::Error::NotPermitted { .. }) => {
                format!("cannot be opened here ({e}): commands and hooks read the log directly")
            }
            None => {
                damaged = true;
                format!("damaged ({e}); `memlog rebuild` makes it again")
            }
        },
    };
    let semantic = memlog_ops::semantic::status(&repo);
    let vectors_model = semantic["model"]
        .as_str()
        .filter(|_| semantic["on"].as_bool() == Some(true));
    let (path, ranking) = memlog_ops::warm::hook_path(&repo, vectors_model);
    let hooks = memlog_ops::install::status(dir)?;
    // a dotfiles repository in $HOME takes in whatever is started below it
    let home_repository = repo.work_tree.clone().filter(|tree| {
        std::env::home_dir()
            .and_then(|h| std::fs::canonicalize(h).ok())
            .is_some_and(|h| *tree == h)
    });
    let checked_out = memlog_store::log::Log::new(&repo).checked_out();
    let elsewhere = hooks_in_other_worktrees(&repo, &hooks);
    let mcp = repo
        .work_tree
        .as_deref()
        .map(memlog_ops::install::mcp_config_problems)
        .unwrap_or_default();
    let (failures, last_failure) = memlog_ops::hook::recent_failures(&repo.layout(), 7);
    let broken = damaged
        || checked_out.is_some()
        || mcp.iter().any(|(_, breaks)| *breaks)
        || hooks.iter().any(|h| {
            !h.missing.is_empty()
                || !h.unknown_events.is_empty()
                || h.trust.as_ref().is_some_and(|t| !t.trusted())
        });
    let exit = if broken {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    };
    // the log here, or where a fresh clone's memory waits
    let waiting: Vec<String> = memlog_store::remote::unmerged_tracking_refs(&repo)?
        .into_iter()
        .map(|(remote, tracking)| {
            format!("{remote} has memory ({tracking}): `memlog sync {remote}` brings it")
        })
        .collect();
    let log = match (
        memlog_store::log::Log::new(&repo).tip()?,
        waiting.is_empty(),
    ) {
        (Some(tip), true) => format!("{} at {}", repo.ref_name(), &tip.to_string()[..12]),
        (Some(tip), false) => format!(
            "{} at {}; {}",
            repo.ref_name(),
            &tip.to_string()[..12],
            waiting.join("; ")
        ),
        (None, true) => format!(
            "{} not written yet (the first session's end writes it)",
            repo.ref_name()
        ),
        (None, false) => format!("{} not here yet; {}", repo.ref_name(), waiting.join("; ")),
    };
    let log = match &checked_out {
        Some(tree) => format!(
            "{log}; checked out in {}: nothing is sealed until that working tree switches to \
             another branch (`git -C {} switch --detach`)",
            tree.display(),
            tree.display()
        ),
        None => log,
    };
    if args.json {
        let twice = twice_installed(&hooks);
        let hooks: Vec<_> = hooks
            .iter()
            .map(|h| {
                let mut entry = json!({
                    "agent": h.agent.name(),
                    "path": lossy(&h.path),
                    "hooks": h.hooks,
                    "missing_programs": h.missing,
                    "other_programs": h.elsewhere,
                    "outdated": h.outdated,
                    "machine_paths": h.machine_paths,
                    "unknown_events": h.unknown_events,
                });
                if let Some(t) = &h.trust {
                    entry["trusted"] = json!(t.trusted());
                    entry["untrusted"] = json!(t.untrusted);
                    entry["how"] = json!(t.how);
                    entry["trust_store"] = json!(lossy(&t.store));
                    entry["trust_entries"] = t
                        .entries
                        .iter()
                        .map(|(key, value)| json!({"key": key, "value": value}))
                        .collect();
                }
                entry
            })
            .collect();
        output::print_json(&json!({
            "repository": repo.work_tree.as_deref().map(lossy),
            "log": log,
            "index": index,
            "semantic": semantic,
            "hook_path": {"path": path, "ranking": ranking},
            "agent_hooks": hooks,
            "hooks_installed_twice": twice,
            "hooks_in_other_worktrees": elsewhere
                .iter()
                .map(|(tree, h)| json!({"worktree": lossy(tree), "agent": h.agent.name(), "path": lossy(&h.path)}))
                .collect::<Vec<_>>(),
            "home_repository": home_repository.is_some(),
            "mcp_problems": mcp.iter().map(|(line, _)| line).collect::<Vec<_>>(),
            "hook_failures": {"last_7_days": failures, "last": last_failure},
            "ok": !broken,
        }))?;
        return Ok(exit);
    }
    if let Some(home) = &home_repository {
        println!(
            "repository {}: your home folder: every session started under it (a scratch \
             folder, a download) is recorded into this repository's memory, and `memlog sync` \
             shares it with its remote",
            home.display()
        );
    }
    println!("log        {log}");
    println!("index      {index}");
    match &read_only {
        // `memlog index`, which the status would advise, cannot run here
        Some(why) => println!("vectors    not used here ({why}): full-text search only"),
        None => println!(
            "vectors    {}",
            memlog_ops::semantic::status_line(&semantic)
        ),
    }
    println!(
        "model      {} ({})",
        semantic["model_dir"].as_str().unwrap_or(""),
        if semantic["model_installed"].as_bool() == Some(true) {
            "present"
        } else {
            "missing"
        }
    );
    println!("runtime    {}", semantic["runtime"].as_str().unwrap_or(""));
    println!("cache      {}", semantic["cache"].as_str().unwrap_or(""));
    println!("hook path  {path}: {ranking}");
    if hooks.is_empty() && elsewhere.is_empty() {
        println!("hooks      none installed (`memlog install --help` lists the agents)");
    }
    for (tree, h) in &elsewhere {
        println!(
            "hooks      {}: none in this working tree, but {} has them in {}: each working \
             tree reads its own; commit that file, or run `memlog install {}` here",
            h.agent.name(),
            tree.display(),
            h.path.display(),
            h.agent.name()
        );
    }
    for h in &hooks {
        let trust = h
            .trust
            .as_ref()
            .map(|t| super::install::agent::trust_note(h.agent, t))
            .unwrap_or_default();
        println!(
            "hooks      {}: {} in {}{trust}",
            h.agent.name(),
            h.hooks,
            h.path.display()
        );
        for program in &h.missing {
            println!(
                "           they run {program}, which is not on this machine: the agent's \
                 hooks fail; `memlog install {}` again points them at this memlog",
                h.agent.name()
            );
        }
        for program in &h.elsewhere {
            println!(
                "           they run {program}, another memlog than this one ({}): what they \
                 record and inject is that one's doing; `memlog install {}` again points them \
                 at this memlog",
                std::env::current_exe()
                    .map(|e| e.display().to_string())
                    .unwrap_or_default(),
                h.agent.name()
            );
        }
        for program in &h.machine_paths {
            println!(
                "           they run {program}, this machine's path, in a file the project \
                 commits: a teammate's clone has no such path; `memlog install {}` again names \
                 `memlog` instead",
                h.agent.name()
            );
        }
        if h.outdated {
            println!(
                "           written by another version of memlog, without this one's fixes; \
                 `memlog install {}` again updates it",
                h.agent.name()
            );
        }
        for unknown in &h.unknown_events {
            println!("           {unknown}");
        }
    }
    for (line, _) in &mcp {
        println!("mcp        {line}");
    }
    if let Some(last) = &last_failure {
        println!(
            "hooks      failed {failures} time(s) in the last 7 days, last: {last}; what those \
             hooks recorded is not in memory: `memlog import <agent>` brings back what the \
             agent's session files hold ({})",
            repo.layout().hooks_log().display()
        );
    }
    // Claude Code reads a project's settings only where it is started:
    // doctor run from a subfolder is where the user would start it too
    let here = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let root = repo
        .work_tree
        .as_deref()
        .map(|w| std::fs::canonicalize(w).unwrap_or_else(|_| w.to_path_buf()));
    let claude_here_only = hooks.iter().any(|h| h.agent.name() == "claude")
        && hooks
            .iter()
            .filter(|h| h.agent.name() == "claude")
            .all(|h| h.scope != memlog_agents::Scope::User);
    if let Some(root) = root.filter(|r| claude_here_only && *r != here) {
        println!(
            "           Claude Code reads these settings only when started at {}: started in \
             this folder it runs no memlog hook (`memlog install claude --user` covers every folder)",
            root.display()
        );
    }
    for agent in twice_installed(&hooks) {
        let removals: Vec<String> = hooks
            .iter()
            .filter(|h| h.agent.name() == agent)
            .map(|h| {
                format!(
                    "`{}` ({})",
                    super::install::uninstall_command(agent, h.scope),
                    h.path.display()
                )
            })
            .collect();
        println!(
            "           {agent} runs memlog's hooks from each of these files: every prompt and \
             tool call reaches memlog twice (recorded and injected once, at twice the cost); \
             keep one, and remove the others: {}",
            removals.join(", ")
        );
    }
    Ok(exit)
}

/// Doctor where there is no repository: user-level hooks run here too,
/// and record nothing (a session started in a folder outside git went
/// unrecorded without a word). Exits 1: nothing is remembered here.
fn outside_a_repository(
    not_a_repo: &memlog_store::Error,
    args: &DoctorArgs,
) -> anyhow::Result<ExitCode> {
    let hooks = memlog_ops::install::user_status();
    let log = memlog_ops::hook::user_log();
    let last = std::fs::read_to_string(&log)
        .ok()
        .and_then(|text| text.lines().last().map(str::to_string));
    let recorded = if hooks.is_empty() {
        "no memlog hook runs here"
    } else {
        "the agents' user-level hooks below run here, and record nothing"
    };
    if args.json {
        let hooks: Vec<_> = hooks
            .iter()
            .map(|h| json!({"agent": h.agent.name(), "path": lossy(&h.path), "hooks": h.hooks}))
            .collect();
        output::print_json(&json!({
            "repository": null,
            "problem": format!("{not_a_repo}; {recorded}"),
            "agent_hooks": hooks,
            "hooks_log": log,
            "last_logged": last,
            "ok": false,
        }))?;
        return Ok(ExitCode::FAILURE);
    }
    println!("repository none: {not_a_repo}; {recorded}");
    for h in &hooks {
        println!(
            "hooks      {}: {} in {}",
            h.agent.name(),
            h.hooks,
            h.path.display()
        );
    }
    if let Some(last) = last {
        println!("logged     {last} ({})", log.display());
    }
    Ok(ExitCode::FAILURE)
}

/// The agents whose hooks are in more than one settings file: the agent
/// runs every one of them.
fn twice_installed(hooks: &[memlog_ops::install::InstalledHooks]) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = hooks.iter().map(|h| h.agent.name()).collect();
    names.sort_unstable();
    let mut twice: Vec<&'static str> = names
        .windows(2)
        .filter(|w| w[0] == w[1])
        .map(|w| w[0])
        .collect();
    twice.dedup();
    twice
}

/// The project hooks other working trees of the repository have for agents
/// that have none here: a tree reads its own (uncommitted) settings file,
/// so a session started in a linked `git worktree` recorded nothing
/// (field test 6).
fn hooks_in_other_worktrees(
    repo: &memlog_store::Repo,
    here: &[memlog_ops::install::InstalledHooks],
) -> Vec<(std::path::PathBuf, memlog_ops::install::InstalledHooks)> {
    let this = repo
        .work_tree
        .as_deref()
        .and_then(|t| std::fs::canonicalize(t).ok());
    let mut found = Vec::new();
    for (tree, _) in repo.worktrees() {
        if std::fs::canonicalize(&tree).ok() == this {
            continue;
        }
        let Ok(theirs) = memlog_ops::install::status(&tree) else {
            continue;
        };
        for h in theirs {
            let project = h.scope != memlog_agents::Scope::User;
            let missing_here = !here.iter().any(|m| m.agent.name() == h.agent.name());
            if project && missing_here {
                found.push((tree.clone(), h));
            }
        }
    }
    found
}

/// Why memlog's folder cannot be written here, if it cannot: an index that
/// does not open there is not damaged.
fn unwritable(repo: &memlog_store::Repo) -> Option<String> {
    let dir = repo.layout().dir().to_path_buf();
    let probe = dir.join(format!(".doctor-{}", std::process::id()));
    match std::fs::File::create(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            None
        }
        Err(e) if e.kind() == std::io::ErrorKind::ReadOnlyFilesystem => {
            Some(format!("{} is on a read-only file system", dir.display()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            Some(format!("{} is not writable by this user", dir.display()))
        }
        Err(_) => None,
    }
}

/// A path for a JSON document: `json!` panics on one that is not UTF-8 (a
/// folder named in another encoding).
fn lossy(path: &std::path::Path) -> String {
    path.to_string_lossy().into_owned()
}
