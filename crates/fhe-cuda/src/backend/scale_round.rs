//! BFV's ciphertext product with scale-and-round on the device (`Backend::tensor_scale_round`):
//! the auxiliary basis `B`'s tables uploaded once per tables object, the inputs lifted to `B` in
//! one conversion launch, the tensor over `Q ∪ B` formed by the first pass of its inverse NTT
//! (its `Q` part on the lowest-priority side stream, beside the lift), the rounding kernel
//! (`scale_round.cu`) and the conversion back to `Q` (the method in `fhe_math::scale_round`).

use super::*;

/// Whether BFV's product runs the `Q` part of its tensor on the low-priority side stream beside
/// the lift to `B` (`FHE_BFV_PRODUCT_SPLIT=0` keeps it on the main stream, for A/B runs).
fn product_split_on() -> bool {
    switch_on!("FHE_BFV_PRODUCT_SPLIT")
}

impl CudaBackend {
    /// The device tables of `t`, uploaded at first use.
    fn sr_tables(&self, t: &ScaleRoundTables) -> Result<Arc<SrDevice>> {
        let ring = &self.inner.ring;
        let ql = t.moduli().len();
        if t.aux_ntt().first().is_none_or(|x| x.n() != ring.n())
            || ql > ring.q_count()
            || t.moduli()
                .iter()
                .enumerate()
                .any(|(s, m)| m.value() != ring.modulus(s).value())
        {
            return Err(shape_err(
                "scale-and-round tables were built for another ring",
            ));
        }
        cached(
            &self.inner.scale_round,
            kernels::scale_round::fingerprint(t),
            || {
                let (host, layout) = kernels::scale_round::build(ring, t);
                Ok(SrDevice {
                    buf: self.upload_words(&host)?,
                    layout,
                })
            },
        )
    }

    /// [`Backend::tensor_scale_round`] on the device (shapes checked): the steps of
    /// [`ScaleRoundTables::tensor_scale_round_host`], each a kernel over all limbs.
    /// The inputs of `tensor_scale_round`: two 2-component buffers over Q at the tables' level.
    pub(super) fn check_scale_round_inputs(
        &self,
        a: &DevicePoly,
        b: &DevicePoly,
        tables: &ScaleRoundTables,
    ) -> Result<()> {
        let level = tables.level();
        for p in [a, b] {
            self.check(p)?;
            let s = p.shape;
            if s.components != 2 || s.level != level || s.extended {
                return Err(shape_err(format!(
                    "tensor with scale-and-round needs 2-component buffers at level {level}, \
                     got {} components at level {}",
                    s.components, s.level
                )));
            }
        }
        Ok(())
    }

