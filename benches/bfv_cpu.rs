//! BFV on the CPU backend at OpenFHE's `bfv15` shape (`shared/peers/openfhe_bench.py`: N = 2^15,
//! t = 65537, HYBRID with dnum 3; OpenFHE picks log2 Q = 480). Our chain: 8 × 60 bits
//! (log2 Q = 480), 3 special primes of 60 bits, dnum 3 (log2 QP = 660, 128-bit secure).
//!
//! `cargo bench --bench bfv_cpu`

mod common;

use common::quick_group;
use criterion::{Criterion, criterion_group, criterion_main};
use gpufhe::bfv::RowRotations;
use gpufhe::bfv::{Context, Decryptor, Evaluator, ParametersLiteral, Security, params};
use test_support::random_values;

/// OpenFHE's `bfv15` shape with our prime selection.
const OPENFHE_BFV15: ParametersLiteral = ParametersLiteral {
    log_n: 15,
    levels: 7,
    first_prime_bits: 60,
    prime_bits: 60,
    special_primes: 3,
    special_prime_bits: 60,
    dnum: 3,
    plaintext_modulus: 65537,
    security: Security::Bits128,
};

fn bfv_cpu(c: &mut Criterion) {
    let params = params::new(&OPENFHE_BFV15).expect("parameters");
    let ctx = Context::cpu(params.clone()).unwrap();
    let enc = ctx.encoder();
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

    let mut g = quick_group(c, "bfv/OPENFHE_BFV15");
    g.bench_function("encrypt", |b| b.iter(|| ctx.encrypt_pk(&pk, &px).unwrap()));
    g.bench_function("add", |b| b.iter(|| eval.add(&cx, &cy).unwrap()));
    g.bench_function("multiply", |b| b.iter(|| eval.mul(&cx, &cy).unwrap()));
    g.bench_function("mul_relin", |b| {
        b.iter(|| eval.mul_relin(&cx, &cy, &rlk).unwrap())
    });
    g.bench_function("rotate_1", |b| {
        b.iter(|| eval.rotate_rows(&cx, 1, &gk).unwrap())
    });
    g.finish();
}

/// Decryption and the exact noise budget at the `PHANTOM_INT` preset (N = 2^15, 14 primes).
fn bfv_decrypt(c: &mut Criterion) {
    let params = params::new(&params::PHANTOM_INT).expect("parameters");
    let ctx = Context::cpu(params.clone()).unwrap();
    let kg = ctx.key_generator();
    let sk = kg.secret_key().unwrap();
    let pk = kg.public_key(&sk).unwrap();
    let (n, t) = (params.n(), params.t());
    let px = ctx
        .encoder()
        .encode(&random_values(1, n, t), params.max_level())
        .unwrap();
    let cx = ctx.encrypt_pk(&pk, &px).unwrap();
    let dec = Decryptor::new(&ctx, &sk);

    let mut g = quick_group(c, "bfv/PHANTOM_INT");
    g.bench_function("decrypt", |b| b.iter(|| dec.decrypt(&cx).unwrap()));
    g.bench_function("noise_budget", |b| {
        b.iter(|| dec.noise_budget(&cx).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bfv_cpu, bfv_decrypt);
criterion_main!(benches);
