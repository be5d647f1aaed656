//! BFV operators against the plaintext computation mod t (exact equality), the analytic noise
//! bound against the measured noise, the depth limit found by a multiplication chain, and
//! malformed serialized input; the same at lower levels after modulus switching (exactness,
//! level errors, `align`, serialization of lower-level ciphertexts).

use bfv::RowRotations;
use bfv::params::{self, N13, TEST_N11_INSECURE};
use bfv::{Ciphertext, Context, Decryptor, Encoder, Error, Evaluator, ParametersLiteral};
use fhe_math::cpu::CpuBackend;
use rlwe::{GaloisKeys, PublicKey, RelinKey, SecretKey};
use test_support::{
    SeededKeys, random_values, rotate_rows, seed, seeded_galois_keys, swap_rows, zip_with,
};

type B = CpuBackend;

struct Setup {
    ctx: Context<B>,
    sk: SecretKey<B>,
    pk: PublicKey<B>,
    rlk: RelinKey<B>,
    gk: GaloisKeys<B>,
    enc: Encoder<B>,
    eval: Evaluator<B>,
}

impl Setup {
    fn new(lit: &ParametersLiteral, steps: &[i64]) -> Self {
        let ctx = Context::cpu(params::new(lit).unwrap()).unwrap();
        let kg = ctx.key_generator();
        let SeededKeys { sk, pk, rlk } = SeededKeys::new(&kg).unwrap();
        let eval = Evaluator::new(&ctx);
        let elements = eval.galois_elements(steps, true).unwrap();
        let gk = seeded_galois_keys(&kg, &sk, &elements, 10, 100).unwrap();
        Setup {
            enc: ctx.encoder(),
            eval,
            ctx,
            sk,
            pk,
            rlk,
            gk,
        }
    }

    fn t(&self) -> u64 {
        self.ctx.params().t()
    }

    fn encrypt(&self, v: &[u64], s: u8) -> Ciphertext<B> {
        let p = self.enc.encode(v, self.ctx.level()).unwrap();
        self.ctx
            .encrypt_pk_with_seed(&self.pk, &p, &seed(s))
            .unwrap()
    }

    /// Decrypts, compares with `want`, and checks the measured noise against the bound.
    fn check(&self, name: &str, ct: &Ciphertext<B>, want: &[u64]) -> f64 {
        let dec = Decryptor::new(&self.ctx, &self.sk);
        let got = dec.decrypt(ct).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(got == want, "{name}: wrong result");
        let measured = dec.noise_budget(ct).unwrap();
        let bound = self.ctx.noise().capacity_at(ct.level()) - ct.noise_bits();
        assert!(
            measured >= bound,
            "{name}: measured budget {measured:.1} below the analytic {bound:.1}"
        );
        measured
    }
}

