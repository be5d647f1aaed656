//! BFV's ciphertext product with scale-and-round on the device (`Backend::tensor_scale_round`):
//! the auxiliary basis `B`'s tables uploaded once per tables object, the inputs lifted to `B` in
//! one conversion launch, the tensor over `Q ∪ B` formed by the first pass of its inverse NTT
//! (its `Q` part on the lowest-priority side stream, beside the lift), the rounding kernel
//! (`scale_round.cu`) and the conversion back to `Q` (the method in `fhe_math::scale_round`).

use super::*;
use crate::kernels::scale_round::SrLayout;

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

    /// Checks the inputs of `tensor_scale_round`: two 2-component buffers over Q at the tables'
    /// level.
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

    /// `tensor_scale_round` (inputs checked): the steps of
    /// [`ScaleRoundTables::tensor_scale_round_host`], each a kernel over all limbs, the
    /// product's three components in NTT form when `ntt`, else in coefficient form, where the
    /// conversion back to Q leaves them (`tensor_scale_round_coeff`).
    pub(super) fn tensor_scale_round_impl(
        &self,
        a: &DevicePoly,
        b: &DevicePoly,
        tables: &ScaleRoundTables,
        ntt: bool,
    ) -> Result<DevicePoly> {
        let sr = self.sr_tables(tables)?;
        let lay = &sr.layout;
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
        let total = lay.ql + lay.bl;
        let tmp = alloc(4 * lay.ql * n)?;
        let ext = alloc(4 * total * n)?;
        let prod = alloc(3 * total * n)?;
        let (tp, _g1) = tmp.device_ptr(self.s());
        let (ep, _g2) = ext.device_ptr(self.s());
        let (pp, _g3) = prod.device_ptr(self.s());
        let q_of = |p: &DevicePoly| Self::q_only(p.limbs(self.s()), 0, lay.ql as u32);
        let square = std::ptr::eq(a, b);
        let pb = ProductBuffers {
            n: n as u32,
            ql: lay.ql as u32,
            bl: lay.bl as u32,
            tmp: tp,
            ext: ep,
            prod: pp,
            qa: q_of(a).components(0, 1),
            qb: q_of(b).components(0, 1),
            lifted: if square { 2 } else { 4 },
        };
        let inputs: &[&DevicePoly] = if square { &[a] } else { &[a, b] };
        // The product's Q part reads only the inputs: for two inputs it runs on the
        // lowest-priority side stream beside the lift to B, joined back before the rounding.
        let on_load = kernels::tensor::tensor_on_load(&scx);
        let q_part = match on_load && !square {
            true => Some(self.product_q_part_beside(&scx, &pb)?),
            false => None,
        };
        self.lift_inputs_to_b(&scx, lay, &pb, inputs)?;
        self.product_to_coefficients(&scx, &pb, on_load, q_part)?;
        self.round_product_to_q(&scx, lay, &pb, ntt)
    }

    /// Launches the `Q` part of the product ([`ProductBuffers::product_limbs`]) on the
    /// lowest-priority side stream, forked here: beside the lift to B (latency-bound launches
    /// that leave SMs idle) it fills SMs, and the returned guard joins it back (on drop too). A
    /// square's shorter lift measured no gain (PERF.md, ideas tried and rejected).
    fn product_q_part_beside(
        &self,
        scx: &Ctx,
        pb: &ProductBuffers,
    ) -> Result<crate::side::Forked<'_>> {
        let side = &self.inner.side_low;
        let forked = side.fork(self.s())?;
        let on_side = Ctx {
            stream: &side.stream,
            ..*scx
        };
        let limbs = pb.product_limbs(0..pb.ql);
        kernels::tensor::inverse_tensor(&on_side, &limbs, pb.deltas(), None, 0)?;
        Ok(forked)
    }

    /// Step 1: coefficient form of the inputs (out of place, into `tmp`), exact centred lift
    /// to B of every input component in one launch, NTT of the B limbs (in `ext`). A square
    /// (`b` is `a`) lifts its one input once.
    fn lift_inputs_to_b(
        &self,
        scx: &Ctx,
        lay: &SrLayout,
        pb: &ProductBuffers,
        inputs: &[&DevicePoly],
    ) -> Result<()> {
        let (ql, w) = (pb.ql, pb.limb_bytes());
        let mut inv = Vec::new();
        for (x, p) in inputs.iter().enumerate() {
            let src = Self::q_only(p.limbs(self.s()), 0, ql);
            let dst = pb.set(pb.tmp + 2 * x as u64 * ql as u64 * w, ql, 2, 0, ql);
            for (mut l, m) in src.limbs().into_iter().zip(dst.limbs()) {
                l.dst = m.dst;
                inv.push(l);
            }
        }
        kernels::ntt::inverse_list(scx, &inv)?;
        let strides = ConvStrides {
            input: ql as u64 * pb.n as u64,
            out: pb.total() as u64 * pb.n as u64,
            ..ConvStrides::default()
        };
        let (tp, ep) = (pb.tmp, pb.ext);
        kernels::keyswitch::convert(
            scx,
            &lay.q_to_b,
            tp,
            ep,
            (0, 0, 0),
            None,
            (pb.lifted, strides),
        )?;
        kernels::ntt::forward(scx, pb.set(ep, pb.total(), pb.lifted, ql, pb.bl))?;
        Ok(())
    }

    /// Step 2: the tensor over Q ∪ B (the Q limbs read from the inputs, the B limbs from `ext`)
    /// in coefficient form in `prod`: with `on_load` ([`kernels::tensor::tensor_on_load`]) formed
    /// by its inverse NTT's first pass as it loads (never written in NTT form), the Q part
    /// already launched where `q_part` holds its side stream (joined here); else one tensor
    /// launch, then the inverse NTT.
    fn product_to_coefficients(
        &self,
        scx: &Ctx,
        pb: &ProductBuffers,
        on_load: bool,
        q_part: Option<crate::side::Forked<'_>>,
    ) -> Result<()> {
        let (ql, bl, total) = (pb.ql, pb.bl, pb.total());
        if on_load {
            let first = if q_part.is_some() { ql } else { 0 };
            let limbs = pb.product_limbs(first..total);
            kernels::tensor::inverse_tensor(scx, &limbs, pb.deltas(), None, 0)?;
            if let Some(forked) = q_part {
                forked.join()?;
            }
            return Ok(());
        }
        ew::tensor_pairs(
            scx,
            pb.set(pb.prod, total, 1, 0, total),
            (pb.qa, pb.qb),
            (
                pb.set(pb.ext, total, 1, ql, bl),
                pb.set(pb.b_ext(), total, 1, ql, bl),
            ),
        )?;
        kernels::ntt::inverse(scx, pb.set(pb.prod, total, 3, 0, total))?;
        Ok(())
    }

    /// Steps 3 and 4: scale and round into B, exact centred conversion back to Q (one kernel
    /// where the limb counts allow, else two with the B residues in between), into a new
    /// 3-component buffer over Q, then NTT form if `ntt`.
    fn round_product_to_q(
        &self,
        scx: &Ctx,
        lay: &SrLayout,
        pb: &ProductBuffers,
        ntt: bool,
    ) -> Result<DevicePoly> {
        let out = self.alloc_zero_inactive(Shape {
            components: 3,
            level: lay.ql - 1,
            extended: false,
        })?;
        let op = out.ptr(self.s());
        let ospc = out.slots_per_component() as u64;
        if kernels::scale_round::to_q_fits(lay) {
            kernels::scale_round::to_q(scx, lay, pb.prod, op, ospc as u32)?;
        } else {
            let r = self.scratch_words(3 * lay.bl * pb.n as usize)?;
            let (rp, _g) = r.device_ptr(self.s());
            kernels::scale_round::to_b(scx, lay, pb.prod, rp)?;
            let strides = ConvStrides {
                input: lay.bl as u64 * pb.n as u64,
                out: ospc * pb.n as u64,
                ..ConvStrides::default()
            };
            kernels::keyswitch::convert(scx, &lay.b_to_q, rp, op, (0, 0, 0), None, (3, strides))?;
        }
        if ntt {
            kernels::ntt::forward(&self.cx(), out.limbs(self.s()))?;
        }
        Ok(out)
    }
}

