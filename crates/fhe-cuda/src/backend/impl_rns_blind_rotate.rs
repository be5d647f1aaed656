//! [`RnsBlindRotateBackend`] on the device: a whole batch of blind rotations per call, the
//! accumulators in NTT form on the device through all steps, the RGSW rows read where the
//! key already lives (device polynomials). Per step — a pair of LWE coefficients, three keys
//! (key unrolling) — for the whole batch ([`crate::kernels::rns_blind_rotate`]): the inverse
//! NTTs of `T = acc`, the exact RNS digit decomposition, the first forward NTT pass of the
//! digit limbs outside their groups, and the multiply-accumulate with their last pass fused in
//! (`mac_fused`: the NTT-form digits never reach memory; the three keys' rows combined with
//! their factors `X^{e_k} − 1`), which also writes the next step's `T`. Each NTT pass is one
//! launch over the whole chunk (`ntt::forward_strided_first` / `inverse_strided`: the limbs lie
//! `n` words apart, their slots repeat with the period of a sample's limbs). Every limb is below
//! 2^42: the decomposition and the products are exact in double precision. The accumulators
//! come back through a page-locked buffer, converted to polynomials while the device runs the
//! next chunk. The words are the reference's (exact arithmetic).

use super::*;
use crate::kernels::ntt as ntt_k;
use crate::kernels::rns_blind_rotate::{self as rbr, MacArgs};
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent, PinnedHostSlice};
use fhe_math::backend::rns_blind_rotate::{
    KEYS_PER_PAIR, PackKeys, RnsBlindRotateBackend, RnsGadget, RnsRotationBatch, check_pack_args,
    check_rns_blind_rotate_args, pack_rows,
};
use rayon::prelude::*;
use std::sync::MutexGuard;

/// What every chunk of one call reads: the kernels' table, the test polynomial, the key rows'
/// addresses, the strided NTTs' slot periods.
struct RotationSetup {
    tab: CudaSlice<u64>,
    /// The table's words (the packing reads the exponents from them).
    words: Vec<u64>,
    test: DevicePoly,
    rows: CudaSlice<u64>,
    row_spc: u32,
    /// The slots of a sample's limbs: acc and T by limb.
    acc_slots: Vec<u32>,
    /// D by digit limb (digit j's limbs outside its group, in limb order).
    d_slots: Vec<u32>,
    n: usize,
    l: usize,
    digits: usize,
    /// The limbs of each digit's group.
    groups: Vec<usize>,
    level: usize,
    /// Samples a chunk (`Tuning::rns_blind_rotate_chunk_bytes` of state).
    chunk: usize,
}

impl RotationSetup {
    /// The kernels' shape for `count` samples of `comps` decomposed components.
    fn shape(&self, count: usize, comps: u32) -> rbr::Shape {
        rbr::Shape {
            n: self.n as u32,
            limbs: self.l as u32,
            digits: self.digits as u32,
            dtot: self.d_slots.len() as u32,
            count: count as u32,
            comps,
        }
    }
}

impl CudaBackend {
    /// The setup of one call: the tables from the device's NTT of `X`, the test polynomial and
    /// the key rows' addresses uploaded.
    fn rotation_setup(
        &self,
        gadget: &RnsGadget,
        key: &[&DevicePoly],
        test: &RnsPoly,
        batch_len: usize,
    ) -> Result<RotationSetup> {
        let ring = self.inner.ring.clone();
        rbr::check_limbs(&ring, gadget)?;
        let (n, l, level) = (ring.n(), gadget.level() + 1, gadget.level());
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
        let rowptrs: Vec<u64> = key.iter().map(|r| r.ptr(self.s())).collect();
        let rows = self.upload_words(if rowptrs.is_empty() {
            &[0u64][..]
        } else {
            &rowptrs[..]
        })?;
        let d_slots = rbr::digit_slots(gadget);
        let per = (4 * l + 2 * d_slots.len()) * n;
        let chunk_words = self.inner.device.tuning().rns_blind_rotate_chunk_bytes / 8;
        Ok(RotationSetup {
            tab,
            words,
            test: self.upload(test)?,
            rows,
            row_spc: key.first().map_or(0, |r| r.slots_per_component()) as u32,
            acc_slots: (0..l as u32).collect(),
            d_slots,
            n,
            l,
            digits: gadget.digits(),
            groups: (0..gadget.digits())
                .map(|j| gadget.group(j).len())
                .collect(),
            level,
            chunk: (chunk_words / per).clamp(1, batch_len.max(1)),
        })
    }

