//! The key product `acc = Σ_j σ_g(ext_j)·key_{2j+c}`: on its own, or fused with mod_up's last
//! forward pass, with the rows mod_down starts from handed back to launch on the side stream.

use super::*;

impl CudaBackend {
    /// `key_product` without the shape checks, on `cx`'s stream: `acc (+)= Σ_j
    /// σ_g(ext_j)·key_{2j+c}`, assigning instead of accumulating when `assign`.
    pub(in crate::backend) fn key_product_impl(
        &self,
        cx: &Ctx,
        ext: &DevicePoly,
        key: &DevicePoly,
        galois: Option<u64>,
        acc: &mut DevicePoly,
        assign: bool,
    ) -> Result<()> {
        let digits = ext.shape.components;
        let map = galois.map(|g| self.galois_map(g)).transpose()?;
        let mp = map.as_ref().map_or(0, |m| m.device_ptr(self.s()).0);
        let la = acc.limbs(self.s()).components(0, 1);
        kernels::keyswitch::key_product(
            cx,
            la,
            ext.ptr(self.s()),
            ext.slots_per_component() as u32,
            key.ptr(self.s()),
            key.slots_per_component() as u32,
            digits as u32,
            mp,
            assign,
        )?;
        Ok(())
    }

    /// A single key switch's `mod_up` and key product in one: `acc = Σ_j σ_g(ext_j)·key_{2j+c}`
    /// for the digits of `mod_up(c, component)`, with the last NTT pass of the converted limbs
    /// fused with the product (`ntt::forward_key_product`): the NTT-form digits are not stored
    /// and the digits' own limbs are read from `c`. `ext` (of `mod_up_shape`) holds the
    /// converted limbs between the passes. The caller checks `ntt::key_product_fusable` (else
    /// it runs `mod_up_into` and `key_acc`).
    ///
    /// With [`Rows::All`] the whole product is enqueued (returns `None`). With
    /// [`Rows::ForModDown`], only the first pass is, and the rows come back (the special-prime
    /// rows, and row `rescale_top` if given, apart) for [`CudaBackend::mod_down_any`] to
    /// launch: those on the side stream, the others on the main.
    #[allow(clippy::too_many_arguments)]
    fn mod_up_key_product<'a>(
        &'a self,
        c: &DevicePoly,
        component: usize,
        key: &DevicePoly,
        galois: Option<u64>,
        ext: &mut DevicePoly,
        acc: &mut DevicePoly,
        plan: Rows,
        coeffs: Option<ScratchPoly<'a>>,
        product: Option<Product<'_>>,
    ) -> Result<Option<PendingRows<'a>>> {
        let cx = self.cx();
        let digits = ext.shape.components;
        self.check_key(key, digits, c.shape.level)?;
        let map = galois.map(|g| self.galois_map(g)).transpose()?;
        // With `coeffs`, the component itself is in coefficient form: the digits' own limbs go
        // through the same passes as the raised ones (first pass from the component, last pass
        // in the key product), so the key product reads no limb of the input.
        let input_in_coefficients = coeffs.is_some();
        let c2_from = product.filter(|p| p.c2_on_load);
        let (mut fwd, workspace) =
            self.mod_up_convert(c, component, ext, false, coeffs, c2_from)?;
        let ups = &self.inner.layout.mod_up[c.shape.level];
        let n = self.inner.ring.n() as u64;
        let cspc = c.slots_per_component() as u64;
        if input_in_coefficients {
            let (cp, ep) = (c.ptr(self.s()), ext.ptr(self.s()));
            let espc = ext.slots_per_component() as u64;
            for (j, up) in ups.iter().enumerate() {
                fwd.extend(up.digit.clone().map(|s| kernels::ntt::Limb {
                    src: cp + 8 * (component as u64 * cspc + s as u64) * n,
                    dst: ep + 8 * (j as u64 * espc + s as u64) * n,
                    slot: s as u32,
                    load: Load::Plain,
                }));
            }
        }
        let acc_set = acc.limbs(self.s()).components(0, 1);
        let rows: Vec<(u32, Option<u32>)> = acc_set
            .limbs()
            .iter()
            .map(|l| {
                let own = ups
                    .iter()
                    .position(|up| up.digit.contains(&(l.slot as usize)))
                    .filter(|_| !input_in_coefficients);
                (l.slot, own.map(|j| j as u32))
            })
            .collect();
        let args = kernels::keyprod::KeyProdArgs {
            ext: ext.ptr(self.s()),
            key: key.ptr(self.s()),
            input: c.ptr(self.s()) + 8 * component as u64 * cspc * n,
            acc: acc.ptr(self.s()),
            map: map.as_ref().map_or(0, |m| m.device_ptr(self.s()).0),
            ext_spc: ext.slots_per_component() as u32,
            key_spc: key.slots_per_component() as u32,
            acc_spc: acc.slots_per_component() as u32,
            digits: digits as u32,
            prod_a: product.map_or(0, |p| p.a.ptr(self.s())),
            prod_b: product.map_or(0, |p| p.b.ptr(self.s())),
            p_mod_q: tables::p_mod_q(&self.inner.layout).map_or(0, |o| cx.t(o)),
            prod_a_spc: product.map_or(0, |p| p.a.slots_per_component() as u32),
            prod_b_spc: product.map_or(0, |p| p.b.slots_per_component() as u32),
            prod_slots: product.map_or(0, |p| p.slots),
            pad: 0,
        };
        Ok(match plan {
            Rows::All => {
                kernels::keyprod::forward_key_product(&cx, &fwd, &rows, args)?;
                None
            }
            Rows::ForModDown { rescale_top: top } => {
                let q_cap = self.inner.ring.q_count() as u32;
                let is_early = |slot: u32| slot >= q_cap || Some(slot as usize) == top;
                let (early, late): (Vec<_>, Vec<_>) =
                    rows.iter().partition(|(slot, _)| is_early(*slot));
                // The special-prime rows and the top one (a Q row of the set, if any).
                let top = top.filter(|&t| t < acc_set.q_cnt as usize);
                let early_set = LimbSet {
                    q_lo: top.unwrap_or(0) as u32,
                    q_cnt: top.is_some() as u32,
                    ..acc_set
                };
                // The first pass only; the rows are launched by mod_down_any. Split
                // (`Tuning::split_first`; not with the rescale's top row among the early ones, which
                // makes their part larger and measured slower), the first pass of the early
                // rows' limbs goes first, so that the side stream's chain, which starts from
                // them, is forked before the main stream's larger part of the pass.
                let split = self.tuning().split_first(self.inner.ring.n()) && top.is_none();
                let (first, late_first): (Vec<_>, Vec<_>) = match split {
                    true => fwd.iter().partition(|l| is_early(l.slot)),
                    false => (fwd, Vec::new()),
                };
                kernels::keyprod::forward_key_product(&cx, &first, &[], args)?;
                Some(PendingRows {
                    early,
                    early_set,
                    late,
                    late_first,
                    args,
                    _workspace: workspace,
                })
            }
        })
    }

    /// The accumulator shape for `ext` (2 components over `Q_l·P`).
    pub(in crate::backend) fn acc_shape(ext: &DevicePoly) -> Shape {
        Shape {
            components: 2,
            level: ext.shape.level,
            extended: true,
        }
    }

    /// `acc = Σ_j σ_g(ext_j)·key_{2j+c}` (written, not accumulated; `acc` of
    /// [`CudaBackend::acc_shape`], its inactive slots untouched).
    fn key_acc(
        &self,
        ext: &DevicePoly,
        key: &DevicePoly,
        galois: Option<u64>,
        acc: &mut DevicePoly,
    ) -> Result<()> {
        self.check(ext)?;
        if !ext.shape.extended {
            return Err(shape_err("key_product: the digits are not extended"));
        }
        self.check_key(key, ext.shape.components, ext.shape.level)?;
        self.key_product_impl(&self.cx(), ext, key, galois, acc, true)
    }

    /// A switching key for `digits` digits at `level`: extended, two components per digit,
    /// at least that level.
    pub(super) fn check_key(&self, key: &DevicePoly, digits: usize, level: usize) -> Result<()> {
        self.check(key)?;
        if !key.shape.extended || key.shape.components < 2 * digits || key.shape.level < level {
            return Err(shape_err("key_product: digits or key have the wrong shape"));
        }
        Ok(())
    }

    /// `acc = Σ_j σ_g(ext_j)·key_{2j+c}` for one key switch of `c`'s `component`: the fused
    /// last NTT pass and product where it applies, else `mod_up_into` then `key_acc`.
    /// `rescale_top` is the level the `mod_down` that follows rescales from, if it does; where
    /// the side stream is on and the fused product applies, returns the rows left to launch
    /// ([`CudaBackend::mod_up_key_product`]), which the caller passes to
    /// [`CudaBackend::mod_down_any`].
    #[allow(clippy::too_many_arguments)]
    pub(in crate::backend) fn mod_up_and_product<'a>(
        &'a self,
        c: &DevicePoly,
        component: usize,
        key: &DevicePoly,
        galois: Option<u64>,
        ext: &mut DevicePoly,
        acc: &mut DevicePoly,
        rescale_top: Option<usize>,
        coeffs: Option<ScratchPoly<'a>>,
        product: Option<Product<'_>>,
    ) -> Result<Option<PendingRows<'a>>> {
        // On a ring of one NTT pass the fused product's coefficient-form input (`coeffs`, whose
        // own limbs would go through a first pass) takes the unfused path too.
        let cx = self.cx();
        let one_pass_coeffs = coeffs.is_some() && !kernels::ntt::two_passes(&cx);
        if !kernels::keyprod::key_product_fusable(&cx) || one_pass_coeffs {
            if product.is_some() {
                return Err(shape_err(
                    "mod_up: the product's components need the fused key product",
                ));
            }
            if coeffs.is_some() {
                // A coefficient-form component (in a buffer the caller owns) goes to NTT form in
                // place and through the NTT-form mod_up: the digits' own limbs are copied from
                // the NTT form (these rings are small).
                let l = c.limbs(self.s()).components(component as u32, 1);
                kernels::ntt::forward(&cx, Self::q_only(l, 0, c.shape.level as u32 + 1))?;
            }
            self.mod_up_into(c, component, ext)?;
            self.key_acc(ext, key, galois, acc)?;
            return Ok(None);
        }
        let rows = Rows::for_mod_down(rescale_top);
        self.mod_up_key_product(c, component, key, galois, ext, acc, rows, coeffs, product)
    }
}
