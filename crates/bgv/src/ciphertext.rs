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
use fhe_math::backend::IntegerBackend;
use fhe_math::poly::Shape;
use fhe_math::sampler::Seed;
use rlwe::wire::{self, BlobKind};
use serde::{Deserialize, Serialize};

/// A BGV ciphertext (also BFV's, with factor 1).
///
/// Its fields are private: [`Ciphertext::new`] checks them, and the RLWE part keeps its own
/// metadata consistent ([`rlwe::Ciphertext`]).
pub struct Ciphertext<B: IntegerBackend> {
    /// The RLWE ciphertext (NTT form; BFV products may be in coefficient form).
    pub(crate) inner: rlwe::Ciphertext<B>,
    /// The correction factor `f` (mod `t`): the ciphertext decrypts to `f·m`.
    pub(crate) factor: u64,
    /// log2 of the analytic bound on `‖c_0 + c_1·s‖` (see [`crate::noise`]).
    pub(crate) noise_bits: f64,
}

impl<B: IntegerBackend> Ciphertext<B> {
    /// A ciphertext of `ctx` from its RLWE part, correction factor `f` and noise bound (log2):
    /// an error unless `inner` was made under `ctx`'s parameters, at scale 1, `factor` is
    /// invertible modulo `t` (and below it) and the bound is finite.
    pub fn new(
        ctx: &Context<B>,
        inner: rlwe::Ciphertext<B>,
        factor: u64,
        noise_bits: f64,
    ) -> Result<Self> {
        let op = "build a ciphertext";
        rlwe::error::check_same(op, inner.fingerprint(), ctx.params().fingerprint())?;
        let invalid = |reason: String| Error::InvalidArgument { op, reason };
        if inner.scale() != 1.0 {
            return Err(invalid(format!(
                "scale {} (BGV/BFV ciphertexts have scale 1)",
                inner.scale()
            )));
        }
        let t = ctx.plain().modulus();
        if factor == 0 || factor >= t.value() || t.inv(factor).is_err() {
            return Err(invalid(format!("factor {factor} is not invertible mod t")));
        }
        if !noise_bits.is_finite() {
            return Err(invalid("the noise bound is not finite".into()));
        }
        Ok(Ciphertext {
            inner,
            factor,
            noise_bits,
        })
    }

    /// The RLWE ciphertext.
    pub fn inner(&self) -> &rlwe::Ciphertext<B> {
        &self.inner
    }

    /// The RLWE ciphertext, its correction factor and noise bound.
    pub fn into_parts(self) -> (rlwe::Ciphertext<B>, u64, f64) {
        (self.inner, self.factor, self.noise_bits)
    }

    /// The correction factor `f` (mod `t`): the ciphertext decrypts to `f·m`.
    pub fn factor(&self) -> u64 {
        self.factor
    }

    /// log2 of the analytic bound on `‖c_0 + c_1·s‖` (see [`crate::noise`]).
    pub fn noise_bits(&self) -> f64 {
        self.noise_bits
    }

    /// The level `l` (limbs `q_0..q_l`).
    pub fn level(&self) -> usize {
        self.inner.level()
    }

    /// Number of components (2, or 3 before relinearization).
    pub fn components(&self, backend: &B) -> usize {
        self.inner.components(backend)
    }

    /// Changes the RLWE part with [`rlwe::Ciphertext::modify`] (buffer by `f`, metadata to
    /// `meta`, both checked) and the noise bound to `noise_bits` (finite).
    pub fn modify<E: Into<rlwe::Error>>(
        &mut self,
        backend: &B,
        meta: rlwe::Meta,
        noise_bits: f64,
        f: impl FnOnce(&mut B::Poly) -> std::result::Result<(), E>,
    ) -> Result<()> {
        if !noise_bits.is_finite() {
            return Err(Error::InvalidArgument {
                op: "change a ciphertext",
                reason: "the noise bound is not finite".into(),
            });
        }
        self.inner.modify(backend, meta, f)?;
        self.noise_bits = noise_bits;
        Ok(())
    }

    /// Brings the RLWE part to NTT form (`ntt`) or coefficient form
    /// ([`rlwe::Ciphertext::set_form`]).
    pub fn set_form(&mut self, backend: &B, ntt: bool) -> Result<()> {
        Ok(self.inner.set_form(backend, ntt)?)
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
        let host = match self.inner.is_ntt() {
            true => be.download(self.inner.poly())?,
            false => {
                let mut c = be.duplicate(self.inner.poly())?;
                be.ntt(&mut c)?;
                be.download(&c)?
            }
        };
        let components = host.components();
        let stored = if self.inner.seed().is_some() {
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
            fingerprint: self.inner.fingerprint(),
            level: level as u32,
            components: components as u8,
            factor: self.factor,
            noise_bits: self.noise_bits,
            seed: self.inner.seed().cloned(),
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
        let poly = be.upload(&host)?;
        let meta = rlwe::Meta::new(level, 1.0, true, w.fingerprint);
        let inner = match w.seed {
            Some(seed) => rlwe::Ciphertext::with_seeded_c1(be, poly, meta, seed)?,
            None => rlwe::Ciphertext::new(be, poly, meta)?,
        };
        Ok(Ciphertext {
            inner,
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
///
/// Built only by the [`crate::Encoder`] (its fields are private), so the lifted polynomial,
/// the coefficients and the norm always describe one message.
pub struct Plaintext<B: IntegerBackend> {
    /// The lifted polynomial: centred coefficients of `m` reduced mod `q_0..q_l`, NTT form.
    pub(crate) inner: rlwe::Plaintext<B>,
    /// The message coefficients in `[0, t)` (`N` of them).
    pub(crate) coeffs: Vec<u64>,
    /// `log2 ‖m‖_1` of the centred coefficients (at least 0): the noise growth of a
    /// multiplication by this plaintext.
    pub(crate) norm_bits: f64,
}

impl<B: IntegerBackend> Plaintext<B> {
    /// The level it is encoded at.
    pub fn level(&self) -> usize {
        self.inner.level()
    }

    /// The lifted polynomial (RLWE plaintext, NTT form).
    pub fn inner(&self) -> &rlwe::Plaintext<B> {
        &self.inner
    }

    /// The message coefficients in `[0, t)` (`N` of them).
    pub fn coeffs(&self) -> &[u64] {
        &self.coeffs
    }

    /// `log2 ‖m‖_1` of the centred coefficients (at least 0).
    pub fn norm_bits(&self) -> f64 {
        self.norm_bits
    }
}
