//! HEAP bootstrapping at the CI set against the plaintext.

use ckks::precision::{InputGenerator, median_precision_bits, precision_bits, uniform_complex};
use ckks::{Context, Encoder, Evaluator, Parameters};
use fhe_math::backend::RingBackend;
use fhe_math::cpu::CpuBackend;
use fhe_math::sampler::Seed;
use heap::{
    Error, HEAP_N10_INSECURE, HEAP_N13, HeapBootstrapper, HeapKeys, budget, user_relin_key,
};
use rlwe::encrypt;

struct Setup {
    ctx: Context<CpuBackend>,
    sk: rlwe::SecretKey<CpuBackend>,
    boot: HeapBootstrapper<CpuBackend>,
}

fn setup(slots: usize) -> Setup {
    let params = Parameters::new(&HEAP_N10_INSECURE.ckks).unwrap();
    let ctx = Context::cpu(params).unwrap();
    let sk = ctx
        .key_generator()
        .secret_key_from_seed(Seed([7; 32]))
        .unwrap();
    let keys = HeapKeys::generate(&ctx, &HEAP_N10_INSECURE, &sk, &Seed([9; 32])).unwrap();
    let boot = HeapBootstrapper::new(&ctx, &HEAP_N10_INSECURE, keys)
        .unwrap()
        .with_slots(slots)
        .unwrap();
    Setup { ctx, sk, boot }
}

#[test]
fn heap_bootstrap_matches_plaintext_within_the_model() {
    let slots = 4;
    let s = setup(slots);
    let enc = Encoder::new(&s.ctx).unwrap();
    let be = s.ctx.backend();
    let z = uniform_complex(&mut InputGenerator::new(1), slots);
    let d0 = s.ctx.params().scale(0).unwrap();
    let ct = encrypt::encrypt_sk(be, &s.sk, &enc.encode_with(&z, 0, d0, slots).unwrap()).unwrap();
    let t = std::time::Instant::now();
    let out = s.boot.heap_bootstrap(&ct).unwrap();
    let elapsed = t.elapsed();
    assert_eq!(out.level(), HEAP_N10_INSECURE.output_level());
    let got = enc
        .decode_slots(&encrypt::decrypt(be, &s.sk, &out).unwrap(), slots)
        .unwrap();
    let bits = precision_bits(&got, &z);
    let p = s.ctx.params();
    let model = budget(
        &HEAP_N10_INSECURE,
        p.moduli_q(),
        d0,
        p.scale(out.level()).unwrap(),
        slots,
    );
    println!(
        "{slots} slots: {bits:.2} bits max, {:.2} median (model {:.2} / {:.2}), {elapsed:.2?}",
        median_precision_bits(&got, &z),
        model.precision_max_bits,
        model.precision_median_bits
    );
    assert!(
        bits >= model.precision_max_bits - 3.0,
        "{bits} bits against the model's {model:?}"
    );
}

fn encrypt_at_level_zero(
    s: &Setup,
    z: &[num_complex::Complex64],
    slots: usize,
) -> rlwe::Ciphertext<CpuBackend> {
    let enc = Encoder::new(&s.ctx).unwrap();
    let d0 = s.ctx.params().scale(0).unwrap();
    encrypt::encrypt_sk(
        s.ctx.backend(),
        &s.sk,
        &enc.encode_with(z, 0, d0, slots).unwrap(),
    )
    .unwrap()
}

/// `z` encoded at level 0 in `slots` slots and encrypted with fixed seeds, so that two
/// setups with the same keys get the same ciphertext words.
fn seeded_level_zero(
    s: &Setup,
    z: &[num_complex::Complex64],
    slots: usize,
) -> rlwe::Ciphertext<CpuBackend> {
    let enc = Encoder::new(&s.ctx).unwrap();
    let pt = enc
        .encode_with(z, 0, s.ctx.params().scale(0).unwrap(), slots)
        .unwrap();
    s.ctx
        .encrypt_sk_with_seeds(&s.sk, &pt, Seed([5; 32]), &Seed([6; 32]))
        .unwrap()
}

/// Bootstrap, square (relinearize, rescale) on the refreshed levels, compare with `z²`.
#[test]
fn heap_bootstrap_then_multiply() {
    let slots = 4;
    let s = setup(slots);
    let be = s.ctx.backend();
    let enc = Encoder::new(&s.ctx).unwrap();
    let eval = Evaluator::new(&s.ctx).unwrap();
    let rlk = user_relin_key(&s.ctx, &HEAP_N10_INSECURE, &s.sk, &Seed([4; 32])).unwrap();
    let z = uniform_complex(&mut InputGenerator::new(2), slots);
    let out = s
        .boot
        .heap_bootstrap(&encrypt_at_level_zero(&s, &z, slots))
        .unwrap();
    let sq = eval.mul_relin_rescale(&out, &out, &rlk).unwrap();
    assert_eq!(sq.level(), HEAP_N10_INSECURE.output_level() - 1);
    let got = enc
        .decode_slots(&encrypt::decrypt(be, &s.sk, &sq).unwrap(), slots)
        .unwrap();
    let want: Vec<_> = z.iter().map(|v| v * v).collect();
    let bits = precision_bits(&got, &want);
    println!("after z²: {bits:.2} bits");
    assert!(bits >= 20.0, "{bits} bits after the product");
}

