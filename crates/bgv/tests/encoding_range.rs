//! Every public encoding entry refuses plaintext values outside the range of `t` (unsigned:
//! `[0, t)`; signed: the centred range `(-t/2, t/2]`) instead of reducing them silently.

use bgv::params::{ParametersLiteral, TEST_N11_INSECURE};
use bgv::{Context, Encoder, Error, Parameters};
use fhe_math::cpu::CpuBackend;

fn encoder(t: u64) -> Encoder<CpuBackend> {
    let lit = ParametersLiteral {
        plaintext_modulus: t,
        ..TEST_N11_INSECURE
    };
    Encoder::new(&Context::cpu(Parameters::new(&lit).unwrap()).unwrap())
}

fn refused<T>(r: bgv::Result<T>, what: &str) {
    match r {
        Err(Error::ValueOutOfRange { .. } | Error::SignedValueOutOfRange { .. }) => {}
        Err(e) => panic!("{what}: expected an out-of-range error, got {e:?}"),
        Ok(_) => panic!("{what}: an out-of-range value was accepted"),
    }
}

#[test]
fn unsigned_values_at_or_above_t_are_refused() {
    // t = 65537 batches; t = 256 does not (coefficient encoding only).
    for t in [65537u64, 256] {
        let enc = encoder(t);
        let n = 1 << TEST_N11_INSECURE.log_n;
        for bad in [t, t + 1, 1 << 63, u64::MAX] {
            let mut v = vec![1u64; 4];
            v[2] = bad;
            if t == 65537 {
                refused(enc.encode(&v, 0), &format!("encode {bad} (t = {t})"));
            }
            refused(enc.encode_unbatch(&v, 0), &format!("encode_unbatch {bad}"));
            let mut coeffs = vec![0u64; n];
            coeffs[5] = bad;
            refused(enc.lift(coeffs, 0), &format!("lift {bad} (t = {t})"));
        }
        assert!(enc.encode_unbatch(&[t - 1, 0, 1], 0).is_ok());
        assert!(enc.lift(vec![t - 1; n], 0).is_ok());
    }
}

#[test]
fn signed_values_outside_the_centred_range_are_refused() {
    // Odd t = 65537: [-32768, 32768]; even t = 256: (-128, 128].
    for (t, lo, hi) in [(65537u64, -32768i64, 32768i64), (256, -127, 128)] {
        let enc = encoder(t);
        for bad in [lo - 1, hi + 1, t as i64, -(t as i64), i64::MAX, i64::MIN] {
            let v = [0, bad, 1];
            if t == 65537 {
                refused(enc.encode_signed(&v, 0), &format!("encode_signed {bad}"));
            }
            refused(
                enc.encode_unbatch_signed(&v, 0),
                &format!("encode_unbatch_signed {bad} (t = {t})"),
            );
        }
        let edge = [lo, hi, 0, -1];
        let p = enc.encode_unbatch_signed(&edge, 0).unwrap();
        let back: Vec<i64> = enc.decode_unbatch(&p)[..4]
            .iter()
            .map(|&x| enc.context().plain().center(x))
            .collect();
        assert_eq!(back, edge);
        if t == 65537 {
            let p = enc.encode_signed(&edge, 0).unwrap();
            assert_eq!(enc.decode_signed(&p).unwrap()[..4], edge);
        }
    }
}
