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
    // The same sum with the values folded into the comparison's mask (≥: a complement).
    let weighted = s.cmp.compare_weighted(&ca, &cb, Predicate::Lt, &v).unwrap();
    assert!(
        s.dec()
            .decrypt(&s.cmp.sum_bits(&weighted).unwrap())
            .unwrap()[0]
            == want
    );
    let ge_w = s.cmp.compare_weighted(&ca, &cb, Predicate::Ge, &v).unwrap();
    let want_ge: u64 = (0..n).filter(|&i| !lt_want[i]).map(|i| v[i]).sum::<u64>() % t;
    assert_eq!(
        dec.decrypt(&s.cmp.sum_bits(&ge_w).unwrap()).unwrap()[0],
        want_ge
    );
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

#[test]
fn select_min_max_match_plaintext() {
    let s = Setup::new(common::cpu_ctx(&common::TEST_N11_DEEP), WordType::I32, 4);
    let (a, b) = (
        vec![i32::MIN as i128, i32::MAX as i128, -5, 7, 0, 123456, -1],
        vec![i32::MAX as i128, i32::MIN as i128, -5, -7, 1, 123457, 0],
    );
    let ca = s.cmp.encrypt(&s.pk, &a).unwrap();
    let cb = s.cmp.encrypt(&s.pk, &b).unwrap();
    let top = ca.level();
    let dec = s.dec();
    let mn = s.cmp.min(&ca, &cb).unwrap();
    let mx = s.cmp.max(&ca, &cb).unwrap();
    assert_eq!(top - mn.level(), s.cmp.levels(Predicate::Lt) + 1);
    let want_min: Vec<i128> = a.iter().zip(&b).map(|(x, y)| *x.min(y)).collect();
    let want_max: Vec<i128> = a.iter().zip(&b).map(|(x, y)| *x.max(y)).collect();
    assert_eq!(s.cmp.decrypt(&dec, &mn).unwrap(), want_min);
    assert_eq!(s.cmp.decrypt(&dec, &mx).unwrap(), want_max);
    let c = s.cmp.eq_scalar(&ca, -5).unwrap();
    let sel = s.cmp.select(&c, &ca, &cb).unwrap();
    let want: Vec<i128> = (0..a.len())
        .map(|i| if a[i] == -5 { a[i] } else { b[i] })
        .collect();
    assert_eq!(s.cmp.decrypt(&dec, &sel).unwrap(), want);
}

#[test]
fn compaction_packs_sparse_vectors_into_one_circuit() {
    let s = Setup::new(common::cpu_ctx(&TEST_N11_INSECURE), WordType::U16, 4);
    let mut r = SplitMix::new(21);
    // 512 words per ciphertext, 256 per row: these four fit one ciphertext.
    let lens = [100usize, 200, 150, 40];
    let data: Vec<(Vec<i128>, Vec<i128>)> = lens
        .iter()
        .map(|&n| {
            let a: Vec<i128> = (0..n).map(|_| r.below(1 << 16) as i128).collect();
            let b: Vec<i128> = (0..n)
                .map(|i| {
                    if i % 3 == 0 {
                        a[i]
                    } else {
                        r.below(1 << 16) as i128
                    }
                })
                .collect();
            (a, b)
        })
        .collect();
    let enc: Vec<_> = data
        .iter()
        .map(|(a, b)| {
            (
                s.cmp.encrypt(&s.pk, a).unwrap(),
                s.cmp.encrypt(&s.pk, b).unwrap(),
            )
        })
        .collect();
    let dec = s.dec();
    // Off: one circuit per vector.
    let before = s.cmp.counters();
    let separate: Vec<Vec<u64>> = enc
        .iter()
        .map(|(a, b)| s.cmp.decrypt_bits(&dec, &s.cmp.le(a, b).unwrap()).unwrap())
        .collect();
    let off = s.cmp.counters().0 - before.0;
    // On: packed, one circuit.
    let (pa, packing) = s
        .cmp
        .compact(&enc.iter().map(|e| &e.0).collect::<Vec<_>>())
        .unwrap();
    let (pb, packing_b) = s
        .cmp
        .compact(&enc.iter().map(|e| &e.1).collect::<Vec<_>>())
        .unwrap();
    assert_eq!(packing, packing_b);
    assert_eq!(packing.ciphertexts(), 1);
    let before = s.cmp.counters();
    let packed = s.cmp.le(&pa, &pb).unwrap();
    let on = s.cmp.counters().0 - before.0;
    assert_eq!(off, 4 * on, "compaction: one circuit instead of four");
    let split = packing.split(&s.cmp.decrypt_bits(&dec, &packed).unwrap());
    let unpacked = s.cmp.unpack_bits(&packed, &packing).unwrap();
    for (m, (a, b)) in data.iter().enumerate() {
        let want: Vec<u64> = a.iter().zip(b).map(|(x, y)| u64::from(x <= y)).collect();
        assert_eq!(separate[m], want, "vector {m} alone");
        assert_eq!(split[m], want, "vector {m} packed");
        s.check_bits(&unpacked[m], a, b, Predicate::Le);
    }
}