#[test]
fn heap_bootstrap_rejects_bad_inputs() {
    let s = setup(4);
    let be = s.ctx.backend();
    let enc = Encoder::new(&s.ctx).unwrap();
    let pt = enc
        .encode_with(
            &[num_complex::Complex64::new(0.5, 0.0)],
            1,
            s.ctx.params().scale(1).unwrap(),
            4,
        )
        .unwrap();
    let ct = encrypt::encrypt_sk(be, &s.sk, &pt).unwrap();
    assert!(matches!(
        s.boot.heap_bootstrap(&ct),
        Err(Error::NotAtLevelZero { level: 1 })
    ));
    // A level-0 ciphertext whose scale leaves no margin below q0.
    let big = 2f64.powi(39);
    let pt = enc
        .encode_with(&[num_complex::Complex64::new(0.5, 0.0)], 0, big, 4)
        .unwrap();
    let ct = encrypt::encrypt_sk(be, &s.sk, &pt).unwrap();
    assert!(matches!(
        s.boot.heap_bootstrap(&ct),
        Err(Error::InvalidOperand { .. })
    ));
    let err = setup(4)
        .boot
        .with_slots(3)
        .err()
        .expect("3 slots is refused");
    assert!(matches!(err, Error::InvalidOperand { .. }));
    // A context of another parameter set.
    let other = Context::cpu(Parameters::new(&ckks::params::TEST_N11_INSECURE).unwrap()).unwrap();
    let sk = other
        .key_generator()
        .secret_key_from_seed(Seed([1; 32]))
        .unwrap();
    let keys = HeapKeys::generate(&s.ctx, &HEAP_N10_INSECURE, &s.sk, &Seed([2; 32])).unwrap();
    assert!(matches!(
        HeapBootstrapper::new(&other, &HEAP_N10_INSECURE, keys),
        Err(Error::ParameterMismatch { .. })
    ));
    assert!(matches!(
        HeapKeys::generate(&s.ctx, &HEAP_N10_INSECURE, &sk, &Seed([2; 32])),
        Err(Error::ParameterMismatch { .. })
    ));
}

/// `HEAP_N13` builds, every key fits the 218-bit bound, and the model gives HEAP.md's LWE-side
/// noise (σ 8.51 units of Z_2N) and a failure probability below 2^-50 per coefficient.
#[test]
fn heap_n13_is_secure_and_within_the_budget() {
    let p = Parameters::new(&HEAP_N13.ckks).unwrap();
    HEAP_N13.check().unwrap();
    HEAP_N13.check_security(p.moduli_q(), p.moduli_p()).unwrap();
    let log2_q: f64 = p.moduli_q().iter().map(|&q| (q as f64).log2()).sum();
    assert!(log2_q <= 218.0, "{log2_q}");
    let b = budget(
        &HEAP_N13,
        p.moduli_q(),
        p.scale(0).unwrap(),
        p.scale(2).unwrap(),
        4096,
    );
    println!("HEAP_N13: log2 Q_BR {log2_q:.1}, {b:?}");
    assert!((b.sigma_x - 8.51).abs() < 0.01, "{}", b.sigma_x);
    assert!(
        b.log2_failure_per_coefficient < -79.0,
        "{}",
        b.log2_failure_per_coefficient
    );
    assert!(
        b.precision_max_bits > 20.0 && b.precision_max_bits < 24.0,
        "{}",
        b.precision_max_bits
    );
    // One more limb exceeds the bound.
    let mut wide = HEAP_N13;
    wide.ckks.levels = 6;
    wide.ckks.dnum = 4;
    let pw = Parameters::new(&wide.ckks).unwrap();
    assert!(matches!(
        wide.check_security(pw.moduli_q(), pw.moduli_p()),
        Err(Error::NotSecure { .. })
    ));
}

/// The blind rotations on several threads or one after the other give the same words, and the
/// same seeds give the same keys and output (what the GPU test relies on).
#[test]
fn heap_bootstrap_is_deterministic() {
    let slots = 2;
    let (a, b) = (setup(slots), setup(slots));
    let b = Setup {
        boot: b.boot.with_parallel_rotations(false),
        ..b
    };
    let z = uniform_complex(&mut InputGenerator::new(3), slots);
    let words = |s: &Setup| {
        let ct = seeded_level_zero(s, &z, slots);
        let out = s.boot.heap_bootstrap(&ct).unwrap();
        s.ctx.backend().download(out.poly()).unwrap()
    };
    assert!(words(&a).raw() == words(&b).raw());
}