/// Where one BFV product's words lie (device addresses): the inputs' Q limbs, the scratch
/// buffers, and the Q ∪ B layout of `ext` and `prod` (slot `s` of a component `s` limbs of `n`
/// words in, components `ql + bl` limbs apart).
struct ProductBuffers {
    n: u32,
    ql: u32,
    bl: u32,
    /// `[a_0, a_1, b_0, b_1][ql][n]`: the inputs in coefficient form.
    tmp: u64,
    /// The lifted inputs' B limbs in NTT form, at slots `ql..` (its Q slots stay unused: the
    /// tensor reads the inputs).
    ext: u64,
    /// The product `[c][Q ∪ B][n]` in coefficient form.
    prod: u64,
    /// Component 0 of each input's Q limbs (component 1 follows a plane later).
    qa: LimbSet,
    qb: LimbSet,
    /// Input components lifted: 4, or 2 for a square.
    lifted: u32,
}

impl ProductBuffers {
    /// Limbs of the Q ∪ B layout.
    fn total(&self) -> u32 {
        self.ql + self.bl
    }

    /// Bytes of one limb.
    fn limb_bytes(&self) -> u64 {
        8 * self.n as u64
    }

    /// The limb set at `ptr` of `comps` components `spc` limbs apart, slots `q_lo..q_lo + q_cnt`.
    fn set(&self, ptr: u64, spc: u32, comps: u32, q_lo: u32, q_cnt: u32) -> LimbSet {
        LimbSet {
            ptr,
            n: self.n,
            spc,
            comp_lo: 0,
            comps,
            q_lo,
            q_cnt,
            p_lo: 0,
            p_cnt: 0,
        }
    }

