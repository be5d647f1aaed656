//! BGV operators against the plaintext computation mod t (exact equality), the noise bound
//! against the measured noise, the depth limit of the presets, and serialization.

use bgv::RowRotations;
use bgv::params::{N13, ParametersLiteral, TEST_N11_INSECURE};
use bgv::{Ciphertext, Context, Decryptor, Encoder, Error, Evaluator, Parameters};
use fhe_math::backend::{Backend, RingBackend};
use fhe_math::cpu::CpuBackend;
use rlwe::{GaloisKeys, PublicKey, RelinKey, SecretKey};
use std::collections::BTreeMap;
use test_support::{
    SeededKeys, active_limbs, random_values, rotate_rows, seed, seeded_galois_keys, swap_rows,
    zip_with,
};

struct Setup<B: Backend> {
    ctx: Context<B>,
    sk: SecretKey<B>,
    pk: PublicKey<B>,
    rlk: RelinKey<B>,
    gk: GaloisKeys<B>,
    enc: Encoder<B>,
    eval: Evaluator<B>,
}

impl<B: Backend> Setup<B> {
    fn new(ctx: Context<B>, steps: &[i64]) -> Self {
        let kg = ctx.key_generator();
        let SeededKeys { sk, pk, rlk } = SeededKeys::new(&kg).unwrap();
        let eval = Evaluator::new(&ctx);
        let elements = eval.galois_elements(steps, true).unwrap();
        let gk = seeded_galois_keys(&kg, &sk, &elements, 10, 100).unwrap();
        Setup {
            enc: Encoder::new(&ctx),
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

    fn dec(&self) -> Decryptor<'_, B> {
        Decryptor::new(&self.ctx, &self.sk)
    }

    fn encrypt(&self, v: &[u64], s: u8) -> Ciphertext<B> {
        let top = self.ctx.params().max_level();
        let p = self.enc.encode(v, top).unwrap();
        self.ctx
            .encrypt_pk_with_seed(&self.pk, &p, &seed(s))
            .unwrap()
    }

    /// Decrypts, compares with `want`, and checks the measured noise against the bound.
    fn check(&self, name: &str, ct: &Ciphertext<B>, want: &[u64]) {
        let got = self
            .dec()
            .decrypt(ct)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            got == want,
            "{name}: result differs from the plaintext computation"
        );
        let measured = self.dec().noise_bits(ct).unwrap();
        assert!(
            measured <= ct.noise_bits(),
            "{name}: measured noise 2^{measured:.1} above the bound 2^{:.1}",
            ct.noise_bits()
        );
    }
}

fn cpu(lit: &ParametersLiteral) -> Context<CpuBackend> {
    Context::cpu(Parameters::new(lit).unwrap()).unwrap()
}

