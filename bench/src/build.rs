//! Index build speed (`--build`): whole-process `memlog rebuild
//! --no-vectors` (full text and database) at 20k and 100k events of the
//! bench's corpus and of realistic agent events, median of a few runs. With
//! `--baseline BIN`, an older memlog runs in turn with this one on a
//! repository it imported itself, and the row gives the ratio of each pair
//! of runs (new / old): pairing keeps the ratio meaningful when the
//! machine's speed drifts.

use std::path::Path;
use std::time::Duration;

use crate::{Corpus, Row, run, size_label};

/// Rebuilds per binary and size.
const RUNS: usize = 5;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

pub fn bench(
    bin: &Path,
    baseline: Option<&Path>,
    seed: u64,
    sizes: &[usize],
    rows: &mut Vec<Row>,
) -> anyhow::Result<()> {
    for corpus in [Corpus::Bench, Corpus::Realistic] {
        for &events in sizes {
            let label = size_label(events);
            let ours_repo = crate::imported_corpus(bin, corpus, seed, events)?;
            let theirs_repo = baseline
                .map(|b| crate::imported_corpus(b, corpus, seed, events))
                .transpose()?;
            let rebuild = ["rebuild", "--no-vectors"];
            // one unmeasured run each: the log's pack files into the page cache
            run(bin, ours_repo.path(), &rebuild)?;
            if let (Some(b), Some(r)) = (baseline, &theirs_repo) {
                run(b, r.path(), &rebuild)?;
            }
            let (mut ours, mut theirs, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
            for _ in 0..RUNS {
                let a = secs(run(bin, ours_repo.path(), &rebuild)?);
                ours.push(a);
                if let (Some(b), Some(r)) = (baseline, &theirs_repo) {
                    let o = secs(run(b, r.path(), &rebuild)?);
                    theirs.push(o);
                    ratios.push(a / o);
                }
            }
            let value = if theirs.is_empty() {
                format!(
                    "{:.2} s ({:.0} events/s)",
                    median(ours.clone()),
                    events as f64 / median(ours)
                )
            } else {
                format!(
                    "{:.2} s against {:.2} s for the baseline binary: new / old **{:.2}** (median of {RUNS} alternated pairs)",
                    median(ours),
                    median(theirs),
                    median(ratios)
                )
            };
            rows.push(Row {
                name: format!(
                    "`memlog rebuild --no-vectors` (full text and database), whole process, {label} events of {}",
                    corpus.label()
                ),
                value,
                target: "no slower than before this round (ratio ≤ 1.0)".into(),
            });
        }
    }
    Ok(())
}
