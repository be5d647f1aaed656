//! `mod_down`: the accumulator over `Q·P` back to Q (with the rescale, BGV's `t`, a rotation or
//! the product's components folded in), planned once ([`ModDownPlan`]) and launched in steps.

use super::*;
use crate::tables::ConvLayout;

impl CudaBackend {
    /// `mod_down_into` (shapes checked here).
    pub(in crate::backend) fn mod_down_impl(
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
    ///
    /// The steps: shape checks ([`CudaBackend::mod_down_check_shapes`]), the workspaces, the
    /// plan ([`CudaBackend::mod_down_plan`]) and its constants
    /// ([`CudaBackend::mod_down_consts`]), the fork and the key product's rows
    /// ([`CudaBackend::mod_down_fork`]), the special part's inverse NTT
    /// ([`CudaBackend::mod_down_inverse`]), its conversion ([`CudaBackend::mod_down_convert`]),
    /// the first forward pass where it runs before the join
    /// ([`CudaBackend::mod_down_first_pass`]), the join, and the last step
    /// ([`CudaBackend::mod_down_last_step`]).
    #[allow(clippy::too_many_arguments)]
    pub(in crate::backend) fn mod_down_any(
        &self,
        acc: &DevicePoly,
        out: &mut DevicePoly,
        rescale: bool,
        rot: Option<(&DevicePoly, u64)>,
        t_mod: u64,
        pending: Option<PendingRows<'_>>,
        addend: Addend<'_>,
    ) -> Result<()> {
        let (level, conv_layout) = self.mod_down_check_shapes(acc, out, rescale)?;
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
        let plan = self.mod_down_plan(rescale, pending.is_some());
        let consts = self.mod_down_consts(&plan, rescale, t_mod)?;
        let coefficients = matches!(addend, Addend::Coefficients);
        if coefficients {
            plan.check_coefficients(consts.prescale.is_none(), t_mod, rot.is_some())?;
        }
        let (forked, cx) = self.mod_down_fork(pending.as_ref())?;
        let chain = ModDownChain {
            cx,
            plan,
            level,
            rescale,
            conv_layout,
            tmp: &tmp,
            conv: &conv,
            consts,
        };
        let lo = out.limbs(self.s());
        let top = self.mod_down_inverse(&chain, acc, lo)?;
        let lifted = self.mod_down_convert(&chain, top)?;
        let lc = conv.limbs(self.s());
        self.mod_down_first_pass(&chain, lo, lc, lifted.as_deref(), coefficients)?;
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

    /// mod_down's shape checks: `acc` over `Q·P` with two components or more, `out` of two
    /// components over Q at the same level, special primes, and a level above 0 to rescale
    /// from. Returns the level and the conversion's layout at it.
    fn mod_down_check_shapes(
        &self,
        acc: &DevicePoly,
        out: &DevicePoly,
        rescale: bool,
    ) -> Result<(usize, &ConvLayout)> {
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
        Ok((level, conv_layout))
    }

    /// The constants a mod_down of `plan` reads, uploaded (at first use) on the main stream
    /// before the fork, which orders the side stream after them.
    fn mod_down_consts(
        &self,
        plan: &ModDownPlan,
        rescale: bool,
        t_mod: u64,
    ) -> Result<ModDownConsts> {
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
        let prescale = match plan.convert_on_load {
            true => self.mod_down_prescale(t_mod)?,
            false => Arc::new(None),
        };
        Ok(ModDownConsts {
            t_table,
            t_inverse,
            prescale,
        })
    }

    /// Forks the side stream where the key product left rows to launch (`pending`), and
    /// launches those rows. The steps up to the conversion run on the returned context: the
    /// side stream's when forked here (after the workspace's stream-ordered allocations, so
    /// that the side stream uses them after they exist; joined back by the caller, or on drop
    /// at any early return); the rest on the main stream.
    fn mod_down_fork<'a>(
        &'a self,
        pending: Option<&PendingRows<'_>>,
    ) -> Result<(Option<side::Forked<'a>>, Ctx<'a>)> {
        // A split first pass (its main part still to launch) forks the low-priority side
        // stream, so that the side stream's latency-bound launches do not hold that part back.
        let side = match pending {
            Some(p) if !p.late_first.is_empty() => &self.inner.side_low,
            _ => &self.inner.side,
        };
        let forked = match pending {
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
        if let Some(p) = pending.filter(|p| !p.late_first.is_empty()) {
            // The main stream's part of the first pass, where it was split off.
            kernels::keyprod::forward_key_product(&cx_main, &p.late_first, &[], p.args)?;
        }
        if let Some(p) = pending {
            kernels::keyprod::key_product_rows(&cx_main, &p.late, p.args)?;
        }
        if let Some(p) = pending {
            kernels::keyprod::key_product_early(&cx, &p.early, p.early_set, p.args)?;
        }
        Ok((forked, cx))
    }

    /// The inverse NTT of `acc`'s special part (both components) into the workspace `tmp`, on
    /// the chain's stream; with the rescale, the top limb `out + acc·P^-1` (`lo`: the output's
    /// limbs) joins it. Returns the top limbs' set in `tmp` (slot `level`).
    fn mod_down_inverse(
        &self,
        chain: &ModDownChain<'_>,
        acc: &DevicePoly,
        lo: LimbSet,
    ) -> Result<LimbSet> {
        let (cx, plan, level) = (&chain.cx, &chain.plan, chain.level);
        let r = &self.inner.ring;
        let lt = LimbSet {
            q_cnt: 0,
            ..chain.tmp.limbs(self.s())
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
        // With the rescale, the top limb w = out + acc·P^-1 (both components) joins the
        // inverse NTT: formed by its first pass as it loads (`Load::AddScaled`), or by
        // `keyswitch_mod_down_top` first where that pass cannot.
        let mut top_add = None;
        if chain.rescale {
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
                kernels::keyswitch::mod_down_top(cx, top, top_out, top_acc, level)?;
                inv.extend(top.limbs());
            }
        }
        let s_count = (r.q_count() + r.p_count()) as u64;
        // Beside the main stream's key product, the rescaling chain's inverse NTT may go without
        // programmatic launch (`Tuning::rescale_inverse_pdl`).
        let inv_guard = plan.inverse_without_pdl.then(kernels::pdl_off);
        match (chain.consts.prescale.as_ref(), &chain.consts.t_inverse) {
            // Converted loads: v_i = (t^-1·x_i + h_in)·p̂_i^-1 straight from the inverse NTT.
            (Some(pre), _) => {
                let (kp, _g) = pre.device_ptr(self.s());
                kernels::ntt::inverse_list_prescaled_at(cx, &inv, kp, kp + 8 * 4 * s_count)?;
            }
            // BGV: the conversion input is t^-1·acc_P (mod_down_into_mod_t); with the rescale
            // the coefficient-form top limb is scaled by t^-1 too (the conversion's rescale
            // output then carries t back, `RescaleTop::t_table`): both by the inverse NTT's
            // final constants.
            (None, Some(consts)) => {
                let (kp, _g) = consts.device_ptr(self.s());
                match top_add {
                    Some(add) => kernels::tensor::inverse_adding(cx, &inv, kp, add)?,
                    None => kernels::ntt::inverse_list_consts(cx, &inv, kp)?,
                }
            }
            (None, None) => match top_add {
                Some(add) => {
                    let plain = cx.t(cx.layout.ntt.ntt_consts);
                    kernels::tensor::inverse_adding(cx, &inv, plain, add)?
                }
                None => kernels::ntt::inverse_list(cx, &inv)?,
            },
        }
        drop(inv_guard);
        Ok(top)
    }

    /// The conversion of the special part (in `tmp`, coefficient form) to `q_0..q_l` into
    /// `conv`, on the chain's stream: by the conversion kernel (with the rescale, also
    /// preparing it from the `top` limbs), or left to the first forward pass, whose lifted or
    /// converted loads come back.
    fn mod_down_convert(
        &self,
        chain: &ModDownChain<'_>,
        top: LimbSet,
    ) -> Result<Option<Vec<kernels::ntt::Limb>>> {
        let (cx, level, rescale) = (&chain.cx, chain.level, chain.rescale);
        let (tmp, conv) = (chain.tmp, chain.conv);
        let lift_p = chain.plan.lift_p;
        let r = &self.inner.ring;
        let q_cap = r.q_count() as u32;
        let n = r.n() as u64;
        let (tp, cp) = (tmp.ptr(self.s()), conv.ptr(self.s()));
        let t_tab = chain
            .consts
            .t_table
            .as_ref()
            .map_or(0, |t| t.device_ptr(self.s()).0);
        let tspc = tmp.slots_per_component() as u64;
        let tops = top.limbs();
        let converted = chain.consts.prescale.is_some();
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
                cx,
                chain.conv_layout,
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
            kernels::keyswitch::mod_down_rescale_prepare(cx, cp, q_cap, top, level, t_tab)?;
        }
        Ok(lifted)
    }

    /// The first forward pass of the converted limbs `lc`, on the chain's stream before the
    /// join, where it runs there ([`ModDownPlan::early_first`]) or adds a coefficient-form
    /// output (`coefficients`; `lo`: the output's limbs) through the `lifted` loads.
    fn mod_down_first_pass(
        &self,
        chain: &ModDownChain<'_>,
        lo: LimbSet,
        lc: LimbSet,
        lifted: Option<&[kernels::ntt::Limb]>,
        coefficients: bool,
    ) -> Result<()> {
        let cx = &chain.cx;
        match (lifted, coefficients) {
            // The output's words (coefficient form, `out` laid out like `conv`) go into the
            // converted limbs as they load.
            (Some(l), true) => {
                if lo.spc != lc.spc {
                    return Err(shape_err("mod_down: output and conversion laid out unlike"));
                }
                let delta = kernels::word_offset(lc.ptr, lo.ptr);
                kernels::moddown_finish::forward_finish_first_adding(cx, l, delta)?;
            }
            _ if chain.plan.early_first => {
                kernels::moddown_finish::forward_finish_first(cx, lc, lifted)?
            }
            _ => {}
        }
        Ok(())
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

impl ModDownPlan {
    /// An [`Addend::Coefficients`] output needs converted or lifted loads before the join
    /// (`unconverted`: no prescaled constants for converted loads), `t = 1` and no rotation.
    fn check_coefficients(&self, unconverted: bool, t_mod: u64, rotates: bool) -> Result<()> {
        if (unconverted && !(self.lift_p && self.early_first)) || t_mod != 1 || rotates {
            return Err(shape_err(
                "mod_down: a coefficient-form output needs converted or lifted loads before the \
                 join, t = 1 and no rotation",
            ));
        }
        Ok(())
    }
}

/// The constants one mod_down reads ([`CudaBackend::mod_down_consts`]).
struct ModDownConsts {
    /// BGV's rescale: `(t mod q_s, shoup)` by slot for the rescale's correction.
    t_table: Option<Arc<CudaSlice<u64>>>,
    /// BGV: the inverse NTT's constants with `t^-1` folded in.
    t_inverse: Option<Arc<CudaSlice<u64>>>,
    /// The prescaled inverse constants of the converted loads ([`ModDownPlan::convert_on_load`]).
    prescale: Arc<Option<CudaSlice<u64>>>,
}

/// What the steps of one mod_down before the join share
/// ([`CudaBackend::mod_down_inverse`], [`CudaBackend::mod_down_convert`],
/// [`CudaBackend::mod_down_first_pass`]).
struct ModDownChain<'a> {
    /// The context these steps launch on: the side stream's where forked, else the main's.
    cx: Ctx<'a>,
    plan: ModDownPlan,
    level: usize,
    /// With the rescale (the output drops its top limb).
    rescale: bool,
    /// The conversion of the special part to `q_0..q_level`.
    conv_layout: &'a ConvLayout,
    /// The special part in coefficient form (and, with the rescale, the top limb at slot
    /// `level`).
    tmp: &'a DevicePoly,
    /// The special part converted to `q_0..q_level`.
    conv: &'a DevicePoly,
    consts: ModDownConsts,
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