#[test]
fn every_operator_is_exact_n13() {
    let s = Setup::new(&N13, &[1, 2, 4, 5, -3]);
    let (n, t) = (s.ctx.params().n(), s.t());
    let mulm = |x: u64, y: u64| ((x as u128 * y as u128) % t as u128) as u64;
    let a = random_values(1, n, t);
    let b = random_values(2, n, t);
    let ca = s.encrypt(&a, 20);
    let cb = s.encrypt(&b, 21);
    s.check("encrypt", &ca, &a);
    let sk_ct = s
        .ctx
        .encrypt_sk_with_seeds(
            &s.sk,
            &s.enc.encode(&a, s.ctx.level()).unwrap(),
            seed(7),
            &seed(8),
        )
        .unwrap();
    s.check("encrypt_sk", &sk_ct, &a);
    let e = &s.eval;
    s.check(
        "add",
        &e.add(&ca, &cb).unwrap(),
        &zip_with(&a, &b, |x, y| (x + y) % t),
    );
    s.check(
        "sub",
        &e.sub(&ca, &cb).unwrap(),
        &zip_with(&a, &b, |x, y| (x + t - y) % t),
    );
    let neg: Vec<u64> = a.iter().map(|&x| (t - x) % t).collect();
    s.check("negate", &e.negate(&ca).unwrap(), &neg);
    let pb = s.enc.encode(&b, s.ctx.level()).unwrap();
    s.check(
        "add_plain",
        &e.add_plain(&ca, &pb).unwrap(),
        &zip_with(&a, &b, |x, y| (x + y) % t),
    );
    s.check(
        "sub_plain",
        &e.sub_plain(&ca, &pb).unwrap(),
        &zip_with(&a, &b, |x, y| (x + t - y) % t),
    );
    s.check(
        "mul_plain",
        &e.mul_plain(&ca, &pb).unwrap(),
        &zip_with(&a, &b, mulm),
    );
    s.check(
        "mul_scalar",
        &e.mul_scalar(&ca, -7).unwrap(),
        &a.iter().map(|&x| mulm(x, t - 7)).collect::<Vec<_>>(),
    );
    let ab = zip_with(&a, &b, mulm);
    let prod = e.mul(&ca, &cb).unwrap();
    s.check("mul (3 components)", &prod, &ab);
    s.check(
        "add (3 + 2 components)",
        &e.add(&prod, &ca).unwrap(),
        &zip_with(&ab, &a, |x, y| (x + y) % t),
    );
    let rel = e.relinearize(prod, &s.rlk).unwrap();
    s.check("relinearize", &rel, &ab);
    s.check("mul_relin", &e.mul_relin(&ca, &cb, &s.rlk).unwrap(), &ab);
    let aa = zip_with(&a, &a, mulm);
    s.check("square", &e.square(&ca).unwrap(), &aa);
    s.check("square_relin", &e.square_relin(&ca, &s.rlk).unwrap(), &aa);
    let a3: Vec<u64> = a.iter().map(|&x| mulm(mulm(x, x), x)).collect();
    s.check("pow 3", &e.pow(&ca, 3, &s.rlk).unwrap(), &a3);
    s.check("pow 1", &e.pow(&ca, 1, &s.rlk).unwrap(), &a);
    assert!(e.pow(&ca, 0, &s.rlk).is_err());
    for step in [1, 5, -3] {
        s.check(
            &format!("rotate_rows {step}"),
            &e.rotate_rows(&ca, step, &s.gk).unwrap(),
            &rotate_rows(&a, step),
        );
    }
    // No key for 7: composed from the power-of-two keys 1, 2, 4.
    s.check(
        "rotate_rows 7 (composed)",
        &e.rotate_rows(&ca, 7, &s.gk).unwrap(),
        &rotate_rows(&a, 7),
    );
    let hoisted = e.rotate_rows_hoisted(&ca, &[1, 0, 5, -3], &s.gk).unwrap();
    for (ct, step) in hoisted.iter().zip([1, 0, 5, -3]) {
        s.check(&format!("hoisted {step}"), ct, &rotate_rows(&a, step));
    }
    s.check(
        "rotate_columns",
        &e.rotate_columns(&ca, &s.gk).unwrap(),
        &swap_rows(&a),
    );
    // Coefficient encoding.
    let pc = s.enc.encode_unbatch(&a, s.ctx.level()).unwrap();
    let cc = s.ctx.encrypt_pk_with_seed(&s.pk, &pc, &seed(30)).unwrap();
    let dec = Decryptor::new(&s.ctx, &s.sk);
    assert_eq!(dec.decrypt_coeffs(&cc).unwrap(), a);
}

