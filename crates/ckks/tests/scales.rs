//! Scales a level cannot carry are errors, on load and in the evaluator (never garbage).

use ckks::params::TEST_N11_INSECURE;
use ckks::{Error, ParametersLiteral, Security};
use fhe_math::fft::Complex64;
use rlwe::Ciphertext;
use rlwe::encrypt;
use rlwe::wire::HEADER_LEN;

mod common;
use common::{Be, Setup, setup};

fn values(n: usize) -> Vec<Complex64> {
    (0..n)
        .map(|i| Complex64::new((i as f64 * 0.37).sin(), (i as f64 * 0.11).cos()))
        .collect()
}

impl Setup {
    fn encrypt_at(&self, level: usize, scale: f64, v: &[Complex64]) -> Ciphertext<Be> {
        let slots = self.enc.max_slots();
        let pt = self.enc.encode_with(v, level, scale, slots).unwrap();
        encrypt::encrypt_pk(self.ctx.backend(), &self.pk, &pt).unwrap()
    }
}

/// The scale bytes of a plaintext or ciphertext blob (payload: level u64, scale f64, ...).
const SCALE: std::ops::Range<usize> = HEADER_LEN + 8..HEADER_LEN + 16;

fn patch_scale(bytes: &[u8], scale: f64) -> Vec<u8> {
    let mut b = bytes.to_vec();
    b[SCALE].copy_from_slice(&scale.to_le_bytes());
    b
}

fn malformed_reason(e: Error) -> String {
    match e {
        Error::Rlwe(rlwe::Error::Malformed { reason, .. }) => reason,
        e => panic!("expected a malformed blob, got {e:?}"),
    }
}

#[test]
fn loaded_scales_the_encoder_would_refuse_are_errors() {
    let s = setup(&TEST_N11_INSECURE);
    let x = values(s.enc.max_slots());
    let pt = s.enc.encode(&x, 0).unwrap();
    let ct = encrypt::encrypt_pk(s.ctx.backend(), &s.pk, &pt).unwrap();
    let pt_bytes = s.ctx.plaintext_to_bytes(&pt).unwrap();
    let ct_bytes = s.ctx.ciphertext_to_bytes(&ct).unwrap();
    // Below 1, and far beyond q_0 (about 2^60) at level 0.
    for scale in [0.5, 2f64.powi(-30), 2f64.powi(200), 1e300] {
        let r = s.ctx.plaintext_from_bytes(&patch_scale(&pt_bytes, scale));
        assert!(
            malformed_reason(r.err().unwrap()).contains("scale"),
            "{scale}"
        );
        let r = s.ctx.ciphertext_from_bytes(&patch_scale(&ct_bytes, scale));
        assert!(
            malformed_reason(r.err().unwrap()).contains("scale"),
            "{scale}"
        );
    }
    // The encoder refuses the same scales.
    let slots = s.enc.max_slots();
    assert!(s.enc.encode_with(&x, 0, 0.5, slots).is_err());
    let zeros = vec![Complex64::new(0.0, 0.0); slots];
    assert!(matches!(
        s.enc.encode_with(&zeros, 0, 2f64.powi(200), slots),
        Err(Error::ScaleOutOfRange { .. })
    ));
    // The original blobs still load.
    assert!(s.ctx.plaintext_from_bytes(&pt_bytes).is_ok());
    assert!(s.ctx.ciphertext_from_bytes(&ct_bytes).is_ok());
}

#[test]
fn products_beyond_the_modulus_at_level_0_are_errors() {
    let s = setup(&TEST_N11_INSECURE);
    let x = values(s.enc.max_slots());
    let delta = s.ctx.params().scale(0).unwrap();
    let a = s.encrypt_at(0, delta, &x);
    let p = s.enc.encode(&x, 0).unwrap();
    let out_of_range = |r: ckks::Result<Ciphertext<Be>>| match r {
        Err(e @ Error::ScaleOutOfRange { .. }) => {
            let msg = e.to_string();
            assert!(msg.starts_with("cannot multiply"), "{msg}");
            assert!(msg.contains("exceeds the modulus at level 0"), "{msg}");
        }
        Err(e) => panic!("expected ScaleOutOfRange, got {e:?}"),
        Ok(_) => panic!("a product of scale Δ_0² at level 0 was accepted"),
    };
    out_of_range(s.eval.mul(&a, &a));
    out_of_range(s.eval.square(&a));
    out_of_range(s.eval.mul_relin(&a, &a, &s.rlk));
    out_of_range(s.eval.mul_plain(&a, &p));
    out_of_range(s.eval.mul_const(&a, 0.5));
    out_of_range(s.eval.mul_const_complex(&a, Complex64::new(0.5, 0.5)));
    // An integer multiple keeps the scale and stays valid.
    let tripled = s.eval.mul_int(&a, 3).unwrap();
    let back = encrypt::decrypt(s.ctx.backend(), &s.sk, &tripled).unwrap();
    let got = s.enc.decode(&back).unwrap();
    assert!((got[1] - x[1] * 3.0).norm() < 1e-3);
}

#[test]
fn infinite_product_scales_are_errors() {
    // About 60 + 20·50 = 1060 bits of modulus: a scale of 2^600 fits, its square overflows f64.
    let lit = ParametersLiteral {
        log_n: 11,
        levels: 20,
        first_prime_bits: 60,
        scale_bits: 50,
        special_primes: 1,
        special_prime_bits: 60,
        dnum: 21,
        security: Security::InsecureForTestingOnly,
        application_primes: None,
    };
    let s = setup(&lit);
    let top = s.ctx.params().max_level();
    let zeros = vec![Complex64::new(0.0, 0.0); s.enc.max_slots()];
    let a = s.encrypt_at(top, 2f64.powi(600), &zeros);
    for r in [
        s.eval.mul(&a, &a),
        s.eval.mul_relin(&a, &a, &s.rlk),
        s.eval.mul_relin_rescale(&a, &a, &s.rlk),
    ] {
        match r {
            Err(e @ Error::ScaleOutOfRange { .. }) => {
                assert!(e.to_string().contains("not finite"), "{e}")
            }
            Err(e) => panic!("expected ScaleOutOfRange, got {e:?}"),
            Ok(ct) => panic!("a product of scale {} was accepted", ct.scale()),
        }
    }
}

#[test]
fn rescaling_below_scale_one_is_an_error() {
    let s = setup(&TEST_N11_INSECURE);
    let top = s.ctx.params().max_level();
    let x = values(8);
    // Scale 2^10: dividing by a 40-bit prime leaves 2^-30.
    let mut a = s.encrypt_at(top, 1024.0, &x);
    assert!(matches!(
        s.eval.rescale(&a),
        Err(Error::ScaleOutOfRange { op: "rescale", .. })
    ));
    assert!(matches!(
        s.eval.rescale_assign(&mut a),
        Err(Error::ScaleOutOfRange { op: "rescale", .. })
    ));
    // A product at the ladder scale still rescales to Δ_{l-1}.
    let b = s.encrypt_at(top, s.ctx.params().scale(top).unwrap(), &x);
    let prod = s.eval.mul_relin(&b, &b, &s.rlk).unwrap();
    let r = s.eval.rescale(&prod).unwrap();
    let want = s.ctx.params().scale(top - 1).unwrap();
    assert!((r.scale() / want - 1.0).abs() < 1e-9);
}
