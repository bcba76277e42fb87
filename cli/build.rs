//! Links `memlog` for a fast start: position-dependent, with its hot path
//! laid out together.
//!
//! A position-independent executable carried 43,000 relative relocations
//! that the loader applied at every start, writing (and so copying) each of
//! the 200 pages of its read-only data: 0.65 ms of the 2.2 ms that `memlog
//! --version` took, paid again by every hook an agent runs. The trade: the
//! executable's own code sits at a fixed address; its stack, heap and the
//! libraries it loads stay randomised, and the code that parses agents'
//! payloads is safe Rust.
//!
//! The functions that hooks, `record` and `search` run are listed in
//! `hot-path.order` (written by `scripts/hot-path-order`). Left where the
//! linker puts them, they are scattered over 17 MB of code, and `memlog
//! record` touched 54 pages of it; in that order, 13. Release builds pass
//! the list to the linker when it takes one (LLD, Rust's default linker on
//! x86-64 Linux since 1.90; not GNU ld).

use std::path::Path;
use std::process::{Command, Stdio};

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    println!("cargo:rustc-link-arg-bins=-no-pie");
    order_hot_path();
}

fn order_hot_path() {
    println!("cargo:rerun-if-changed=hot-path.order");
    if std::env::var("PROFILE").as_deref() != Ok("release") {
        return;
    }
    let Ok(dir) = std::env::var("CARGO_MANIFEST_DIR") else {
        return;
    };
    let order = Path::new(&dir).join("hot-path.order");
    if !order.is_file() {
        return;
    }
    let args = [
        format!("-Wl,--symbol-ordering-file={}", order.display()),
        // Functions renamed since the list was written are skipped.
        "-Wl,--no-warn-symbol-ordering".to_string(),
    ];
    if linker_takes(&args) {
        for arg in args {
            println!("cargo:rustc-link-arg-bins={arg}");
        }
    }
}

/// Whether the linker this build uses accepts `args`: links an empty
/// program with them, with the same compiler, target, flags and linker.
fn linker_takes(args: &[String]) -> bool {
    let (Ok(rustc), Ok(target), Ok(out)) = (
        std::env::var("RUSTC"),
        std::env::var("TARGET"),
        std::env::var("OUT_DIR"),
    ) else {
        return false;
    };
    let mut probe = Command::new(rustc);
    probe
        .args(["--crate-type", "bin", "--crate-name", "probe", "--target"])
        .arg(&target)
        .arg("-o")
        .arg(Path::new(&out).join("linker-probe"))
        .arg("-");
    if let Ok(flags) = std::env::var("CARGO_ENCODED_RUSTFLAGS") {
        probe.args(flags.split('\x1f').filter(|f| !f.is_empty()));
    }
    if let Ok(linker) = std::env::var("RUSTC_LINKER") {
        probe.arg("-C").arg(format!("linker={linker}"));
    }
    for arg in args {
        probe.arg("-C").arg(format!("link-arg={arg}"));
    }
    let Ok(mut child) = probe
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    else {
        return false;
    };
    if let Some(mut stdin) = child.stdin.take() {
        use std::io::Write;
        let _ = stdin.write_all(b"fn main() {}\n");
    }
    child.wait().is_ok_and(|status| status.success())
}
