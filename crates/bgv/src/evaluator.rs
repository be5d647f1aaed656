//! [`Evaluator`]: homomorphic operations on BGV ciphertexts.
//!
//! # Levels, factors and noise
//!
//! Every result carries its level, its correction factor `f` (it decrypts to `f·m`) and an
//! analytic noise bound ([`crate::noise`]). Before an operation returns, the new bound is
//! compared with the capacity `log2(Q_l/2)` of the result's level; if it would reach it, the
//! operation returns [`Error::NoiseBudgetExceeded`] instead of a ciphertext that decrypts to
//! garbage.
//!
//! Binary operations **align** their operands automatically: the one at the higher level is
//! modulus-switched down (exact, and it reduces the noise), and when the correction factors
//! differ one operand is multiplied by the integer `f_a·f_b^{-1} mod t` (centred), choosing the
//! side that keeps the bound lower.
//!
//! # Default policy
//!
//! [`Evaluator::mul_relin`] (and [`Evaluator::square_relin`], [`Evaluator::pow`]) computes the
//! tensor product, relinearizes and **switches down one level afterwards**, the switch fused
//! into the relinearization's `mod_down`: the noise goes from `B_a·B_b` back to about
//! `B_a·B_b/q_l + B_ms`, so with primes of about `2·log2(B_ms)` bits every level carries one
//! multiplication. At level 0 there is nothing to switch to and the product stays at level 0
//! (usually beyond the capacity: the error says so). The explicit operations ([`Evaluator::mul`],
//! [`Evaluator::relinearize`], [`Evaluator::mul_relin_no_switch`], [`Evaluator::mod_switch`],
//! [`Evaluator::mod_switch_to`]) give full control.
//!
//! Key switching (relinearization, rotations) uses [`rlwe::keyswitch`]'s `*_mod_t` functions,
//! which preserve the message mod `t`; rotations of the `2 × N/2` slot matrix use the Galois
//! elements `3^k` (rows) and `2N - 1` (column swap).

use crate::ciphertext::{Ciphertext, Plaintext};
use crate::context::Context;
use crate::encoder::Encoder;
use crate::error::{Error, Result};
use crate::noise::{add_bits, check_capacity};
use fhe_math::backend::IntegerBackend;
use rlwe::ciphertext::{check_two_components, scalar_residues};
use rlwe::{RelinKey, SwitchingKey, keyswitch};

/// `a^k` for `k >= 1` by square-and-multiply, left to right: `floor(log2 k)` squarings
/// `mul_relin(acc, acc)` and `popcount(k) - 1` multiplications `mul_relin(acc, a)`. The
/// exponentiation of the BGV and BFV evaluators (each passes its own `mul_relin`).
pub fn pow_by_squaring<B: IntegerBackend>(
    backend: &B,
    a: &Ciphertext<B>,
    k: u64,
    mul_relin: impl Fn(&Ciphertext<B>, &Ciphertext<B>) -> Result<Ciphertext<B>>,
) -> Result<Ciphertext<B>> {
    if k == 0 {
        return Err(Error::InvalidArgument {
            op: "exponentiate",
            reason: "the exponent must be at least 1".into(),
        });
    }
    let mut acc = a.duplicate(backend)?;
    for bit in (0..63 - k.leading_zeros()).rev() {
        acc = mul_relin(&acc, &acc)?;
        if k >> bit & 1 == 1 {
            acc = mul_relin(&acc, a)?;
        }
    }
    Ok(acc)
}

/// `a ± b` in place for operands already checked and brought to one level and factor: the
/// bound of the sum is checked against `capacity` (that of `a`'s level) before `a` changes.
/// The addition of the BGV and BFV evaluators.
pub fn combine_checked<B: IntegerBackend>(
    backend: &B,
    op: &'static str,
    a: &mut Ciphertext<B>,
    b: &Ciphertext<B>,
    subtract: bool,
    capacity: f64,
) -> Result<()> {
    let bits = add_bits(a.noise_bits, b.noise_bits);
    check_capacity(op, bits, capacity, a.level())?;
    let meta = a.inner.meta();
    a.modify(backend, meta, bits, |p| {
        rlwe::ciphertext::combine_components(backend, p, b.inner.poly(), subtract)
    })
}

