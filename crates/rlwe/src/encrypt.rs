//! Encryption and decryption.
//!
//! Public key: `c = (b·u + e_0 + m, a·u + e_1)` with `u` ternary and `e_i` Gaussian.
//! Secret key: `c = (-a·s + e + m, a)` with `a` expanded from a seed that can replace `c_1` on
//! the wire. Decryption: `m ≈ c_0 + c_1·s (+ c_2·s²)`.
//!
//! The `*_with_factor` variants multiply every error by an integer `f` (`f·e_0`, `f·e_1`,
//! `f·e`): BGV encrypts with `f = t` so that `c_0 + c_1·s = m + t·(…)`. The plain functions use
//! `f = 1` and are bit-identical to the scaled ones at `f = 1`.

use crate::ciphertext::{Ciphertext, Meta, Plaintext};
use crate::error::{Error, Result, check_same};
use crate::keys::{PublicKey, SecretKey};
use fhe_math::backend::RingBackend;
use fhe_math::poly::{RnsPoly, Shape};
use fhe_math::sampler::{Domain, Seed};

fn check_plaintext<B: RingBackend>(pt: &Plaintext<B>) -> Result<()> {
    if !pt.meta.ntt {
        return Err(Error::InvalidOperand {
            op: "encrypt",
            reason: "the plaintext must be in NTT form".into(),
        });
    }
    Ok(())
}

/// Public-key encryption of `pt` (NTT form) with fresh randomness.
pub fn encrypt_pk<B: RingBackend>(
    backend: &B,
    pk: &PublicKey<B>,
    pt: &Plaintext<B>,
) -> Result<Ciphertext<B>> {
    encrypt_pk_with_seed(backend, pk, pt, &Seed::random())
}

/// Public-key encryption with the ephemeral `u`, `e_0`, `e_1` expanded from `seed`.
pub fn encrypt_pk_with_seed<B: RingBackend>(
    backend: &B,
    pk: &PublicKey<B>,
    pt: &Plaintext<B>,
    seed: &Seed,
) -> Result<Ciphertext<B>> {
    encrypt_pk_with_factor(backend, pk, pt, seed, 1)
}

/// Public-key encryption with errors scaled by `error_factor`:
/// `c = (b·u + f·e_0 + m, a·u + f·e_1)` (`u`, `e_0`, `e_1` expanded from `seed`).
pub fn encrypt_pk_with_factor<B: RingBackend>(
    backend: &B,
    pk: &PublicKey<B>,
    pt: &Plaintext<B>,
    seed: &Seed,
    error_factor: u64,
) -> Result<Ciphertext<B>> {
    check_same("encrypt", pk.fingerprint, pt.meta.fingerprint)?;
    check_plaintext(pt)?;
    let level = pt.meta.level;
    let mut u = backend.sample_ternary(
        seed,
        Domain::EncryptU,
        0,
        Shape {
            components: 1,
            level,
            extended: false,
        },
    )?;
    backend.ntt(&mut u)?;
    let mut e = backend.sample_gaussian(
        seed,
        Domain::Error,
        0,
        Shape {
            components: 2,
            level,
            extended: false,
        },
    )?;
    crate::keys::scale_error(backend, &mut e, error_factor)?;
    backend.ntt(&mut e)?;
    let mut c = backend.duplicate(&pk.poly)?;
    backend.set_level(&mut c, level)?;
    backend.mul_plain_assign(&mut c, &u)?;
    backend.zeroize(&mut u);
    backend.add_assign(&mut c, &e)?;
    backend.zeroize(&mut e);
    backend.add_component_assign(&mut c, 0, &pt.poly)?;
    Ok(Ciphertext {
        poly: c,
        meta: pt.meta,
        seed: None,
    })
}

/// Secret-key encryption with fresh randomness; the ciphertext keeps the seed of `c_1`.
pub fn encrypt_sk<B: RingBackend>(
    backend: &B,
    sk: &SecretKey<B>,
    pt: &Plaintext<B>,
) -> Result<Ciphertext<B>> {
    encrypt_sk_with_seeds(backend, sk, pt, Seed::random(), &Seed::random())
}

/// Secret-key encryption with `a` from `seed_a` and the error from `seed_e`.
pub fn encrypt_sk_with_seeds<B: RingBackend>(
    backend: &B,
    sk: &SecretKey<B>,
    pt: &Plaintext<B>,
    seed_a: Seed,
    seed_e: &Seed,
) -> Result<Ciphertext<B>> {
    encrypt_sk_with_factor(backend, sk, pt, seed_a, seed_e, 1)
}

