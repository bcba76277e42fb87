//! Every row of the `events` table gives back its event exactly (its id
//! verifies), while a tool observation's output, most of its bytes, is
//! stored once: in the row's text, not again in its body.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

mod common;

use memlog_format::{Draft, Kind};
use memlog_indexer::{Projections, lookup};
use memlog_store::Recorder;
use serde_json::{Value, json};

use common::repo;

fn tool(n: usize, body: Value) -> Draft {
    let Value::Object(body) = body else {
        panic!("an object")
    };
    Draft::new(
        "s",
        format!("2026-01-01T00:00:{n:02}.000Z"),
        Kind::ToolObservation,
        "p",
        body,
    )
}

#[test]
fn tool_output_is_stored_once_and_every_row_gives_back_its_event() {
    let (_d, repo) = repo();
    let output = "line one of OUTPUT-MARKER\nline two\n\nlast line ünïcode";
    let drafts = vec![
        // the usual shapes: inputs, an error, a multi-line output
        tool(
            1,
            json!({"tool": "Bash", "input": {"command": "cargo test", "description": "run"}, "output": output}),
        ),
        tool(
            2,
            json!({"tool": "Bash", "input": {"command": "false"}, "output": output, "error": "exit 1\nOUTPUT-MARKER"}),
        ),
        tool(
            3,
            json!({"tool": "Read", "input": {"file_path": "src/a.rs"}, "output": ""}),
        ),
        tool(4, json!({"tool": "Grep", "output": "\n\nOUTPUT-MARKER\n"})),
        // shapes whose output is not the text's: kept whole
        tool(
            5,
            json!({"tool": "Bash", "text": "said so", "output": "OUTPUT-MARKER"}),
        ),
        tool(6, json!({"tool": "Bash", "output": ["OUTPUT-MARKER"]})),
        tool(7, json!({"tool": "Bash", "output": true})),
        tool(8, json!({"output": "OUTPUT-MARKER no tool"})),
    ];
    Recorder::new(&repo)
        .unwrap()
        .import(vec![("s".to_string(), drafts)])
        .unwrap();
    Projections::update(&repo).unwrap();
    let p = Projections::open(&repo).unwrap();
    let ids: Vec<String> = {
        let mut stmt = p
            .graph()
            .conn
            .prepare("SELECT id FROM events ORDER BY ts")
            .unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    assert_eq!(ids.len(), 8);
    for id in &ids {
        let row = lookup::event(&p, id).unwrap().expect("the row");
        assert!(
            row.verified,
            "{id} does not give back its event: {:?}",
            row.event.body
        );
    }
    let bodies_holding_output: i64 = p
        .graph()
        .conn
        .query_row(
            "SELECT count(*) FROM events WHERE body LIKE '%line two%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(bodies_holding_output, 0, "an output stored twice");
}
