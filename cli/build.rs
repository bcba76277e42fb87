//! Links `memlog` as a position-dependent executable. A position-independent
//! one had 43,000 relative relocations for the loader to apply at every
//! start, which wrote (and so copied) every page of its read-only data: 190
//! of the 300 page faults that `memlog --version` took beyond a hello world,
//! and most of its start-up time. Every hook and one-shot command paid them.
//! The libraries it loads stay randomised; the executable's own addresses
//! are fixed.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
