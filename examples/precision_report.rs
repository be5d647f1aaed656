//! Prints the CKKS precision report (bits per step) at N13, CAT and TEST_N11_INSECURE as JSON,
//! for the side-by-side comparison with OpenFHE in BENCHMARKS.md
//! (`benchmarks/peers/openfhe_ckks_params.py` measures the same steps at the same parameters).
//!
//! `cargo run --release --example precision_report [seed]`

use gpufhe::ckks::params::{CAT, N13, TEST_N11_INSECURE};
use gpufhe::ckks::precision::measure_cpu;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let seed: u64 = std::env::args()
        .nth(1)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(1);
    let mut entries = Vec::new();
    for (name, lit) in [
        ("n13", &N13),
        ("cat", &CAT),
        ("n11_insecure", &TEST_N11_INSECURE),
    ] {
        let report = measure_cpu(lit, seed, true)?;
        entries.push(format!("\"{name}\": {}", serde_json_like(&report)));
    }
    println!("{{{}}}", entries.join(", "));
    Ok(())
}

/// Minimal JSON rendering of the report (avoids a serde_json dependency for one struct).
fn serde_json_like(r: &gpufhe::ckks::precision::PrecisionReport) -> String {
    let chain = r
        .chain_of_ten
        .map_or("null".to_string(), |c| format!("{c:.2}"));
    format!(
        "{{\"fresh_public_key\": {:.2}, \"fresh_secret_key\": {:.2}, \"add\": {:.2}, \"mul_relin_rescale\": {:.2}, \"rotate\": {:.2}, \"conjugate\": {:.2}, \"chain_of_ten\": {chain}}}",
        r.fresh_public_key, r.fresh_secret_key, r.add, r.mul_relin_rescale, r.rotate, r.conjugate
    )
}
