use super::*;
use crate::params::{BOOT_N12_INSECURE, BOOT_N12_SECRET_WEIGHT, Parameters};
use crate::precision::{InputGenerator, precision_bits};
use fhe_math::cpu::CpuBackend;
use fhe_math::fft::Complex64;
use fhe_math::sampler::Seed;
use rlwe::encrypt;
use std::time::Instant;

/// Bits of absolute precision a full-slot bootstrap keeps at `BOOT_N12_INSECURE` (inputs
/// uniform in `[−1, 1]` real and imaginary): measured 22.0 (1.4 s on 2 cores).
const MIN_BITS: f64 = 18.0;

/// One full-slot bootstrap on the CPU against the input slots: precision, output level and
/// scale, and the stage levels.
#[test]
fn bootstrap_full_slots_matches_input() {
    let params = Parameters::new(&BOOT_N12_INSECURE).unwrap();
    let ctx = Context::<CpuBackend>::cpu(params.clone()).unwrap();
    let start = Instant::now();
    let boot = Bootstrapper::new(&ctx, BOOT_N12_CONFIG).unwrap();
    let kg = ctx.key_generator();
    let sk = kg
        .sparse_secret_key_from_seed(Seed([7; 32]), BOOT_N12_SECRET_WEIGHT)
        .unwrap();
    let rlk = kg.relin_key(&sk).unwrap();
    let gk = kg.galois_keys(&sk, &boot.galois_elements()).unwrap();
    println!(
        "setup {:.2?}: {} Galois keys, key switches {:?}",
        start.elapsed(),
        boot.galois_elements().len(),
        boot.key_switches()
    );
    let levels = boot.levels();
    assert_eq!(
        levels,
        BootstrapLevels {
            coeff_to_slot: 3,
            eval_mod: 8,
            slot_to_coeff: 3,
            output_level: 3
        }
    );
    let eval = boot.evaluator();
    let slots = params.slots();
    let mut g = InputGenerator::new(3);
    let z: Vec<Complex64> = (0..slots)
        .map(|_| Complex64::new(2.0 * g.unit() - 1.0, 2.0 * g.unit() - 1.0))
        .collect();
    let pt = eval.encoder().encode(&z, 0).unwrap();
    let ct = encrypt::encrypt_sk(ctx.backend(), &sk, &pt).unwrap();
    let start = Instant::now();
    let out = boot.bootstrap(&ct, &rlk, &gk).unwrap();
    let elapsed = start.elapsed();
    assert_eq!(out.level(), 3);
    assert_eq!(out.scale(), params.scale(3).unwrap());
    let got = eval
        .encoder()
        .decode(&encrypt::decrypt(ctx.backend(), &sk, &out).unwrap())
        .unwrap();
    let bits = precision_bits(&got, &z);
    println!("bootstrap {elapsed:.2?}: {bits:.2} bits");
    assert!(bits >= MIN_BITS, "{bits:.2} bits < {MIN_BITS}");
}
