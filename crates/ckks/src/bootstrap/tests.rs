use super::*;
use crate::params::{BOOT_N12_INSECURE, BOOT_N12_MIXED_INSECURE, BOOT_SECRET_WEIGHT, Parameters};
use crate::precision::{InputGenerator, median_precision_bits, precision_bits, uniform_complex};
use fhe_math::cpu::CpuBackend;
use fhe_math::fft::Complex64;
use fhe_math::sampler::Seed;
use rlwe::encrypt;
use std::time::Instant;

/// Bits of absolute precision a bootstrap keeps at `BOOT_N12_INSECURE` (inputs uniform in
/// `[−1, 1]` real and imaginary): measured 26.4 (median 28.1) for 2048 full slots (1.6 s on
/// 2 cores) and 27.6 (median 28.4) for 64 sparse slots.
const MIN_BITS: f64 = 24.0;

/// Full-slot and sparse-slot (64 slots) bootstraps on the CPU against the input slots:
/// precision, output level and scale, the stage levels, bad inputs.
#[test]
fn bootstrap_full_and_sparse_slots_match_input() {
    let params = Parameters::new(&BOOT_N12_INSECURE).unwrap();
    let ctx = Context::<CpuBackend>::cpu(params.clone()).unwrap();
    let start = Instant::now();
    let full = Bootstrapper::new(&ctx, BOOT_N12_CONFIG).unwrap();
    let sparse = Bootstrapper::with_slots(&ctx, BOOT_N12_CONFIG, 64).unwrap();
    let kg = ctx.key_generator();
    let sk = kg
        .sparse_secret_key_from_seed(Seed([7; 32]), BOOT_SECRET_WEIGHT)
        .unwrap();
    let rlk = kg.relin_key(&sk).unwrap();
    let mut elements = full.galois_elements();
    elements.extend(sparse.galois_elements());
    elements.sort_unstable();
    elements.dedup();
    let gk = kg.galois_keys(&sk, &elements).unwrap();
    println!(
        "setup {:.2?}: {} Galois keys, key switches full {:?}, sparse {:?}",
        start.elapsed(),
        elements.len(),
        full.key_switches(),
        sparse.key_switches()
    );
    let levels = |eval_mod, output_level| BootstrapLevels {
        input_level: 0,
        coeff_to_slot: 3,
        eval_mod,
        slot_to_coeff: 3,
        output_level,
    };
    for (boot, what, want_levels) in [
        (&full, "full", levels(10, 3)),
        (&sparse, "sparse 64", levels(10, 3)),
    ] {
        assert_eq!(boot.levels(), want_levels);
        let eval = boot.evaluator();
        let n = boot.slots();
        let z = uniform_complex(&mut InputGenerator::new(3), n);
        let pt = eval
            .encoder()
            .encode_with(&z, 0, params.scale(0).unwrap(), n)
            .unwrap();
        let ct = encrypt::encrypt_sk(ctx.backend(), &sk, &pt).unwrap();
        let start = Instant::now();
        let out = boot.bootstrap(&ct, &rlk, &gk).unwrap();
        let elapsed = start.elapsed();
        let level = want_levels.output_level;
        assert_eq!(out.level(), level);
        assert_eq!(out.scale(), params.scale(level).unwrap());
        let dec = encrypt::decrypt(ctx.backend(), &sk, &out).unwrap();
        let got = eval.encoder().decode_slots(&dec, n).unwrap();
        let bits = precision_bits(&got, &z);
        println!(
            "{what}: bootstrap {elapsed:.2?}: {bits:.2} bits, median {:.2}",
            median_precision_bits(&got, &z)
        );
        assert!(bits >= MIN_BITS, "{what}: {bits:.2} bits < {MIN_BITS}");
    }
    // Bad configurations and inputs.
    for cfg in [
        BootstrapConfig {
            cts_levels: 0,
            ..BOOT_N12_CONFIG
        },
        BootstrapConfig {
            stc_levels: 12,
            ..BOOT_N12_CONFIG
        },
        BootstrapConfig {
            k: -1.0,
            ..BOOT_N12_CONFIG
        },
        BootstrapConfig {
            double_angle: 8,
            ..BOOT_N12_CONFIG
        },
    ] {
        assert!(matches!(
            Bootstrapper::new(&ctx, cfg),
            Err(Error::Bootstrap { .. })
        ));
    }
    assert!(matches!(
        Bootstrapper::with_slots(&ctx, BOOT_N12_CONFIG, 48),
        Err(Error::Bootstrap { .. })
    ));
    let eval = full.evaluator();
    let pt = eval.encoder().encode(&[], 1).unwrap();
    let ct = encrypt::encrypt_sk(ctx.backend(), &sk, &pt).unwrap();
    let three = eval.mul(&ct, &ct).unwrap();
    assert!(matches!(
        full.mod_raise(&three),
        Err(Error::Bootstrap { .. })
    ));
    let off_ladder = eval
        .encoder()
        .encode_with(&[], 0, 2f64.powi(40), params.slots())
        .unwrap();
    let off_ladder = encrypt::encrypt_sk(ctx.backend(), &sk, &off_ladder).unwrap();
    assert!(matches!(
        full.mod_raise(&off_ladder),
        Err(Error::ScaleMismatch { .. })
    ));
    assert!(matches!(
        full.slot_to_coeff(&[ct], &gk),
        Err(Error::Bootstrap { .. })
    ));
}

