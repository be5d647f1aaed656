//! [`Context`]: CKKS parameters bound to a backend; key generation, encryption and decryption.

use crate::error::Result;
use crate::params::Parameters;
use fhe_math::backend::KeySwitchBackend;
use fhe_math::cpu::CpuBackend;
use fhe_math::ring::RingContext;
use fhe_math::sampler::Seed;
use rlwe::encrypt;
use rlwe::{Ciphertext, Plaintext, PublicKey, SecretKey};
use std::sync::Arc;

/// The RNS ring of a CKKS parameter set (primes, NTT tables, key-switching tables).
pub fn ring_for(params: &Parameters) -> Result<Arc<RingContext>> {
    Ok(rlwe::chain::ring_of(params)?)
}

/// CKKS parameters with the backend that computes on them.
#[derive(Clone)]
pub struct Context<B: KeySwitchBackend> {
    params: Arc<Parameters>,
    backend: B,
}

impl Context<CpuBackend> {
    /// A context on the CPU backend.
    pub fn cpu(params: Arc<Parameters>) -> Result<Self> {
        let ring = ring_for(&params)?;
        Ok(Context {
            params,
            backend: CpuBackend::new(ring),
        })
    }
}

impl<B: KeySwitchBackend> Context<B> {
    /// A context on an already built backend; the backend's ring must be this parameter set's.
    pub fn with_backend(params: Arc<Parameters>, backend: B) -> Result<Self> {
        if !rlwe::chain::backend_fits(&backend, params.as_ref()) {
            return Err(crate::error::Error::BackendMismatch);
        }
        Ok(Context { params, backend })
    }

    /// The parameters.
    pub fn params(&self) -> &Arc<Parameters> {
        &self.params
    }

    /// The backend.
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// A key generator for this context.
    pub fn key_generator(&self) -> rlwe::KeyGenerator<'_, B> {
        rlwe::KeyGenerator::new(&self.backend, self.params.fingerprint())
    }

    /// Public-key encryption with fresh randomness: `(b·u + e_0 + m, a·u + e_1)` at the
    /// plaintext's level and scale (the same method as `bgv`'s and `bfv`'s contexts; the
    /// RLWE primitive is [`rlwe::encrypt::encrypt_pk`]).
    pub fn encrypt_pk(&self, pk: &PublicKey<B>, pt: &Plaintext<B>) -> Result<Ciphertext<B>> {
        Ok(encrypt::encrypt_pk(&self.backend, pk, pt)?)
    }

    /// Public-key encryption with `u`, `e_0`, `e_1` expanded from `seed`.
    pub fn encrypt_pk_with_seed(
        &self,
        pk: &PublicKey<B>,
        pt: &Plaintext<B>,
        seed: &Seed,
    ) -> Result<Ciphertext<B>> {
        Ok(encrypt::encrypt_pk_with_seed(&self.backend, pk, pt, seed)?)
    }

    /// Secret-key encryption with fresh randomness (`c_1` stays seeded for serialization).
    pub fn encrypt_sk(&self, sk: &SecretKey<B>, pt: &Plaintext<B>) -> Result<Ciphertext<B>> {
        Ok(encrypt::encrypt_sk(&self.backend, sk, pt)?)
    }

    /// Secret-key encryption `(-a·s + e + m, a)` with `a` from `seed_a`, `e` from `seed_e`.
    pub fn encrypt_sk_with_seeds(
        &self,
        sk: &SecretKey<B>,
        pt: &Plaintext<B>,
        seed_a: Seed,
        seed_e: &Seed,
    ) -> Result<Ciphertext<B>> {
        Ok(encrypt::encrypt_sk_with_seeds(
            &self.backend,
            sk,
            pt,
            seed_a,
            seed_e,
        )?)
    }

    /// Decryption to a plaintext (NTT form, the ciphertext's level and scale); decode it with
    /// [`crate::Encoder::decode`].
    pub fn decrypt(&self, sk: &SecretKey<B>, ct: &Ciphertext<B>) -> Result<Plaintext<B>> {
        Ok(encrypt::decrypt(&self.backend, sk, ct)?)
    }
}
