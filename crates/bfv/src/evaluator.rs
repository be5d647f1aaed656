//! [`Evaluator`]: homomorphic operations on BFV ciphertexts at any level `0..=L`.
//!
//! Every result carries an analytic bound on its invariant noise ([`crate::noise`]); when the
//! bound would reach the capacity `log2(Q_l/2)` of the result's level `l` the operation returns
//! [`Error::NoiseBudgetExceeded`] instead of a ciphertext that decrypts to garbage.
//! Multiplication is the integer-only tensor with scale-and-round
//! ([`fhe_math::Backend::tensor_scale_round`], with the context's tables of the operands'
//! level); relinearization and rotations are plain [`rlwe::keyswitch`] at the ciphertext's
//! level (BFV keys have errors of factor 1, so no mod-`t` correction is needed).
//!
//! # Levels
//!
//! Fresh ciphertexts live at the level of their plaintext (usually the top level `L`).
//! [`Evaluator::mod_switch`] divides by the top prime with rounding,
//! `c'_i = (c_i - [c_i]_{q_l})·q_l^{-1}` over `q_0..q_{l-1}` ([`fhe_math::Backend::rescale`],
//! as SEAL's `mod_switch_to_next` for BFV): the invariant `[c_0 + c_1·s]_{Q_l} = Δ_l·m + e`
//! becomes `Δ_{l-1}·m + e'` and the noise numerator `ν` is divided by `q_l` (plus a rounding
//! term, [`crate::noise`]). Unlike BGV, no message factor appears. Switching down makes
//! every later operation cheaper (fewer limbs); the budget in bits is about unchanged when
//! `ν/q_l` dominates the rounding term (after products) and drops by up to `log2 q_l` when it
//! does not (fresh ciphertexts).
//!
//! # Forms
//!
//! Ciphertexts are in NTT form (`inner.is_ntt()`) except the unrelinearized products of
//! [`Evaluator::mul`] and [`Evaluator::square`] (3 components), which stay in coefficient form,
//! where the scale-and-round ends: the forward NTT of their three components is skipped, and
//! [`Evaluator::relinearize`] starts its key switch from that form
//! ([`fhe_math::Backend::relinearize_from_coeff`]) and returns NTT form. Every operator takes
//! either form: additions bring the second operand to the first one's form, negation and
//! constant products keep the form, [`Evaluator::mul_plain`] and [`Evaluator::mod_switch`]
//! return NTT form; decryption and serialization accept either (the wire holds NTT form).
//! (Keeping relinearized products and rotations in coefficient form too, as SEAL's BFV does,
//! was measured slower on the GPU: the inverse NTT of the key switch's result lies on its
//! critical path.)
//!
//! Binary operations on ciphertexts at different levels return [`Error::LevelMismatch`]
//! (no implicit switching); [`Evaluator::align`] brings two ciphertexts to the lower level.
//! Plaintexts are used at the ciphertext's level: one encoded at a higher level is re-lifted
//! from its message, one below it is an error.

use crate::{Ciphertext, Context, Error, Plaintext, Result};
use bgv::evaluator::{combine_checked, combine_checked_new, pow_by_squaring};
use bgv::noise::check_capacity;
use fhe_math::backend::IntegerBackend;
use rlwe::ciphertext::{check_two_components, scalar_residues};
use rlwe::{RelinKey, SwitchingKey, keyswitch};

/// Evaluates operations on BFV ciphertexts of one context.
pub struct Evaluator<B: IntegerBackend> {
    ctx: Context<B>,
}

