//! [`Context`]: BFV parameters on a backend: the wrapped `bgv` context (parameters, backend,
//! plaintext modulus, encoder machinery, serialization), `Δ_l = ⌊Q_l/t⌋` per level and prime,
//! the scale-and-round tables of the product per level (the top level's built eagerly, the
//! others on first use and cached) and the noise model; key generation (errors with factor 1)
//! and encryption of `Δ_l·m` at the plaintext's level `l`.

use crate::noise::BfvNoise;
use crate::{BFV_TAG, Ciphertext, Error, Parameters, Plaintext, Result};
use fhe_math::ScaleRoundTables;
use fhe_math::backend::IntegerBackend;
use fhe_math::cpu::CpuBackend;
use fhe_math::sampler::Seed;
use num_bigint::BigUint;
use num_traits::{One, ToPrimitive};
use rlwe::encrypt;
use rlwe::{PublicKey, SecretKey};
use std::sync::{Arc, OnceLock};

/// BFV parameters bound to a backend.
#[derive(Clone)]
pub struct Context<B: IntegerBackend> {
    inner: bgv::Context<B>,
    /// `[Δ_l]_{q_i}` for `i ≤ l`, per level `l`.
    delta: Arc<Vec<Vec<u64>>>,
    /// The scale-and-round tables of level `l`, built on first use.
    tables: Arc<Vec<OnceLock<ScaleRoundTables>>>,
    noise: Arc<BfvNoise>,
}

impl Context<CpuBackend> {
    /// A context on the CPU backend.
    pub fn cpu(params: Arc<Parameters>) -> Result<Self> {
        let ring = bgv::context::ring_for(&params)?;
        Self::with_backend(params, CpuBackend::new(ring))
    }
}

impl<B: IntegerBackend> Context<B> {
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
        let delta = (0..q.len())
            .map(|l| {
                let q_l = q[..=l].iter().fold(BigUint::one(), |a, &p| a * p);
                let delta_l = &q_l / params.t();
                q[..=l]
                    .iter()
                    .map(|&p| (&delta_l % p).to_u64().expect("below a u64 prime"))
                    .collect()
            })
            .collect();
        let tables: Vec<OnceLock<ScaleRoundTables>> =
            (0..q.len()).map(|_| OnceLock::new()).collect();
        let top = ScaleRoundTables::new(inner.backend().ring(), params.max_level(), params.t())?;
        let eps = top.max_round_error();
        let _ = tables[params.max_level()].set(top);
        let tables = Arc::new(tables);
        let noise = Arc::new(BfvNoise::new(&params, eps));
        Ok(Context {
            inner,
            delta: Arc::new(delta),
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

    /// The scale-and-round tables of the product at the top level.
    pub fn tables(&self) -> &ScaleRoundTables {
        self.tables[self.level()]
            .get()
            .expect("the top level's tables are built with the context")
    }

    /// The scale-and-round tables of the product at `level` (`⌊(t/Q_l)·(a ⊗ b)⌉`), built on
    /// first use and cached in the context (shared by its clones).
    pub fn tables_at(&self, level: usize) -> Result<&ScaleRoundTables> {
        let cell = self
            .tables
            .get(level)
            .ok_or_else(|| Error::InvalidArgument {
                op: "build scale-and-round tables",
                reason: format!("level {level} is above the top level {}", self.level()),
            })?;
        if let Some(t) = cell.get() {
            return Ok(t);
        }
        let built = ScaleRoundTables::new(self.backend().ring(), level, self.params().t())?;
        Ok(cell.get_or_init(|| built))
    }

    /// An encoder (`encode(values, level)`: plaintexts at any level `0..=L`; a BFV plaintext is
    /// used at its own level, where it is scaled by `Δ_l`).
    pub fn encoder(&self) -> bgv::Encoder<B> {
        bgv::Encoder::new(&self.inner)
    }

    /// The top level `L`, where fresh ciphertexts of top-level plaintexts live
    /// ([`crate::Evaluator::mod_switch`] takes them down).
    pub fn level(&self) -> usize {
        self.params().max_level()
    }

    /// A key generator with errors of factor 1 (BFV keys).
    pub fn key_generator(&self) -> rlwe::KeyGenerator<'_, B> {
        rlwe::KeyGenerator::new(self.backend(), self.params().fingerprint())
    }

    /// `Δ_l·m` mod `q_0..q_l`, NTT form, at the plaintext's level `l` (`Δ_l = ⌊Q_l/t⌋`).
    pub(crate) fn scaled(&self, pt: &Plaintext<B>) -> Result<rlwe::Plaintext<B>> {
        let delta = self
            .delta
            .get(pt.level())
            .ok_or_else(|| Error::InvalidArgument {
                op: "use a plaintext",
                reason: format!(
                    "level {} is above the top level {}",
                    pt.level(),
                    self.level()
                ),
            })?;
        let mut p = pt.inner().duplicate(self.backend())?;
        p.modify(self.backend(), p.meta(), |q| {
            self.backend().mul_scalar_assign(q, delta)
        })?;
        Ok(p)
    }

    /// Public-key encryption with fresh randomness: `(b·u + e_0 + Δ_l·m, a·u + e_1)` at the
    /// plaintext's level `l`.
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
        Ciphertext::new(&self.inner, inner, 1, self.noise.fresh_public())
    }

    /// Secret-key encryption with fresh randomness (`c_1` stays seeded for serialization).
    pub fn encrypt_sk(&self, sk: &SecretKey<B>, pt: &Plaintext<B>) -> Result<Ciphertext<B>> {
        self.encrypt_sk_with_seeds(sk, pt, Seed::random(), &Seed::random())
    }

    /// Secret-key encryption `(-a·s + e + Δ_l·m, a)` (level `l` of the plaintext) with `a` from `seed_a`, `e` from `seed_e`.
    pub fn encrypt_sk_with_seeds(
        &self,
        sk: &SecretKey<B>,
        pt: &Plaintext<B>,
        seed_a: Seed,
        seed_e: &Seed,
    ) -> Result<Ciphertext<B>> {
        let p = self.scaled(pt)?;
        let inner = encrypt::encrypt_sk_with_seeds(self.backend(), sk, &p, seed_a, seed_e)?;
        Ciphertext::new(&self.inner, inner, 1, self.noise.fresh_secret())
    }

    /// Serializes a ciphertext (`bgv`'s wire format under the BFV fingerprint).
    pub fn ciphertext_to_bytes(&self, ct: &Ciphertext<B>) -> Result<Vec<u8>> {
        ct.to_bytes(&self.inner)
    }

    /// Loads and validates a ciphertext (fingerprint, level `0..=L`, lengths for that level,
    /// residues, factor 1).
    pub fn ciphertext_from_bytes(&self, bytes: &[u8]) -> Result<Ciphertext<B>> {
        let ct = Ciphertext::from_bytes(&self.inner, bytes)?;
        if ct.factor() != 1 || ct.level() > self.level() {
            return Err(rlwe::Error::Malformed {
                what: "ciphertext",
                reason: format!(
                    "a BFV ciphertext has factor 1 and a level in 0..={} (got factor {}, level {})",
                    self.level(),
                    ct.factor(),
                    ct.level()
                ),
            }
            .into());
        }
        Ok(ct)
    }
}
