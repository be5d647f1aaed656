//! [`Evaluator`]: homomorphic operations on CKKS ciphertexts.
//!
//! Scales follow the parameter set's ladder: a rescaled ciphertext at level `l` has scale `Δ_l`,
//! a product at level `l` has `Δ_l²`, and rescaling it gives `Δ_l² / q_l = Δ_{l-1}`. Operands of
//! an addition must agree in level and scale (relative tolerance 2^-40 for f64 round-off);
//! [`Evaluator::drop_to_level`] aligns levels by dropping primes, a constant multiply and one
//! rescale.
//!
//! Every result's scale is checked against its level ([`rlwe::ciphertext::check_scale`]): a
//! product whose scale reaches the remaining modulus `Q_l` (or overflows f64), and a rescale
//! that would bring the scale below 1, are [`Error::ScaleOutOfRange`] instead of garbage.

use crate::context::Context;
use crate::encoder::Encoder;
use crate::error::{Error, Result};
use fhe_math::backend::KeySwitchBackend;
use fhe_math::fft::Complex64;
use fhe_math::galois;
use rlwe::{Ciphertext, GaloisKeys, Plaintext, RelinKey, keyswitch};

/// Relative tolerance on scale agreement: only f64 round-off.
pub const SCALE_TOLERANCE: f64 = rlwe::ciphertext::SCALE_TOLERANCE;

/// Generator of the slot rotation group (`X -> X^(5^k)` rotates slots left by `k`).
pub const ROTATION_GENERATOR: u64 = 5;

/// Evaluates operations on ciphertexts of one context.
pub struct Evaluator<B: KeySwitchBackend> {
    ctx: Context<B>,
    encoder: Encoder<B>,
}

fn scales_match(a: f64, b: f64) -> bool {
    ((a - b) / b).abs() <= SCALE_TOLERANCE
}

impl<B: KeySwitchBackend> Evaluator<B> {
    /// An evaluator for the context.
    pub fn new(ctx: &Context<B>) -> Result<Self> {
        Ok(Evaluator {
            ctx: ctx.clone(),
            encoder: Encoder::new(ctx)?,
        })
    }

    fn be(&self) -> &B {
        self.ctx.backend()
    }

    fn fingerprint(&self) -> u64 {
        self.ctx.params().fingerprint()
    }

    /// Checks that a result (`subject`) of `op` at `level` can carry `scale`.
    fn check_scale(
        &self,
        op: &'static str,
        subject: &'static str,
        level: usize,
        scale: f64,
    ) -> Result<f64> {
        rlwe::ciphertext::check_scale(self.be().ring(), level, scale).map_err(|problem| {
            Error::ScaleOutOfRange {
                op,
                subject,
                problem,
            }
        })?;
        Ok(scale)
    }

    /// A copy of `a` with metadata `meta`, its buffer changed by `f` (checked as
    /// [`Ciphertext::modify`] does).
    fn mapped(
        &self,
        a: &Ciphertext<B>,
        meta: rlwe::Meta,
        f: impl FnOnce(&mut B::Poly) -> fhe_math::Result<()>,
    ) -> Result<Ciphertext<B>> {
        let mut out = a.duplicate(self.be())?;
        out.modify(self.be(), meta, f)?;
        Ok(out)
    }

    /// Sets the scale of `ct` (checked against its level).
    fn set_scale(&self, ct: &mut Ciphertext<B>, scale: f64) -> Result<()> {
        let meta = ct.meta().with_scale(scale);
        Ok(ct.modify(self.be(), meta, |_| Ok::<(), rlwe::Error>(()))?)
    }

    fn check_own(&self, op: &'static str, fp: u64) -> Result<()> {
        Ok(rlwe::error::check_same(op, fp, self.fingerprint())?)
    }

    fn check_pair(&self, op: &'static str, a: &rlwe::Meta, b: &rlwe::Meta) -> Result<()> {
        self.check_own(op, a.fingerprint())?;
        self.check_own(op, b.fingerprint())?;
        if a.level() != b.level() {
            return Err(Error::LevelMismatch {
                op,
                left: a.level(),
                right: b.level(),
            });
        }
        if !scales_match(a.scale(), b.scale()) {
            return Err(Error::ScaleMismatch {
                op,
                left: a.scale(),
                right: b.scale(),
            });
        }
        Ok(())
    }

    /// `a + b`.
    pub fn add(&self, a: &Ciphertext<B>, b: &Ciphertext<B>) -> Result<Ciphertext<B>> {
        self.check_pair("add", &a.meta(), &b.meta())?;
        self.combined(a, b, false)
    }

