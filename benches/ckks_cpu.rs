//! CKKS operators on the CPU backend (criterion), at the `N13` and `CAT` presets.
//!
//! Benchmark ids are `ckks/<SET>/<op>`: every CKKS operator of CAT's Table I (encode, decode,
//! encrypt with the public and with the secret key, decrypt, add, multiply without
//! relinearization, multiply by a plaintext, square without relinearization, relinearize,
//! rescale, rotate by one step, rotate by a random step with its exact key, conjugate), plus
//! `square_relin`, `mul_relin`, `mul_relin_rescale`, `rotate_hoisted_8` (steps 1..=8 sharing one
//! `mod_up`), `decrypt_decode` (decrypt then decode, as OpenFHE's `Decrypt`) and key generation
//! (secret, public, relinearization and one Galois key).
//!
//! Every operand is a fresh top-level ciphertext. `CKKS_BENCH_SETS` (comma-separated, default
//! `N13,CAT`) selects the parameter sets; CAT uses 10 flat samples so that a full run takes a few
//! minutes on two cores. Key and ciphertext sizes are printed as `SIZE|...` lines: the real
//! serialized blob lengths (`Context::*_to_bytes`), each beside the size computed from the
//! parameters (limbs × N × 8 bytes, seeded `a` halves counted as a 32-byte seed).
//!
//! Run: `cargo bench --bench ckks_cpu -- --noplot` (see `benchmarks/cpu_compare.sh`).

use criterion::{BatchSize, Criterion, SamplingMode, criterion_group, criterion_main};
use gpufhe::ckks::{self, Context, Encoder, Evaluator, Parameters, ParametersLiteral};
use gpufhe::math::CpuBackend;
use gpufhe::math::backend::prelude::*;
use gpufhe::rlwe::{Ciphertext, encrypt};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::hint::black_box;
use std::time::Duration;

/// Bytes of one seed in the wire format.
const SEED_BYTES: usize = 32;

fn random_real(n: usize, rng: &mut ChaCha8Rng) -> Vec<f64> {
    (0..n).map(|_| rng.random_range(-1.0..1.0)).collect()
}

/// Sizes computed from the parameters: limbs × N × 8 bytes, seeded `a` halves as a 32-byte seed.
struct Computed {
    secret_key: usize,
    public_key: usize,
    switching_key: usize,
    ciphertext: usize,
    ciphertext_seeded: usize,
}

fn computed_sizes(params: &Parameters) -> Computed {
    let limb = params.n() * 8;
    let q = params.moduli_q().len();
    let qp = q + params.moduli_p().len();
    Computed {
        secret_key: SEED_BYTES,
        public_key: q * limb + SEED_BYTES,
        switching_key: params.dnum() * qp * limb + SEED_BYTES,
        ciphertext: 2 * q * limb,
        ciphertext_seeded: q * limb + SEED_BYTES,
    }
}

struct Timing {
    samples: usize,
    warm_up: Duration,
    measure: Duration,
}

