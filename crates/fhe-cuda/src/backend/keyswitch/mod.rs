//! Key switching on the device: `mod_up` (inverse NTT, conversions, forward NTT, with the
//! conversion of small digits fused into the first forward pass), the key product (fused with
//! mod_up's last forward pass where it applies), `mod_down` (started on the side stream while
//! the key product runs, its last NTT pass fused with the last step) and hoisted rotations.
//!
//! This module holds the entry points that chain the steps (relinearization, hoisted rotations)
//! and the launch choices they share; [`mod_up`] raises a component to the digits,
//! [`key_product`] multiplies the digits by a switching key (fused with mod_up's last pass),
//! [`mod_down`] brings the accumulator back to Q.

use super::*;

mod key_product;
mod mod_down;
mod mod_up;

impl CudaBackend {
    /// The key products and mod_downs of hoisted rotations of `c` by `keys` (digits `ext` in NTT
    /// form; `acc` a scratch accumulator of their shape): `(σ_g(c_0), 0) + mod_down(acc_g)`, the
    /// automorphism folded into mod_down's last step. With several keys and the side stream on,
    /// key product `j + 1` runs on the side stream into a second accumulator while mod_down `j`
    /// runs on the main stream: the product is bound by memory traffic, mod_down by latency and
    /// integer multiplies. Each side-stream product is forked after the main stream's work so
    /// far (so after the mod_down that last read its accumulator) and joined before the next
    /// mod_down.
    pub(super) fn hoisted_rotations(
        &self,
        c: &DevicePoly,
        ext: &DevicePoly,
        acc: ScratchPoly<'_>,
        keys: &[(u64, &DevicePoly)],
        t: u64,
    ) -> Result<Vec<DevicePoly>> {
        let level = c.shape.level;
        self.check(ext)?;
        for &(_, key) in keys {
            self.check_key(key, ext.shape.components, level)?;
        }
        let overlap = keys.len() > 1 && side::overlap_enabled();
        let mut accs = vec![acc];
        if overlap {
            accs.push(self.scratch(Self::acc_shape(ext))?);
            // Galois maps are uploaded on the main stream at first use: before any fork.
            for &(g, _) in keys {
                self.galois_map(g)?;
            }
        }
        let n_acc = accs.len();
        let (cx_main, cx_side) = (self.cx(), self.cx_side());
        if overlap {
            let (g, key) = keys[0];
            self.key_product_impl(&cx_main, ext, key, Some(g), &mut accs[0], true)?;
        }
        let mut outs = Vec::with_capacity(keys.len());
        for (j, &(g, key)) in keys.iter().enumerate() {
            let cur = j % n_acc;
            let forked = match keys.get(j + 1).filter(|_| overlap) {
                Some(&(g_next, key_next)) => {
                    let f = self.inner.side.fork(self.s())?;
                    let next = &mut accs[(j + 1) % n_acc];
                    self.key_product_impl(&cx_side, ext, key_next, Some(g_next), next, true)?;
                    Some(f)
                }
                None => None,
            };
            if !overlap {
                self.key_product_impl(&cx_main, ext, key, Some(g), &mut accs[cur], true)?;
            }
            let mut out = self.alloc_zero_inactive(Shape {
                components: 2,
                level,
                extended: false,
            })?;
            self.mod_down_any(
                &accs[cur],
                &mut out,
                false,
                Some((c, g)),
                t,
                None,
                Addend::Ntt,
            )?;
            if let Some(f) = forked {
                f.join()?;
            }
            outs.push(out);
        }
        Ok(outs)
    }

