//! A hello world, built with the release profile beside `memlog`: the
//! floor a process start costs on this machine, for `memlog-bench --lean`
//! to hold `memlog --version` against.

fn main() {
    println!("hello, world");
}
