//! BFV operators against the plaintext computation mod t (exact equality), the analytic noise
//! bound against the measured noise, the depth limit found by a multiplication chain, and
//! malformed serialized input.

use bfv::RowRotations;
use bfv::params::{self, N13, TEST_N11_INSECURE};
use bfv::testing::random_values;
use bfv::{Ciphertext, Context, Decryptor, Encoder, Error, Evaluator, ParametersLiteral};
use fhe_math::cpu::CpuBackend;
use fhe_math::sampler::Seed;
use rlwe::{GaloisKeys, PublicKey, RelinKey, SecretKey};
use std::collections::BTreeMap;

type B = CpuBackend;

fn seed(b: u8) -> Seed {
    Seed([b; 32])
}

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
        let sk = kg.secret_key_from_seed(seed(1)).unwrap();
        let pk = kg.public_key_with_seeds(&sk, seed(2), &seed(3)).unwrap();
        let rlk = kg.relin_key_with_seeds(&sk, seed(4), &seed(5)).unwrap();
        let eval = Evaluator::new(&ctx);
        let mut keys = BTreeMap::new();
        for (i, g) in eval
            .galois_elements(steps, true)
            .unwrap()
            .into_iter()
            .enumerate()
        {
            keys.insert(
                g,
                kg.galois_key_with_seeds(&sk, g, seed(10 + i as u8), &seed(100 + i as u8))
                    .unwrap(),
            );
        }
        let gk = GaloisKeys {
            keys,
            fingerprint: ctx.params().fingerprint(),
        };
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
        let bound = self.ctx.noise().capacity() - ct.noise_bits;
        assert!(
            measured >= bound,
            "{name}: measured budget {measured:.1} below the analytic {bound:.1}"
        );
        measured
    }
}

fn zip(a: &[u64], b: &[u64], f: impl Fn(u64, u64) -> u64) -> Vec<u64> {
    a.iter().zip(b).map(|(&x, &y)| f(x, y)).collect()
}

fn rot_rows(v: &[u64], step: i64) -> Vec<u64> {
    let half = v.len() / 2;
    (0..v.len())
        .map(|i| {
            let (r, c) = (i / half, i % half);
            v[r * half + (c as i64 + step).rem_euclid(half as i64) as usize]
        })
        .collect()
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
        &zip(&a, &b, |x, y| (x + y) % t),
    );
    s.check(
        "sub",
        &e.sub(&ca, &cb).unwrap(),
        &zip(&a, &b, |x, y| (x + t - y) % t),
    );
    let neg: Vec<u64> = a.iter().map(|&x| (t - x) % t).collect();
    s.check("negate", &e.negate(&ca).unwrap(), &neg);
    let pb = s.enc.encode(&b, s.ctx.level()).unwrap();
    s.check(
        "add_plain",
        &e.add_plain(&ca, &pb).unwrap(),
        &zip(&a, &b, |x, y| (x + y) % t),
    );
    s.check(
        "sub_plain",
        &e.sub_plain(&ca, &pb).unwrap(),
        &zip(&a, &b, |x, y| (x + t - y) % t),
    );
    s.check(
        "mul_plain",
        &e.mul_plain(&ca, &pb).unwrap(),
        &zip(&a, &b, mulm),
    );
    s.check(
        "mul_scalar",
        &e.mul_scalar(&ca, -7).unwrap(),
        &a.iter().map(|&x| mulm(x, t - 7)).collect::<Vec<_>>(),
    );
    let ab = zip(&a, &b, mulm);
    let prod = e.mul(&ca, &cb).unwrap();
    s.check("mul (3 components)", &prod, &ab);
    s.check(
        "add (3 + 2 components)",
        &e.add(&prod, &ca).unwrap(),
        &zip(&ab, &a, |x, y| (x + y) % t),
    );
    let rel = e.relinearize(prod, &s.rlk).unwrap();
    s.check("relinearize", &rel, &ab);
    s.check("mul_relin", &e.mul_relin(&ca, &cb, &s.rlk).unwrap(), &ab);
    let aa = zip(&a, &a, mulm);
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
            &rot_rows(&a, step),
        );
    }
    // No key for 7: composed from the power-of-two keys 1, 2, 4.
    s.check(
        "rotate_rows 7 (composed)",
        &e.rotate_rows(&ca, 7, &s.gk).unwrap(),
        &rot_rows(&a, 7),
    );
    let hoisted = e.rotate_rows_hoisted(&ca, &[1, 0, 5, -3], &s.gk).unwrap();
    for (ct, step) in hoisted.iter().zip([1, 0, 5, -3]) {
        s.check(&format!("hoisted {step}"), ct, &rot_rows(&a, step));
    }
    let half = n / 2;
    let swapped: Vec<u64> = (0..n).map(|i| a[(i + half) % n]).collect();
    s.check(
        "rotate_columns",
        &e.rotate_columns(&ca, &s.gk).unwrap(),
        &swapped,
    );
    // Coefficient encoding.
    let pc = s.enc.encode_unbatch(&a, s.ctx.level()).unwrap();
    let cc = s.ctx.encrypt_pk_with_seed(&s.pk, &pc, &seed(30)).unwrap();
    let dec = Decryptor::new(&s.ctx, &s.sk);
    assert_eq!(dec.decrypt_coeffs(&cc).unwrap(), a);
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
                    want = zip(&want, &b, mulm);
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
