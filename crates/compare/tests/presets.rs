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
        (620.0, 11, 10, 2048),
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
