//! BGV on the CPU backend at OpenFHE's `bgv15` parameters (`shared/peers/openfhe_bench.py`:
//! N = 2^15, multiplicative depth 12, t = 65537, HYBRID with dnum 3, FIXEDMANUAL; OpenFHE picks
//! log2 Q = 585), for the side-by-side table in BENCHMARKS.md. Our chain: 60 + 12 × 44 bits
//! (log2 Q = 588), 4 special primes of 60 bits, dnum 3 (log2 QP = 828, 128-bit secure).
//!
//! `cargo bench --bench bgv_cpu`

mod common;

use common::quick_group;
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use gpufhe::bgv::RowRotations;
use gpufhe::bgv::params::Security;
use gpufhe::bgv::{Context, Decryptor, Encoder, Evaluator, Parameters, ParametersLiteral};
use test_support::random_values;

/// OpenFHE's `bgv15` shape with our prime selection.
const OPENFHE_BGV15: ParametersLiteral = ParametersLiteral {
    log_n: 15,
    levels: 12,
    first_prime_bits: 60,
    prime_bits: 44,
    special_primes: 4,
    special_prime_bits: 60,
    dnum: 3,
    plaintext_modulus: 65537,
    security: Security::Bits128,
};

fn bgv_cpu(c: &mut Criterion) {
    let params = Parameters::new(&OPENFHE_BGV15).expect("parameters");
    let ctx = Context::cpu(params.clone()).unwrap();
    let enc = Encoder::new(&ctx);
    let eval = Evaluator::new(&ctx);
    let kg = ctx.key_generator();
    let sk = kg.secret_key().unwrap();
    let pk = kg.public_key(&sk).unwrap();
    let rlk = kg.relin_key(&sk).unwrap();
    let gk = kg
        .galois_keys(&sk, &eval.galois_elements(&[1], false).unwrap())
        .unwrap();
    let (n, t, top) = (params.n(), params.t(), params.max_level());
    let px = enc.encode(&random_values(1, n, t), top).unwrap();
    let py = enc.encode(&random_values(2, n, t), top).unwrap();
    let cx = ctx.encrypt_pk(&pk, &px).unwrap();
    let cy = ctx.encrypt_pk(&pk, &py).unwrap();

    let mut g = quick_group(c, "bgv/OPENFHE_BGV15");
    g.bench_function("encrypt", |b| b.iter(|| ctx.encrypt_pk(&pk, &px).unwrap()));
    g.bench_function("add", |b| b.iter(|| eval.add(&cx, &cy).unwrap()));
    g.bench_function("mul_relin_no_switch", |b| {
        b.iter(|| eval.relinearize(eval.mul(&cx, &cy).unwrap(), &rlk).unwrap())
    });
    g.bench_function("mod_switch", |b| {
        b.iter_batched(
            || eval.relinearize(eval.mul(&cx, &cy).unwrap(), &rlk).unwrap(),
            |p| eval.mod_switch(&p).unwrap(),
            BatchSize::LargeInput,
        )
    });
    g.bench_function("rotate_1", |b| {
        b.iter(|| eval.rotate_rows(&cx, 1, &gk).unwrap())
    });
    g.finish();
}

/// Decryption at the `PHANTOM_INT` preset (N = 2^15, 14 primes): a fresh ciphertext at the
/// top level (13 levels above 0) and one switched down to level 6.
fn bgv_decrypt(c: &mut Criterion) {
    let params = Parameters::new(&gpufhe::bgv::params::PHANTOM_INT).expect("parameters");
    let ctx = Context::cpu(params.clone()).unwrap();
    let enc = Encoder::new(&ctx);
    let eval = Evaluator::new(&ctx);
    let kg = ctx.key_generator();
    let sk = kg.secret_key().unwrap();
    let pk = kg.public_key(&sk).unwrap();
    let (n, t, top) = (params.n(), params.t(), params.max_level());
    let px = enc.encode(&random_values(1, n, t), top).unwrap();
    let cx = ctx.encrypt_pk(&pk, &px).unwrap();
    let mid = eval.mod_switch_to(&cx, 6).unwrap();
    let dec = Decryptor::new(&ctx, &sk);

    let mut g = quick_group(c, "bgv/PHANTOM_INT");
    g.bench_function("decrypt_top", |b| b.iter(|| dec.decrypt(&cx).unwrap()));
    g.bench_function("decrypt_level6", |b| b.iter(|| dec.decrypt(&mid).unwrap()));
    g.bench_function("noise_budget_top", |b| {
        b.iter(|| dec.noise_budget(&cx).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bgv_cpu, bgv_decrypt);
criterion_main!(benches);
