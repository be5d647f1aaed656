//! Comparisons of encrypted words against the plaintext predicates, every slot checked (the
//! lead slots hold the predicate, all others 0), and the levels consumed against
//! [`compare::Comparator::levels`].

mod common;

use bgv::params::TEST_N11_INSECURE;
use common::{Setup, TEST_N11_DEEP, cpu_ctx};
use compare::{Error, Predicate, WordType};
use test_support::SplitMix;

const ALL: [Predicate; 6] = [
    Predicate::Lt,
    Predicate::Le,
    Predicate::Gt,
    Predicate::Ge,
    Predicate::Eq,
    Predicate::Ne,
];

/// Pairs of edge values of `w` with digits of `d` bits: the extremes, equal words, words
/// differing only in the lowest or only in the highest digit, then random pairs up to `n`.
fn edge_pairs(w: WordType, d: u32, n: usize, seed: u64) -> (Vec<i128>, Vec<i128>) {
    let (min, max) = (w.min(), w.max());
    let top = 1i128 << (d * (w.bits().div_ceil(d) - 1));
    let mut r = SplitMix::new(seed);
    let mut rand = || {
        let u = r.next_u64() as i128 & ((1i128 << w.bits()) - 1);
        w.from_offset(u as u64)
    };
    let mut a = vec![min, max, min, max, 0, 0, min + 1, max - 1, min, max];
    let mut b = vec![min, max, max, min, 0, 1, min, max, min + 1, max - 1];
    for _ in 0..8 {
        // Only the lowest digit differs; only the highest digit differs.
        let x = rand() & !1 & !(top * ((1 << d) - 1));
        let x = x.clamp(min, max - 1);
        a.extend([x, x + 1, x, x]);
        let y = if x + top <= max { x + top } else { x - top };
        b.extend([x + 1, x, y, x]);
    }
    while a.len() < n {
        let x = rand();
        a.push(x);
        b.push(rand());
    }
    (a, b)
}

#[test]
fn all_predicates_with_measured_levels_against_ciphertexts_and_constants() {
    let s = Setup::new(cpu_ctx(&TEST_N11_INSECURE), WordType::U8, 4);
    let (a, b) = edge_pairs(WordType::U8, 4, 300, 3);
    let ca = s.cmp.encrypt(&s.pk, &a).unwrap();
    let cb = s.cmp.encrypt(&s.pk, &b).unwrap();
    let top = ca.level();
    for p in ALL {
        let before = s.cmp.counters();
        let res = s.cmp.compare(&ca, &cb, p).unwrap();
        s.check_bits(&res, &a, &b, p);
        assert_eq!(top - res.level(), s.cmp.levels(p), "{p:?}");
        s.check_counted(before, p);
        let res = s.cmp.compare_plain(&ca, &b, p).unwrap();
        s.check_bits(&res, &a, &b, p);
        assert_eq!(top - res.level(), s.cmp.levels(p), "{p:?} (constants)");
    }
    let res = s.cmp.lt_scalar(&ca, 77).unwrap();
    s.check_bits(&res, &a, &vec![77; a.len()], Predicate::Lt);
}

#[test]
fn exhaustive_8_bit_lt_and_eq() {
    // 2^16 pairs in 64 ciphertexts of 1024 words (base 2^4: blocks of 2 slots at N = 2^11).
    let s = Setup::new(cpu_ctx(&TEST_N11_INSECURE), WordType::U8, 4);
    let a: Vec<i128> = (0..1 << 16).map(|i| (i >> 8) as i128).collect();
    let b: Vec<i128> = (0..1 << 16).map(|i| (i & 255) as i128).collect();
    let ca = s.cmp.encrypt(&s.pk, &a).unwrap();
    let cb = s.cmp.encrypt(&s.pk, &b).unwrap();
    assert_eq!(ca.ciphertexts().len(), 64);
    let dec = s.dec();
    for p in [Predicate::Lt, Predicate::Eq] {
        let got = s
            .cmp
            .decrypt_bits(&dec, &s.cmp.compare(&ca, &cb, p).unwrap())
            .unwrap();
        for (i, &g) in got.iter().enumerate() {
            assert_eq!(g, u64::from(p.eval(a[i], b[i])), "{p:?} {} {}", a[i], b[i]);
        }
    }
}

