//! Comparisons of encrypted words against the plaintext predicates, every slot checked.

mod common;

use bgv::params::TEST_N11_INSECURE;
use common::{Setup, TEST_N11_DEEP, cpu_ctx};
use compare::{Predicate, WordType};
use test_support::SplitMix;

const ALL: [Predicate; 6] = [
    Predicate::Lt,
    Predicate::Le,
    Predicate::Gt,
    Predicate::Ge,
    Predicate::Eq,
    Predicate::Ne,
];

#[test]
fn small_words_all_predicates_with_measured_levels() {
    let s = Setup::new(cpu_ctx(&TEST_N11_INSECURE), WordType::U8, 4);
    let mut r = SplitMix::new(3);
    let n = 300;
    let a: Vec<i128> = (0..n).map(|_| r.below(256) as i128).collect();
    let mut b: Vec<i128> = (0..n).map(|_| r.below(256) as i128).collect();
    for i in 0..n / 4 {
        b[i] = a[i];
    }
    let ca = s.cmp.encrypt(&s.pk, &a).unwrap();
    let cb = s.cmp.encrypt(&s.pk, &b).unwrap();
    let top = ca.level();
    for p in ALL {
        let res = s.cmp.compare(&ca, &cb, p).unwrap();
        s.check_bits(&res, &a, &b, p);
        assert_eq!(top - res.level(), s.cmp.levels(p), "{p:?}");
        let res = s.cmp.compare_plain(&ca, &b, p).unwrap();
        s.check_bits(&res, &a, &b, p);
    }
}
