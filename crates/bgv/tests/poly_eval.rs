//! Paterson–Stockmeyer evaluation against the plaintext evaluation mod t (exact equality, slot
//! by slot), its depth and product count against the plan, shared baby steps, interpolated
//! functions, and the errors.

use bgv::params::TEST_N11_INSECURE;
use bgv::poly_eval::ceil_log2;
use bgv::{
    Ciphertext, Context, Decryptor, Encoder, Error, Evaluator, Parameters, Polynomial, PsPlan,
};
use fhe_math::cpu::CpuBackend;
use rlwe::{PublicKey, RelinKey, SecretKey};
use test_support::{SeededKeys, SplitMix, random_values, seed};

struct Setup {
    ctx: Context<CpuBackend>,
    sk: SecretKey<CpuBackend>,
    pk: PublicKey<CpuBackend>,
    rlk: RelinKey<CpuBackend>,
    enc: Encoder<CpuBackend>,
    eval: Evaluator<CpuBackend>,
}

impl Setup {
    fn new() -> Self {
        let ctx = Context::cpu(Parameters::new(&TEST_N11_INSECURE).unwrap()).unwrap();
        let SeededKeys { sk, pk, rlk } = SeededKeys::new(&ctx.key_generator()).unwrap();
        Setup {
            enc: Encoder::new(&ctx),
            eval: Evaluator::new(&ctx),
            ctx,
            sk,
            pk,
            rlk,
        }
    }

    fn t(&self) -> u64 {
        self.ctx.params().t()
    }

    fn n(&self) -> usize {
        self.ctx.params().n()
    }

    fn encrypt(&self, v: &[u64], s: u8) -> Ciphertext<CpuBackend> {
        let top = self.ctx.params().max_level();
        let p = self.enc.encode(v, top).unwrap();
        self.ctx
            .encrypt_pk_with_seed(&self.pk, &p, &seed(s))
            .unwrap()
    }

    /// Decrypts `ct`, compares it with `p` applied to every slot of `x`, and checks the
    /// measured noise against the bound.
    fn check(&self, name: &str, ct: &Ciphertext<CpuBackend>, p: &Polynomial, x: &[u64]) {
        let dec = Decryptor::new(&self.ctx, &self.sk);
        let got = dec.decrypt(ct).unwrap_or_else(|e| panic!("{name}: {e}"));
        let want: Vec<u64> = x.iter().map(|&v| p.eval(v)).collect();
        assert!(got == want, "{name}: differs from the plaintext evaluation");
        let measured = dec.noise_bits(ct).unwrap();
        assert!(
            measured <= ct.noise_bits(),
            "{name}: measured noise 2^{measured:.1} above the bound 2^{:.1}",
            ct.noise_bits()
        );
    }
}

/// A polynomial of degree `d` with every coefficient nonzero (dense), from `seed`.
fn dense(d: usize, t: u64, seed: u64) -> Polynomial {
    let mut r = SplitMix::new(seed);
    Polynomial::new((0..=d).map(|_| 1 + r.below(t - 1)).collect(), t).unwrap()
}

#[test]
fn random_polynomials_match_plaintext_with_planned_depth_and_products() {
    let s = Setup::new();
    let t = s.t();
    let x = random_values(7, s.n(), t);
    let cx = s.encrypt(&x, 40);
    let top = cx.level();
    for d in (0..=40).chain([63]) {
        let p = dense(d, t, 100 + d as u64);
        let plan = PsPlan::new(&[d]);
        let (out, products) = s
            .eval
            .evaluate_polynomials_with_plan(&cx, std::slice::from_ref(&p), &plan, &s.rlk)
            .unwrap();
        let out = &out[0];
        s.check(&format!("degree {d}"), out, &p, &x);
        assert_eq!(plan.depth(), ceil_log2(d), "degree {d}: planned depth");
        assert_eq!(
            top - out.level(),
            plan.depth(),
            "degree {d}: levels consumed"
        );
        assert_eq!(products, plan.multiplications(), "degree {d}: products");
    }
}

#[test]
fn documented_costs_for_degrees_7_15_31_63() {
    let s = Setup::new();
    let t = s.t();
    let x = random_values(8, s.n(), t);
    let cx = s.encrypt(&x, 41);
    for (d, products, depth) in [(7, 4, 3), (15, 7, 4), (31, 11, 5), (63, 16, 6)] {
        let plan = PsPlan::new(&[d]);
        assert_eq!((plan.multiplications(), plan.depth()), (products, depth));
        let p = dense(d, t, d as u64);
        let (out, made) = s
            .eval
            .evaluate_polynomials_with_plan(&cx, std::slice::from_ref(&p), &plan, &s.rlk)
            .unwrap();
        s.check(&format!("degree {d}"), &out[0], &p, &x);
        assert_eq!(made, products, "degree {d}: products made");
        assert_eq!(cx.level() - out[0].level(), depth, "degree {d}: levels");
    }
}

