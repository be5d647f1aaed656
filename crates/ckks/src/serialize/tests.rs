use crate::error::Error;
use crate::params::{N13, TEST_N11_INSECURE};
use crate::{Context, Encoder, Evaluator, Parameters, ParametersLiteral};
use fhe_math::backend::RingBackend;
use fhe_math::cpu::CpuBackend;
use fhe_math::fft::Complex64;
use fhe_math::poly::RnsPoly;
use fhe_math::sampler::Seed;
use proptest::prelude::*;
use rlwe::encrypt;
use rlwe::wire::{BlobKind, HEADER_LEN};
use rlwe::{Ciphertext, GaloisKeys, PublicKey, RelinKey, SecretKey};
use std::sync::OnceLock;

type Be = CpuBackend;

fn ctx(lit: &ParametersLiteral) -> Context<Be> {
    Context::cpu(Parameters::new(lit).unwrap()).unwrap()
}

fn n11() -> &'static Context<Be> {
    static CTX: OnceLock<Context<Be>> = OnceLock::new();
    CTX.get_or_init(|| ctx(&TEST_N11_INSECURE))
}

/// Downloaded buffer with inactive capacity slots zeroed (serialization drops them).
fn active(be: &Be, p: &RnsPoly) -> RnsPoly {
    let mut h = be.download(p).unwrap();
    let slots = h.slots_per_component();
    for c in 0..h.components() {
        for s in 0..slots {
            if !h.is_active(s) {
                h.limb_mut(c, s).fill(0);
            }
        }
    }
    h
}

fn values(n: usize, salt: f64) -> Vec<Complex64> {
    (0..n)
        .map(|i| Complex64::new((i as f64 * 0.37 + salt).sin(), (i as f64 * 0.11).cos()))
        .collect()
}

struct Setup {
    ctx: Context<Be>,
    enc: Encoder<Be>,
    eval: Evaluator<Be>,
    sk: SecretKey<Be>,
    pk: PublicKey<Be>,
    rlk: RelinKey<Be>,
    gk: GaloisKeys<Be>,
}

fn setup(ctx: &Context<Be>) -> Setup {
    let kg = ctx.key_generator();
    let sk = kg.secret_key().unwrap();
    let pk = kg.public_key(&sk).unwrap();
    let rlk = kg.relin_key(&sk).unwrap();
    let eval = Evaluator::new(ctx).unwrap();
    let gk = kg
        .galois_keys(&sk, &eval.galois_elements(&[1], true))
        .unwrap();
    Setup {
        ctx: ctx.clone(),
        enc: Encoder::new(ctx).unwrap(),
        eval,
        sk,
        pk,
        rlk,
        gk,
    }
}

impl Setup {
    fn be(&self) -> &Be {
        self.ctx.backend()
    }

    fn top(&self) -> usize {
        self.ctx.params().max_level()
    }

    fn pk_ct(&self, level: usize) -> Ciphertext<Be> {
        let pt = self.enc.encode(&values(64, 1.0), level).unwrap();
        encrypt::encrypt_pk(self.be(), &self.pk, &pt).unwrap()
    }

    fn sk_ct(&self, level: usize) -> Ciphertext<Be> {
        let pt = self.enc.encode(&values(64, 2.0), level).unwrap();
        encrypt::encrypt_sk(self.be(), &self.sk, &pt).unwrap()
    }

    fn decrypt(&self, sk: &SecretKey<Be>, ct: &Ciphertext<Be>) -> Vec<Complex64> {
        let pt = encrypt::decrypt(self.be(), sk, ct).unwrap();
        self.enc.decode(&pt).unwrap()
    }
}

