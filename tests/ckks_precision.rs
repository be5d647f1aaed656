//! CKKS precision against plaintext computation (bits = -log2 of the max absolute slot error),
//! public-key encryption, scale 2^40, real inputs uniform in [-1, 1].
//!
//! Bounds (issue 2): fresh and add >= 21 bits, multiply-relinearize-rescale >= 19, rotate and
//! conjugate >= 19, secret-key fresh >= 27 at the secure N = 2^13 set; a chain of 10
//! multiply-relinearize-rescale on unit-modulus complex inputs >= 15 at the insecure test set
//! and at the `CAT` preset.

use gpufhe::ckks::params::{CAT, N13, TEST_N11_INSECURE};
use gpufhe::ckks::precision::measure_cpu;

#[test]
fn precision_n13() {
    let r = measure_cpu(&N13, 1, false).unwrap();
    println!("N13: {r:?}");
    assert!(r.fresh_public_key >= 21.0, "fresh: {r:?}");
    assert!(r.add >= 21.0, "add: {r:?}");
    assert!(r.mul_relin_rescale >= 19.0, "multiply: {r:?}");
    assert!(r.rotate >= 19.0, "rotate: {r:?}");
    assert!(r.conjugate >= 19.0, "conjugate: {r:?}");
    assert!(r.fresh_secret_key >= 27.0, "secret-key fresh: {r:?}");
}

#[test]
fn precision_chain_of_ten_insecure_test_set() {
    let r = measure_cpu(&TEST_N11_INSECURE, 2, true).unwrap();
    println!("TEST_N11_INSECURE: {r:?}");
    let chain = r.chain_of_ten.expect("10 levels");
    assert!(chain >= 15.0, "chain precision {chain}");
}

#[test]
fn precision_chain_of_ten_cat() {
    let r = measure_cpu(&CAT, 3, true).unwrap();
    println!("CAT: {r:?}");
    let chain = r.chain_of_ten.expect("16 levels");
    assert!(chain >= 15.0, "chain precision {chain}");
}
