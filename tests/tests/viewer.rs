//! `memlog serve`, end to end: the real binary serving a real repository;
//! its JSON API against the CLI's `--json` output; the security rules
//! (Host check, forget token, loopback by default); live updates; and the
//! pages in a real headless browser (Debian's chromium driven through
//! chromedriver, installed by scripts/install-assets), with a screenshot of
//! each page.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use memlog_e2e::http::{self, Reply};
use memlog_e2e::{ServeProcess, TestRepo};
use memlog_format::{Draft, Kind};
use memlog_store::seal::{JournalSelection, seal_journals};
use memlog_store::{Recorder, Repo};
use serde_json::{Map, Value, json};

fn demo_sessions() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/demo/sessions.jsonl")
}

fn body(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

/// Records `events` (ts, kind, body) in `session` with `meta.branch`, and
/// seals it.
fn seal_session(repo: &TestRepo, session: &str, branch: &str, events: &[(&str, Kind, Value)]) {
    let r = Repo::discover(repo.path()).expect("open repo");
    r.ensure_dirs().expect("dirs");
    let drafts = events
        .iter()
        .map(|(ts, kind, b)| {
            let mut d = Draft::new(session, *ts, kind.clone(), "demo", body(b.clone()));
            d.meta.insert("branch".into(), json!(branch));
            d
        })
        .collect();
    Recorder::new(&r)
        .expect("recorder")
        .record(drafts)
        .expect("record");
    seal_journals(&r, &JournalSelection::Session(session.into())).expect("seal");
}

/// The demo sessions, a session that works on tasks (one of each column of
/// the board, one blocked by another), and a live, unsealed session.
fn repo_with_memory() -> TestRepo {
    let repo = TestRepo::new();
    // no background index: the server and the CLI, compared, would read
    // the index at different points of its run
    repo.memlog(&[
        "import",
        "jsonl",
        "--no-index",
        demo_sessions().to_str().expect("utf-8"),
    ])
    .ok();
    let task = |key: &str, title: &str, status: &str| json!({"key": format!("demo::{key}"), "title": title, "status": status});
    seal_session(
        &repo,
        "tasks-1",
        "feature/coupons",
        &[
            // A bookkeeping event whose text the index does not keep: the
            // session page must still give it exactly (from the log).
            (
                "2026-11-20T09:59:59Z",
                Kind::SessionStart,
                json!({"text": "startup"}),
            ),
            (
                "2026-11-20T10:00:00Z",
                Kind::UserPrompt,
                json!({"text": "Plan the coupon rounding fix and its rollout"}),
            ),
            (
                "2026-11-20T10:01:00Z",
                Kind::TaskCreated,
                task("round", "Round the coupon discount half up", "in_progress"),
            ),
            (
                "2026-11-20T10:02:00Z",
                Kind::TaskCreated,
                task("test", "Add a regression test for 15% coupons", "pending"),
            ),
            (
                "2026-11-20T10:03:00Z",
                Kind::TaskCreated,
                task("deploy", "Deploy the pricing fix", "pending"),
            ),
            // docs/DESIGN.md §5: a task is blocked only once it has blockers
            (
                "2026-11-20T10:03:30Z",
                Kind::TaskBlockersSet,
                json!({"key": "demo::deploy", "mode": "replace", "blockers": ["demo::round", "demo::test"]}),
            ),
            (
                "2026-11-20T10:03:45Z",
                Kind::TaskStatusChanged,
                json!({"key": "demo::deploy", "from": "pending", "to": "blocked"}),
            ),
            (
                "2026-11-20T10:04:00Z",
                Kind::TaskCreated,
                task("audit", "Audit checkout timeouts", "in_progress"),
            ),
            (
                "2026-11-20T10:04:30Z",
                Kind::TaskStatusChanged,
                json!({"key": "demo::audit", "from": "in_progress", "to": "done"}),
            ),
            (
                "2026-11-20T10:05:00Z",
                Kind::AgentResponse,
                json!({"text": "Created four tasks; the deploy waits for the rounding fix and its test in src/cart/pricing.rs."}),
            ),
        ],
    );
    repo.memlog(&[
        "record",
        "--session",
        "live-1",
        "--kind",
        "user_prompt",
        "--text",
        "Why does the checkout retry the discount service twice?",
        "--meta",
        r#"{"branch": "main"}"#,
    ])
    .ok();
    repo
}

fn cli_json(repo: &TestRepo, args: &[&str]) -> Value {
    repo.memlog(args).ok().json()
}

fn api(server: &ServeProcess, path: &str) -> Value {
    let reply = server.get(path);
    assert_eq!(reply.status, 200, "GET {path}: {}", reply.text());
    reply.json()
}

fn post_forget(server: &ServeProcess, headers: &[(&str, &str)], ids: &[&str]) -> Reply {
    let mut all = vec![("Content-Type", "application/json")];
    all.extend_from_slice(headers);
    let payload = json!({ "ids": ids, "reason": "test" }).to_string();
    http::request(
        &server.addr,
        "POST",
        "/api/forget",
        &all,
        Some(payload.as_bytes()),
    )
    .expect("POST /api/forget")
}

// --- the API against the CLI ---------------------------------------------------

#[test]
fn the_api_answers_what_the_cli_prints() {
    let repo = repo_with_memory();
    let server = ServeProcess::start(repo.path(), &[]);

    // search: the same hits in the same order, with their score parts.
    let cli = cli_json(&repo, &["search", "checkout", "-n", "5", "--json"]);
    let web = api(&server, "/api/search?q=checkout&limit=5");
    let ids = |v: &Value| -> Vec<String> {
        v["hits"]
            .as_array()
            .expect("hits")
            .iter()
            .map(|h| h["id"].as_str().expect("id").to_string())
            .collect()
    };
    assert!(!ids(&cli).is_empty());
    assert_eq!(ids(&web), ids(&cli));
    assert_eq!(web["query"], "checkout");
    let (w, c) = (&web["hits"][0], &cli["hits"][0]);
    for key in ["session", "kind", "ts", "text", "meta"] {
        assert_eq!(w[key], c[key], "{key}");
    }
    assert_eq!(w["parts"]["fts"], c["parts"]["fts"]);
    assert_eq!(w["parts"]["importance"], c["parts"]["importance"]);
    // Filters go through the same request builder.
    let filtered = api(
        &server,
        "/api/search?q=checkout&kind=tool_observation&session=demo-0001",
    );
    let cli_filtered = cli_json(
        &repo,
        &[
            "search",
            "checkout",
            "-n",
            "20",
            "--kind",
            "tool_observation",
            "--session",
            "demo-0001",
            "--json",
        ],
    );
    assert_eq!(ids(&filtered), ids(&cli_filtered));
    // ... and the agent filter the same post-filter.
    for agent in ["claude", "codex"] {
        let web = api(
            &server,
            &format!("/api/search?q=checkout&limit=5&agent={agent}"),
        );
        let cli = cli_json(
            &repo,
            &["search", "checkout", "-n", "5", "--agent", agent, "--json"],
        );
        assert_eq!(ids(&web), ids(&cli), "{agent}");
    }
    let bad = server.get("/api/search?q=x&kind=nonsense");
    assert_eq!(bad.status, 400, "{}", bad.text());
    assert!(
        bad.json()["error"]
            .as_str()
            .unwrap_or("")
            .contains("nonsense")
    );

    // timeline: `memlog log --json`'s rows (sealed sessions) plus the live one.
    let log = cli_json(&repo, &["log", "--json"]);
    let web = api(&server, "/api/sessions?limit=3");
    assert_eq!(web["sessions"].as_array().expect("sessions").len(), 3);
    assert_eq!(web["sessions"][0]["session"], "live-1");
    assert_eq!(web["sessions"][0]["commit"], Value::Null);
    assert_eq!(web["sessions"][0]["branch"], "main");
    let cursor = web["next"].as_str().expect("a next page").to_string();
    let rest = api(
        &server,
        &format!("/api/sessions?before={}", urlencode(&cursor)),
    );
    assert_eq!(rest["next"], Value::Null);
    let mut web_rows: Vec<Value> = web["sessions"].as_array().expect("rows").clone();
    web_rows.extend(rest["sessions"].as_array().expect("rows").iter().cloned());
    let sealed: Vec<&Value> = web_rows.iter().filter(|r| !r["commit"].is_null()).collect();
    let cli_rows = log["sessions"].as_array().expect("log rows");
    assert_eq!(sealed.len(), cli_rows.len());
    for c in cli_rows {
        let w = sealed
            .iter()
            .find(|w| w["session"] == c["session"])
            .unwrap_or_else(|| panic!("{} missing from the timeline", c["session"]));
        for key in [
            "commit",
            "events",
            "prompts",
            "tool_calls",
            "first_prompt",
            "branch",
            "started",
        ] {
            assert_eq!(w[key], c[key], "{key} of {}", c["session"]);
        }
    }

    // a session: `memlog show SESSION --json` plus its seal and tasks.
    let show = cli_json(&repo, &["show", "tasks-1", "--json"]);
    let web = api(&server, "/api/sessions/tasks-1");
    assert_eq!(web["session"], show["session"]);
    assert_eq!(web["events"], show["events"]);
    assert_eq!(web["commit"], cli_rows[0]["commit"]);
    assert_eq!(web["tasks"].as_array().expect("tasks").len(), 4);

    // an event with context: `memlog show ID --context 2 --json`.
    let id = show["events"][3]["id"].as_str().expect("id");
    let cli = cli_json(&repo, &["show", id, "--context", "2", "--json"]);
    assert_eq!(
        api(&server, &format!("/api/events/{}?context=2", &id[..12])),
        cli
    );

    // review and stats: exactly the CLI's documents.
    assert_eq!(
        api(&server, "/api/diff?revs=memlog~2..memlog"),
        cli_json(&repo, &["diff", "memlog~2..memlog", "--json"])
    );
    assert_eq!(
        api(&server, "/api/stats"),
        cli_json(&repo, &["stats", "--json"])
    );

    // the board, with blockers.
    let tasks = api(&server, "/api/tasks");
    let deploy = tasks["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .find(|t| t["key"] == "demo::deploy")
        .expect("the deploy task");
    assert_eq!(deploy["status"], "blocked");
    assert_eq!(deploy["blocked_by"], json!(["demo::round", "demo::test"]));

    // an entity and its edges.
    let entity = api(&server, "/api/entities/session%3Atasks-1");
    assert_eq!(entity["entity"]["type"], "session");
    assert!(
        entity["out"]
            .as_array()
            .expect("edges")
            .iter()
            .any(|e| e["other"] == "file:src/cart/pricing.rs")
    );

    // Unknown names: 404 naming them, as JSON.
    for (path, name) in [
        ("/api/sessions/no-such-session", "no-such-session"),
        ("/api/events/abcdef0123456789", "abcdef0123456789"),
        ("/api/entities/file%3Anowhere.rs", "file:nowhere.rs"),
        ("/api/nothing-here", "nothing-here"),
    ] {
        let reply = server.get(path);
        assert_eq!(reply.status, 404, "{path}: {}", reply.text());
        assert!(
            reply.json()["error"].as_str().unwrap_or("").contains(name),
            "{path}: {}",
            reply.text()
        );
    }
    let bad = server.get("/api/events/xyz");
    assert_eq!(bad.status, 400);
}

/// The server's resident memory at its peak so far (kB), from
/// `/proc/PID/status`.
fn peak_rss_kb(server: &ServeProcess) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.child.id())).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/PID/status")
}