/// Every operator on the coefficient-form products of `mul` (3 components) and on mixed
/// forms: exact against the plaintext computation, with the documented result forms.
#[test]
fn every_operator_is_exact_on_coefficient_form_products_n13() {
    let s = Setup::new(&N13, &[]);
    let (n, t) = (s.ctx.params().n(), s.t());
    let mulm = |x: u64, y: u64| ((x as u128 * y as u128) % t as u128) as u64;
    let ntt = |ct: &Ciphertext<B>| ct.inner().is_ntt();
    let a = random_values(11, n, t);
    let b = random_values(12, n, t);
    let ca = s.encrypt(&a, 60);
    let cb = s.encrypt(&b, 61);
    let e = &s.eval;
    let ab = zip_with(&a, &b, mulm);
    assert!(ntt(&ca), "fresh ciphertexts are in NTT form");
    let prod = e.mul(&ca, &cb).unwrap();
    assert!(!ntt(&prod), "mul leaves its product in coefficient form");
    assert!(ntt(&e.mul_relin(&ca, &cb, &s.rlk).unwrap()));
    let rel = e
        .relinearize(prod.duplicate(s.ctx.backend()).unwrap(), &s.rlk)
        .unwrap();
    assert!(ntt(&rel));
    s.check("relinearize (from coefficient form)", &rel, &ab);
    // Additions in both orders of the forms, in place and not.
    let sum = zip_with(&ab, &a, |x, y| (x + y) % t);
    let prod_plus = e.add(&prod, &ca).unwrap();
    assert!(!ntt(&prod_plus));
    s.check("add (coefficient + NTT form)", &prod_plus, &sum);
    let ca_plus = e.add(&ca, &prod).unwrap();
    assert!(ntt(&ca_plus));
    s.check("add (NTT + coefficient form)", &ca_plus, &sum);
    let mut acc = prod.duplicate(s.ctx.backend()).unwrap();
    e.sub_assign(&mut acc, &ca).unwrap();
    let diff = zip_with(&ab, &a, |x, y| (x + t - y) % t);
    s.check("sub_assign (coefficient - NTT form)", &acc, &diff);
    s.check(
        "relinearize a coefficient-form sum",
        &e.relinearize(acc, &s.rlk).unwrap(),
        &diff,
    );
    let pa = s.enc.encode(&a, s.ctx.level()).unwrap();
    s.check(
        "add_plain of coefficient form",
        &e.add_plain(&prod, &pa).unwrap(),
        &sum,
    );
    s.check(
        "sub_plain of coefficient form",
        &e.sub_plain(&prod, &pa).unwrap(),
        &diff,
    );
    let aba = zip_with(&ab, &a, mulm);
    let cp = e.mul_plain(&prod, &pa).unwrap();
    assert!(ntt(&cp));
    s.check("mul_plain of coefficient form", &cp, &aba);
    s.check(
        "relinearize an NTT-form product",
        &e.relinearize(cp, &s.rlk).unwrap(),
        &aba,
    );
    let neg = e.negate(&prod).unwrap();
    assert!(!ntt(&neg));
    let minus_ab: Vec<u64> = ab.iter().map(|&x| (t - x) % t).collect();
    s.check("negate of coefficient form", &neg, &minus_ab);
    let k3 = e.mul_scalar(&prod, 3).unwrap();
    assert!(!ntt(&k3));
    s.check(
        "mul_scalar of coefficient form",
        &k3,
        &ab.iter().map(|&x| mulm(x, 3)).collect::<Vec<_>>(),
    );
    let sq = e.square(&ca).unwrap();
    assert!(!ntt(&sq));
    let aa = zip_with(&a, &a, mulm);
    s.check(
        "relinearize a square",
        &e.relinearize(sq, &s.rlk).unwrap(),
        &aa,
    );
    // The modulus switch works in NTT form.
    let low = e.mod_switch(&prod).unwrap();
    assert!(ntt(&low) && low.level() + 1 == prod.level());
    s.check("mod_switch of coefficient form", &low, &ab);
}

#[test]
fn multiplication_chain_to_the_depth_limit() {
    for (name, lit) in [("TEST_N11_INSECURE", TEST_N11_INSECURE), ("N13", N13)] {
        let s = Setup::new(&lit, &[]);
        let (n, t) = (s.ctx.params().n(), s.t());
        let mulm = |x: u64, y: u64| ((x as u128 * y as u128) % t as u128) as u64;
        let a = random_values(5, n, t);
        let b = random_values(6, n, t);
        let cb = s.encrypt(&b, 41);
        let mut acc = s.encrypt(&a, 40);
        let mut want = a.clone();
        let mut depth = 0;
        let err = loop {
            match s.eval.mul_relin(&acc, &cb, &s.rlk) {
                Ok(next) => {
                    acc = next;
                    want = zip_with(&want, &b, mulm);
                    depth += 1;
                    let left = s.check(&format!("{name} depth {depth}"), &acc, &want);
                    println!("{name}: depth {depth}, measured budget {left:.1} bits");
                }
                Err(e) => break e,
            }
        };
        assert!(matches!(err, Error::NoiseBudgetExceeded { .. }), "{err:?}");
        println!("{name}: depth reached {depth}");
        assert!(depth >= 2, "{name}: depth {depth}");
    }
}

