//! [`Encoder`]: complex vectors to plaintext polynomials and back.
//!
//! `encode(z) = round(Δ_l · FFT^-1(z))` reduced modulo `q_0..q_l` and put in NTT form, where
//! the special FFT maps slot `j` to the evaluation at `ζ^(5^j)` (`ζ = e^(iπ/N)`). Rotating
//! slots left by `k` is the automorphism `X -> X^(5^k)`; conjugating them is `X -> X^(-1)`.
//! Fewer than `N/2` slots (a power of two) use sparse packing; missing values are zero.

use crate::context::Context;
use crate::error::{Error, Result};
use fhe_math::Modulus;
use fhe_math::backend::Backend;
use fhe_math::fft::{Complex64, SpecialFft};
use fhe_math::poly::Shape;
use fhe_math::rns::RnsBasis;
use rayon::prelude::*;
use rlwe::{Meta, Plaintext};
use std::sync::Arc;

/// Encodes and decodes CKKS plaintexts.
pub struct Encoder<B: Backend> {
    ctx: Context<B>,
    fft: SpecialFft,
    /// CRT bases `q_0..q_l` for each level, for decoding.
    bases: Vec<RnsBasis>,
}

impl<B: Backend> Encoder<B> {
    /// An encoder for the context.
    pub fn new(ctx: &Context<B>) -> Result<Self> {
        let params = ctx.params();
        let fft = SpecialFft::new(params.n())?;
        let moduli: Vec<Modulus> = params
            .moduli_q()
            .iter()
            .map(|&q| Modulus::new(q))
            .collect::<fhe_math::Result<_>>()?;
        let bases = (1..=moduli.len())
            .map(|k| RnsBasis::new(moduli[..k].to_vec()))
            .collect::<fhe_math::Result<_>>()?;
        Ok(Encoder {
            ctx: ctx.clone(),
            fft,
            bases,
        })
    }

    /// The number of slots of a full encoding, `N/2`.
    pub fn max_slots(&self) -> usize {
        self.ctx.params().n() / 2
    }

    /// Encodes `values` at `level` with the level's scale `Δ_l`, in `N/2` slots.
    pub fn encode(&self, values: &[Complex64], level: usize) -> Result<Plaintext<B>> {
        let scale = self.ctx.params().scale(level)?;
        self.encode_with(values, level, scale, self.max_slots())
    }

    /// Encodes real `values` at `level` with the level's scale, in `N/2` slots.
    pub fn encode_real(&self, values: &[f64], level: usize) -> Result<Plaintext<B>> {
        let z: Vec<Complex64> = values.iter().map(|&x| Complex64::new(x, 0.0)).collect();
        self.encode(&z, level)
    }

    /// Encodes with an explicit scale and slot count (a power of two up to `N/2`).
    pub fn encode_with(
        &self,
        values: &[Complex64],
        level: usize,
        scale: f64,
        slots: usize,
    ) -> Result<Plaintext<B>> {
        let params = self.ctx.params();
        if level > params.max_level() {
            return Err(Error::InvalidLevel {
                level,
                max_level: params.max_level(),
            });
        }
        if values.len() > slots || !slots.is_power_of_two() || slots > self.max_slots() {
            return Err(Error::TooManyValues {
                given: values.len(),
                slots,
                max_slots: self.max_slots(),
            });
        }
        if !(scale.is_finite() && scale >= 1.0) {
            return Err(Error::InvalidScale { scale });
        }
        let n = params.n();
        let mut coeffs = vec![0f64; n];
        self.fft.encode(values, slots, &mut coeffs)?;
        let backend = self.ctx.backend();
        let ring = backend.ring();
        let mut host = ring.zeros(Shape {
            components: 1,
            level,
            extended: false,
        })?;
        let limit = 2f64.powi(126);
        if let Some(&c) = coeffs.iter().find(|&&c| {
            let v = (c * scale).round();
            !v.is_finite() || v.abs() >= limit
        }) {
            return Err(Error::ValueTooLarge { value: c, scale });
        }
        let ints: Vec<i128> = coeffs
            .par_iter()
            .map(|&c| (c * scale).round() as i128)
            .collect();
        let limbs = host.components() * host.slots_per_component();
        host.raw_mut()
            .par_chunks_mut(n)
            .take(limbs)
            .enumerate()
            .for_each(|(s, limb)| {
                if s > level {
                    return;
                }
                let m = ring.modulus(s);
                for (dst, &v) in limb.iter_mut().zip(&ints) {
                    let r = m.reduce_u128(v.unsigned_abs());
                    *dst = if v < 0 { m.neg(r) } else { r };
                }
            });
        let mut poly = backend.upload(&host)?;
        backend.ntt(&mut poly)?;
        Ok(Plaintext {
            poly,
            meta: Meta {
                level,
                scale,
                ntt: true,
                fingerprint: params.fingerprint(),
            },
        })
    }

    /// Decodes a plaintext into `N/2` complex values.
    pub fn decode(&self, pt: &Plaintext<B>) -> Result<Vec<Complex64>> {
        self.decode_slots(pt, self.max_slots())
    }

    /// Decodes a plaintext into `slots` complex values.
    pub fn decode_slots(&self, pt: &Plaintext<B>, slots: usize) -> Result<Vec<Complex64>> {
        let params = self.ctx.params();
        if pt.meta.fingerprint != params.fingerprint() {
            return Err(rlwe::Error::ParameterMismatch {
                op: "decode",
                left: pt.meta.fingerprint,
                right: params.fingerprint(),
            }
            .into());
        }
        let backend = self.ctx.backend();
        let mut poly = backend.duplicate(&pt.poly)?;
        if pt.meta.ntt {
            backend.intt(&mut poly)?;
        }
        let host = backend.download(&poly)?;
        self.decode_host(&host, pt.meta.scale, slots)
    }

    /// Decodes a host polynomial (coefficient form) with the given scale.
    pub fn decode_host(
        &self,
        host: &fhe_math::poly::RnsPoly,
        scale: f64,
        slots: usize,
    ) -> Result<Vec<Complex64>> {
        let level = host.level();
        let basis = &self.bases[level];
        let n = host.n();
        let mut coeffs = vec![0f64; n];
        coeffs
            .par_chunks_mut(1024)
            .enumerate()
            .for_each(|(chunk, out)| {
                let mut residues = vec![0u64; level + 1];
                let q0 = basis.moduli()[0];
                for (i, c) in out.iter_mut().enumerate() {
                    let k = chunk * 1024 + i;
                    for (s, r) in residues.iter_mut().enumerate() {
                        *r = host.limb(0, s)[k];
                    }
                    // Fast path: the centred residue mod q_0 is the value itself when it is
                    // congruent to every other residue (it lies in (-q_0/2, q_0/2], so inside
                    // (-Q/2, Q/2], and the CRT makes it unique). Otherwise the full CRT lift.
                    let x0 = q0.center(residues[0]);
                    let small = basis.moduli()[1..]
                        .iter()
                        .zip(&residues[1..])
                        .all(|(m, &r)| m.reduce_i64(x0) == r);
                    let value = if small {
                        x0 as f64
                    } else {
                        basis.to_f64_centered(&residues)
                    };
                    *c = value / scale;
                }
            });
        Ok(self.fft.decode(&coeffs, slots)?)
    }

    /// The context.
    pub fn context(&self) -> &Context<B> {
        &self.ctx
    }
}

/// Shared handle to an encoder.
pub type SharedEncoder<B> = Arc<Encoder<B>>;