/// Bits a bootstrap keeps with a dense main secret and encapsulation: measured 23.3 (median
/// 25.0). Below the sparse-secret figure because every rescale's rounding `e_0 + e_1·s` grows
/// with `‖s‖` (about 10 times larger for a dense secret at `N = 2^12`).
const MIN_BITS_DENSE: f64 = 21.0;

/// A bootstrap of a fresh encryption at the bootstrap's input level under a dense main secret
/// (seed 5) with sparse-secret encapsulation (ephemeral seed 6), everything a test checks kept.
struct DenseRun {
    params: std::sync::Arc<Parameters>,
    ctx: Context<CpuBackend>,
    boot: Bootstrapper<CpuBackend>,
    sk: rlwe::SecretKey<CpuBackend>,
    rlk: rlwe::RelinKey<CpuBackend>,
    gk: rlwe::GaloisKeys<CpuBackend>,
    z: Vec<Complex64>,
    ct: rlwe::Ciphertext<CpuBackend>,
    out: rlwe::Ciphertext<CpuBackend>,
    setup: std::time::Duration,
    elapsed: std::time::Duration,
}

fn dense_encapsulated_run(lit: &crate::ParametersLiteral, config: BootstrapConfig) -> DenseRun {
    let start = Instant::now();
    let params = Parameters::new(lit).unwrap();
    let ctx = Context::<CpuBackend>::cpu(params.clone()).unwrap();
    let boot = Bootstrapper::new(&ctx, config).unwrap();
    let kg = ctx.key_generator();
    let sk = kg.secret_key_from_seed(Seed([5; 32])).unwrap();
    let ephemeral = kg
        .sparse_secret_key_from_seed(Seed([6; 32]), BOOT_SECRET_WEIGHT)
        .unwrap();
    let enc = EncapsulationKeys::generate(&ctx, &sk, &ephemeral).unwrap();
    let rlk = kg.relin_key(&sk).unwrap();
    let gk = kg.galois_keys(&sk, &boot.galois_elements()).unwrap();
    let setup = start.elapsed();
    let z = uniform_complex(&mut InputGenerator::new(4), params.slots());
    let pt = boot
        .evaluator()
        .encoder()
        .encode(&z, boot.levels().input_level)
        .unwrap();
    let ct = encrypt::encrypt_sk(ctx.backend(), &sk, &pt).unwrap();
    let start = Instant::now();
    let out = boot.bootstrap_encapsulated(&ct, &rlk, &gk, &enc).unwrap();
    let elapsed = start.elapsed();
    DenseRun {
        params,
        ctx,
        boot,
        sk,
        rlk,
        gk,
        z,
        ct,
        out,
        setup,
        elapsed,
    }
}

