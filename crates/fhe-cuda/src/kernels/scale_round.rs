//! Launch wrapper of `kernels/scale_round.cu` and the device tables of one
//! [`ScaleRoundTables`]: the basis `Q ∪ B` laid out like the ring's table buffer (slots, NTT
//! twiddles and constants), so the NTT, tensor and exact basis-conversion kernels run over it
//! unchanged, plus the two conversions and the scale-and-round constants.

use super::{Ctx, launch};
use crate::error::Result;
use crate::tables::{ConvLayout, TableLayout, push_conv, push_slots_and_ntt};
use cudarc::driver::LaunchConfig;
use fhe_math::ntt::NttTable;
use fhe_math::ring::RingContext;
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
    /// `t·Q^-1 mod b_k`, then their Shoup companions.
    pub tqinv: usize,
    /// The B fragments of `omega` (targets B, sources Q) for [`to_q`] on the tensor cores
    /// ([`super::mma::mma_fragments`]).
    pub omega_frag: Option<usize>,
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
    let o = push_slots_and_ntt(&mut buf, &ntts);
    let (hqq, hqb, hbb, hbq) = t.half_offsets();
    let to_b: Vec<usize> = (ql..ql + bl).collect();
    let to_q: Vec<usize> = (0..ql).collect();
    let q_to_b = push_conv(&mut buf, t.q_to_b(), 0, &to_b, hqq, hqb, true);
    let b_to_q = push_conv(&mut buf, t.b_to_q(), ql, &to_q, hbb, hbq, true);
    let qbhat = buf.len();
    buf.extend(t.qb_hat_inv().iter().map(|p| p.0));
    buf.extend(t.qb_hat_inv().iter().map(|p| p.1));
    let theta = buf.len();
    buf.extend_from_slice(t.theta());
    let omega = buf.len();
    buf.extend_from_slice(t.omega());
    let tqinv = buf.len();
    buf.extend_from_slice(t.t_q_inv());
    buf.extend(
        t.t_q_inv()
            .iter()
            .zip(t.aux_moduli())
            .map(|(&w, m)| m.shoup(w)),
    );
    // The tensor-core kernel adds a rounding term below 2^65 before `mma_reduce`, whose bound
    // needs b_k >= 2^35 (the auxiliary primes have 60 bits).
    let wide_b = t.aux_moduli().iter().all(|m| m.value() >= 1 << 35);
    let omega_frag = wide_b
        .then(|| super::mma::mma_fragments(t.omega(), t.aux_moduli()))
        .flatten()
        .map(|f| {
            let o = buf.len();
            buf.extend_from_slice(&f);
            o
        });
    let layout = SrLayout {
        ring: TableLayout::ntt_only(o),
        q_to_b,
        b_to_q,
        qbhat,
        theta,
        omega,
        tqinv,
        omega_frag,
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

/// `SRQ_MAX` of scale_round.cu: most `Q` and `B` limbs of the one-pass scale-and-round.
const SRQ_MAX: usize = 16;

/// `SRQ_MMA_BLOCK` of scale_round.cu: threads (coefficients) a block of
/// `scale_round_to_q_mma`; the ring degree must be a multiple of it.
const SRQ_MMA_BLOCK: u32 = 128;

/// Dynamic shared memory of `scale_round_to_q_mma`: each warp's `bl` rows of 32 words (its
/// coefficients' `d_k`, then `v_k`) and one stage's fragments, `max(bl, ql)` targets of
/// `SRQ_MAX / 4` chunks of 32 words.
fn srq_mma_shared_bytes(ql: usize, bl: usize) -> u32 {
    let warps = (SRQ_MMA_BLOCK / 32) as usize;
    let words = warps * bl * 32 + ql.max(bl) * (SRQ_MAX / 4) * 32;
    (8 * words) as u32
}

/// Whether [`to_q`] takes the tables of `sr` (`Q` and `B` of at most `SRQ_MAX` limbs; else the
/// two kernels run).
pub(crate) fn to_q_fits(sr: &SrLayout) -> bool {
    sr.ql <= SRQ_MAX && sr.bl <= SRQ_MAX
}

/// `scale_round_to_q`: the scale-and-round into `B` and the exact `B -> Q` conversion in one
/// launch over the 3 components of `d` (`[3][ql + bl][n]`, coefficient form), writing component
/// `c`'s limb `j` at `out + (c·out_stride + j)·n` words. The caller checks [`to_q_fits`].
/// On sm_80 and later the sums run on the tensor cores (`scale_round_to_q_mma`, the same words),
/// else in the integer kernel.
pub(crate) fn to_q(cx: &Ctx, sr: &SrLayout, d: u64, out: u64, out_stride: u32) -> Result<()> {
    let mma = match (sr.omega_frag, sr.b_to_q.mma_frag) {
        (Some(o), Some(h))
            if super::keyswitch::has_int8_mma(cx) && cx.n.is_multiple_of(SRQ_MMA_BLOCK) =>
        {
            Some((cx.t(o), cx.t(h)))
        }
        _ => None,
    };
    let name = if mma.is_some() {
        "scale_round_to_q_mma"
    } else {
        "scale_round_to_q"
    };
    let f = cx.dev.function("scale_round", name)?;
    let (n, ql, bl) = (cx.n, sr.ql as u32, sr.bl as u32);
    let conv = &sr.b_to_q;
    let Some(bmodq) = conv.q_mod_p else {
        return Err(crate::error::Error::Unsupported {
            what: "a scale-and-round whose B -> Q conversion is not exact".into(),
        });
    };
    let args = [
        cx.t(sr.qbhat),
        cx.t(sr.theta),
        cx.t(sr.omega),
        cx.t(sr.tqinv),
        cx.t(conv.qhatinv),
        cx.t(conv.h),
        cx.t(conv.h_in),
        cx.t(conv.h_out),
        cx.t(bmodq),
    ];
    let [qbhat, theta, omega, tqinv, b_qhatinv, h, h_in, h_out, bmodq] = args;
    // The tensor-core kernel takes the fragments in place of the matrices.
    let (omega, h, block, shared_mem_bytes) = match mma {
        Some((omega_frag, h_frag)) => (
            omega_frag,
            h_frag,
            SRQ_MMA_BLOCK,
            srq_mma_shared_bytes(sr.ql, sr.bl),
        ),
        None => (omega, h, super::BLOCK, 0),
    };
    let slots = cx.slots();
    let cfg = LaunchConfig {
        grid_dim: (n.div_ceil(block), 1, 3),
        block_dim: (block, 1, 1),
        shared_mem_bytes,
    };
    launch!(
        cx.stream,
        f,
        cfg,
        &d,
        &n,
        &ql,
        &bl,
        &qbhat,
        &theta,
        &omega,
        &tqinv,
        &b_qhatinv,
        &h,
        &h_in,
        &h_out,
        &bmodq,
        &out,
        &out_stride,
        &slots
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `scale_round_to_q_mma`'s shared memory (the dynamic part and its static target tables,
    /// 2.6 KiB in sm_90's CUBIN, counted as 4 KiB) stays under the 48 KiB a launch takes without
    /// opting in, at the most limbs it takes, and leaves room for 6 blocks (24 warps) an SM of
    /// 228 KiB (1 KiB reserved a block).
    #[test]
    fn srq_mma_shared_memory_fits() {
        let total = srq_mma_shared_bytes(SRQ_MAX, SRQ_MAX) + 4096;
        assert!(total <= 48 * 1024, "{total}");
        assert!(6 * (total + 1024) <= 228 * 1024, "{total}");
        assert_eq!(
            srq_mma_shared_bytes(14, 15),
            8 * (4 * 15 * 32 + 15 * 4 * 32)
        );
    }
}
