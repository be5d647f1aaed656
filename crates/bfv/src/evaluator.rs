//! [`Evaluator`]: homomorphic operations on BFV ciphertexts (all at the top level).
//!
//! Every result carries an analytic bound on its invariant noise ([`crate::noise`]); when the
//! bound would reach the capacity `log2(Q/2)` the operation returns
//! [`Error::NoiseBudgetExceeded`] instead of a ciphertext that decrypts to garbage.
//! Multiplication is the integer-only tensor with scale-and-round
//! ([`fhe_math::Backend::tensor_scale_round`]); relinearization and rotations are plain
//! [`rlwe::keyswitch`] (BFV keys have errors of factor 1, so no mod-`t` correction is needed).

use crate::{Ciphertext, Context, Error, Plaintext, Result};
use bgv::noise::add_bits;
use fhe_math::backend::Backend;
use rlwe::{RelinKey, SwitchingKey, keyswitch};

/// Evaluates operations on BFV ciphertexts of one context.
pub struct Evaluator<B: Backend> {
    ctx: Context<B>,
}

impl<B: Backend> Evaluator<B> {
    /// An evaluator for the context.
    pub fn new(ctx: &Context<B>) -> Self {
        Evaluator { ctx: ctx.clone() }
    }

    fn be(&self) -> &B {
        self.ctx.backend()
    }

    /// The context.
    pub fn context(&self) -> &Context<B> {
        &self.ctx
    }

    fn check_own(&self, op: &'static str, fp: u64) -> Result<()> {
        let mine = self.ctx.params().fingerprint();
        if fp != mine {
            return Err(rlwe::Error::ParameterMismatch {
                op,
                left: fp,
                right: mine,
            }
            .into());
        }
        Ok(())
    }

    fn check_ct(&self, op: &'static str, a: &Ciphertext<B>) -> Result<()> {
        self.check_own(op, a.inner.meta.fingerprint)?;
        if a.level() != self.ctx.level() || a.factor != 1 {
            return Err(Error::InvalidArgument {
                op,
                reason: format!(
                    "not a BFV ciphertext (level {}, factor {}; BFV uses level {} and factor 1)",
                    a.level(),
                    a.factor,
                    self.ctx.level()
                ),
            });
        }
        Ok(())
    }

    fn check_noise(&self, op: &'static str, bits: f64) -> Result<()> {
        let capacity = self.ctx.noise().capacity();
        if bits.is_nan() || bits >= capacity {
            return Err(Error::NoiseBudgetExceeded {
                op,
                bound_bits: bits,
                capacity_bits: capacity,
                level: self.ctx.level(),
            });
        }
        Ok(())
    }

    fn components(&self, ct: &Ciphertext<B>) -> usize {
        self.be().shape(&ct.inner.poly).components
    }

    // ----- additive operations ---------------------------------------------------------------

    /// `a + b`.
    pub fn add(&self, a: &Ciphertext<B>, b: &Ciphertext<B>) -> Result<Ciphertext<B>> {
        let mut out = a.duplicate(self.be())?;
        self.combine(&mut out, b, false, "add")?;
        Ok(out)
    }

    /// `a - b`.
    pub fn sub(&self, a: &Ciphertext<B>, b: &Ciphertext<B>) -> Result<Ciphertext<B>> {
        let mut out = a.duplicate(self.be())?;
        self.combine(&mut out, b, true, "subtract")?;
        Ok(out)
    }

    /// `a += b`.
    pub fn add_assign(&self, a: &mut Ciphertext<B>, b: &Ciphertext<B>) -> Result<()> {
        self.combine(a, b, false, "add")
    }

    /// `a -= b`.
    pub fn sub_assign(&self, a: &mut Ciphertext<B>, b: &Ciphertext<B>) -> Result<()> {
        self.combine(a, b, true, "subtract")
    }

