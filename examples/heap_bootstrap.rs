//! CKKS bootstrapping by blind rotation (HEAP, `crates/heap`) at the CI-sized
//! `HEAP_N10_INSECURE` set (N = 2^10; **insecure**, for demonstration and tests): bootstrap a
//! level-0 ciphertext, compute `z²/2` on the refreshed levels (output level 2 → 0), bootstrap again, and print the precision after each step against the same computation
//! on plaintext (max-error bits and median-error bits; inputs with real and imaginary parts
//! uniform in [-1, 1]) beside the model's expectation (`heap::budget`).
//!
//! Run with `cargo run --release --example heap_bootstrap` (sparse 64 slots: 128 blind
//! rotations of 32 CMuxes each per bootstrap). Arguments: `slots=N` (a power of two up to
//! N/2), `n13` for the 128-bit `HEAP_N13` set (N = 2^13, n_t = 918: keys of 6.7 GB, use a GPU
//! and few slots). The backend is `AnyBackend::auto` (`FHE_BACKEND=cpu` forces the CPU). The
//! last line is `precision_bits: X`, the worse of the two bootstraps.

use gpufhe::ckks::precision::{
    InputGenerator, median_precision_bits, precision_bits, uniform_complex,
};
use gpufhe::ckks::{Context, Encoder, Evaluator, Parameters};
use gpufhe::cuda::AnyBackend;
use gpufhe::math::backend::prelude::*;
use gpufhe::math::fft::Complex64;
use gpufhe::math::sampler::Seed;
use gpufhe::rlwe::{Ciphertext, encrypt};
use heap::{HEAP_N10_INSECURE, HEAP_N13, HeapBootstrapper, HeapKeys, budget, user_relin_key};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let hp = if args.iter().any(|a| a == "n13") {
        HEAP_N13
    } else {
        HEAP_N10_INSECURE
    };
    let slots: usize = args
        .iter()
        .find_map(|a| a.strip_prefix("slots=").map(str::parse))
        .transpose()?
        .unwrap_or(64);
    let params = Parameters::new(&hp.ckks)?;
    println!(
        "{}: N = {}, log2 Q_BR = {:.1} ({} limbs, R = top {}), n_t = {}, LWE key switch mod 2^{} \
         (2^{} x {}), K' = {}, sparse weight {}, {slots} slots",
        hp.name,
        params.n(),
        params.log2_q(),
        params.moduli_q().len(),
        hp.rescale_limbs,
        hp.lwe_dimension,
        hp.log_q_ks,
        hp.ks_base_log,
        hp.ks_levels,
        hp.k_prime,
        hp.sparse_weight
    );
    let (backend, why_cpu) = AnyBackend::auto_explained(gpufhe::ckks::context::ring_for(&params)?);
    if let Some(e) = why_cpu {
        println!("no usable GPU ({e}): running on the CPU");
    }
    println!("backend: {}", backend.device_name());
    let ctx = Context::with_backend(params.clone(), backend)?;

    let t = Instant::now();
    let sk = ctx.key_generator().secret_key()?;
    let keys = HeapKeys::generate(&ctx, &hp, &sk, &Seed::random())?;
    let key_bytes = keys.bytes(ctx.backend());
    let rlk = user_relin_key(&ctx, &hp, &sk, &Seed::random())?;
    let boot = HeapBootstrapper::new(&ctx, &hp, keys)?.with_slots(slots)?;
    println!(
        "keys: {:.2?}, {:.1} MiB; {} blind rotations per bootstrap",
        t.elapsed(),
        key_bytes as f64 / (1 << 20) as f64,
        boot.blind_rotations()
    );
    let out_level = hp.output_level();
    let model = budget(
        &hp,
        params.moduli_q(),
        params.scale(0)?,
        params.scale(out_level)?,
        slots,
    );
    println!(
        "model: failure 2^{:.1} per bootstrap, precision {:.1} bits max / {:.1} median",
        model.log2_failure_per_bootstrap, model.precision_max_bits, model.precision_median_bits
    );

    let be = ctx.backend();
    let encoder = Encoder::new(&ctx)?;
    let eval = Evaluator::new(&ctx)?;
    let decode =
        |ct: &Ciphertext<AnyBackend>| -> Result<Vec<Complex64>, Box<dyn std::error::Error>> {
            Ok(encoder.decode_slots(&encrypt::decrypt(be, &sk, ct)?, slots)?)
        };
    let report = |what: &str, got: &[Complex64], want: &[Complex64]| -> f64 {
        let bits = precision_bits(got, want);
        println!(
            "{what}: {bits:.2} bits (max error), {:.2} bits (median error)",
            median_precision_bits(got, want)
        );
        bits
    };

    let z = uniform_complex(&mut InputGenerator::new(2026), slots);
    let pt = encoder.encode_with(&z, 0, params.scale(0)?, slots)?;
    let ct = encrypt::encrypt_sk(be, &sk, &pt)?;

    let t = Instant::now();
    let fresh = boot.heap_bootstrap(&ct)?;
    be.synchronize()?;
    println!(
        "bootstrap 1: {:.2?}, output level {}",
        t.elapsed(),
        fresh.level()
    );
    let first = report("after bootstrap 1", &decode(&fresh)?, &z);

    // z² on the refreshed levels (|z_j|² ≤ 2: halved to stay within the input range).
    let sq = eval.mul_relin_rescale(&fresh, &fresh, &rlk)?;
    let half = eval.rescale(&eval.mul_const(&sq, 0.5)?)?;
    let want: Vec<Complex64> = z.iter().map(|v| v * v * 0.5).collect();
    println!("computed z²/2, level {}", half.level());
    report("after z²/2", &decode(&half)?, &want);

    let t = Instant::now();
    let again = boot.heap_bootstrap(&half)?;
    be.synchronize()?;
    println!(
        "bootstrap 2: {:.2?}, output level {}",
        t.elapsed(),
        again.level()
    );
    let second = report("after bootstrap 2", &decode(&again)?, &want);

    println!("precision_bits: {:.2}", first.min(second));
    Ok(())
}
