//! Polynomial evaluation (power and Chebyshev bases) against the host evaluation, at the
//! insecure N = 2^11 test set (10 levels, 40-bit scales).
//!
//! Precision bound asserted: max error below 2^-15 over all slots for random polynomials of
//! degree ≤ 31 with coefficients in [-1, 1] on inputs in [-1, 1] (measured about 2^-20 or
//! better; the test prints the figures).

use ckks::params::TEST_N11_INSECURE;
use ckks::{Basis, Error, PolyPlan, Polynomial};
use rlwe::Ciphertext;

mod common;
use common::{Be, Setup, setup};

/// Deterministic pseudo-random numbers in [-1, 1] (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }

    fn vec(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.next()).collect()
    }
}

impl Setup {
    fn encrypt(&self, x: &[f64]) -> Ciphertext<Be> {
        let level = self.ctx.params().max_level();
        let pt = self.enc.encode_real(x, level).unwrap();
        self.ctx.encrypt_pk(&self.pk, &pt).unwrap()
    }

    fn decrypt(&self, ct: &Ciphertext<Be>) -> Vec<f64> {
        let pt = self.ctx.decrypt(&self.sk, ct).unwrap();
        self.enc.decode(&pt).unwrap().iter().map(|z| z.re).collect()
    }

    /// Max error of `ct` against `want` slot-wise, as -log2.
    fn precision(&self, ct: &Ciphertext<Be>, x: &[f64], want: impl Fn(f64) -> f64) -> f64 {
        let got = self.decrypt(ct);
        let err = x
            .iter()
            .zip(&got)
            .map(|(&x, &g)| (g - want(x)).abs())
            .fold(0.0, f64::max);
        -err.log2()
    }
}

fn ceil_log2(n: usize) -> usize {
    (usize::BITS - (n - 1).leading_zeros()) as usize
}

#[test]
fn plans_have_the_least_depth() {
    for basis in [Basis::Power, Basis::Chebyshev { a: -1.0, b: 1.0 }] {
        for d in 1..=64 {
            let plan = PolyPlan::new(basis, &[d]).unwrap();
            assert_eq!(plan.depth(), ceil_log2(d + 1), "degree {d}");
        }
    }
    for d in [15, 31, 63] {
        for extra in [0, 1] {
            let plan = PolyPlan::with_extra_depth(Basis::Power, &[d], extra).unwrap();
            assert!(plan.depth() <= ceil_log2(d + 1) + extra);
            println!(
                "degree {d}: depth {}, {} products, baby step {}",
                plan.depth(),
                plan.multiplications(),
                plan.baby_step()
            );
        }
    }
    // A non-integer 2/(b - a) costs one level for the change of variable.
    let plan = PolyPlan::new(Basis::Chebyshev { a: -2.0, b: 2.0 }, &[31]).unwrap();
    assert_eq!(plan.depth(), 6);
    let plan = PolyPlan::new(Basis::Chebyshev { a: 0.0, b: 1.0 }, &[31]).unwrap();
    assert_eq!(plan.depth(), 5);
}

#[test]
fn random_polynomials_match_the_host_in_both_bases() {
    let s = setup(&TEST_N11_INSECURE);
    let mut rng = Rng(7);
    let x = rng.vec(s.enc.max_slots());
    let ct = s.encrypt(&x);
    let top = ct.level();
    let mut worst = f64::INFINITY;
    for d in [1, 2, 3, 4, 5, 7, 8, 12, 16, 22, 31] {
        for chebyshev in [false, true] {
            let coeffs = rng.vec(d + 1);
            let p = if chebyshev {
                Polynomial::chebyshev(coeffs, -1.0, 1.0).unwrap()
            } else {
                Polynomial::power(coeffs).unwrap()
            };
            let plan = PolyPlan::new(p.basis(), &[d]).unwrap();
            let (out, products) = s
                .eval
                .evaluate_polynomials_with_plan(&ct, std::slice::from_ref(&p), &plan, &s.rlk)
                .unwrap();
            assert_eq!(out[0].level(), top - plan.depth(), "degree {d}");
            assert_eq!(products, plan.multiplications(), "degree {d}");
            let scale = s.ctx.params().scale(out[0].level()).unwrap();
            assert!(((out[0].scale() - scale) / scale).abs() < 1e-12);
            let bits = s.precision(&out[0], &x, |v| p.eval(v));
            println!("degree {d:2} chebyshev {chebyshev}: {bits:.1} bits");
            assert!(bits > 15.0, "degree {d}: {bits} bits");
            worst = worst.min(bits);
        }
    }
    println!("worst: {worst:.1} bits");
}