/// [`combine_checked`] as a new ciphertext (`a` unchanged): one pass on a backend that
/// overrides [`Backend::add_new`].
pub fn combine_checked_new<B: IntegerBackend>(
    backend: &B,
    op: &'static str,
    a: &Ciphertext<B>,
    b: &Ciphertext<B>,
    subtract: bool,
    capacity: f64,
) -> Result<Ciphertext<B>> {
    let bits = add_bits(a.noise_bits, b.noise_bits);
    check_capacity(op, bits, capacity, a.level())?;
    let poly =
        rlwe::ciphertext::combined_components(backend, a.inner.poly(), b.inner.poly(), subtract)?;
    Ok(Ciphertext {
        inner: rlwe::Ciphertext::new(backend, poly, a.inner.meta())?,
        factor: a.factor,
        noise_bits: bits,
    })
}

/// Evaluates operations on BGV ciphertexts of one context.
pub struct Evaluator<B: IntegerBackend> {
    ctx: Context<B>,
    encoder: Encoder<B>,
}

impl<B: IntegerBackend> Evaluator<B> {
    /// An evaluator for the context.
    pub fn new(ctx: &Context<B>) -> Self {
        Evaluator {
            ctx: ctx.clone(),
            encoder: Encoder::new(ctx),
        }
    }

    fn be(&self) -> &B {
        self.ctx.backend()
    }

    fn t(&self) -> u64 {
        self.ctx.params().t()
    }

    /// The context.
    pub fn context(&self) -> &Context<B> {
        &self.ctx
    }

    fn check_own(&self, op: &'static str, fp: u64) -> Result<()> {
        Ok(rlwe::error::check_same(
            op,
            fp,
            self.ctx.params().fingerprint(),
        )?)
    }

    fn check_noise(&self, op: &'static str, bits: f64, level: usize) -> Result<()> {
        check_capacity(op, bits, self.ctx.noise().capacity(level), level)
    }

    // ----- modulus switching and alignment -------------------------------------------------

    /// Switches down one level: `c -> t·⌊t^{-1}·c / q_l⌉` over `q_0..q_{l-1}`; the noise is
    /// divided by `q_l` (plus a rounding term) and the factor multiplied by `q_l^{-1} mod t`.
    pub fn mod_switch(&self, a: &Ciphertext<B>) -> Result<Ciphertext<B>> {
        let (factor, bits) = self.mod_switch_factors(a)?;
        // Into a new buffer (`Backend::rescaled_mod_t`: the GPU reads `a` in the switch's own
        // passes instead of copying it first).
        let poly = keyswitch::mod_switched_mod_t(self.be(), a.inner.poly(), self.t())?;
        let meta = a.inner.meta().with_level(a.level() - 1);
        Ok(Ciphertext {
            inner: rlwe::Ciphertext::new(self.be(), poly, meta)?,
            factor,
            noise_bits: bits,
        })
    }

    /// In-place [`Evaluator::mod_switch`].
    pub fn mod_switch_assign(&self, a: &mut Ciphertext<B>) -> Result<()> {
        let (factor, bits) = self.mod_switch_factors(a)?;
        let meta = a.inner.meta().with_level(a.level() - 1);
        a.modify(self.be(), meta, bits, |p| {
            keyswitch::mod_switch_mod_t(self.be(), p, self.t())
        })?;
        a.factor = factor;
        Ok(())
    }

    /// The correction factor and the noise bound of `a` switched down one level; an error at
    /// level 0 or where the bound would exceed the capacity.
    fn mod_switch_factors(&self, a: &Ciphertext<B>) -> Result<(u64, f64)> {
        self.check_own("switch modulus", a.inner.fingerprint())?;
        let level = a.level();
        if level == 0 {
            return Err(Error::CannotModSwitch);
        }
        let bits = self.ctx.noise().after_mod_switch(a.noise_bits, level);
        self.check_noise("switch modulus", bits, level - 1)?;
        let tm = self.ctx.plain().modulus();
        Ok((
            tm.mul(a.factor, self.ctx.params().q_inv_mod_t(level)?),
            bits,
        ))
    }

    /// Switches down to `level` (no-op at that level; an error above it).
    pub fn mod_switch_to(&self, a: &Ciphertext<B>, level: usize) -> Result<Ciphertext<B>> {
        let mut out = a.duplicate(self.be())?;
        self.mod_switch_to_assign(&mut out, level)?;
        Ok(out)
    }