#[test]
fn other_baby_steps_give_the_same_values() {
    let s = Setup::new();
    let t = s.t();
    let x = random_values(9, s.n(), t);
    let cx = s.encrypt(&x, 42);
    let p = dense(20, t, 5);
    for k in [1, 3, 4, 6, 20, 25] {
        let plan = PsPlan::with_baby_step(&[20], k).unwrap();
        if plan.depth() > cx.level() {
            continue;
        }
        let (out, made) = s
            .eval
            .evaluate_polynomials_with_plan(&cx, std::slice::from_ref(&p), &plan, &s.rlk)
            .unwrap();
        s.check(&format!("baby step {k}"), &out[0], &p, &x);
        assert_eq!(made, plan.multiplications(), "baby step {k}");
        assert_eq!(cx.level() - out[0].level(), plan.depth(), "baby step {k}");
    }
}

/// The digit-comparison shape of issue 44: on differences `z ∈ [-(s-1), s-1]`, EQ(z) = [z = 0]
/// and LT(z) = [z < 0] interpolated on that domain, evaluated together (shared powers).
#[test]
fn eq_and_lt_on_a_small_domain_share_baby_steps() {
    let s = Setup::new();
    let t = s.t();
    let digits = 8i64;
    let domain: Vec<i64> = (-(digits - 1)..digits).collect();
    let modt = |v: i64| v.rem_euclid(t as i64) as u64;
    let eq_pts: Vec<(u64, u64)> = domain.iter().map(|&z| (modt(z), (z == 0) as u64)).collect();
    let lt_pts: Vec<(u64, u64)> = domain.iter().map(|&z| (modt(z), (z < 0) as u64)).collect();
    let eq = Polynomial::interpolate(&eq_pts, t).unwrap();
    let lt = Polynomial::interpolate(&lt_pts, t).unwrap();
    assert_eq!(eq.degree(), 2 * digits as usize - 2);
    // EQ is even: its odd part vanishes.
    assert_eq!(eq.even_odd().1.coeffs(), &[0]);

    let mut r = SplitMix::new(11);
    let z: Vec<u64> = (0..s.n())
        .map(|_| modt(r.below(2 * digits as u64 - 1) as i64 - (digits - 1)))
        .collect();
    let cz = s.encrypt(&z, 43);
    let ps = [eq.clone(), lt.clone()];
    let shared = PsPlan::new(&[eq.degree(), lt.degree()]);
    let (out, made) = s
        .eval
        .evaluate_polynomials_with_plan(&cz, &ps, &shared, &s.rlk)
        .unwrap();
    s.check("EQ", &out[0], &eq, &z);
    s.check("LT", &out[1], &lt, &z);
    let dec = Decryptor::new(&s.ctx, &s.sk);
    let got_eq = dec.decrypt(&out[0]).unwrap();
    for (&zi, &e) in z.iter().zip(&got_eq) {
        assert_eq!(e, (zi == 0) as u64);
    }
    let separate = PsPlan::new(&[eq.degree()]).multiplications()
        + PsPlan::new(&[lt.degree()]).multiplications();
    assert!(made <= shared.multiplications());
    assert!(
        shared.multiplications() < separate,
        "sharing saves products: {} against {separate}",
        shared.multiplications()
    );
    assert_eq!(shared.depth(), ceil_log2(lt.degree()));
}

/// `p(x) = e(x²) + x·o(x²)` computed from the even/odd split, `e` and `o` in one call.
#[test]
fn even_odd_split_evaluated_with_shared_powers() {
    let s = Setup::new();
    let t = s.t();
    let x = random_values(12, s.n(), t);
    let cx = s.encrypt(&x, 44);
    let p = dense(21, t, 77);
    let (e, o) = p.even_odd();
    let w = s.eval.square_relin(&cx, &s.rlk).unwrap();
    let eo = s.eval.evaluate_polynomials(&w, &[e, o], &s.rlk).unwrap();
    let xo = s.eval.mul_relin(&cx, &eo[1], &s.rlk).unwrap();
    let got = s.eval.add(&eo[0], &xo).unwrap();
    s.check("e(x²) + x·o(x²)", &got, &p, &x);
    // deg o = 9 → 4 levels, after the squaring and before the last product: 6 in all.
    assert_eq!(cx.level() - got.level(), 6);
}

