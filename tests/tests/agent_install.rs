//! `memlog install codex|gemini` and `memlog uninstall codex|gemini`: the
//! agents' hook files gain memlog's hooks once, keep everything else, and
//! lose only memlog's again. No agent CLI needed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use memlog_e2e::TestRepo;
use serde_json::{Value, json};

fn read(path: &std::path::Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The commands of every hook under `config.hooks`, by event.
fn commands(config: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (event, groups) in config["hooks"].as_object().into_iter().flatten() {
        for group in groups.as_array().unwrap() {
            for hook in group["hooks"].as_array().unwrap() {
                out.push((event.clone(), hook["command"].as_str().unwrap().to_string()));
            }
        }
    }
    out
}

fn check(agent: &str, file: &str, existing: Value, events: &[&str], extra: &str) {
    let repo = TestRepo::new();
    let path = repo.path().join(file);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, existing.to_string()).unwrap();

    repo.memlog(&["install", agent]).ok();
    repo.memlog(&["install", agent]).ok(); // again: replaces, does not duplicate
    let config = read(&path);
    let ours: Vec<(String, String)> = commands(&config)
        .into_iter()
        .filter(|(_, c)| c.contains(" hook --agent "))
        .collect();
    assert_eq!(ours.len(), events.len(), "{config:#}");
    for event in events {
        let command = &ours.iter().find(|(e, _)| e == event).unwrap().1;
        assert!(
            command.ends_with(&format!("hook --agent {agent} {event}{extra}")),
            "{command}"
        );
    }
    assert!(
        commands(&config).iter().any(|(_, c)| c == "./lint.sh"),
        "the other hook is kept: {config:#}"
    );
    for (key, value) in existing.as_object().unwrap() {
        if key != "hooks" {
            assert_eq!(&config[key], value, "{key} is kept");
        }
    }

    let out = repo.memlog(&["uninstall", agent]).ok().stdout();
    assert!(out.contains(&format!("removed {}", events.len())), "{out}");
    let config = read(&path);
    assert_eq!(
        commands(&config),
        [("SessionStart".to_string(), "./lint.sh".to_string())]
    );
}