/// Secret-key encryption with the error scaled by `error_factor`: `c = (-a·s + f·e + m, a)`.
pub fn encrypt_sk_with_factor<B: RingBackend>(
    backend: &B,
    sk: &SecretKey<B>,
    pt: &Plaintext<B>,
    seed_a: Seed,
    seed_e: &Seed,
    error_factor: u64,
) -> Result<Ciphertext<B>> {
    check_same("encrypt", sk.fingerprint(), pt.meta.fingerprint)?;
    check_plaintext(pt)?;
    let level = pt.meta.level;
    let shape = Shape {
        components: 1,
        level,
        extended: false,
    };
    let a = backend.sample_uniform(&seed_a, Domain::PublicA, 0, shape)?;
    let mut b = backend.duplicate(&a)?;
    backend.mul_plain_assign(&mut b, sk.poly())?;
    backend.neg_assign(&mut b)?;
    let mut e = backend.sample_gaussian(seed_e, Domain::Error, 0, shape)?;
    crate::keys::scale_error(backend, &mut e, error_factor)?;
    backend.ntt(&mut e)?;
    backend.add_assign(&mut b, &e)?;
    backend.zeroize(&mut e);
    backend.add_assign(&mut b, &pt.poly)?;
    let mut c = backend.zeros(Shape {
        components: 2,
        level,
        extended: false,
    })?;
    backend.copy_component(&b, 0, &mut c, 0)?;
    backend.copy_component(&a, 0, &mut c, 1)?;
    Ok(Ciphertext {
        poly: c,
        meta: pt.meta,
        seed: Some(seed_a),
    })
}

/// Rebuilds `c_1` of a seeded fresh ciphertext: the uniform polynomial of `seed` at `level`.
pub fn expand_seeded_c1<B: RingBackend>(backend: &B, seed: &Seed, level: usize) -> Result<B::Poly> {
    Ok(backend.sample_uniform(
        seed,
        Domain::PublicA,
        0,
        Shape {
            components: 1,
            level,
            extended: false,
        },
    )?)
}

/// `c_0 + c_1·s (+ c_2·s²)` in NTT form, at the ciphertext's level (a ciphertext in
/// coefficient form is transformed on a copy first).
pub fn decrypt<B: RingBackend>(
    backend: &B,
    sk: &SecretKey<B>,
    ct: &Ciphertext<B>,
) -> Result<Plaintext<B>> {
    check_same("decrypt", sk.fingerprint(), ct.meta.fingerprint)?;
    let shape = backend.shape(&ct.poly);
    let transformed = match ct.meta.ntt {
        true => None,
        false => {
            let mut c = backend.duplicate(&ct.poly)?;
            backend.ntt(&mut c)?;
            Some(c)
        }
    };
    let components = transformed.as_ref().unwrap_or(&ct.poly);
    let level = shape.level;
    let mut m = backend.zeros(Shape {
        components: 1,
        level,
        extended: false,
    })?;
    backend.copy_component(components, 0, &mut m, 0)?;
    let mut s_power = backend.duplicate(sk.poly())?;
    for c in 1..shape.components {
        let mut t = backend.zeros(Shape {
            components: 1,
            level,
            extended: false,
        })?;
        backend.copy_component(components, c, &mut t, 0)?;
        backend.mul_plain_assign(&mut t, &s_power)?;
        backend.add_assign(&mut m, &t)?;
        if c + 1 < shape.components {
            backend.mul_plain_assign(&mut s_power, sk.poly())?;
        }
    }
    backend.zeroize(&mut s_power);
    Ok(Plaintext {
        poly: m,
        meta: Meta {
            ntt: true,
            ..ct.meta
        },
    })
}

/// Decrypts and brings the result to the host in coefficient form.
pub fn decrypt_to_host<B: RingBackend>(
    backend: &B,
    sk: &SecretKey<B>,
    ct: &Ciphertext<B>,
) -> Result<RnsPoly> {
    let mut pt = decrypt(backend, sk, ct)?;
    backend.intt(&mut pt.poly)?;
    Ok(backend.download(&pt.poly)?)
}

/// Metadata of a fresh encryption at `level`.
pub fn fresh_meta(level: usize, scale: f64, fingerprint: u64) -> Meta {
    Meta {
        level,
        scale,
        ntt: true,
        fingerprint,
    }
}
