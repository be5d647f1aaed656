//! The pieces of CKKS key switching and rescaling on the CPU backend, to see where the time of
//! `relinearize` / `rotate` / `rescale` goes (ids `parts/<SET>/<piece>`).
//!
//! Pieces: one forward and one inverse NTT of a single limb, the NTT of a whole top-level
//! 2-component ciphertext, the tensor product, `mod_up` of one component (all digits),
//! `key_product` (inner product with the key over Q·P, with and without a Galois map),
//! `mod_down_into` (both components), the fast basis conversion of one digit alone, the
//! automorphism of a ciphertext, and `rescale`. Sets: `CKKS_BENCH_SETS` (default `N13,CAT`;
//! `FFT` adds the host special FFT of encoding and decoding at N = 2^15 and 2^16).
//!
//! Run: `cargo bench --bench ckks_parts -- --noplot`.

use criterion::{BatchSize, Criterion, SamplingMode, criterion_group, criterion_main};
use gpufhe::ckks::{self, Context, Encoder, Evaluator, Parameters, ParametersLiteral};
use gpufhe::math::Shape;
use gpufhe::math::backend::prelude::*;
use gpufhe::rlwe::encrypt;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::hint::black_box;
use std::time::Duration;

fn bench_set(c: &mut Criterion, name: &str, lit: &ParametersLiteral, samples: usize) {
    let params = Parameters::new(lit).expect("parameters");
    let ctx = Context::cpu(params.clone()).expect("context");
    let enc = Encoder::new(&ctx).expect("encoder");
    let eval = Evaluator::new(&ctx).expect("evaluator");
    let be = ctx.backend();
    let ring = be.ring().clone();
    let kg = ctx.key_generator();
    let top = params.max_level();
    let n = params.n();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let x: Vec<f64> = (0..enc.max_slots())
        .map(|_| rng.random_range(-1.0..1.0))
        .collect();

    let sk = kg.secret_key().expect("secret key");
    let pk = kg.public_key(&sk).expect("public key");
    let rlk = kg.relin_key(&sk).expect("relin key");
    let g1 = eval.rotation_element(1);
    let gk = kg.galois_keys(&sk, &[g1]).expect("galois key");
    let gkey = &gk.keys[&g1].poly;
    let cx = encrypt::encrypt_pk(be, &pk, &enc.encode_real(&x, top).unwrap()).unwrap();
    let c3 = eval.mul(&cx, &cx).unwrap();
    let ext = be.mod_up(c3.poly(), 2).unwrap();
    let acc_shape = Shape {
        components: 2,
        level: top,
        extended: true,
    };
    let out_shape = Shape {
        components: 2,
        level: top,
        extended: false,
    };
    let mut acc = be.zeros(acc_shape).unwrap();
    be.key_product(&ext, &rlk.0.poly, None, &mut acc).unwrap();
    let limb: Vec<u64> = cx.poly().limb(0, 0).to_vec();
    let t0 = &ring.mod_up_tables(top)[0];
    let digit_in: Vec<Vec<u64>> = t0
        .digit_slots
        .clone()
        .map(|s| cx.poly().limb(0, s).to_vec())
        .collect();
    println!(
        "INFO|parts/{name}|N {n}, {} Q limbs, {} P limbs, {} digits, device {}",
        top + 1,
        ring.p_count(),
        ext.components(),
        be.device_name()
    );

    let mut g = c.benchmark_group(format!("parts/{name}"));
    g.sample_size(samples)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
        .sampling_mode(SamplingMode::Flat);
    g.bench_function("ntt_limb", |b| {
        b.iter_batched_ref(
            || limb.clone(),
            |v| ring.ntt(0).forward(v),
            BatchSize::SmallInput,
        )
    });
    g.bench_function("intt_limb", |b| {
        b.iter_batched_ref(
            || limb.clone(),
            |v| ring.ntt(0).inverse(v),
            BatchSize::SmallInput,
        )
    });
    g.bench_function("ntt_ciphertext", |b| {
        b.iter_batched_ref(
            || cx.poly().clone(),
            |p| be.ntt(p).unwrap(),
            BatchSize::LargeInput,
        )
    });
    g.bench_function("tensor", |b| {
        b.iter(|| be.tensor(black_box(cx.poly()), cx.poly()).unwrap())
    });
    g.bench_function("mod_up", |b| {
        b.iter(|| be.mod_up(black_box(c3.poly()), 2).unwrap())
    });
    g.bench_function("basis_convert_one_digit", |b| {
        let inputs: Vec<&[u64]> = digit_in.iter().map(|v| v.as_slice()).collect();
        let mut outs = vec![vec![0u64; n]; t0.target_slots.len()];
        b.iter(|| {
            let mut o: Vec<&mut [u64]> = outs.iter_mut().map(|v| v.as_mut_slice()).collect();
            t0.converter.convert(black_box(&inputs), &mut o);
        })
    });
    g.bench_function("key_product", |b| {
        b.iter_batched_ref(
            || be.zeros(acc_shape).unwrap(),
            |a| {
                be.key_product(black_box(&ext), &rlk.0.poly, None, a)
                    .unwrap()
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function("key_product_galois", |b| {
        b.iter_batched_ref(
            || be.zeros(acc_shape).unwrap(),
            |a| be.key_product(black_box(&ext), gkey, Some(g1), a).unwrap(),
            BatchSize::LargeInput,
        )
    });
    g.bench_function("mod_down", |b| {
        b.iter_batched_ref(
            || be.zeros(out_shape).unwrap(),
            |o| be.mod_down_into(black_box(&acc), o, false).unwrap(),
            BatchSize::LargeInput,
        )
    });
    g.bench_function("automorphism", |b| {
        b.iter_batched_ref(
            || be.zeros(out_shape).unwrap(),
            |o| {
                be.automorphism_into(black_box(cx.poly()), g1, o, 2)
                    .unwrap()
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function("rescale", |b| {
        b.iter_batched_ref(
            || cx.poly().clone(),
            |p| be.rescale(p).unwrap(),
            BatchSize::LargeInput,
        )
    });
    g.bench_function("zeros_acc", |b| b.iter(|| be.zeros(acc_shape).unwrap()));
    g.finish();
}

fn selected(name: &str) -> bool {
    let sets = std::env::var("CKKS_BENCH_SETS").unwrap_or_else(|_| "N13,CAT".into());
    sets.split(',').any(|s| s.trim().eq_ignore_ascii_case(name))
}

/// The host special FFT of encoding / decoding (full slots), ids `parts/fft_2^k/{encode,decode}`.
fn special_fft(c: &mut Criterion) {
    for log_n in [15u32, 16] {
        let n = 1usize << log_n;
        let fft = gpufhe::math::fft::SpecialFft::new(n).expect("fft");
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let z: Vec<gpufhe::math::fft::Complex64> = (0..n / 2)
            .map(|_| {
                gpufhe::math::fft::Complex64::new(
                    rng.random_range(-1.0..1.0),
                    rng.random_range(-1.0..1.0),
                )
            })
            .collect();
        let mut coeffs = vec![0.0; n];
        let mut g = c.benchmark_group(format!("parts/fft_2^{log_n}"));
        g.bench_function("encode", |b| {
            b.iter(|| fft.encode(black_box(&z), n / 2, &mut coeffs).unwrap())
        });
        g.bench_function("decode", |b| {
            b.iter(|| fft.decode(black_box(&coeffs), n / 2).unwrap())
        });
        g.finish();
    }
}

fn ckks_parts(c: &mut Criterion) {
    if selected("FFT") {
        special_fft(c);
    }
    if selected("N13") {
        bench_set(c, "N13", &ckks::params::N13, 30);
    }
    if selected("CAT") {
        bench_set(c, "CAT", &ckks::params::CAT, 10);
    }
}

criterion_group!(benches, ckks_parts);
criterion_main!(benches);
