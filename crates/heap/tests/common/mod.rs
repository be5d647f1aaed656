//! A blind-rotation case shared by the CPU and GPU tests: RGSW rows of known bits under a small
//! secret (fixed seeds, so every backend builds the same words), a test polynomial and a batch.

use ckks::Context;
use fhe_math::backend::KeySwitchBackend;
use fhe_math::backend::rns_blind_rotate::{KEYS_PER_PAIR, RnsGadget, RnsRotationBatch};
use fhe_math::poly::{RnsPoly, Shape};
use fhe_math::sampler::Seed;
use heap::HeapParams;
use heap::gadget::{GadgetRows, RowMessage, encrypt_rows};

/// The gadget, the rows `[p·3 + k][c]` (the unrolled bits `μ_{p,k}` of the bits
/// [`case_bit`]), the test polynomial and `count` samples of dimension `dim` (even; every 5th
/// exponent 0).
pub type Case<B> = (
    RnsGadget,
    Vec<[GadgetRows<B>; 2]>,
    RnsPoly,
    RnsRotationBatch,
);

/// A xorshift64 stream (test inputs only).
fn stream(mut s: u64) -> impl FnMut() -> u64 {
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    }
}

/// Bit `i` of the case's LWE secret.
pub fn case_bit(i: usize) -> bool {
    i % 3 != 1
}

/// The case's ring secret: ternary, coefficient `k` is `(7k mod 3) − 1`.
pub fn case_secret(n: usize) -> Vec<i64> {
    (0..n).map(|k| ((k * 7) % 3) as i64 - 1).collect()
}

/// The case at the top level of `ctx`'s ring with `hp`'s digits.
pub fn rotation_case<B: KeySwitchBackend>(
    ctx: &Context<B>,
    hp: &HeapParams,
    dim: usize,
    count: usize,
) -> Case<B> {
    let be = ctx.backend();
    let ring = be.ring().clone();
    let (n, top) = (ring.n(), ring.max_level());
    let g = RnsGadget::new(&ring, top, hp.digit_limbs).unwrap();
    let s = case_secret(n);
    let mut s_ntt = be.upload_lifted_i64(&s, top).unwrap();
    be.ntt(&mut s_ntt).unwrap();
    let seed = Seed([42; 32]);
    let rows = (0..dim / 2 * KEYS_PER_PAIR)
        .map(|r| {
            let (p, k) = (r / KEYS_PER_PAIR, r % KEYS_PER_PAIR);
            let (x, y) = (case_bit(2 * p), case_bit(2 * p + 1));
            let bit = [x && y, x && !y, !x && y][k];
            let row = |c: usize| {
                let idx = ((r * 2 + c) * g.digits()) as u32;
                encrypt_rows(be, &g, &s_ntt, RowMessage::Bit(bit), c, &seed, idx).unwrap()
            };
            [row(0), row(1)]
        })
        .collect();
    let mut rnd = stream(0x9e37_79b9_7f4a_7c15);
    let mut test = ring
        .zeros(Shape {
            components: 2,
            level: top,
            extended: false,
        })
        .unwrap();
    for c in 0..2 {
        for l in 0..=top {
            let q = ring.modulus(l).value();
            test.limb_mut(c, l).iter_mut().for_each(|w| *w = rnd() % q);
        }
    }
    let two_n = 2 * n as u64;
    let batch = RnsRotationBatch {
        dimension: dim,
        a: (0..count * dim)
            .map(|x| if x % 5 == 0 { 0 } else { rnd() % two_n })
            .collect(),
        b: (0..count).map(|_| rnd() % two_n).collect(),
    };
    (g, rows, test, batch)
}

/// The row references in the trait's order, row `(r·2 + c)·digits + j`.
pub fn row_refs<B: KeySwitchBackend>(rows: &[[GadgetRows<B>; 2]]) -> Vec<&B::Poly> {
    rows.iter()
        .flat_map(|pair| pair.iter().flat_map(|r| r.rows.iter()))
        .collect()
}