    /// In-place [`Evaluator::mod_switch_to`].
    pub fn mod_switch_to_assign(&self, a: &mut Ciphertext<B>, level: usize) -> Result<()> {
        if level > a.level() {
            return Err(Error::LevelMismatch {
                op: "switch modulus to a level",
                left: a.level(),
                right: level,
            });
        }
        while a.level() > level {
            self.mod_switch_assign(a)?;
        }
        Ok(())
    }

    /// Multiplies the ciphertext by the integer `k` (given mod `t`, used centred) **without**
    /// changing what it decrypts to: the factor is multiplied by `k` as well.
    fn rescale_factor(&self, a: &mut Ciphertext<B>, k: u64) -> Result<()> {
        let c = self.ctx.plain().center(k);
        self.mul_int_raw(a, c)?;
        a.factor = self.ctx.plain().modulus().mul(a.factor, k);
        Ok(())
    }

    fn mul_int_raw(&self, a: &mut Ciphertext<B>, c: i64) -> Result<()> {
        let scalars = scalar_residues(self.be().ring(), a.level(), c);
        let bits = a.noise_bits + (c.unsigned_abs().max(1) as f64).log2();
        let meta = a.inner.meta();
        a.modify(self.be(), meta, bits, |p| {
            self.be().mul_scalar_assign(p, &scalars)
        })
    }

    /// Brings two ciphertexts to a common level (switching the higher one down) and a common
    /// correction factor (multiplying one by `f_a·f_b^{-1} mod t`, whichever side keeps the
    /// bound lower). Returns copies.
    pub fn align(
        &self,
        a: &Ciphertext<B>,
        b: &Ciphertext<B>,
    ) -> Result<(Ciphertext<B>, Ciphertext<B>)> {
        let level = a.level().min(b.level());
        let mut a = self.mod_switch_to(a, level)?;
        let mut b = self.mod_switch_to(b, level)?;
        self.align_factors(&mut a, &mut b)?;
        Ok((a, b))
    }

    fn align_factors(&self, a: &mut Ciphertext<B>, b: &mut Ciphertext<B>) -> Result<()> {
        if a.factor == b.factor {
            return Ok(());
        }
        let tm = self.ctx.plain().modulus();
        let plain = self.ctx.plain();
        let k_b = tm.mul(a.factor, tm.inv(b.factor)?); // b * k_b has factor a.f
        let k_a = tm.mul(b.factor, tm.inv(a.factor)?); // a * k_a has factor b.f
        let cost_b = add_bits(
            a.noise_bits,
            b.noise_bits + (plain.center(k_b).unsigned_abs() as f64).log2(),
        );
        let cost_a = add_bits(
            a.noise_bits + (plain.center(k_a).unsigned_abs() as f64).log2(),
            b.noise_bits,
        );
        if cost_b <= cost_a {
            self.rescale_factor(b, k_b)
        } else {
            self.rescale_factor(a, k_a)
        }
    }

    /// `a` (in place) and a borrowed `b` brought to a common level and factor; `b` is copied
    /// only when it has to change.
    fn align_pair(
        &self,
        a: &mut Ciphertext<B>,
        b: &Ciphertext<B>,
    ) -> Result<Option<Ciphertext<B>>> {
        let level = a.level().min(b.level());
        self.mod_switch_to_assign(a, level)?;
        let mut b2 = if b.level() > level || b.factor != a.factor {
            Some(self.mod_switch_to(b, level)?)
        } else {
            None
        };
        if let Some(b2) = b2.as_mut() {
            self.align_factors(a, b2)?;
        }
        Ok(b2)
    }

    // ----- additive operations ---------------------------------------------------------------

    /// `a + b` (levels and factors aligned automatically).
    pub fn add(&self, a: &Ciphertext<B>, b: &Ciphertext<B>) -> Result<Ciphertext<B>> {
        self.combined(a, b, false, "add")
    }

    /// `a - b`.
    pub fn sub(&self, a: &Ciphertext<B>, b: &Ciphertext<B>) -> Result<Ciphertext<B>> {
        self.combined(a, b, true, "subtract")
    }

    /// `a ± b` as a new ciphertext: in one pass when the operands share level and factor (no
    /// alignment), else on an aligned copy of `a`.
    fn combined(
        &self,
        a: &Ciphertext<B>,
        b: &Ciphertext<B>,
        subtract: bool,
        op: &'static str,
    ) -> Result<Ciphertext<B>> {
        if a.level() != b.level() || a.factor != b.factor {
            let mut out = a.duplicate(self.be())?;
            self.combine(&mut out, b, subtract, op)?;
            return Ok(out);
        }
        self.check_own(op, a.inner.fingerprint())?;
        self.check_own(op, b.inner.fingerprint())?;
        let capacity = self.ctx.noise().capacity(a.level());
        combine_checked_new(self.be(), op, a, b, subtract, capacity)
    }