#[test]
fn round_trips() {
    let s = setup(n11());
    let (ctx, be) = (&s.ctx, s.be());

    // Secret key: same polynomial, same decryptions.
    let bytes = ctx.secret_key_to_bytes(&s.sk).unwrap();
    let sk = ctx.secret_key_from_bytes(&bytes).unwrap();
    assert_eq!(active(be, sk.poly()), active(be, s.sk.poly()));

    // Public key: same polynomial; encryptions under it decrypt.
    let pk = ctx
        .public_key_from_bytes(&ctx.public_key_to_bytes(&s.pk).unwrap())
        .unwrap();
    assert_eq!(active(be, &pk.poly), active(be, &s.pk.poly));

    // Relinearization and Galois keys.
    let rlk = ctx
        .relin_key_from_bytes(&ctx.relin_key_to_bytes(&s.rlk).unwrap())
        .unwrap();
    assert_eq!(active(be, &rlk.0.poly), active(be, &s.rlk.0.poly));
    let gk = ctx
        .galois_keys_from_bytes(&ctx.galois_keys_to_bytes(&s.gk).unwrap())
        .unwrap();
    assert_eq!(
        gk.elements().collect::<Vec<_>>(),
        s.gk.elements().collect::<Vec<_>>()
    );
    for (g, k) in &s.gk.keys {
        assert_eq!(active(be, &gk.keys[g].poly), active(be, &k.poly));
    }

    // Plaintext.
    let pt = s.enc.encode(&values(32, 3.0), 4).unwrap();
    let pt2 = ctx
        .plaintext_from_bytes(&ctx.plaintext_to_bytes(&pt).unwrap())
        .unwrap();
    assert_eq!(pt2.meta(), pt.meta());
    assert_eq!(active(be, pt2.poly()), active(be, pt.poly()));
    assert_eq!(s.enc.decode(&pt2).unwrap(), s.enc.decode(&pt).unwrap());

    // Ciphertexts: public-key, seeded secret-key, 3-component, after rescale (lower level).
    let a = s.pk_ct(s.top());
    let b = s.sk_ct(s.top());
    let prod = s.eval.mul(&a, &b).unwrap();
    let low = s.eval.mul_relin_rescale(&a, &a, &s.rlk).unwrap();
    let pk_enc = encrypt::encrypt_pk(be, &pk, &pt).unwrap();
    for ct in [&a, &b, &prod, &low, &pk_enc] {
        let bytes = ctx.ciphertext_to_bytes(ct).unwrap();
        let back = ctx.ciphertext_from_bytes(&bytes).unwrap();
        assert_eq!(back.meta(), ct.meta());
        assert_eq!(back.seed(), ct.seed());
        assert_eq!(active(be, back.poly()), active(be, ct.poly()));
        // Bit-identical decryptions, with the original and the round-tripped secret key.
        let want = s.decrypt(&s.sk, ct);
        assert_eq!(s.decrypt(&s.sk, &back), want);
        assert_eq!(s.decrypt(&sk, &back), want);
        assert_eq!(ctx.ciphertext_to_bytes(&back).unwrap(), bytes);
    }

    // Loaded keys compute bit-identical results.
    let x = s.eval.mul_relin(&a, &b, &s.rlk).unwrap();
    let y = s.eval.mul_relin(&a, &b, &rlk).unwrap();
    assert_eq!(active(be, x.poly()), active(be, y.poly()));
    let x = s.eval.rotate(&a, 1, &s.gk).unwrap();
    let y = s.eval.rotate(&a, 1, &gk).unwrap();
    assert_eq!(active(be, x.poly()), active(be, y.poly()));
    let x = s.eval.conjugate(&b, &s.gk).unwrap();
    let y = s.eval.conjugate(&b, &gk).unwrap();
    assert_eq!(active(be, x.poly()), active(be, y.poly()));
}

