//! [`Encoder`]: integer vectors to BGV plaintexts at a level, and back.
//!
//! Batched encodings put `N` values mod `t` in the slots ([`crate::encoding`]); `encode_unbatch`
//! puts them in the coefficients (any `t`). The message polynomial `m` (coefficients in
//! `[0, t)`) is lifted with **centred** coefficients in `(-t/2, t/2]`, reduced modulo
//! `q_0..q_l` and put in NTT form, so that its norm (and the noise of a plaintext product) is as
//! small as possible.

use crate::ciphertext::Plaintext;
use crate::context::Context;
use crate::encoding::SlotInput;
use crate::error::{Error, Result};
use fhe_math::backend::IntegerBackend;
use rlwe::Meta;

/// Encodes and decodes BGV plaintexts.
pub struct Encoder<B: IntegerBackend> {
    ctx: Context<B>,
}

impl<B: IntegerBackend> Encoder<B> {
    /// An encoder for the context.
    pub fn new(ctx: &Context<B>) -> Self {
        Encoder { ctx: ctx.clone() }
    }

    /// The number of slots (`N` when batching is available, else 0).
    pub fn slot_count(&self) -> usize {
        self.ctx
            .plain()
            .slots("count slots")
            .map_or(0, |s| s.slot_count())
    }

    /// Encodes unsigned `values` (each `< t`, at most `N`) in the slots, at `level`. With
    /// prime-field slots the inverse slot transform runs on the backend
    /// ([`Backend::upload_lifted_intt_mod_t`]: on the GPU only `N` words go up and come back).
    pub fn encode(&self, values: &[u64], level: usize) -> Result<Plaintext<B>> {
        self.ctx
            .plain()
            .encode_slots_with(values, |input| match input {
                SlotInput::Coeffs(coeffs) => self.lift(coeffs, level),
                SlotInput::NttOrder(ntt, ordered) => {
                    self.check_level(level)?;
                    let (poly, coeffs) = self
                        .ctx
                        .backend()
                        .upload_lifted_intt_mod_t(&ordered, ntt, level)?;
                    self.finish(poly, coeffs, level)
                }
            })
    }

    /// Encodes signed `values` (each in the centred range `(-t/2, t/2]`) in the slots, at
    /// `level`.
    pub fn encode_signed(&self, values: &[i64], level: usize) -> Result<Plaintext<B>> {
        let v = self.ctx.plain().signed_to_unsigned(values)?;
        self.encode(&v, level)
    }

    /// Coefficient encoding: `values[i]` (each `< t`) is coefficient `i` (any `t >= 2`).
    pub fn encode_unbatch(&self, values: &[u64], level: usize) -> Result<Plaintext<B>> {
        // `encode_coeffs` checks every value against `t`.
        let coeffs = self.ctx.plain().encode_coeffs(values)?;
        self.lift_message(coeffs, level)
    }

    /// Coefficient encoding of signed values (each in the centred range `(-t/2, t/2]`).
    pub fn encode_unbatch_signed(&self, values: &[i64], level: usize) -> Result<Plaintext<B>> {
        let v = self.ctx.plain().signed_to_unsigned(values)?;
        self.encode_unbatch(&v, level)
    }

    /// Lifts a message polynomial (`N` coefficients, each in `[0, t)`) to a plaintext at
    /// `level`.
    pub fn lift(&self, coeffs: Vec<u64>, level: usize) -> Result<Plaintext<B>> {
        self.ctx.plain().check_message(&coeffs)?;
        self.lift_message(coeffs, level)
    }

    /// [`Encoder::lift`] of coefficients already known to be below `t` (checked by the caller,
    /// or reduced mod `t`).
    pub(crate) fn lift_message(&self, coeffs: Vec<u64>, level: usize) -> Result<Plaintext<B>> {
        self.check_level(level)?;
        let plain = self.ctx.plain();
        let n = self.ctx.params().n();
        if coeffs.len() != n {
            return Err(Error::TooManyValues {
                given: coeffs.len(),
                slots: n,
            });
        }
        let centred: Vec<i64> = coeffs.iter().map(|&c| plain.center(c)).collect();
        // The backend reduces the centred coefficients into every limb (on the GPU only the
        // 8·N bytes of `centred` cross).
        let poly = self.ctx.backend().upload_lifted_i64(&centred, level)?;
        self.finish(poly, coeffs, level)
    }

    fn check_level(&self, level: usize) -> Result<()> {
        let max_level = self.ctx.params().max_level();
        if level > max_level {
            return Err(Error::InvalidLevel { level, max_level });
        }
        Ok(())
    }

    /// The plaintext of the message `coeffs` (in `[0, t)`) lifted into `poly` (coefficient
    /// form, at `level`): NTT form, and the norm of the centred message for the noise model.
    fn finish(&self, mut poly: B::Poly, coeffs: Vec<u64>, level: usize) -> Result<Plaintext<B>> {
        let plain = self.ctx.plain();
        let params = self.ctx.params();
        let norm: f64 = coeffs
            .iter()
            .map(|&c| plain.center(c).unsigned_abs() as f64)
            .sum();
        self.ctx.backend().ntt(&mut poly)?;
        Ok(Plaintext {
            inner: rlwe::Plaintext::new(
                self.ctx.backend(),
                poly,
                Meta::new(level, 1.0, true, params.fingerprint()),
            )?,
            coeffs,
            norm_bits: norm.max(1.0).log2(),
        })
    }

    /// The slot values of a plaintext (batched encoding).
    pub fn decode(&self, pt: &Plaintext<B>) -> Result<Vec<u64>> {
        self.ctx.plain().decode_slots(&pt.coeffs)
    }

    /// The slot values as signed integers in `(-t/2, t/2]`.
    pub fn decode_signed(&self, pt: &Plaintext<B>) -> Result<Vec<i64>> {
        let v = self.decode(pt)?;
        Ok(v.into_iter().map(|x| self.ctx.plain().center(x)).collect())
    }

    /// The coefficients of a plaintext (coefficient encoding).
    pub fn decode_unbatch(&self, pt: &Plaintext<B>) -> Vec<u64> {
        pt.coeffs.clone()
    }

    /// The context.
    pub fn context(&self) -> &Context<B> {
        &self.ctx
    }
}
