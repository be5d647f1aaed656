//! [`RingBackend`]: buffers of RNS polynomials on a device and the arithmetic of the ring over
//! them (element-wise operations, NTTs, the tensor product, automorphisms, rescale, samplers).

use crate::error::Result;
use crate::poly::{RnsPoly, Shape};
use crate::ring::RingContext;
use crate::sampler::{Domain, Seed};
use rayon::prelude::*;
use std::sync::Arc;

/// A compute backend bound to one [`RingContext`]: its buffers and the ring's arithmetic.
pub trait RingBackend: Clone + Send + Sync + 'static {
    /// A device buffer of RNS polynomials, `[component][slot][coeff]` (see [`RnsPoly`]).
    type Poly: Send + Sync;

    /// The ring this backend computes in.
    fn ring(&self) -> &Arc<RingContext>;

    /// Human-readable device name (e.g. "cpu" or the GPU's name).
    fn device_name(&self) -> String;

    /// Shape of a buffer.
    fn shape(&self, p: &Self::Poly) -> Shape;

    /// A zero buffer.
    fn zeros(&self, shape: Shape) -> Result<Self::Poly>;

    /// Copies a host buffer to the device.
    fn upload(&self, host: &RnsPoly) -> Result<Self::Poly>;

    /// Copies a device buffer to the host.
    fn download(&self, p: &Self::Poly) -> Result<RnsPoly>;

    /// The RNS lift of an integer polynomial: a one-component buffer at `level`, coefficient
    /// form, whose limb `s` (for `s <= level`) holds `coeffs[k] mod q_s` canonically in
    /// `[0, q_s)` (a negative `v` gives `q_s - (|v| mod q_s)`, or 0). This is how encoders put a
    /// message on the device: `16·N` bytes cross instead of `8·N·(L+1)`.
    ///
    /// Errors: `coeffs.len() != N` ([`crate::Error::ShapeMismatch`]), `level > L`
    /// ([`crate::Error::InvalidLevel`]). The default body reduces on the host and calls
    /// [`RingBackend::upload`]; an override must give the same bits.
    fn upload_lifted(&self, coeffs: &[i128], level: usize) -> Result<Self::Poly> {
        let host = lift_host(self.ring(), coeffs, level, |v| (v < 0, v.unsigned_abs()))?;
        self.upload(&host)
    }

    /// [`RingBackend::upload_lifted`] for 64-bit coefficients (`8·N` bytes cross): limb `s` holds
    /// `coeffs[k] mod q_s`, the same values as the 128-bit method for the same integers.
    fn upload_lifted_i64(&self, coeffs: &[i64], level: usize) -> Result<Self::Poly> {
        let host = lift_host(self.ring(), coeffs, level, |v| {
            (v < 0, v.unsigned_abs() as u128)
        })?;
        self.upload(&host)
    }

    /// The small coefficients of component 0 of `p` (read as coefficient form, level `l`):
    /// for each coefficient `k`, with `x_k = [p_{0,k}]_{q_0}` the centred residue modulo `q_0`
    /// (in `[-(q_0-1)/2, (q_0-1)/2]`), `Some(x_k)` when `x_k ≡ p_{s,k} (mod q_s)` for every
    /// other active slot `s = 1..=l`, else `None`. `Some(x)` means `x` is the coefficient's
    /// centred value modulo `Q_l = q_0···q_l` (it is congruent to every residue and lies in
    /// `(-Q_l/2, Q_l/2]`, so the CRT makes it unique); for `None` the caller needs the full
    /// limbs ([`RingBackend::download`]) and a CRT lift. At level 0 every entry is `Some`.
    ///
    /// Only `8·N` bytes need cross instead of `8·N·(L+1)`. Errors: an extended buffer
    /// ([`crate::Error::ShapeMismatch`]). The default body downloads the buffer and runs
    /// [`centered_q0_host`]; an override must give the same values.
    fn download_centered_q0(&self, p: &Self::Poly) -> Result<Vec<Option<i64>>> {
        let host = self.download(p)?;
        centered_q0_host(self.ring(), &host)
    }

    /// A copy of a buffer on the device.
    fn duplicate(&self, p: &Self::Poly) -> Result<Self::Poly>;

    /// Lowers the level of a buffer (drops top `Q` limbs) without copying.
    fn set_level(&self, p: &mut Self::Poly, level: usize) -> Result<()>;

    /// Keeps the first `components` components (no copy).
    fn truncate_components(&self, p: &mut Self::Poly, components: usize) -> Result<()>;

    /// Overwrites the buffer with zeros (used to erase secret material before freeing it).
    fn zeroize(&self, p: &mut Self::Poly);

    /// `a += b` over `a`'s components and active limbs (`b` must have at least as many).
    fn add_assign(&self, a: &mut Self::Poly, b: &Self::Poly) -> Result<()>;

    /// `a -= b` over `a`'s components and active limbs.
    fn sub_assign(&self, a: &mut Self::Poly, b: &Self::Poly) -> Result<()>;

    /// `a + b`, or `a - b` when `subtract`, as a new buffer of `a`'s shape (`b` as for
    /// [`RingBackend::add_assign`]). The default body duplicates `a` and combines in place; a
    /// backend may write the result in one pass (the same residues).
    fn add_new(&self, a: &Self::Poly, b: &Self::Poly, subtract: bool) -> Result<Self::Poly> {
        let mut out = self.duplicate(a)?;
        if subtract {
            self.sub_assign(&mut out, b)?;
        } else {
            self.add_assign(&mut out, b)?;
        }
        Ok(out)
    }

    /// `a_component += b_0`: adds a one-component buffer (a plaintext) to one component.
    fn add_component_assign(
        &self,
        a: &mut Self::Poly,
        component: usize,
        b: &Self::Poly,
    ) -> Result<()>;

    /// `a_c ± b_c` (`-` when `subtract`) for each component `c` of `b`, which may have fewer
    /// components than `a` (a two-component ciphertext added into the first two components of
    /// a tensor product), over `a`'s active limbs. The default body goes component by
    /// component through a one-component copy; a backend may do it in one pass (the same
    /// residues).
    fn combine_leading_assign(
        &self,
        a: &mut Self::Poly,
        b: &Self::Poly,
        subtract: bool,
    ) -> Result<()> {
        combine_leading_default(self, a, b, subtract)
    }

    /// `dst_{dst_component} = src_{src_component}` over `dst`'s active limbs.
    fn copy_component(
        &self,
        src: &Self::Poly,
        src_component: usize,
        dst: &mut Self::Poly,
        dst_component: usize,
    ) -> Result<()>;

    /// `a = -a`.
    fn neg_assign(&self, a: &mut Self::Poly) -> Result<()>;

    /// `a_c ⊙= b` for every component `c` of `a`, with `b` a one-component buffer (NTT form:
    /// multiplication by a plaintext).
    fn mul_plain_assign(&self, a: &mut Self::Poly, b: &Self::Poly) -> Result<()>;

    /// `acc_c += a_c ⊙ b` for every component `c` (plaintext multiply-accumulate).
    fn mul_plain_acc(&self, acc: &mut Self::Poly, a: &Self::Poly, b: &Self::Poly) -> Result<()>;

    /// `out_c = Σ_t a_{t,c} ⊙ b_t` for every component `c`, a new buffer of `shape` (each term
    /// as in [`RingBackend::mul_plain_acc`]): the plaintext multiply-accumulates of one inner
    /// sum of a baby-step giant-step linear transform. The default runs
    /// [`RingBackend::mul_plain_acc`] into zeros; a backend may fuse the terms (one pass that
    /// reads each operand once and writes the sum once) with the same result.
    fn mul_plain_sum(
        &self,
        shape: Shape,
        terms: &[(&Self::Poly, &Self::Poly)],
    ) -> Result<Self::Poly> {
        let mut out = self.zeros(shape)?;
        for (a, b) in terms {
            self.mul_plain_acc(&mut out, a, b)?;
        }
        Ok(out)
    }

    /// `a_c *= s_i` on every component `c`, with one constant per active slot (`s[i]` for the
    /// `i`-th active slot, canonical modulo that slot's prime).
    fn mul_scalar_assign(&self, a: &mut Self::Poly, scalars: &[u64]) -> Result<()>;

    /// Adds the constant polynomial `s` to component `component` (in NTT form a constant adds to
    /// every evaluation; in coefficient form call it on the coefficient-form buffer and only the
    /// NTT-form meaning applies, so callers use it in NTT form). One constant per active slot.
    fn add_scalar_assign(
        &self,
        a: &mut Self::Poly,
        component: usize,
        scalars: &[u64],
    ) -> Result<()>;

    /// Forward negacyclic NTT of every component and active limb (fhe-math's contract).
    fn ntt(&self, a: &mut Self::Poly) -> Result<()>;

    /// Inverse NTT of every component and active limb.
    fn intt(&self, a: &mut Self::Poly) -> Result<()>;

    /// Tensor product of two 2-component buffers in NTT form:
    /// `(a0 b0, a0 b1 + a1 b0, a1 b1)`, at the lower of the two levels.
    fn tensor(&self, a: &Self::Poly, b: &Self::Poly) -> Result<Self::Poly>;

    /// `out_c = σ_g(a_c)` for components `c < mapped` in NTT form, `σ_g: X -> X^g`;
    /// the other components of `out` are left untouched.
    fn automorphism_into(
        &self,
        a: &Self::Poly,
        galois: u64,
        out: &mut Self::Poly,
        mapped: usize,
    ) -> Result<()>;

    /// Divides by the top prime with rounding, in NTT form: `a <- ⌊a / q_l⌉` over
    /// `q_0..q_{l-1}`; the level drops by one.
    fn rescale(&self, a: &mut Self::Poly) -> Result<()>;

    /// [`Self::rescale`] into a new buffer, `a` unchanged. The default copies, then rescales in
    /// place; a backend may read `a` in the rescale's own passes instead (the result's every
    /// word, inactive slots included, must be what the copy would hold).
    fn rescaled(&self, a: &Self::Poly) -> Result<Self::Poly> {
        let mut out = self.duplicate(a)?;
        self.rescale(&mut out)?;
        Ok(out)
    }

    /// Uniform polynomial(s) in NTT form from a seed: slot `s` of component `c` uses the stream
    /// `(domain, poly_index + c, s)` of the randomness layout.
    fn sample_uniform(
        &self,
        seed: &Seed,
        domain: Domain,
        poly_index: u32,
        shape: Shape,
    ) -> Result<Self::Poly>;

    /// A ternary polynomial (one component, coefficient form) from a seed, the same integer in
    /// every slot.
    fn sample_ternary(
        &self,
        seed: &Seed,
        domain: Domain,
        poly_index: u32,
        shape: Shape,
    ) -> Result<Self::Poly>;

    /// A discrete Gaussian polynomial (sigma 3.2, one component, coefficient form) from a seed.
    fn sample_gaussian(
        &self,
        seed: &Seed,
        domain: Domain,
        poly_index: u32,
        shape: Shape,
    ) -> Result<Self::Poly>;

    /// Waits for all queued work (a no-op on the CPU); surfaces asynchronous device errors.
    fn synchronize(&self) -> Result<()> {
        Ok(())
    }

    /// Fused linear combination of buffers with per-limb scalar coefficients:
    ///
    /// `out_j = Σ_{i < k} c_{j,i} · ct_i` for `j < outputs`, limb by limb: for every component
    /// `c` and active slot `s` (modulus `q_s`), `out_{j,c,s} = Σ_i c_{j,i,s} · ct_{i,c,s} mod q_s`.
    ///
    /// The `k = inputs.len()` inputs must have one shape (components, level, extension); the
    /// outputs have that shape, with zeros in their inactive slots. Being a multiplication by
    /// constants it holds in NTT and in coefficient form alike. `coeffs` holds
    /// `outputs · k · a` canonical residues (`a` the active limbs of the shape: `q_0..q_l`,
    /// then the special primes when extended, as in [`RingBackend::mul_scalar_assign`]), laid
    /// out `coeffs[(j·k + i)·a + s']` for the `s'`-th active slot. A coefficient is given per
    /// limb, already reduced modulo that limb's prime, so an integer scheme passes `c mod q_s`
    /// (BGV, `t`-scaled constants included) and CKKS passes the residues of its rounded
    /// `Δ·c` (each limb free to use its own value); the operation itself never rounds.
    ///
    /// This is the heart of polynomial evaluation (comparisons, bootstrapping): one pass over
    /// the limbs instead of `outputs · k` scalar multiplications and additions.
    ///
    /// Errors ([`crate::Error::ShapeMismatch`]): no input, inputs of different shapes, a buffer
    /// of another ring, a coefficient count other than `outputs · k · a`, or a coefficient not
    /// below its limb's prime. The default body is [`linear_combination_default`]; an override
    /// must give the same bits.
    fn linear_combination(
        &self,
        inputs: &[&Self::Poly],
        coeffs: &[u64],
        outputs: usize,
    ) -> Result<Vec<Self::Poly>> {
        linear_combination_default(self, inputs, coeffs, outputs)
    }
}

