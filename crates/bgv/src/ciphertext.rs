//! [`Ciphertext`] and [`Plaintext`] of BGV: the RLWE objects with the BGV metadata (the
//! plaintext correction factor and the analytic noise bound), and the ciphertext's serialized
//! form.
//!
//! A BGV ciphertext at level `l` with factor `f` satisfies `[c_0 + c_1·s]_{Q_l} = f·m + t·e`
//! (as an integer polynomial); decryption multiplies the recovered `f·m mod t` by `f^{-1}`.
//! Fresh ciphertexts have `f = 1`; a modulus switch from level `l` multiplies `f` by
//! `q_l^{-1} mod t`, a product multiplies the factors.
//!
//! # Wire format
//!
//! An [`rlwe::wire`] blob of kind [`BlobKind::Ciphertext`] whose payload is: fingerprint
//! (`u64`), level (`u32`), components (`u8`), factor (`u64`), noise bound in bits (`f64`),
//! optional seed of `c_1` (fresh secret-key ciphertexts store `c_0` only), then the stored
//! components' limbs in NTT form, `[component][limb][coeff]`, as one `Vec<u64>`.

use crate::context::Context;
use crate::error::{Error, Result};
use fhe_math::backend::Backend;
use fhe_math::poly::Shape;
use fhe_math::sampler::Seed;
use rlwe::wire::{self, BlobKind};
use serde::{Deserialize, Serialize};

/// A BGV ciphertext.
pub struct Ciphertext<B: Backend> {
    /// The RLWE ciphertext (NTT form).
    pub inner: rlwe::Ciphertext<B>,
    /// The correction factor `f` (mod `t`): the ciphertext decrypts to `f·m`.
    pub factor: u64,
    /// log2 of the analytic bound on `‖c_0 + c_1·s‖` (see [`crate::noise`]).
    pub noise_bits: f64,
}

impl<B: Backend> Ciphertext<B> {
    /// The level `l` (limbs `q_0..q_l`).
    pub fn level(&self) -> usize {
        self.inner.meta.level
    }

    /// Number of components (2, or 3 before relinearization).
    pub fn components(&self, backend: &B) -> usize {
        backend.shape(&self.inner.poly).components
    }

    /// A copy on the same backend.
    pub fn duplicate(&self, backend: &B) -> Result<Self> {
        Ok(Ciphertext {
            inner: self.inner.duplicate(backend)?,
            factor: self.factor,
            noise_bits: self.noise_bits,
        })
    }

    /// The remaining budget according to the analytic bound: `log2(Q_l/2) - noise_bits`.
    pub fn budget_bound(&self, ctx: &Context<B>) -> f64 {
        ctx.noise().capacity(self.level()) - self.noise_bits
    }

    /// Serializes (see the module documentation for the layout).
    pub fn to_bytes(&self, ctx: &Context<B>) -> Result<Vec<u8>> {
        let be = ctx.backend();
        // The wire holds NTT form: a BFV ciphertext in coefficient form is transformed on a
        // copy (and loads in NTT form).
        let host = match self.inner.meta.ntt {
            true => be.download(&self.inner.poly)?,
            false => {
                let mut c = be.duplicate(&self.inner.poly)?;
                be.ntt(&mut c)?;
                be.download(&c)?
            }
        };
        let components = host.components();
        let stored = if self.inner.seed.is_some() {
            1
        } else {
            components
        };
        let level = host.level();
        let mut data = Vec::with_capacity(stored * (level + 1) * host.n());
        for c in 0..stored {
            for s in 0..=level {
                data.extend_from_slice(host.limb(c, s));
            }
        }
        let w = CiphertextWire {
            fingerprint: self.inner.meta.fingerprint,
            level: level as u32,
            components: components as u8,
            factor: self.factor,
            noise_bits: self.noise_bits,
            seed: self.inner.seed.clone(),
            data,
        };
        Ok(wire::encode(BlobKind::Ciphertext, &w)?)
    }

