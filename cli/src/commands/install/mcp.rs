//! `memlog install mcp`: configuration for MCP clients to start
//! `memlog mcp` for this repository.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;
use serde_json::{Map, Value, json};

use memlog_ops::workspace;

/// MCP clients: start `memlog mcp` for this repository.
///
/// Prints the Claude Code project configuration (`.mcp.json` at the root of
/// the working tree) and the Claude Desktop entry
/// (`claude_desktop_config.json`, under `mcpServers`). `.mcp.json` is
/// committed: it starts `memlog mcp` by name (this binary's path when
/// `memlog` on PATH is another program), which serves the clone the agent
/// runs in. The Desktop entry starts this binary by its absolute path with
/// `-C <repository>`. With --write, the `memlog` server is added to
/// `.mcp.json` (other servers in it are kept); the Desktop entry is only
/// printed, since that file is the user's own.
#[derive(Args)]
pub struct InstallMcpArgs {
    /// Write the `memlog` entry into `.mcp.json` in the repository root.
    #[arg(long)]
    write: bool,

    /// Name of the server entry.
    #[arg(long, default_value = "memlog")]
    name: String,
}

pub fn install(dir: &Path, args: InstallMcpArgs) -> anyhow::Result<ExitCode> {
    let repo = workspace::open(dir)?;
    let Some(root) = repo.work_tree.clone() else {
        bail!("this repository has no working tree: run `memlog install mcp` in a checkout");
    };
    let exe = std::env::current_exe().context("finding the memlog binary")?;
    let exe = std::fs::canonicalize(&exe).unwrap_or(exe);
    let desktop = server_entry(&exe, Some(&root));
    let entry = server_entry(&memlog_ops::install::project_program()?, None);
    let project_file = root.join(".mcp.json");

    if args.write {
        let merged = merge_server(&project_file, &args.name, &entry)?;
        write_atomically(&project_file, &merged)?;
        println!(
            "wrote the {:?} server to {}",
            args.name,
            project_file.display()
        );
    } else {
        println!(
            "# Claude Code: {} (or run `memlog install mcp --write`)",
            project_file.display()
        );
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({ "mcpServers": { &args.name: entry } }))?
        );
    }
    println!();
    println!("# Claude Desktop: add this under \"mcpServers\" in claude_desktop_config.json");
    println!(
        "# (macOS: ~/Library/Application Support/Claude/, Windows: %APPDATA%\\Claude\\, Linux: ~/.config/Claude/)"
    );
    println!(
        "{}",
        serde_json::to_string_pretty(&json!({ "mcpServers": { &args.name: desktop } }))?
    );
    Ok(ExitCode::SUCCESS)
}

/// `{"command": <memlog>, "args": ["-C", <repository>, "mcp"]}`, without
/// `-C` for no repository (the server's working directory is the project).
fn server_entry(program: &Path, root: Option<&Path>) -> Value {
    let mut args = Vec::new();
    if let Some(root) = root {
        args.extend(["-C".to_string(), root.to_string_lossy().into_owned()]);
    }
    args.push("mcp".to_string());
    json!({ "command": program.to_string_lossy(), "args": args })
}

/// The content of `file` with `mcpServers.<name>` set to `entry`, every
/// other key and server kept. A file that is not a JSON object is an error
/// rather than something to overwrite.
fn merge_server(file: &Path, name: &str, entry: &Value) -> anyhow::Result<Value> {
    let mut config = match std::fs::read_to_string(file) {
        Ok(text) if text.trim().is_empty() => Map::new(),
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(m)) => m,
            Ok(_) => bail!("{} is not a JSON object; fix it first", file.display()),
            Err(e) => bail!("{} is not valid JSON ({e}); fix it first", file.display()),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Map::new(),
        Err(e) => return Err(e).with_context(|| format!("reading {}", file.display())),
    };
    let servers = config
        .entry("mcpServers")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(servers) = servers else {
        bail!(
            "{}: \"mcpServers\" is not a JSON object; fix it first",
            file.display()
        );
    };
    servers.insert(name.to_string(), entry.clone());
    Ok(Value::Object(config))
}

/// Writes pretty JSON as a settings file is written
/// ([`memlog_ops::install::write_settings_file`]: atomically, through a
/// link to its target, keeping the file's permissions).
fn write_atomically(file: &Path, value: &Value) -> anyhow::Result<()> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    memlog_ops::install::write_settings_file(file, &text)?;
    Ok(())
}