fn every_operator(lit: &ParametersLiteral) {
    let s = Setup::new(cpu(lit), &[1, 2, 4, 5, -3]);
    let (ev, t) = (&s.eval, s.t());
    let n = s.ctx.params().n();
    let top = s.ctx.params().max_level();
    let x = random_values(1, n, t);
    let y = random_values(2, n, t);
    let z = random_values(3, n, t);
    let add = |a: u64, b: u64| (a + b) % t;
    let mul = |a: u64, b: u64| ((a as u128 * b as u128) % t as u128) as u64;
    let cx = s.encrypt(&x, 30);
    let py = s.enc.encode(&y, top).unwrap();
    let cy = s
        .ctx
        .encrypt_sk_with_seeds(&s.sk, &py, seed(31), &seed(32))
        .unwrap();
    let pz = s.enc.encode(&z, top).unwrap();
    assert_eq!(s.enc.decode(&pz).unwrap(), z);

    s.check("encrypt_pk", &cx, &x);
    s.check("encrypt_sk", &cy, &y);
    let xy = zip_with(&x, &y, mul);
    s.check("add", &ev.add(&cx, &cy).unwrap(), &zip_with(&x, &y, add));
    s.check(
        "sub",
        &ev.sub(&cx, &cy).unwrap(),
        &zip_with(&x, &y, |a, b| (a + t - b) % t),
    );
    s.check(
        "negate",
        &ev.negate(&cx).unwrap(),
        &zip_with(&x, &x, |a, _| (t - a) % t),
    );
    s.check(
        "add_plain",
        &ev.add_plain(&cx, &pz).unwrap(),
        &zip_with(&x, &z, add),
    );
    s.check(
        "sub_plain",
        &ev.sub_plain(&cx, &pz).unwrap(),
        &zip_with(&x, &z, |a, b| (a + t - b) % t),
    );
    s.check(
        "mul_plain",
        &ev.mul_plain(&cx, &pz).unwrap(),
        &zip_with(&x, &z, mul),
    );
    s.check(
        "mul_scalar",
        &ev.mul_scalar(&cx, -7).unwrap(),
        &zip_with(&x, &x, |a, _| mul(a, t - 7)),
    );
    s.check(
        "add_scalar",
        &ev.add_scalar(&cx, 12345).unwrap(),
        &zip_with(&x, &x, |a, _| add(a, 12345)),
    );
    let prod = ev.mul(&cx, &cy).unwrap();
    assert_eq!(prod.components(s.ctx.backend()), 3);
    s.check("mul (3 components)", &prod, &xy);
    let sq = ev.square(&cx).unwrap();
    s.check("square", &sq, &zip_with(&x, &x, mul));
    let relin = ev.relinearize(prod, &s.rlk).unwrap();
    assert_eq!(relin.level(), top);
    s.check("relinearize", &relin, &xy);
    let ms = ev.mod_switch(&relin).unwrap();
    assert_eq!(ms.level(), top - 1);
    assert_ne!(ms.factor(), 1);
    s.check("mod_switch", &ms, &xy);
    let mr = ev.mul_relin(&cx, &cy, &s.rlk).unwrap();
    assert_eq!(mr.level(), top - 1);
    s.check("mul_relin (fused switch)", &mr, &xy);
    // The fused relinearize + switch equals the two steps, bit for bit.
    let be = s.ctx.backend();
    assert_eq!(
        active_limbs(be, mr.inner().poly()).unwrap(),
        active_limbs(be, ms.inner().poly()).unwrap()
    );
    // Without the switch: relinearize(mul) in one call, bit for bit, with its metadata.
    let nr = ev.mul_relin_no_switch(&cx, &cy, &s.rlk).unwrap();
    assert_eq!(nr.level(), top);
    assert_eq!(
        (nr.factor(), nr.noise_bits()),
        (relin.factor(), relin.noise_bits())
    );
    s.check("mul_relin_no_switch", &nr, &xy);
    assert_eq!(
        active_limbs(be, nr.inner().poly()).unwrap(),
        active_limbs(be, relin.inner().poly()).unwrap()
    );
    s.check(
        "square_relin",
        &ev.square_relin(&cx, &s.rlk).unwrap(),
        &zip_with(&x, &x, mul),
    );
    // Mixed levels and factors: (x·y at top-1, factor != 1) + z (fresh, top) and · z.
    let cz = s.encrypt(&z, 33);
    s.check(
        "add (aligned)",
        &ev.add(&mr, &cz).unwrap(),
        &zip_with(&xy, &z, add),
    );
    s.check(
        "add (aligned, swapped)",
        &ev.add(&cz, &mr).unwrap(),
        &zip_with(&xy, &z, add),
    );
    s.check(
        "mul_relin (aligned)",
        &ev.mul_relin(&mr, &cz, &s.rlk).unwrap(),
        &zip_with(&xy, &z, mul),
    );
    s.check(
        "add_plain (factor)",
        &ev.add_plain(&mr, &pz).unwrap(),
        &zip_with(&xy, &z, add),
    );
    s.check(
        "mul_plain (lower level)",
        &ev.mul_plain(&mr, &pz).unwrap(),
        &zip_with(&xy, &z, mul),
    );
    s.check(
        "add (3 + 2 components)",
        &ev.add(&sq, &cx).unwrap(),
        &zip_with(&zip_with(&x, &x, mul), &x, add),
    );
    let (a2, b2) = ev.align(&cx, &mr).unwrap();
    assert_eq!((a2.level(), a2.factor()), (b2.level(), b2.factor()));
    // pow
    let p5 = ev.pow(&cx, 5, &s.rlk).unwrap();
    s.check(
        "pow 5",
        &p5,
        &zip_with(&x, &x, |a, _| mul(mul(mul(a, a), mul(a, a)), a)),
    );
    assert!(matches!(
        ev.pow(&cx, 0, &s.rlk),
        Err(Error::InvalidArgument { .. })
    ));
    // Rotations.
    for k in [1i64, 2, 5, -3] {
        s.check(
            &format!("rotate_rows {k}"),
            &ev.rotate_rows(&cx, k, &s.gk).unwrap(),
            &rotate_rows(&x, k),
        );
    }
    s.check(
        "rotate_rows 7 (composed)",
        &ev.rotate_rows(&cx, 7, &s.gk).unwrap(),
        &rotate_rows(&x, 7),
    );
    s.check("rotate_rows 0", &ev.rotate_rows(&cx, 0, &s.gk).unwrap(), &x);
    s.check(
        "rotate_rows at lower level",
        &ev.rotate_rows(&mr, 1, &s.gk).unwrap(),
        &rotate_rows(&xy, 1),
    );
    let steps = [1i64, 0, 4, -3, 2];
    let hoisted = ev.rotate_rows_hoisted(&cx, &steps, &s.gk).unwrap();
    for (k, r) in steps.iter().zip(&hoisted) {
        s.check(&format!("hoisted {k}"), r, &rotate_rows(&x, *k));
        let single = ev.rotate_rows(&cx, *k, &s.gk).unwrap();
        assert_eq!(
            active_limbs(be, r.inner().poly()).unwrap(),
            active_limbs(be, single.inner().poly()).unwrap(),
            "hoisted {k} differs from the single rotation"
        );
    }
    s.check(
        "rotate_columns",
        &ev.rotate_columns(&cx, &s.gk).unwrap(),
        &swap_rows(&x),
    );
    s.check(
        "rotate_columns at lower level",
        &ev.rotate_columns(&mr, &s.gk).unwrap(),
        &swap_rows(&xy),
    );
    let no_keys = GaloisKeys {
        keys: BTreeMap::new(),
        fingerprint: s.ctx.params().fingerprint(),
    };
    assert!(matches!(
        ev.rotate_rows(&cx, 1, &no_keys),
        Err(Error::Rlwe(rlwe::Error::MissingGaloisKey { .. }))
    ));
    // Signed encodings.
    let signed: Vec<i64> = (0..n as i64).map(|i| (i * 37) % 2001 - 1000).collect();
    let ps = s.enc.encode_signed(&signed, top).unwrap();
    let cs = s.ctx.encrypt_pk_with_seed(&s.pk, &ps, &seed(40)).unwrap();
    let doubled = ev.add(&cs, &cs).unwrap();
    assert_eq!(
        s.dec().decrypt_signed(&doubled).unwrap(),
        signed.iter().map(|v| 2 * v).collect::<Vec<_>>()
    );
    // Coefficient encoding: products are negacyclic polynomial products mod t.
    let a = random_values(5, n, t);
    let b = random_values(6, n, t);
    let pa = s.enc.encode_unbatch(&a, top).unwrap();
    let pb = s.enc.encode_unbatch(&b, top).unwrap();
    let ca = s.ctx.encrypt_pk_with_seed(&s.pk, &pa, &seed(41)).unwrap();
    let cb = s.ctx.encrypt_pk_with_seed(&s.pk, &pb, &seed(42)).unwrap();
    let mut want = vec![0u64; n];
    for (i, &ai) in a.iter().enumerate() {
        for (j, &bj) in b.iter().enumerate() {
            let p = mul(ai, bj);
            let k = (i + j) % n;
            want[k] = if i + j < n {
                add(want[k], p)
            } else {
                (want[k] + t - p) % t
            };
        }
    }
    let cab = ev.mul_relin(&ca, &cb, &s.rlk).unwrap();
    assert_eq!(s.dec().decrypt_unbatch(&cab).unwrap(), want);
    assert_eq!(s.dec().decrypt_unbatch(&ca).unwrap(), a);
    assert_eq!(s.enc.decode_unbatch(&pa), a);
    let budget = s.dec().noise_budget(&cab).unwrap();
    assert!(
        budget >= cab.budget_bound(&s.ctx),
        "{budget} vs {}",
        cab.budget_bound(&s.ctx)
    );
}

