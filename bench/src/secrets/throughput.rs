//! Redaction throughput against the number of rules: the keyword
//! automaton reads a text in one pass whatever the number of keywords, and
//! only the rules whose keywords the text holds run, so the cost of a text
//! stays flat as rules are added.

use std::path::Path;
use std::time::{Duration, Instant};

use memlog_format::privacy::sample::{SplitMix, expand};
use memlog_format::privacy::{PrivacyFilter, rules};

use crate::Row;

/// A 64 KB tool output: source, logs and JSON, with a few secrets.
pub fn tool_output(seed: u64) -> String {
    let mut rng = SplitMix::new(seed);
    let all = rules::builtin();
    let lines = [
        "    let token = request.headers().get(\"Authorization\").ok_or(Error::Unauthorized)?;",
        "2026-03-04T10:15:01Z INFO  api::server listening on 0.0.0.0:8080 (workers=4)",
        "{\"id\": 4211, \"status\": \"ok\", \"items\": [1, 2, 3], \"next\": null}",
        "fn get_token_by_id(id: u64) -> Option<Token> { CACHE.get(&id).cloned() }",
        "test auth::password::tests::hashes_are_salted ... ok",
        "  integrity sha512-wS+hAgJShR0KhEvPJArfuPVN1+Hz1t0Y6n5jLrGQbkb4urgPE/0Rve+1kMB1v==",
        "# the API key rotates every 90 days; see docs/secrets.md",
    ];
    let mut out = String::with_capacity(66_000);
    let mut i = 0;
    while out.len() < 64 * 1024 {
        if i % 97 == 0 {
            out.push_str(&expand(rng.pick(&all).sample, &mut rng).text);
        } else {
            out.push_str(lines[i % lines.len()]);
        }
        out.push('\n');
        i += 1;
    }
    out
}

/// 64 KB of the ordinary texts (`fixtures/privacy/ordinary/`: code,
/// lockfiles, logs, configs), which hold keywords but no secret.
fn ordinary(dir: &Path) -> anyhow::Result<String> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    paths.sort();
    let mut all = String::new();
    for path in paths {
        all.push_str(&std::fs::read_to_string(path)?);
    }
    let mut out = String::with_capacity(66_000);
    while out.len() < 64 * 1024 && !all.is_empty() {
        out.push_str(&all);
    }
    let mut end = (64 * 1024).min(out.len());
    while !out.is_char_boundary(end) {
        end -= 1;
    }
    out.truncate(end);
    Ok(out)
}

/// MB/s of `filter_text` over 64 KB of ordinary text and over a tool
/// output with a secret every 97 lines, with `n` of the rules: the generic
/// rules, which every filter runs, and provider rules spread over every
/// family (what adding rules adds), and the cost of the first text
/// (compiling the expressions it calls for).
pub fn bench(seed: u64, ordinary_dir: &Path, rows: &mut Vec<Row>) -> anyhow::Result<()> {
    let texts = [
        ("ordinary code, lockfiles and logs", ordinary(ordinary_dir)?),
        ("tool output, a secret every 97 lines", tool_output(seed)),
    ];
    let all = rules::builtin();
    let (generic, providers): (Vec<_>, Vec<_>) =
        all.iter().partition(|r| r.family == rules::Family::Generic);
    let mut counts = vec![10, 50, 100, 200];
    counts.retain(|n| *n < all.len());
    counts.push(all.len());
    for (label, text) in &texts {
        for &n in &counts {
            let wanted = n.saturating_sub(generic.len()).min(providers.len());
            let step = providers.len() as f64 / wanted.max(1) as f64;
            let mut chosen: Vec<_> = (0..wanted)
                .map(|i| providers[(i as f64 * step) as usize])
                .collect();
            chosen.extend(generic.iter().copied());
            let t = Instant::now();
            let filter = PrivacyFilter::with_rules(chosen, &[])?;
            let _ = filter.filter_text(text);
            let first = t.elapsed();
            let (mut runs, t) = (0u32, Instant::now());
            while t.elapsed() < Duration::from_millis(500) || runs < 5 {
                std::hint::black_box(filter.filter_text(text));
                runs += 1;
            }
            let per_text = t.elapsed() / runs;
            rows.push(Row {
                name: format!(
                    "redaction throughput, 64 KB of {label}, {} rules ({} generic + {wanted} provider)",
                    generic.len() + wanted,
                    generic.len()
                ),
                value: format!(
                    "{:.0} MB/s ({:.2} ms a text; first text {:.2} ms)",
                    text.len() as f64 / per_text.as_secs_f64() / 1e6,
                    per_text.as_secs_f64() * 1e3,
                    first.as_secs_f64() * 1e3
                ),
                target: "flat as rules grow".into(),
            });
        }
    }
    Ok(())
}