    /// `a += b` (the result has as many components as the larger operand).
    pub fn add_assign(&self, a: &mut Ciphertext<B>, b: &Ciphertext<B>) -> Result<()> {
        self.check_pair("add", &a.meta(), &b.meta())?;
        self.combine(a, b, false)
    }

    /// `a - b`.
    pub fn sub(&self, a: &Ciphertext<B>, b: &Ciphertext<B>) -> Result<Ciphertext<B>> {
        self.check_pair("subtract", &a.meta(), &b.meta())?;
        self.combined(a, b, true)
    }

    /// `a -= b`.
    pub fn sub_assign(&self, a: &mut Ciphertext<B>, b: &Ciphertext<B>) -> Result<()> {
        self.check_pair("subtract", &a.meta(), &b.meta())?;
        self.combine(a, b, true)
    }

    /// `a ± b` as a new ciphertext (operands checked).
    fn combined(
        &self,
        a: &Ciphertext<B>,
        b: &Ciphertext<B>,
        subtract: bool,
    ) -> Result<Ciphertext<B>> {
        let poly = rlwe::ciphertext::combined_components(self.be(), a.poly(), b.poly(), subtract)?;
        Ok(Ciphertext::new(self.be(), poly, a.meta())?)
    }

    fn combine(&self, a: &mut Ciphertext<B>, b: &Ciphertext<B>, subtract: bool) -> Result<()> {
        let be = self.be();
        a.modify(be, a.meta(), |p| {
            rlwe::ciphertext::combine_components(be, p, b.poly(), subtract)
        })?;
        Ok(())
    }

    /// `-a`.
    pub fn negate(&self, a: &Ciphertext<B>) -> Result<Ciphertext<B>> {
        self.mapped(a, a.meta(), |p| self.be().neg_assign(p))
    }

    /// `a + p` for a plaintext at the same level and scale.
    pub fn add_plain(&self, a: &Ciphertext<B>, p: &Plaintext<B>) -> Result<Ciphertext<B>> {
        self.check_pair("add a plaintext", &a.meta(), &p.meta())?;
        self.mapped(a, a.meta(), |c| {
            self.be().add_component_assign(c, 0, p.poly())
        })
    }

    /// `a - p` for a plaintext at the same level and scale.
    pub fn sub_plain(&self, a: &Ciphertext<B>, p: &Plaintext<B>) -> Result<Ciphertext<B>> {
        self.check_pair("subtract a plaintext", &a.meta(), &p.meta())?;
        let mut neg = p.duplicate(self.be())?;
        neg.modify(self.be(), p.meta(), |q| self.be().neg_assign(q))?;
        self.mapped(a, a.meta(), |c| {
            self.be().add_component_assign(c, 0, neg.poly())
        })
    }

    /// `a + c` for a complex constant `c` (in every slot), at `a`'s scale.
    pub fn add_const(&self, a: &Ciphertext<B>, c: Complex64) -> Result<Ciphertext<B>> {
        let slots = self.encoder.max_slots();
        let p = self
            .encoder
            .encode_with(&vec![c; slots], a.level(), a.scale(), slots)?;
        self.mapped(a, a.meta(), |c| {
            self.be().add_component_assign(c, 0, p.poly())
        })
    }

    /// `a - c` for a complex constant `c` (in every slot), at `a`'s scale.
    pub fn sub_const(&self, a: &Ciphertext<B>, c: Complex64) -> Result<Ciphertext<B>> {
        self.add_const(a, -c)
    }

    /// `a ⊗ b`: the 3-component product (scale `Δ_a·Δ_b`), not relinearized.
    pub fn mul(&self, a: &Ciphertext<B>, b: &Ciphertext<B>) -> Result<Ciphertext<B>> {
        self.check_mul("multiply", a, b)?;
        let scale = self.product_scale("multiply", a.level(), a.scale(), b.scale())?;
        let poly = self.be().tensor(a.poly(), b.poly())?;
        Ok(Ciphertext::new(
            self.be(),
            poly,
            a.meta().with_scale(scale),
        )?)
    }

    /// The scale `sa·sb` of a product at `level`, checked against `Q_level`.
    fn product_scale(&self, op: &'static str, level: usize, sa: f64, sb: f64) -> Result<f64> {
        self.check_scale(op, "the product's", level, sa * sb)
    }

