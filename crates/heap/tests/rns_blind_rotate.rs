//! The CPU implementation of `RnsBlindRotateBackend` against the per-CMux path the bootstrap
//! used before it (host monomials and digits, one gadget product per component and step), at
//! the CI set's ring: the same words.

mod common;

use ckks::{Context, Parameters};
use common::{rotation_case, row_refs};
use fhe_math::backend::RingBackend;
use fhe_math::backend::rns_blind_rotate::RnsBlindRotateBackend;
use heap::HEAP_N10_INSECURE;
use heap::gadget::{gadget_product_acc, to_host_coeff, zero_pair};
use heap::host::{add_assign, mul_monomial, sub_assign};

#[test]
fn cpu_batch_matches_the_per_cmux_path() {
    let hp = HEAP_N10_INSECURE;
    let ctx = Context::cpu(Parameters::new(&hp.ckks).unwrap()).unwrap();
    let be = ctx.backend();
    let ring = be.ring().clone();
    let two_n = 2 * ring.n();
    let (g, rows, test, batch) = rotation_case(&ctx, &hp, 6, 4);
    let got = be
        .rns_blind_rotate(&g, &row_refs(&rows), &test, &batch)
        .unwrap();
    assert_eq!(got.len(), 4);
    let dim = batch.dimension;
    for (e, acc_got) in got.iter().enumerate() {
        let mut acc = mul_monomial(&ring, &test, (two_n - batch.b[e] as usize) % two_n);
        for (i, &ai) in batch.a[e * dim..(e + 1) * dim].iter().enumerate() {
            if ai == 0 {
                continue;
            }
            let mut t = mul_monomial(&ring, &acc, ai as usize);
            sub_assign(&ring, &mut t, &acc);
            let mut prod = zero_pair(be, g.level()).unwrap();
            for (c, r) in rows[i].iter().enumerate() {
                gadget_product_acc(be, &g, &t, c, &r.refs(), &mut prod).unwrap();
            }
            add_assign(&ring, &mut acc, &to_host_coeff(be, prod).unwrap());
        }
        assert!(acc.raw() == acc_got.raw(), "sample {e}");
        assert!(acc.raw() != test.raw(), "sample {e} was not rotated");
    }
}
