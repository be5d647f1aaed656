//! BFV encodes through `bgv`'s encoder: values outside the range of `t` are refused there too.

use bfv::params::{self, TEST_N11_INSECURE};
use bfv::{Context, Error};
use fhe_math::cpu::CpuBackend;

#[test]
fn bfv_refuses_values_outside_the_range_of_t() {
    let ctx = Context::<CpuBackend>::cpu(params::new(&TEST_N11_INSECURE).unwrap()).unwrap();
    let enc = ctx.encoder();
    let t = ctx.params().t();
    let top = ctx.level();
    assert!(matches!(
        enc.encode(&[t], top),
        Err(Error::ValueOutOfRange { .. })
    ));
    assert!(matches!(
        enc.encode_signed(&[-(t as i64)], top),
        Err(Error::SignedValueOutOfRange { .. })
    ));
    assert!(matches!(
        enc.encode_unbatch_signed(&[(t / 2 + 1) as i64], top),
        Err(Error::SignedValueOutOfRange { .. })
    ));
    let mut coeffs = vec![0u64; ctx.params().n()];
    coeffs[0] = u64::MAX;
    assert!(matches!(
        enc.lift(coeffs, top),
        Err(Error::ValueOutOfRange { .. })
    ));
    // In range: encrypts and decrypts.
    let sk = ctx.key_generator().secret_key().unwrap();
    let pt = enc.encode_signed(&[-5, 7], top).unwrap();
    let ct = ctx.encrypt_sk(&sk, &pt).unwrap();
    let got = bfv::Decryptor::new(&ctx, &sk).decrypt_signed(&ct).unwrap();
    assert_eq!(got[..2], [-5, 7]);
}