/// Checks the arguments of [`RingBackend::upload_lifted`] (`N` coefficients, `level <= L`).
pub fn check_lift_args(ring: &RingContext, len: usize, level: usize) -> Result<()> {
    if len != ring.n() {
        return Err(crate::Error::ShapeMismatch {
            what: format!(
                "cannot lift a polynomial: {len} coefficients given, the ring has N = {}",
                ring.n()
            ),
        });
    }
    if level > ring.max_level() {
        return Err(crate::Error::InvalidLevel {
            level,
            reason: "above the top level",
        });
    }
    Ok(())
}

/// The host side of [`RingBackend::upload_lifted`]: `coeffs` (split by `sign_mag` into sign and
/// magnitude) reduced into every active slot of a one-component buffer at `level`.
fn lift_host<T: Copy + Sync>(
    ring: &RingContext,
    coeffs: &[T],
    level: usize,
    sign_mag: impl Fn(T) -> (bool, u128) + Sync,
) -> Result<RnsPoly> {
    check_lift_args(ring, coeffs.len(), level)?;
    let mut host = ring.zeros(Shape {
        components: 1,
        level,
        extended: false,
    })?;
    let n = ring.n();
    host.raw_mut()
        .par_chunks_mut(n)
        .take(level + 1)
        .enumerate()
        .for_each(|(s, limb)| {
            let m = ring.modulus(s);
            for (dst, &v) in limb.iter_mut().zip(coeffs) {
                let (neg, mag) = sign_mag(v);
                let r = m.reduce_u128(mag);
                *dst = if neg { m.neg(r) } else { r };
            }
        });
    Ok(host)
}