/// A dense main secret with sparse-secret encapsulation: the level-0 key over `q_0·P` only,
/// full slots, against the input.
#[test]
fn bootstrap_dense_secret_with_encapsulation_matches_input() {
    let run = dense_encapsulated_run(&BOOT_N12_INSECURE, BOOT_N12_CONFIG);
    let (ctx, boot, sk, z, out, elapsed) =
        (&run.ctx, &run.boot, &run.sk, &run.z, &run.out, run.elapsed);
    let eval = boot.evaluator();
    assert_eq!(out.level(), boot.levels().output_level);
    let dec = encrypt::decrypt(ctx.backend(), sk, out).unwrap();
    let got = eval.encoder().decode(&dec).unwrap();
    let bits = precision_bits(&got, z);
    println!(
        "dense secret, encapsulated: bootstrap {elapsed:.2?}: {bits:.2} bits, median {:.2}",
        median_precision_bits(&got, z)
    );
    assert!(bits >= MIN_BITS_DENSE, "{bits:.2} bits < {MIN_BITS_DENSE}");
    // Without encapsulation the dense secret's overflow I leaves EvalMod's interval.
    let bad = boot.bootstrap(&run.ct, &run.rlk, &run.gk).unwrap();
    let dec = encrypt::decrypt(ctx.backend(), sk, &bad).unwrap();
    let bits = precision_bits(&eval.encoder().decode(&dec).unwrap(), z);
    println!("dense secret, not encapsulated: {bits:.2} bits");
    assert!(bits < 5.0, "{bits:.2} bits");
}

/// Bits a bootstrap keeps at the mixed `BOOT_N12_MIXED_INSECURE` (sparse secret, full slots).
const MIN_BITS_MIXED: f64 = 24.0;

/// The mixed CI-sized chain: a full-slot bootstrap lands on the 45-bit application ladder
/// (SlotToCoeff's last matrix crosses the step) with the precision of the one-size chain, and
/// the refreshed levels compute: a product, rescaled onto the ladder, against `z²`.
#[test]
fn bootstrap_mixed_chain_lands_on_the_application_ladder() {
    let params = Parameters::new(&BOOT_N12_MIXED_INSECURE).unwrap();
    let ctx = Context::<CpuBackend>::cpu(params.clone()).unwrap();
    let boot = Bootstrapper::new(&ctx, BOOT_N12_CONFIG).unwrap();
    let kg = ctx.key_generator();
    let sk = kg
        .sparse_secret_key_from_seed(Seed([8; 32]), BOOT_SECRET_WEIGHT)
        .unwrap();
    let rlk = kg.relin_key(&sk).unwrap();
    let gk = kg.galois_keys(&sk, &boot.galois_elements()).unwrap();
    let eval = boot.evaluator();
    let level = boot.levels().output_level;
    assert_eq!(level, 3);
    assert_eq!(params.ladder_step(), Some(level + 1));
    let z = uniform_complex(&mut InputGenerator::new(9), params.slots());
    let ct =
        encrypt::encrypt_sk(ctx.backend(), &sk, &eval.encoder().encode(&z, 0).unwrap()).unwrap();
    let start = Instant::now();
    let out = boot.bootstrap(&ct, &rlk, &gk).unwrap();
    let elapsed = start.elapsed();
    assert_eq!(out.level(), level);
    assert_eq!(out.scale(), params.scale(level).unwrap());
    assert!((out.scale().log2() - 45.0).abs() < 0.1);
    let dec = encrypt::decrypt(ctx.backend(), &sk, &out).unwrap();
    let got = eval.encoder().decode(&dec).unwrap();
    let bits = precision_bits(&got, &z);
    println!(
        "mixed chain: bootstrap {elapsed:.2?}: {bits:.2} bits, median {:.2}",
        median_precision_bits(&got, &z)
    );
    assert!(bits >= MIN_BITS_MIXED, "{bits:.2} bits < {MIN_BITS_MIXED}");
    // The refreshed ciphertext at a 45-bit level: its square, rescaled, is on the ladder.
    let sq = eval.mul_relin_rescale(&out, &out, &rlk).unwrap();
    assert_eq!(sq.level(), level - 1);
    assert_eq!(sq.scale(), params.scale(level - 1).unwrap());
    let dec = encrypt::decrypt(ctx.backend(), &sk, &sq).unwrap();
    let want: Vec<_> = z.iter().map(|v| v * v).collect();
    let bits = precision_bits(&eval.encoder().decode(&dec).unwrap(), &want);
    println!("mixed chain: square after bootstrap {bits:.2} bits");
    assert!(bits >= MIN_BITS_MIXED - 2.0, "{bits:.2} bits");
}

