//! The CPU implementation of `RnsBlindRotateBackend` (unrolled keys: one decomposition and
//! three key products a pair of coefficients) against the per-CMux path the bootstrap used
//! before it (binary keys, host monomials and digits, one gadget product per component and
//! step), at the CI set's ring: the two accumulators decrypt to the same phase up to the
//! blind rotation's noise.

mod common;

use ckks::{Context, Parameters};
use common::{case_bit, case_secret, rotation_case, row_refs};
use fhe_math::backend::RingBackend;
use fhe_math::backend::rns_blind_rotate::RnsBlindRotateBackend;
use fhe_math::poly::RnsPoly;
use fhe_math::ring::RingContext;
use fhe_math::sampler::Seed;
use heap::HEAP_N10_INSECURE;
use heap::gadget::{RowMessage, encrypt_rows, gadget_product_acc, to_host_coeff, zero_pair};
use heap::host::{add_assign, mul_monomial, sub_assign};
use num_bigint::BigInt;

/// The phase `acc_0 + acc_1·s` (coefficient form, `s` small), as centred integers modulo `Q`.
fn phase(ring: &RingContext, acc: &RnsPoly, s: &[i64]) -> Vec<BigInt> {
    let n = ring.n();
    let limbs = acc.shape().level + 1;
    let residues: Vec<Vec<u64>> = (0..limbs)
        .map(|l| {
            let q = ring.modulus(l);
            let (a0, a1) = (acc.limb(0, l), acc.limb(1, l));
            (0..n)
                .map(|k| {
                    (0..n).fold(a0[k], |sum, i| {
                        // coefficient k of a1·s gets a1[i]·s[k − i], negated past X^N
                        let (j, neg) = if i <= k {
                            (k - i, false)
                        } else {
                            (n + k - i, true)
                        };
                        let term = match (s[j], neg) {
                            (0, _) => 0,
                            (1, false) | (-1, true) => a1[i],
                            _ => q.neg(a1[i]),
                        };
                        q.add(sum, term)
                    })
                })
                .collect()
        })
        .collect();
    let big_q: BigInt = (0..limbs)
        .map(|l| BigInt::from(ring.modulus(l).value()))
        .product();
    (0..n)
        .map(|k| {
            let mut x = BigInt::from(0);
            for (l, r) in residues.iter().enumerate() {
                let ql = BigInt::from(ring.modulus(l).value());
                let hat = &big_q / &ql;
                let inv = hat.modinv(&ql).expect("coprime limbs");
                x += BigInt::from(r[k]) * &hat * inv;
            }
            x %= &big_q;
            if x > &big_q / 2 { x - &big_q } else { x }
        })
        .collect()
}

#[test]
fn unrolled_batch_rotates_as_the_per_cmux_path() {
    let hp = HEAP_N10_INSECURE;
    let ctx = Context::cpu(Parameters::new(&hp.ckks).unwrap()).unwrap();
    let be = ctx.backend();
    let ring = be.ring().clone();
    let (n, two_n) = (ring.n(), 2 * ring.n());
    let (dim, count) = (6, 4);
    let (g, rows, test, batch) = rotation_case(&ctx, &hp, dim, count);
    let got = be
        .rns_blind_rotate(&g, &row_refs(&rows), &test, &batch)
        .unwrap();
    assert_eq!(got.len(), count);
    // Binary keys of the same bits under the same secret, for the per-CMux path.
    let s = case_secret(n);
    let mut s_ntt = be.upload_lifted_i64(&s, g.level()).unwrap();
    be.ntt(&mut s_ntt).unwrap();
    let bit_rows: Vec<_> = (0..dim)
        .map(|i| {
            let row = |c: usize| {
                let idx = ((i * 2 + c) * g.digits()) as u32;
                let seed = Seed([7; 32]);
                encrypt_rows(be, &g, &s_ntt, RowMessage::Bit(case_bit(i)), c, &seed, idx).unwrap()
            };
            [row(0), row(1)]
        })
        .collect();
    let big_q: BigInt = (0..=g.level())
        .map(|l| BigInt::from(ring.modulus(l).value()))
        .product();
    // The noise of either path is below 2^100 (HEAP.md §4.3 at this ring); a wrong rotation
    // leaves a difference of the order of Q (2^200 and more).
    let bound: BigInt = BigInt::from(1u8) << 100usize;
    assert!(big_q > (&bound << 80usize));
    for (e, acc_got) in got.iter().enumerate() {
        let mut acc = mul_monomial(&ring, &test, (two_n - batch.b[e] as usize) % two_n);
        for (i, &ai) in batch.a[e * dim..(e + 1) * dim].iter().enumerate() {
            if ai == 0 {
                continue;
            }
            let mut t = mul_monomial(&ring, &acc, ai as usize);
            sub_assign(&ring, &mut t, &acc);
            let mut prod = zero_pair(be, g.level()).unwrap();
            for (c, r) in bit_rows[i].iter().enumerate() {
                gadget_product_acc(be, &g, &t, c, &r.refs(), &mut prod).unwrap();
            }
            add_assign(&ring, &mut acc, &to_host_coeff(be, prod).unwrap());
        }
        let (want, have) = (phase(&ring, &acc, &s), phase(&ring, acc_got, &s));
        let start = phase(&ring, &test, &s);
        let mut moved = false;
        for k in 0..n {
            let diff = &have[k] - &want[k];
            assert!(
                diff.magnitude() < bound.magnitude(),
                "sample {e} coefficient {k}: phases differ by 2^{}",
                diff.bits()
            );
            moved |= (&have[k] - &start[k]).magnitude() > bound.magnitude();
        }
        assert!(moved, "sample {e} was not rotated");
    }
}