/// A function known on a small domain (a lookup table), interpolated and evaluated on inputs
/// in that domain; constants and the zero polynomial.
#[test]
fn lookup_table_and_constants() {
    let s = Setup::new();
    let t = s.t();
    let table: Vec<u64> = vec![5, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8];
    let pts: Vec<(u64, u64)> = table
        .iter()
        .enumerate()
        .map(|(i, &y)| (i as u64, y))
        .collect();
    let f = Polynomial::interpolate(&pts, t).unwrap();
    let x: Vec<u64> = random_values(13, s.n(), table.len() as u64);
    let cx = s.encrypt(&x, 45);
    let out = s.eval.evaluate_polynomial(&cx, &f, &s.rlk).unwrap();
    let got = Decryptor::new(&s.ctx, &s.sk).decrypt(&out).unwrap();
    assert_eq!(
        got,
        x.iter().map(|&v| table[v as usize]).collect::<Vec<_>>()
    );

    // Below the top level the input's correction factor is no longer 1.
    let switched = s.eval.mod_switch_to(&cx, 7).unwrap();
    assert_ne!(switched.factor(), 1);
    let out = s.eval.evaluate_polynomial(&switched, &f, &s.rlk).unwrap();
    s.check("table on a switched input", &out, &f, &x);
    assert_eq!(out.level(), 7 - ceil_log2(f.degree()));

    let seven = Polynomial::new(vec![7], t).unwrap();
    let zero = Polynomial::new(vec![0, 0, 0], t).unwrap();
    let outs = s
        .eval
        .evaluate_polynomials(&cx, &[seven.clone(), zero.clone()], &s.rlk);
    let outs = outs.unwrap();
    s.check("constant 7", &outs[0], &seven, &x);
    s.check("zero", &outs[1], &zero, &x);
    assert_eq!(outs[0].level(), cx.level());
}

/// The error of a call expected to fail.
fn err<T>(r: Result<T, Error>) -> Error {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    }
}

#[test]
fn errors_are_typed() {
    let s = Setup::new();
    let t = s.t();
    let x = random_values(14, s.n(), t);
    let cx = s.encrypt(&x, 46);
    assert!(matches!(
        Polynomial::new(vec![], t),
        Err(Error::EmptyPolynomial)
    ));
    assert!(matches!(
        Polynomial::new(vec![1, 2, t], t),
        Err(Error::CoefficientOutOfRange { index: 2, value, .. }) if value == t
    ));

    // EQ(z) = 1 - z^(t-1) over all of F_t: depth 16, the test ring has 10 levels.
    let mut eq = vec![0u64; t as usize];
    eq[0] = 1;
    eq[t as usize - 1] = t - 1;
    let eq = Polynomial::new(eq, t).unwrap();
    let e = err(s.eval.evaluate_polynomial(&cx, &eq, &s.rlk));
    assert!(matches!(
        e,
        Error::PolynomialTooDeep {
            degree: 65536,
            needed: 16,
            available: 10
        }
    ));
    assert_eq!(
        e.to_string(),
        "cannot evaluate a degree-65536 polynomial: needs 16 levels, the ciphertext has 10"
    );

    // Degree 40 needs 6 levels; at level 5 it is refused before any product.
    let low = s.eval.mod_switch_to(&cx, 5).unwrap();
    let e = err(s.eval.evaluate_polynomial(&low, &dense(40, t, 1), &s.rlk));
    assert!(matches!(
        e,
        Error::PolynomialTooDeep {
            needed: 6,
            available: 5,
            ..
        }
    ));

    // A plan made for smaller degrees is refused.
    let small = PsPlan::with_baby_step(&[3], 2).unwrap();
    let e = err(s
        .eval
        .evaluate_polynomials_with_plan(&cx, &[dense(30, t, 2)], &small, &s.rlk));
    assert!(matches!(e, Error::InvalidArgument { .. }));
    assert!(matches!(
        PsPlan::with_baby_step(&[3], 0),
        Err(Error::InvalidArgument { .. })
    ));

    // No polynomial; a polynomial modulo another t; a 3-component ciphertext.
    assert!(matches!(
        s.eval.evaluate_polynomials(&cx, &[], &s.rlk),
        Err(Error::InvalidArgument { .. })
    ));
    let other = Polynomial::new(vec![1, 2], 17).unwrap();
    assert!(matches!(
        s.eval.evaluate_polynomial(&cx, &other, &s.rlk),
        Err(Error::InvalidArgument { .. })
    ));
    let tensor = s.eval.mul(&cx, &cx).unwrap();
    assert!(matches!(
        s.eval.evaluate_polynomial(&tensor, &dense(3, t, 3), &s.rlk),
        Err(Error::InvalidArgument { .. })
    ));
}