/// SlotToCoeff first at the CI-sized chain: the input at level 3 through SlotToCoeff, ModRaise,
/// CoeffToSlot, EvalMod and the landing matrix, out at level 6 on the 45-bit ladder with the
/// input's slots; an input below level 3 is refused.
#[test]
fn bootstrap_slot_to_coeff_first_matches_input() {
    use crate::params::BOOT_N12_STC_FIRST_INSECURE;
    let params = Parameters::new(&BOOT_N12_STC_FIRST_INSECURE).unwrap();
    let ctx = Context::<CpuBackend>::cpu(params.clone()).unwrap();
    let boot = Bootstrapper::new(&ctx, BOOT_N12_STC_FIRST_CONFIG).unwrap();
    assert_eq!(
        boot.levels(),
        BootstrapLevels {
            input_level: 3,
            coeff_to_slot: 3,
            eval_mod: 10,
            slot_to_coeff: 3,
            output_level: 6,
        }
    );
    assert_eq!(params.ladder_step(), Some(7));
    let kg = ctx.key_generator();
    let sk = kg
        .sparse_secret_key_from_seed(Seed([10; 32]), BOOT_SECRET_WEIGHT)
        .unwrap();
    let rlk = kg.relin_key(&sk).unwrap();
    let gk = kg.galois_keys(&sk, &boot.galois_elements()).unwrap();
    let eval = boot.evaluator();
    let z = uniform_complex(&mut InputGenerator::new(11), params.slots());
    // Encrypted at level 5: dropped to the input level 3 first.
    let ct =
        encrypt::encrypt_sk(ctx.backend(), &sk, &eval.encoder().encode(&z, 5).unwrap()).unwrap();
    let start = Instant::now();
    let out = boot.bootstrap(&ct, &rlk, &gk).unwrap();
    let elapsed = start.elapsed();
    assert_eq!(out.level(), 6);
    assert_eq!(out.scale(), params.scale(6).unwrap());
    let dec = encrypt::decrypt(ctx.backend(), &sk, &out).unwrap();
    let got = eval.encoder().decode(&dec).unwrap();
    let bits = precision_bits(&got, &z);
    println!(
        "SlotToCoeff first: bootstrap {elapsed:.2?}: {bits:.2} bits, median {:.2}",
        median_precision_bits(&got, &z)
    );
    assert!(bits >= MIN_BITS_MIXED, "{bits:.2} bits < {MIN_BITS_MIXED}");
    let low =
        encrypt::encrypt_sk(ctx.backend(), &sk, &eval.encoder().encode(&z, 2).unwrap()).unwrap();
    assert!(matches!(
        boot.bootstrap(&low, &rlk, &gk),
        Err(Error::Bootstrap { .. })
    ));
    // Sparse slots are refused.
    assert!(Bootstrapper::with_slots(&ctx, BOOT_N12_STC_FIRST_CONFIG, 64).is_err());
    // A dense main secret with encapsulation, the input at level 3.
    let run = dense_encapsulated_run(&BOOT_N12_STC_FIRST_INSECURE, BOOT_N12_STC_FIRST_CONFIG);
    let dec = encrypt::decrypt(run.ctx.backend(), &run.sk, &run.out).unwrap();
    let got = run.boot.evaluator().encoder().decode(&dec).unwrap();
    let bits = precision_bits(&got, &run.z);
    println!(
        "SlotToCoeff first, dense secret, encapsulated: {bits:.2} bits, median {:.2}",
        median_precision_bits(&got, &run.z)
    );
    assert_eq!(run.out.level(), 6);
    assert!(bits >= MIN_BITS_DENSE, "{bits:.2} bits < {MIN_BITS_DENSE}");
}

/// `BOOT_N16_MIXED` beside `BOOT_N16` on the CPU, same seeds (about 45 s each on 2 cores and
/// up to 13 GB of keys and diagonals; not for CI): a dense secret with encapsulation, full
/// slots, the precision printed and held to the floor of 18 bits; run with
/// `cargo test --release -p ckks --lib bootstrap_n16_presets_on_the_cpu -- --ignored --nocapture`.
#[test]
#[ignore = "slow: N = 2^16 on the CPU (minutes, up to 13 GB)"]
fn bootstrap_n16_presets_on_the_cpu() {
    use crate::bootstrap::{BOOT_N16_CONFIG, BOOT_N16_MIXED_CONFIG};
    use crate::params::{BOOT_N16, BOOT_N16_MIXED};
    n16_preset_on_the_cpu("BOOT_N16", &BOOT_N16, BOOT_N16_CONFIG);
    n16_preset_on_the_cpu("BOOT_N16_MIXED", &BOOT_N16_MIXED, BOOT_N16_MIXED_CONFIG);
}

