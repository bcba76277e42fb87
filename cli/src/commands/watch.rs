use std::cell::RefCell;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use memlog_watcher::IndexRun;
use serde::Serialize;

use memlog_ops::workspace;

/// Keep the search projections fresh while it runs.
///
/// Watches the memlog ref (seals, `git fetch`/`pull`, `git gc` packing
/// refs) and the journals of live sessions, and indexes what is new once a
/// burst of changes has settled (about 150 ms after the last change, at
/// most a second after the first). Prints one line per index run. Costs no
/// CPU while nothing changes. Runs until interrupted or killed. A failed
/// run is reported on stderr and retried.
///
/// While it runs it also answers Claude Code hooks from its open indexes
/// over a local socket (`.git/memlog/warm.sock`): the warm path, which spares
/// each hook opening the indexes itself.
///
/// One runs per repository (`.git/memlog/watch.lock` holds its pid): a
/// second one started by hand is refused with that pid, one started by
/// SessionStart leaves without a word.
#[derive(Args)]
pub struct WatchArgs {
    /// Index once, bring the vectors up to date (as `memlog index` does)
    /// and exit (for scripts).
    #[arg(long)]
    once: bool,

    /// Print one JSON object per index run (JSON lines).
    #[arg(long)]
    json: bool,

    /// Exit after this many minutes without a hook request or an index run
    /// (how SessionStart starts one: `hooks.warm_watcher_idle_minutes`).
    #[arg(long, value_name = "MINUTES")]
    idle_exit: Option<u64>,

    /// Let the embedding model go after this many seconds without a use
    /// (it holds about 100 MB), and load it again when next needed; hooks
    /// meanwhile rank as they do without a watcher.
    #[arg(long, value_name = "SECONDS", default_value_t = memlog_watcher::model::MODEL_IDLE.as_secs())]
    model_idle: u64,
}

/// One index run as printed by `--json`.
#[derive(Serialize)]
struct RunLine<'a> {
    ts: String,
    took_ms: f64,
    changes: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    report: Option<&'a memlog_indexer::IndexReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    vectors: Option<&'a memlog_indexer::vectors::CatchUpReport>,
}

pub fn cmd_watch(dir: &Path, args: WatchArgs) -> anyhow::Result<ExitCode> {
    // Fails early, with the usual message, outside a git repository.
    workspace::open_for_writing(dir)?;
    if args.once {
        let run = memlog_watcher::index_once(dir);
        let vectors = match &run.outcome {
            Ok(_) => {
                memlog_ops::semantic::catch_up_vectors(&workspace::open(dir)?, None, args.json)?
            }
            Err(_) => None,
        };
        print_run(&run, vectors.as_ref(), args.json)?;
        return Ok(if run.outcome.is_ok() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        });
    }
    let failure = RefCell::new(None);
    memlog_watcher::daemon::run(
        dir,
        memlog_watcher::daemon::IdleLimits {
            exit: args
                .idle_exit
                .map(|m| std::time::Duration::from_secs(m * 60)),
            model: std::time::Duration::from_secs(args.model_idle),
        },
        |watcher| {
            if !args.json {
                let dirs: Vec<String> = watcher
                    .watched_dirs()
                    .map(|d| d.display().to_string())
                    .collect();
                eprintln!("watching {}", dirs.join(", "));
            }
        },
        || failure.borrow().is_some(),
        |run| {
            if let Err(e) = print_run(run, None, args.json) {
                *failure.borrow_mut() = Some(e);
            }
        },
    )?;
    match failure.into_inner() {
        // stdout closed (`memlog watch | head`): nobody is listening
        Some(e) => Err(e),
        None => Ok(ExitCode::SUCCESS),
    }
}

fn print_run(
    run: &IndexRun,
    vectors: Option<&memlog_indexer::vectors::CatchUpReport>,
    json: bool,
) -> anyhow::Result<()> {
    let ts = memlog_format::time::now();
    let took_ms = (run.took.as_secs_f64() * 10_000.0).round() / 10.0;
    if let Err(e) = &run.outcome {
        // Errors go to stderr in both modes; the loop retries.
        eprintln!("{ts} error: {e}");
        let mut cause = std::error::Error::source(e);
        while let Some(c) = cause {
            eprintln!("  caused by: {c}");
            cause = c.source();
        }
    }
    let mut out = std::io::stdout().lock();
    if json {
        let line = RunLine {
            ts,
            took_ms,
            changes: run.changes,
            error: run.outcome.as_ref().err().map(|e| e.to_string()),
            report: run.outcome.as_ref().ok(),
            vectors,
        };
        serde_json::to_writer(&mut out, &line)?;
        writeln!(out)?;
        return Ok(());
    }
    let Ok(report) = &run.outcome else {
        return Ok(());
    };
    for w in &report.warnings {
        eprintln!("warning: {w}");
    }
    let what = if report.rebuilt {
        format!(
            "rebuilt the index ({}): {} events",
            report.reason.as_deref().unwrap_or("requested"),
            report.events_added
        )
    } else {
        format!(
            "indexed {} new events ({} segments, {} from journals)",
            report.events_added, report.segments, report.journal_events
        )
    };
    let hidden = match report.events_hidden {
        0 => String::new(),
        n => format!(", {n} hidden"),
    };
    writeln!(
        out,
        "{} {what}{hidden} in {took_ms} ms ({} changes)",
        ts.get(..19).unwrap_or(&ts).replace('T', " "),
        run.changes
    )?;
    drop(out);
    crate::commands::index::print_vectors(vectors);
    Ok(())
}
