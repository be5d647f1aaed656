//! `mod_up`: a component's coefficient form (inverse NTT, or given prescaled), the digits'
//! conversions to the other primes (or their lift or conversion as the first forward pass loads
//! them), and the forward NTT of the raised limbs.

use super::*;

impl CudaBackend {
    /// The shape of `mod_up(c, component)`'s output (shapes checked).
    pub(in crate::backend) fn mod_up_shape(
        &self,
        c: &DevicePoly,
        component: usize,
    ) -> Result<Shape> {
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
    pub(in crate::backend) fn mod_up_into(
        &self,
        c: &DevicePoly,
        component: usize,
        ext: &mut DevicePoly,
    ) -> Result<()> {
        let (fwd, _tmp) = self.mod_up_convert(c, component, ext, true, None, None)?;
        kernels::ntt::forward_list(&self.cx(), &fwd)?;
        Ok(())
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
    pub(super) fn mod_up_convert<'a>(
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

    /// The shape of `mod_up`'s coefficient-form workspace at `level` (one component over Q).
    pub(in crate::backend) fn mod_up_coeffs_shape(level: usize) -> Shape {
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
    pub(in crate::backend) fn mod_up_prescale(
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