    /// Blind-rotates samples `start..start + cnt` of `batch` with their accumulators at the
    /// device address `accp` (`cnt·2·L·n` words), left in NTT form.
    fn rotate_chunk(
        &self,
        st: &RotationSetup,
        batch: &RnsRotationBatch,
        start: usize,
        cnt: usize,
        accp: u64,
    ) -> Result<()> {
        let (n, l, dg) = (st.n, st.l, st.digits);
        let dtot = st.d_slots.len();
        let dim = batch.dimension;
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
        // SAFETY: every word of T is written by init / mac, of D by decompose, before any read.
        let (t, d) = unsafe {
            (
                s.alloc::<u64>(cnt * 2 * l * n).map_err(drv("alloc"))?,
                s.alloc::<u64>((cnt * 2 * dtot * n).max(1))
                    .map_err(drv("alloc"))?,
            )
        };
        let (tp, _g2) = t.device_ptr(s);
        let (dp, _g3) = d.device_ptr(s);
        let (ap, _g4) = a_d.device_ptr(s);
        let (bp, _g5) = b_d.device_ptr(s);
        let (tabp, _g6) = st.tab.device_ptr(s);
        let (rowp, _g7) = st.rows.device_ptr(s);
        let testp = st.test.ptr(s);
        let sh = st.shape(cnt, 2);
        // One launch a pass over the chunk's limbs (limb x of slot period[x % P]).
        let (acc_cnt, d_cnt) = (cnt * 2 * l, cnt * 2 * dtot);
        let cx = self.cx();
        let test_spc = st.test.slots_per_component() as u32;
        // The first step's T = acc in coefficient form; acc to NTT form.
        rbr::init(&cx, tp, testp, test_spc, bp, sh)?;
        rbr::init(&cx, accp, testp, test_spc, bp, sh)?;
        ntt_k::forward_strided(&cx, accp, acc_cnt, &st.acc_slots)?;
        let a_at = |i: usize| ap + 4 * (i * cnt) as u64;
        let pairs = dim / 2;
        for p in 0..pairs {
            if p > 0 {
                ntt_k::inverse_strided(&cx, tp, acc_cnt, &st.acc_slots)?;
            }
            rbr::decompose(&cx, &st.groups, dp, tp, tabp, sh)?;
            ntt_k::forward_strided_first(&cx, dp, d_cnt, &st.d_slots)?;
            let m = MacArgs {
                acc: accp,
                t: tp,
                d: dp,
                rows: rowp + 8 * (p * KEYS_PER_PAIR * 2 * dg) as u64,
                a0: a_at(2 * p),
                a1: a_at(2 * p + 1),
                tab: tabp,
                row_spc: st.row_spc,
                write_t: u32::from(p + 1 < pairs),
            };
            rbr::mac_fused(&cx, &m, sh)?;
        }
        Ok(())
    }