#[test]
fn a_long_session_is_paged_at_a_bounded_memory() {
    // 5,000 events of 2 KB each: a tool-heavy afternoon (10 MB of JSON);
    // full text only (embedding them all would take the suite minutes)
    const EVENTS: usize = 5000;
    let repo = TestRepo::new();
    std::fs::write(
        repo.path().join(".memlog.yaml"),
        "embedding:\n  model_dir: /nonexistent\n",
    )
    .unwrap();
    let filler = "cargo test output line\n".repeat(85);
    let mut lines = String::new();
    for i in 0..EVENTS {
        lines.push_str(
            &json!({"session": "long", "ts": format!("2026-03-01T{:02}:{:02}:{:02}Z", i / 3600, i / 60 % 60, i % 60),
                    "kind": "agent_response", "text": format!("step {i}: {filler}")})
            .to_string(),
        );
        lines.push('\n');
    }
    std::fs::write(repo.path().join("long.jsonl"), lines).unwrap();
    repo.memlog(&["import", "jsonl", "long.jsonl"]).ok();
    let server = ServeProcess::start(repo.path(), &[]);
    let first = api(&server, "/api/sessions/long");
    assert_eq!(first["summary"]["events"], EVENTS, "{}", first["summary"]);
    let before = peak_rss_kb(&server);
    // Four readers walk the whole session at once, a page at a time.
    // Each returns the ids in the order read, the pages' total size and the
    // largest page's size (bytes).
    let walk = |limit: usize| {
        let (mut ids, mut total, mut largest) = (Vec::new(), 0, 0);
        let mut next: Option<String> = None;
        loop {
            let path = match &next {
                Some(c) => format!("/api/sessions/long?limit={limit}&after={}", urlencode(c)),
                None => format!("/api/sessions/long?limit={limit}"),
            };
            let reply = server.get(&path);
            assert_eq!(reply.status, 200, "GET {path}: {}", reply.text());
            total += reply.body.len();
            largest = largest.max(reply.body.len());
            let page = reply.json();
            let events = page["events"].as_array().unwrap();
            assert!(events.len() <= limit);
            ids.extend(events.iter().map(|e| e["id"].as_str().unwrap().to_string()));
            match page["next"].as_str() {
                Some(c) => next = Some(c.to_string()),
                None => return (ids, total, largest),
            }
        }
    };
    let walks: Vec<(Vec<String>, usize, usize)> = std::thread::scope(|scope| {
        let readers: Vec<_> = [200, 200, 500, 77]
            .into_iter()
            .map(|limit| scope.spawn(move || walk(limit)))
            .collect();
        readers.into_iter().map(|r| r.join().unwrap()).collect()
    });
    let grew_mb = (peak_rss_kb(&server) - before) / 1024;
    // every event once, in session order, whatever the page size
    let show = cli_json(&repo, &["show", "long", "--json"]);
    let expected: Vec<String> = show["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(expected.len(), EVENTS);
    for (ids, _, _) in &walks {
        assert_eq!(ids, &expected);
    }
    // A page's answer is bounded by the page size, not the session's: the
    // default page (200) and the largest (500) of ~2 KB events.
    let (_, whole, default_page) = &walks[0];
    let (_, _, largest_page) = &walks[2];
    eprintln!(
        "4 parallel walks of a {EVENTS}-event session ({} MB in all): the server's peak grew \
         {grew_mb} MB; a page of 200 is {} KB, of 500 {} KB",
        whole / 1_000_000,
        default_page / 1000,
        largest_page / 1000
    );
    assert!(grew_mb < 100, "the server's peak memory grew {grew_mb} MB");
    assert!(*whole > 10_000_000, "{whole}");
    assert!(*default_page < 600_000, "{default_page}");
    assert!(*largest_page < 1_500_000, "{largest_page}");
    // a page larger than 500, or a cursor that is not one, is refused
    for path in [
        "/api/sessions/long?limit=501",
        "/api/sessions/long?limit=0",
        "/api/sessions/long?after=nonsense",
    ] {
        assert_eq!(server.get(path).status, 400, "{path}");
    }
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

// --- security -------------------------------------------------------------------

#[test]
fn requests_for_another_host_are_refused() {
    let repo = repo_with_memory();
    let server = ServeProcess::start(repo.path(), &[]);
    for path in ["/", "/app.js", "/api/sessions", "/api/live"] {
        for host in ["evil.example", "evil.example:80", "localhost.evil.example"] {
            let reply =
                http::request(&server.addr, "GET", path, &[("Host", host)], None).expect("request");
            assert_eq!(reply.status, 403, "{path} with Host {host}");
        }
    }
    let port = server.addr.rsplit(':').next().expect("port");
    for host in [
        server.addr.clone(),
        format!("localhost:{port}"),
        "127.0.0.1".to_string(),
    ] {
        let reply = http::request(
            &server.addr,
            "GET",
            "/api/sessions",
            &[("Host", &host)],
            None,
        )
        .expect("request");
        assert_eq!(reply.status, 200, "Host {host}");
    }
    // The pages cannot be framed, and load scripts from this server only.
    let page = server.get("/");
    let csp = page.header("content-security-policy").expect("a CSP");
    assert!(csp.contains("default-src 'self'") && csp.contains("frame-ancestors 'none'"));
}

#[test]
fn forget_needs_allow_forget_and_the_token() {
    let repo = repo_with_memory();
    let victim = repo.record("s-secret", "note", "the staging password is hunter2");
    let read_only = ServeProcess::start(repo.path(), &[]);
    assert!(read_only.token.is_none(), "{}", read_only.banner);
    assert!(read_only.banner.contains("read-only"));
    let reply = post_forget(&read_only, &[("X-Memlog-Token", "anything")], &[&victim]);
    assert_eq!(reply.status, 403, "{}", reply.text());
    assert_eq!(api(&read_only, "/api/config")["allow_forget"], false);
    drop(read_only);

    let server = ServeProcess::start(repo.path(), &["--allow-forget"]);
    let token = server.token.clone().expect("a token in the URL");
    assert!(token.len() >= 32, "{token}");
    assert!(server.banner.contains(&token));
    for headers in [
        vec![],
        vec![("X-Memlog-Token", "0000")],
        vec![("X-Memlog-Token", &token[..token.len() - 1])],
    ] {
        let reply = post_forget(&server, &headers, &[&victim]);
        assert_eq!(reply.status, 403, "{headers:?}: {}", reply.text());
    }
    // Another site's page cannot send it even with the token.
    let reply = post_forget(
        &server,
        &[
            ("X-Memlog-Token", &token),
            ("Origin", "http://evil.example"),
        ],
        &[&victim],
    );
    assert_eq!(reply.status, 403, "{}", reply.text());
    assert!(
        repo.cat().iter().any(|e| e["id"] == victim.as_str()),
        "nothing was forgotten yet"
    );

    // With the token: the same code path as `memlog forget`.
    let origin = format!("http://{}", server.addr);
    let reply = post_forget(
        &server,
        &[("X-Memlog-Token", &token), ("Origin", &origin)],
        &[&victim[..12]],
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
    let forgotten = reply.json();
    assert_eq!(forgotten["targets"], json!([victim]));
    assert!(forgotten["commit"].is_string());
    assert!(repo.cat().iter().all(|e| e["id"] != victim.as_str()));
    assert_eq!(server.get(&format!("/api/events/{victim}")).status, 404);
    let log = cli_json(&repo, &["diff", "--json"]);
    assert_eq!(log["forgets"][0]["id"], forgotten["id"]);
    // A bad request is a 400 with a message.
    let reply = post_forget(&server, &[("X-Memlog-Token", &token)], &[]);
    assert_eq!(reply.status, 400, "{}", reply.text());
}

/// `(address, port)` of the TCP sockets in LISTEN state owned by `pid`,
/// from /proc (Linux).
fn listening_addresses(pid: u32) -> Vec<String> {
    let mut inodes = Vec::new();
    if let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) {
        for fd in fds.flatten() {
            if let Ok(target) = std::fs::read_link(fd.path()) {
                let t = target.to_string_lossy().to_string();
                if let Some(inode) = t.strip_prefix("socket:[").and_then(|s| s.strip_suffix(']')) {
                    inodes.push(inode.to_string());
                }
            }
        }
    }
    let mut out = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        for line in text.lines().skip(1) {
            let cols: Vec<&str> = line.split_whitespace().collect();
            // local_address, state 0A = LISTEN, inode at column 9
            if cols.len() > 9 && cols[3] == "0A" && inodes.iter().any(|i| i == cols[9]) {
                out.push(cols[1].to_string());
            }
        }
    }
    out
}

/// Asserts that `server` listens on `ip` alone (its only listening socket,
/// as /proc tells).
fn assert_listens_only_on(server: &ServeProcess, ip: std::net::Ipv4Addr) {
    assert!(
        server.addr.starts_with(&format!("{ip}:")),
        "{}",
        server.banner
    );
    let port: u16 = server
        .addr
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("port");
    // /proc/net/tcp writes 127.0.0.1:80 as 0100007F:0050.
    let ip_hex = format!("{:08X}", u32::from_le_bytes(ip.octets()));
    assert_eq!(
        listening_addresses(server.child.id()),
        [format!("{ip_hex}:{port:04X}")]
    );
}

#[test]
#[cfg(target_os = "linux")]
fn it_listens_on_loopback_unless_told_otherwise() {
    let repo = repo_with_memory();
    let server = ServeProcess::start(repo.path(), &[]);
    assert_listens_only_on(&server, std::net::Ipv4Addr::LOCALHOST);
    drop(server);

    // An explicit --bind is honoured (another loopback address here: the
    // tests talk to this machine only).
    let server = ServeProcess::start(repo.path(), &["--bind", "127.0.0.2"]);
    assert_listens_only_on(&server, std::net::Ipv4Addr::new(127, 0, 0, 2));
    assert_eq!(server.get("/api/config").status, 200);
}

// --- live updates --------------------------------------------------------------------

/// Reads the event stream until `needle` shows up, for up to `timeout`.
fn read_stream_until(stream: &mut TcpStream, needle: &str, timeout: Duration) -> String {
    let deadline = Instant::now() + timeout;
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .expect("timeout");
    while Instant::now() < deadline {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
            Err(_) => {}
        }
        if String::from_utf8_lossy(&seen).contains(needle) {
            break;
        }
    }
    String::from_utf8_lossy(&seen).into_owned()
}