/// Measures blob sizes at N13 and checks the halving from seeds.
#[test]
fn blob_sizes_n13() {
    let s = setup(&ctx(&N13));
    let ctx = &s.ctx;
    let sk = ctx.secret_key_to_bytes(&s.sk).unwrap().len();
    let pk = ctx.public_key_to_bytes(&s.pk).unwrap().len();
    let rlk = ctx.relin_key_to_bytes(&s.rlk).unwrap().len();
    let one_gk = GaloisKeys {
        keys: s
            .gk
            .keys
            .iter()
            .take(1)
            .map(|(&g, k)| {
                (
                    g,
                    rlwe::SwitchingKey {
                        poly: s.be().duplicate(&k.poly).unwrap(),
                        seed: k.seed.clone(),
                        fingerprint: k.fingerprint,
                    },
                )
            })
            .collect(),
        fingerprint: s.gk.fingerprint,
    };
    let gk1 = ctx.galois_keys_to_bytes(&one_gk).unwrap().len();
    let pk_ct = ctx.ciphertext_to_bytes(&s.pk_ct(s.top())).unwrap().len();
    let sk_ct = ctx.ciphertext_to_bytes(&s.sk_ct(s.top())).unwrap().len();
    println!(
        "N13 blob sizes (bytes): secret key {sk}, public key {pk}, relin key {rlk}, \
         one Galois key {gk1}, fresh pk ciphertext {pk_ct}, fresh sk ciphertext {sk_ct}"
    );
    let n = ctx.params().n();
    let limbs = ctx.params().max_level() + 1;
    let poly = n * limbs * 8;
    assert_eq!(sk, HEADER_LEN + 8 + 32);
    // A fresh secret-key ciphertext is about half a public-key one.
    let r = sk_ct as f64 / pk_ct as f64;
    assert!((0.49..0.51).contains(&r), "{sk_ct} / {pk_ct}");
    // A public key is about half of two polynomials.
    let r = pk as f64 / (2 * poly) as f64;
    assert!((0.49..0.51).contains(&r), "{pk} / {}", 2 * poly);
    // Switching keys: one polynomial over Q·P per digit (half of the 2·dnum components).
    let ext = n * (limbs + ctx.params().moduli_p().len()) * 8 * ctx.params().dnum();
    let r = rlk as f64 / ext as f64;
    assert!((1.0..1.01).contains(&r), "{rlk} / {ext}");
    assert!(gk1 > rlk && gk1 < rlk + 64);
}

fn err_rlwe(e: Error) -> rlwe::Error {
    match e {
        Error::Rlwe(e) => e,
        e => panic!("expected an rlwe error, got {e:?}"),
    }
}

#[test]
fn blobs_of_another_parameter_set_are_rejected() {
    let a = setup(n11());
    let other = ctx(&N13);
    let checks: Vec<(&str, Vec<u8>)> = vec![
        ("sk", a.ctx.secret_key_to_bytes(&a.sk).unwrap().to_vec()),
        ("pk", a.ctx.public_key_to_bytes(&a.pk).unwrap()),
        ("ct", a.ctx.ciphertext_to_bytes(&a.pk_ct(0)).unwrap()),
        ("sct", a.ctx.ciphertext_to_bytes(&a.sk_ct(2)).unwrap()),
        (
            "pt",
            a.ctx
                .plaintext_to_bytes(&a.enc.encode(&values(4, 0.0), 1).unwrap())
                .unwrap(),
        ),
    ];
    for (what, b) in &checks {
        let e = match *what {
            "sk" => other.secret_key_from_bytes(b).err(),
            "pk" => other.public_key_from_bytes(b).err(),
            "pt" => other.plaintext_from_bytes(b).err(),
            _ => other.ciphertext_from_bytes(b).err(),
        }
        .unwrap();
        assert!(
            matches!(err_rlwe(e), rlwe::Error::ParameterMismatch { .. }),
            "{what}"
        );
    }
    // Keys too large for the other ring fail on size; either way an error.
    let b = a.ctx.relin_key_to_bytes(&a.rlk).unwrap();
    assert!(other.relin_key_from_bytes(&b).is_err());
    let b = a.ctx.galois_keys_to_bytes(&a.gk).unwrap();
    assert!(other.galois_keys_from_bytes(&b).is_err());
    // Writing an object of another parameter set is refused.
    let e = other.ciphertext_to_bytes(&a.pk_ct(0)).err().unwrap();
    assert!(matches!(err_rlwe(e), rlwe::Error::ParameterMismatch { .. }));
    let e = other.secret_key_to_bytes(&a.sk).err().unwrap();
    assert!(matches!(err_rlwe(e), rlwe::Error::ParameterMismatch { .. }));
}

