//! Key switches with their results in coefficient form (BFV's relinearization and rotations,
//! `Backend::*_coeff`): the same `mod_up` and key product as the NTT-form switches, and a
//! `mod_down` that ends in coefficient form. There the special part needs no forward NTT after
//! its conversion to `Q`, and the inverse NTT of the accumulator's `Q` rows runs on the main
//! stream beside the side stream's chain (the special rows, their inverse NTT, the
//! conversion), which is the longer branch of the NTT-form switches at `n = 2^15`; one
//! elementwise launch joins them.

use super::*;
use crate::side::Forked;

/// Where a coefficient-form rotation reads `c_0`: the ciphertext, in NTT form or not, and the
/// Galois element.
#[derive(Clone, Copy)]
pub(super) struct RotSource<'p> {
    pub c: &'p DevicePoly,
    pub ntt: bool,
    pub galois: u64,
}

impl CudaBackend {
    /// The gathering map of `σ_g` in coefficient form (`galois::automorphism_coeff_map`, with
    /// its negating bit), uploaded at first use.
    fn coeff_galois_map(&self, g: u64) -> Result<Arc<CudaSlice<u32>>> {
        let n = self.inner.ring.n();
        let g = g % (2 * n as u64);
        cached(&self.inner.coeff_galois, g, || {
            let host = fhe_math::galois::automorphism_coeff_map(n, g);
            self.inner
                .stream
                .clone_htod(&host[..])
                .map_err(drv("galois map upload"))
        })
    }

    /// `mod_down` into coefficient form: `out += ⌊acc / P⌉` over `Q_l` (2 components), `out`
    /// holding the addend (`c_0`, `c_1`; in NTT form when `out_ntt`, transformed here); or,
    /// with `rot`, `out = (σ_g(c_0), 0) + ⌊acc / P⌉` (`out`'s words are not read). The special
    /// rows' inverse NTT and their conversion to `Q` run on the side stream where the key
    /// product left rows (`pending`, [`CudaBackend::start_pending_rows`]), beside the main
    /// stream's rows and the inverse NTT of the accumulator's `Q` rows (with the NTT-form
    /// addend or rotation source in the same launches); then `keyswitch_mod_down_finish` (or
    /// `_rot`, its map gathering `σ_g` in coefficient form). `acc` is overwritten. The words
    /// are those of the NTT-form `mod_down` transformed back: every step is exact modular
    /// arithmetic, and the conversion is the one the NTT-form path transforms.
    pub(super) fn mod_down_coeff(
        &self,
        acc: &DevicePoly,
        out: &mut DevicePoly,
        out_ntt: bool,
        rot: Option<RotSource<'_>>,
        pending: Option<PendingRows<'_>>,
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
        if let Some(r) = rot {
            self.check(r.c)?;
            check_covers(out, r.c, "rotate")?;
        }
        let r = &self.inner.ring;
        let q_cap = r.q_count() as u64;
        let n = r.n() as u64;
        // Allocated and uploaded before the fork, which orders the side stream after them: the
        // special limbs in coefficient form, their conversion to q_0..q_l, the rotation's map
        // and, for an NTT-form rotation source, its c_0 in coefficient form.
        let tmp = self.scratch(Shape {
            components: 2,
            level: 0,
            extended: true,
        })?;
        let conv = self.scratch(Shape {
            components: 2,
            level,
            extended: false,
        })?;
        let map = rot.map(|r| self.coeff_galois_map(r.galois)).transpose()?;
        let src0 = match rot {
            Some(r) if r.ntt => Some(self.scratch(Shape {
                components: 1,
                level,
                extended: false,
            })?),
            _ => None,
        };
        let (forked, cx) = self.start_pending_rows(pending.as_ref())?;
        // The chain: the special limbs to coefficient form (out of place), converted to Q.
        let lt = LimbSet {
            q_cnt: 0,
            ..tmp.limbs(self.s())
        };
        let mut inv = acc.like(self.s(), &lt).limbs();
        for (x, y) in inv.iter_mut().zip(lt.limbs()) {
            x.dst = y.dst;
        }
        kernels::ntt::inverse_list(&cx, &inv)?;
        let tspc = tmp.slots_per_component() as u64;
        let strides = ConvStrides {
            input: tspc * n,
            out: q_cap * n,
            ..ConvStrides::default()
        };
        let (tp, cp) = (tmp.ptr(self.s()), conv.ptr(self.s()));
        kernels::keyswitch::convert(
            &cx,
            conv_layout,
            tp + 8 * q_cap * n,
            cp,
            (0, 0, 0),
            None,
            (2, strides),
        )?;
        // The main stream: its rows of the key product, then the accumulator's Q rows (and the
        // NTT-form addend or rotation source) to coefficient form, in one inverse NTT.
        self.launch_late_rows(pending.as_ref())?;
        drop(pending);
        let cx_main = self.cx();
        let lo = out.limbs(self.s());
        let la = acc.like(self.s(), &lo);
        let mut main_inv = la.limbs();
        if out_ntt && rot.is_none() {
            main_inv.extend(lo.limbs());
        }
        let src = match (rot, &src0) {
            (Some(r), Some(s0)) => {
                let s0 = s0.like(self.s(), &lo).components(0, 1);
                let from = r.c.like(self.s(), &lo).components(0, 1).limbs();
                main_inv.extend(from.into_iter().zip(s0.limbs()).map(|(mut x, y)| {
                    x.dst = y.dst;
                    x
                }));
                Some(s0)
            }
            (Some(r), None) => Some(r.c.like(self.s(), &lo).components(0, 1)),
            (None, _) => None,
        };
        kernels::ntt::inverse_list(&cx_main, &main_inv)?;
        join(forked)?;
        let lc = conv.limbs(self.s());
        match (src, &map) {
            (Some(src), Some(map)) => {
                let (mp, _g) = map.device_ptr(self.s());
                kernels::keyswitch::mod_down_finish_rot(&cx_main, lo, la, lc, src, mp, level, None)?
            }
            _ => kernels::keyswitch::mod_down_finish(&cx_main, lo, la, lc, level, None)?,
        }
        Ok(())
    }