/// Blind rotations shared with one and with three more bootstrappers (each its own context and
/// copy of the keys, as on other GPUs; each packs its strided share, the first merges) give the
/// same words; three bootstrappers (not a power of two) and a helper with other keys are refused.
#[test]
fn heap_bootstrap_spread_matches_one_bootstrapper() {
    let slots = 4;
    let (a, b, c, d) = (setup(slots), setup(slots), setup(slots), setup(slots));
    let z = uniform_complex(&mut InputGenerator::new(4), slots);
    let ct = seeded_level_zero(&a, &z, slots);
    let be = a.ctx.backend();
    let alone = be
        .download(a.boot.heap_bootstrap(&ct).unwrap().poly())
        .unwrap();
    let spread = a.boot.heap_bootstrap_spread(&ct, &[&b.boot]).unwrap();
    assert!(be.download(spread.poly()).unwrap().raw() == alone.raw());
    let four = a
        .boot
        .heap_bootstrap_spread(&ct, &[&b.boot, &c.boot, &d.boot])
        .unwrap();
    assert!(be.download(four.poly()).unwrap().raw() == alone.raw());
    assert!(matches!(
        a.boot.heap_bootstrap_spread(&ct, &[&b.boot, &c.boot]),
        Err(Error::InvalidOperand { .. })
    ));
    let other_keys = HeapKeys::generate(&a.ctx, &HEAP_N10_INSECURE, &a.sk, &Seed([8; 32])).unwrap();
    let other = HeapBootstrapper::new(&a.ctx, &HEAP_N10_INSECURE, other_keys)
        .unwrap()
        .with_slots(slots)
        .unwrap();
    assert!(matches!(
        a.boot.heap_bootstrap_spread(&ct, &[&other]),
        Err(Error::InvalidOperand { .. })
    ));
}

/// The timed bootstrap gives the words of the untimed one, and its stage times are each
/// positive (the packing runs inside the blind-rotation call without helpers) and together
/// within the call's wall time.
#[test]
fn heap_bootstrap_timed_gives_the_same_words_and_its_stage_times() {
    let slots = 2;
    let s = setup(slots);
    let z = uniform_complex(&mut InputGenerator::new(5), slots);
    let ct = seeded_level_zero(&s, &z, slots);
    let be = s.ctx.backend();
    let plain = be
        .download(s.boot.heap_bootstrap(&ct).unwrap().poly())
        .unwrap();
    let start = std::time::Instant::now();
    let (out, t) = s.boot.heap_bootstrap_spread_timed(&ct, &[]).unwrap();
    let wall = start.elapsed();
    assert!(be.download(out.poly()).unwrap().raw() == plain.raw());
    let stages = [t.encapsulation, t.lwe_side, t.blind_rotation, t.finish];
    assert!(stages.iter().all(|d| !d.is_zero()), "{t:?}");
    assert!(t.packing.is_zero(), "{t:?}");
    assert!(
        stages.iter().sum::<std::time::Duration>() <= wall,
        "{t:?} over {wall:?}"
    );
}

/// Keys written and loaded again bootstrap to the same words; damaged blobs are refused with
/// typed errors.
#[test]
fn heap_keys_round_trip_and_reject_damage() {
    let slots = 2;
    let s = setup(slots);
    let be = s.ctx.backend();
    let bytes = s.boot.keys().to_bytes(be).unwrap();
    let loaded = HeapKeys::from_bytes(&s.ctx, &HEAP_N10_INSECURE, &bytes).unwrap();
    let again = HeapBootstrapper::new(&s.ctx, &HEAP_N10_INSECURE, loaded)
        .unwrap()
        .with_slots(slots)
        .unwrap();
    let z = uniform_complex(&mut InputGenerator::new(7), slots);
    let ct = seeded_level_zero(&s, &z, slots);
    let a = be
        .download(s.boot.heap_bootstrap(&ct).unwrap().poly())
        .unwrap();
    let b = be
        .download(again.heap_bootstrap(&ct).unwrap().poly())
        .unwrap();
    assert!(a.raw() == b.raw());

    let load = |b: &[u8]| HeapKeys::from_bytes(&s.ctx, &HEAP_N10_INSECURE, b);
    let mut bad = bytes.clone();
    bad[0] ^= 1;
    assert!(matches!(load(&bad), Err(Error::Malformed { .. })));
    assert!(matches!(
        load(&bytes[..bytes.len() - 1]),
        Err(Error::Malformed { .. })
    ));
    // A blob of format version 1 (one RGSW key a coefficient, before the key unrolling).
    let mut old = bytes.clone();
    old[4..6].copy_from_slice(&1u16.to_le_bytes());
    assert!(matches!(load(&old), Err(Error::Malformed { .. })));
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(matches!(load(&longer), Err(Error::Malformed { .. })));
    // The last residue of the last row (to_dense) set to 2^63, above every limb.
    let mut big = bytes.clone();
    let end = big.len();
    big[end - 8..].copy_from_slice(&(1u64 << 63).to_le_bytes());
    assert!(matches!(load(&big), Err(Error::Malformed { .. })));
    // Another parameter set: the fingerprint (the first payload word) differs.
    let mut other = bytes.clone();
    other[6] ^= 1;
    assert!(matches!(load(&other), Err(Error::ParameterMismatch { .. })));
}