    fn combine(
        &self,
        a: &mut Ciphertext<B>,
        b: &Ciphertext<B>,
        subtract: bool,
        op: &'static str,
    ) -> Result<()> {
        self.check_ct(op, a)?;
        self.check_ct(op, b)?;
        let bits = add_bits(a.noise_bits, b.noise_bits);
        self.check_noise(op, bits)?;
        rlwe::ciphertext::combine_components(
            self.be(),
            &mut a.inner.poly,
            &b.inner.poly,
            subtract,
        )?;
        a.noise_bits = bits;
        a.inner.seed = None;
        Ok(())
    }

    /// `-a`.
    pub fn negate(&self, a: &Ciphertext<B>) -> Result<Ciphertext<B>> {
        self.check_ct("negate", a)?;
        let mut out = a.duplicate(self.be())?;
        self.be().neg_assign(&mut out.inner.poly)?;
        out.inner.seed = None;
        Ok(out)
    }

    fn add_plain_impl(
        &self,
        a: &Ciphertext<B>,
        p: &Plaintext<B>,
        negate: bool,
        op: &'static str,
    ) -> Result<Ciphertext<B>> {
        self.check_ct(op, a)?;
        self.check_own(op, p.inner.meta.fingerprint)?;
        let bits = self.ctx.noise().after_add_plain(a.noise_bits, p.norm_bits);
        self.check_noise(op, bits)?;
        let be = self.be();
        let mut scaled = self.ctx.scaled(p)?;
        if negate {
            be.neg_assign(&mut scaled.poly)?;
        }
        let mut out = a.duplicate(be)?;
        be.add_component_assign(&mut out.inner.poly, 0, &scaled.poly)?;
        out.noise_bits = bits;
        out.inner.seed = None;
        Ok(out)
    }

    /// `a + p` (adds `Δ·p`).
    pub fn add_plain(&self, a: &Ciphertext<B>, p: &Plaintext<B>) -> Result<Ciphertext<B>> {
        self.add_plain_impl(a, p, false, "add a plaintext")
    }

    /// `a - p`.
    pub fn sub_plain(&self, a: &Ciphertext<B>, p: &Plaintext<B>) -> Result<Ciphertext<B>> {
        self.add_plain_impl(a, p, true, "subtract a plaintext")
    }

    // ----- multiplicative operations ---------------------------------------------------------

    /// `a ⊙ p`: every component times the plaintext `p` (centred, without `Δ`). Noise `ν·‖p‖_1`.
    pub fn mul_plain(&self, a: &Ciphertext<B>, p: &Plaintext<B>) -> Result<Ciphertext<B>> {
        let op = "multiply by a plaintext";
        self.check_ct(op, a)?;
        self.check_own(op, p.inner.meta.fingerprint)?;
        if p.level() != self.ctx.level() {
            return Err(Error::InvalidArgument {
                op,
                reason: "BFV plaintexts are encoded at the top level".into(),
            });
        }
        let bits = a.noise_bits + p.norm_bits;
        self.check_noise(op, bits)?;
        let mut out = a.duplicate(self.be())?;
        self.be()
            .mul_plain_assign(&mut out.inner.poly, &p.inner.poly)?;
        out.noise_bits = bits;
        out.inner.seed = None;
        Ok(out)
    }

    /// `a · k` for an integer constant `k` (reduced mod `t`, used centred).
    pub fn mul_scalar(&self, a: &Ciphertext<B>, k: i64) -> Result<Ciphertext<B>> {
        let op = "multiply by a constant";
        self.check_ct(op, a)?;
        let plain = self.ctx.plain();
        let c = plain.center(plain.modulus().reduce_i64(k));
        let bits = a.noise_bits + (c.unsigned_abs().max(1) as f64).log2();
        self.check_noise(op, bits)?;
        let be = self.be();
        let ring = be.ring();
        let scalars: Vec<u64> = (0..=a.level())
            .map(|s| ring.modulus(s).reduce_i64(c))
            .collect();
        let mut out = a.duplicate(be)?;
        be.mul_scalar_assign(&mut out.inner.poly, &scalars)?;
        out.noise_bits = bits;
        out.inner.seed = None;
        Ok(out)
    }