#[test]
fn an_extra_level_saves_products() {
    let s = setup(&TEST_N11_INSECURE);
    let mut rng = Rng(13);
    let x = rng.vec(s.enc.max_slots());
    let ct = s.encrypt(&x);
    let p = Polynomial::chebyshev(rng.vec(32), -1.0, 1.0).unwrap();
    let least = PolyPlan::new(p.basis(), &[31]).unwrap();
    let plan = PolyPlan::with_extra_depth(p.basis(), &[31], 1).unwrap();
    assert_eq!((least.depth(), plan.depth()), (5, 6));
    assert!(plan.multiplications() < least.multiplications());
    println!(
        "degree 31: {} products at depth 5, {} at depth 6",
        least.multiplications(),
        plan.multiplications()
    );
    let (out, products) = s
        .eval
        .evaluate_polynomials_with_plan(&ct, std::slice::from_ref(&p), &plan, &s.rlk)
        .unwrap();
    assert_eq!(products, plan.multiplications());
    assert_eq!(out[0].level(), ct.level() - 6);
    let bits = s.precision(&out[0], &x, |v| p.eval(v));
    assert!(bits > 15.0, "{bits} bits");
}

#[test]
fn every_baby_step_gives_the_same_result() {
    let s = setup(&TEST_N11_INSECURE);
    let mut rng = Rng(11);
    let x = rng.vec(s.enc.max_slots());
    let ct = s.encrypt(&x);
    let p = Polynomial::chebyshev(rng.vec(20), -1.0, 1.0).unwrap();
    for k in [2, 3, 5, 8, 17] {
        let plan = PolyPlan::with_baby_step(p.basis(), &[19], k).unwrap();
        assert_eq!(plan.depth(), 5);
        let (out, products) = s
            .eval
            .evaluate_polynomials_with_plan(&ct, std::slice::from_ref(&p), &plan, &s.rlk)
            .unwrap();
        assert_eq!(out[0].level(), ct.level() - 5);
        assert!(products <= plan.multiplications());
        let bits = s.precision(&out[0], &x, |v| p.eval(v));
        assert!(bits > 15.0, "baby step {k}: {bits} bits");
    }
}

#[test]
fn sin_and_cos_share_their_powers() {
    let s = setup(&TEST_N11_INSECURE);
    let mut rng = Rng(3);
    let x = rng.vec(s.enc.max_slots());
    let ct = s.encrypt(&x);
    let f_sin = |v: f64| (3.0 * v).sin();
    let f_cos = |v: f64| (3.0 * v).cos();
    let sin = Polynomial::interpolate_chebyshev(f_sin, -1.0, 1.0, 25).unwrap();
    let cos = Polynomial::interpolate_chebyshev(f_cos, -1.0, 1.0, 24).unwrap();
    // The interpolants themselves are far more accurate than the bound.
    for i in 0..=100 {
        let v = -1.0 + i as f64 / 50.0;
        assert!((sin.eval(v) - f_sin(v)).abs() < 1e-12);
        assert!((cos.eval(v) - f_cos(v)).abs() < 1e-12);
    }
    let both = [sin.clone(), cos.clone()];
    let plan = PolyPlan::new(sin.basis(), &[sin.degree(), cos.degree()]).unwrap();
    let alone = PolyPlan::new(sin.basis(), &[sin.degree()])
        .unwrap()
        .multiplications()
        + PolyPlan::new(cos.basis(), &[cos.degree()])
            .unwrap()
            .multiplications();
    assert!(plan.multiplications() < alone);
    let (out, products) = s
        .eval
        .evaluate_polynomials_with_plan(&ct, &both, &plan, &s.rlk)
        .unwrap();
    assert!(products <= plan.multiplications());
    assert_eq!(out.len(), 2);
    for ct_out in &out {
        assert_eq!(ct_out.level(), ct.level() - plan.depth());
    }
    let (bs, bc) = (
        s.precision(&out[0], &x, f_sin),
        s.precision(&out[1], &x, f_cos),
    );
    println!("sin(3x) {bs:.1} bits, cos(3x) {bc:.1} bits");
    assert!(bs > 15.0 && bc > 15.0);
}

#[test]
fn chebyshev_on_other_intervals() {
    let s = setup(&TEST_N11_INSECURE);
    let mut rng = Rng(5);
    // exp on [-2, 2] (2/(b - a) = 1/2: one more level), inputs in [-1, 1].
    let x = rng.vec(s.enc.max_slots());
    let ct = s.encrypt(&x);
    let exp = Polynomial::interpolate_chebyshev(f64::exp, -2.0, 2.0, 20).unwrap();
    let out = s.eval.evaluate_polynomial(&ct, &exp, &s.rlk).unwrap();
    assert_eq!(out.level(), ct.level() - 6);
    let bits = s.precision(&out, &x, f64::exp);
    println!("exp on [-2, 2]: {bits:.1} bits");
    assert!(bits > 15.0);
    // 1/(1 + x) on [0, 1] (2/(b - a) = 2: an exact integer multiply, no level).
    let x: Vec<f64> = x.iter().map(|v| v.abs()).collect();
    let ct = s.encrypt(&x);
    let f = |v: f64| 1.0 / (1.0 + v);
    let inv = Polynomial::interpolate_chebyshev(f, 0.0, 1.0, 15).unwrap();
    let out = s.eval.evaluate_polynomial(&ct, &inv, &s.rlk).unwrap();
    assert_eq!(out.level(), ct.level() - 4);
    let bits = s.precision(&out, &x, f);
    println!("1/(1+x) on [0, 1]: {bits:.1} bits");
    assert!(bits > 15.0);
}