#[test]
fn codex_hooks_json_keeps_other_hooks() {
    check(
        "codex",
        ".codex/hooks.json",
        json!({"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "./lint.sh"}]}]}}),
        &[
            "SessionStart",
            "UserPromptSubmit",
            "PreToolUse",
            "PostToolUse",
            "Stop",
            "SubagentStop",
            "PreCompact",
            "SessionEnd",
        ],
        "",
    );
}

#[test]
fn gemini_settings_keep_other_settings_and_hooks() {
    check(
        "gemini",
        ".gemini/settings.json",
        json!({
            "general": {"vimMode": true},
            "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "./lint.sh"}]}]}
        }),
        &[
            "SessionStart",
            "BeforeAgent",
            "AfterTool",
            "AfterAgent",
            "PreCompress",
            "SessionEnd",
        ],
        " 2>/dev/null || true",
    );
}

/// Field test 12a: Gemini CLI reads its `settings.json` with comments
/// (strip-json-comments), and `memlog install gemini` refused such a file
/// as "not valid JSON". It installs now, keeps the comments and says so;
/// comments it cannot keep are said to be dropped, with a backup.
#[cfg(unix)]
#[test]
fn gemini_settings_with_comments_are_read_and_keep_them() {
    use std::os::unix::fs::PermissionsExt;
    let repo = TestRepo::new();
    let path = repo.path().join(".gemini/settings.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mine = "{\n  // my model\n  \"model\": {\"name\": \"gemini-2.5-pro\"},\n  /* my MCP servers */\n  \"mcpServers\": {\"github\": {\"command\": \"gh-mcp\"}}\n}\n";
    std::fs::write(&path, mine).unwrap();
    let out = repo.memlog(&["install", "gemini"]).ok().stdout();
    assert!(out.contains("comments are kept"), "{out}");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("{\n  // my model\n"), "{text}");
    assert!(text.contains("/* my MCP servers */"), "{text}");
    // as Gemini CLI reads it: comments out, then JSON
    let plain: String = text
        .lines()
        .map(|l| {
            if l.trim_start().starts_with("//") {
                ""
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        .replace("/* my MCP servers */", "");
    let config: Value = serde_json::from_str(&plain).unwrap();
    assert_eq!(config["model"]["name"], "gemini-2.5-pro");
    assert_eq!(commands(&config).len(), 6, "{config:#}");
    let doctor = repo.memlog(&["doctor", "--json"]).json();
    assert!(doctor.to_string().contains("settings.json"), "{doctor}");
    repo.memlog(&["uninstall", "gemini"]).ok();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), mine);

    // a comment inside the hooks memlog rewrites: dropped, said, kept aside
    let inside = "{\n  \"hooks\": {\n    // the linter\n    \"SessionStart\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"./lint.sh\"}]}]\n  }\n}\n";
    std::fs::write(&path, inside).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = repo.memlog(&["install", "gemini"]).ok().stdout();
    assert!(out.contains("are dropped"), "{out}");
    let backup = path.with_file_name("settings.json.memlog-backup");
    assert!(out.contains(&backup.display().to_string()), "{out}");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), inside);
    let mode = std::fs::metadata(&backup).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert!(
        read(&path)["hooks"]["SessionStart"]
            .to_string()
            .contains("./lint.sh")
    );
}

#[test]
fn a_broken_hooks_file_is_named_and_left_alone() {
    let repo = TestRepo::new();
    let path = repo.path().join(".codex/hooks.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "{ not json").unwrap();
    let out = repo.memlog(&["install", "codex"]);
    assert_ne!(out.code(), Some(0));
    assert!(out.stderr().contains("hooks.json"), "{}", out.stderr());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ not json");
}

/// Field test 12a: install replaced a settings file by rename, so a file
/// linked from a dotfiles repository became a plain file (the dotfiles
/// never got the hooks) and a private `0600` file holding a token became
/// `0644`. The link's target is edited now, with its permissions kept, on
/// install and on uninstall; so is a read-only file's.
#[cfg(unix)]
#[test]
fn a_linked_or_private_settings_file_keeps_its_link_and_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let repo = TestRepo::new();
    let dotfiles = tempfile::tempdir().unwrap();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let set_mode = |p: &std::path::Path, m: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    };
    // Claude Code's settings: a link to a private file holding a token
    let claude_target = dotfiles.path().join("claude-settings.json");
    std::fs::write(&claude_target, r#"{"env": {"API_TOKEN": "t0k3n"}}"#).unwrap();
    set_mode(&claude_target, 0o600);
    let claude = repo.path().join(".claude/settings.json");
    std::fs::create_dir_all(claude.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&claude_target, &claude).unwrap();
    // Gemini CLI's: a relative link, through a second link
    let gemini_dir = repo.path().join(".gemini");
    std::fs::create_dir_all(&gemini_dir).unwrap();
    std::fs::write(
        gemini_dir.join("real.json"),
        r#"{"general": {"vimMode": true}}"#,
    )
    .unwrap();
    set_mode(&gemini_dir.join("real.json"), 0o640);
    std::os::unix::fs::symlink("real.json", gemini_dir.join("middle.json")).unwrap();
    std::os::unix::fs::symlink("middle.json", gemini_dir.join("settings.json")).unwrap();
    // Codex's: a read-only plain file
    let codex = repo.path().join(".codex/hooks.json");
    std::fs::create_dir_all(codex.parent().unwrap()).unwrap();
    std::fs::write(&codex, "{}").unwrap();
    set_mode(&codex, 0o444);

    for agent in ["claude", "gemini", "codex"] {
        repo.memlog(&["install", agent]).ok();
    }
    let holds_hooks =
        |p: &std::path::Path| std::fs::read_to_string(p).unwrap().contains("memlog hook");
    assert!(claude.symlink_metadata().unwrap().file_type().is_symlink());
    assert!(
        holds_hooks(&claude_target),
        "the dotfiles file has the hooks"
    );
    assert_eq!(read(&claude_target)["env"]["API_TOKEN"], "t0k3n");
    assert_eq!(mode(&claude_target), 0o600, "still private");
    let gemini = gemini_dir.join("settings.json");
    assert!(gemini.symlink_metadata().unwrap().file_type().is_symlink());
    assert!(
        gemini_dir
            .join("middle.json")
            .symlink_metadata()
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(holds_hooks(&gemini_dir.join("real.json")));
    assert_eq!(mode(&gemini_dir.join("real.json")), 0o640);
    assert!(holds_hooks(&codex));
    assert_eq!(mode(&codex), 0o444);
    let leftovers: Vec<_> = std::fs::read_dir(dotfiles.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "no temporary file left: {leftovers:?}");

    repo.memlog(&["uninstall", "claude"]).ok();
    assert!(claude.symlink_metadata().unwrap().file_type().is_symlink());
    assert!(!holds_hooks(&claude_target));
    assert_eq!(read(&claude_target)["env"]["API_TOKEN"], "t0k3n");
    assert_eq!(mode(&claude_target), 0o600);
}

#[test]
fn codex_session_end_gets_the_3_seconds_codex_allows() {
    let repo = TestRepo::new();
    repo.memlog(&["install", "codex"]).ok();
    let config = read(&repo.path().join(".codex/hooks.json"));
    for (event, groups) in config["hooks"].as_object().unwrap() {
        let timeout = &groups[0]["hooks"][0]["timeout"];
        let expected = if event == "SessionEnd" { 3 } else { 10 };
        assert_eq!(timeout, expected, "{event}: {config:#}");
    }
}

/// A binary named otherwise (a release's `memlog-<target>`, a copy) and at
/// a path with a quote in it: installing again from `memlog` replaces its
/// entries rather than adding a second set, and its commands run.
#[test]
fn installing_from_another_binary_name_replaces_its_hooks() {
    let repo = TestRepo::new();
    let dir = tempfile::tempdir().unwrap();
    let other = dir
        .path()
        .join("it's")
        .join("memlog-x86_64-unknown-linux-gnu");
    std::fs::create_dir_all(other.parent().unwrap()).unwrap();
    std::fs::copy(memlog_e2e::memlog_bin(), &other).unwrap();
    // A child another test thread forks while the copy is open for
    // writing holds it until that child execs: "text file busy" for a
    // moment, which is the test's own doing, not memlog's.
    let output = loop {
        match std::process::Command::new(&other)
            .current_dir(repo.path())
            .args(["install", "claude"])
            .output()
        {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            started => break started.expect("the copy starts"),
        }
    };
    let installed = memlog_e2e::Run { output }.ok();
    assert!(
        installed.stdout().contains("(9 events)"),
        "{}",
        installed.stdout()
    );
    let path = repo.path().join(".claude/settings.json");
    let first = commands(&read(&path));
    assert_eq!(first.len(), 9, "{first:#?}");
    // the quoted command runs that binary
    let (_, command) = &first[0];
    let version = std::process::Command::new("sh")
        .arg("-c")
        .arg(command.replace(" hook SessionStart", " --version"))
        .output()
        .unwrap();
    assert!(version.status.success(), "{command}");
    let status = repo.memlog(&["doctor", "--json"]).ok().json();
    assert!(status.to_string().contains("settings.json"), "{status}");
    repo.memlog(&["install", "claude"]).ok();
    let again = commands(&read(&path));
    assert_eq!(again.len(), 9, "{again:#?}");
    assert!(again.iter().all(|(_, c)| !c.contains("it's")), "{again:#?}");
    repo.memlog(&["uninstall", "claude"]).ok();
    assert!(!path.exists(), "the file memlog made is gone");
}

/// The project's settings are committed: they name memlog as a
/// teammate's machine finds it, on PATH, not by this machine's path (which
/// fails there on every hook); the local file keeps the absolute path.
#[test]
fn committed_settings_name_memlog_by_the_name_path_finds() {
    let repo = TestRepo::new();
    let bin = memlog_e2e::memlog_bin();
    let name = bin.file_name().unwrap().to_str().unwrap().to_string();
    let on_path = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(&bin, on_path.path().join(&name)).unwrap();
    let install = |path: &str, args: &[&str]| {
        memlog_e2e::run(
            std::process::Command::new(&bin)
                .current_dir(repo.path())
                .env("PATH", path)
                .args(args),
        )
        .ok();
    };
    let path = format!("{}:/usr/bin:/bin", on_path.path().display());
    install(&path, &["install", "claude"]);
    let committed = commands(&read(&repo.path().join(".claude/settings.json")));
    assert!(
        committed
            .iter()
            .all(|(event, c)| *c == format!("{name} hook {event}")),
        "{committed:#?}"
    );
    install(&path, &["install", "claude", "--local"]);
    let local = commands(&read(&repo.path().join(".claude/settings.local.json")));
    let absolute = bin.display().to_string();
    assert!(
        local.iter().all(|(_, c)| c.starts_with(&absolute)),
        "{local:#?}"
    );
    // another memlog first on PATH runs those hooks: doctor names it
    let older = tempfile::tempdir().unwrap();
    std::fs::write(older.path().join(&name), "#!/bin/sh\necho older memlog\n").unwrap();
    let status = memlog_e2e::run(
        std::process::Command::new(&bin)
            .current_dir(repo.path())
            .env("PATH", format!("{}:/usr/bin:/bin", older.path().display()))
            .args(["doctor", "--json"]),
    )
    .json();
    let claude = status["agent_hooks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["path"].as_str().unwrap_or("").ends_with("settings.json"))
        .cloned()
        .unwrap();
    assert_eq!(
        claude["other_programs"],
        serde_json::json!([name]),
        "{status:#}"
    );
    // where PATH finds no memlog, the path is the only way to run it
    install("/usr/bin:/bin", &["install", "claude"]);
    let committed = commands(&read(&repo.path().join(".claude/settings.json")));
    assert!(
        committed.iter().all(|(_, c)| c.starts_with(&absolute)),
        "{committed:#?}"
    );
}

/// Uninstalling an agent that was never installed writes no file.
#[test]
fn uninstalling_what_was_never_installed_writes_nothing() {
    let repo = TestRepo::new();
    for agent in [
        "claude",
        "codex",
        "gemini",
        "copilot",
        "cursor",
        "antigravity",
        "opencode",
    ] {
        repo.memlog(&["uninstall", agent]).ok();
    }
    let status = repo.git(&["status", "--short", "-uall"]).stdout();
    assert_eq!(status.trim(), "", "{status}");
}

/// A committed settings file keeps its order: installing adds memlog's
/// hooks after the user's keys, and uninstalling gives back the same text.
#[test]
fn settings_keep_their_users_order() {
    let repo = TestRepo::new();
    let path = repo.path().join(".claude/settings.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mine = "{\n  \"permissions\": {\n    \"deny\": [],\n    \"allow\": [\n      \"Bash(ls)\"\n    ]\n  },\n  \"env\": {\n    \"Z_LAST\": \"1\",\n    \"A_FIRST\": \"2\"\n  },\n  \"model\": \"x\"\n}\n";
    std::fs::write(&path, mine).unwrap();
    repo.memlog(&["install", "claude"]).ok();
    let installed = std::fs::read_to_string(&path).unwrap();
    assert!(
        installed.starts_with("{\n  \"permissions\": {\n    \"deny\": []"),
        "{installed}"
    );
    assert!(
        installed.find("\"model\"") < installed.find("\"hooks\""),
        "{installed}"
    );
    repo.memlog(&["uninstall", "claude"]).ok();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), mine);
}

/// A settings file committed from a teammate's machine runs a memlog that
/// is not on this one: `memlog doctor` says so and how to mend it (found
/// by a field test, where doctor counted the hooks and said nothing).
#[test]
fn doctor_names_a_hook_program_missing_from_this_machine() {
    let repo = TestRepo::new();
    repo.memlog(&["install", "claude"]).ok();
    let path = repo.path().join(".claude/settings.json");
    let mine = commands(&read(&path))[0]
        .1
        .split(' ')
        .next()
        .unwrap()
        .to_string();
    let theirs = "/home/alice/.cargo/bin/memlog";
    std::fs::write(
        &path,
        std::fs::read_to_string(&path)
            .unwrap()
            .replace(&mine, theirs),
    )
    .unwrap();
    let run = repo.memlog(&["doctor"]);
    assert_eq!(run.code(), Some(1), "hooks that cannot run: doctor fails");
    let doctor = run.stdout();
    assert!(
        doctor.contains(&format!("they run {theirs}, which is not on this machine"))
            && doctor.contains("`memlog install claude` again"),
        "{doctor}"
    );
    let json = repo.memlog(&["doctor", "--json"]).json();
    assert_eq!(
        json["agent_hooks"][0]["missing_programs"][0], theirs,
        "{json}"
    );
    assert_eq!(json["ok"], false, "{json}");
    repo.memlog(&["install", "claude"]).ok();
    let mended = repo.memlog(&["doctor", "--json"]).ok().json();
    assert_eq!(
        mended["agent_hooks"][0]["missing_programs"],
        serde_json::json!([])
    );
    assert_eq!(mended["ok"], true, "{mended}");
}

/// Hooks in the project's settings and in its local ones: the agent runs
/// both, and doctor says so (memlog records and injects once regardless,
/// see claude_code's real-payload tests).
#[test]
fn doctor_names_hooks_installed_twice() {
    let repo = TestRepo::new();
    repo.memlog(&["install", "claude"]).ok();
    let once = repo.memlog(&["doctor", "--json"]).ok().json();
    assert_eq!(
        once["hooks_installed_twice"],
        serde_json::json!([]),
        "{once}"
    );
    repo.memlog(&["install", "claude", "--local"]).ok();
    let doctor = repo.memlog(&["doctor"]).ok().stdout();
    assert!(
        doctor.contains("runs memlog's hooks from each of these files"),
        "{doctor}"
    );
    let json = repo.memlog(&["doctor", "--json"]).ok().json();
    assert_eq!(
        json["hooks_installed_twice"],
        serde_json::json!(["claude"]),
        "{json}"
    );
}

/// Field test 12a: doctor advised `memlog uninstall gemini --project` or
/// `--local`, which that command refuses. The commands it names now are
/// each agent's own, and each one runs and removes its file's hooks.
#[test]
fn doctors_advice_on_hooks_installed_twice_runs() {
    let repo = TestRepo::new();
    let home = tempfile::tempdir().unwrap();
    let memlog = |args: &[&str]| {
        memlog_e2e::run(
            memlog_e2e::memlog_command(repo.path())
                .env("HOME", home.path())
                .env("CODEX_HOME", home.path().join(".codex"))
                .args(args),
        )
    };
    for (agent, flags) in [
        ("gemini", &[][..]),
        ("gemini", &["--user"][..]),
        ("codex", &[][..]),
        ("codex", &["--user"][..]),
        ("claude", &["--local"][..]),
        ("claude", &["--user"][..]),
    ] {
        let mut args = vec!["install", agent];
        args.extend(flags);
        memlog(&args).ok();
    }
    // (doctor exits 1 here: no embedding model in this home)
    let doctor = memlog(&["doctor"]).stdout();
    for agent in ["gemini", "codex", "claude"] {
        let advice = doctor
            .lines()
            .find(|l| l.contains(&format!("{agent} runs memlog's hooks from each")))
            .unwrap_or_else(|| panic!("no advice for {agent}: {doctor}"));
        let commands: Vec<&str> = advice
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|c| c.starts_with("memlog uninstall"))
            .collect();
        assert_eq!(commands.len(), 2, "{advice}");
        for command in commands {
            let args: Vec<&str> = command.split_whitespace().skip(1).collect();
            let out = memlog(&args);
            assert_eq!(out.code(), Some(0), "{command}: {}", out.stderr());
        }
    }
    let after = memlog(&["doctor", "--json"]).json();
    assert_eq!(
        after["hooks_installed_twice"],
        serde_json::json!([]),
        "{after}"
    );
}

/// OpenCode's plugin is code memlog writes once: doctor lists it, and
/// says when an earlier memlog wrote it (an upgraded binary leaves the old
/// plugin in place, without the new one's fixes) until installing again.
#[test]
fn doctor_lists_opencodes_plugin_and_says_when_it_is_outdated() {
    let repo = TestRepo::new();
    repo.memlog(&["install", "opencode"]).ok();
    let plugin_of = |status: &Value| {
        status["agent_hooks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["agent"] == "opencode")
            .cloned()
            .unwrap_or_else(|| panic!("no plugin in {status:#}"))
    };
    let status = repo.memlog(&["doctor", "--json"]).ok().json();
    assert_eq!(plugin_of(&status)["outdated"], false, "{status:#}");
    let path = repo.path().join(".opencode/plugin/memlog.js");
    let earlier = std::fs::read_to_string(&path)
        .unwrap()
        .replace("SIDE_PROMPTS.some", "[].some");
    std::fs::write(&path, earlier).unwrap();
    let status = repo.memlog(&["doctor", "--json"]).ok().json();
    assert_eq!(plugin_of(&status)["outdated"], true, "{status:#}");
    let text = repo.memlog(&["doctor"]).ok().stdout();
    assert!(
        text.contains("`memlog install opencode` again updates it"),
        "{text}"
    );
    repo.memlog(&["install", "opencode"]).ok();
    let status = repo.memlog(&["doctor", "--json"]).ok().json();
    assert_eq!(plugin_of(&status)["outdated"], false, "{status:#}");
}

/// Each working tree reads its own project settings: hooks installed (not
/// committed) in the main tree do not run in a linked `git worktree`, and
/// doctor there says where they are and what to do, instead of "none
/// installed" (field test 6).
#[test]
fn doctor_in_a_linked_worktree_names_the_hooks_of_the_main_one() {
    let repo = TestRepo::new();
    let (_elsewhere, linked) = repo.linked_worktree("feature");
    repo.memlog(&["install", "claude"]).ok();
    let doctor = memlog_e2e::run(
        memlog_e2e::memlog_command(&linked)
            .arg("doctor")
            .arg("--json"),
    );
    let status = doctor.json();
    let other = &status["hooks_in_other_worktrees"];
    assert_eq!(other[0]["agent"], "claude", "{status:#}");
    let text = memlog_e2e::run(memlog_e2e::memlog_command(&linked).arg("doctor")).stdout();
    assert!(
        text.contains("none in this working tree") && text.contains("memlog install claude"),
        "{text}"
    );
}

/// Claude Code before 2.0.56 does not know the `PostToolUseFailure` hook
/// event, and ignores a settings file naming it whole: no memlog hook
/// ran, and a team's `env` and `permissions` in the same committed file
/// were dropped too (a field test, with Claude Code 1.0.98 and 2.0.15).
/// Installing leaves the event out for such a version and says so;
/// doctor names a file that version ignores.
#[test]
fn an_older_claude_code_gets_settings_it_can_read() {
    let repo = TestRepo::new();
    let bin = tempfile::tempdir().unwrap();
    let claude = bin.path().join("claude");
    let says = |version: &str| {
        std::fs::write(
            &claude,
            format!(
                "#!/bin/sh\necho asked >> '{}'\necho '{version} (Claude Code)'\n",
                bin.path().join("asked").display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&claude, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    };
    let path = format!("{}:/usr/bin:/bin", bin.path().display());
    let memlog = |args: &[&str]| {
        memlog_e2e::run(
            memlog_e2e::memlog_command(repo.path())
                .env("PATH", &path)
                .args(args),
        )
    };
    let settings = repo.path().join(".claude/settings.json");
    let events = || -> Vec<String> {
        read(&settings)["hooks"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    };
    says("2.0.15");
    let out = memlog(&["install", "claude"]).ok();
    assert!(
        !events().contains(&"PostToolUseFailure".to_string()),
        "{:?}",
        events()
    );
    assert_eq!(events().len(), 8, "{:?}", events());
    assert!(
        out.stdout().contains("PostToolUseFailure left out") && out.stdout().contains("2.0.15"),
        "{}",
        out.stdout()
    );
    assert_eq!(memlog(&["doctor"]).code(), Some(0));
    // a current version gets every event
    says("2.1.328");
    memlog(&["install", "claude"]).ok();
    assert!(
        events().contains(&"PostToolUseFailure".to_string()),
        "{:?}",
        events()
    );
    // the file is committed, and a teammate's Claude Code is older
    says("2.0.15");
    let doctor = memlog(&["doctor", "--json"]);
    assert_eq!(doctor.code(), Some(1), "{}", doctor.stdout());
    let status = doctor.json();
    let unknown = status["agent_hooks"][0]["unknown_events"].to_string();
    assert!(
        unknown.contains("2.0.15") && unknown.contains("PostToolUseFailure"),
        "{status:#}"
    );
    // the version is asked once however many settings files hold the hook
    // (each ask starts the agent's program)
    std::fs::copy(&settings, repo.path().join(".claude/settings.local.json")).unwrap();
    let asked = bin.path().join("asked");
    std::fs::remove_file(&asked).unwrap();
    assert_eq!(memlog(&["doctor"]).code(), Some(1));
    let asks = std::fs::read_to_string(&asked).unwrap().lines().count();
    assert_eq!(asks, 1, "`claude --version` ran {asks} times");
}

/// User-level hooks run in every folder, also outside any repository,
/// where memlog records nothing: the SessionStart hook says so in the
/// user's hooks log, and doctor run there names the hooks and that line
/// (it said only "not inside a git repository", and nothing was logged).
#[test]
fn outside_a_repository_doctor_says_the_users_hooks_record_nothing_there() {
    let home = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let memlog = |args: &[&str], stdin: Option<&str>| {
        let mut cmd = memlog_e2e::memlog_command(scratch.path());
        cmd.env("HOME", home.path())
            .env("MEMLOG_HOME", home.path().join(".cache/memlog"))
            .args(args);
        match stdin {
            Some(input) => memlog_e2e::run_stdin(&mut cmd, input),
            None => memlog_e2e::run(&mut cmd),
        }
    };
    memlog(&["install", "claude", "--user"], None).ok();
    let payload = serde_json::json!({"session_id": "s1", "hook_event_name": "SessionStart",
        "source": "startup", "cwd": scratch.path()});
    let hook = memlog(&["hook", "SessionStart"], Some(&payload.to_string()));
    assert_eq!(hook.code(), Some(0), "{}", hook.stderr());
    let doctor = memlog(&["doctor", "--json"], None);
    assert_eq!(doctor.code(), Some(1));
    let status = doctor.json();
    assert_eq!(status["agent_hooks"][0]["agent"], "claude", "{status:#}");
    let problem = status["problem"].as_str().unwrap_or_default();
    assert!(problem.contains("record nothing"), "{status:#}");
    let logged = status["last_logged"].as_str().unwrap_or_default();
    assert!(
        logged.contains("not recording") && logged.contains("not inside a git repository"),
        "{status:#}"
    );
    // a dotfiles repository in the home folder takes every such session:
    // doctor says so
    memlog_e2e::run(memlog_e2e::git_command(home.path()).args(["init", "-q"])).ok();
    let status = memlog_e2e::run(
        memlog_e2e::memlog_command(home.path())
            .env("HOME", home.path())
            .env("MEMLOG_HOME", home.path().join(".cache/memlog"))
            .args(["doctor", "--json"]),
    )
    .json();
    assert_eq!(status["home_repository"], true, "{status:#}");
}

/// An earlier memlog wrote this machine's path of memlog into the project's
/// committed settings, and an upgrade keeps the file as it was: doctor
/// says so, where installing again would name `memlog` (field test 9b: a
/// teammate's clone has no such path, and only the teammate was told).
#[test]
fn doctor_names_this_machines_path_in_the_committed_settings() {
    let repo = TestRepo::new();
    let bin = memlog_e2e::memlog_bin();
    let bin_dir = bin.parent().unwrap().display().to_string();
    let memlog = |path: &str, args: &[&str]| {
        memlog_e2e::run(
            memlog_e2e::memlog_command(repo.path())
                .env("PATH", path)
                .args(args),
        )
    };
    // memlog not on PATH: the hooks name its path
    memlog("/usr/bin:/bin", &["install", "claude"]).ok();
    let settings = std::fs::read_to_string(repo.path().join(".claude/settings.json")).unwrap();
    assert!(settings.contains(&bin.display().to_string()), "{settings}");
    // now memlog is found by name, as after a package upgrade
    let on_path = format!("{bin_dir}:/usr/bin:/bin");
    let doctor = memlog(&on_path, &["doctor", "--json"]).json();
    let paths = doctor["agent_hooks"][0]["machine_paths"].to_string();
    assert!(paths.contains(&bin.display().to_string()), "{doctor:#}");
    let text = memlog(&on_path, &["doctor"]).stdout();
    assert!(text.contains("this machine's path"), "{text}");
    // installing again names memlog by name, and doctor is content
    memlog(&on_path, &["install", "claude"]).ok();
    let doctor = memlog(&on_path, &["doctor", "--json"]).json();
    assert_eq!(
        doctor["agent_hooks"][0]["machine_paths"],
        json!([]),
        "{doctor:#}"
    );
}