#[test]
fn the_event_stream_tells_when_memory_moves() {
    let repo = repo_with_memory();
    let server = ServeProcess::start(repo.path(), &[]);
    let mut stream = TcpStream::connect(&server.addr).expect("connect");
    write!(
        stream,
        "GET /api/live HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\n\r\n",
        server.addr
    )
    .expect("request");
    let opened = read_stream_until(&mut stream, "memlog live", Duration::from_secs(10));
    assert!(opened.contains("text/event-stream"), "{opened}");
    // Another process seals a session: the stream says so.
    repo.record("s-new", "user_prompt", "a new session arrives");
    repo.memlog(&["seal", "--session", "s-new"]).ok();
    let seen = read_stream_until(&mut stream, "event: index", Duration::from_secs(10));
    assert!(seen.contains("event: index"), "no index event: {seen:?}");
    assert!(
        api(&server, "/api/sessions?limit=1")["sessions"][0]["session"] == "s-new",
        "the next fetch sees the new session"
    );
}

// --- the pages in a real browser ------------------------------------------------------

const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// A headless chromium driven through chromedriver (W3C WebDriver).
struct Browser {
    driver: Child,
    addr: String,
    session: String,
}

impl Browser {
    /// `None`, with a message, when chromium or chromedriver is missing.
    fn start() -> Option<Browser> {
        let chromium = ["chromium", "chromium-browser", "google-chrome"]
            .iter()
            .map(|c| Path::new("/usr/bin").join(c))
            .find(|p| p.exists());
        let driver_bin = Path::new("/usr/bin/chromedriver");
        let (Some(chromium), true) = (chromium, driver_bin.exists()) else {
            eprintln!(
                "skipped: chromium and chromedriver are not installed (scripts/install-assets installs them with apt-get)"
            );
            return None;
        };
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let driver = Command::new(driver_bin)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver");
        // Owned from here on, so that a failure below still ends the driver.
        let mut browser = Browser {
            driver,
            addr: format!("127.0.0.1:{port}"),
            session: String::new(),
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(r) = http::request(&browser.addr, "GET", "/status", &[], None)
                && r.json()["value"]["ready"] == true
            {
                break;
            }
            assert!(Instant::now() < deadline, "chromedriver did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
        let created = browser.call(
            "POST",
            "/session",
            json!({"capabilities": {"alwaysMatch": {
                "browserName": "chrome",
                "goog:chromeOptions": {
                    "binary": chromium,
                    "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                             "--disable-dev-shm-usage", "--window-size=1280,900",
                             "--hide-scrollbars", "--force-device-scale-factor=1"]
                }
            }}}),
        );
        browser.session = created["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no WebDriver session: {created}"))
            .to_string();
        Some(browser)
    }