/// The host side of [`RingBackend::download_centered_q0`] on a host buffer `p` of `ring`
/// (component 0, coefficient form): `Some(x)` with `x = [p_{0,k}]_{q_0}` centred when
/// `x mod q_s = p_{s,k}` for every other active slot `s`, else `None`.
pub fn centered_q0_host(ring: &RingContext, p: &RnsPoly) -> Result<Vec<Option<i64>>> {
    ring.check(p)?;
    if p.shape().extended {
        return Err(crate::Error::ShapeMismatch {
            what: "cannot take centred residues of an extended buffer (basis Q·P)".into(),
        });
    }
    let level = p.level();
    let q0 = ring.modulus(0);
    let limb0 = p.limb(0, 0);
    let mut out = vec![None; p.n()];
    out.par_chunks_mut(1024)
        .enumerate()
        .for_each(|(chunk, out)| {
            for (i, o) in out.iter_mut().enumerate() {
                let k = chunk * 1024 + i;
                let x = q0.center(limb0[k]);
                let small = (1..=level).all(|s| ring.modulus(s).reduce_i64(x) == p.limb(0, s)[k]);
                *o = small.then_some(x);
            }
        });
    Ok(out)
}

/// The default body of [`RingBackend::combine_leading_assign`]: component by component
/// through a one-component copy ([`RingBackend::copy_component`],
/// [`RingBackend::neg_assign`], [`RingBackend::add_component_assign`]).
pub fn combine_leading_default<B: RingBackend>(
    be: &B,
    a: &mut B::Poly,
    b: &B::Poly,
    subtract: bool,
) -> Result<()> {
    let (sa, sb) = (be.shape(a), be.shape(b));
    if sb.components > sa.components {
        return Err(crate::Error::ShapeMismatch {
            what: format!(
                "cannot combine the leading components: the operand has {} components, more \
                 than {}",
                sb.components, sa.components
            ),
        });
    }
    let one = Shape {
        components: 1,
        level: sa.level,
        extended: sa.extended,
    };
    for c in 0..sb.components {
        let mut t = be.zeros(one)?;
        be.copy_component(b, c, &mut t, 0)?;
        if subtract {
            be.neg_assign(&mut t)?;
        }
        be.add_component_assign(a, c, &t)?;
    }
    Ok(())
}