#[test]
fn serialization_round_trip_and_malformed_input() {
    let s = Setup::new(&N13, &[]);
    let n = s.ctx.params().n();
    let a = random_values(9, n, s.t());
    let p = s.enc.encode(&a, s.ctx.level()).unwrap();
    let fresh = s
        .ctx
        .encrypt_sk_with_seeds(&s.sk, &p, seed(50), &seed(51))
        .unwrap();
    let prod = s.eval.mul(&fresh, &fresh).unwrap();
    for ct in [&fresh, &prod] {
        let bytes = s.ctx.ciphertext_to_bytes(ct).unwrap();
        let back = s.ctx.ciphertext_from_bytes(&bytes).unwrap();
        let dec = Decryptor::new(&s.ctx, &s.sk);
        assert_eq!(
            dec.decrypt_coeffs(&back).unwrap(),
            dec.decrypt_coeffs(ct).unwrap()
        );
        for len in (0..bytes.len()).step_by(997).chain([bytes.len() - 1]) {
            assert!(s.ctx.ciphertext_from_bytes(&bytes[..len]).is_err(), "{len}");
        }
        let mut bad = bytes.clone();
        let last = bad.len() - 1;
        bad[last - 2] = 0xff; // a residue far above its prime
        bad[last] = 0xff;
        assert!(s.ctx.ciphertext_from_bytes(&bad).is_err());
    }
    // A BGV context with the same chain does not accept BFV ciphertexts (fingerprint).
    let bgv_ctx = bgv::Context::cpu(bgv::Parameters::new(&N13).unwrap()).unwrap();
    let bytes = s.ctx.ciphertext_to_bytes(&fresh).unwrap();
    assert!(Ciphertext::from_bytes(&bgv_ctx, &bytes).is_err());
    // BFV contexts need BFV-tagged parameters.
    assert!(Context::cpu(bgv::Parameters::new(&N13).unwrap()).is_err());
}

/// Every operator after switching down, at each level where its noise fits: exact against
/// the plaintext computation, measured budget at least the bound's prediction.
#[test]
fn every_operator_is_exact_after_mod_switch_n13() {
    let s = Setup::new(&N13, &[1, 2, 4, 5, -3]);
    let (n, t) = (s.ctx.params().n(), s.t());
    let mulm = |x: u64, y: u64| ((x as u128 * y as u128) % t as u128) as u64;
    let a = random_values(61, n, t);
    let b = random_values(62, n, t);
    let ca = s.encrypt(&a, 60);
    let cb = s.encrypt(&b, 61);
    let e = &s.eval;
    let top = s.ctx.level();
    let ab = zip_with(&a, &b, mulm);
    let sum = zip_with(&a, &b, |x, y| (x + y) % t);
    for level in (0..top).rev() {
        let x = e.mod_switch_to(&ca, level).unwrap();
        let y = e.mod_switch_to(&cb, level).unwrap();
        assert_eq!((x.level(), y.level()), (level, level));
        let name = |op: &str| format!("level {level}: {op}");
        s.check(&name("mod_switch_to"), &x, &a);
        s.check(&name("add"), &e.add(&x, &y).unwrap(), &sum);
        s.check(
            &name("sub"),
            &e.sub(&x, &y).unwrap(),
            &zip_with(&a, &b, |x, y| (x + t - y) % t),
        );
        let neg: Vec<u64> = a.iter().map(|&v| (t - v) % t).collect();
        s.check(&name("negate"), &e.negate(&x).unwrap(), &neg);
        // A plaintext at the ciphertext's level (Δ_l) and one at the top level (re-lifted).
        for pl in [level, top] {
            let pb = s.enc.encode(&b, pl).unwrap();
            s.check(
                &name(&format!("add_plain (plaintext level {pl})")),
                &e.add_plain(&x, &pb).unwrap(),
                &sum,
            );
            if level > 0 {
                s.check(
                    &name(&format!("mul_plain (plaintext level {pl})")),
                    &e.mul_plain(&x, &pb).unwrap(),
                    &ab,
                );
            }
        }
        s.check(
            &name("rotate_rows 5"),
            &e.rotate_rows(&x, 5, &s.gk).unwrap(),
            &rotate_rows(&a, 5),
        );
        s.check(
            &name("rotate_columns"),
            &e.rotate_columns(&x, &s.gk).unwrap(),
            &swap_rows(&a),
        );
        for (ct, step) in e
            .rotate_rows_hoisted(&x, &[1, -3], &s.gk)
            .unwrap()
            .iter()
            .zip([1, -3])
        {
            s.check(
                &name(&format!("hoisted {step}")),
                ct,
                &rotate_rows(&a, step),
            );
        }
        if level > 0 {
            let prod = e.mul(&x, &y).unwrap();
            assert_eq!(prod.level(), level);
            s.check(&name("mul (3 components)"), &prod, &ab);
            let rel = e.relinearize(prod, &s.rlk).unwrap();
            s.check(&name("relinearize"), &rel, &ab);
            s.check(
                &name("mul_relin, rotate_rows 1"),
                &e.rotate_rows(&rel, 1, &s.gk).unwrap(),
                &rotate_rows(&ab, 1),
            );
        }
    }
    // A fresh encryption of a lower-level plaintext lives at that level.
    let p1 = s.enc.encode(&a, 1).unwrap();
    let c1 = s.ctx.encrypt_pk_with_seed(&s.pk, &p1, &seed(63)).unwrap();
    assert_eq!(c1.level(), 1);
    s.check("fresh at level 1", &c1, &a);
    s.check(
        "fresh at level 1 times switched",
        &e.mul_relin(&c1, &e.mod_switch_to(&cb, 1).unwrap(), &s.rlk)
            .unwrap(),
        &ab,
    );
}