    fn check_mul(&self, op: &'static str, a: &Ciphertext<B>, b: &Ciphertext<B>) -> Result<()> {
        self.check_own(op, a.fingerprint())?;
        self.check_own(op, b.fingerprint())?;
        if a.level() != b.level() {
            return Err(Error::LevelMismatch {
                op,
                left: a.level(),
                right: b.level(),
            });
        }
        Ok(rlwe::ciphertext::check_two_components(
            self.be(),
            op,
            a.poly(),
            b.poly(),
        )?)
    }

    /// `a²` (3 components).
    pub fn square(&self, a: &Ciphertext<B>) -> Result<Ciphertext<B>> {
        self.mul(a, a)
    }

    /// Relinearizes a 3-component ciphertext.
    pub fn relinearize(&self, a: Ciphertext<B>, rlk: &RelinKey<B>) -> Result<Ciphertext<B>> {
        Ok(keyswitch::relinearize(self.be(), a, rlk, false)?)
    }

    /// `a·b` relinearized (scale `Δ_a·Δ_b`).
    pub fn mul_relin(
        &self,
        a: &Ciphertext<B>,
        b: &Ciphertext<B>,
        rlk: &RelinKey<B>,
    ) -> Result<Ciphertext<B>> {
        self.check_mul("multiply", a, b)?;
        let scale = self.product_scale("multiply", a.level(), a.scale(), b.scale())?;
        let mut out = keyswitch::mul_relinearize(self.be(), a, b, rlk, false)?;
        self.set_scale(&mut out, scale)?;
        Ok(out)
    }

    /// `a·b` relinearized and rescaled in one fused pass (scale `Δ_a·Δ_b / q_l`).
    pub fn mul_relin_rescale(
        &self,
        a: &Ciphertext<B>,
        b: &Ciphertext<B>,
        rlk: &RelinKey<B>,
    ) -> Result<Ciphertext<B>> {
        self.check_mul("multiply", a, b)?;
        let level = a.level();
        if level == 0 {
            return Err(Error::CannotRescale);
        }
        let q_l = self.ctx.params().moduli_q()[level] as f64;
        let product = self.product_scale("multiply", level, a.scale(), b.scale())?;
        let scale = self.check_scale("rescale", "the result's", level - 1, product / q_l)?;
        let mut out = keyswitch::mul_relinearize(self.be(), a, b, rlk, true)?;
        self.set_scale(&mut out, scale)?;
        Ok(out)
    }

    /// `a·b + c` relinearized and rescaled with one key switch: `c` (two components at the
    /// operands' level, scale `Δ_a·Δ_b` within tolerance) joins the tensor product before the
    /// relinearization, whose `mod_down` rescales, so `c` costs no rescale of its own (scale
    /// `Δ_a·Δ_b / q_l`). A polynomial evaluation adds its lower-degree part this way.
    pub fn mul_add_relin_rescale(
        &self,
        a: &Ciphertext<B>,
        b: &Ciphertext<B>,
        c: &Ciphertext<B>,
        rlk: &RelinKey<B>,
    ) -> Result<Ciphertext<B>> {
        let level = a.level();
        if level == 0 {
            return Err(Error::CannotRescale);
        }
        let mut t = self.mul(a, b)?;
        self.add_assign(&mut t, c)?;
        let q_l = self.ctx.params().moduli_q()[level] as f64;
        let scale = self.check_scale("rescale", "the result's", level - 1, t.scale() / q_l)?;
        let mut out = keyswitch::relinearize(self.be(), t, rlk, true)?;
        self.set_scale(&mut out, scale)?;
        Ok(out)
    }

    /// Divides by the top prime: level `l -> l-1`, scale `Δ -> Δ / q_l`.
    pub fn rescale(&self, a: &Ciphertext<B>) -> Result<Ciphertext<B>> {
        let meta = self.rescaled_meta(a)?;
        // Into a new buffer (`Backend::rescaled_mod_t`: the GPU reads `a` in the rescale's own
        // passes instead of copying it first).
        let poly = self.be().rescaled(a.poly())?;
        Ok(Ciphertext::new(self.be(), poly, meta)?)
    }

    /// `a`'s metadata after a rescale (level `l - 1`, scale `Δ / q_l`); an error at level 0.
    pub(crate) fn rescaled_meta(&self, a: &Ciphertext<B>) -> Result<rlwe::Meta> {
        let level = a.level();
        if level == 0 {
            return Err(Error::CannotRescale);
        }
        let scale = a.scale() / self.ctx.params().moduli_q()[level] as f64;
        let scale = self.check_scale("rescale", "the result's", level - 1, scale)?;
        Ok(a.meta().with_level(level - 1).with_scale(scale))
    }