#[test]
fn every_operator_test_n11() {
    every_operator(&TEST_N11_INSECURE);
}

#[test]
fn every_operator_n13() {
    every_operator(&N13);
}

/// Multiplies by fresh ciphertexts with the default policy until the evaluator refuses: the
/// depth is found, not assumed; every result is exact and the next step is an error.
fn chain(lit: &ParametersLiteral) -> usize {
    let s = Setup::new(cpu(lit), &[]);
    let (ev, t) = (&s.eval, s.t());
    let n = s.ctx.params().n();
    let mut want = random_values(100, n, t);
    let mut acc = s.encrypt(&want, 50);
    let mut depth = 0;
    loop {
        let v = random_values(101 + depth as u64, n, t);
        let c = s.encrypt(&v, 51 + depth as u8);
        match ev.mul_relin(&acc, &c, &s.rlk) {
            Ok(next) => {
                depth += 1;
                want = zip_with(&want, &v, |a, b| {
                    ((a as u128 * b as u128) % t as u128) as u64
                });
                s.check(&format!("chain depth {depth}"), &next, &want);
                let measured = s.dec().noise_budget(&next).unwrap();
                println!(
                    "depth {depth}: level {}, budget measured {measured:.1} bits, bound {:.1}",
                    next.level(),
                    next.budget_bound(&s.ctx)
                );
                acc = next;
            }
            Err(e) => {
                assert!(matches!(e, Error::NoiseBudgetExceeded { .. }), "{e}");
                println!("depth {depth}: next step refused: {e}");
                break;
            }
        }
        assert!(depth <= 64, "runaway chain");
    }
    depth
}

