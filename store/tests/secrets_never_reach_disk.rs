//! A random secret of any rule's format, put into random text in an event
//! of any shape (a prompt, a tool's output, a file read, metadata), goes
//! through the recorder into a journal and is sealed into git: no piece of
//! it is in any byte under `.git`, git objects decompressed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test fails loudly

use std::path::Path;
use std::process::Command;

use memlog_format::privacy::rules;
use memlog_format::privacy::sample::{SplitMix, expand};
use memlog_format::{Draft, Kind};
use memlog_store::seal::{JournalSelection, seal_journals};
use memlog_store::{Recorder, Repo};
use proptest::prelude::*;
use serde_json::json;

fn git(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}");
    out.stdout
}

/// Every byte under `.git`: its files as they are, and every object
/// decompressed.
fn everything_on_disk(repo: &Path) -> Vec<u8> {
    let mut all = git(repo, &["cat-file", "--batch-all-objects", "--batch"]);
    let mut stack = vec![repo.join(".git")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                all.extend(std::fs::read(&path).unwrap());
            }
        }
    }
    all
}

/// `bytes` without markers, which name the rule (the token's prefix,
/// sometimes).
fn unmarked(bytes: &[u8]) -> Vec<u8> {
    let markers = regex::bytes::Regex::new(r"\[REDACTED:[a-z0-9-]+:[0-9a-f]{4}\]").unwrap();
    markers.replace_all(bytes, &b""[..]).into_owned()
}

/// The event the secret goes in, by shape.
fn draft(shape: usize, text: String) -> Draft {
    let ts = "2026-03-04T10:15:00.000Z";
    let mut d = Draft::text("s1", ts, Kind::UserPrompt, "p", String::new());
    d.body.clear();
    match shape % 4 {
        0 => {
            d.body.insert("text".into(), json!(text));
        }
        1 => {
            d.kind = Kind::ToolObservation;
            d.body.insert("tool".into(), json!("Bash"));
            d.body
                .insert("input".into(), json!({"command": "cat .env"}));
            d.body.insert("output".into(), json!({"stdout": text}));
        }
        2 => {
            d.kind = Kind::ToolObservation;
            d.body.insert("tool".into(), json!("Read"));
            d.body.insert(
                "output".into(),
                json!({"file": {"filePath": "config/app.yaml", "content": text}}),
            );
        }
        _ => {
            d.kind = Kind::Note;
            d.body.insert("text".into(), json!("see meta"));
            d.meta.insert("note".into(), json!(text));
        }
    }
    d
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn no_piece_of_a_secret_is_on_disk(
        before in "[a-zA-Z0-9 .,:/_-]{0,60}",
        after in "[a-zA-Z0-9 .,:/_-]{0,60}",
        rule in any::<prop::sample::Index>(),
        seed in any::<u64>(),
        shape in 0usize..4,
    ) {
        let all = rules::builtin();
        let rule = all[rule.index(all.len())];
        let sample = expand(rule.sample, &mut SplitMix::new(seed));
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "-q"]);
        let repo = Repo::discover(dir.path()).unwrap();
        repo.ensure_dirs().unwrap();
        let text = format!("{before}\n{}\n{after}", sample.text);
        Recorder::new(&repo).unwrap().record(vec![draft(shape, text)]).unwrap();
        let journal = everything_on_disk(dir.path());
        prop_assert!(!sample.leaks_into(&unmarked(&journal)), "{} in the journal", rule.id);
        seal_journals(&repo, &JournalSelection::All).unwrap();
        let sealed = everything_on_disk(dir.path());
        prop_assert!(!sample.leaks_into(&unmarked(&sealed)), "{} in git", rule.id);
    }
}
