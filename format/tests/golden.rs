//! Golden tests: the exact bytes of events and of a segment are pinned, so
//! the format cannot drift silently. If a change here is intended, it is a
//! new format version: bump `v`, document it in FORMAT.md, and regenerate
//! with `MEMLOG_BLESS=1 cargo test -p memlog-format --test golden`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use memlog_format::segment::Segment;
use memlog_format::{Draft, Event, Kind};
use serde_json::{Value, json};

fn object(v: Value) -> serde_json::Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => panic!("not an object"),
    }
}

fn golden_events() -> Vec<Event> {
    let prompt = Draft {
        session: "9f2c1a7e-0000-4000-8000-000000000001".into(),
        ts: "2026-11-22T05:27:21.123Z".into(),
        kind: Kind::UserPrompt,
        project: "demo".into(),
        body: object(
            json!({"text": "Fix getUserById — it returns null for ünïcode ids\n\"quoted\" \\ tab\t"}),
        ),
        meta: object(
            json!({"cwd": "/work/demo", "branch": "main", "head": "4b825dc642cb6eb9a060e54bf8d69288fbee4904"}),
        ),
    };
    let tool = Draft {
        session: "9f2c1a7e-0000-4000-8000-000000000001".into(),
        ts: "2026-11-22T05:27:22.000Z".into(),
        kind: Kind::ToolObservation,
        project: "demo".into(),
        body: object(json!({
            "tool": "Bash",
            "input": {"command": "cargo test -q", "timeout": 120000},
            "output": "test result: ok. 3 passed",
            "success": true,
            "metadata": {"exit_code": 0, "duration_ms": 1532.0}
        })),
        meta: object(json!({})),
    };
    let note = Draft {
        session: "9f2c1a7e-0000-4000-8000-000000000001".into(),
        ts: "2026-11-22T05:28:00.500Z".into(),
        kind: Kind::Note,
        project: "demo".into(),
        body: object(json!({"text": "벡터 검색은 HNSW로 한다"})),
        meta: object(json!({"ref": "ext:42"})),
    };
    vec![prompt.into_event(0), tool.into_event(1), note.into_event(2)]
}

const SEGMENT_HASH: &str = "f62b5a996ae8ec7556eb2e46bffaa8a98f92fcb0c291cd7b5b3f274e7aaf5aef";

#[test]
fn segment_bytes_and_ids_are_pinned() {
    let events = golden_events();
    let segments = Segment::encode(&events);
    assert_eq!(segments.len(), 1);
    let segment = &segments[0];
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/golden/segment-v1.jsonl");
    if std::env::var_os("MEMLOG_BLESS").is_some() {
        std::fs::write(&path, &segment.bytes).expect("write golden file");
        eprintln!("blessed {} (hash {})", path.display(), segment.hash);
        return;
    }
    let golden = std::fs::read(&path).expect("golden file fixtures/golden/segment-v1.jsonl");
    assert_eq!(
        String::from_utf8_lossy(&segment.bytes),
        String::from_utf8_lossy(&golden),
        "segment bytes drifted"
    );
    assert_eq!(segment.hash, SEGMENT_HASH);
    assert_eq!(segment.hash, blake3::hash(&golden).to_hex().to_string());
    assert_eq!(
        segment.path(),
        format!("segments/{}/{}.jsonl", &SEGMENT_HASH[..2], SEGMENT_HASH)
    );
    // every golden line decodes back to the same event, ids verified
    let (decoded, problems) = memlog_format::segment::decode(&golden);
    assert!(problems.is_empty());
    assert_eq!(decoded, events);
}

#[test]
fn canonical_line_shape() {
    let e = &golden_events()[1];
    // keys sorted at every level, no spaces, integral float written as integer
    assert!(e.canonical_line().starts_with(
        r#"{"body":{"input":{"command":"cargo test -q","timeout":120000},"metadata":{"duration_ms":1532,"exit_code":0},"output":"test result: ok. 3 passed","success":true,"tool":"Bash"},"id":""#
    ), "{}", e.canonical_line());
    assert!(e.canonical_line().ends_with(r#","kind":"tool_observation","meta":{},"project":"demo","seq":1,"session":"9f2c1a7e-0000-4000-8000-000000000001","ts":"2026-11-22T05:27:22.000Z","v":1}"#));
    // the id is blake3 of the same object without "id"
    let without_id = memlog_format::canonical::to_string(&e.to_value(false));
    assert_eq!(
        e.id,
        blake3::hash(without_id.as_bytes()).to_hex().to_string()
    );
}