#[test]
fn chain_depth_test_n11() {
    let depth = chain(&TEST_N11_INSECURE);
    println!("TEST_N11_INSECURE depth {depth}");
    assert!(
        depth >= TEST_N11_INSECURE.levels,
        "one multiplication per level"
    );
}

#[test]
fn chain_depth_n13() {
    let depth = chain(&N13);
    println!("N13 depth {depth}");
    assert!(depth >= N13.levels, "one multiplication per level");
}

#[test]
fn exhausted_budget_is_an_error() {
    let s = Setup::new(cpu(&TEST_N11_INSECURE), &[]);
    let n = s.ctx.params().n();
    let x = random_values(7, n, s.t());
    let mut c = s.encrypt(&x, 60);
    s.eval.mod_switch_to_assign(&mut c, 0).unwrap();
    // Add a uniform polynomial: the noise fills the modulus.
    let be = s.ctx.backend();
    let junk = be
        .sample_uniform(
            &seed(61),
            fhe_math::sampler::Domain::PublicA,
            9,
            be.shape(c.inner().poly()),
        )
        .unwrap();
    let (meta, bits) = (c.inner().meta(), c.noise_bits());
    c.modify(be, meta, bits, |p| be.add_assign(p, &junk))
        .unwrap();
    assert!(matches!(
        s.dec().decrypt(&c),
        Err(Error::NoiseBudgetExhausted { .. })
    ));
    assert!(matches!(
        s.dec().noise_budget(&c),
        Err(Error::NoiseBudgetExhausted { .. })
    ));
    assert!(matches!(s.eval.mod_switch(&c), Err(Error::CannotModSwitch)));
}