    /// Relinearization of the 3-component `c` into coefficient form (`Backend::relinearize_coeff`,
    /// and BFV's product relinearized): `c_2` in NTT form (`c_ntt`) goes through `mod_up` as in
    /// the NTT-form switch; in coefficient form from `coeffs`, its prescaled copy
    /// ([`CudaBackend::mod_up_prescale`]), written here when not given. `c_0`, `c_1` are the
    /// addend of [`CudaBackend::mod_down_coeff`].
    pub(super) fn relinearize_coeff_from<'a>(
        &'a self,
        mut c: DevicePoly,
        c_ntt: bool,
        relin_key: &DevicePoly,
        coeffs: Option<ScratchPoly<'a>>,
    ) -> Result<DevicePoly> {
        let level = c.shape.level;
        let mut ext = self.scratch(self.mod_up_shape(&c, 2)?)?;
        if c.shape.components != 3 {
            return Err(shape_err("relinearize: the buffer must have 3 components"));
        }
        let mut acc = self.scratch(Self::acc_shape(&ext))?;
        let coeffs = match (c_ntt, coeffs) {
            (true, _) => None,
            (false, Some(x)) => Some(x),
            (false, None) => {
                let x = self.scratch(Self::mod_up_coeffs_shape(level))?;
                let c2 = Self::q_only(c.limbs(self.s()), 0, level as u32 + 1).components(2, 1);
                self.mod_up_prescale(c2, &x, level)?;
                Some(x)
            }
        };
        let pending = self.mod_up_and_product(
            &c, 2, relin_key, None, &mut ext, &mut acc, None, coeffs, None,
        )?;
        self.truncate_components(&mut c, 2)?;
        self.mod_down_coeff(&acc, &mut c, c_ntt, None, pending)?;
        Ok(c)
    }

    /// Hoisted rotations of `c` (in NTT form when `c_ntt`) with the results in coefficient form
    /// (`Backend::rotate_hoisted_coeff`). One key of a coefficient-form `c` starts `mod_up` from
    /// its prescaled `c_1` (no inverse NTT) where the fused key product applies; otherwise
    /// `mod_up` reads `c` in NTT form (a transformed copy of a coefficient-form `c`), and every
    /// rotation ends in [`CudaBackend::mod_down_coeff`], which reads `c_0` in `c`'s own form.
    pub(super) fn rotate_hoisted_coeff_impl(
        &self,
        c: &DevicePoly,
        c_ntt: bool,
        keys: &[(u64, &DevicePoly)],
    ) -> Result<Vec<DevicePoly>> {
        self.check(c)?;
        let level = c.shape.level;
        if let Some((g, _)) = keys.iter().find(|(g, _)| g.is_multiple_of(2)) {
            return Err(shape_err(format!("rotate: bad Galois element {g}")));
        }
        if c.shape.components != 2 || c.shape.extended {
            return Err(shape_err(
                "rotate: the buffer must have 2 components over Q",
            ));
        }
        let out_shape = Shape {
            components: 2,
            level,
            extended: false,
        };
        let source = |g: u64| RotSource {
            c,
            ntt: c_ntt,
            galois: g,
        };
        let mut ext = self.scratch(self.mod_up_shape(c, 1)?)?;
        let mut acc = self.scratch(Self::acc_shape(&ext))?;
        let fusable = kernels::ntt::key_product_fusable(&self.cx());
        if let ([(g, key)], false, true) = (keys, c_ntt, fusable) {
            let coeffs = self.scratch(Self::mod_up_coeffs_shape(level))?;
            let c1 = Self::q_only(c.limbs(self.s()), 0, level as u32 + 1).components(1, 1);
            self.mod_up_prescale(c1, &coeffs, level)?;
            let pending = self.mod_up_and_product(
                c,
                1,
                key,
                Some(*g),
                &mut ext,
                &mut acc,
                None,
                Some(coeffs),
                None,
            )?;
            let mut out = self.alloc_zero_inactive(out_shape)?;
            self.mod_down_coeff(&acc, &mut out, false, Some(source(*g)), pending)?;
            return Ok(vec![out]);
        }
        let copy = match c_ntt {
            true => None,
            false => {
                let mut x = self.duplicate(c)?;
                self.ntt(&mut x)?;
                Some(x)
            }
        };
        let cn = copy.as_ref().unwrap_or(c);
        if let [(g, key)] = keys {
            let pending = self.mod_up_and_product(
                cn,
                1,
                key,
                Some(*g),
                &mut ext,
                &mut acc,
                None,
                None,
                None,
            )?;
            let mut out = self.alloc_zero_inactive(out_shape)?;
            self.mod_down_coeff(&acc, &mut out, false, Some(source(*g)), pending)?;
            return Ok(vec![out]);
        }
        self.mod_up_into(cn, 1, &mut ext)?;
        keys.iter()
            .map(|&(g, key)| {
                self.key_acc(&ext, key, Some(g), &mut acc)?;
                let mut out = self.alloc_zero_inactive(out_shape)?;
                self.mod_down_coeff(&acc, &mut out, false, Some(source(g)), None)?;
                Ok(out)
            })
            .collect()
    }
}

/// Joins a fork of [`CudaBackend::start_pending_rows`], if any.
fn join(forked: Option<Forked<'_>>) -> Result<()> {
    if let Some(f) = forked {
        f.join()?;
    }
    Ok(())
}