    /// `PackLWEs` of the `m` accumulators at `pp` (`[e][2][L][n]`, NTT form), level by level
    /// (`rns_pack_diff`, the inverse NTTs, `decompose`, the forward NTTs, `rns_pack_mac`): the
    /// result in `P[0]`, NTT form.
    fn pack_on_device(
        &self,
        st: &RotationSetup,
        pp: u64,
        m: usize,
        pack: &PackKeys<'_, DevicePoly>,
    ) -> Result<()> {
        let (n, l) = (st.n, st.l);
        let dtot = st.d_slots.len();
        let s = &self.inner.stream;
        let levels = m.trailing_zeros() as usize;
        if levels == 0 {
            return Ok(());
        }
        // Per level: the gather of τ_{len+1} in NTT form, and the key rows' addresses.
        let perms = rbr::automorphism_gathers(&st.words, l, n, levels)?;
        let perm_d = s.clone_htod(&perms).map_err(drv("upload"))?;
        let mut rowptrs = Vec::with_capacity(levels * st.digits);
        let mut row_spc = 0;
        for lv in 1..=levels {
            for r in pack_rows(pack, (1 << lv) + 1)? {
                self.check(r)?;
                row_spc = r.slots_per_component() as u32;
                rowptrs.push(r.ptr(self.s()));
            }
        }
        let rows = self.upload_words(&rowptrs)?;
        let half_max = m / 2;
        // SAFETY: every word of T0, T1, T1c is written by rns_pack_diff and of D by decompose
        // before a read, for the pairs of each level.
        let (t0, t1, t1c, d) = unsafe {
            (
                s.alloc::<u64>(half_max * l * n).map_err(drv("alloc"))?,
                s.alloc::<u64>(half_max * l * n).map_err(drv("alloc"))?,
                s.alloc::<u64>(half_max * l * n).map_err(drv("alloc"))?,
                s.alloc::<u64>((half_max * dtot * n).max(1))
                    .map_err(drv("alloc"))?,
            )
        };
        let (t0p, _g1) = t0.device_ptr(s);
        let (t1p, _g2) = t1.device_ptr(s);
        let (t1cp, _g3) = t1c.device_ptr(s);
        let (dp, _g4) = d.device_ptr(s);
        let (tabp, _g5) = st.tab.device_ptr(s);
        let (rowp, _g6) = rows.device_ptr(s);
        let (permp, _g7) = perm_d.device_ptr(s);
        let cx = self.cx();
        for lv in 1..=levels {
            let len = 1usize << lv;
            let half = m / len;
            let sh = st.shape(half, 1);
            let level = rbr::PackLevel {
                half: half as u32,
                shift: (n / len) as u32,
                perm: permp + 4 * ((lv - 1) * n) as u64,
                rows: rowp + 8 * ((lv - 1) * st.digits) as u64,
                row_spc,
            };
            rbr::pack_diff(&cx, [t0p, t1p, t1cp], pp, &level, tabp, sh)?;
            ntt_k::inverse_strided(&cx, t1cp, half * l, &st.acc_slots)?;
            rbr::decompose(&cx, &st.groups, dp, t1cp, tabp, sh)?;
            ntt_k::forward_strided(&cx, dp, half * dtot, &st.d_slots)?;
            rbr::pack_mac(&cx, pp, [t0p, t1p, dp], &level, tabp, sh)?;
        }
        Ok(())
    }
    /// The backend's page-locked staging buffer, locked, holding at least `words` words
    /// (reallocated when shorter; its words are unspecified).
    fn staging(&self, words: usize) -> Result<MutexGuard<'_, Option<PinnedHostSlice<u64>>>> {
        let mut staging = self
            .inner
            .rbr_staging
            .lock()
            .map_err(|_| CudaError::Unsupported {
                what: "a poisoned staging buffer lock".into(),
            })?;
        if staging.as_ref().is_none_or(|b| b.len() < words) {
            *staging = None;
            // SAFETY: callers write every word they read (downloads, host fills).
            *staging = Some(unsafe {
                self.inner
                    .stream
                    .context()
                    .alloc_pinned_with_flags::<u64>(words, 0)
                    .map_err(drv("pinned alloc"))?
            });
        }
        Ok(staging)
    }

    /// `PackLWEs` of the `m` accumulators at `pp` (`[e][2][L][n]`, NTT form) on the device,
    /// then the packed polynomial downloaded in coefficient form.
    fn packed_polynomial(
        &self,
        st: &RotationSetup,
        pp: u64,
        m: usize,
        pack: &PackKeys<'_, DevicePoly>,
    ) -> Result<RnsPoly> {
        let (n, l) = (st.n, st.l);
        self.pack_on_device(st, pp, m, pack)?;
        // P[0] into a polynomial of the ring's layout (a component's limbs are consecutive in
        // both), back to coefficient form.
        let mut out = self.zeros(Shape {
            components: 2,
            level: st.level,
            extended: false,
        })?;
        let (op, spc) = (out.ptr(self.s()), out.slots_per_component());
        for c in 0..2 {
            let src = pp + 8 * (c * l * n) as u64;
            kernels::copy_words(&self.cx(), src, op + 8 * (c * spc * n) as u64, l * n)?;
        }
        self.intt(&mut out)?;
        self.download(&out)
    }
}

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
        let st = self.rotation_setup(gadget, key, test, batch.len())?;
        let ring = self.inner.ring.clone();
        let (n, l, level, chunk) = (st.n, st.l, st.level, st.chunk);
        let mut out = Vec::with_capacity(batch.len());
        // One page-locked buffer (the backend's, kept between calls): chunk k − 1's
        // accumulators become polynomials while the device runs chunk k (its launches are
        // queued first), then chunk k's download reuses the buffer.
        let mut staging = self.staging(chunk * 2 * l * n)?;
        let mut spare = staging.take();
        let mut pending: Option<(PinnedHostSlice<u64>, CudaEvent, usize)> = None;
        for start in (0..batch.len()).step_by(chunk) {
            let cnt = chunk.min(batch.len() - start);
            let s = &self.inner.stream;
            // SAFETY: every word of acc is written by the init kernel before any read.
            let acc = unsafe { s.alloc::<u64>(cnt * 2 * l * n).map_err(drv("alloc"))? };
            {
                let (accp, _g) = acc.device_ptr(s);
                self.rotate_chunk(&st, batch, start, cnt, accp)?;
                ntt_k::inverse_strided(&self.cx(), accp, cnt * 2 * l, &st.acc_slots)?;
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

    fn rns_blind_rotate_packed(
        &self,
        gadget: &RnsGadget,
        key: &[&DevicePoly],
        test: &RnsPoly,
        batch: &RnsRotationBatch,
        pack: &PackKeys<'_, DevicePoly>,
    ) -> Result<RnsPoly> {
        check_rns_blind_rotate_args(self, gadget, key, test, batch)?;
        check_pack_args(self, gadget, batch.len(), pack)?;
        for row in key {
            self.check(row)?;
        }
        let st = self.rotation_setup(gadget, key, test, batch.len())?;
        let (n, l, m) = (st.n, st.l, batch.len());
        let s = &self.inner.stream;
        // Every accumulator stays on the device for the packing: P[e][2][L][n].
        // SAFETY: every word of P is written by a chunk's init kernel before any read.
        let p = unsafe { s.alloc::<u64>(m * 2 * l * n).map_err(drv("alloc"))? };
        let (pp, _g) = p.device_ptr(s);
        for start in (0..m).step_by(st.chunk) {
            let cnt = st.chunk.min(m - start);
            self.rotate_chunk(&st, batch, start, cnt, pp + 8 * (start * 2 * l * n) as u64)?;
        }
        self.packed_polynomial(&st, pp, m, pack)
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