/// The default body of [`RingBackend::linear_combination`]: each output from
/// [`RingBackend::zeros`], then for each input a [`RingBackend::duplicate`] scaled by
/// [`RingBackend::mul_scalar_assign`] and added by [`RingBackend::add_assign`].
pub fn linear_combination_default<B: RingBackend>(
    be: &B,
    inputs: &[&B::Poly],
    coeffs: &[u64],
    outputs: usize,
) -> Result<Vec<B::Poly>> {
    let shapes: Vec<Shape> = inputs.iter().map(|p| be.shape(p)).collect();
    let shape = check_linear_combination(be.ring(), &shapes, coeffs, outputs)?;
    let row_len = inputs.len() * active_slot_count(be.ring(), shape);
    let mut out = Vec::with_capacity(outputs);
    for row in coeffs.chunks(row_len).take(outputs) {
        let mut acc = be.zeros(shape)?;
        for (input, c) in inputs.iter().zip(row.chunks(row_len / inputs.len())) {
            let mut term = be.duplicate(input)?;
            be.mul_scalar_assign(&mut term, c)?;
            be.add_assign(&mut acc, &term)?;
        }
        out.push(acc);
    }
    Ok(out)
}

/// The number of active limbs of a buffer of `shape` in `ring`: `q_0..q_l`, then the special
/// primes when extended.
pub fn active_slot_count(ring: &RingContext, shape: Shape) -> usize {
    shape.level + 1 + if shape.extended { ring.p_count() } else { 0 }
}

