//! Using comparison results as masks: logic, broadcast, products with lead values and sums,
//! against the plaintext computation.

mod common;

use bgv::params::TEST_N11_INSECURE;
use common::{Setup, cpu_ctx};
use compare::{Predicate, WordType};
use test_support::SplitMix;

#[test]
fn masked_sums_logic_and_broadcast_match_plaintext() {
    let s = Setup::new(cpu_ctx(&TEST_N11_INSECURE), WordType::U16, 4);
    let t = s.cmp.context().params().t();
    let dec = s.dec();
    let mut r = SplitMix::new(9);
    // 1100 words: two ciphertexts of 512 words and a partial third.
    let n = 1100;
    let a: Vec<i128> = (0..n).map(|_| r.below(1 << 16) as i128).collect();
    let b: Vec<i128> = (0..n).map(|_| r.below(1 << 16) as i128).collect();
    let v: Vec<u64> = (0..n).map(|_| r.below(40)).collect();
    let ca = s.cmp.encrypt(&s.pk, &a).unwrap();
    let cb = s.cmp.encrypt(&s.pk, &b).unwrap();
    let lt = s.cmp.lt(&ca, &cb).unwrap();
    let ge_c = s.cmp.ge_scalar(&ca, 30000).unwrap();
    let lt_want: Vec<bool> = (0..n).map(|i| a[i] < b[i]).collect();
    let ge_want: Vec<bool> = (0..n).map(|i| a[i] >= 30000).collect();

    // Σ_j [a_j < b_j]·v_j, in every slot.
    let sum = s
        .cmp
        .sum_bits(&s.cmp.mul_leads_plain(&lt, &v).unwrap())
        .unwrap();
    let want: u64 = (0..n).filter(|&i| lt_want[i]).map(|i| v[i]).sum::<u64>() % t;
    assert!(dec.decrypt(&sum).unwrap().iter().all(|&x| x == want));
    let count = s.cmp.sum_bits(&lt).unwrap();
    let want = lt_want.iter().filter(|&&x| x).count() as u64;
    assert_eq!(dec.decrypt(&count).unwrap()[0], want);

    // Logic keeps the layout (checked slot by slot).
    let check = |bits: &compare::EncryptedBits<_>, f: &dyn Fn(usize) -> bool| {
        let av: Vec<i128> = (0..n).map(|i| i128::from(f(i))).collect();
        s.check_bits(bits, &av, &vec![1; n], Predicate::Eq);
    };
    check(&s.cmp.and(&lt, &ge_c).unwrap(), &|i| {
        lt_want[i] && ge_want[i]
    });
    check(&s.cmp.or(&lt, &ge_c).unwrap(), &|i| {
        lt_want[i] || ge_want[i]
    });
    check(&s.cmp.not(&lt).unwrap(), &|i| !lt_want[i]);

    // Broadcast: every slot of block j holds bit j.
    let l = *s.cmp.layout();
    for (i, ct) in s.cmp.broadcast(&lt).unwrap().iter().enumerate() {
        let slots = dec.decrypt(ct).unwrap();
        for (k, &x) in slots.iter().enumerate() {
            let j = i * l.words_per_ciphertext() + k / l.block();
            assert_eq!(x, u64::from(j < n && lt_want[j]), "slot {k} of ct {i}");
        }
    }
}