    /// `a ⊗ b`: the 3-component product `⌊(t/Q)·(a ⊗ b)⌉`, not relinearized.
    pub fn mul(&self, a: &Ciphertext<B>, b: &Ciphertext<B>) -> Result<Ciphertext<B>> {
        let op = "multiply";
        self.check_ct(op, a)?;
        self.check_ct(op, b)?;
        if self.components(a) != 2 || self.components(b) != 2 {
            return Err(rlwe::Error::InvalidOperand {
                op,
                reason: "operands must have 2 components (relinearize first)".into(),
            }
            .into());
        }
        let bits = self.ctx.noise().after_mul(a.noise_bits, b.noise_bits);
        self.check_noise(op, bits)?;
        let poly = self
            .be()
            .tensor_scale_round(&a.inner.poly, &b.inner.poly, self.ctx.tables())?;
        Ok(Ciphertext {
            inner: rlwe::Ciphertext {
                poly,
                meta: a.inner.meta,
                seed: None,
            },
            factor: 1,
            noise_bits: bits,
        })
    }

    /// `a²` (3 components).
    pub fn square(&self, a: &Ciphertext<B>) -> Result<Ciphertext<B>> {
        self.mul(a, a)
    }

    /// Relinearizes a 3-component ciphertext.
    pub fn relinearize(&self, a: Ciphertext<B>, rlk: &RelinKey<B>) -> Result<Ciphertext<B>> {
        let op = "relinearize";
        self.check_ct(op, &a)?;
        let bits = self.ctx.noise().after_key_switch(a.noise_bits);
        self.check_noise(op, bits)?;
        let inner = keyswitch::relinearize(self.be(), a.inner, rlk, false)?;
        Ok(Ciphertext {
            inner,
            factor: 1,
            noise_bits: bits,
        })
    }

    /// `a·b` relinearized.
    pub fn mul_relin(
        &self,
        a: &Ciphertext<B>,
        b: &Ciphertext<B>,
        rlk: &RelinKey<B>,
    ) -> Result<Ciphertext<B>> {
        let prod = self.mul(a, b)?;
        self.relinearize(prod, rlk)
    }

    /// `a²` relinearized.
    pub fn square_relin(&self, a: &Ciphertext<B>, rlk: &RelinKey<B>) -> Result<Ciphertext<B>> {
        self.mul_relin(a, a, rlk)
    }

    /// `a^k` for `k >= 1` by square-and-multiply (left to right) with [`Evaluator::mul_relin`].
    pub fn pow(&self, a: &Ciphertext<B>, k: u64, rlk: &RelinKey<B>) -> Result<Ciphertext<B>> {
        if k == 0 {
            return Err(Error::InvalidArgument {
                op: "exponentiate",
                reason: "the exponent must be at least 1".into(),
            });
        }
        let mut acc = a.duplicate(self.be())?;
        for bit in (0..63 - k.leading_zeros()).rev() {
            acc = self.square_relin(&acc, rlk)?;
            if k >> bit & 1 == 1 {
                acc = self.mul_relin(&acc, a, rlk)?;
            }
        }
        Ok(acc)
    }
}

impl<B: Backend> bgv::RowRotations<B> for Evaluator<B> {
    fn rotation_backend(&self) -> &B {
        self.be()
    }

    fn slots(&self, op: &'static str) -> Result<&std::sync::Arc<dyn bgv::SlotStructure>> {
        self.ctx.plain().slots(op)
    }

    fn galois(
        &self,
        a: &Ciphertext<B>,
        keys: &[(u64, &SwitchingKey<B>)],
        op: &'static str,
    ) -> Result<Vec<Ciphertext<B>>> {
        self.check_ct(op, a)?;
        let bits = self.ctx.noise().after_key_switch(a.noise_bits);
        self.check_noise(op, bits)?;
        let out = keyswitch::apply_galois_hoisted(self.be(), &a.inner, keys)?;
        Ok(out
            .into_iter()
            .map(|inner| Ciphertext {
                inner,
                factor: 1,
                noise_bits: bits,
            })
            .collect())
    }
}