    /// `a += b` (on error `a` may have been switched down or rescaled, still decrypting to
    /// the same message).
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
        self.check_own(op, a.inner.fingerprint())?;
        self.check_own(op, b.inner.fingerprint())?;
        let b2 = self.align_pair(a, b)?;
        let b = b2.as_ref().unwrap_or(b);
        let capacity = self.ctx.noise().capacity(a.level());
        combine_checked(self.be(), op, a, b, subtract, capacity)
    }

    /// `-a`.
    pub fn negate(&self, a: &Ciphertext<B>) -> Result<Ciphertext<B>> {
        self.check_own("negate", a.inner.fingerprint())?;
        let mut out = a.duplicate(self.be())?;
        out.modify(self.be(), a.inner.meta(), a.noise_bits, |p| {
            self.be().neg_assign(p)
        })?;
        Ok(out)
    }

    /// The plaintext polynomial to add to a ciphertext with factor `factor` at `level`:
    /// `f·m mod t` lifted (the stored lift itself when `f = 1`).
    fn plain_for(
        &self,
        p: &Plaintext<B>,
        factor: u64,
        level: usize,
    ) -> Result<Option<Plaintext<B>>> {
        if factor == 1 && p.level() >= level {
            return Ok(None);
        }
        let tm = self.ctx.plain().modulus();
        let scaled: Vec<u64> = p.coeffs.iter().map(|&c| tm.mul(c, factor)).collect();
        // Products mod t: below t already.
        Ok(Some(self.encoder.lift_message(scaled, level)?))
    }

    fn add_plain_impl(
        &self,
        a: &Ciphertext<B>,
        p: &Plaintext<B>,
        negate: bool,
        op: &'static str,
    ) -> Result<Ciphertext<B>> {
        self.check_own(op, a.inner.fingerprint())?;
        self.check_own(op, p.inner.fingerprint())?;
        let scaled = self.plain_for(p, a.factor, a.level())?;
        let p = scaled.as_ref().unwrap_or(p);
        let bits = add_bits(a.noise_bits, p.norm_bits);
        self.check_noise(op, bits, a.level())?;
        let be = self.be();
        let mut out = a.duplicate(be)?;
        out.modify(be, a.inner.meta(), bits, |c| {
            if negate {
                let mut neg = be.duplicate(p.inner.poly())?;
                be.neg_assign(&mut neg)?;
                be.add_component_assign(c, 0, &neg)
            } else {
                be.add_component_assign(c, 0, p.inner.poly())
            }
        })?;
        Ok(out)
    }

    /// `a + p` for a plaintext encoded at `a`'s level or above (re-lifted as `f·p` when `a`'s
    /// factor `f` is not 1).
    pub fn add_plain(&self, a: &Ciphertext<B>, p: &Plaintext<B>) -> Result<Ciphertext<B>> {
        self.add_plain_impl(a, p, false, "add a plaintext")
    }

    /// `a - p`.
    pub fn sub_plain(&self, a: &Ciphertext<B>, p: &Plaintext<B>) -> Result<Ciphertext<B>> {
        self.add_plain_impl(a, p, true, "subtract a plaintext")
    }

    // ----- multiplicative operations ---------------------------------------------------------

    /// `a ⊙ p` for a plaintext encoded at any level: `a` is switched down to `p`'s level when
    /// it is above it. Noise: `B·‖p‖_1`.
    pub fn mul_plain(&self, a: &Ciphertext<B>, p: &Plaintext<B>) -> Result<Ciphertext<B>> {
        let op = "multiply by a plaintext";
        self.check_own(op, a.inner.fingerprint())?;
        self.check_own(op, p.inner.fingerprint())?;
        let level = a.level().min(p.level());
        let mut out = self.mod_switch_to(a, level)?;
        let bits = out.noise_bits + p.norm_bits;
        self.check_noise(op, bits, level)?;
        let meta = out.inner.meta();
        out.modify(self.be(), meta, bits, |c| {
            self.be().mul_plain_assign(c, p.inner.poly())
        })?;
        Ok(out)
    }

    /// `a · k` for an integer constant `k` (reduced mod `t`, used centred).
    pub fn mul_scalar(&self, a: &Ciphertext<B>, k: i64) -> Result<Ciphertext<B>> {
        let op = "multiply by a constant";
        self.check_own(op, a.inner.fingerprint())?;
        let plain = self.ctx.plain();
        let c = plain.center(plain.modulus().reduce_i64(k));
        let mut out = a.duplicate(self.be())?;
        self.mul_int_raw(&mut out, c)?;
        self.check_noise(op, out.noise_bits, out.level())?;
        Ok(out)
    }

    /// `a + k` for an integer constant `k` in every slot (the constant polynomial `k`, scaled
    /// by the factor).
    pub fn add_scalar(&self, a: &Ciphertext<B>, k: i64) -> Result<Ciphertext<B>> {
        let op = "add a constant";
        self.check_own(op, a.inner.fingerprint())?;
        let plain = self.ctx.plain();
        let tm = plain.modulus();
        let v = plain.center(tm.mul(tm.reduce_i64(k), a.factor));
        let bits = add_bits(a.noise_bits, (v.unsigned_abs().max(1) as f64).log2());
        self.check_noise(op, bits, a.level())?;
        let be = self.be();
        let scalars = scalar_residues(be.ring(), a.level(), v);
        let mut out = a.duplicate(be)?;
        out.modify(be, a.inner.meta(), bits, |c| {
            be.add_scalar_assign(c, 0, &scalars)
        })?;
        Ok(out)
    }

    /// `a ⊗ b`: the 3-component tensor product, not relinearized, at the common level.
    pub fn mul(&self, a: &Ciphertext<B>, b: &Ciphertext<B>) -> Result<Ciphertext<B>> {
        self.with_factors(a, b, |a, b, factor, bits| {
            let poly = self.be().tensor(a.inner.poly(), b.inner.poly())?;
            Ok(Ciphertext {
                inner: rlwe::Ciphertext::new(self.be(), poly, a.inner.meta())?,
                factor,
                noise_bits: bits,
            })
        })
    }

    /// Runs `f` on the factors of a product: `a` and `b` switched down to their common level,
    /// the product's correction factor and noise bound (checked against that level).
    fn with_factors<R>(
        &self,
        a: &Ciphertext<B>,
        b: &Ciphertext<B>,
        f: impl FnOnce(&Ciphertext<B>, &Ciphertext<B>, u64, f64) -> Result<R>,
    ) -> Result<R> {
        let op = "multiply";
        self.check_own(op, a.inner.fingerprint())?;
        self.check_own(op, b.inner.fingerprint())?;
        check_two_components(self.be(), op, a.inner.poly(), b.inner.poly())?;
        let level = a.level().min(b.level());
        let a2;
        let a = if a.level() > level {
            a2 = self.mod_switch_to(a, level)?;
            &a2
        } else {
            a
        };
        let b2;
        let b = if b.level() > level {
            b2 = self.mod_switch_to(b, level)?;
            &b2
        } else {
            b
        };
        let bits = a.noise_bits + b.noise_bits;
        self.check_noise(op, bits, level)?;
        f(
            a,
            b,
            self.ctx.plain().modulus().mul(a.factor, b.factor),
            bits,
        )
    }

    /// `a²` (3 components).
    pub fn square(&self, a: &Ciphertext<B>) -> Result<Ciphertext<B>> {
        self.mul(a, a)
    }

    /// Relinearizes a 3-component ciphertext (same level).
    pub fn relinearize(&self, a: Ciphertext<B>, rlk: &RelinKey<B>) -> Result<Ciphertext<B>> {
        self.relin_impl(a, rlk, false)
    }

    fn relin_impl(
        &self,
        a: Ciphertext<B>,
        rlk: &RelinKey<B>,
        mod_switch: bool,
    ) -> Result<Ciphertext<B>> {
        self.check_own("relinearize", a.inner.fingerprint())?;
        let (factor, bits) = self.relin_factors(a.factor, a.noise_bits, a.level(), mod_switch)?;
        let inner = keyswitch::relinearize_mod_t(self.be(), a.inner, rlk, self.t(), mod_switch)?;
        Ok(Ciphertext {
            inner,
            factor,
            noise_bits: bits,
        })
    }

    /// The correction factor and the noise bound after relinearizing (and, with `mod_switch`,
    /// switching down) a ciphertext with these at `level`; an error where the bound would
    /// exceed the capacity.
    fn relin_factors(
        &self,
        factor: u64,
        bits: f64,
        level: usize,
        mod_switch: bool,
    ) -> Result<(u64, f64)> {
        let noise = self.ctx.noise();
        let mut bits = noise.after_key_switch(bits, level);
        self.check_noise("relinearize", bits, level)?;
        let mut factor = factor;
        if mod_switch {
            bits = noise.after_mod_switch(bits, level);
            self.check_noise("switch modulus", bits, level - 1)?;
            factor = self
                .ctx
                .plain()
                .modulus()
                .mul(factor, self.ctx.params().q_inv_mod_t(level)?);
        }
        Ok((factor, bits))
    }

    /// `a·b` relinearized, then switched down one level (fused) when above level 0: the
    /// default policy (module documentation).
    pub fn mul_relin(
        &self,
        a: &Ciphertext<B>,
        b: &Ciphertext<B>,
        rlk: &RelinKey<B>,
    ) -> Result<Ciphertext<B>> {
        self.mul_relin_impl(a, b, rlk, true)
    }

    /// `a·b` relinearized at the common level, not switched down (explicit control of the
    /// modulus; the same result as `relinearize(mul(a, b))`, in one backend call).
    pub fn mul_relin_no_switch(
        &self,
        a: &Ciphertext<B>,
        b: &Ciphertext<B>,
        rlk: &RelinKey<B>,
    ) -> Result<Ciphertext<B>> {
        self.mul_relin_impl(a, b, rlk, false)
    }

    /// `a·b` relinearized, switched down when `switch_above_0` and the level is above 0.
    fn mul_relin_impl(
        &self,
        a: &Ciphertext<B>,
        b: &Ciphertext<B>,
        rlk: &RelinKey<B>,
        switch_above_0: bool,
    ) -> Result<Ciphertext<B>> {
        self.with_factors(a, b, |a, b, factor, bits| {
            let level = a.level();
            let switch = switch_above_0 && level > 0;
            let (factor, bits) = self.relin_factors(factor, bits, level, switch)?;
            let inner = keyswitch::mul_relinearize_mod_t(
                self.be(),
                &a.inner,
                &b.inner,
                rlk,
                self.t(),
                switch,
            )?;
            Ok(Ciphertext {
                inner,
                factor,
                noise_bits: bits,
            })
        })
    }

    /// `a²` relinearized and switched down (the default policy).
    pub fn square_relin(&self, a: &Ciphertext<B>, rlk: &RelinKey<B>) -> Result<Ciphertext<B>> {
        self.mul_relin(a, a, rlk)
    }

    /// `a^k` for `k >= 1` by square-and-multiply (left to right) with [`Evaluator::mul_relin`]:
    /// `floor(log2 k)` squarings and `popcount(k) - 1` multiplications.
    pub fn pow(&self, a: &Ciphertext<B>, k: u64, rlk: &RelinKey<B>) -> Result<Ciphertext<B>> {
        pow_by_squaring(self.be(), a, k, |x, y| self.mul_relin(x, y, rlk))
    }

    /// The encoder this evaluator uses for plaintext re-lifting.
    pub fn encoder(&self) -> &Encoder<B> {
        &self.encoder
    }
}

impl<B: IntegerBackend> crate::rotations::RowRotations<B> for Evaluator<B> {
    fn rotation_backend(&self) -> &B {
        self.be()
    }

    fn slots(&self, op: &'static str) -> Result<&std::sync::Arc<dyn crate::SlotStructure>> {
        self.ctx.plain().slots(op)
    }

    fn galois(
        &self,
        a: &Ciphertext<B>,
        keys: &[(u64, &SwitchingKey<B>)],
        op: &'static str,
    ) -> Result<Vec<Ciphertext<B>>> {
        self.check_own(op, a.inner.fingerprint())?;
        let level = a.level();
        let bits = self.ctx.noise().after_key_switch(a.noise_bits, level);
        self.check_noise(op, bits, level)?;
        let out = keyswitch::apply_galois_hoisted_mod_t(self.be(), &a.inner, keys, self.t())?;
        Ok(out
            .into_iter()
            .map(|inner| Ciphertext {
                inner,
                factor: a.factor,
                noise_bits: bits,
            })
            .collect())
    }
}
