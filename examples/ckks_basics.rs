//! The whole CKKS pipeline at the `CAT` preset (N = 2^15, 17 ciphertext primes, 3 special
//! primes, dnum 6): key generation, public-key encryption, multiply, relinearize, rescale,
//! rotate, conjugate and decrypt, printing the precision of every step in bits
//! (-log2 of the largest slot error against the same computation on plaintext).
//!
//! Run with `cargo run --release --example ckks_basics`. The last line is
//! `precision_bits: X`, the minimum over the steps.

use gpufhe::ckks::{Context, Encoder, Evaluator, Parameters, params};
use gpufhe::cuda::AnyBackend;
use gpufhe::math::backend::prelude::*;
use gpufhe::math::fft::Complex64;
use gpufhe::rlwe::Ciphertext;
use std::time::Instant;

fn precision_bits(got: &[Complex64], want: &[Complex64]) -> f64 {
    let err = got
        .iter()
        .zip(want)
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max);
    -err.log2()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let params = Parameters::new(&params::CAT)?;
    println!(
        "CKKS at CAT: N = {}, {} + {} primes, dnum {}, log2 QP = {:.1}, scale 2^{}",
        params.n(),
        params.moduli_q().len(),
        params.moduli_p().len(),
        params.dnum(),
        params.log2_qp(),
        params::CAT.scale_bits
    );
    // The GPU when one is usable (FHE_BACKEND=cpu forces the CPU), else the CPU.
    let (backend, why_cpu) = AnyBackend::auto_explained(gpufhe::ckks::context::ring_for(&params)?);
    if let Some(e) = why_cpu {
        println!("no usable GPU ({e}): running on the CPU");
    }
    println!("backend: {}", backend.device_name());
    let ctx = Context::with_backend(params, backend)?;
    let encoder = Encoder::new(&ctx)?;
    let eval = Evaluator::new(&ctx)?;

    let t = Instant::now();
    let keygen = ctx.key_generator();
    let sk = keygen.secret_key()?;
    let pk = keygen.public_key(&sk)?;
    let rlk = keygen.relin_key(&sk)?;
    let gk = keygen.galois_keys(&sk, &eval.galois_elements(&[1], true))?;
    println!("key generation: {:.2?}", t.elapsed());

    // Inputs: complex values of modulus at most 1, deterministic.
    let slots = encoder.max_slots();
    let x: Vec<Complex64> = (0..slots)
        .map(|i| Complex64::from_polar(1.0, 0.001 * i as f64))
        .collect();
    let y: Vec<Complex64> = (0..slots)
        .map(|i| Complex64::new((i as f64 * 0.37).sin(), (i as f64 * 0.11).cos()))
        .collect();
    let top = ctx.params().max_level();
    let decrypt = |ct: &Ciphertext<_>| -> Result<Vec<Complex64>, Box<dyn std::error::Error>> {
        Ok(encoder.decode(&ctx.decrypt(&sk, ct)?)?)
    };
    let mut worst = f64::INFINITY;
    let mut report = |step: &str, got: &[Complex64], want: &[Complex64]| {
        let bits = precision_bits(got, want);
        worst = worst.min(bits);
        println!("{step:<28} precision {bits:6.2} bits");
    };

    let cx = ctx.encrypt_pk(&pk, &encoder.encode(&x, top)?)?;
    let cy = ctx.encrypt_pk(&pk, &encoder.encode(&y, top)?)?;
    report("encrypt + decrypt", &decrypt(&cx)?, &x);

    let xy: Vec<Complex64> = x.iter().zip(&y).map(|(a, b)| a * b).collect();
    let product = eval.mul(&cx, &cy)?;
    report("multiply (3 components)", &decrypt(&product)?, &xy);
    let relinearized = eval.relinearize(product, &rlk)?;
    report("relinearize", &decrypt(&relinearized)?, &xy);
    let rescaled = eval.rescale(&relinearized)?;
    report("rescale", &decrypt(&rescaled)?, &xy);

    let rotated_want: Vec<Complex64> = (0..slots).map(|j| xy[(j + 1) % slots]).collect();
    let rotated = eval.rotate(&rescaled, 1, &gk)?;
    report("rotate by 1", &decrypt(&rotated)?, &rotated_want);

    let conj_want: Vec<Complex64> = rotated_want.iter().map(|v| v.conj()).collect();
    let conjugated = eval.conjugate(&rotated, &gk)?;
    report("conjugate", &decrypt(&conjugated)?, &conj_want);

    println!("precision_bits: {worst:.2}");
    Ok(())
}
