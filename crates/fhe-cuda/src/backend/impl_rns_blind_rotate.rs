//! [`RnsBlindRotateBackend`] on the device: a whole batch of blind rotations per call, the
//! accumulators in NTT form on the device through all steps, the RGSW rows read where the
//! key already lives (device polynomials). Per step, for the whole batch
//! ([`crate::kernels::rns_blind_rotate`]): the inverse NTTs of `T = acc ⊙ (X^{a_e} − 1)`, the
//! exact RNS digit decomposition, the forward NTTs of the digit limbs outside their groups,
//! and one multiply-accumulate, which also forms the next step's `T`. Each NTT is one launch a
//! pass over the whole chunk (`ntt::forward_strided` / `inverse_strided`: the limbs lie `n`
//! words apart, their slots repeat with the period of a sample's limbs). Every limb is below
//! 2^42: the decomposition and the products are exact in double precision. The accumulators
//! come back through a page-locked buffer, converted to polynomials while the device runs the
//! next chunk. The words are the reference's (exact arithmetic).

use super::*;
use crate::kernels::ntt as ntt_k;
use crate::kernels::rns_blind_rotate::{self as rbr, MacArgs};
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent, PinnedHostSlice};
use fhe_math::backend::rns_blind_rotate::{
    RnsBlindRotateBackend, RnsGadget, RnsRotationBatch, check_rns_blind_rotate_args,
};
use rayon::prelude::*;