#[test]
fn wide_words_random_and_edges() {
    let ctx = cpu_ctx(&TEST_N11_DEEP);
    for (w, d) in [
        (WordType::U16, 4),
        (WordType::I32, 8),
        (WordType::U64, 8),
        (WordType::I64, 4),
    ] {
        let s = Setup::new(ctx.clone(), w, d);
        let (a, b) = edge_pairs(w, d, 60, d as u64 + w.bits() as u64);
        let ca = s.cmp.encrypt(&s.pk, &a).unwrap();
        let cb = s.cmp.encrypt(&s.pk, &b).unwrap();
        assert_eq!(s.cmp.decrypt(&s.dec(), &ca).unwrap(), a, "{w:?}");
        let top = ca.level();
        for p in [Predicate::Lt, Predicate::Eq] {
            let before = s.cmp.counters();
            let res = s.cmp.compare(&ca, &cb, p).unwrap();
            s.check_counted(before, p);
            s.check_bits(&res, &a, &b, p);
            assert_eq!(top - res.level(), s.cmp.levels(p), "{w:?} base 2^{d} {p:?}");
        }
        let res = s.cmp.gt_plain(&ca, &b).unwrap();
        s.check_bits(&res, &a, &b, Predicate::Gt);
    }
}

#[test]
fn errors_are_typed() {
    let s = Setup::new(cpu_ctx(&TEST_N11_INSECURE), WordType::I8, 4);
    assert!(matches!(
        s.cmp.encrypt(&s.pk, &[128]),
        Err(Error::ValueOutOfRange { value: 128, .. })
    ));
    assert!(matches!(
        s.cmp.encrypt_i64(&s.pk, &[-129]),
        Err(Error::ValueOutOfRange { value: -129, .. })
    ));
    let ca = s.cmp.encrypt_i64(&s.pk, &[-128, 127, 0]).unwrap();
    let cb = s.cmp.encrypt_i64(&s.pk, &[1, 2]).unwrap();
    assert!(matches!(s.cmp.lt(&ca, &cb), Err(Error::Mismatch { .. })));
    assert!(matches!(
        s.cmp.lt_plain(&ca, &[0, 0, 200]),
        Err(Error::ValueOutOfRange { value: 200, .. })
    ));
    // A result has too few levels left for another comparison.
    let r = s.cmp.eq(&ca, &ca).unwrap();
    let low = compare::EncryptedWords::from_parts(r.into_ciphertexts(), 3, true);
    assert!(matches!(
        s.cmp.lt(&low, &low),
        Err(Error::NotEnoughLevels { .. })
    ));
}

/// The cost table of the crate documentation: levels, products and rotations per ciphertext.
#[test]
fn circuit_costs_match_the_documented_table() {
    let ctx = cpu_ctx(&TEST_N11_DEEP);
    for (w, d, lt, eq) in [
        (WordType::U8, 4, (7, 12, 1), (6, 9, 1)),
        (WordType::U8, 8, (11, 49, 0), (10, 34, 0)),
        (WordType::U32, 4, (9, 16, 5), (8, 11, 3)),
        (WordType::U32, 8, (12, 52, 3), (11, 36, 2)),
        (WordType::U64, 2, (8, 14, 9), (8, 8, 5)),
        (WordType::U64, 4, (10, 18, 7), (9, 12, 4)),
        (WordType::U64, 8, (13, 54, 5), (12, 37, 3)),
    ] {
        let s = Setup::new(ctx.clone(), w, d);
        for (p, (levels, products, rotations)) in [(Predicate::Lt, lt), (Predicate::Eq, eq)] {
            let c = s.cmp.cost(p);
            assert_eq!(
                (c.levels, c.products, c.rotations),
                (levels, products, rotations),
                "{w:?} base 2^{d} {p:?}"
            );
        }
    }
}

#[test]
fn digit_parallelism_gives_the_same_bits() {
    let s = Setup::new(cpu_ctx(&TEST_N11_DEEP), WordType::U64, 4);
    let (a, b) = edge_pairs(WordType::U64, 4, 128, 11);
    let ca = s.cmp.encrypt(&s.pk, &a).unwrap();
    let cb = s.cmp.encrypt(&s.pk, &b).unwrap();
    let be = s.cmp.context().backend();
    let mut runs = Vec::new();
    for on in [true, false] {
        s.cmp.set_digit_parallelism(on);
        let clock = std::time::Instant::now();
        let r = s.cmp.lt(&ca, &cb).unwrap();
        println!("digit parallelism {on}: {:?}", clock.elapsed());
        s.check_bits(&r, &a, &b, Predicate::Lt);
        runs.push(test_support::active_limbs(be, r.ciphertexts()[0].inner().poly()).unwrap());
    }
    assert!(
        runs[0] == runs[1],
        "parallel and sequential circuits differ"
    );
}
