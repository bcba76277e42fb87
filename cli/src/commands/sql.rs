use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use memlog_indexer::graph::Graph;
use rusqlite::types::ValueRef;
use serde_json::{Map, Value};

use memlog_ops::workspace;

use crate::output;

/// Query the entity/edge database with SQL, read-only.
///
/// Tables: events, sessions, entities, entity_aliases, edges, memory, forgets, meta
/// (see indexer/SCHEMA.md). The database is a projection: it is brought up
/// to date first, and writes are refused.
///
/// Example: memlog sql "SELECT dst_id, count(*) FROM edges WHERE rel_type =
/// 'touches' GROUP BY dst_id ORDER BY 2 DESC LIMIT 10"
#[derive(Args)]
pub struct SqlArgs {
    /// The SQL statement.
    query: String,

    /// Print rows as a JSON array of objects.
    #[arg(long)]
    json: bool,
}

pub fn cmd_sql(dir: &Path, args: SqlArgs) -> anyhow::Result<ExitCode> {
    // SQLite calls an empty statement a misuse of its API
    if args.query.trim().trim_matches(';').trim().is_empty() {
        anyhow::bail!("the query is empty: give one SELECT (`memlog sql --help` lists the tables)");
    }
    let repo = workspace::open(dir)?;
    let projections = workspace::projections(&repo)?;
    let db = memlog_store::IndexLayout::new(projections.dir()).graph();
    drop(projections);
    let graph = Graph::open_read_only(&db)?;
    let mut stmt = graph
        .conn
        .prepare(&args.query)
        .with_context(|| format!("SQL: {}", args.query))?;
    if !stmt.readonly() {
        anyhow::bail!(
            "memlog sql only reads: the database is derived from the log (`memlog rebuild` \
             makes it again), so a change there would not last. Memory changes through its \
             commands: `memlog note`, `memlog forget`, `memlog task set`"
        );
    }
    let columns: Vec<String> = stmt.column_names().map(|c| c.to_string()).collect();
    let mut rows = stmt.query([]).context("running the query")?;
    let mut out: Vec<Vec<Value>> = Vec::new();
    while let Some(row) = rows.next().context("reading a row")? {
        let mut values = Vec::with_capacity(columns.len());
        for i in 0..columns.len() {
            values.push(match row.get_ref(i)? {
                ValueRef::Null => Value::Null,
                ValueRef::Integer(n) => Value::from(n),
                ValueRef::Real(f) => Value::from(f),
                ValueRef::Text(t) => Value::String(String::from_utf8_lossy(t).into_owned()),
                ValueRef::Blob(b) => Value::String(format!("<{} bytes>", b.len())),
            });
        }
        out.push(values);
    }
    // Any column may carry a personal event's words (its text, a join, a
    // substring): with personal memory here, rows printed count as shown
    // (`memlog_ops::shown`), and an agent's shell that ran this keeps the
    // rest of its session here.
    if !out.is_empty() && graph.holds_personal().unwrap_or(true) {
        memlog_ops::shown::mark(&repo);
    }
    if args.json {
        let objects: Vec<Value> = out
            .into_iter()
            .map(|vals| {
                let map: Map<String, Value> = columns.iter().cloned().zip(vals).collect();
                Value::Object(map)
            })
            .collect();
        output::print_json(&objects)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!("{}", columns.join("\t"));
    for vals in out {
        let cells: Vec<String> = vals
            .into_iter()
            .map(|v| match v {
                Value::String(s) => s.replace(['\t', '\n'], " "),
                Value::Null => "NULL".into(),
                other => other.to_string(),
            })
            .collect();
        println!("{}", cells.join("\t"));
    }
    Ok(ExitCode::SUCCESS)
}