#[test]
fn non_blocking_comparison_overlaps_other_work() {
    use std::sync::Arc;
    let s = Setup::new(common::cpu_ctx(&TEST_N11_INSECURE), WordType::U32, 4);
    let a: Vec<i128> = (0..200).map(|i| i * 1000).collect();
    let b: Vec<i128> = (0..200).map(|i| 100_000 + (i % 7) * 7).collect();
    let ca = Arc::new(s.cmp.encrypt(&s.pk, &a).unwrap());
    let cb = Arc::new(s.cmp.encrypt(&s.pk, &b).unwrap());
    let Setup { cmp, sk, pk } = s;
    let cmp = Arc::new(cmp);
    let pending = cmp.compare_async(ca.clone(), cb.clone(), Predicate::Gt);
    let scalar = cmp.compare_scalar_async(ca.clone(), 150_000, Predicate::Ge);
    // Meanwhile, other arithmetic on this thread: a² slot-wise.
    let ev = cmp.evaluator();
    let sq = ev
        .mul_relin(
            &ca.ciphertexts()[0],
            &ca.ciphertexts()[0],
            &cmp.keys().relin,
        )
        .unwrap();
    let dec = bgv::Decryptor::new(cmp.context(), &sk);
    let t = cmp.context().params().t();
    let plain_a = dec.decrypt(&ca.ciphertexts()[0]).unwrap();
    assert_eq!(
        dec.decrypt(&sq).unwrap(),
        test_support::mul_slots(&plain_a, &plain_a, t)
    );
    let gt = cmp.decrypt_bits(&dec, &pending.join().unwrap()).unwrap();
    let ge = cmp.decrypt_bits(&dec, &scalar.join().unwrap()).unwrap();
    for i in 0..a.len() {
        assert_eq!(gt[i], u64::from(a[i] > b[i]));
        assert_eq!(ge[i], u64::from(a[i] >= 150_000));
    }
    let _ = pk;
}

#[test]
fn vectors_round_trip_through_bytes_and_bad_blobs_are_refused() {
    let s = Setup::new(common::cpu_ctx(&TEST_N11_INSECURE), WordType::I16, 4);
    let a: Vec<i128> = (0..700).map(|i| i * 37 - 12000).collect();
    let ca = s.cmp.encrypt(&s.pk, &a).unwrap();
    let bytes = s.cmp.words_to_bytes(&ca).unwrap();
    let back = s.cmp.words_from_bytes(&bytes).unwrap();
    assert_eq!(s.cmp.decrypt(&s.dec(), &back).unwrap(), a);
    let lt = s.cmp.lt_scalar(&back, 0).unwrap();
    let lt_back = s
        .cmp
        .bits_from_bytes(&s.cmp.bits_to_bytes(&lt).unwrap())
        .unwrap();
    s.check_bits(&lt_back, &a, &vec![0; a.len()], Predicate::Lt);
    // Truncations, a flipped magic, the wrong kind, trailing bytes: typed errors.
    for cut in [0, 5, 7, 100, bytes.len() - 1] {
        assert!(
            s.cmp.words_from_bytes(&bytes[..cut]).is_err(),
            "cut at {cut}"
        );
    }
    let mut bad = bytes.clone();
    bad[0] ^= 1;
    assert!(matches!(
        s.cmp.words_from_bytes(&bad),
        Err(compare::Error::Malformed { .. })
    ));
    assert!(s.cmp.bits_from_bytes(&bytes).is_err());
    let mut long = bytes.clone();
    long.push(0);
    assert!(s.cmp.words_from_bytes(&long).is_err());
    // Another layout refuses the blob.
    let other = Setup::new(common::cpu_ctx(&TEST_N11_INSECURE), WordType::U16, 4);
    assert!(matches!(
        other.cmp.words_from_bytes(&bytes),
        Err(compare::Error::Malformed { .. })
    ));
}

#[test]
fn lead_values_give_the_words_for_a_masked_sum() {
    let s = Setup::new(common::cpu_ctx(&TEST_N11_INSECURE), WordType::U16, 4);
    let t = s.cmp.context().params().t();
    let mut r = SplitMix::new(8);
    let n = 600;
    let x: Vec<i128> = (0..n).map(|_| r.below(1 << 16) as i128).collect();
    let cx = s.cmp.encrypt(&s.pk, &x).unwrap();
    let vals = s.cmp.lead_values(&cx).unwrap();
    let dec = s.dec();
    let got = s.cmp.decrypt_bits(&dec, &vals).unwrap();
    assert!(got.iter().zip(&x).all(|(&g, &v)| g as i128 == v));
    // Every slot but the leads of the words present is 0.
    let l = *s.cmp.layout();
    for (i, ct) in vals.ciphertexts().iter().enumerate() {
        for (k, &v) in dec.decrypt(ct).unwrap().iter().enumerate() {
            if k % l.block() != 0 || i * l.words_per_ciphertext() + k / l.block() >= n {
                assert_eq!(v, 0, "slot {k} of ct {i}");
            }
        }
    }
    // Σ_j [x_j < 30000]·x_j.
    let cond = s.cmp.lt_scalar(&cx, 30000).unwrap();
    let sum = s
        .cmp
        .sum_bits(&s.cmp.mul_leads(&cond, vals.ciphertexts()).unwrap())
        .unwrap();
    let want = x
        .iter()
        .filter(|&&v| v < 30000)
        .map(|&v| v as u64)
        .sum::<u64>()
        % t;
    assert_eq!(dec.decrypt(&sum).unwrap()[0], want);
}
