//! CKKS bootstrapping at the CI-sized `BOOT_N12_INSECURE` preset (N = 2^12, 2048 full slots;
//! **insecure**, for demonstration and tests), with a dense main secret and sparse-secret
//! encapsulation (an ephemeral secret of weight 32 at level 0): bootstrap a
//! level-0 ciphertext, compute on the refreshed levels (`x²/2`, two levels), bootstrap again,
//! and print the precision after each step against the same computation on plaintext
//! (max-error bits `-log2 max_j |got_j − want_j|` and median-error bits; inputs with real and
//! imaginary parts uniform in [-1, 1]).
//!
//! Run with `cargo run --release --example ckks_bootstrap` (0.8-1.7 s per bootstrap on a
//! shared 2-core CPU, EvalMod about half of it; measured 22.7-23.3 bits max, 24.7-25.1 median). The last line is
//! `precision_bits: X`, the worst of the two bootstraps.

use gpufhe::ckks::bootstrap::{BOOT_N12_CONFIG, Bootstrapper, EncapsulationKeys};
use gpufhe::ckks::precision::{
    InputGenerator, median_precision_bits, precision_bits, uniform_complex,
};
use gpufhe::ckks::{Context, Parameters, params};
use gpufhe::cuda::AnyBackend;
use gpufhe::math::backend::prelude::*;
use gpufhe::math::fft::Complex64;
use gpufhe::math::sampler::Seed;
use gpufhe::rlwe::{Ciphertext, encrypt};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let params = Parameters::new(&params::BOOT_N12_INSECURE)?;
    println!(
        "CKKS bootstrapping at BOOT_N12_INSECURE (NOT SECURE): N = {}, {} + {} primes, dnum {}, \
         log2 QP = {:.1}, scale 2^{}",
        params.n(),
        params.moduli_q().len(),
        params.moduli_p().len(),
        params.dnum(),
        params.log2_qp(),
        params::BOOT_N12_INSECURE.scale_bits
    );
    let (backend, why_cpu) = AnyBackend::auto_explained(gpufhe::ckks::context::ring_for(&params)?);
    if let Some(e) = why_cpu {
        println!("no usable GPU ({e}): running on the CPU");
    }
    println!("backend: {}", backend.device_name());
    let ctx = Context::with_backend(params.clone(), backend)?;

    let t = Instant::now();
    let boot = Bootstrapper::new(&ctx, BOOT_N12_CONFIG)?;
    let levels = boot.levels();
    println!(
        "bootstrapper: {:.2?}; levels CoeffToSlot {}, EvalMod {}, SlotToCoeff {}, output level {}; \
         DFT plaintexts {:.1} MiB",
        t.elapsed(),
        levels.coeff_to_slot,
        levels.eval_mod,
        levels.slot_to_coeff,
        levels.output_level,
        boot.plaintext_bytes() as f64 / (1 << 20) as f64
    );
    let t = Instant::now();
    let kg = ctx.key_generator();
    let sk = kg.secret_key()?;
    let ephemeral = kg.sparse_secret_key_from_seed(Seed::random(), params::BOOT_SECRET_WEIGHT)?;
    let encapsulation = EncapsulationKeys::generate(&ctx, &sk, &ephemeral)?;
    let rlk = kg.relin_key(&sk)?;
    let gk = kg.galois_keys(&sk, &boot.galois_elements())?;
    println!(
        "keys: {:.2?}; {} rotation keys, {:.1} MiB in memory",
        t.elapsed(),
        boot.galois_elements().len(),
        boot.rotation_key_bytes() as f64 / (1 << 20) as f64
    );

    let eval = boot.evaluator();
    let encoder = eval.encoder();
    let be = ctx.backend();
    let decode =
        |ct: &Ciphertext<AnyBackend>| -> Result<Vec<Complex64>, Box<dyn std::error::Error>> {
            Ok(encoder.decode(&encrypt::decrypt(be, &sk, ct)?)?)
        };
    let report = |what: &str, got: &[Complex64], want: &[Complex64]| -> f64 {
        let bits = precision_bits(got, want);
        println!(
            "{what}: {bits:.2} bits (max error), {:.2} bits (median error)",
            median_precision_bits(got, want)
        );
        bits
    };

    let z = uniform_complex(&mut InputGenerator::new(2026), encoder.max_slots());
    let ct = encrypt::encrypt_sk(be, &sk, &encoder.encode(&z, 0)?)?;
    println!("input at level {}", ct.level());

    // The first bootstrap stage by stage, to show where the time goes.
    let mut stage = Instant::now();
    let mut lap = |what: &str| {
        be.synchronize().ok();
        let t = stage.elapsed();
        stage = Instant::now();
        format!("{what} {t:.2?}")
    };
    let t = Instant::now();
    let raised = boot.mod_raise_with(&ct, Some(&encapsulation))?;
    let s1 = lap("ModRaise");
    let halves = boot.coeff_to_slot(&raised, &gk)?;
    let s2 = lap("CoeffToSlot");
    let modded = halves
        .iter()
        .map(|h| boot.eval_mod(h, &rlk))
        .collect::<Result<Vec<_>, _>>()?;
    let s3 = lap("EvalMod (both halves)");
    let fresh = boot.slot_to_coeff(&modded, &gk)?;
    let s4 = lap("SlotToCoeff");
    let t1 = t.elapsed();
    println!(
        "bootstrap 1: {t1:.2?} ({s1}, {s2}, {s3}, {s4}), output level {}",
        fresh.level()
    );
    let first = report("after bootstrap 1", &decode(&fresh)?, &z);

    // x²/2 on the refreshed levels: |z_j|²/2 ≤ 1 stays in bootstrapping's range.
    let sq = eval.mul_relin_rescale(&fresh, &fresh, &rlk)?;
    let half = eval.rescale(&eval.mul_const(&sq, 0.5)?)?;
    let want: Vec<Complex64> = z.iter().map(|v| v * v * 0.5).collect();
    println!("computed x²/2, level {}", half.level());
    report("after x²/2", &decode(&half)?, &want);

    let t = Instant::now();
    let again = boot.bootstrap_encapsulated(&half, &rlk, &gk, &encapsulation)?;
    be.synchronize()?;
    let t2 = t.elapsed();
    println!("bootstrap 2: {t2:.2?}, output level {}", again.level());
    let second = report("after bootstrap 2", &decode(&again)?, &want);

    println!("precision_bits: {:.2}", first.min(second));
    Ok(())
}