#[test]
fn operands_of_other_parameters_are_rejected() {
    let a = Setup::new(cpu(&TEST_N11_INSECURE), &[]);
    let b = Setup::new(
        cpu(&ParametersLiteral {
            levels: 9,
            dnum: 10,
            ..TEST_N11_INSECURE
        }),
        &[],
    );
    let n = a.ctx.params().n();
    let ca = a.encrypt(&random_values(1, n, 7), 1);
    let cb = b.encrypt(&random_values(1, n, 7), 1);
    assert!(matches!(
        a.eval.add(&ca, &cb),
        Err(Error::Rlwe(rlwe::Error::ParameterMismatch { .. }))
    ));
    assert!(a.eval.mul_relin(&ca, &ca, &b.rlk).is_err());
}

#[test]
fn serialization_round_trip_and_malformed_input() {
    let s = Setup::new(cpu(&TEST_N11_INSECURE), &[]);
    let (n, t) = (s.ctx.params().n(), s.t());
    let x = random_values(8, n, t);
    let top = s.ctx.params().max_level();
    let p = s.enc.encode(&x, top).unwrap();
    let seeded = s.ctx.encrypt_sk(&s.sk, &p).unwrap();
    let fresh_pk = s.encrypt(&x, 70);
    let switched = s.eval.mul_relin(&fresh_pk, &seeded, &s.rlk).unwrap();
    let three = s.eval.square(&switched).unwrap();
    let be = s.ctx.backend();
    for ct in [&seeded, &fresh_pk, &switched, &three] {
        let bytes = ct.to_bytes(&s.ctx).unwrap();
        let back = Ciphertext::from_bytes(&s.ctx, &bytes).unwrap();
        assert_eq!(back.level(), ct.level());
        assert_eq!(back.factor(), ct.factor());
        assert_eq!(back.noise_bits(), ct.noise_bits());
        assert_eq!(
            active_limbs(be, back.inner().poly()).unwrap(),
            active_limbs(be, ct.inner().poly()).unwrap()
        );
        assert_eq!(
            s.dec().decrypt(&back).unwrap(),
            s.dec().decrypt(ct).unwrap()
        );
    }
    // The seeded ciphertext stores c_0 only: about half the size.
    let small = seeded.to_bytes(&s.ctx).unwrap();
    assert!(small.len() < fresh_pk.to_bytes(&s.ctx).unwrap().len() * 6 / 10);

    let good = switched.to_bytes(&s.ctx).unwrap();
    for len in [0, 3, 7, 20, good.len() / 2, good.len() - 1] {
        assert!(
            Ciphertext::from_bytes(&s.ctx, &good[..len]).is_err(),
            "prefix {len}"
        );
    }
    let mut longer = good.clone();
    longer.push(0);
    assert!(Ciphertext::from_bytes(&s.ctx, &longer).is_err());
    // Header fields: fingerprint at 7..15, level at 15..19, components at 19, factor at 20..28,
    // noise at 28..36.
    let tamper = |at: usize, bytes: &[u8]| {
        let mut b = good.clone();
        b[at..at + bytes.len()].copy_from_slice(bytes);
        Ciphertext::from_bytes(&s.ctx, &b)
    };
    assert!(matches!(
        tamper(7, &[0xff]),
        Err(Error::Rlwe(rlwe::Error::ParameterMismatch { .. }))
    ));
    assert!(tamper(15, &99u32.to_le_bytes()).is_err());
    assert!(tamper(19, &[4]).is_err());
    assert!(tamper(19, &[1]).is_err());
    assert!(tamper(20, &0u64.to_le_bytes()).is_err());
    assert!(tamper(20, &t.to_le_bytes()).is_err());
    assert!(tamper(28, &f64::NAN.to_le_bytes()).is_err());
    // A residue at or above its prime (first coefficient of c_0, limb 0): after the seed flag
    // (1 byte, None) and the data length (8 bytes).
    let q0 = s.ctx.params().moduli_q()[0];
    match tamper(36 + 1 + 8, &q0.to_le_bytes()) {
        Err(e) => assert!(e.to_string().contains("not below its prime"), "{e}"),
        Ok(_) => panic!("a residue equal to its prime was accepted"),
    }
    // Single-byte corruption anywhere never panics.
    for i in (0..good.len()).step_by(97) {
        let mut b = good.clone();
        b[i] ^= 0x5a;
        let _ = Ciphertext::from_bytes(&s.ctx, &b);
    }
    // Other kinds of blob.
    let params_blob = s.ctx.params().to_bytes().unwrap();
    assert!(matches!(
        Ciphertext::from_bytes(&s.ctx, &params_blob),
        Err(Error::Rlwe(rlwe::Error::WrongKind { .. }))
    ));
}

