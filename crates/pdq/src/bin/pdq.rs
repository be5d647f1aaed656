//! The `pdq` binary.
fn main() {}
