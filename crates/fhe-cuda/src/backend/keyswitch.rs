//! Key switching on the device: `mod_up` (inverse NTT, conversions, forward NTT, with the
//! conversion of small digits fused into the first forward pass), the key product (fused with
//! mod_up's last forward pass where it applies), `mod_down` (started on the side stream while
//! the key product runs, its last NTT pass fused with the last step) and hoisted rotations.

use super::*;

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

    /// `key_product` without the shape checks, on `cx`'s stream: `acc (+)= Σ_j
    /// σ_g(ext_j)·key_{2j+c}`, assigning instead of accumulating when `assign`.
    pub(super) fn key_product_impl(
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
    /// (`early_first_on`), without the rescale, for 2..=4 special primes, where the converted
    /// loads apply (`ntt::convert_on_load`). Where it holds, an [`Addend::Coefficients`]
    /// output can be added through the conversion.
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

    /// The shape of `mod_up(c, component)`'s output (shapes checked).
    pub(super) fn mod_up_shape(&self, c: &DevicePoly, component: usize) -> Result<Shape> {
        self.check(c)?;
        if component >= c.shape.components || c.shape.extended {
            return Err(shape_err("mod_up needs a component of a buffer over Q"));
        }
        let level = c.shape.level;
        Ok(Shape {
            components: self.inner.layout.mod_up[level].len(),
            level,
            extended: true,
        })
    }

    /// `mod_up` into `ext`, of shape `mod_up_shape(c, component)`: every active limb of `ext` is
    /// written (digit limbs copied, the others converted), the inactive ones are not touched.
    pub(super) fn mod_up_into(
        &self,
        c: &DevicePoly,
        component: usize,
        ext: &mut DevicePoly,
    ) -> Result<()> {
        let (fwd, _tmp) = self.mod_up_convert(c, component, ext, true, None, None)?;
        kernels::ntt::forward_list(&self.cx(), &fwd)?;
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

    /// `mod_up`'s inverse NTT and conversions into `ext`, the digits' own limbs copied when
    /// `copy_digits`; returns the limbs for the forward NTT (converted, coefficient form, in
    /// place; or, for a one-prime digit where the NTT lifts on load, read from the inverse NTT's
    /// output in the returned workspace, which the caller keeps until the NTT is enqueued).
    ///
    /// With `coeffs`, a workspace of `mod_up`'s coefficient form that already holds it
    /// ([`CudaBackend::mod_up_prescale`]: BFV's product hands over its third component before
    /// its NTT), the inverse NTT is skipped. With `c2_from` (multiply + relinearize,
    /// [`Product::c2_on_load`]) the component is the product's `c_2 = a_1·b_1`, not yet
    /// written: the inverse NTT's first pass forms it as it loads the operands and also stores
    /// it into `c`'s limbs, where the key product's own digits read it.
    fn mod_up_convert<'a>(
        &'a self,
        c: &DevicePoly,
        component: usize,
        ext: &mut DevicePoly,
        copy_digits: bool,
        coeffs: Option<ScratchPoly<'a>>,
        c2_from: Option<Product<'_>>,
    ) -> Result<(Vec<kernels::ntt::Limb>, ScratchPoly<'a>)> {
        let level = c.shape.level;
        let ups = &self.inner.layout.mod_up[level];
        let cx = self.cx();
        // A one-prime digit's conversion is the centred lift of its residues, and a digit of a
        // few primes (with a conversion row) is converted from the prescaled inverse NTT's
        // output: the first forward pass does either as it loads the words
        // (`ntt::lift_on_load`, `ntt::convert_on_load`), with no conversion kernel.
        let lift = kernels::ntt::lift_on_load(&cx);
        let convert = kernels::ntt::convert_on_load(&cx);
        let on_load =
            |up: &ModUpLayout| (lift && up.digit.len() == 1) || (convert && up.row0.is_some());
        // Coefficient form of the component (all active Q limbs: the digits partition them),
        // transformed out of place (unless given).
        let given = coeffs.is_some();
        let tmp = match coeffs {
            Some(t) => t,
            None => self.scratch(Self::mod_up_coeffs_shape(level))?,
        };
        let lt = tmp.limbs(self.s());
        let lc = c.like(self.s(), &lt).components(component as u32, 1);
        let n = self.inner.ring.n() as u64;
        let prescaled = convert && ups.iter().any(|up| up.row0.is_some());
        if let (false, Some(p)) = (given, c2_from) {
            // a_1·b_1 of slot s, loaded from the operands (`src` at a_0's limb of the slot,
            // which a component-2 load does not read) and stored at c_2's limb too: both
            // offsets are the same for every slot (the buffers' slots are n words apart).
            let la = p.a.like(self.s(), &lt).components(0, 1);
            let lb = p.b.like(self.s(), &lt).components(0, 1);
            let d = kernels::tensor::TensorDeltas::operands(&la, &lb);
            let at = kernels::tensor::TensorDeltas {
                delta: [d, d],
                split: u32::MAX,
            };
            let copy =
                kernels::word_offset(la.ptr, lc.ptr) + component as i64 * lc.spc as i64 * n as i64;
            let inv: Vec<kernels::ntt::Limb> = la
                .limb_iter()
                .zip(lt.limb_iter())
                .map(|(x, y)| kernels::ntt::Limb {
                    dst: y.dst,
                    load: Load::Tensor(2),
                    ..x
                })
                .collect();
            kernels::tensor::inverse_tensor(&cx, &inv, at, prescaled.then_some(level), copy)?;
        } else if !given {
            let inv: Vec<kernels::ntt::Limb> = lc
                .limb_iter()
                .zip(lt.limb_iter())
                .map(|(x, y)| kernels::ntt::Limb { dst: y.dst, ..x })
                .collect();
            if prescaled {
                kernels::ntt::inverse_list_prescaled(&cx, &inv, level)?;
            } else {
                kernels::ntt::inverse_list(&cx, &inv)?;
            }
        }
        let (tp, ep, cptr) = (tmp.ptr(self.s()), ext.ptr(self.s()), c.ptr(self.s()));
        let spc = ext.slots_per_component() as u64;
        let le = ext.limbs(self.s());
        let cspc = c.slots_per_component() as u64;
        // Runs of consecutive digits of one size (and table layout) convert in one launch.
        let mut j0 = 0;
        while j0 < ups.len() {
            let first = &ups[j0];
            let mut run = 1;
            let mut table = 0;
            while let Some(next) = ups.get(j0 + run) {
                match ConvStrides::table_stride(&ups[j0 + run - 1].conv, &next.conv) {
                    Some(t)
                        if next.digit.len() == first.digit.len()
                            && on_load(next) == on_load(first)
                            && (run == 1 || t == table) =>
                    {
                        table = t;
                        run += 1;
                    }
                    _ => break,
                }
            }
            let d = &first.digit;
            let (lo, cnt) = (d.start as u64, d.len() as u64);
            if on_load(first) {
                j0 += run;
                continue;
            }
            // Digit limbs: the input's NTT-form limbs themselves (copied by the conversion).
            let copy = if copy_digits {
                (
                    cptr + 8 * (component as u64 * cspc + lo) * n,
                    ep + 8 * (j0 as u64 * spc + lo) * n,
                    cnt as u32,
                )
            } else {
                (0, 0, 0)
            };
            let strides = ConvStrides {
                input: cnt * n,
                out: spc * n,
                cp_src: cnt * n,
                cp_dst: (spc + cnt) * n,
                top: 0,
                table,
                from_slot: cnt,
            };
            kernels::keyswitch::convert(
                &cx,
                &first.conv,
                tp + 8 * lo * n,
                ep + 8 * j0 as u64 * spc * n,
                copy,
                None,
                (run as u32, strides),
            )?;
            j0 += run;
        }
        // The converted limbs go back to NTT form. (Built without temporaries: the GPU may be
        // waiting for this list, from an idle start.)
        let raised = (level + 1 + le.p_cnt as usize) * ups.len();
        let mut fwd = Vec::with_capacity(raised + if copy_digits { level + 1 } else { 0 });
        // Digits converted on load whose own limbs are copied: (digit, first slot, primes).
        let mut own_copies: Vec<(usize, usize, usize)> = Vec::new();
        for (j, up) in ups.iter().enumerate() {
            let (lo, cnt) = (up.digit.start as u32, up.digit.len() as u32);
            let comp = le.components(j as u32, 1);
            let above = LimbSet {
                q_lo: lo + cnt,
                q_cnt: level as u32 + 1 - lo - cnt,
                ..comp
            };
            let targets = Self::q_only(comp, 0, lo)
                .limb_iter()
                .chain(above.limb_iter());
            let src = tp + 8 * lo as u64 * n;
            if lift && cnt == 1 {
                // Read from the digit's coefficient-form limb and lifted; its own limb, where
                // copied, is the transform of its inverse (the same canonical words).
                let own = Self::q_only(comp, lo, u32::from(copy_digits)).limb_iter();
                fwd.extend(targets.chain(own).map(|l| kernels::ntt::Limb {
                    src,
                    load: Load::Lift(lo),
                    ..l
                }));
            } else if let Some(row0) = up.row0.filter(|_| convert) {
                // Converted from the digit's prescaled coefficient-form limbs; its own limbs,
                // where wanted, are copies of the input's.
                if copy_digits {
                    own_copies.push((j, lo as usize, cnt as usize));
                }
                // The raised limbs come in the conversion's target order (the other Q slots,
                // then P); the search is only a fallback.
                for (i, l) in targets.enumerate() {
                    let slot = l.slot as usize;
                    let t = match up.targets.get(i) {
                        Some(&s) if s == slot => Some(i),
                        _ => up.targets.iter().position(|&s| s == slot),
                    };
                    let t = t.ok_or_else(|| shape_err("mod_up: a raised limb is no target"))?;
                    fwd.push(kernels::ntt::Limb {
                        src,
                        load: Load::Convert(row0 + t as u32),
                        ..l
                    });
                }
            } else {
                fwd.extend(targets);
            }
        }
        copy_own_limbs(&cx, lc, &le, &own_copies)?;
        Ok((fwd, tmp))
    }

    /// The accumulator shape for `ext` (2 components over `Q_l·P`).
    pub(super) fn acc_shape(ext: &DevicePoly) -> Shape {
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
    fn check_key(&self, key: &DevicePoly, digits: usize, level: usize) -> Result<()> {
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
    pub(super) fn mod_up_and_product<'a>(
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

    /// The shape of `mod_up`'s coefficient-form workspace at `level` (one component over Q).
    pub(super) fn mod_up_coeffs_shape(level: usize) -> Shape {
        Shape {
            components: 1,
            level,
            extended: false,
        }
    }

    /// Writes into `coeffs` (of [`CudaBackend::mod_up_coeffs_shape`]) what `mod_up`'s inverse
    /// NTT would, from the coefficient-form limbs `src` (slots `0..=level`, one component):
    /// `(x + h_in)·q̂^-1 mod q` on the limbs of the digits the first forward pass converts on
    /// load (`ntt::inverse_list_prescaled`'s words), `x` on the others. One elementwise launch
    /// where the inverse NTT took two passes.
    pub(super) fn mod_up_prescale(
        &self,
        src: LimbSet,
        coeffs: &ScratchPoly<'_>,
        level: usize,
    ) -> Result<()> {
        let cx = self.cx();
        let convert = kernels::ntt::convert_on_load(&cx);
        let ring = &self.inner.ring;
        let ups = &self.inner.layout.mod_up[level];
        let mut add = vec![(0u64, 0u64); level + 1];
        let mut mul: Vec<(u64, u64)> = (0..=level).map(|s| (1, ring.modulus(s).shoup(1))).collect();
        let prescaled = convert && ups.iter().any(|up| up.row0.is_some());
        if prescaled {
            for (up, t) in ups.iter().zip(ring.mod_up_tables(level)) {
                if up.row0.is_none() {
                    continue;
                }
                for (i, s) in t.digit_slots.clone().enumerate() {
                    let m = ring.modulus(s);
                    let qhi = t.converter.q_hat_inv()[i];
                    add[s] = (t.half_mod_digit[i], 0);
                    mul[s] = (qhi, m.shoup(qhi));
                }
            }
        }
        let lt = coeffs.limbs(self.s());
        ew::affine(
            &cx,
            lt,
            src,
            &ew::Scalars::new(&add)?,
            &ew::Scalars::new(&mul)?,
        )?;
        Ok(())
    }

    /// `mod_down_into` (shapes checked here).
    pub(super) fn mod_down_impl(
        &self,
        acc: &DevicePoly,
        out: &mut DevicePoly,
        rescale: bool,
    ) -> Result<()> {
        self.mod_down_any(acc, out, rescale, None, 1, None, Addend::Ntt)
    }

    /// `mod_down_into_mod_t` (shapes checked here), with the rotation's `(c, g)` folded into the
    /// last step. With `pending` (the fused key product's rows, not yet launched,
    /// [`CudaBackend::mod_up_and_product`]), the side stream ([`crate::side`]) launches the rows
    /// this step starts from and then the steps before the last NTT, while the main stream
    /// launches the other rows; the side stream is joined back before the last NTT. `addend`
    /// says how the output's `c_0`, `c_1` come in ([`Addend`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn mod_down_any(
        &self,
        acc: &DevicePoly,
        out: &mut DevicePoly,
        rescale: bool,
        rot: Option<(&DevicePoly, u64)>,
        t_mod: u64,
        pending: Option<PendingRows<'_>>,
        addend: Addend<'_>,
    ) -> Result<()> {
        self.check(acc)?;
        self.check(out)?;
        let level = out.shape.level;
        if !acc.shape.extended
            || acc.shape.components < 2
            || out.shape.components != 2
            || acc.shape.level != level
            || out.shape.extended
        {
            return Err(shape_err(
                "mod_down: accumulator over Q·P and a 2-component output at its level are needed",
            ));
        }
        let conv_layout = self
            .inner
            .layout
            .mod_down
            .get(level)
            .ok_or_else(|| shape_err("mod_down needs special primes"))?;
        if rescale && level == 0 {
            return Err(Error::InvalidLevel {
                level,
                reason: "cannot rescale a buffer at level 0 or over Q·P",
            });
        }
        let r = &self.inner.ring;
        let q_cap = r.q_count() as u32;
        let n = r.n() as u64;
        // P limbs of both components in coefficient form (inverse NTT out of place); with the
        // rescale, also the top limb of out + acc·P^-1 (slot `level` of the same buffer).
        let tmp = self.scratch(Shape {
            components: 2,
            level: 0,
            extended: true,
        })?;
        // The P part converted to q_0..q_l.
        let conv = self.scratch(Shape {
            components: 2,
            level,
            extended: false,
        })?;
        // BGV's switch: (t mod q_s, shoup) by slot for the rescale's correction (uploaded before
        // the fork, which orders the side stream after it).
        let t_table = match rescale && t_mod != 1 {
            true => Some(self.t_table(t_mod)?),
            false => None,
        };
        // BGV: the inverse NTT's constants with t^-1 folded in (also uploaded before the fork).
        let t_inverse = match t_mod != 1 {
            true => Some(self.t_inverse_consts(t_mod)?),
            false => None,
        };
        // The steps up to the conversion run on `cx`: the side stream when the key product left
        // rows to launch, forked here (after the workspace's stream-ordered allocations, so
        // that the side stream uses them after they exist; joined back on any early return);
        // the rest on the main stream.
        let plan = self.mod_down_plan(rescale, pending.is_some());
        let early_first = plan.early_first;
        let prescale = match plan.convert_on_load {
            true => self.mod_down_prescale(t_mod)?,
            false => Arc::new(None),
        };
        let lift_p = plan.lift_p;
        let coefficients = matches!(addend, Addend::Coefficients);
        if coefficients
            && ((prescale.is_none() && !(lift_p && early_first)) || t_mod != 1 || rot.is_some())
        {
            return Err(shape_err(
                "mod_down: a coefficient-form output needs converted or lifted loads before the \
                 join, t = 1 and no rotation",
            ));
        }
        // A split first pass (its main part still to launch) forks the low-priority side
        // stream, so that the side stream's latency-bound launches do not hold that part back.
        let side = match &pending {
            Some(p) if !p.late_first.is_empty() => &self.inner.side_low,
            _ => &self.inner.side,
        };
        let forked = match &pending {
            Some(_) => Some(side.fork(self.s())?),
            None => None,
        };
        let cx_main = self.cx();
        let cx = if pending.is_some() {
            self.cx_on(side)
        } else {
            self.cx()
        };
        // The main stream's rows are enqueued first, so that they launch programmatically during
        // the first pass's tail whatever the host's pace, then the side stream's chain. (Enqueued
        // after it, they were launched early or not depending on the host's pace, and a rotation
        // at PHANTOM_INT took 124 or 156 µs by that draw; enqueued first, every run measured
        // 125–127 µs: H200, PERF.md "bimodal key switch".)
        if let Some(p) = pending.as_ref().filter(|p| !p.late_first.is_empty()) {
            // The main stream's part of the first pass, where it was split off.
            kernels::keyprod::forward_key_product(&cx_main, &p.late_first, &[], p.args)?;
        }
        if let Some(p) = &pending {
            kernels::keyprod::key_product_rows(&cx_main, &p.late, p.args)?;
        }
        if let Some(p) = &pending {
            kernels::keyprod::key_product_early(&cx, &p.early, p.early_set, p.args)?;
        }
        let lt = LimbSet {
            q_cnt: 0,
            ..tmp.limbs(self.s())
        };
        let mut inv = acc.like(self.s(), &lt).limbs();
        for (x, y) in inv.iter_mut().zip(lt.limbs()) {
            x.dst = y.dst;
        }
        let top = LimbSet {
            q_lo: level as u32,
            q_cnt: 1,
            p_cnt: 0,
            ..lt
        };
        let lo = out.limbs(self.s());
        // With the rescale, the top limb w = out + acc·P^-1 (both components) joins the
        // inverse NTT: formed by its first pass as it loads (`Load::AddScaled`), or by
        // `keyswitch_mod_down_top` first where that pass cannot.
        let mut top_add = None;
        if rescale {
            let top_out = Self::q_only(lo, level as u32, 1);
            let top_acc = acc.like(self.s(), &top_out);
            if plan.top_on_load {
                let (a, o) = (top_acc.limbs(), top_out.limbs());
                let mut delta = [0i64; 2];
                for (c, ((t, a), o)) in top.limbs().iter().zip(&a).zip(&o).enumerate() {
                    delta[c] = kernels::word_offset(a.src, o.src);
                    inv.push(kernels::ntt::Limb {
                        src: a.src,
                        dst: t.dst,
                        slot: t.slot,
                        load: kernels::ntt::Load::AddScaled(c as u32),
                    });
                }
                top_add = Some(kernels::tensor::AddScaled {
                    delta,
                    consts: cx.t(cx.layout.p_inv[level]),
                });
            } else {
                kernels::keyswitch::mod_down_top(&cx, top, top_out, top_acc, level)?;
                inv.extend(top.limbs());
            }
        }
        let s_count = (r.q_count() + r.p_count()) as u64;
        // Beside the main stream's key product, the rescaling chain's inverse NTT may go without
        // programmatic launch (`Tuning::rescale_inverse_pdl`).
        let inv_guard = plan.inverse_without_pdl.then(kernels::pdl_off);
        match (prescale.as_ref(), &t_inverse) {
            // Converted loads: v_i = (t^-1·x_i + h_in)·p̂_i^-1 straight from the inverse NTT.
            (Some(pre), _) => {
                let (kp, _g) = pre.device_ptr(self.s());
                kernels::ntt::inverse_list_prescaled_at(&cx, &inv, kp, kp + 8 * 4 * s_count)?;
            }
            // BGV: the conversion input is t^-1·acc_P (mod_down_into_mod_t); with the rescale
            // the coefficient-form top limb is scaled by t^-1 too (the conversion's rescale
            // output then carries t back, `RescaleTop::t_table`): both by the inverse NTT's
            // final constants.
            (None, Some(consts)) => {
                let (kp, _g) = consts.device_ptr(self.s());
                match top_add {
                    Some(add) => kernels::tensor::inverse_adding(&cx, &inv, kp, add)?,
                    None => kernels::ntt::inverse_list_consts(&cx, &inv, kp)?,
                }
            }
            (None, None) => match top_add {
                Some(add) => {
                    let plain = cx.t(cx.layout.ntt.ntt_consts);
                    kernels::tensor::inverse_adding(&cx, &inv, plain, add)?
                }
                None => kernels::ntt::inverse_list(&cx, &inv)?,
            },
        }
        drop(inv_guard);
        let (tp, cp) = (tmp.ptr(self.s()), conv.ptr(self.s()));
        let t_tab = t_table.as_ref().map_or(0, |t| t.device_ptr(self.s()).0);
        let tspc = tmp.slots_per_component() as u64;
        let tops = top.limbs();
        let converted = prescale.is_some();
        // The converted limbs, read from the component's special limbs by the first forward pass
        // (`load` of each target slot): lifted from the one special prime, or converted from
        // 2..=4 of them (`TableLayout::mod_down_row0`).
        let special_loads = |load: &dyn Fn(u32) -> Load| -> Vec<kernels::ntt::Limb> {
            let lc = conv.limbs(self.s());
            (0..2u32)
                .flat_map(|c| {
                    let src = tp + 8 * (c as u64 * tspc + q_cap as u64) * n;
                    lc.components(c, 1)
                        .limbs()
                        .into_iter()
                        .map(move |l| kernels::ntt::Limb {
                            src,
                            load: load(l.slot),
                            ..l
                        })
                        .collect::<Vec<_>>()
                })
                .collect()
        };
        let row0 = self.inner.layout.mod_down_row0.unwrap_or_default();
        let lifted: Option<Vec<kernels::ntt::Limb>> = if converted {
            Some(special_loads(&|s| Load::ConvertExact(row0 + s)))
        } else {
            lift_p.then(|| special_loads(&|_| Load::Lift(q_cap)))
        };
        // Both components in one launch.
        let strides = ConvStrides {
            input: tspc * n,
            out: q_cap as u64 * n,
            top: if rescale {
                (tops[1].dst - tops[0].dst) / 8
            } else {
                0
            },
            ..ConvStrides::default()
        };
        // Whether the conversion also prepared the rescale (only asked for with `rescale`);
        // lifted limbs need no conversion launch.
        let fused = !lift_p
            && !converted
            && kernels::keyswitch::convert(
                &cx,
                conv_layout,
                tp + 8 * q_cap as u64 * n,
                cp,
                (0, 0, 0),
                rescale.then_some(kernels::keyswitch::RescaleTop {
                    w: tops[0].dst,
                    level,
                    t_table: t_tab,
                }),
                (2, strides),
            )?;
        if rescale && !fused {
            // z_i = conv_i·P^-1 + (rounded top limb mod q_i), where the conversion did not.
            kernels::keyswitch::mod_down_rescale_prepare(&cx, cp, q_cap, top, level, t_tab)?;
        }
        let lc = conv.limbs(self.s());
        match (&lifted, coefficients) {
            // The output's words (coefficient form, `out` laid out like `conv`) go into the
            // converted limbs as they load.
            (Some(l), true) => {
                if lo.spc != lc.spc {
                    return Err(shape_err("mod_down: output and conversion laid out unlike"));
                }
                let delta = kernels::word_offset(lc.ptr, lo.ptr);
                kernels::moddown_finish::forward_finish_first_adding(&cx, l, delta)?;
            }
            _ if early_first => {
                kernels::moddown_finish::forward_finish_first(&cx, lc, lifted.as_deref())?
            }
            _ => {}
        }
        if let (Some(_), Some(f)) = (pending, forked) {
            f.join()?;
        }
        self.mod_down_last_step(
            &plan,
            LastStep {
                rescale,
                acc,
                out,
                lo,
                lc,
                lifted: lifted.as_deref(),
                level,
                rot,
                t_mod,
                addend,
            },
        )
    }

    /// The launch plan of a mod_down (with the rescale when `rescale`; `overlapped`: its chain
    /// runs on the side stream beside the main stream's key-product rows), decided from the ring
    /// and the device's tuning table before anything is enqueued.
    fn mod_down_plan(&self, rescale: bool, overlapped: bool) -> ModDownPlan {
        let cx = self.cx();
        let r = &self.inner.ring;
        ModDownPlan {
            early_first: kernels::moddown_finish::finish_fusable(&cx)
                && self.tuning().moddown_early_first(r.p_count()),
            convert_on_load: self.mod_down_converts_on_load(rescale),
            lift_p: !rescale && r.p_count() == 1 && kernels::ntt::lift_on_load(&cx),
            top_on_load: kernels::tensor::add_on_load(&cx),
            inverse_without_pdl: rescale && overlapped && !self.tuning().rescale_inverse_pdl(r.n()),
        }
    }

    /// mod_down's last step, on the main stream after the join: the forward NTT of the converted
    /// limbs `step.lc` (or of `step.lifted`, or only its last pass where the first ran early)
    /// fused with the output's update where the register-blocked passes cover the ring, else an
    /// NTT and a finish kernel; with the rescale, the rescaled output at `level - 1`.
    fn mod_down_last_step(&self, plan: &ModDownPlan, step: LastStep<'_, '_>) -> Result<()> {
        let LastStep {
            rescale,
            acc,
            out,
            lo,
            lc,
            lifted,
            level,
            rot,
            t_mod,
            addend,
        } = step;
        let early_first = plan.early_first;
        let cx = self.cx();
        let la = acc.like(self.s(), &lo);
        // The NTT of the converted limbs and the last step run fused where the register-blocked
        // passes cover the ring (`ntt::forward_finish`), else as an NTT and a finish kernel.
        let mut args = kernels::moddown_finish::FinishArgs {
            out: lo,
            acc: la,
            conv: lc,
            src: lo,
            map: 0,
            pinv: cx.t(cx.layout.p_inv[level]),
            rs: 0,
            level: level as u32,
            mode: kernels::moddown_finish::Finish::Plain,
            use_t: 0,
            prod_slots: match addend {
                Addend::Ntt => 0,
                Addend::Product(p) => p.slots,
                // Added through the conversion: no slot of the output is read.
                Addend::Coefficients => level as u32 + 1,
            },
            tp: ew::Scalars::new(&[])?,
        };
        if rescale {
            // z_i = conv_i·P^-1 + (rounded top limb mod q_i) (prepared above), one NTT, then
            // out_i = (out_i + acc_i·P^-1 - z_i)·q_l^-1. Slot l keeps conv_l: the dropped limb
            // receives the plain mod_down result.
            args.mode = kernels::moddown_finish::Finish::Rescale;
            args.rs = cx.t(cx.layout.rescale[level]);
            if early_first {
                kernels::moddown_finish::forward_finish_last(&cx, &args)?;
            } else if !kernels::moddown_finish::forward_finish(&cx, &args, None)? {
                kernels::ntt::forward(&cx, lc)?;
                kernels::keyswitch::mod_down_rescale_finish(&cx, lo, la, lc, level)?;
            }
            out.shape.level = level - 1;
            return Ok(());
        }
        // BGV: the final multiplier of the converted part carries t.
        let tp = if t_mod != 1 {
            let pairs = self.level_times_t(t_mod, level, LevelConst::SpecialInverse)?;
            Some(ew::Scalars::new(&pairs)?)
        } else {
            None
        };
        (args.tp, args.use_t) = kernels::keyswitch::t_args(tp.as_ref())?;
        let map = match rot {
            Some((c, g)) => {
                self.check(c)?;
                check_covers(out, c, "rotate")?;
                args.mode = kernels::moddown_finish::Finish::Rot;
                args.src = c.like(self.s(), &lo).components(0, 1);
                Some(self.galois_map(g)?)
            }
            None => None,
        };
        let map_ptr = map.as_ref().map(|m| m.device_ptr(self.s()));
        args.map = map_ptr.as_ref().map_or(0, |(p, _)| *p);
        if early_first {
            kernels::moddown_finish::forward_finish_last(&cx, &args)?;
        } else if !kernels::moddown_finish::forward_finish(&cx, &args, lifted)? {
            match &lifted {
                Some(l) => kernels::ntt::forward_list(&cx, l)?,
                None => kernels::ntt::forward(&cx, lc)?,
            }
            if rot.is_some() {
                kernels::keyswitch::mod_down_finish_rot(
                    &cx,
                    lo,
                    la,
                    lc,
                    args.src,
                    args.map,
                    level,
                    tp.as_ref(),
                )?;
            } else {
                kernels::keyswitch::mod_down_finish(&cx, lo, la, lc, level, tp.as_ref())?;
            }
        }
        Ok(())
    }
}

/// The launch plan of one mod_down ([`CudaBackend::mod_down_plan`]).
#[derive(Clone, Copy, Debug)]
struct ModDownPlan {
    /// The first forward pass of the converted limbs runs before the join, on the side
    /// stream's chain (it needs only the special part and, with the rescale, the top limb):
    /// where the fused finish applies and [`crate::Tuning::moddown_early_first`].
    early_first: bool,
    /// Without the rescale, for 2..=4 special primes, the special part is converted as the
    /// first forward pass loads it (exact rows of `TableLayout::mod_down_row0`, after an
    /// inverse NTT with prescaled constants) instead of by the conversion kernel
    /// ([`CudaBackend::mod_down_converts_on_load`]).
    convert_on_load: bool,
    /// With one special prime and no rescale, the conversion is the centred lift of the P limb,
    /// done by the first forward pass as it loads it (`ntt::lift_on_load`).
    lift_p: bool,
    /// With the rescale, the top limb `out + acc·P^-1` is formed as the inverse NTT loads it
    /// (`tensor::add_on_load`), else by `keyswitch_mod_down_top` first.
    top_on_load: bool,
    /// The rescaling chain's inverse NTT beside the main stream's key product is launched
    /// without programmatic dependent launch ([`crate::Tuning::rescale_inverse_pdl`]).
    inverse_without_pdl: bool,
}

/// The operands of [`CudaBackend::mod_down_last_step`].
struct LastStep<'a, 'b> {
    /// With the rescale (the output drops its top limb).
    rescale: bool,
    acc: &'a DevicePoly,
    out: &'a mut DevicePoly,
    /// The output's limbs.
    lo: LimbSet,
    /// The converted limbs.
    lc: LimbSet,
    /// The converted limbs' lifted or converted loads, where the first pass forms them.
    lifted: Option<&'a [kernels::ntt::Limb]>,
    level: usize,
    rot: Option<(&'a DevicePoly, u64)>,
    t_mod: u64,
    addend: Addend<'b>,
}

/// Copies each listed digit's own limbs (`(digit j, first slot, primes)`) from the input
/// component `input` into component `j` of the raised buffer `ext`, one launch for every run of
/// digits of one size that follow each other (digit `j + 1` starting where `j` ends): for such a
/// run of `r` digits of `d` primes from slot `lo`, the sources are `r × d` consecutive limbs
/// (a set of `r` components of `d` slots) and the targets the limbs `(j0 + c)·spc + lo + c·d + s`
/// (a set of `r` components `spc + d` slots apart). The copy reads no modulus, so the sets'
/// slot numbers need not be the limbs' own.
fn copy_own_limbs(
    cx: &kernels::Ctx,
    input: LimbSet,
    ext: &LimbSet,
    digits: &[(usize, usize, usize)],
) -> Result<()> {
    let n = u64::from(input.n);
    let in_base = input.ptr + 8 * n * (u64::from(input.comp_lo) * u64::from(input.spc));
    let mut i = 0;
    while i < digits.len() {
        let (j0, lo, d) = digits[i];
        let mut r = 1;
        while let Some(&(j, l, c)) = digits.get(i + r) {
            if j != j0 + r || c != d || l != lo + r * d {
                break;
            }
            r += 1;
        }
        let (d32, r32) = (d as u32, r as u32);
        let set = |ptr: u64, spc: u32| LimbSet {
            ptr,
            n: input.n,
            spc,
            comp_lo: 0,
            comps: r32,
            q_lo: 0,
            q_cnt: d32,
            p_lo: 0,
            p_cnt: 0,
        };
        let src = set(in_base + 8 * n * lo as u64, d32);
        let dst_ptr = ext.ptr + 8 * n * (j0 as u64 * u64::from(ext.spc) + lo as u64);
        let dst = set(dst_ptr, ext.spc + d32);
        ew::binary(cx, dst, src, ew::OP_COPY)?;
        i += r;
    }
    Ok(())
}
