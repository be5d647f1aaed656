//! fhe-math's host pieces that decryption and decoding lean on, on the CPU (ids
//! `math/<piece>`): the CRT decoder's scale-and-round, centred reduction mod t and exact
//! magnitude at N = 2^15 over 60 + 13 × 50-bit primes (the integer schemes' PHANTOM_INT chain, as
//! BGV/BFV decryption sees it), the fast basis conversion of 9 limbs into 16 at N = 2^16, and
//! the centred lift of 25 limbs to a double by the fast path (small values) and the big-integer
//! one (random residues).
//!
//! Run: `cargo bench --bench math_parts -- --noplot`.

mod common;

use common::quick_group;
use criterion::{Criterion, criterion_group, criterion_main};
use gpufhe::math::crt_decode::CrtDecoder;
use gpufhe::math::primes::ntt_primes;
use gpufhe::math::{BasisConverter, Modulus, RnsBasis};
use std::hint::black_box;

/// `count` distinct NTT primes of each width in `widths` for degree `n`, in that order.
fn moduli(n: usize, widths: &[(u32, usize)]) -> Vec<Modulus> {
    let mut taken: Vec<u64> = Vec::new();
    for &(bits, count) in widths {
        taken.extend(ntt_primes(bits, 2 * n as u64, count, &taken).expect("primes"));
    }
    taken
        .into_iter()
        .map(|q| Modulus::new(q).expect("modulus"))
        .collect()
}

/// Pseudo-random residues, one limb per modulus.
fn limbs(moduli: &[Modulus], n: usize) -> Vec<Vec<u64>> {
    moduli
        .iter()
        .enumerate()
        .map(|(i, q)| {
            (0..n as u64)
                .map(|c| (c.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (i as u64 * 77)) % q.value())
                .collect()
        })
        .collect()
}

fn crt_decoder(c: &mut Criterion) {
    let n = 1 << 15;
    let basis = moduli(n, &[(60, 1), (50, 13)]);
    let dec = CrtDecoder::new(&basis, Modulus::new(65537).expect("t")).expect("decoder");
    let limbs = limbs(&basis, n);
    let refs: Vec<&[u64]> = limbs.iter().map(|v| v.as_slice()).collect();
    let mut out = vec![0u64; n];
    let mut g = quick_group(c, "math");
    g.bench_function("crt_scale_round_n15_14_limbs", |b| {
        b.iter(|| dec.scale_round(black_box(&refs), &mut out))
    });
    g.bench_function("crt_centred_mod_t_n15_14_limbs", |b| {
        b.iter(|| dec.centred_mod_t(black_box(&refs), 3, &mut out))
    });
    g.bench_function("crt_exact_max_log2_n15_14_limbs", |b| {
        b.iter(|| dec.exact_max_log2(black_box(&refs), true))
    });
    g.finish();
}

fn rns(c: &mut Criterion) {
    let n = 1 << 16;
    let all = moduli(n, &[(60, 9), (61, 16)]);
    let conv = BasisConverter::new(&all[..9], &all[9..]).expect("converter");
    let input = limbs(&all[..9], n);
    let inp: Vec<&[u64]> = input.iter().map(|v| v.as_slice()).collect();
    let mut output = vec![vec![0u64; n]; 16];
    let mut g = quick_group(c, "math");
    g.bench_function("convert_9_to_16_limbs_n16", |b| {
        b.iter(|| {
            let mut out: Vec<&mut [u64]> = output.iter_mut().map(|v| v.as_mut_slice()).collect();
            conv.convert(black_box(&inp), &mut out)
        })
    });
    // Centred lift of 4096 coefficients over 25 limbs (about 1510 bits).
    let basis = RnsBasis::new(all).expect("basis");
    let m = 4096;
    let small: Vec<Vec<u64>> = (0..m)
        .map(|c| basis.decompose_i128((c as i128 - 2048) * 0x1234_5678_9abc_def1_2345))
        .collect();
    let big: Vec<Vec<u64>> = (0..m)
        .map(|c| {
            basis
                .moduli()
                .iter()
                .enumerate()
                .map(|(i, q)| {
                    let h = (c as u64 * 25 + i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                    (h ^ (h >> 29)) % q.value()
                })
                .collect()
        })
        .collect();
    for (name, set) in [
        ("to_f64_centered_4096_fast_path", &small),
        ("to_f64_centered_4096_big_integer_path", &big),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| set.iter().map(|r| basis.to_f64_centered(r)).sum::<f64>())
        });
    }
    g.bench_function("reconstruct_centered_4096", |b| {
        b.iter(|| {
            for r in &big {
                black_box(basis.reconstruct_centered(r));
            }
        })
    });
    g.finish();
}

criterion_group!(benches, crt_decoder, rns);
criterion_main!(benches);
