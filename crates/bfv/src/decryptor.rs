//! [`Decryptor`]: BFV decryption `m = ⌊t·[c_0 + c_1·s (+ c_2·s²)]_Q / Q⌉ mod t` and the exact
//! noise budget `log2(Q/2) - log2 ‖[t·(c_0 + c_1·s)]_Q‖_∞` (SEAL's invariant noise budget),
//! measured by CRT reconstruction of the phase on the host. Below
//! [`bgv::decryptor::MIN_BUDGET_BITS`] decryption returns [`Error::NoiseBudgetExhausted`].

use crate::{Ciphertext, Context, Error, Result};
use bgv::decryptor::MIN_BUDGET_BITS;
use fhe_math::backend::Backend;
use fhe_math::rns::RnsBasis;
use num_bigint::BigUint;
use num_traits::{ToPrimitive, Zero};
use rlwe::SecretKey;

/// Decrypts BFV ciphertexts of one context with one secret key.
pub struct Decryptor<'a, B: Backend> {
    ctx: Context<B>,
    sk: &'a SecretKey<B>,
}

fn log2_big(x: &BigUint) -> f64 {
    if x.is_zero() {
        return f64::NEG_INFINITY;
    }
    let shift = x.bits().saturating_sub(64);
    ((x >> shift).to_u64().unwrap_or(u64::MAX) as f64).log2() + shift as f64
}

impl<'a, B: Backend> Decryptor<'a, B> {
    /// A decryptor for `sk` in the context.
    pub fn new(ctx: &Context<B>, sk: &'a SecretKey<B>) -> Self {
        Decryptor {
            ctx: ctx.clone(),
            sk,
        }
    }

    /// The message coefficients in `[0, t)` and the measured budget in bits.
    fn run(&self, ct: &Ciphertext<B>) -> Result<(Vec<u64>, f64)> {
        let be = self.ctx.backend();
        let host = rlwe::encrypt::decrypt_to_host(be, self.sk, &ct.inner)?;
        let level = host.level();
        let ring = be.ring();
        let basis = RnsBasis::new((0..=level).map(|s| *ring.modulus(s)).collect())?;
        let q = basis.product().clone();
        let half_q: BigUint = &q >> 1u32;
        let t = self.ctx.params().t();
        let mut coeffs = Vec::with_capacity(host.n());
        let mut max_nu = BigUint::zero();
        let mut residues = vec![0u64; level + 1];
        for j in 0..host.n() {
            for (s, r) in residues.iter_mut().enumerate() {
                *r = host.limb(0, s)[j];
            }
            let x = basis.reconstruct(&residues);
            let tx = x * t;
            let m = ((&tx + &half_q) / &q) % t;
            coeffs.push(m.to_u64().expect("below t"));
            let nu = &tx % &q;
            let nu = if nu > half_q { &q - nu } else { nu };
            if nu > max_nu {
                max_nu = nu;
            }
        }
        let budget = log2_big(&half_q) - log2_big(&max_nu);
        Ok((coeffs, budget))
    }

    /// The remaining noise budget in bits (exact measurement; `+inf` for a zero noise).
    pub fn noise_budget(&self, ct: &Ciphertext<B>) -> Result<f64> {
        Ok(self.run(ct)?.1)
    }

    /// The message polynomial: `N` coefficients in `[0, t)`; an error when the budget is
    /// exhausted.
    pub fn decrypt_coeffs(&self, ct: &Ciphertext<B>) -> Result<Vec<u64>> {
        let (coeffs, budget) = self.run(ct)?;
        if budget < MIN_BUDGET_BITS {
            return Err(Error::NoiseBudgetExhausted {
                budget_bits: budget,
            });
        }
        Ok(coeffs)
    }

    /// The slot values (batched encoding).
    pub fn decrypt(&self, ct: &Ciphertext<B>) -> Result<Vec<u64>> {
        let c = self.decrypt_coeffs(ct)?;
        self.ctx.plain().decode_slots(&c)
    }

    /// The slot values as signed integers in `(-t/2, t/2]`.
    pub fn decrypt_signed(&self, ct: &Ciphertext<B>) -> Result<Vec<i64>> {
        let v = self.decrypt(ct)?;
        Ok(v.into_iter().map(|x| self.ctx.plain().center(x)).collect())
    }
}