#[test]
fn wrong_kind() {
    let s = setup(n11());
    let ct = s.ctx.ciphertext_to_bytes(&s.pk_ct(0)).unwrap();
    let e = err_rlwe(s.ctx.plaintext_from_bytes(&ct).err().unwrap());
    assert!(matches!(
        e,
        rlwe::Error::WrongKind {
            expected: BlobKind::Plaintext,
            found: 7
        }
    ));
    let pk = s.ctx.public_key_to_bytes(&s.pk).unwrap();
    let e = err_rlwe(s.ctx.ciphertext_from_bytes(&pk).err().unwrap());
    assert!(matches!(e, rlwe::Error::WrongKind { .. }));
    let params = s.ctx.params().to_bytes().unwrap();
    assert!(s.ctx.ciphertext_from_bytes(&params).is_err());
    assert!(s.ctx.secret_key_from_bytes(&params).is_err());
}

#[test]
fn truncations_and_flips() {
    let s = setup(n11());
    let ctx = &s.ctx;
    // Every truncation of a small blob (seeded ciphertext at level 0: c_0 is one limb).
    let b = ctx.ciphertext_to_bytes(&s.sk_ct(0)).unwrap();
    for len in 0..b.len() {
        assert!(ctx.ciphertext_from_bytes(&b[..len]).is_err(), "{len}");
    }
    let sk = ctx.secret_key_to_bytes(&s.sk).unwrap();
    for len in 0..sk.len() {
        assert!(ctx.secret_key_from_bytes(&sk[..len]).is_err(), "{len}");
    }
    // Stepping through the lengths of the larger blobs.
    let blobs = [
        ctx.public_key_to_bytes(&s.pk).unwrap(),
        ctx.galois_keys_to_bytes(&s.gk).unwrap(),
        ctx.ciphertext_to_bytes(&s.pk_ct(3)).unwrap(),
    ];
    for (i, b) in blobs.iter().enumerate() {
        let step = (b.len() / 300).max(1);
        let lens = (0..b.len())
            .step_by(step)
            .chain(b.len().saturating_sub(80)..b.len());
        for len in lens {
            let r = match i {
                0 => ctx.public_key_from_bytes(&b[..len]).map(drop),
                1 => ctx.galois_keys_from_bytes(&b[..len]).map(drop),
                _ => ctx.ciphertext_from_bytes(&b[..len]).map(drop),
            };
            assert!(r.is_err(), "blob {i}: prefix {len}");
        }
    }
    // Flipped bytes at many positions: an error, or an object that re-serializes to exactly the
    // flipped bytes; header and metadata flips are always errors (except in the scale).
    let b = ctx.ciphertext_to_bytes(&s.pk_ct(1)).unwrap();
    let step = (b.len() / 500).max(1);
    for pos in (0..b.len()).step_by(step).chain(0..80) {
        let mut f = b.clone();
        f[pos] ^= 0x5a;
        match ctx.ciphertext_from_bytes(&f) {
            Ok(ct) => {
                let scale = HEADER_LEN + 8..HEADER_LEN + 16;
                assert!(
                    pos >= HEADER_LEN + 8 + 8 + 1 + 8 || scale.contains(&pos),
                    "{pos}"
                );
                assert_eq!(ctx.ciphertext_to_bytes(&ct).unwrap(), f, "{pos}");
            }
            Err(e) => {
                let _ = err_rlwe(e);
            }
        }
    }
}

