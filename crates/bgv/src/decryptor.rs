//! [`Decryptor`]: decryption with the noise check, and the exact noise budget.
//!
//! **Decryption** switches a copy of the ciphertext down to level 0 (exact, cheap, and it
//! removes almost all the noise), computes `v = [c_0 + c_1·s (+ c_2·s²)]_{q_0}` centred, and
//! returns `f^{-1}·v mod t` with `f` the correction factor (times the `q_i^{-1}` of the
//! switches). If the measured budget at level 0 is below 1 bit the result would be garbage, and
//! [`Error::NoiseBudgetExhausted`] is returned instead.
//!
//! **The noise budget** ([`Decryptor::noise_budget`], like SEAL's invariant noise budget) is
//! measured at the ciphertext's own level: `v = [c_0 + c_1·s]_{Q_l}` is reconstructed with the
//! CRT (centred) and the budget is `log2(Q_l/2) - log2 ‖v‖_∞` bits; decryption is correct while
//! it is positive.

use crate::ciphertext::Ciphertext;
use crate::context::Context;
use crate::error::{Error, Result};
use fhe_math::backend::Backend;
use fhe_math::rns::RnsBasis;
use fhe_math::{Modulus, RnsPoly};
use num_traits::Zero;
use rlwe::SecretKey;

/// Below this many bits of measured budget, decryption reports exhaustion.
pub const MIN_BUDGET_BITS: f64 = 1.0;

/// Decrypts ciphertexts of one context with one secret key.
pub struct Decryptor<'a, B: Backend> {
    ctx: Context<B>,
    sk: &'a SecretKey<B>,
}

/// log2 of a big integer's magnitude (`-inf` for 0).
fn log2_big(x: &num_bigint::BigInt) -> f64 {
    if x.is_zero() {
        return f64::NEG_INFINITY;
    }
    let bits = x.bits();
    let shift = bits.saturating_sub(64);
    let top = (x.magnitude() >> shift)
        .iter_u64_digits()
        .next()
        .unwrap_or(0);
    (top as f64).log2() + shift as f64
}

impl<'a, B: Backend> Decryptor<'a, B> {
    /// A decryptor for `sk` in the context.
    pub fn new(ctx: &Context<B>, sk: &'a SecretKey<B>) -> Self {
        Decryptor {
            ctx: ctx.clone(),
            sk,
        }
    }

    /// `c_0 + c_1·s (+ c_2·s²)` at the ciphertext's level, coefficient form, on the host.
    fn phase(&self, ct: &rlwe::Ciphertext<B>) -> Result<RnsPoly> {
        Ok(rlwe::encrypt::decrypt_to_host(
            self.ctx.backend(),
            self.sk,
            ct,
        )?)
    }

    /// The message polynomial: `N` coefficients in `[0, t)` (the correction factor removed).
    pub fn decrypt_coeffs(&self, ct: &Ciphertext<B>) -> Result<Vec<u64>> {
        let be = self.ctx.backend();
        let params = self.ctx.params();
        let t = self.ctx.plain().modulus();
        let mut low = ct.inner.duplicate(be)?;
        let mut factor = ct.factor;
        while low.meta.level > 0 {
            rlwe::keyswitch::mod_switch_mod_t(be, &mut low.poly, t.value())?;
            factor = t.mul(factor, params.q_inv_mod_t(low.meta.level)?);
            low.meta.level -= 1;
        }
        let v = self.phase(&low)?;
        let q0 = Modulus::new(params.moduli_q()[0])?;
        let centred: Vec<i64> = v.limb(0, 0).iter().map(|&x| q0.center(x)).collect();
        let max = centred.iter().map(|x| x.unsigned_abs()).max().unwrap_or(0);
        let budget = (q0.value() as f64).log2() - 1.0 - (max.max(1) as f64).log2();
        if budget < MIN_BUDGET_BITS {
            return Err(Error::NoiseBudgetExhausted {
                budget_bits: budget,
            });
        }
        let inv = t.inv(factor).map_err(Error::Math)?;
        Ok(centred
            .into_iter()
            .map(|x| t.mul(t.reduce_i64(x), inv))
            .collect())
    }

    /// Decrypts and decodes the slots (unsigned, in `[0, t)`).
    pub fn decrypt(&self, ct: &Ciphertext<B>) -> Result<Vec<u64>> {
        let c = self.decrypt_coeffs(ct)?;
        self.ctx.plain().decode_slots(&c)
    }

    /// Decrypts and decodes the slots as signed integers in `(-t/2, t/2]`.
    pub fn decrypt_signed(&self, ct: &Ciphertext<B>) -> Result<Vec<i64>> {
        let v = self.decrypt(ct)?;
        Ok(v.into_iter().map(|x| self.ctx.plain().center(x)).collect())
    }

    /// Decrypts a coefficient-encoded ciphertext ([`crate::Encoder::encode_unbatch`]).
    pub fn decrypt_unbatch(&self, ct: &Ciphertext<B>) -> Result<Vec<u64>> {
        self.decrypt_coeffs(ct)
    }

    /// log2 of the largest `|v_i|` of `v = [c_0 + c_1·s]_{Q_l}` (centred, exact CRT).
    pub fn noise_bits(&self, ct: &Ciphertext<B>) -> Result<f64> {
        let params = self.ctx.params();
        let level = ct.level();
        let basis = RnsBasis::new(
            params.moduli_q()[..=level]
                .iter()
                .map(|&q| Modulus::new(q))
                .collect::<fhe_math::Result<Vec<_>>>()?,
        )?;
        let v = self.phase(&ct.inner)?;
        let mut residues = vec![0u64; level + 1];
        let mut max = f64::NEG_INFINITY;
        for k in 0..params.n() {
            for (s, r) in residues.iter_mut().enumerate() {
                *r = v.limb(0, s)[k];
            }
            let x = basis.to_f64_centered(&residues).abs();
            let bits = if x.is_finite() {
                x.log2()
            } else {
                log2_big(&basis.reconstruct_centered(&residues))
            };
            max = max.max(bits);
        }
        Ok(max)
    }

    /// The exact remaining noise budget in bits at the ciphertext's level:
    /// `log2(Q_l/2) - log2 ‖[c_0 + c_1·s]_{Q_l}‖_∞`; an error when it is below
    /// [`MIN_BUDGET_BITS`].
    pub fn noise_budget(&self, ct: &Ciphertext<B>) -> Result<f64> {
        let budget = self.ctx.noise().capacity(ct.level()) - self.noise_bits(ct)?;
        if budget < MIN_BUDGET_BITS {
            return Err(Error::NoiseBudgetExhausted {
                budget_bits: budget,
            });
        }
        Ok(budget)
    }
}