    /// Relinearization of `c` (`Backend::relinearize_mod_t`); with `coeffs`, `c_2` is in
    /// coefficient form (BFV's product before its NTT) and mod_up starts from `coeffs`, that
    /// coefficient form prescaled ([`CudaBackend::mod_up_prescale`]), instead of an inverse NTT;
    /// `addend` says how `c_0`, `c_1` come in ([`Addend`]).
    pub(super) fn relinearize_from(
        &self,
        mut c: DevicePoly,
        relin_key: &DevicePoly,
        rescale: bool,
        t: u64,
        coeffs: Option<ScratchPoly<'_>>,
        addend: Addend<'_>,
    ) -> Result<DevicePoly> {
        let product = addend.product();
        // The default body, with the accumulator written (not zeroed, then accumulated); the
        // digits and the accumulator are scratch buffers, alive until mod_down is enqueued.
        let mut ext = self.scratch(self.mod_up_shape(&c, 2)?)?;
        let mut acc = self.scratch(Self::acc_shape(&ext))?;
        // mod_down starts on the side stream (BGV's modulus switch included).
        let top = rescale.then_some(c.shape.level);
        let pending = self.mod_up_and_product(
            &c, 2, relin_key, None, &mut ext, &mut acc, top, coeffs, product,
        )?;
        self.truncate_components(&mut c, 2)?;
        self.mod_down_any(&acc, &mut c, rescale, None, t, pending, addend)?;
        Ok(c)
    }

    /// The device's launch choices ([`crate::tuning`]).
    fn tuning(&self) -> &crate::Tuning {
        self.inner.device.tuning()
    }

    /// Whether mod_down (at any level; with the rescale when `rescale`) converts its special
    /// part as its first forward pass loads it (exact rows of `TableLayout::mod_down_row0`,
    /// after an inverse NTT with prescaled constants): that pass runs before the join
    /// (`ModDownPlan::early_first`), without the rescale, for 2..=4 special primes, where the
    /// converted loads apply (`ntt::convert_on_load`). Where it holds, an
    /// [`Addend::Coefficients`] output can be added through the conversion.
    pub(super) fn mod_down_converts_on_load(&self, rescale: bool) -> bool {
        let cx = self.cx();
        !rescale
            && kernels::moddown_finish::finish_fusable(&cx)
            && self.tuning().moddown_early_first(self.inner.ring.p_count())
            && self.tuning().moddown_convert_loads(self.inner.ring.n())
            && self.inner.layout.mod_down_row0.is_some()
            && kernels::ntt::convert_on_load(&cx)
    }

    /// Whether mod_down (without the rescale, `t = 1`) can add an output in coefficient form
    /// through its first forward pass ([`Addend::Coefficients`]): where it converts its special
    /// part on load ([`CudaBackend::mod_down_converts_on_load`]), or lifts its one special
    /// prime on load before the join.
    pub(super) fn mod_down_adds_coefficients(&self) -> bool {
        let cx = self.cx();
        let p_count = self.inner.ring.p_count();
        self.mod_down_converts_on_load(false)
            || (p_count == 1
                && kernels::moddown_finish::finish_fusable(&cx)
                && self.tuning().moddown_early_first(p_count)
                && kernels::ntt::lift_on_load(&cx))
    }

    /// Whether [`CudaBackend::mul_relin_mod_t`] adds the product's first two components in the
    /// key product ([`Product`]): the fused key product and mod_down's fused finish apply, and
    /// it pays on this ring ([`crate::Tuning::product_in_key_product`]).
    pub(super) fn product_in_key_product(&self) -> bool {
        let cx = self.cx();
        let r = &self.inner.ring;
        self.tuning().product_in_key_product(r.n(), r.p_count())
            && kernels::keyprod::key_product_fusable(&cx)
            && kernels::moddown_finish::finish_fusable(&cx)
    }

    /// Whether [`CudaBackend::mul_relin_mod_t`], where the key product adds `c_0`, `c_1` and
    /// without the rescale, forms the product's `c_2` in mod_up's first inverse pass
    /// ([`Product::c2_on_load`]) instead of a tensor launch before it: where that pass forms
    /// tensor products as it loads ([`kernels::tensor::tensor_on_load`]) and a second pass takes
    /// the prescaled constants.
    pub(super) fn c2_on_load(&self) -> bool {
        let cx = self.cx();
        kernels::tensor::tensor_on_load(&cx) && kernels::ntt::two_passes(&cx)
    }
}