fn bench_set(c: &mut Criterion, name: &str, lit: &ParametersLiteral, t: &Timing) {
    let params = Parameters::new(lit).expect("parameters");
    let ctx = Context::cpu(params.clone()).expect("context");
    let enc = Encoder::new(&ctx).expect("encoder");
    let eval = Evaluator::new(&ctx).expect("evaluator");
    let be = ctx.backend();
    let kg = ctx.key_generator();
    let slots = enc.max_slots();
    let top = params.max_level();

    let mut rng = ChaCha8Rng::seed_from_u64(20261122);
    let rand_step = rng.random_range(2..slots as i64);
    println!("INFO|ckks/{name}|device {}", be.device_name());
    println!("INFO|ckks/{name}|rotate_random step {rand_step}");
    let hoisted_steps: Vec<i64> = (1..=8).collect();
    let mut steps = hoisted_steps.clone();
    steps.push(rand_step);

    let sk = kg.secret_key().expect("secret key");
    let pk = kg.public_key(&sk).expect("public key");
    let rlk = kg.relin_key(&sk).expect("relin key");
    let gk = kg
        .galois_keys(&sk, &eval.galois_elements(&steps, true))
        .expect("galois keys");

    let x = random_real(slots, &mut rng);
    let y = random_real(slots, &mut rng);
    let px = enc.encode_real(&x, top).expect("encode");
    let py = enc.encode_real(&y, top).expect("encode");
    let cx = encrypt::encrypt_pk(be, &pk, &px).expect("encrypt");
    let cy = encrypt::encrypt_pk(be, &pk, &py).expect("encrypt");
    let dx = encrypt::decrypt(be, &sk, &cx).expect("decrypt");
    let c3 = eval.mul(&cx, &cy).expect("multiply");
    let m2 = eval.mul_relin(&cx, &cy, &rlk).expect("multiply");
    let dup = |ct: &Ciphertext<CpuBackend>| ct.duplicate(be).expect("duplicate");

    // Sizes: real serialized blob lengths (ctx.*_to_bytes) beside the computed estimate.
    let est = computed_sizes(&params);
    let one_galois = kg
        .galois_keys(&sk, &[eval.rotation_element(1)])
        .expect("galois key");
    let seeded = encrypt::encrypt_sk(be, &sk, &px).expect("encrypt");
    let q_limbs = params.moduli_q().len();
    let qp_limbs = q_limbs + params.moduli_p().len();
    let dnum = params.dnum();
    let sizes = [
        (
            "secret_key",
            ctx.secret_key_to_bytes(&sk).expect("serialize").len(),
            est.secret_key,
            "fingerprint + seed".to_string(),
        ),
        (
            "public_key",
            ctx.public_key_to_bytes(&pk).expect("serialize").len(),
            est.public_key,
            format!("b over Q ({q_limbs} limbs) + seed of a"),
        ),
        (
            "relin_key",
            ctx.relin_key_to_bytes(&rlk).expect("serialize").len(),
            est.switching_key,
            format!("dnum {dnum} x b_j over QP ({qp_limbs} limbs) + seed of the a_j"),
        ),
        (
            "galois_key",
            ctx.galois_keys_to_bytes(&one_galois)
                .expect("serialize")
                .len(),
            est.switching_key,
            format!("one key: dnum {dnum} x b_j over QP ({qp_limbs} limbs) + seed"),
        ),
        (
            "ciphertext",
            ctx.ciphertext_to_bytes(&cx).expect("serialize").len(),
            est.ciphertext,
            format!("fresh public-key ciphertext: 2 components over Q ({q_limbs} limbs)"),
        ),
        (
            "ciphertext_sk_seeded",
            ctx.ciphertext_to_bytes(&seeded).expect("serialize").len(),
            est.ciphertext_seeded,
            "fresh secret-key ciphertext: c0 + seed of c1".to_string(),
        ),
    ];
    for (what, blob, computed, how) in sizes {
        println!(
            "SIZE|ckks/{name}|{what}|{blob}|serialized blob length (ctx.*_to_bytes); computed {computed} = {how}, N = {}, 8 bytes per word",
            params.n()
        );
    }
    drop(one_galois);

    let mut g = c.benchmark_group(format!("ckks/{name}"));
    g.sample_size(t.samples)
        .warm_up_time(t.warm_up)
        .measurement_time(t.measure)
        .sampling_mode(SamplingMode::Flat);

    g.bench_function("encode", |b| {
        b.iter(|| enc.encode_real(black_box(&x), top).unwrap())
    });
    g.bench_function("decode", |b| b.iter(|| enc.decode(black_box(&dx)).unwrap()));
    g.bench_function("encrypt_pk", |b| {
        b.iter(|| encrypt::encrypt_pk(be, &pk, black_box(&px)).unwrap())
    });
    g.bench_function("encrypt_sk", |b| {
        b.iter(|| encrypt::encrypt_sk(be, &sk, black_box(&px)).unwrap())
    });
    g.bench_function("decrypt", |b| {
        b.iter(|| encrypt::decrypt(be, &sk, black_box(&cx)).unwrap())
    });
    g.bench_function("decrypt_decode", |b| {
        b.iter(|| {
            enc.decode(&encrypt::decrypt(be, &sk, black_box(&cx)).unwrap())
                .unwrap()
        })
    });
    g.bench_function("add", |b| b.iter(|| eval.add(black_box(&cx), &cy).unwrap()));
    g.bench_function("multiply", |b| {
        b.iter(|| eval.mul(black_box(&cx), &cy).unwrap())
    });
    g.bench_function("multiply_plain", |b| {
        b.iter(|| eval.mul_plain(black_box(&cx), &py).unwrap())
    });
    g.bench_function("square", |b| {
        b.iter(|| eval.square(black_box(&cx)).unwrap())
    });
    g.bench_function("square_relin", |b| {
        b.iter(|| {
            eval.relinearize(eval.square(black_box(&cx)).unwrap(), &rlk)
                .unwrap()
        })
    });
    g.bench_function("relinearize", |b| {
        b.iter_batched(
            || dup(&c3),
            |t| eval.relinearize(t, &rlk).unwrap(),
            BatchSize::LargeInput,
        )
    });
    g.bench_function("rescale", |b| {
        b.iter(|| eval.rescale(black_box(&m2)).unwrap())
    });
    g.bench_function("mul_relin", |b| {
        b.iter(|| eval.mul_relin(black_box(&cx), &cy, &rlk).unwrap())
    });
    g.bench_function("mul_relin_rescale", |b| {
        b.iter(|| eval.mul_relin_rescale(black_box(&cx), &cy, &rlk).unwrap())
    });
    g.bench_function("rotate_1", |b| {
        b.iter(|| eval.rotate(black_box(&cx), 1, &gk).unwrap())
    });
    g.bench_function("rotate_random", |b| {
        b.iter(|| eval.rotate(black_box(&cx), rand_step, &gk).unwrap())
    });
    g.bench_function("conjugate", |b| {
        b.iter(|| eval.conjugate(black_box(&cx), &gk).unwrap())
    });
    g.bench_function("rotate_hoisted_8", |b| {
        b.iter(|| {
            eval.rotate_hoisted(black_box(&cx), &hoisted_steps, &gk)
                .unwrap()
        })
    });

    let g1 = eval.rotation_element(1);
    g.bench_function("keygen_secret", |b| b.iter(|| kg.secret_key().unwrap()));
    g.bench_function("keygen_public", |b| {
        b.iter(|| kg.public_key(black_box(&sk)).unwrap())
    });
    g.bench_function("keygen_relin", |b| {
        b.iter(|| kg.relin_key(black_box(&sk)).unwrap())
    });
    g.bench_function("keygen_galois_1", |b| {
        b.iter(|| kg.galois_keys(black_box(&sk), &[g1]).unwrap())
    });
    g.finish();
}

fn selected(name: &str) -> bool {
    let sets = std::env::var("CKKS_BENCH_SETS").unwrap_or_else(|_| "N13,CAT".into());
    sets.split(',').any(|s| s.trim().eq_ignore_ascii_case(name))
}

fn ckks_cpu(c: &mut Criterion) {
    if selected("N13") {
        let t = Timing {
            samples: 20,
            warm_up: Duration::from_millis(500),
            measure: Duration::from_secs(2),
        };
        bench_set(c, "N13", &ckks::params::N13, &t);
    }
    if selected("CAT") {
        let t = Timing {
            samples: 10,
            warm_up: Duration::from_millis(500),
            measure: Duration::from_secs(3),
        };
        bench_set(c, "CAT", &ckks::params::CAT, &t);
    }
}

criterion_group!(benches, ckks_cpu);
criterion_main!(benches);
