//! BGV/BFV ciphertext fields are private; `Ciphertext::new` refuses parts that contradict the
//! context (another parameter set, a scale other than 1, a factor not invertible mod t, a
//! non-finite noise bound).

use bgv::params::{N13, TEST_N11_INSECURE};
use bgv::{Ciphertext, Context, Encoder, Parameters};
use fhe_math::cpu::CpuBackend;

#[test]
fn ciphertext_parts_are_checked() {
    let ctx = Context::<CpuBackend>::cpu(Parameters::new(&TEST_N11_INSECURE).unwrap()).unwrap();
    let be = ctx.backend();
    let sk = ctx.key_generator().secret_key().unwrap();
    let top = ctx.params().max_level();
    let pt = Encoder::new(&ctx).encode(&[1, 2, 3], top).unwrap();
    let ct = ctx.encrypt_sk(&sk, &pt).unwrap();
    let t = ctx.params().t();
    let rebuilt = |factor: u64, bits: f64| {
        let inner = ct.inner().duplicate(be).unwrap();
        Ciphertext::new(&ctx, inner, factor, bits)
    };
    assert!(rebuilt(1, ct.noise_bits()).is_ok());
    for factor in [0, t, t + 1, u64::MAX] {
        assert!(rebuilt(factor, ct.noise_bits()).is_err(), "factor {factor}");
    }
    for bits in [f64::NAN, f64::INFINITY] {
        assert!(rebuilt(1, bits).is_err());
    }
    // Scale other than 1.
    let inner = ct.inner().duplicate(be).unwrap();
    let (poly, meta) = inner.into_parts();
    let scaled = rlwe::Ciphertext::new(be, poly, meta.with_scale(2.0)).unwrap();
    assert!(Ciphertext::new(&ctx, scaled, 1, 1.0).is_err());
    // Another parameter set.
    let other = Context::<CpuBackend>::cpu(Parameters::new(&N13).unwrap()).unwrap();
    let inner = ct.inner().duplicate(be).unwrap();
    assert!(Ciphertext::new(&other, inner, 1, 1.0).is_err());
}
