//! Metadata cannot contradict the data: `rlwe::Ciphertext` / `Plaintext` fields are private,
//! built and changed only through checked constructors and methods (level against the buffer,
//! form changed with the data, scale range, fingerprint), loaded blobs included.

use ckks::params::TEST_N11_INSECURE;
use ckks::{Context, Encoder, Parameters};
use fhe_math::backend::prelude::*;
use fhe_math::cpu::CpuBackend;
use fhe_math::fft::Complex64;
use rlwe::{Ciphertext, Meta, Plaintext, encrypt};

type Be = CpuBackend;

struct Setup {
    ctx: Context<Be>,
    enc: Encoder<Be>,
    sk: rlwe::SecretKey<Be>,
    ct: Ciphertext<Be>,
    x: Vec<Complex64>,
}

fn setup() -> Setup {
    let ctx = Context::<Be>::cpu(Parameters::new(&TEST_N11_INSECURE).unwrap()).unwrap();
    let kg = ctx.key_generator();
    let sk = kg.secret_key().unwrap();
    let pk = kg.public_key(&sk).unwrap();
    let enc = Encoder::new(&ctx).unwrap();
    let top = ctx.params().max_level();
    let x: Vec<Complex64> = (0..8)
        .map(|i| Complex64::new(i as f64 / 8.0, 0.0))
        .collect();
    let ct = encrypt::encrypt_pk(ctx.backend(), &pk, &enc.encode(&x, top).unwrap()).unwrap();
    Setup {
        ctx,
        enc,
        sk,
        ct,
        x,
    }
}

impl Setup {
    fn be(&self) -> &Be {
        self.ctx.backend()
    }

    fn decrypts_to_x(&self, ct: &Ciphertext<Be>) -> bool {
        let p = encrypt::decrypt(self.be(), &self.sk, ct).unwrap();
        let v = self.enc.decode(&p).unwrap();
        (0..8).all(|i| (v[i] - self.x[i]).norm() < 1e-3)
    }
}

#[test]
fn metadata_contradicting_the_data_is_refused() {
    let s = setup();
    let be = s.be();
    let ct = &s.ct;
    let meta = ct.meta();
    let top = meta.level();
    // The form flag changes only together with the data.
    let mut c = ct.duplicate(be).unwrap();
    assert!(
        c.modify(be, meta.with_ntt(false), |_| Ok::<_, rlwe::Error>(()))
            .is_err()
    );
    assert_eq!(c.meta(), meta);
    c.set_form(be, false).unwrap();
    assert!(!c.is_ntt());
    assert!(s.decrypts_to_x(&c), "coefficient form decrypts correctly");
    // The level must be the buffer's.
    let mut c = ct.duplicate(be).unwrap();
    assert!(
        c.modify(be, meta.with_level(0), |_| Ok::<_, rlwe::Error>(()))
            .is_err()
    );
    assert_eq!(c.level(), top);
    let (poly, _) = ct.duplicate(be).unwrap().into_parts();
    assert!(Ciphertext::new(be, poly, meta.with_level(0)).is_err());
    // Dropping limbs and the level together is accepted.
    let mut c = ct.duplicate(be).unwrap();
    c.modify(be, meta.with_level(top - 1), |p| be.set_level(p, top - 1))
        .unwrap();
    assert_eq!(be.shape(c.poly()).level, top - 1);
    // A buffer changed to another shape than the metadata says is refused, and the
    // ciphertext keeps a buffer of its metadata's shape.
    let mut c = ct.duplicate(be).unwrap();
    assert!(c.modify(be, meta, |p| be.set_level(p, 0)).is_err());
    assert_eq!(be.shape(c.poly()).level, c.level());
    // Scales the level cannot carry, and another parameter set.
    let mut c = ct.duplicate(be).unwrap();
    for scale in [0.5, f64::INFINITY, f64::NAN, 2f64.powi(1000)] {
        assert!(
            c.modify(be, meta.with_scale(scale), |_| Ok::<_, rlwe::Error>(()))
                .is_err()
        );
        let (poly, _) = ct.duplicate(be).unwrap().into_parts();
        assert!(Ciphertext::new(be, poly, meta.with_scale(scale)).is_err());
    }
    let foreign = Meta::new(top, meta.scale(), true, meta.fingerprint() ^ 1);
    assert!(c.modify(be, foreign, |_| Ok::<_, rlwe::Error>(())).is_err());
    assert_eq!(c.meta(), meta);
    assert!(s.decrypts_to_x(&c));
    // Component counts: a ciphertext has 2 or 3, a plaintext 1.
    let (poly, _) = ct.duplicate(be).unwrap().into_parts();
    assert!(Plaintext::new(be, poly, meta).is_err());
}

#[test]
fn plaintext_metadata_is_checked() {
    let s = setup();
    let be = s.be();
    let pt = s.enc.encode(&s.x, 1).unwrap();
    let meta = pt.meta();
    let mut p = pt.duplicate(be).unwrap();
    assert!(
        p.modify(be, meta.with_level(0), |_| Ok::<_, rlwe::Error>(()))
            .is_err()
    );
    assert!(
        p.modify(be, meta.with_ntt(false), |_| Ok::<_, rlwe::Error>(()))
            .is_err()
    );
    assert!(
        p.modify(be, meta.with_scale(0.25), |_| Ok::<_, rlwe::Error>(()))
            .is_err()
    );
    assert_eq!(p.meta(), meta);
    p.set_form(be, false).unwrap();
    assert_eq!(
        s.enc.decode(&p).unwrap()[..8],
        s.enc.decode(&pt).unwrap()[..8]
    );
    let (poly, _) = pt.into_parts();
    assert!(Ciphertext::new(be, poly, meta).is_err(), "one component");
}