/// Multiply, switch down, multiply again (with `align`), to the bottom and until the bound
/// refuses: exact throughout, measured budget above the bound at every step. (Switching after
/// every product costs depth when the primes exceed the per-product noise growth: it is for
/// speed; the top-level chain goes deeper.)
#[test]
fn multiply_switch_chain_is_exact() {
    for (name, lit) in [("TEST_N11_INSECURE", TEST_N11_INSECURE), ("N13", N13)] {
        let s = Setup::new(&lit, &[1]);
        let (n, t) = (s.ctx.params().n(), s.t());
        let mulm = |x: u64, y: u64| ((x as u128 * y as u128) % t as u128) as u64;
        let a = random_values(71, n, t);
        let b = random_values(72, n, t);
        let cb = s.encrypt(&b, 71);
        let mut acc = s.encrypt(&a, 70);
        let mut want = a.clone();
        let mut depth = 0;
        loop {
            let (x, y) = s.eval.align(&acc, &cb).unwrap();
            assert_eq!(x.level(), y.level());
            let next = match s.eval.mul_relin(&x, &y, &s.rlk) {
                Ok(next) => next,
                Err(Error::NoiseBudgetExceeded { .. }) => break,
                Err(e) => panic!("{name}: {e}"),
            };
            want = zip_with(&want, &b, mulm);
            depth += 1;
            s.check(&format!("{name} depth {depth} product"), &next, &want);
            acc = match s.eval.mod_switch(&next) {
                Ok(sw) => sw,
                Err(Error::CannotModSwitch | Error::NoiseBudgetExceeded { .. }) => next,
                Err(e) => panic!("{name}: {e}"),
            };
            let left = s.check(&format!("{name} depth {depth} switched"), &acc, &want);
            println!(
                "{name}: depth {depth} at level {}, measured budget {left:.1} bits, bound {:.1}",
                acc.level(),
                s.ctx.noise().capacity_at(acc.level()) - acc.noise_bits()
            );
        }
        println!("{name}: depth reached with switching {depth}");
        assert!(depth >= 2, "{name}: depth {depth}");
        // A rotation at the final level.
        s.check(
            &format!("{name} rotate at level {}", acc.level()),
            &s.eval.rotate_rows(&acc, 1, &s.gk).unwrap(),
            &rotate_rows(&want, 1),
        );
    }
}