    /// `tensor_scale_round` (inputs checked), the product's three components in NTT form when
    /// `ntt`, else in coefficient form, where the conversion back to Q leaves them
    /// (`tensor_scale_round_coeff`).
    pub(super) fn tensor_scale_round_impl(
        &self,
        a: &DevicePoly,
        b: &DevicePoly,
        tables: &ScaleRoundTables,
        ntt: bool,
    ) -> Result<DevicePoly> {
        let sr = self.sr_tables(tables)?;
        let lay = &sr.layout;
        let (ql, bl) = (lay.ql, lay.bl);
        let total = ql + bl;
        let n = self.inner.ring.n();
        let (srp, _g) = sr.buf.device_ptr(self.s());
        let scx = Ctx {
            dev: &self.inner.device,
            stream: &self.inner.stream,
            tables: srp,
            layout: &lay.ring,
            n: n as u32,
        };
        // Scratch buffers (every word read is written by a kernel below first); they live to the
        // end of this call, after the last kernel that uses them is enqueued.
        let alloc = |words: usize| self.scratch_words(words);
        // tmp: [a0, a1, b0, b1][ql][n] in coefficient form; ext: their B limbs in NTT form, at slots
        // ql.. of a Q ∪ B layout (its Q slots stay unused: the tensor reads the inputs).
        let tmp = alloc(4 * ql * n)?;
        let ext = alloc(4 * total * n)?;
        let d = alloc(3 * total * n)?;
        let (tp, _g1) = tmp.device_ptr(self.s());
        let (ep, _g2) = ext.device_ptr(self.s());
        let (dp, _g3) = d.device_ptr(self.s());
        let w = 8 * n as u64;
        let set = |ptr: u64, spc: usize, comps: u32, q_lo: usize, q_cnt: usize| LimbSet {
            ptr,
            n: n as u32,
            spc: spc as u32,
            comp_lo: 0,
            comps,
            q_lo: q_lo as u32,
            q_cnt: q_cnt as u32,
            p_lo: 0,
            p_cnt: 0,
        };
        let square = std::ptr::eq(a, b);
        let inputs: &[&DevicePoly] = if square { &[a] } else { &[a, b] };
        let lifted = 2 * inputs.len() as u32;
        let b_ext = ep + (lifted as u64 - 2) * total as u64 * w;
        let q_of = |p: &DevicePoly| Self::q_only(p.limbs(self.s()), 0, ql as u32).components(0, 1);
        let (qa, qb) = (q_of(a), q_of(b));
        // The tensor over Q ∪ B, formed by its inverse NTT's first pass as it loads (never
        // written in NTT form) where that pass can: a_0 of slot s at the input's limb (Q) or
        // ext's (B), a_1, b_0, b_1 at fixed distances from it in each part.
        let on_load = kernels::ntt::tensor_on_load(&scx);
        let deltas = kernels::ntt::TensorDeltas {
            delta: [
                kernels::ntt::TensorDeltas::operands(&qa, &qb),
                kernels::ntt::TensorDeltas::operands(
                    &set(ep, total, 2, ql, bl),
                    &set(b_ext, total, 2, ql, bl),
                ),
            ],
            split: ql as u32,
        };
        let product_limbs = |slots: std::ops::Range<u32>| -> Vec<kernels::ntt::Limb> {
            (0..3u32)
                .flat_map(|c| slots.clone().map(move |s| (c, s)))
                .map(|(c, s)| kernels::ntt::Limb {
                    src: if (s as usize) < ql {
                        qa.ptr + s as u64 * w
                    } else {
                        ep + s as u64 * w
                    },
                    dst: dp + (c as u64 * total as u64 + s as u64) * w,
                    slot: s,
                    load: kernels::ntt::Load::Tensor(c),
                })
                .collect()
        };
        let (q_slots, b_slots) = (0..ql as u32, ql as u32..total as u32);
        // The Q part of that product reads only the inputs: for two inputs it runs first, on
        // the lowest-priority side stream, beside the lift to B below (latency-bound launches
        // that leave SMs idle), and is joined back before the rounding (the guard joins on an
        // early return too). A square's shorter lift measured no gain (PERF.md, thirty-sixth
        // session).
        let q_part = if on_load && !square && product_split_on() {
            let side = &self.inner.side_low;
            let forked = side.fork(self.s())?;
            let on_side = Ctx {
                stream: &side.stream,
                ..scx
            };
            kernels::ntt::inverse_tensor(
                &on_side,
                &product_limbs(q_slots.clone()),
                deltas,
                None,
                0,
            )?;
            Some(forked)
        } else {
            None
        };
        // Step 1: coefficient form of the inputs (out of place), exact centred lift to B of
        // every input component in one launch (tmp holds them ql limbs apart, ext total limbs
        // apart), NTT of the B limbs. A square (`b` is `a`) lifts its one input once.
        let mut inv = Vec::new();
        for (x, p) in inputs.iter().enumerate() {
            let src = Self::q_only(p.limbs(self.s()), 0, ql as u32);
            let dst = set(tp + 2 * x as u64 * ql as u64 * w, ql, 2, 0, ql);
            for (mut l, m) in src.limbs().into_iter().zip(dst.limbs()) {
                l.dst = m.dst;
                inv.push(l);
            }
        }
        kernels::ntt::inverse_list(&scx, &inv)?;
        let nw = n as u64;
        let strides = ConvStrides {
            input: ql as u64 * nw,
            out: total as u64 * nw,
            ..ConvStrides::default()
        };
        kernels::keyswitch::convert(
            &scx,
            &lay.q_to_b,
            tp,
            ep,
            (0, 0, 0),
            None,
            (lifted, strides),
        )?;
        kernels::ntt::forward(&scx, set(ep, total, lifted, ql, bl))?;
        // Step 2: tensor over Q ∪ B (the Q limbs read from the inputs, the B limbs from ext),
        // back to coefficient form (the product formed as the inverse NTT loads, where it can).
        if on_load {
            let limbs = match &q_part {
                Some(_) => product_limbs(b_slots),
                None => product_limbs(q_slots.start..b_slots.end),
            };
            kernels::ntt::inverse_tensor(&scx, &limbs, deltas, None, 0)?;
            if let Some(forked) = q_part {
                forked.join()?;
            }
        } else {
            ew::tensor_pairs(
                &scx,
                set(dp, total, 1, 0, total),
                (qa, qb),
                (set(ep, total, 1, ql, bl), set(b_ext, total, 1, ql, bl)),
            )?;
            kernels::ntt::inverse(&scx, set(dp, total, 3, 0, total))?;
        }
        // Steps 3 and 4: scale and round into B, exact centred conversion back to Q (one
        // kernel where the limb counts allow, else two with the B residues in between), then
        // NTT form if asked.
        let out = self.alloc_zero_inactive(Shape {
            components: 3,
            level: ql - 1,
            extended: false,
        })?;
        let op = out.ptr(self.s());
        let ospc = out.slots_per_component() as u64;
        if kernels::scale_round::to_q_fits(lay) {
            kernels::scale_round::to_q(&scx, lay, dp, op, ospc as u32)?;
        } else {
            let r = alloc(3 * bl * n)?;
            let (rp, _g4) = r.device_ptr(self.s());
            kernels::scale_round::to_b(&scx, lay, dp, rp)?;
            let strides = ConvStrides {
                input: bl as u64 * nw,
                out: ospc * nw,
                ..ConvStrides::default()
            };
            kernels::keyswitch::convert(&scx, &lay.b_to_q, rp, op, (0, 0, 0), None, (3, strides))?;
        }
        if ntt {
            kernels::ntt::forward(&self.cx(), out.limbs(self.s()))?;
        }
        Ok(out)
    }
}
