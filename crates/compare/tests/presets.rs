//! The presets: 128-bit secure by the HE-standard bound, deep enough for their comparison.

use bgv::Parameters;
use compare::Predicate;
use compare::presets::ALL;

#[test]
fn presets_are_secure_and_fit_their_comparisons() {
    for p in ALL {
        let params = Parameters::new(&p.params).unwrap();
        let bound = fhe_math::security::max_log_qp_128(p.params.log_n).unwrap();
        assert!(
            params.log2_qp() <= bound,
            "{}: {} > {bound}",
            p.name,
            params.log2_qp()
        );
        let layout = p.layout().unwrap();
        assert!(
            layout.levels(Predicate::Lt) <= params.max_level(),
            "{}",
            p.name
        );
        assert!(params.batching(), "{}", p.name);
    }
    let want = [
        (880.0, 16, 9, 4096),
        (660.0, 12, 10, 2048),
        (540.0, 9, 8, 1024),
    ];
    for (p, (qp, levels, lt, words)) in ALL.iter().zip(want) {
        let params = Parameters::new(&p.params).unwrap();
        let layout = p.layout().unwrap();
        assert!(
            (params.log2_qp() - qp).abs() < 0.5,
            "{}: {}",
            p.name,
            params.log2_qp()
        );
        assert_eq!(params.max_level(), levels, "{}", p.name);
        assert_eq!(layout.levels(Predicate::Lt), lt, "{}", p.name);
        assert_eq!(layout.words_per_ciphertext(), words, "{}", p.name);
    }
}

/// Every predicate, `min` and a weighted comparison on a full ciphertext of words at the two
/// throughput presets, against plaintext (the latency preset runs in
/// `examples/compare_basics.rs`). About 40 s on 2 cores: run with `--ignored`.
#[test]
#[ignore = "slow: two N = 2^15 presets"]
fn throughput_presets_compare_full_ciphertexts() {
    use bgv::{Context, Decryptor};
    use compare::presets::{U32_THROUGHPUT, U64_THROUGHPUT};
    use compare::{Comparator, CompareKeys};
    use test_support::SplitMix;
    for p in [U64_THROUGHPUT, U32_THROUGHPUT] {
        let ctx = Context::cpu(Parameters::new(&p.params).unwrap()).unwrap();
        let layout = p.layout().unwrap();
        let kg = ctx.key_generator();
        let sk = kg.secret_key().unwrap();
        let pk = kg.public_key(&sk).unwrap();
        let keys = CompareKeys::generate(&ctx, &sk, &layout).unwrap();
        let cmp = Comparator::new(&ctx, layout, keys).unwrap();
        let dec = Decryptor::new(&ctx, &sk);
        let w = layout.word();
        let mut r = SplitMix::new(4);
        let mut draw = || w.from_offset(r.next_u64() & (w.max() as u64));
        let n = layout.words_per_ciphertext() - 5;
        let a: Vec<i128> = (0..n).map(|_| draw()).collect();
        let b: Vec<i128> = (0..n)
            .map(|i| if i % 3 == 0 { a[i] } else { draw() })
            .collect();
        let ca = cmp.encrypt(&pk, &a).unwrap();
        let cb = cmp.encrypt(&pk, &b).unwrap();
        let all = [
            Predicate::Lt,
            Predicate::Le,
            Predicate::Gt,
            Predicate::Ge,
            Predicate::Eq,
            Predicate::Ne,
        ];
        for pr in all {
            let got = cmp
                .decrypt_bits(&dec, &cmp.compare(&ca, &cb, pr).unwrap())
                .unwrap();
            let ok = got
                .iter()
                .zip(a.iter().zip(&b))
                .all(|(&g, (&x, &y))| g == u64::from(pr.eval(x, y)));
            assert!(ok, "{} {pr:?}", p.name);
        }
        let m = cmp.min(&ca, &cb).unwrap();
        let want: Vec<i128> = a.iter().zip(&b).map(|(x, y)| *x.min(y)).collect();
        assert_eq!(cmp.decrypt(&dec, &m).unwrap(), want, "{} min", p.name);
        let wts: Vec<u64> = (0..n as u64).map(|i| i % 100).collect();
        let got = cmp
            .decrypt_bits(
                &dec,
                &cmp.compare_weighted(&ca, &cb, Predicate::Lt, &wts).unwrap(),
            )
            .unwrap();
        for i in 0..n {
            assert_eq!(
                got[i],
                if a[i] < b[i] { wts[i] } else { 0 },
                "{} weighted",
                p.name
            );
        }
    }
}