/// Checks the arguments of [`RingBackend::linear_combination`] given the inputs' shapes:
/// at least one input, one shape for all, a level the ring has, `outputs · k · a`
/// coefficients, each below its limb's prime. Returns the common shape.
pub fn check_linear_combination(
    ring: &RingContext,
    shapes: &[Shape],
    coeffs: &[u64],
    outputs: usize,
) -> Result<Shape> {
    let mismatch = |what: String| crate::Error::ShapeMismatch { what };
    let Some(&shape) = shapes.first() else {
        return Err(mismatch(
            "cannot form a linear combination of no ciphertexts".into(),
        ));
    };
    if let Some(other) = shapes.iter().find(|&&s| s != shape) {
        return Err(mismatch(format!(
            "cannot form a linear combination of buffers of shapes {shape:?} and {other:?}"
        )));
    }
    if shape.level > ring.max_level() || (shape.extended && ring.p_count() == 0) {
        return Err(mismatch(format!(
            "cannot form a linear combination: shape {shape:?} is not one of the ring's"
        )));
    }
    let active = active_slot_count(ring, shape);
    let want = outputs
        .checked_mul(shapes.len() * active)
        .ok_or_else(|| mismatch("cannot form a linear combination: too many outputs".into()))?;
    if coeffs.len() != want {
        return Err(mismatch(format!(
            "cannot form a linear combination: {} coefficients given, {outputs} outputs of {} \
             inputs over {active} limbs need {want}",
            coeffs.len(),
            shapes.len()
        )));
    }
    let slots: Vec<usize> = (0..=shape.level)
        .chain(if shape.extended {
            ring.q_count()..ring.q_count() + ring.p_count()
        } else {
            0..0
        })
        .collect();
    for (idx, &c) in coeffs.iter().enumerate() {
        let q = ring.modulus(slots[idx % active]).value();
        if c >= q {
            return Err(mismatch(format!(
                "cannot form a linear combination: coefficient {c} is not a residue modulo {q}"
            )));
        }
    }
    Ok(shape)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::CpuBackend;
    use crate::rns::RnsBasis;
    use crate::test_util::{backend_ring as ring, rand_poly};

    /// Random i128 coefficients of every size, with the extremes.
    fn ints(n: usize) -> Vec<i128> {
        let r = rand_poly(7, 4 * n, u64::MAX);
        let mut v: Vec<i128> = (0..n)
            .map(|k| {
                let w = ((r[4 * k] as u128) << 64 | r[4 * k + 1] as u128) as i128;
                // A random bit length in 0..=127, either sign.
                let v = w >> (r[4 * k + 2] % 128);
                if r[4 * k + 3] & 1 == 1 { -v } else { v }
            })
            .collect();
        v[..6].copy_from_slice(&[0, 1, -1, i128::MAX, i128::MIN, i128::MIN + 1]);
        v
    }
    #[test]
    fn upload_lifted_default_matches_rem_euclid() {
        let ring = ring();
        let be = CpuBackend::new(ring.clone());
        let v = ints(ring.n());
        let v64: Vec<i64> = v.iter().map(|&x| x as i64).collect();
        for level in 0..=ring.max_level() {
            let p = be.upload_lifted(&v, level).unwrap();
            let p64 = be.upload_lifted_i64(&v64, level).unwrap();
            assert_eq!(
                p.shape(),
                Shape {
                    components: 1,
                    level,
                    extended: false
                }
            );
            for s in 0..ring.q_count() {
                let q = ring.modulus(s).value();
                if s > level {
                    assert!(p.limb(0, s).iter().all(|&x| x == 0), "inactive slot {s}");
                    continue;
                }
                for (k, (&x, &y)) in p.limb(0, s).iter().zip(p64.limb(0, s)).enumerate() {
                    assert_eq!(x, v[k].rem_euclid(q as i128) as u64, "slot {s} coeff {k}");
                    assert_eq!(y, (v64[k] as i128).rem_euclid(q as i128) as u64);
                }
            }
        }
    }

    #[test]
    fn upload_lifted_rejects_bad_arguments() {
        let ring = ring();
        let be = CpuBackend::new(ring.clone());
        let n = ring.n();
        assert!(matches!(
            be.upload_lifted(&vec![0; n - 1], 0),
            Err(crate::Error::ShapeMismatch { .. })
        ));
        assert!(matches!(
            be.upload_lifted_i64(&vec![0; n + 1], 0),
            Err(crate::Error::ShapeMismatch { .. })
        ));
        assert!(matches!(
            be.upload_lifted(&vec![0; n], ring.max_level() + 1),
            Err(crate::Error::InvalidLevel { .. })
        ));
        let ext = ring
            .zeros(Shape {
                components: 1,
                level: 0,
                extended: true,
            })
            .unwrap();
        assert!(matches!(
            be.download_centered_q0(&ext),
            Err(crate::Error::ShapeMismatch { .. })
        ));
    }

    // The default body against the big-integer CRT: `Some(x)` exactly when the centred value
    // `V` modulo `Q_l` lies in q_0's centred range, and then `x = V`.
    #[test]
    fn download_centered_q0_default_matches_crt() {
        let ring = ring();
        let be = CpuBackend::new(ring.clone());
        let n = ring.n();
        let half_q0 = (ring.modulus(0).value() - 1) / 2;
        // Lifted small values (some at q_0's bounds), large lifted values, uniform residues.
        let mut v: Vec<i128> = rand_poly(3, n, 1 << 50)
            .iter()
            .map(|&x| x as i128 - (1 << 49))
            .collect();
        v[..4].copy_from_slice(&[
            half_q0 as i128,
            -(half_q0 as i128),
            half_q0 as i128 + 1,
            -(half_q0 as i128) - 1,
        ]);
        for x in v[n / 2..].iter_mut() {
            *x <<= 40;
        }
        for level in 0..=ring.max_level() {
            let basis = RnsBasis::new(ring.moduli()[..=level].to_vec()).unwrap();
            let lifted = be.upload_lifted(&v, level).unwrap();
            let uniform = be
                .sample_uniform(
                    &Seed([9; 32]),
                    Domain::Other,
                    0,
                    Shape {
                        components: 2,
                        level,
                        extended: false,
                    },
                )
                .unwrap();
            for p in [&lifted, &uniform] {
                let got = be.download_centered_q0(p).unwrap();
                let mut somes = 0;
                for (k, g) in got.iter().enumerate() {
                    let res: Vec<u64> = (0..=level).map(|s| p.limb(0, s)[k]).collect();
                    let value = basis.reconstruct_centered(&res);
                    let want = i64::try_from(&value)
                        .ok()
                        .filter(|x| x.unsigned_abs() <= half_q0);
                    assert_eq!(*g, want, "level {level} coeff {k}: value {value}");
                    assert!(level > 0 || g.is_some(), "level 0: every value is small");
                    somes += g.is_some() as usize;
                }
                if std::ptr::eq(p, &lifted) && level > 0 {
                    // The first half is small (except the two just outside q_0's range), the
                    // second half (shifted by 2^40) is not.
                    assert_eq!(somes, n / 2 - 2, "level {level}: small values");
                }
            }
        }
    }

    /// Random shapes' inputs and coefficients for the linear combination tests.
    fn combination_case(
        be: &CpuBackend,
        shape: Shape,
        k: usize,
        outputs: usize,
        seed: u64,
    ) -> (Vec<RnsPoly>, Vec<u64>) {
        let ring = be.ring();
        let inputs: Vec<RnsPoly> = (0..k)
            .map(|i| {
                be.sample_uniform(&Seed([seed as u8 + i as u8; 32]), Domain::Other, 0, shape)
                    .unwrap()
            })
            .collect();
        let slots: Vec<usize> = (0..=shape.level)
            .chain(if shape.extended {
                ring.q_count()..ring.q_count() + ring.p_count()
            } else {
                0..0
            })
            .collect();
        let raw = rand_poly(seed, outputs * k * slots.len(), u64::MAX);
        let coeffs = raw
            .iter()
            .enumerate()
            .map(|(idx, &r)| r % ring.modulus(slots[idx % slots.len()]).value())
            .collect();
        (inputs, coeffs)
    }

    // out_j = Σ_i c_ji·ct_i against the sum computed limb by limb in 128-bit integers, and the
    // CPU's one-pass body against the default body, bit for bit (inactive slots included).
    #[test]
    fn linear_combination_matches_plaintext_and_default() {
        let ring = ring();
        let be = CpuBackend::new(ring.clone());
        for (shape, k, outputs) in [
            (
                Shape {
                    components: 2,
                    level: 4,
                    extended: false,
                },
                3,
                2,
            ),
            (
                Shape {
                    components: 2,
                    level: 1,
                    extended: false,
                },
                1,
                3,
            ),
            (
                Shape {
                    components: 3,
                    level: 2,
                    extended: true,
                },
                4,
                1,
            ),
            (
                Shape {
                    components: 1,
                    level: 0,
                    extended: false,
                },
                2,
                0,
            ),
        ] {
            let (inputs, coeffs) = combination_case(&be, shape, k, outputs, 11 + k as u64);
            let refs: Vec<&RnsPoly> = inputs.iter().collect();
            let got = be.linear_combination(&refs, &coeffs, outputs).unwrap();
            let default = linear_combination_default(&be, &refs, &coeffs, outputs).unwrap();
            assert_eq!(got, default, "shape {shape:?}");
            assert_eq!(got.len(), outputs);
            let slots: Vec<usize> = inputs[0].active_slots().collect();
            let a = slots.len();
            for (j, out) in got.iter().enumerate() {
                assert_eq!(out.shape(), shape);
                for c in 0..shape.components {
                    for (si, &s) in slots.iter().enumerate() {
                        let q = ring.modulus(s).value() as u128;
                        for x in 0..ring.n() {
                            let want = (0..k).fold(0u128, |acc, i| {
                                let w = coeffs[(j * k + i) * a + si] as u128;
                                (acc + w * inputs[i].limb(c, s)[x] as u128) % q
                            });
                            assert_eq!(out.limb(c, s)[x] as u128, want, "out {j} c {c} s {s}");
                        }
                    }
                }
                for s in (0..out.slots_per_component()).filter(|&s| !out.is_active(s)) {
                    assert!((0..shape.components).all(|c| out.limb(c, s).iter().all(|&v| v == 0)));
                }
            }
        }
    }

    /// The CPU's one-pass `combine_leading_assign` against the default body and against
    /// the residues combined one by one: only `b`'s components of `a` change.
    #[test]
    fn combine_leading_matches_default_and_residues() {
        let ring = ring();
        let be = CpuBackend::new(ring.clone());
        let shape = |components, level| Shape {
            components,
            level,
            extended: false,
        };
        let a = be
            .sample_uniform(&Seed([3; 32]), Domain::Error, 0, shape(3, 2))
            .unwrap();
        let b = be
            .sample_uniform(&Seed([4; 32]), Domain::Error, 1, shape(2, 2))
            .unwrap();
        for subtract in [false, true] {
            let mut fast = a.clone();
            be.combine_leading_assign(&mut fast, &b, subtract).unwrap();
            let mut slow = a.clone();
            combine_leading_default(&be, &mut slow, &b, subtract).unwrap();
            assert_eq!(fast, slow);
            for c in 0..3 {
                for s in 0..=2 {
                    let m = ring.modulus(s);
                    for ((&x, &y), &z) in a
                        .limb(c, s)
                        .iter()
                        .zip(b.limb(c.min(1), s))
                        .zip(fast.limb(c, s))
                    {
                        let want = match (c < 2, subtract) {
                            (false, _) => x,
                            (true, false) => m.add(x, y),
                            (true, true) => m.sub(x, y),
                        };
                        assert_eq!(z, want);
                    }
                }
            }
        }
        let mut small = b.clone();
        assert!(matches!(
            be.combine_leading_assign(&mut small, &a, false),
            Err(crate::Error::ShapeMismatch { .. })
        ));
    }

    #[test]
    fn linear_combination_rejects_bad_arguments() {
        let ring = ring();
        let be = CpuBackend::new(ring.clone());
        let shape = Shape {
            components: 2,
            level: 2,
            extended: false,
        };
        let (inputs, coeffs) = combination_case(&be, shape, 2, 1, 5);
        let refs: Vec<&RnsPoly> = inputs.iter().collect();
        let bad = |r: Result<Vec<RnsPoly>>| matches!(r, Err(crate::Error::ShapeMismatch { .. }));
        // No input; too few coefficients; a coefficient equal to its limb's prime.
        assert!(bad(be.linear_combination(&[], &[], 1)));
        assert!(bad(be.linear_combination(&refs, &coeffs[1..], 1)));
        let mut big = coeffs.clone();
        big[4] = ring.modulus(1).value();
        assert!(bad(be.linear_combination(&refs, &big, 1)));
        assert!(bad(linear_combination_default(&be, &refs, &big, 1)));
        // Inputs at different levels.
        let mut low = inputs[1].clone();
        low.set_level(1).unwrap();
        assert!(bad(be.linear_combination(&[&inputs[0], &low], &coeffs, 1)));
    }
}
