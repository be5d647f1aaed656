//! [`Context`]: BFV parameters on a backend: the wrapped `bgv` context (parameters, backend,
//! plaintext modulus, encoder machinery, serialization), `Δ = ⌊Q/t⌋` per prime, the
//! scale-and-round tables of the product and the noise model; key generation (errors with
//! factor 1) and encryption of `Δ·m`.

use crate::noise::BfvNoise;
use crate::{BFV_TAG, Ciphertext, Error, Parameters, Plaintext, Result};
use fhe_math::ScaleRoundTables;
use fhe_math::backend::Backend;
use fhe_math::cpu::CpuBackend;
use fhe_math::sampler::Seed;
use num_bigint::BigUint;
use num_traits::{One, ToPrimitive};
use rlwe::encrypt;
use rlwe::{PublicKey, SecretKey};
use std::sync::Arc;

/// BFV parameters bound to a backend.
#[derive(Clone)]
pub struct Context<B: Backend> {
    inner: bgv::Context<B>,
    delta: Vec<u64>,
    tables: Arc<ScaleRoundTables>,
    noise: Arc<BfvNoise>,
}

impl Context<CpuBackend> {
    /// A context on the CPU backend.
    pub fn cpu(params: Arc<Parameters>) -> Result<Self> {
        let ring = bgv::context::ring_for(&params)?;
        Self::with_backend(params, CpuBackend::new(ring))
    }
}

impl<B: Backend> Context<B> {
    /// A context on an already built backend (its ring must be this parameter set's); the
    /// parameters must carry the BFV tag (built with [`crate::params::new`]).
    pub fn with_backend(params: Arc<Parameters>, backend: B) -> Result<Self> {
        if params.scheme_tag() != BFV_TAG {
            return Err(Error::ParameterMismatch {
                what: "BFV needs parameters built with bfv::params::new (scheme tag bfv)".into(),
            });
        }
        let inner = bgv::Context::with_backend(params.clone(), backend)?;
        let q = params.moduli_q();
        let q_big = q.iter().fold(BigUint::one(), |a, &p| a * p);
        let delta_big = &q_big / params.t();
        let delta = q
            .iter()
            .map(|&p| (&delta_big % p).to_u64().expect("below a u64 prime"))
            .collect();
        let tables = Arc::new(ScaleRoundTables::new(
            inner.backend().ring(),
            params.max_level(),
            params.t(),
        )?);
        let noise = Arc::new(BfvNoise::new(&params, tables.max_round_error()));
        Ok(Context {
            inner,
            delta,
            tables,
            noise,
        })
    }

    /// The wrapped `bgv` context (parameters, backend, plaintext modulus; pass it to
    /// [`bgv::Encoder::new`] and to the ciphertext's `to_bytes`/`from_bytes`).
    pub fn bgv(&self) -> &bgv::Context<B> {
        &self.inner
    }

    /// The parameters.
    pub fn params(&self) -> &Arc<Parameters> {
        self.inner.params()
    }

    /// The backend.
    pub fn backend(&self) -> &B {
        self.inner.backend()
    }

    /// The plaintext modulus and its encodings.
    pub fn plain(&self) -> &bgv::PlainModulus {
        self.inner.plain()
    }

    /// The noise model.
    pub fn noise(&self) -> &BfvNoise {
        &self.noise
    }

    /// The scale-and-round tables of the product.
    pub fn tables(&self) -> &ScaleRoundTables {
        &self.tables
    }

    /// An encoder (plaintexts at the top level: ciphertexts never leave it).
    pub fn encoder(&self) -> bgv::Encoder<B> {
        bgv::Encoder::new(&self.inner)
    }

    /// The top level `L`, where every BFV ciphertext lives.
    pub fn level(&self) -> usize {
        self.params().max_level()
    }

    /// A key generator with errors of factor 1 (BFV keys).
    pub fn key_generator(&self) -> rlwe::KeyGenerator<'_, B> {
        rlwe::KeyGenerator::new(self.backend(), self.params().fingerprint())
    }

    /// `Δ·m` mod every prime, NTT form, from a top-level plaintext.
    pub(crate) fn scaled(&self, pt: &Plaintext<B>) -> Result<rlwe::Plaintext<B>> {
        if pt.level() != self.level() {
            return Err(Error::InvalidArgument {
                op: "use a plaintext",
                reason: format!(
                    "BFV plaintexts are encoded at the top level {}, got level {}",
                    self.level(),
                    pt.level()
                ),
            });
        }
        let mut p = pt.inner.duplicate(self.backend())?;
        self.backend().mul_scalar_assign(&mut p.poly, &self.delta)?;
        Ok(p)
    }

    /// Public-key encryption with fresh randomness: `(b·u + e_0 + Δ·m, a·u + e_1)`.
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
        let p = self.scaled(pt)?;
        let inner = encrypt::encrypt_pk_with_seed(self.backend(), pk, &p, seed)?;
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

    /// Secret-key encryption `(-a·s + e + Δ·m, a)` with `a` from `seed_a`, `e` from `seed_e`.
    pub fn encrypt_sk_with_seeds(
        &self,
        sk: &SecretKey<B>,
        pt: &Plaintext<B>,
        seed_a: Seed,
        seed_e: &Seed,
    ) -> Result<Ciphertext<B>> {
        let p = self.scaled(pt)?;
        let inner = encrypt::encrypt_sk_with_seeds(self.backend(), sk, &p, seed_a, seed_e)?;
        Ok(Ciphertext {
            inner,
            factor: 1,
            noise_bits: self.noise.fresh_secret(),
        })
    }

    /// Serializes a ciphertext (`bgv`'s wire format under the BFV fingerprint).
    pub fn ciphertext_to_bytes(&self, ct: &Ciphertext<B>) -> Result<Vec<u8>> {
        ct.to_bytes(&self.inner)
    }

    /// Loads and validates a ciphertext (fingerprint, lengths, residues, factor 1, top level).
    pub fn ciphertext_from_bytes(&self, bytes: &[u8]) -> Result<Ciphertext<B>> {
        let ct = Ciphertext::from_bytes(&self.inner, bytes)?;
        if ct.factor != 1 || ct.level() != self.level() {
            return Err(rlwe::Error::Malformed {
                what: "ciphertext",
                reason: format!(
                    "a BFV ciphertext has factor 1 and level {} (got factor {}, level {})",
                    self.level(),
                    ct.factor,
                    ct.level()
                ),
            }
            .into());
        }
        Ok(ct)
    }
}
