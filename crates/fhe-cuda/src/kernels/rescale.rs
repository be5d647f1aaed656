//! CKKS's rescale and BGV's modulus switch fused around the forward NTT of their correction
//! (`ntt_fwd_rescale_r8_S`, instantiated by `kernels/ntt.cu` from the forward pass with the
//! `FUSED_RESCALE` load and store): the correction is lifted as the first pass loads it and the
//! last pass stores the rescaled output, which this module owns.

use super::Ctx;
use super::ntt::{
    FusedArgs, FusedLimb, MAX_FUSED_SLOTS, RESCALE_LOAD, RESCALE_STORE, forward_fused,
    fused_passes_available,
};
use crate::error::Result;

/// Whether [`forward_rescale`] runs the fused passes from `level` on this ring (the
/// register-blocked passes cover it and the level's constants fit `FusedArgs`).
pub(crate) fn rescale_fusable(cx: &Ctx, level: usize) -> bool {
    fused_passes_available(cx.n.trailing_zeros()) && level <= MAX_FUSED_SLOTS
}

/// One limb of [`forward_rescale`]: the coefficient-form top limb of its component (`top`), a
/// temporary limb (`tmp`, between the two passes) and the output limb (`out`), of slot `slot`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RescaleLimb {
    pub top: u64,
    pub tmp: u64,
    pub out: u64,
    pub slot: u32,
}

/// CKKS's rescale fused around the forward NTT of its correction: for each limb,
/// `out <- (out - NTT(((top + q_l/2) mod q_i) - (q_l/2 mod q_i)))·q_l^-1` (the residues of
/// `elementwise_rescale_prepare`, `forward`, `elementwise_rescale_finish`). Returns `false`
/// (nothing enqueued) when the register-blocked passes are off or do not cover the ring, so the
/// caller runs the separate kernels.
/// With `tq` (BGV's modulus switch: `t·q_l^-1 mod q_s` as `(value, shoup)` by slot, the top
/// limb already scaled by `t^-1`), the store is `out·q_l^-1 - ntt·(t·q_l^-1)` instead.
/// With `src_delta` nonzero, the old `out` words are read `src_delta` words away (the input
/// buffer of an out-of-place rescale, laid out like the output) and `out` is only written.
pub(crate) fn forward_rescale(
    cx: &Ctx,
    limbs: &[RescaleLimb],
    level: usize,
    tq: Option<&[(u64, u64)]>,
    src_delta: i64,
) -> Result<bool> {
    if !rescale_fusable(cx, level) {
        return Ok(false);
    }
    let mut fa = FusedArgs {
        rconsts: cx.t(cx.layout.rescale[level]),
        level: level as u32,
        src_delta,
        ..FusedArgs::default()
    };
    if let Some(tq) = tq {
        fa.use_t = 1;
        for (s, &(w, ws)) in tq.iter().enumerate().take(MAX_FUSED_SLOTS) {
            fa.tq_w[s] = w;
            fa.tq_ws[s] = ws;
        }
    }
    let l: Vec<FusedLimb> = limbs
        .iter()
        .map(|x| (x.top, x.tmp, x.out, x.slot))
        .collect();
    forward_fused(cx, &l, RESCALE_LOAD, RESCALE_STORE, fa)?;
    Ok(true)
}