impl RnsBlindRotateBackend for CudaBackend {
    fn rns_blind_rotate(
        &self,
        gadget: &RnsGadget,
        key: &[&DevicePoly],
        test: &RnsPoly,
        batch: &RnsRotationBatch,
    ) -> Result<Vec<RnsPoly>> {
        check_rns_blind_rotate_args(self, gadget, key, test, batch)?;
        for row in key {
            self.check(row)?;
        }
        if batch.is_empty() {
            return Ok(Vec::new());
        }
        let ring = self.inner.ring.clone();
        rbr::check_limbs(&ring, gadget)?;
        let (n, l, dg) = (ring.n(), gadget.level() + 1, gadget.digits());
        let level = gadget.level();
        // The slots of a sample's limbs (the strided NTTs' periods): acc and T by limb, D by
        // digit limb (digit j's limbs outside its group, in limb order).
        let acc_slots: Vec<u32> = (0..l as u32).collect();
        let d_slots = rbr::digit_slots(gadget);
        let dtot = d_slots.len();

        // The tables: the device's NTT of X gives the evaluation points.
        let mut x = ring.zeros(Shape {
            components: 1,
            level,
            extended: false,
        })?;
        for s in 0..l {
            x.limb_mut(0, s)[1] = 1;
        }
        let mut xd = self.upload(&x)?;
        self.ntt(&mut xd)?;
        let words = rbr::tables(&ring, gadget, &self.download(&xd)?)?;
        let tab = self.upload_words(&words)?;
        let test_d = self.upload(test)?;
        let row_spc = key.first().map_or(0, |r| r.slots_per_component()) as u32;
        let rowptrs: Vec<u64> = key.iter().map(|r| r.ptr(self.s())).collect();
        let rows = self.upload_words(if rowptrs.is_empty() {
            &[0u64][..]
        } else {
            &rowptrs[..]
        })?;

        let dim = batch.dimension;
        let per = (4 * l + 2 * dtot) * n;
        let chunk_words = self.inner.device.tuning().rns_blind_rotate_chunk_bytes / 8;
        let chunk = (chunk_words / per).clamp(1, batch.len());
        let mut out = Vec::with_capacity(batch.len());
        // One page-locked buffer (the backend's, kept between calls): chunk k − 1's
        // accumulators become polynomials while the device runs chunk k (its launches are
        // queued first), then chunk k's download reuses the buffer.
        let mut staging = self
            .inner
            .rbr_staging
            .lock()
            .map_err(|_| CudaError::Unsupported {
                what: "a poisoned staging buffer lock".into(),
            })?;
        let staged = chunk * 2 * l * n;
        if staging.as_ref().is_none_or(|b| b.len() < staged) {
            *staging = None;
            // SAFETY: every word is written by a download before it is read.
            *staging = Some(unsafe {
                self.inner
                    .stream
                    .context()
                    .alloc_pinned_with_flags::<u64>(staged, 0)
                    .map_err(drv("pinned alloc"))?
            });
        }
        let mut spare = staging.take();
        let mut pending: Option<(PinnedHostSlice<u64>, CudaEvent, usize)> = None;
        for start in (0..batch.len()).step_by(chunk) {
            let cnt = chunk.min(batch.len() - start);
            // Exponents by step, then sample: a_t[i·cnt + e].
            let a_t: Vec<u32> = (0..dim)
                .flat_map(|i| (0..cnt).map(move |e| (start + e, i)))
                .map(|(e, i)| batch.a[e * dim + i] as u32)
                .collect();
            let b: Vec<u32> = batch.b[start..start + cnt]
                .iter()
                .map(|&v| v as u32)
                .collect();
            let s = &self.inner.stream;
            let a_d = s
                .clone_htod(if a_t.is_empty() {
                    &[0u32][..]
                } else {
                    &a_t[..]
                })
                .map_err(drv("upload"))?;
            let b_d = s.clone_htod(&b).map_err(drv("upload"))?;
            let acc_words = cnt * 2 * l * n;
            // SAFETY: every word of acc is written by its init kernel, of T by mono / mac, of
            // D by decompose, before any read.
            let (acc, t, d) = unsafe {
                (
                    s.alloc::<u64>(acc_words).map_err(drv("alloc"))?,
                    s.alloc::<u64>(acc_words).map_err(drv("alloc"))?,
                    s.alloc::<u64>((cnt * 2 * dtot * n).max(1))
                        .map_err(drv("alloc"))?,
                )
            };
            {
                let (accp, _g1) = acc.device_ptr(s);
                let (tp, _g2) = t.device_ptr(s);
                let (dp, _g3) = d.device_ptr(s);
                let (ap, _g4) = a_d.device_ptr(s);
                let (bp, _g5) = b_d.device_ptr(s);
                let (tabp, _g6) = tab.device_ptr(s);
                let (rowp, _g7) = rows.device_ptr(s);
                let testp = test_d.ptr(s);
                let sh = rbr::Shape {
                    n: n as u32,
                    limbs: l as u32,
                    digits: dg as u32,
                    dtot: dtot as u32,
                    count: cnt as u32,
                };
                // One launch a pass over the chunk's limbs (limb x of slot period[x % P]).
                let (acc_cnt, d_cnt) = (cnt * 2 * l, cnt * 2 * dtot);
                let cx = self.cx();
                let test_spc = test_d.slots_per_component() as u32;
                rbr::init(&cx, accp, testp, test_spc, bp, sh)?;
                ntt_k::forward_strided(&cx, accp, acc_cnt, &acc_slots)?;
                let a_at = |i: usize| ap + 4 * (i * cnt) as u64;
                if dim > 0 {
                    rbr::mono(&cx, tp, accp, a_at(0), tabp, sh)?;
                }
                for i in 0..dim {
                    ntt_k::inverse_strided(&cx, tp, acc_cnt, &acc_slots)?;
                    rbr::decompose(&cx, dp, tp, tabp, sh)?;
                    ntt_k::forward_strided(&cx, dp, d_cnt, &d_slots)?;
                    let m = MacArgs {
                        acc: accp,
                        t: tp,
                        d: dp,
                        rows: rowp + 8 * (i * 2 * dg) as u64,
                        row_spc,
                        a: a_at(i),
                        a_next: if i + 1 < dim { a_at(i + 1) } else { 0 },
                        tab: tabp,
                    };
                    rbr::mac(&cx, &m, sh)?;
                }
                ntt_k::inverse_strided(&cx, accp, acc_cnt, &acc_slots)?;
            }
            // The previous chunk's polynomials, then this chunk's download (stream order: after
            // its last kernel).
            if let Some((buf, done, cnt)) = pending.take() {
                out.extend(to_polys(&ring, &buf, &done, cnt, l, level)?);
                spare = Some(buf);
            }
            let mut buf = spare.take().ok_or_else(|| CudaError::Unsupported {
                what: "a missing staging buffer".into(),
            })?;
            s.memcpy_dtoh(&acc, &mut buf).map_err(drv("download"))?;
            let done = s
                .record_event(Some(CUevent_flags::CU_EVENT_BLOCKING_SYNC))
                .map_err(drv("download"))?;
            pending = Some((buf, done, cnt));
        }
        if let Some((buf, done, cnt)) = pending.take() {
            out.extend(to_polys(&ring, &buf, &done, cnt, l, level)?);
            *staging = Some(buf);
        }
        Ok(out)
    }
}

/// The first `cnt` samples' accumulators of a downloaded chunk (sample `e`'s words at
/// `e·2·L·n`, `[c][s][k]`) as polynomials, in parallel, once the event `done` recorded after
/// the download has passed.
fn to_polys(
    ring: &RingContext,
    buf: &PinnedHostSlice<u64>,
    done: &CudaEvent,
    cnt: usize,
    l: usize,
    level: usize,
) -> Result<Vec<RnsPoly>> {
    let n = ring.n();
    done.synchronize().map_err(drv("download"))?;
    // (`as_slice` waits for the buffer's own event, which nothing records with event
    // tracking off.)
    let host = buf.as_slice().map_err(drv("download"))?;
    host[..cnt * 2 * l * n]
        .par_chunks(2 * l * n)
        .map(|w| {
            let mut p = ring.zeros(Shape {
                components: 2,
                level,
                extended: false,
            })?;
            for c in 0..2 {
                for sl in 0..l {
                    let off = (c * l + sl) * n;
                    p.limb_mut(c, sl).copy_from_slice(&w[off..off + n]);
                }
            }
            Ok(p)
        })
        .collect()
}
