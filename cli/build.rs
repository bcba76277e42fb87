//! Links `memlog` as a position-dependent executable.
//!
//! A position-independent one carried 43,000 relative relocations that the
//! loader applied at every start, writing (and so copying) each of the 200
//! pages of its read-only data: 0.65 ms of the 2.2 ms that `memlog
//! --version` took, paid again by every hook an agent runs. The trade: the
//! executable's own code sits at a fixed address; its stack, heap and the
//! libraries it loads stay randomised, and the code that parses agents'
//! payloads is safe Rust.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