#[test]
fn patched_fields() {
    let s = setup(n11());
    let ctx = &s.ctx;
    let max = ctx.params().max_level();
    // Payload layout of a ciphertext: level u64, scale f64, ntt u8, fingerprint u64, seed
    // option tag, component count u64, limb count u64, limb length u64, then the residues.
    let b = ctx.ciphertext_to_bytes(&s.pk_ct(0)).unwrap();
    let malformed = |bytes: &[u8]| -> String {
        match err_rlwe(ctx.ciphertext_from_bytes(bytes).err().unwrap()) {
            rlwe::Error::Malformed { reason, .. } => reason,
            e => panic!("expected Malformed, got {e:?}"),
        }
    };
    let mut f = b.clone();
    f[HEADER_LEN..HEADER_LEN + 8].copy_from_slice(&(max as u64 + 1).to_le_bytes());
    assert!(malformed(&f).contains("above the maximum level"));
    let mut f = b.clone();
    f[HEADER_LEN + 8..HEADER_LEN + 16].copy_from_slice(&(-1.0f64).to_le_bytes());
    assert!(malformed(&f).contains("scale"));
    let mut f = b.clone();
    f[HEADER_LEN + 16] = 0;
    assert!(malformed(&f).contains("NTT"));
    let first = HEADER_LEN + 25 + 1 + 8 + 8 + 8;
    let q0 = ctx.params().moduli_q()[0];
    let mut f = b.clone();
    f[first..first + 8].copy_from_slice(&q0.to_le_bytes());
    assert!(malformed(&f).contains("not below its modulus"));
    f[first..first + 8].copy_from_slice(&(q0 - 1).to_le_bytes());
    assert!(ctx.ciphertext_from_bytes(&f).is_ok());

    // Galois keys: fingerprint u64, key count u64, then the first element.
    let b = ctx.galois_keys_to_bytes(&s.gk).unwrap();
    let at = HEADER_LEN + 16;
    let two_n = 2 * ctx.params().n() as u64;
    for bad in [2u64, two_n + 1, 0] {
        let mut f = b.clone();
        f[at..at + 8].copy_from_slice(&bad.to_le_bytes());
        let e = err_rlwe(ctx.galois_keys_from_bytes(&f).err().unwrap());
        assert!(
            matches!(&e, rlwe::Error::Malformed { reason, .. } if reason.contains("Galois element")),
            "{bad}: {e:?}"
        );
    }
    // A fingerprint patched in a key blob.
    let mut f = ctx.relin_key_to_bytes(&s.rlk).unwrap();
    f[HEADER_LEN] ^= 1;
    let e = err_rlwe(ctx.relin_key_from_bytes(&f).err().unwrap());
    assert!(matches!(e, rlwe::Error::ParameterMismatch { .. }));
}

#[test]
fn secret_key_blob_is_a_seed() {
    let s = setup(n11());
    let b = s.ctx.secret_key_to_bytes(&s.sk).unwrap();
    assert_eq!(&b[HEADER_LEN + 8..], &s.sk.seed().0[..]);
    let kg = s.ctx.key_generator();
    let again = kg.secret_key_from_seed(Seed(s.sk.seed().0)).unwrap();
    let loaded = s.ctx.secret_key_from_bytes(&b).unwrap();
    assert_eq!(active(s.be(), loaded.poly()), active(s.be(), again.poly()));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn arbitrary_bytes_never_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..600),
        tag in 0u8..10,
        with_header in any::<bool>(),
    ) {
        let ctx = n11();
        let mut b = bytes;
        if with_header {
            let mut h = Vec::from(rlwe::wire::MAGIC);
            h.extend_from_slice(&rlwe::wire::FORMAT_VERSION.to_le_bytes());
            h.push(tag);
            h.extend_from_slice(&b);
            b = h;
        }
        prop_assert!(ctx.secret_key_from_bytes(&b).is_err() || with_header);
        prop_assert!(ctx.public_key_from_bytes(&b).is_err());
        prop_assert!(ctx.relin_key_from_bytes(&b).is_err());
        prop_assert!(ctx.galois_keys_from_bytes(&b).is_err() || with_header);
        prop_assert!(ctx.plaintext_from_bytes(&b).is_err());
        prop_assert!(ctx.ciphertext_from_bytes(&b).is_err());
    }
}