/// `BOOT_N16_STC_FIRST` on the CPU as [`bootstrap_n16_presets_on_the_cpu`] (not for CI).
#[test]
#[ignore = "slow: N = 2^16 on the CPU (minutes, up to 13 GB)"]
fn bootstrap_n16_stc_first_on_the_cpu() {
    use crate::bootstrap::BOOT_N16_STC_FIRST_CONFIG;
    use crate::params::BOOT_N16_STC_FIRST;
    n16_preset_on_the_cpu(
        "BOOT_N16_STC_FIRST",
        &BOOT_N16_STC_FIRST,
        BOOT_N16_STC_FIRST_CONFIG,
    );
}

/// One dense, encapsulated full-slot bootstrap at an `N = 2^16` preset: 9 levels between its
/// output and its input level, at the ladder's scale, at least 18 bits.
fn n16_preset_on_the_cpu(name: &str, lit: &crate::ParametersLiteral, config: BootstrapConfig) {
    let run = dense_encapsulated_run(lit, config);
    let (params, ctx, sk, z, out, elapsed) = (
        &run.params,
        &run.ctx,
        &run.sk,
        &run.z,
        &run.out,
        run.elapsed,
    );
    let (setup, eval) = (run.setup, run.boot.evaluator());
    let levels = run.boot.levels();
    assert_eq!(levels.output_level - levels.input_level, 9);
    assert_eq!(out.level(), levels.output_level);
    assert_eq!(out.scale(), params.scale(out.level()).unwrap());
    let dec = encrypt::decrypt(ctx.backend(), sk, out).unwrap();
    let got = eval.encoder().decode(&dec).unwrap();
    let bits = precision_bits(&got, z);
    println!(
        "{name} on the CPU: setup {setup:.2?}, bootstrap {elapsed:.2?}: {bits:.2} bits, \
         median {:.2}",
        median_precision_bits(&got, z)
    );
    assert!(bits >= 18.0, "{name}: {bits:.2} bits");
}

/// EvalMod of two halves side by side on a second evaluator gives the words of the two run
/// one after the other; a side evaluator of other parameters is refused.
#[test]
fn side_evaluator_gives_the_same_words() {
    let params = Parameters::new(&BOOT_N12_INSECURE).unwrap();
    let ctx = Context::<CpuBackend>::cpu(params.clone()).unwrap();
    let side_ctx = Context::<CpuBackend>::cpu(params.clone()).unwrap();
    let plain = Bootstrapper::new(&ctx, BOOT_N12_CONFIG).unwrap();
    let boot = Bootstrapper::new(&ctx, BOOT_N12_CONFIG)
        .unwrap()
        .with_side_evaluator(Evaluator::new(&side_ctx).unwrap())
        .unwrap();
    let kg = ctx.key_generator();
    let sk = kg
        .sparse_secret_key_from_seed(Seed([9; 32]), BOOT_SECRET_WEIGHT)
        .unwrap();
    let rlk = kg.relin_key(&sk).unwrap();
    let level = params.max_level() - boot.levels().coeff_to_slot;
    let n = boot.slots();
    let halves: Vec<_> = (0..2)
        .map(|i| {
            let y: Vec<Complex64> = uniform_complex(&mut InputGenerator::new(20 + i), n)
                .iter()
                .map(|z| Complex64::new(z.re / BOOT_N12_CONFIG.k, 0.0))
                .collect();
            let pt = boot.evaluator().encoder().encode(&y, level).unwrap();
            encrypt::encrypt_sk(ctx.backend(), &sk, &pt).unwrap()
        })
        .collect();
    let side = boot.eval_mod_all(&halves, &rlk).unwrap();
    let one_by_one = plain.eval_mod_all(&halves, &rlk).unwrap();
    assert_eq!(side.len(), 2);
    for (a, b) in side.iter().zip(&one_by_one) {
        assert_eq!(a.meta(), b.meta());
        assert_eq!(a.poly(), b.poly());
    }
    let other = Parameters::new(&BOOT_N12_MIXED_INSECURE).unwrap();
    let other_ctx = Context::<CpuBackend>::cpu(other).unwrap();
    assert!(matches!(
        Bootstrapper::new(&ctx, BOOT_N12_CONFIG)
            .unwrap()
            .with_side_evaluator(Evaluator::new(&other_ctx).unwrap()),
        Err(Error::Bootstrap { .. })
    ));
}
