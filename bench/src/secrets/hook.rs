//! The PostToolUse hook with a 64 KB tool output, this binary against an
//! older one (the filter before this engine): runs alternate, so that the
//! machine's load falls on both alike.

use std::path::Path;
use std::time::Duration;

use serde_json::json;

use super::throughput::tool_output;
use crate::hooks::time_hook;
use crate::{Row, fresh_repo, ms, percentile};

/// Timed runs of each binary, after a warm-up of each.
const RUNS: usize = 61;
const WARM_UP: usize = 3;

pub fn ab(bin: &Path, baseline: &Path, seed: u64) -> anyhow::Result<Row> {
    let output = tool_output(seed);
    let repos = [fresh_repo()?, fresh_repo()?];
    let bins = [bin, baseline];
    let mut samples: [Vec<Duration>; 2] = [Vec::new(), Vec::new()];
    for i in 0..WARM_UP + RUNS {
        for (k, (bin, repo)) in bins.iter().zip(&repos).enumerate() {
            let cwd = repo.path().display().to_string();
            let payload = json!({"session_id": "bench-64k", "cwd": cwd, "hook_event_name": "PostToolUse",
                "tool_name": "Bash", "tool_input": {"command": format!("cargo test -- --nocapture # {i}")},
                "tool_response": {"stdout": output, "stderr": "", "interrupted": false, "isImage": false}});
            let t = time_hook(bin, repo.path(), "PostToolUse", &payload)?;
            if i >= WARM_UP {
                samples[k].push(t);
            }
        }
    }
    // each run against the baseline's run beside it: a load that comes and
    // goes weighs on both sides of a pair
    let mut ratios: Vec<f64> = samples[0]
        .iter()
        .zip(&samples[1])
        .map(|(a, b)| a.as_secs_f64() / b.as_secs_f64())
        .collect();
    ratios.sort_by(f64::total_cmp);
    let paired = ratios[ratios.len() / 2];
    let [mut ours, mut theirs] = samples;
    let (ours, theirs) = (percentile(&mut ours, 0.5), percentile(&mut theirs, 0.5));
    Ok(Row {
        name: format!(
            "`memlog hook PostToolUse`, 64 KB tool output with secrets, p50 ({RUNS} runs alternated with {})",
            baseline.display()
        ),
        value: format!(
            "{} vs {} ({:.2}x; median of paired runs {paired:.2}x)",
            ms(ours),
            ms(theirs),
            ours.as_secs_f64() / theirs.as_secs_f64()
        ),
        target: "≤ 1.10x".into(),
    })
}