    /// `b_0`'s B limbs in `ext` (`a`'s own for a square).
    fn b_ext(&self) -> u64 {
        self.ext + (self.lifted as u64 - 2) * self.total() as u64 * self.limb_bytes()
    }

    /// The tensor loads' operand distances: the Q part's from the inputs, the B part's in
    /// `ext`.
    fn deltas(&self) -> kernels::tensor::TensorDeltas {
        let (ql, bl, total) = (self.ql, self.bl, self.total());
        kernels::tensor::TensorDeltas {
            delta: [
                kernels::tensor::TensorDeltas::operands(&self.qa, &self.qb),
                kernels::tensor::TensorDeltas::operands(
                    &self.set(self.ext, total, 2, ql, bl),
                    &self.set(self.b_ext(), total, 2, ql, bl),
                ),
            ],
            split: ql,
        }
    }

    /// The product's limbs of `slots`, all three components, as the loading inverse NTT takes
    /// them: `a_0` of slot `s` at the input's limb (Q) or `ext`'s (B), the output in `prod`.
    fn product_limbs(&self, slots: std::ops::Range<u32>) -> Vec<kernels::ntt::Limb> {
        let (w, total) = (self.limb_bytes(), self.total() as u64);
        (0..3u32)
            .flat_map(|c| slots.clone().map(move |s| (c, s)))
            .map(|(c, s)| kernels::ntt::Limb {
                src: if s < self.ql {
                    self.qa.ptr + s as u64 * w
                } else {
                    self.ext + s as u64 * w
                },
                dst: self.prod + (c as u64 * total + s as u64) * w,
                slot: s,
                load: kernels::ntt::Load::Tensor(c),
            })
            .collect()
    }
}