    /// Reads a ciphertext blob written by [`Ciphertext::to_bytes`] under the same parameters.
    ///
    /// Validates the fingerprint, the level, the number of components (2 or 3; 2 when seeded),
    /// the data length, every residue below its prime, the factor (invertible, below `t`) and
    /// the noise bound (finite); any failure is an error, never a panic.
    pub fn from_bytes(ctx: &Context<B>, bytes: &[u8]) -> Result<Self> {
        let params = ctx.params();
        let n = params.n();
        let max_len = 3 * params.moduli_q().len() * n * 8 + 1024;
        let w: CiphertextWire = wire::decode(BlobKind::Ciphertext, bytes, max_len)?;
        let bad = |reason: String| -> Error {
            rlwe::Error::Malformed {
                what: "ciphertext",
                reason,
            }
            .into()
        };
        if w.fingerprint != params.fingerprint() {
            return Err(rlwe::Error::ParameterMismatch {
                op: "load a ciphertext",
                left: w.fingerprint,
                right: params.fingerprint(),
            }
            .into());
        }
        let level = w.level as usize;
        if level > params.max_level() {
            return Err(bad(format!(
                "level {level} is above the maximum level {}",
                params.max_level()
            )));
        }
        let components = w.components as usize;
        if !(2..=3).contains(&components) || (w.seed.is_some() && components != 2) {
            return Err(bad(format!(
                "{components} components (2 or 3 expected; 2 with a seed)"
            )));
        }
        let stored = if w.seed.is_some() { 1 } else { components };
        if w.data.len() != stored * (level + 1) * n {
            return Err(bad(format!(
                "{} coefficients where {} are expected",
                w.data.len(),
                stored * (level + 1) * n
            )));
        }
        let t = ctx.plain().modulus();
        if w.factor == 0 || w.factor >= t.value() || t.inv(w.factor).is_err() {
            return Err(bad(format!("factor {} is not invertible mod t", w.factor)));
        }
        if !w.noise_bits.is_finite() {
            return Err(bad("the noise bound is not finite".into()));
        }
        let be = ctx.backend();
        let ring = be.ring();
        let mut host = ring.zeros(Shape {
            components,
            level,
            extended: false,
        })?;
        let mut chunks = w.data.chunks_exact(n);
        for c in 0..stored {
            for s in 0..=level {
                let q = ring.modulus(s).value();
                let src = chunks.next().expect("length checked");
                if let Some(&v) = src.iter().find(|&&v| v >= q) {
                    return Err(bad(format!("residue {v} is not below its prime {q}")));
                }
                host.limb_mut(c, s).copy_from_slice(src);
            }
        }
        let mut poly = be.upload(&host)?;
        if let Some(seed) = &w.seed {
            let c1 = rlwe::encrypt::expand_seeded_c1(be, seed, level)?;
            be.copy_component(&c1, 0, &mut poly, 1)?;
        }
        Ok(Ciphertext {
            inner: rlwe::Ciphertext {
                poly,
                meta: rlwe::Meta {
                    level,
                    scale: 1.0,
                    ntt: true,
                    fingerprint: w.fingerprint,
                },
                seed: w.seed,
            },
            factor: w.factor,
            noise_bits: w.noise_bits,
        })
    }
}

/// The serialized form of a [`Ciphertext`].
#[derive(Serialize, Deserialize)]
struct CiphertextWire {
    fingerprint: u64,
    level: u32,
    components: u8,
    factor: u64,
    noise_bits: f64,
    seed: Option<Seed>,
    data: Vec<u64>,
}

/// A BGV plaintext at a level: the lifted polynomial on the backend (NTT form) and the message
/// coefficients mod `t` on the host.
pub struct Plaintext<B: Backend> {
    /// The lifted polynomial: centred coefficients of `m` reduced mod `q_0..q_l`, NTT form.
    pub inner: rlwe::Plaintext<B>,
    /// The message coefficients in `[0, t)` (`N` of them).
    pub coeffs: Vec<u64>,
    /// `log2 ‖m‖_1` of the centred coefficients (at least 0): the noise growth of a
    /// multiplication by this plaintext.
    pub norm_bits: f64,
}

impl<B: Backend> Plaintext<B> {
    /// The level it is encoded at.
    pub fn level(&self) -> usize {
        self.inner.meta.level
    }
}