impl<B: IntegerBackend> Evaluator<B> {
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
        Ok(rlwe::error::check_same(
            op,
            fp,
            self.ctx.params().fingerprint(),
        )?)
    }

    fn check_ct(&self, op: &'static str, a: &Ciphertext<B>) -> Result<()> {
        self.check_own(op, a.inner().fingerprint())?;
        if a.level() > self.ctx.level() || a.factor() != 1 {
            return Err(Error::InvalidArgument {
                op,
                reason: format!(
                    "not a BFV ciphertext (level {}, factor {}; BFV uses levels 0..={} and \
                     factor 1)",
                    a.level(),
                    a.factor(),
                    self.ctx.level()
                ),
            });
        }
        Ok(())
    }

    /// Both operands valid and at the same level.
    fn check_pair(&self, op: &'static str, a: &Ciphertext<B>, b: &Ciphertext<B>) -> Result<()> {
        self.check_ct(op, a)?;
        self.check_ct(op, b)?;
        if a.level() != b.level() {
            return Err(Error::LevelMismatch {
                op,
                left: a.level(),
                right: b.level(),
            });
        }
        Ok(())
    }

    fn check_noise(&self, op: &'static str, bits: f64, level: usize) -> Result<()> {
        check_capacity(op, bits, self.ctx.noise().capacity_at(level), level)
    }

    /// `a` transformed in place to NTT form (`ntt`) or coefficient form (no-op when it is).
    fn set_form(&self, a: &mut Ciphertext<B>, ntt: bool) -> Result<()> {
        a.set_form(self.be(), ntt)
    }

    /// A copy of `a` in the given form, `None` when `a` is in that form already (use `a`).
    fn in_form(&self, a: &Ciphertext<B>, ntt: bool) -> Result<Option<Ciphertext<B>>> {
        if a.inner().is_ntt() == ntt {
            return Ok(None);
        }
        let mut c = a.duplicate(self.be())?;
        self.set_form(&mut c, ntt)?;
        Ok(Some(c))
    }

    /// The plaintext `p` at `level`: `None` (use `p`) when encoded there, re-lifted from its
    /// message when encoded above, an error below.
    fn plain_at(
        &self,
        op: &'static str,
        p: &Plaintext<B>,
        level: usize,
    ) -> Result<Option<Plaintext<B>>> {
        self.check_own(op, p.inner().fingerprint())?;
        match p.level().cmp(&level) {
            std::cmp::Ordering::Equal => Ok(None),
            std::cmp::Ordering::Greater => {
                Ok(Some(self.ctx.encoder().lift(p.coeffs().to_vec(), level)?))
            }
            std::cmp::Ordering::Less => Err(Error::LevelMismatch {
                op,
                left: level,
                right: p.level(),
            }),
        }
    }

    // ----- modulus switching and alignment -------------------------------------------------

    /// Switches down one level, `c'_i = (c_i - [c_i]_{q_l})·q_l^{-1}` over `q_0..q_{l-1}`:
    /// decrypts to the same message with `Δ_{l-1}`, noise `ν' ≤ ν/q_l + t·(rounding)`. The
    /// result is in NTT form.
    /// [`Error::CannotModSwitch`] at level 0.
    pub fn mod_switch(&self, a: &Ciphertext<B>) -> Result<Ciphertext<B>> {
        let mut out = a.duplicate(self.be())?;
        self.mod_switch_assign(&mut out)?;
        Ok(out)
    }

    /// In-place [`Evaluator::mod_switch`] (on error `a` still decrypts to the same message,
    /// possibly transformed to NTT form).
    pub fn mod_switch_assign(&self, a: &mut Ciphertext<B>) -> Result<()> {
        let op = "switch modulus";
        self.check_ct(op, a)?;
        let level = a.level();
        if level == 0 {
            return Err(Error::CannotModSwitch);
        }
        let bits = self.ctx.noise().after_mod_switch(
            a.noise_bits(),
            level,
            a.inner().components(self.be()),
        );
        self.check_noise(op, bits, level - 1)?;
        self.set_form(a, true)?;
        let meta = a.inner().meta().with_level(level - 1);
        a.modify(self.be(), meta, bits, |p| self.be().rescale(p))
    }

    /// Switches down to `level` (`Q_l -> Q_level`, one prime at a time; no-op at that level;
    /// [`Error::LevelMismatch`] above it).
    pub fn mod_switch_to(&self, a: &Ciphertext<B>, level: usize) -> Result<Ciphertext<B>> {
        let mut out = a.duplicate(self.be())?;
        self.mod_switch_to_assign(&mut out, level)?;
        Ok(out)
    }

    /// In-place [`Evaluator::mod_switch_to`] (on error `a` may have been switched part of the
    /// way, still decrypting to the same message).
    pub fn mod_switch_to_assign(&self, a: &mut Ciphertext<B>, level: usize) -> Result<()> {
        self.check_ct("switch modulus to a level", a)?;
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

    /// Copies of `a` and `b` at the lower of their levels, `min(l_a, l_b)` (the higher one
    /// switched down with [`Evaluator::mod_switch_to`]).
    pub fn align(
        &self,
        a: &Ciphertext<B>,
        b: &Ciphertext<B>,
    ) -> Result<(Ciphertext<B>, Ciphertext<B>)> {
        let level = a.level().min(b.level());
        Ok((self.mod_switch_to(a, level)?, self.mod_switch_to(b, level)?))
    }

    // ----- additive operations ---------------------------------------------------------------

    /// `a + b`.
    pub fn add(&self, a: &Ciphertext<B>, b: &Ciphertext<B>) -> Result<Ciphertext<B>> {
        self.combined(a, b, false, "add")
    }

    /// `a - b`.
    pub fn sub(&self, a: &Ciphertext<B>, b: &Ciphertext<B>) -> Result<Ciphertext<B>> {
        self.combined(a, b, true, "subtract")
    }

    /// `a ± b` as a new ciphertext (one pass where the backend fuses it).
    fn combined(
        &self,
        a: &Ciphertext<B>,
        b: &Ciphertext<B>,
        subtract: bool,
        op: &'static str,
    ) -> Result<Ciphertext<B>> {
        self.check_pair(op, a, b)?;
        let capacity = self.ctx.noise().capacity_at(a.level());
        let converted = self.in_form(b, a.inner().is_ntt())?;
        let b = converted.as_ref().unwrap_or(b);
        combine_checked_new(self.be(), op, a, b, subtract, capacity)
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
        self.check_pair(op, a, b)?;
        let capacity = self.ctx.noise().capacity_at(a.level());
        let converted = self.in_form(b, a.inner().is_ntt())?;
        let b = converted.as_ref().unwrap_or(b);
        combine_checked(self.be(), op, a, b, subtract, capacity)
    }

    /// `-a`.
    pub fn negate(&self, a: &Ciphertext<B>) -> Result<Ciphertext<B>> {
        self.check_ct("negate", a)?;
        let mut out = a.duplicate(self.be())?;
        out.modify(self.be(), a.inner().meta(), a.noise_bits(), |p| {
            self.be().neg_assign(p)
        })?;
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
        let lifted = self.plain_at(op, p, a.level())?;
        let p = lifted.as_ref().unwrap_or(p);
        let bits = self
            .ctx
            .noise()
            .after_add_plain(a.noise_bits(), p.norm_bits());
        self.check_noise(op, bits, a.level())?;
        let be = self.be();
        let mut scaled = self.ctx.scaled(p)?;
        if negate {
            scaled.modify(be, scaled.meta(), |q| be.neg_assign(q))?;
        }
        scaled.set_form(be, a.inner().is_ntt())?;
        let mut out = a.duplicate(be)?;
        out.modify(be, a.inner().meta(), bits, |c| {
            be.add_component_assign(c, 0, scaled.poly())
        })?;
        Ok(out)
    }

    /// `a + p` (adds `Δ_l·p` at `a`'s level `l`; `p` encoded at that level or above).
    pub fn add_plain(&self, a: &Ciphertext<B>, p: &Plaintext<B>) -> Result<Ciphertext<B>> {
        self.add_plain_impl(a, p, false, "add a plaintext")
    }

    /// `a - p`.
    pub fn sub_plain(&self, a: &Ciphertext<B>, p: &Plaintext<B>) -> Result<Ciphertext<B>> {
        self.add_plain_impl(a, p, true, "subtract a plaintext")
    }

    // ----- multiplicative operations ---------------------------------------------------------

    /// `a ⊙ p`: every component times the plaintext `p` (centred, without `Δ`; encoded at
    /// `a`'s level or above), in NTT form. Noise `ν·‖p‖_1`.
    pub fn mul_plain(&self, a: &Ciphertext<B>, p: &Plaintext<B>) -> Result<Ciphertext<B>> {
        let op = "multiply by a plaintext";
        self.check_ct(op, a)?;
        let lifted = self.plain_at(op, p, a.level())?;
        let p = lifted.as_ref().unwrap_or(p);
        let bits = a.noise_bits() + p.norm_bits();
        self.check_noise(op, bits, a.level())?;
        let mut out = a.duplicate(self.be())?;
        self.set_form(&mut out, true)?;
        let meta = out.inner().meta();
        out.modify(self.be(), meta, bits, |c| {
            self.be().mul_plain_assign(c, p.inner().poly())
        })?;
        Ok(out)
    }

    /// `a · k` for an integer constant `k` (reduced mod `t`, used centred).
    pub fn mul_scalar(&self, a: &Ciphertext<B>, k: i64) -> Result<Ciphertext<B>> {
        let op = "multiply by a constant";
        self.check_ct(op, a)?;
        let plain = self.ctx.plain();
        let c = plain.center(plain.modulus().reduce_i64(k));
        let bits = a.noise_bits() + (c.unsigned_abs().max(1) as f64).log2();
        self.check_noise(op, bits, a.level())?;
        let be = self.be();
        let scalars = scalar_residues(be.ring(), a.level(), c);
        let mut out = a.duplicate(be)?;
        out.modify(be, a.inner().meta(), bits, |c| {
            be.mul_scalar_assign(c, &scalars)
        })?;
        Ok(out)
    }

    /// `a ⊗ b`: the 3-component product `⌊(t/Q_l)·(a ⊗ b)⌉` at the operands' common level `l`
    /// ([`Error::LevelMismatch`] when they differ), not relinearized, in coefficient form
    /// (`Backend::tensor_scale_round_coeff`).
    pub fn mul(&self, a: &Ciphertext<B>, b: &Ciphertext<B>) -> Result<Ciphertext<B>> {
        self.product(a, b, None)
    }

    /// `a ⊗ b`: in coefficient form, or relinearized with `rlk` in the same backend call when
    /// given (`Backend::tensor_scale_round_relin`, NTT form); the noise bound checked after
    /// each step.
    fn product(
        &self,
        a: &Ciphertext<B>,
        b: &Ciphertext<B>,
        rlk: Option<&RelinKey<B>>,
    ) -> Result<Ciphertext<B>> {
        let op = "multiply";
        self.check_pair(op, a, b)?;
        check_two_components(self.be(), op, a.inner().poly(), b.inner().poly())?;
        let level = a.level();
        let noise = self.ctx.noise();
        let mut bits = noise.after_mul_at(a.noise_bits(), b.noise_bits(), level);
        self.check_noise(op, bits, level)?;
        let tables = self.ctx.tables_at(level)?;
        // Two-component ciphertexts are in NTT form (only products of `mul` are not).
        let (ca, cb) = (self.in_form(a, true)?, self.in_form(b, true)?);
        let (a, b) = (ca.as_ref().unwrap_or(a), cb.as_ref().unwrap_or(b));
        let (pa, pb) = (a.inner().poly(), b.inner().poly());
        let poly = match rlk {
            None => self.be().tensor_scale_round_coeff(pa, pb, tables)?,
            Some(rlk) => {
                bits = noise.after_key_switch_at(bits, level);
                self.check_noise("relinearize", bits, level)?;
                rlwe::error::check_same("relinearize", a.inner().fingerprint(), rlk.0.fingerprint)?;
                self.be()
                    .tensor_scale_round_relin(pa, pb, tables, &rlk.0.poly)?
            }
        };
        let meta = a.inner().meta().with_ntt(rlk.is_some());
        let inner = rlwe::Ciphertext::new(self.be(), poly, meta)?;
        Ciphertext::new(self.ctx.bgv(), inner, 1, bits)
    }

    /// `a²` (3 components).
    pub fn square(&self, a: &Ciphertext<B>) -> Result<Ciphertext<B>> {
        self.mul(a, a)
    }

    /// Relinearizes a 3-component ciphertext (at its level, in either form); the result is in
    /// NTT form.
    pub fn relinearize(&self, a: Ciphertext<B>, rlk: &RelinKey<B>) -> Result<Ciphertext<B>> {
        let op = "relinearize";
        self.check_ct(op, &a)?;
        let bits = self
            .ctx
            .noise()
            .after_key_switch_at(a.noise_bits(), a.level());
        self.check_noise(op, bits, a.level())?;
        let inner = keyswitch::relinearize_any_form(self.be(), a.into_parts().0, rlk)?;
        Ciphertext::new(self.ctx.bgv(), inner, 1, bits)
    }

    /// `a·b` relinearized, in one backend call (`Backend::tensor_scale_round_relin`: the GPU
    /// hands the product's third component to the key switch before its NTT).
    pub fn mul_relin(
        &self,
        a: &Ciphertext<B>,
        b: &Ciphertext<B>,
        rlk: &RelinKey<B>,
    ) -> Result<Ciphertext<B>> {
        self.product(a, b, Some(rlk))
    }

    /// `a²` relinearized.
    pub fn square_relin(&self, a: &Ciphertext<B>, rlk: &RelinKey<B>) -> Result<Ciphertext<B>> {
        self.mul_relin(a, a, rlk)
    }

    /// `a^k` for `k >= 1` by square-and-multiply (left to right) with [`Evaluator::mul_relin`].
    pub fn pow(&self, a: &Ciphertext<B>, k: u64, rlk: &RelinKey<B>) -> Result<Ciphertext<B>> {
        pow_by_squaring(self.be(), a, k, |x, y| self.mul_relin(x, y, rlk))
    }
}

impl<B: IntegerBackend> bgv::RowRotations<B> for Evaluator<B> {
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
        let bits = self
            .ctx
            .noise()
            .after_key_switch_at(a.noise_bits(), a.level());
        self.check_noise(op, bits, a.level())?;
        let converted = self.in_form(a, true)?;
        let a = converted.as_ref().unwrap_or(a);
        let out = keyswitch::apply_galois_hoisted(self.be(), a.inner(), keys)?;
        out.into_iter()
            .map(|inner| Ciphertext::new(self.ctx.bgv(), inner, 1, bits))
            .collect()
    }
}
