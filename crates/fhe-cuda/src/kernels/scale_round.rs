//! Launch wrapper of `kernels/scale_round.cu` and the device tables of one
//! [`ScaleRoundTables`]: the basis `Q ∪ B` laid out like the ring's table buffer (slots, NTT
//! twiddles and constants), so the NTT, tensor and exact basis-conversion kernels run over it
//! unchanged, plus the two conversions and the scale-and-round constants.

use super::{Ctx, launch};
use crate::error::Result;
use crate::tables::{ConvLayout, TableLayout};
use cudarc::driver::LaunchConfig;
use fhe_math::ntt::NttTable;
use fhe_math::ring::RingContext;
use fhe_math::rns::BasisConverter;
use fhe_math::scale_round::ScaleRoundTables;

/// `SR_TARGETS` of scale_round.cu.
const SR_TARGETS: u32 = 8;

/// Offsets of the scale-and-round tables in their own buffer.
#[derive(Clone, Debug)]
pub(crate) struct SrLayout {
    /// Slots, twiddles and NTT constants of `Q ∪ B` (the other fields are empty).
    pub ring: TableLayout,
    /// `Q -> B` (slots `0..ql` to `ql..ql+bl`), centred by `⌊Q/2⌋`.
    pub q_to_b: ConvLayout,
    /// `B -> Q`, centred by `⌊B/2⌋`.
    pub b_to_q: ConvLayout,
    pub qbhat: usize,
    pub theta: usize,
    pub omega: usize,
    pub tqinv: usize,
    pub ql: usize,
    pub bl: usize,
}

/// The identity of a tables object: level, `t`, the `Q` and `B` moduli (everything else is
/// derived from these and the ring).
pub(crate) fn fingerprint(t: &ScaleRoundTables) -> Vec<u64> {
    let mut f = vec![t.level() as u64, t.t()];
    f.extend(t.moduli().iter().map(|m| m.value()));
    f.push(u64::MAX);
    f.extend(t.aux_moduli().iter().map(|m| m.value()));
    f
}

/// Builds the host image of the tables of `t` (whose `Q` moduli are the ring's first slots).
pub(crate) fn build(ring: &RingContext, t: &ScaleRoundTables) -> (Vec<u64>, SrLayout) {
    let (ql, bl) = (t.moduli().len(), t.aux_moduli().len());
    let ntts: Vec<&NttTable> = (0..ql)
        .map(|s| ring.ntt(s))
        .chain(t.aux_ntt().iter())
        .collect();
    let mut buf: Vec<u64> = Vec::new();
    let slots = buf.len();
    for m in t.moduli().iter().chain(t.aux_moduli()) {
        let (hi, lo) = m.barrett_constant();
        buf.extend_from_slice(&[m.value(), hi, lo, 0]);
    }
    let push_all = |buf: &mut Vec<u64>, f: &dyn Fn(&NttTable) -> Vec<u64>| {
        let off = buf.len();
        for x in &ntts {
            buf.extend(f(x));
        }
        off
    };
    let fwd = push_all(&mut buf, &|x| x.forward_twiddles().to_vec());
    let fwd_shoup = push_all(&mut buf, &|x| x.forward_twiddles_shoup().to_vec());
    let inv = push_all(&mut buf, &|x| x.inverse_twiddles().to_vec());
    let inv_shoup = push_all(&mut buf, &|x| x.inverse_twiddles_shoup().to_vec());
    let ntt_consts = push_all(&mut buf, &|x| {
        vec![
            x.n_inv(),
            x.n_inv_shoup(),
            x.inverse_final_twiddle(),
            x.inverse_final_twiddle_shoup(),
        ]
    });
    let push_conv = |buf: &mut Vec<u64>,
                     conv: &BasisConverter,
                     from_slot0: usize,
                     to_slots: std::ops::Range<usize>,
                     h_in: &[u64],
                     h_out: &[u64]| {
        let qhatinv = buf.len();
        buf.extend_from_slice(conv.q_hat_inv());
        buf.extend_from_slice(conv.q_hat_inv_shoup());
        let h = buf.len();
        buf.extend_from_slice(conv.q_hat_mod_p());
        let ts = buf.len();
        let to_cnt = to_slots.len();
        buf.extend(to_slots.map(|s| s as u64));
        let hi = buf.len();
        buf.extend_from_slice(h_in);
        let ho = buf.len();
        buf.extend_from_slice(h_out);
        let qmp = buf.len();
        buf.extend_from_slice(conv.q_mod_p());
        ConvLayout {
            from_slot0,
            from_cnt: conv.from().len(),
            qhatinv,
            h,
            to_slots: ts,
            to_cnt,
            h_in: hi,
            h_out: ho,
            q_mod_p: Some(qmp),
        }
    };
    let (hqq, hqb, hbb, hbq) = t.half_offsets();
    let q_to_b = push_conv(&mut buf, t.q_to_b(), 0, ql..ql + bl, hqq, hqb);
    let b_to_q = push_conv(&mut buf, t.b_to_q(), ql, 0..ql, hbb, hbq);
    let qbhat = buf.len();
    buf.extend(t.qb_hat_inv().iter().map(|p| p.0));
    buf.extend(t.qb_hat_inv().iter().map(|p| p.1));
    let theta = buf.len();
    buf.extend_from_slice(t.theta());
    let omega = buf.len();
    buf.extend_from_slice(t.omega());
    let tqinv = buf.len();
    buf.extend_from_slice(t.t_q_inv());
    let layout = SrLayout {
        ring: TableLayout {
            slots,
            fwd,
            fwd_shoup,
            inv,
            inv_shoup,
            ntt_consts,
            rescale: Vec::new(),
            mod_down: Vec::new(),
            p_inv: Vec::new(),
            mod_up: Vec::new(),
            cdt: 0,
        },
        q_to_b,
        b_to_q,
        qbhat,
        theta,
        omega,
        tqinv,
        ql,
        bl,
    };
    (buf, layout)
}

/// `scale_round_to_b(d, n, ql, bl, qbhat, theta, omega, tqinv, r, slots)` over the 3
/// components: `cx` is the context of the scale-and-round table buffer.
pub(crate) fn to_b(cx: &Ctx, sr: &SrLayout, d: u64, r: u64) -> Result<()> {
    let f = cx.dev.function("scale_round", "scale_round_to_b")?;
    let (n, ql, bl) = (cx.n, sr.ql as u32, sr.bl as u32);
    let (qbhat, theta, omega, tqinv, slots) = (
        cx.t(sr.qbhat),
        cx.t(sr.theta),
        cx.t(sr.omega),
        cx.t(sr.tqinv),
        cx.slots(),
    );
    let cfg = LaunchConfig {
        grid_dim: (n.div_ceil(super::BLOCK), bl.div_ceil(SR_TARGETS), 3),
        block_dim: (super::BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    launch!(
        cx.stream, f, cfg, &d, &n, &ql, &bl, &qbhat, &theta, &omega, &tqinv, &r, &slots
    )
}
