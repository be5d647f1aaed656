//! [`Context`]: BGV parameters bound to a backend, with the plaintext modulus and noise model;
//! encryption (errors scaled by `t`) and key generation.

use crate::ciphertext::{Ciphertext, Plaintext};
use crate::encoding::PlainModulus;
use crate::error::{Error, Result};
use crate::noise::NoiseModel;
use crate::params::Parameters;
use fhe_math::backend::IntegerBackend;
use fhe_math::cpu::CpuBackend;
use fhe_math::ring::RingContext;
use fhe_math::sampler::Seed;
use rlwe::encrypt;
use rlwe::{PublicKey, SecretKey};
use std::sync::Arc;

/// The RNS ring of a parameter set (primes, NTT tables, key-switching tables).
pub fn ring_for(params: &Parameters) -> Result<Arc<RingContext>> {
    Ok(rlwe::chain::ring_of(params)?)
}

/// BGV parameters with the backend that computes on them.
#[derive(Clone)]
pub struct Context<B: IntegerBackend> {
    params: Arc<Parameters>,
    backend: B,
    plain: PlainModulus,
    noise: Arc<NoiseModel>,
}

impl Context<CpuBackend> {
    /// A context on the CPU backend.
    pub fn cpu(params: Arc<Parameters>) -> Result<Self> {
        let ring = ring_for(&params)?;
        Self::with_backend(params, CpuBackend::new(ring))
    }
}

impl<B: IntegerBackend> Context<B> {
    /// A context on an already built backend; the backend's ring must be this parameter set's.
    pub fn with_backend(params: Arc<Parameters>, backend: B) -> Result<Self> {
        if !rlwe::chain::backend_fits(&backend, params.as_ref()) {
            return Err(Error::BackendMismatch);
        }
        let plain = PlainModulus::new(params.n(), params.t())?;
        let noise = Arc::new(NoiseModel::new(&params));
        Ok(Context {
            params,
            backend,
            plain,
            noise,
        })
    }

    /// The parameters.
    pub fn params(&self) -> &Arc<Parameters> {
        &self.params
    }

    /// The backend.
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// The plaintext modulus and its encodings.
    pub fn plain(&self) -> &PlainModulus {
        &self.plain
    }

    /// The analytic noise model.
    pub fn noise(&self) -> &NoiseModel {
        &self.noise
    }

    /// A key generator whose errors are scaled by `t` (BGV keys).
    pub fn key_generator(&self) -> rlwe::KeyGenerator<'_, B> {
        rlwe::KeyGenerator::new(&self.backend, self.params.fingerprint())
            .with_error_factor(self.params.t())
    }

    /// Public-key encryption with fresh randomness: `(b·u + t·e_0 + m, a·u + t·e_1)`.
    pub fn encrypt_pk(&self, pk: &PublicKey<B>, pt: &Plaintext<B>) -> Result<Ciphertext<B>> {
        self.encrypt_pk_with_seed(pk, pt, &Seed::random())
    }

    /// Public-key encryption with `u`, `e_0`, `e_1` expanded from `seed`.
    pub fn encrypt_pk_with_seed(
        &self,
        pk: &PublicKey<B>,
        pt: &Plaintext<B>,
        seed: &Seed,
    ) -> Result<Ciphertext<B>> {
        let inner =
            encrypt::encrypt_pk_with_factor(&self.backend, pk, &pt.inner, seed, self.params.t())?;
        Ok(Ciphertext {
            inner,
            factor: 1,
            noise_bits: self.noise.fresh_public(),
        })
    }

    /// Secret-key encryption with fresh randomness (`c_1` stays seeded for serialization).
    pub fn encrypt_sk(&self, sk: &SecretKey<B>, pt: &Plaintext<B>) -> Result<Ciphertext<B>> {
        self.encrypt_sk_with_seeds(sk, pt, Seed::random(), &Seed::random())
    }

    /// Secret-key encryption `(-a·s + t·e + m, a)` with `a` from `seed_a`, `e` from `seed_e`.
    pub fn encrypt_sk_with_seeds(
        &self,
        sk: &SecretKey<B>,
        pt: &Plaintext<B>,
        seed_a: Seed,
        seed_e: &Seed,
    ) -> Result<Ciphertext<B>> {
        let inner = encrypt::encrypt_sk_with_factor(
            &self.backend,
            sk,
            &pt.inner,
            seed_a,
            seed_e,
            self.params.t(),
        )?;
        Ok(Ciphertext {
            inner,
            factor: 1,
            noise_bits: self.noise.fresh_secret(),
        })
    }
}