    fn call(&self, method: &str, path: &str, payload: Value) -> Value {
        let body = payload.to_string();
        let reply = http::request(
            &self.addr,
            method,
            path,
            &[("Content-Type", "application/json")],
            (method == "POST").then_some(body.as_bytes()),
        )
        .unwrap_or_else(|e| panic!("WebDriver {method} {path}: {e}"));
        let value = reply.json()["value"].clone();
        assert_eq!(reply.status, 200, "WebDriver {method} {path}: {value}");
        value
    }

    fn session_call(&self, method: &str, path: &str, payload: Value) -> Value {
        self.call(method, &format!("/session/{}{path}", self.session), payload)
    }

    fn goto(&self, url: &str) {
        self.session_call("POST", "/url", json!({ "url": url }));
    }

    fn find_all(&self, css: &str) -> Vec<String> {
        self.session_call(
            "POST",
            "/elements",
            json!({"using": "css selector", "value": css}),
        )
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|e| e[ELEMENT].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
    }

    /// The first element matching `css`, waiting for it up to 10 s.
    fn wait_for(&self, css: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(e) = self.find_all(css).into_iter().next() {
                return e;
            }
            assert!(
                Instant::now() < deadline,
                "{css} did not appear; page text: {}",
                self.page_text()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until the page's text contains `text`.
    fn wait_for_text(&self, text: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.page_text().contains(text) {
            assert!(
                Instant::now() < deadline,
                "{text:?} did not appear; page text: {}",
                self.page_text()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn page_text(&self) -> String {
        self.script("return document.body.innerText;")
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    fn script(&self, js: &str) -> Value {
        self.session_call("POST", "/execute/sync", json!({"script": js, "args": []}))
    }

    /// The text of the `nth` element matching `css`, read in one script: a
    /// live update may re-render the page between finding an element and
    /// reading it, which leaves a found element stale.
    fn text_of(&self, css: &str, nth: usize) -> String {
        self.wait_for(css);
        self.session_call(
            "POST",
            "/execute/sync",
            json!({
                "script": "const e = document.querySelectorAll(arguments[0])[arguments[1]]; return e ? e.innerText : '';",
                "args": [css, nth],
            }),
        )
        .as_str()
        .unwrap_or_default()
        .to_string()
    }

    /// Clicks the first element matching `css`, finding it again when the
    /// page re-rendered it meanwhile (a live update may replace any element
    /// between finding and clicking it).
    fn click_on(&self, css: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let element = self.wait_for(css);
            let path = format!("/session/{}/element/{element}/click", self.session);
            let reply = http::request(
                &self.addr,
                "POST",
                &path,
                &[("Content-Type", "application/json")],
                Some(b"{}"),
            )
            .unwrap_or_else(|e| panic!("WebDriver POST {path}: {e}"));
            if reply.status == 200 {
                return;
            }
            let value = reply.json()["value"].clone();
            assert!(
                value["error"] == "stale element reference" && Instant::now() < deadline,
                "WebDriver POST {path}: {value}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn type_text(&self, element: &str, text: &str) {
        self.session_call(
            "POST",
            &format!("/element/{element}/value"),
            json!({ "text": text }),
        );
    }

    /// Saves a PNG of the window to `dir/name.png`.
    fn screenshot(&self, dir: &Path, name: &str) {
        let b64 = self.session_call("GET", "/screenshot", Value::Null);
        let png = base64_decode(b64.as_str().expect("base64 PNG"));
        assert!(png.starts_with(b"\x89PNG"), "not a PNG");
        std::fs::create_dir_all(dir).expect("screenshot dir");
        std::fs::write(dir.join(format!("{name}.png")), png).expect("write screenshot");
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = http::request(
                &self.addr,
                "DELETE",
                &format!("/session/{}", self.session),
                &[],
                None,
            );
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for v in text.bytes().filter_map(value) {
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

/// Where screenshots go: `$MEMLOG_SCREENSHOTS`, else `target/screenshots`
/// (the README's are copied from there into docs/screenshots).
fn screenshot_dir() -> PathBuf {
    std::env::var_os("MEMLOG_SCREENSHOTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/screenshots"))
}

#[test]
fn a_person_browses_memory_in_a_real_browser() {
    let Some(browser) = Browser::start() else {
        return;
    };
    let repo = repo_with_memory();
    let server = ServeProcess::start(repo.path(), &[]);
    let shots = screenshot_dir();

    // The timeline: sessions newest first, the live one on top.
    browser.goto(&server.url("/"));
    browser.wait_for("#timeline tr.session-row");
    let rows = browser.find_all("#timeline tr.session-row");
    assert_eq!(rows.len(), 6, "{}", browser.page_text());
    assert!(
        browser
            .text_of("#timeline tr.session-row", 0)
            .contains("Why does the checkout retry")
    );
    assert!(
        browser
            .text_of("#timeline tr.session-row", 1)
            .contains("feature/coupons")
    );
    browser.screenshot(&shots, "timeline");

    // Live: a session sealed by another process appears without a reload.
    browser.script("window.__same_page = true; return null;");
    seal_session(
        &repo,
        "s-live-update",
        "main",
        &[(
            "2026-11-21T08:00:00Z",
            Kind::UserPrompt,
            json!({"text": "Sealed while the page was open"}),
        )],
    );
    browser.wait_for_text("Sealed while the page was open");
    assert_eq!(browser.script("return window.__same_page === true;"), true);

    // Search from the header, as a person would type it.
    let q = browser.wait_for("#quick-q");
    browser.type_text(&q, "price_cart\u{E007}");
    browser.wait_for(".hit");
    browser.wait_for_text("hits for “price_cart”");
    let first = browser.text_of(".hit", 0);
    assert!(
        first.contains("text") && first.contains("recency"),
        "{first}"
    );
    browser.screenshot(&shots, "search");

    // Open the first hit: the event with its neighbours.
    browser.click_on(".hit a.hit-headline");
    browser.wait_for(".event.target");
    browser.wait_for_text("In session");
    browser.screenshot(&shots, "event");

    // Its session: events in order, tool calls folded with their metadata.
    browser.click_on("main p a[href^='#/session/']");
    browser.wait_for_text("Session demo-0001");
    browser.wait_for("#events .event");
    browser.click_on("#events details summary");
    browser.screenshot(&shots, "session");

    // The tasks board: four columns, the blocked task with its blockers.
    browser.goto(&server.url("/#/tasks"));
    browser.wait_for("#board .task");
    let blocked = browser.text_of("[data-column=blocked] .task", 0);
    assert!(
        blocked.contains("Deploy the pricing fix")
            && blocked.contains("blocked by: demo::round, demo::test"),
        "{blocked}"
    );
    for (column, title) in [
        ("pending", "Add a regression test"),
        ("in_progress", "Round the coupon discount"),
        ("done", "Audit checkout timeouts"),
    ] {
        let card = browser.text_of(&format!("[data-column={column}] .task"), 0);
        assert!(card.contains(title), "{column}: {card}");
    }
    browser.screenshot(&shots, "tasks");

    // A file's entity and its edges; the review page; the stats.
    browser.goto(&server.url("/#/entity/file%3Asrc%2Fcart%2Fpricing.rs"));
    browser.wait_for_text("demo-0001");
    browser.screenshot(&shots, "entity");
    browser.goto(&server.url("/#/review?revs=memlog~3..memlog"));
    browser.wait_for_text("Sessions added");
    browser.screenshot(&shots, "review");
    browser.goto(&server.url("/#/stats"));
    browser.wait_for(".chart svg rect");
    browser.wait_for_text("Events per day and kind");
    browser.screenshot(&shots, "stats");
}

/// A personal note is a sealed, personal session in the timeline, as
/// `memlog log` lists it, and a session without a prompt says what it is
/// about: the viewer showed the personal note as a live session about to
/// be shared, and every note session as "(no prompt)" (a field test).
#[test]
fn the_timeline_marks_personal_sessions_and_names_prompt_less_ones() {
    let repo = TestRepo::new();
    repo.memlog(&["note", "--personal", "dentist on Tuesday at nine"])
        .ok();
    repo.memlog(&["note", "release on Fridays"]).ok();
    let log = cli_json(&repo, &["log", "--json"]);
    let server = ServeProcess::start(repo.path(), &[]);
    let web = api(&server, "/api/sessions");
    let rows = web["sessions"].as_array().expect("rows");
    assert_eq!(rows.len(), 2, "{web:#}");
    for c in log["sessions"].as_array().expect("log rows") {
        let w = rows
            .iter()
            .find(|w| w["session"] == c["session"])
            .unwrap_or_else(|| panic!("{} missing: {web:#}", c["session"]));
        assert_eq!(w["commit"], c["commit"], "{web:#}");
        assert_eq!(w["personal"], c["personal"], "{web:#}");
    }
    let personal = rows
        .iter()
        .find(|w| w["personal"] == true)
        .expect("personal");
    assert_eq!(personal["subject"], "dentist on Tuesday at nine", "{web:#}");
    let page = api(
        &server,
        &format!("/api/sessions/{}", personal["session"].as_str().unwrap()),
    );
    assert_eq!(page["personal"], true);
    assert!(!page["commit"].is_null(), "{page:#}");
}