#[test]
fn constants_and_sparse_polynomials() {
    let s = setup(&TEST_N11_INSECURE);
    let mut rng = Rng(9);
    let x = rng.vec(s.enc.max_slots());
    let ct = s.encrypt(&x);
    let cases = [
        Polynomial::power(vec![0.25]).unwrap(),
        Polynomial::power(vec![0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]).unwrap(),
        Polynomial::chebyshev(vec![0.0; 17].into_iter().chain([0.5]).collect(), -1.0, 1.0).unwrap(),
        Polynomial::power(vec![0.5, 0.0, -0.25, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.125]).unwrap(),
        // Degree 63 with one low term: the low leaf is lowered over several levels.
        Polynomial::power(
            (0..64)
                .map(|i| [0.0, 0.5, 0.25][i.min(2)] * f64::from(i < 2 || i == 63))
                .collect(),
        )
        .unwrap(),
    ];
    let p = Polynomial::chebyshev(vec![0.5, -0.25, 0.125, 1.0], 0.0, 1.0).unwrap();
    let xs: Vec<f64> = x.iter().map(|v| v.abs()).collect();
    let pos = s.encrypt(&xs);
    let mut pos_coeff = pos.duplicate(s.ctx.backend()).unwrap();
    pos_coeff.set_form(s.ctx.backend(), false).unwrap();
    let out = s.eval.evaluate_polynomial(&pos_coeff, &p, &s.rlk).unwrap();
    assert!(
        s.precision(&out, &xs, |v| p.eval(v)) > 15.0,
        "coefficient-form input"
    );
    for p in &cases {
        let plan = PolyPlan::new(p.basis(), &[p.degree()]).unwrap();
        let (out, products) = s
            .eval
            .evaluate_polynomials_with_plan(&ct, std::slice::from_ref(p), &plan, &s.rlk)
            .unwrap();
        assert_eq!(out[0].level(), ct.level() - plan.depth());
        assert!(products <= plan.multiplications());
        let bits = s.precision(&out[0], &x, |v| p.eval(v));
        assert!(bits > 15.0, "{p:?}: {bits} bits");
    }
}

#[test]
fn errors_are_typed() {
    let bad = |r: Result<Polynomial, Error>| matches!(r, Err(Error::InvalidPolynomial { .. }));
    assert!(bad(Polynomial::power(vec![])));
    assert!(bad(Polynomial::power(vec![1.0, f64::NAN])));
    assert!(bad(Polynomial::chebyshev(
        vec![1.0, f64::INFINITY],
        -1.0,
        1.0
    )));
    assert!(bad(Polynomial::chebyshev(vec![1.0], 1.0, 1.0)));
    assert!(bad(Polynomial::chebyshev(vec![1.0], f64::NAN, 1.0)));
    assert!(bad(Polynomial::interpolate_chebyshev(
        |v| if v > 0.5 { f64::NAN } else { v },
        -1.0,
        1.0,
        4
    )));
    assert!(matches!(
        PolyPlan::new(Basis::Power, &[]),
        Err(Error::InvalidPolynomial { .. })
    ));

    let s = setup(&TEST_N11_INSECURE);
    let mut rng = Rng(1);
    let x = rng.vec(s.enc.max_slots());
    let ct = s.eval.drop_to_level(&s.encrypt(&x), 4).unwrap();
    let p = Polynomial::power(rng.vec(64)).unwrap();
    match s.eval.evaluate_polynomial(&ct, &p, &s.rlk) {
        Err(e @ Error::PolynomialTooDeep { .. }) => {
            assert!(matches!(
                e,
                Error::PolynomialTooDeep {
                    degree: 63,
                    needed: 6,
                    available: 4
                }
            ));
            assert!(e.to_string().contains("needs 6 levels"), "{e}");
        }
        other => panic!("expected PolynomialTooDeep, got {:?}", other.err()),
    }
    assert!(matches!(
        s.eval.evaluate_polynomials(&ct, &[], &s.rlk),
        Err(Error::InvalidPolynomial { .. })
    ));
    let mixed = [
        Polynomial::power(vec![1.0, 1.0]).unwrap(),
        Polynomial::chebyshev(vec![1.0, 1.0], -1.0, 1.0).unwrap(),
    ];
    assert!(matches!(
        s.eval.evaluate_polynomials(&ct, &mixed, &s.rlk),
        Err(Error::InvalidPolynomial { .. })
    ));
    // A plan made for lower degrees.
    let plan = PolyPlan::new(Basis::Power, &[3]).unwrap();
    assert!(matches!(
        s.eval
            .evaluate_polynomials_with_plan(&ct, std::slice::from_ref(&p), &plan, &s.rlk),
        Err(Error::InvalidPolynomial { .. })
    ));
    // An input off its level's ladder scale.
    let level = s.ctx.params().max_level();
    let pt = s
        .enc
        .encode_with(&[], level, 2f64.powi(30), s.enc.max_slots())
        .unwrap();
    let off = s.ctx.encrypt_pk(&s.pk, &pt).unwrap();
    let q = Polynomial::power(vec![0.0, 1.0, 1.0]).unwrap();
    assert!(matches!(
        s.eval.evaluate_polynomial(&off, &q, &s.rlk),
        Err(Error::ScaleMismatch { .. })
    ));
    // A coefficient too large for the scale.
    let huge = Polynomial::power(vec![0.0, 1e300]).unwrap();
    assert!(matches!(
        s.eval.evaluate_polynomial(&s.encrypt(&x), &huge, &s.rlk),
        Err(Error::ValueTooLarge { .. })
    ));
}