    /// In-place [`Evaluator::rescale`].
    pub fn rescale_assign(&self, a: &mut Ciphertext<B>) -> Result<()> {
        let meta = self.rescaled_meta(a)?;
        Ok(a.modify(self.be(), meta, |p| self.be().rescale(p))?)
    }

    /// `a ⊙ p` for a plaintext at `a`'s level (scale multiplies; rescale afterwards).
    pub fn mul_plain(&self, a: &Ciphertext<B>, p: &Plaintext<B>) -> Result<Ciphertext<B>> {
        self.check_own("multiply by a plaintext", a.fingerprint())?;
        self.check_own("multiply by a plaintext", p.fingerprint())?;
        if a.level() != p.level() {
            return Err(Error::LevelMismatch {
                op: "multiply by a plaintext",
                left: a.level(),
                right: p.level(),
            });
        }
        let scale =
            self.product_scale("multiply by a plaintext", a.level(), a.scale(), p.scale())?;
        self.mapped(a, a.meta().with_scale(scale), |c| {
            self.be().mul_plain_assign(c, p.poly())
        })
    }

    /// `a · c` for a real constant, encoded at the level's scale `Δ_l` (scale multiplies by
    /// `round(c·Δ_l)/c`, i.e. by `Δ_l` up to rounding; rescale afterwards).
    pub fn mul_const(&self, a: &Ciphertext<B>, c: f64) -> Result<Ciphertext<B>> {
        let level = a.level();
        let delta = self.ctx.params().scale(level)?;
        let v = (c * delta).round();
        if !v.is_finite() || v.abs() >= 2f64.powi(62) {
            return Err(Error::ValueTooLarge {
                value: c,
                scale: delta,
            });
        }
        let scale = self.product_scale("multiply by a constant", level, a.scale(), delta)?;
        let mut out = self.mul_int_raw(a, v as i64)?;
        self.set_scale(&mut out, scale)?;
        Ok(out)
    }

    /// `a · c` for a complex constant, encoded at the level's scale (rescale afterwards).
    pub fn mul_const_complex(&self, a: &Ciphertext<B>, c: Complex64) -> Result<Ciphertext<B>> {
        let level = a.level();
        let slots = self.encoder.max_slots();
        let delta = self.ctx.params().scale(level)?;
        let p = self
            .encoder
            .encode_with(&vec![c; slots], level, delta, slots)?;
        self.mul_plain(a, &p)
    }

    /// `a · k` for an integer `k` (exact; scale unchanged, no rescale needed).
    pub fn mul_int(&self, a: &Ciphertext<B>, k: i64) -> Result<Ciphertext<B>> {
        self.mul_int_raw(a, k)
    }

    fn mul_int_raw(&self, a: &Ciphertext<B>, k: i64) -> Result<Ciphertext<B>> {
        self.check_own("multiply by a constant", a.fingerprint())?;
        let be = self.be();
        let scalars = rlwe::ciphertext::scalar_residues(be.ring(), a.level(), k);
        self.mapped(a, a.meta(), |p| be.mul_scalar_assign(p, &scalars))
    }

    /// Brings a rescaled ciphertext down to `level` keeping the ladder scale, with one rescale
    /// whatever the distance: the primes `q_l … q_{level+2}` are dropped (exact, the scale `s`
    /// unchanged), then the ciphertext is multiplied by `M = round(Δ_level · q_{level+1} / Δ_l)`
    /// and rescaled by `q_{level+1}`, so the scale goes `s → s·M/q_{level+1} ≈ s·Δ_level/Δ_l`
    /// (`Δ_l → Δ_level` on the ladder; the exact value is recorded). One rounding, one NTT
    /// pass. Where `M` would not fit an `i64`, the drop goes one level at a time
    /// (`M = round(Δ_l)`, rescale by `q_l`).
    pub fn drop_to_level(&self, a: &Ciphertext<B>, level: usize) -> Result<Ciphertext<B>> {
        if level > a.level() {
            return Err(Error::LevelMismatch {
                op: "drop to a level",
                left: a.level(),
                right: level,
            });
        }
        let be = self.be();
        let params = self.ctx.params();
        let mut out = a.duplicate(be)?;
        while out.level() > level {
            let l = out.level();
            let one_step =
                params.scale(level)? * params.moduli_q()[level + 1] as f64 / params.scale(l)?;
            let (next, m) = if one_step.round() >= 1.0 && one_step.round() < 2f64.powi(62) {
                (level, one_step.round())
            } else {
                (l - 1, params.scale(l)?.round())
            };
            if next + 1 < l {
                let meta = out.meta().with_level(next + 1);
                out.modify(be, meta, |p| be.set_level(p, next + 1))?;
            }
            // In place on the copy: one buffer for the whole drop.
            self.check_own("multiply by a constant", out.fingerprint())?;
            let scalars = rlwe::ciphertext::scalar_residues(be.ring(), out.level(), m as i64);
            let meta = out.meta();
            out.modify(be, meta, |p| be.mul_scalar_assign(p, &scalars))?;
            let scale = out.scale() * m;
            self.set_scale(&mut out, scale)?;
            self.rescale_assign(&mut out)?;
        }
        Ok(out)
    }