#[test]
fn level_errors_and_align() {
    let s = Setup::new(&N13, &[]);
    let (n, t) = (s.ctx.params().n(), s.t());
    let a = random_values(81, n, t);
    let b = random_values(82, n, t);
    let ca = s.encrypt(&a, 80);
    let cb = s.encrypt(&b, 81);
    let e = &s.eval;
    let top = s.ctx.level();
    let low = e.mod_switch_to(&cb, 1).unwrap();
    let level_err = |r: bfv::Result<Ciphertext<B>>| {
        assert!(
            matches!(r, Err(Error::LevelMismatch { .. })),
            "expected a level mismatch"
        )
    };
    level_err(e.add(&ca, &low));
    level_err(e.sub(&low, &ca));
    level_err(e.mul(&ca, &low));
    level_err(e.mul_relin(&low, &ca, &s.rlk));
    let mut acc = ca.duplicate(s.ctx.backend()).unwrap();
    assert!(matches!(
        e.add_assign(&mut acc, &low),
        Err(Error::LevelMismatch { .. })
    ));
    // A plaintext below the ciphertext's level.
    let p0 = s.enc.encode(&b, 0).unwrap();
    level_err(e.add_plain(&ca, &p0));
    level_err(e.mul_plain(&ca, &p0));
    // Switching up, or below level 0.
    level_err(e.mod_switch_to(&low, top));
    let bottom = e.mod_switch_to(&ca, 0).unwrap();
    assert!(matches!(e.mod_switch(&bottom), Err(Error::CannotModSwitch)));
    assert_eq!(e.mod_switch_to(&bottom, 0).unwrap().level(), 0);
    // align brings both to the lower level; then they combine.
    let (x, y) = e.align(&ca, &low).unwrap();
    assert_eq!((x.level(), y.level()), (1, 1));
    let (y2, x2) = e.align(&low, &ca).unwrap();
    assert_eq!((x2.level(), y2.level()), (1, 1));
    s.check(
        "align then add",
        &e.add(&x, &y).unwrap(),
        &zip_with(&a, &b, |x, y| (x + y) % t),
    );
    s.check(
        "align (swapped) then sub",
        &e.sub(&y2, &x2).unwrap(),
        &zip_with(&b, &a, |x, y| (x + t - y) % t),
    );
    // The switch keeps the bound's prediction under the measured budget, and reduces the
    // noise of a product.
    let prod = e.mul_relin(&ca, &cb, &s.rlk).unwrap();
    let sw = e.mod_switch(&prod).unwrap();
    assert!(sw.noise_bits() < prod.noise_bits());
    let dec = Decryptor::new(&s.ctx, &s.sk);
    let measured_before = dec.noise_budget(&prod).unwrap();
    let measured_after = dec.noise_budget(&sw).unwrap();
    println!(
        "product: measured budget {measured_before:.1} -> {measured_after:.1} bits after the switch; \
         bound {:.1} -> {:.1}",
        s.ctx.noise().capacity_at(prod.level()) - prod.noise_bits(),
        s.ctx.noise().capacity_at(sw.level()) - sw.noise_bits()
    );
    s.check(
        "switched product",
        &sw,
        &zip_with(&a, &b, |x, y| ((x as u128 * y as u128) % t as u128) as u64),
    );
    // A 3-component product switches too.
    let tensor = e.mul(&ca, &cb).unwrap();
    s.check(
        "switched tensor",
        &e.mod_switch(&tensor).unwrap(),
        &zip_with(&a, &b, |x, y| ((x as u128 * y as u128) % t as u128) as u64),
    );
}

#[test]
fn serialization_at_a_lower_level() {
    let s = Setup::new(&N13, &[]);
    let n = s.ctx.params().n();
    let a = random_values(91, n, s.t());
    let p = s.enc.encode(&a, s.ctx.level()).unwrap();
    let fresh = s
        .ctx
        .encrypt_sk_with_seeds(&s.sk, &p, seed(90), &seed(91))
        .unwrap();
    let dec = Decryptor::new(&s.ctx, &s.sk);
    let fp = s.ctx.params().fingerprint().to_le_bytes();
    for level in [2, 1, 0] {
        let low = s.eval.mod_switch_to(&fresh, level).unwrap();
        let prod = if level > 0 {
            Some(s.eval.mul(&low, &low).unwrap())
        } else {
            None
        };
        for ct in std::iter::once(&low).chain(prod.as_ref()) {
            let bytes = s.ctx.ciphertext_to_bytes(ct).unwrap();
            let back = s.ctx.ciphertext_from_bytes(&bytes).unwrap();
            assert_eq!(back.level(), level);
            assert_eq!(back.noise_bits(), ct.noise_bits());
            assert_eq!(
                dec.decrypt_coeffs(&back).unwrap(),
                dec.decrypt_coeffs(ct).unwrap()
            );
            // The level field (after the fingerprint) set to every other value: rejected (the
            // data length no longer matches, or the level is above the top).
            let at = bytes
                .windows(8)
                .position(|w| w == fp)
                .expect("fingerprint in the blob")
                + 8;
            assert_eq!(
                u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()),
                level as u32
            );
            for bad_level in [0u32, 1, 2, 3, 4, 1000, u32::MAX] {
                if bad_level == level as u32 {
                    continue;
                }
                let mut bad = bytes.clone();
                bad[at..at + 4].copy_from_slice(&bad_level.to_le_bytes());
                assert!(
                    s.ctx.ciphertext_from_bytes(&bad).is_err(),
                    "level {level} relabelled {bad_level} accepted"
                );
            }
            for len in (0..bytes.len()).step_by(1999).chain([bytes.len() - 1]) {
                assert!(s.ctx.ciphertext_from_bytes(&bytes[..len]).is_err(), "{len}");
            }
        }
    }
}