#[test]
fn host_evaluation_is_consistent() {
    // T_3 = 4x³ − 3x, on [-1, 1] and mapped from [2, 6].
    let t3 = Polynomial::chebyshev(vec![0.0, 0.0, 0.0, 1.0], -1.0, 1.0).unwrap();
    let mapped = Polynomial::chebyshev(vec![0.0, 0.0, 0.0, 1.0], 2.0, 6.0).unwrap();
    let pw = Polynomial::power(vec![0.0, -3.0, 0.0, 4.0]).unwrap();
    for i in 0..=20 {
        let v = -1.0 + i as f64 / 10.0;
        assert!((t3.eval(v) - pw.eval(v)).abs() < 1e-12);
        assert!((mapped.eval(2.0 * v + 4.0) - pw.eval(v)).abs() < 1e-12);
    }
    // Trailing zeros are dropped.
    assert_eq!(
        Polynomial::power(vec![1.0, 2.0, 0.0, 0.0])
            .unwrap()
            .degree(),
        1
    );
    assert_eq!(Polynomial::power(vec![0.0, 0.0]).unwrap().degree(), 0);
}

/// `mul_add_relin_rescale`: `a·b + c` with `c` at the product's scale `Δ²` joins the tensor
/// before the one rescale (the lower part of a Paterson–Stockmeyer split); it matches the
/// plaintext to the scheme's precision and refuses an addend at another level or scale.
#[test]
fn multiply_add_matches_the_plaintext() {
    let s = setup(&TEST_N11_INSECURE);
    let n = s.enc.max_slots();
    let mut rng = Rng(41);
    let (x, y, z) = (rng.vec(n), rng.vec(n), rng.vec(n));
    let (a, b) = (s.encrypt(&x), s.encrypt(&y));
    let level = a.level();
    let delta = s.ctx.params().scale(level).unwrap();
    let zc: Vec<fhe_math::fft::Complex64> = z.iter().map(|&v| v.into()).collect();
    let at = |level: usize, scale: f64| {
        let pt = s.enc.encode_with(&zc, level, scale, n).unwrap();
        s.ctx.encrypt_pk(&s.pk, &pt).unwrap()
    };
    let c = at(level, delta * delta);
    let out = s.eval.mul_add_relin_rescale(&a, &b, &c, &s.rlk).unwrap();
    assert_eq!(out.level(), level - 1);
    let got = s.decrypt(&out);
    let err = (0..n)
        .map(|i| (got[i] - (x[i] * y[i] + z[i])).abs())
        .fold(0.0, f64::max);
    println!("a·b + c: {:.1} bits", -err.log2());
    assert!(err < 2f64.powi(-15), "{err:e}");
    // An addend at Δ (not Δ²), or one level lower, is refused.
    let wrong_scale = s.encrypt(&z);
    assert!(matches!(
        s.eval.mul_add_relin_rescale(&a, &b, &wrong_scale, &s.rlk),
        Err(Error::ScaleMismatch { .. })
    ));
    assert!(matches!(
        s.eval
            .mul_add_relin_rescale(&a, &b, &at(level - 1, delta * delta), &s.rlk),
        Err(Error::LevelMismatch { .. })
    ));
}
