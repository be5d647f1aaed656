//! Sort and minimum of small encrypted arrays against the plaintext sort, with duplicates,
//! extremes and the measured levels.

mod common;

use common::{Setup, TEST_N11_DEEP, cpu_ctx};
use compare::{ArrayOp, Error, WordType};
use test_support::SplitMix;

#[test]
fn sort_and_min_match_plaintext() {
    let ctx = cpu_ctx(&TEST_N11_DEEP);
    let s8 = Setup::new(ctx.clone(), WordType::I8, 4);
    let s32 = Setup::new(ctx, WordType::U32, 4);
    let mut r = SplitMix::new(5);
    let dec8 = s8.dec();
    let dec32 = s32.dec();
    // (setup, values, op)
    let cases: Vec<(&Setup<_>, &_, Vec<i128>)> = vec![
        (&s8, &dec8, vec![5, -3, 5, 127, -128, 0, -3, 1]),
        (&s8, &dec8, vec![9, 2, 7]),
        (
            &s8,
            &dec8,
            (0..16).map(|_| r.below(256) as i128 - 128).collect(),
        ),
        (&s32, &dec32, vec![u32::MAX as i128, 0, 77, 1 << 31]),
        (
            &s32,
            &dec32,
            (0..16)
                .map(|i| {
                    if i % 5 == 0 {
                        42
                    } else {
                        r.below(1 << 32) as i128
                    }
                })
                .collect(),
        ),
    ];
    for (s, dec, v) in cases {
        let k = v.len();
        let mut sorted = v.clone();
        sorted.sort();
        for op in [ArrayOp::Sort, ArrayOp::Min] {
            let input = match s.cmp.encrypt_array(&s.pk, &v, op) {
                Ok(i) => i,
                Err(Error::InvalidArgument { .. }) if op == ArrayOp::Sort && k > 8 => continue,
                Err(e) => panic!("{e}"),
            };
            let top = input_level(&s.cmp);
            let out = match op {
                ArrayOp::Sort => s.cmp.sort(&input).unwrap(),
                ArrayOp::Min => s.cmp.array_min(&input).unwrap(),
            };
            let want: Vec<i128> = match op {
                ArrayOp::Sort => sorted.clone(),
                ArrayOp::Min => vec![sorted[0]],
            };
            assert_eq!(s.cmp.decrypt(dec, &out).unwrap(), want, "{op:?} of {v:?}");
            let levels = match op {
                ArrayOp::Sort => s.cmp.sort_levels(k),
                ArrayOp::Min => s.cmp.min_levels(k),
            };
            assert_eq!(top - out.level(), levels, "{op:?} of {k}");
            assert!(!out.is_clean());
        }
    }
}

fn input_level<B: fhe_math::backend::IntegerBackend>(c: &compare::Comparator<B>) -> usize {
    c.context().params().max_level()
}
