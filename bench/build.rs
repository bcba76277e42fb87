//! Links the bench's binaries as `memlog` is linked (position-dependent,
//! see `cli/build.rs`), so that the hello world `--lean` holds `memlog
//! --version` against is built the same way.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