    /// Brings two ciphertexts to the lower of their levels ([`Evaluator::drop_to_level`]).
    pub fn align(
        &self,
        a: &Ciphertext<B>,
        b: &Ciphertext<B>,
    ) -> Result<(Ciphertext<B>, Ciphertext<B>)> {
        let level = a.level().min(b.level());
        Ok((self.drop_to_level(a, level)?, self.drop_to_level(b, level)?))
    }

    /// The Galois element rotating slots left by `step` (negative: right).
    pub fn rotation_element(&self, step: i64) -> u64 {
        galois::galois_element(ROTATION_GENERATOR, step, self.ctx.params().n())
    }

    /// Rotates slots left by `step`: with the exact key when present, else composed from
    /// power-of-two rotations (keys for `2^i` needed for every set bit of `step mod N/2`).
    pub fn rotate(
        &self,
        a: &Ciphertext<B>,
        step: i64,
        keys: &GaloisKeys<B>,
    ) -> Result<Ciphertext<B>> {
        let half = (self.ctx.params().n() / 2) as i64;
        let step = step.rem_euclid(half);
        if step == 0 {
            return a.duplicate(self.be()).map_err(Into::into);
        }
        let g = self.rotation_element(step);
        if let Ok(key) = keys.get(g, "rotate") {
            return Ok(keyswitch::apply_galois(self.be(), a, g, key)?);
        }
        let mut out: Option<Ciphertext<B>> = None;
        for bit in 0..63 {
            if step >> bit & 1 == 1 {
                let g = self.rotation_element(1 << bit);
                let key = keys.get(g, "rotate (power-of-two decomposition)")?;
                let src = out.as_ref().unwrap_or(a);
                out = Some(keyswitch::apply_galois(self.be(), src, g, key)?);
            }
        }
        Ok(out.expect("non-zero step has a set bit"))
    }

    /// Conjugates every slot (`X -> X^(-1)`).
    pub fn conjugate(&self, a: &Ciphertext<B>, keys: &GaloisKeys<B>) -> Result<Ciphertext<B>> {
        let g = galois::galois_element_conjugate(self.ctx.params().n());
        Ok(keyswitch::apply_galois(
            self.be(),
            a,
            g,
            keys.get(g, "conjugate")?,
        )?)
    }

    /// Rotations of one ciphertext by several steps, sharing one `mod_up` (exact keys needed).
    pub fn rotate_hoisted(
        &self,
        a: &Ciphertext<B>,
        steps: &[i64],
        keys: &GaloisKeys<B>,
    ) -> Result<Vec<Ciphertext<B>>> {
        let elements: Vec<u64> = steps.iter().map(|&s| self.rotation_element(s)).collect();
        let pairs = elements
            .iter()
            .map(|&g| Ok((g, keys.get(g, "rotate (hoisted)")?)))
            .collect::<Result<Vec<_>>>()?;
        Ok(keyswitch::apply_galois_hoisted(self.be(), a, &pairs)?)
    }

    /// Galois elements for rotations by `steps` (and conjugation when `conjugate`), to pass to
    /// [`rlwe::KeyGenerator::galois_keys`].
    pub fn galois_elements(&self, steps: &[i64], conjugate: bool) -> Vec<u64> {
        let mut out: Vec<u64> = steps.iter().map(|&s| self.rotation_element(s)).collect();
        if conjugate {
            out.push(galois::galois_element_conjugate(self.ctx.params().n()));
        }
        out
    }

    /// Galois elements of all power-of-two rotations `1, 2, 4, ..., N/4` (enough to compose any
    /// rotation) plus conjugation.
    pub fn power_of_two_elements(&self) -> Vec<u64> {
        let half = self.ctx.params().n() / 2;
        let steps: Vec<i64> = (0..)
            .map(|i| 1i64 << i)
            .take_while(|&s| (s as usize) < half)
            .collect();
        self.galois_elements(&steps, true)
    }

    /// The encoder this evaluator uses for constants.
    pub fn encoder(&self) -> &Encoder<B> {
        &self.encoder
    }
}