#[test]
#[ignore = "slow on 2 cores: N = 2^15 (run with --ignored)"]
fn chain_depth_cat() {
    let depth = chain(&bgv::params::CAT);
    println!("CAT depth {depth}");
    assert!(depth >= bgv::params::CAT.levels);
}

#[test]
#[ignore = "slow on 2 cores: N = 2^15 (run with --ignored)"]
fn chain_depth_phantom_int() {
    let depth = chain(&bgv::params::PHANTOM_INT);
    println!("PHANTOM_INT depth {depth}");
    assert!(depth >= bgv::params::PHANTOM_INT.levels);
}

#[test]
#[ignore = "slow on 2 cores: N = 2^15 (run with --ignored)"]
fn chain_depth_cat_compat() {
    let depth = chain(&bgv::params::CAT_COMPAT);
    println!("CAT_COMPAT depth {depth}");
    assert!(depth >= bgv::params::CAT_COMPAT.levels);
}

#[test]
fn in_place_add_and_sub() {
    let s = Setup::new(cpu(&TEST_N11_INSECURE), &[]);
    let (n, t) = (s.ctx.params().n(), s.t());
    let x = random_values(11, n, t);
    let y = random_values(12, n, t);
    let cy = s.encrypt(&y, 81);
    let mut acc = s.encrypt(&x, 80);
    s.eval.add_assign(&mut acc, &cy).unwrap();
    s.check("x + y", &acc, &zip_with(&x, &y, |a, b| (a + b) % t));
    s.eval.sub_assign(&mut acc, &cy).unwrap();
    s.check("x + y - y", &acc, &x);
    s.eval.sub_assign(&mut acc, &cy).unwrap();
    s.check(
        "x + y - y - y",
        &acc,
        &zip_with(&x, &y, |a, b| (a + t - b) % t),
    );
    let low = s.eval.mod_switch_to(&cy, 3).unwrap();
    s.eval.add_assign(&mut acc, &low).unwrap();
    assert_eq!(acc.level(), 3);
    s.check("... + y (switched)", &acc, &x);
}

/// Encrypted batching laws over random inputs and steps: decrypt(encrypt(v)) = v, a row rotation
/// by any step (composed from power-of-two keys) is the cyclic shift of each row, and the column
/// rotation swaps the rows.
#[test]
fn encrypted_batching_properties() {
    let ctx = cpu(&TEST_N11_INSECURE);
    let half = ctx.params().n() as i64 / 2;
    let steps: Vec<i64> = (0..).map(|i| 1i64 << i).take_while(|&s| s < half).collect();
    let s = Setup::new(ctx, &steps);
    let (n, t) = (s.ctx.params().n(), s.t());
    let mut rng = test_support::SplitMix::new(2024);
    for case in 0..8u64 {
        let v = random_values(1000 + case, n, t);
        let c = s.encrypt(&v, 90 + case as u8);
        s.check("round trip", &c, &v);
        let step = rng.below(2 * half as u64) as i64 - half;
        s.check(
            &format!("rotate_rows {step}"),
            &s.eval.rotate_rows(&c, step, &s.gk).unwrap(),
            &rotate_rows(&v, step),
        );
        s.check(
            "rotate_columns",
            &s.eval.rotate_columns(&c, &s.gk).unwrap(),
            &swap_rows(&v),
        );
    }
}
