//! The built-in starters are embedded with `include_dir!`, which cargo does not know reads
//! `library/`: without this, a starter file added or changed there leaves every binary and
//! test built before with the old library.
fn main() {
    println!("cargo:rerun-if-changed=library");
}
