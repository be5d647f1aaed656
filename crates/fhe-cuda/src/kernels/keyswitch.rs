//! Launch wrappers of `kernels/keyswitch.cu`.

use super::elementwise::Scalars;
use super::{Ctx, LimbSet, grid, launch};
use crate::error::{Error, Result};
use crate::tables::ConvLayout;
use cudarc::driver::LaunchConfig;

/// `TARGETS_PER_BLOCK` of keyswitch.cu.
const TARGETS_PER_BLOCK: u32 = 8;
/// `PREPARE_CHUNK` of keyswitch.cu.
const PREPARE_CHUNK: u32 = 4;
/// `MAX_FROM` of keyswitch.cu.
const MAX_FROM: usize = 64;

/// Unrolled conversion kernels `keyswitch_convert_f1` ..= `_f16` of keyswitch.cu, by source
/// count.
const CONVERT_UNROLLED: [&str; 16] = [
    "keyswitch_convert_f1",
    "keyswitch_convert_f2",
    "keyswitch_convert_f3",
    "keyswitch_convert_f4",
    "keyswitch_convert_f5",
    "keyswitch_convert_f6",
    "keyswitch_convert_f7",
    "keyswitch_convert_f8",
    "keyswitch_convert_f9",
    "keyswitch_convert_f10",
    "keyswitch_convert_f11",
    "keyswitch_convert_f12",
    "keyswitch_convert_f13",
    "keyswitch_convert_f14",
    "keyswitch_convert_f15",
    "keyswitch_convert_f16",
];

/// `MAX_TPB` of keyswitch.cu: targets per block of the unrolled conversions, at most.
const MAX_TPB: u32 = 32;

/// Targets per block of an unrolled conversion of `to_cnt` targets over `threads` threads
/// (coefficients times batched conversions): the fewest groups that respect [`MAX_TPB`] and
/// `min_threads` ([`crate::Tuning::convert_min_threads`]), balanced.
fn targets_per_block(to_cnt: u32, threads: u32, min_threads: u32) -> u32 {
    let groups = to_cnt
        .div_ceil(MAX_TPB)
        .max(min_threads.div_ceil(threads.max(1)))
        .clamp(1, to_cnt.max(1));
    to_cnt.div_ceil(groups).max(1)
}

/// Word strides between the conversions of one batched launch (grid z): the z-th conversion
/// reads `input + z·input`, writes `out + z·out`, copies `cp_src + z·cp_src` to
/// `cp_dst + z·cp_dst` and, fused with the rescale, reads the top limb at `top + z·top`.
/// Mirrors `struct ConvStrides` of keyswitch.cu (which also moves every table pointer by
/// `z·table` and the first source slot by `z·from_slot`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ConvStrides {
    pub input: u64,
    pub out: u64,
    pub cp_src: u64,
    pub cp_dst: u64,
    pub top: u64,
    /// Word distance between consecutive conversions' tables (mod_up digits of one size).
    pub table: u64,
    /// Slot distance between consecutive conversions' first sources.
    pub from_slot: u64,
}

impl ConvStrides {
    /// The table stride of two conversions laid out one after the other with the same shape:
    /// `Some(words)` when every table of `b` is the same distance after `a`'s.
    pub(crate) fn table_stride(a: &ConvLayout, b: &ConvLayout) -> Option<u64> {
        let d = b.qhatinv.checked_sub(a.qhatinv)?;
        let same = a.from_cnt == b.from_cnt
            && a.to_cnt == b.to_cnt
            && a.q_mod_p.is_none()
            && b.q_mod_p.is_none()
            && b.h.checked_sub(a.h) == Some(d)
            && b.to_slots.checked_sub(a.to_slots) == Some(d)
            && b.h_in.checked_sub(a.h_in) == Some(d)
            && b.h_out.checked_sub(a.h_out) == Some(d)
            && match (a.mma_frag, b.mma_frag) {
                (Some(x), Some(y)) => y.checked_sub(x) == Some(d),
                (x, y) => x.is_none() && y.is_none(),
            };
        same.then_some(d as u64)
    }
}
// SAFETY: plain repr(C) u64 fields matching `struct ConvStrides` of keyswitch.cu.
unsafe impl cudarc::driver::DeviceRepr for ConvStrides {}

/// The conversion kernel for `from_cnt` sources: the unrolled one when there is one and the
/// tuning takes it on this ring ([`crate::Tuning::convert_unrolled`]), else the generic
/// `keyswitch_convert`.
fn convert_kernel(cx: &Ctx, from_cnt: usize) -> &'static str {
    let on = cx.dev.tuning().convert_unrolled(cx.n as usize);
    match from_cnt
        .checked_sub(1)
        .and_then(|i| CONVERT_UNROLLED.get(i))
    {
        Some(name) if on => name,
        _ => "keyswitch_convert",
    }
}

/// The tensor-core conversion kernels `keyswitch_convert_mma_k1` ..= `_k4` of keyswitch.cu
/// (convert_mma.cuh), by k32 chunks of four sources.
const CONVERT_MMA: [&str; 4] = [
    "keyswitch_convert_mma_k1",
    "keyswitch_convert_mma_k2",
    "keyswitch_convert_mma_k3",
    "keyswitch_convert_mma_k4",
];

/// `MMA_BLOCK` of mma.cuh: threads (and coefficients) a block of the tensor-core conversions.
pub(crate) const MMA_BLOCK: u32 = 256;

/// The tensor-core conversion for `from_cnt` sources, where it applies: a device of sm_80 or
/// later (8-bit integer `mma.m16n8k32`), a ring degree that is a multiple of [`MMA_BLOCK`], at
/// most 16 sources, and the tuning's bounds ([`crate::Tuning::convert_mma`]).
fn convert_mma_kernel(cx: &Ctx, from_cnt: usize) -> Option<&'static str> {
    let on = has_int8_mma(cx)
        && cx.n.is_multiple_of(MMA_BLOCK)
        && cx.dev.tuning().convert_mma(cx.n as usize, from_cnt);
    on.then(|| CONVERT_MMA.get(from_cnt.checked_sub(1)? / 4).copied())
        .flatten()
}

/// Whether the device has the 8-bit integer `mma.m16n8k32` of mma.cuh (sm_80 or later).
pub(crate) fn has_int8_mma(cx: &Ctx) -> bool {
    cx.dev.capability() >= 80
}

/// Dynamic shared memory of a tensor-core conversion launch with `tpb` targets a block: the B
/// fragments (256 bytes a target and chunk of four sources) and 8 words of constants a target,
/// for `tpb + 1` targets (the fused rescale's extra row).
fn mma_shared_bytes(tpb: u32, from_cnt: usize) -> u32 {
    let chunks = from_cnt.div_ceil(4) as u32;
    (tpb + 1) * (chunks * 256 + 64)
}

/// The rescale that mod_down's conversion prepares (see [`convert`]).
#[derive(Clone, Copy, Default)]
pub(crate) struct RescaleTop {
    /// Address of the coefficient-form top limb `w` (first component; the batch strides give
    /// the second), scaled by `t^-1` where `t_table` is set.
    pub w: u64,
    /// The level being dropped.
    pub level: usize,
    /// BGV's t-preserving switch: address of `(t mod q_s, shoup)` pairs by slot, or 0.
    pub t_table: u64,
}

/// `keyswitch_convert(in, n, from_slot0, from_cnt, qhatinv, qhatinv_shoup, h, to_slots, to_cnt,
/// h_in, h_out, out, slots)`: `input` points at the first source limb (consecutive limbs), `out` at the
/// component whose target slots receive the results.
/// `copy` = `(src, dst, count)`: limbs the first target group also copies (0 for none);
/// `batch` = `(count, strides)` runs `count` conversions of the same shape in one launch.
/// The unrolled kernels group [`targets_per_block`] targets per block; the generic one 8.
/// `rescale_top` asks for the fused mod_down rescale output (z of
/// `keyswitch_mod_down_rescale_prepare`); it is honoured only by the unrolled kernels, and the
/// return value says whether it was (else the caller runs the prepare kernel).
pub(crate) fn convert(
    cx: &Ctx,
    conv: &ConvLayout,
    input: u64,
    out: u64,
    copy: (u64, u64, u32),
    rescale_top: Option<RescaleTop>,
    batch: (u32, ConvStrides),
) -> Result<bool> {
    let (cp_src, cp_dst, cp_cnt) = copy;
    if conv.from_cnt > MAX_FROM {
        return Err(Error::Unsupported {
            what: format!(
                "basis conversion from {} limbs (at most {MAX_FROM})",
                conv.from_cnt
            ),
        });
    }
    // With the rescale the kernel takes the fragments of the P^-1-scaled rows.
    let frag = match rescale_top {
        Some(_) => conv.mma_frag_pinv,
        None => conv.mma_frag,
    };
    let mma = frag.and_then(|f| Some((convert_mma_kernel(cx, conv.from_cnt)?, cx.t(f))));
    let name = mma.map_or_else(|| convert_kernel(cx, conv.from_cnt), |(name, _)| name);
    let unrolled = name != "keyswitch_convert";
    let f = cx.dev.function("keyswitch", name)?;
    let (from_slot0, from_cnt, to_cnt) = (
        conv.from_slot0 as u32,
        conv.from_cnt as u32,
        conv.to_cnt as u32,
    );
    let (qhi, qhis, h, ts) = (
        cx.t(conv.qhatinv),
        cx.t(conv.qhatinv + conv.from_cnt),
        cx.t(conv.h),
        cx.t(conv.to_slots),
    );
    let (h_in, h_out) = (cx.t(conv.h_in), cx.t(conv.h_out));
    let qmodp = conv.q_mod_p.map_or(0u64, |o| cx.t(o));
    let slots = cx.slots();
    let n = cx.n;
    let tuning = cx.dev.tuning();
    let (block, tpb) = if unrolled {
        (
            tuning.convert_block,
            targets_per_block(
                to_cnt,
                n.saturating_mul(batch.0.max(1)),
                tuning.convert_min_threads(conv.q_mod_p.is_some(), conv.from_cnt, n),
            ),
        )
    } else {
        (super::BLOCK, TARGETS_PER_BLOCK)
    };
    let (block, shared_mem_bytes) = match mma {
        Some(_) => (MMA_BLOCK, mma_shared_bytes(tpb, conv.from_cnt)),
        None => (block, 0),
    };
    let cfg = LaunchConfig {
        grid_dim: (n.div_ceil(block), to_cnt.div_ceil(tpb), batch.0.max(1)),
        block_dim: (block, 1, 1),
        shared_mem_bytes,
    };
    let RescaleTop {
        w: top_w,
        level,
        t_table: tq,
    } = rescale_top.unwrap_or_default();
    let pinv = rescale_top.map_or(0, |r| cx.t(cx.layout.p_inv[r.level]));
    let level = level as u32;
    let frag = mma.map_or(0, |(_, f)| f);
    // One argument list for both kernel families; the tensor-core kernels take their fragments
    // as one more argument.
    macro_rules! launch_convert {
        ($($extra:expr),*) => {
            launch!(
                cx.stream, f, cfg, &input, &n, &from_slot0, &from_cnt, &qhi, &qhis, &h, &ts,
                &to_cnt, &h_in, &h_out, &qmodp, &out, &slots, &cp_src, &cp_dst, &cp_cnt, &top_w,
                &level, &pinv, &tq, &batch.1, &tpb,
                $($extra),*
            )
        };
    }
    if mma.is_some() {
        launch_convert!(&frag)?;
    } else {
        launch_convert!()?;
    }
    // The generic kernel takes the three rescale parameters too, and ignores them.
    Ok(unrolled && rescale_top.is_some())
}

/// `keyswitch_key_product(LimbSet acc, ext, ext_spc, key, key_spc, digits, map, slots)`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn key_product(
    cx: &Ctx,
    acc: LimbSet,
    ext: u64,
    ext_spc: u32,
    key: u64,
    key_spc: u32,
    digits: u32,
    map: u64,
    assign: bool,
) -> Result<()> {
    let assign = assign as u32;
    let f = cx.dev.function("keyswitch", "keyswitch_key_product")?;
    let slots = cx.slots();
    launch!(
        cx.stream,
        f,
        grid(cx.n, acc.count()),
        &acc,
        &ext,
        &ext_spc,
        &key,
        &key_spc,
        &digits,
        &map,
        &assign,
        &slots
    )
}

/// The `(tp, use_t)` arguments of the finish kernels: `t·P^-1 mod q_s` by slot (the layout of
/// [`Scalars`], indexed by slot) for BGV's t-preserving mod_down, or unused zeros.
pub(crate) fn t_args(t_pairs: Option<&Scalars>) -> Result<(Scalars, u32)> {
    Ok(match t_pairs {
        Some(tp) => (*tp, 1),
        None => (Scalars::new(&[])?, 0),
    })
}

/// `keyswitch_mod_down_finish(LimbSet out, LimbSet acc, LimbSet conv, pinv, SlotPairs tp,
/// u32 use_t, slots)`; `t_pairs` as in [`t_args`].
pub(crate) fn mod_down_finish(
    cx: &Ctx,
    out: LimbSet,
    acc: LimbSet,
    conv: LimbSet,
    level: usize,
    t_pairs: Option<&Scalars>,
) -> Result<()> {
    let f = cx.dev.function("keyswitch", "keyswitch_mod_down_finish")?;
    let slots = cx.slots();
    let pinv = cx.t(cx.layout.p_inv[level]);
    let (tp, use_t) = t_args(t_pairs)?;
    launch!(
        cx.stream,
        f,
        grid(cx.n, out.count()),
        &out,
        &acc,
        &conv,
        &pinv,
        &tp,
        &use_t,
        &slots
    )
}

/// `keyswitch_mod_down_top(LimbSet top, LimbSet out, LimbSet acc, pinv, slots)`.
pub(crate) fn mod_down_top(
    cx: &Ctx,
    top: LimbSet,
    out: LimbSet,
    acc: LimbSet,
    level: usize,
) -> Result<()> {
    let f = cx.dev.function("keyswitch", "keyswitch_mod_down_top")?;
    let slots = cx.slots();
    let pinv = cx.t(cx.layout.p_inv[level]);
    launch!(
        cx.stream,
        f,
        grid(cx.n, top.count()),
        &top,
        &out,
        &acc,
        &pinv,
        &slots
    )
}

/// `keyswitch_mod_down_rescale_prepare(conv, cspc, LimbSet top, level, pinv, tq, slots)`;
/// `t_table` as in [`RescaleTop`].
pub(crate) fn mod_down_rescale_prepare(
    cx: &Ctx,
    conv: u64,
    cspc: u32,
    top: LimbSet,
    level: usize,
    t_table: u64,
) -> Result<()> {
    let f = cx
        .dev
        .function("keyswitch", "keyswitch_mod_down_rescale_prepare")?;
    let slots = cx.slots();
    let pinv = cx.t(cx.layout.p_inv[level]);
    let l = level as u32;
    launch!(
        cx.stream,
        f,
        grid(cx.n, 2 * l.div_ceil(PREPARE_CHUNK)),
        &conv,
        &cspc,
        &top,
        &l,
        &pinv,
        &t_table,
        &slots
    )
}

/// `keyswitch_mod_down_rescale_finish(LimbSet out, LimbSet acc, LimbSet z, pinv, rs, slots)`.
pub(crate) fn mod_down_rescale_finish(
    cx: &Ctx,
    out: LimbSet,
    acc: LimbSet,
    z: LimbSet,
    level: usize,
) -> Result<()> {
    let f = cx
        .dev
        .function("keyswitch", "keyswitch_mod_down_rescale_finish")?;
    let slots = cx.slots();
    let pinv = cx.t(cx.layout.p_inv[level]);
    let rs = cx.t(cx.layout.rescale[level]);
    let l = level as u32;
    launch!(
        cx.stream,
        f,
        grid(cx.n, out.count()),
        &out,
        &acc,
        &z,
        &pinv,
        &rs,
        &l,
        &slots
    )
}

/// `keyswitch_mod_down_finish_rot(LimbSet out, LimbSet acc, LimbSet conv, LimbSet src, map,
/// pinv, SlotPairs tp, u32 use_t, slots)`; `t_pairs` as in [`t_args`].
#[allow(clippy::too_many_arguments)]
pub(crate) fn mod_down_finish_rot(
    cx: &Ctx,
    out: LimbSet,
    acc: LimbSet,
    conv: LimbSet,
    src: LimbSet,
    map: u64,
    level: usize,
    t_pairs: Option<&Scalars>,
) -> Result<()> {
    let f = cx
        .dev
        .function("keyswitch", "keyswitch_mod_down_finish_rot")?;
    let slots = cx.slots();
    let pinv = cx.t(cx.layout.p_inv[level]);
    let (tp, use_t) = t_args(t_pairs)?;
    launch!(
        cx.stream,
        f,
        grid(cx.n, out.count()),
        &out,
        &acc,
        &conv,
        &src,
        &map,
        &pinv,
        &tp,
        &use_t,
        &slots
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mod_down_conversions_from_few_primes_take_two_target_groups() {
        let convert_min_threads =
            |exact, from, n| crate::Tuning::MEASURED.convert_min_threads(exact, from, n);
        // PHANTOM_N16's mod_down: 3 special primes to 27 targets over 2·2^16 threads.
        let n = 1 << 16;
        assert_eq!(
            targets_per_block(27, 2 * n, convert_min_threads(true, 3, n)),
            14
        );
        // N16_L24_D3's: 7 special primes, one group.
        assert_eq!(
            targets_per_block(25, 2 * n, convert_min_threads(true, 7, n)),
            25
        );
        // CAT's (N = 2^15, 3 special primes, 17 targets): two groups, as before.
        let n = 1 << 15;
        assert_eq!(
            targets_per_block(17, 2 * n, convert_min_threads(true, 3, n)),
            9
        );
        assert_eq!(
            targets_per_block(17, 2 * n, convert_min_threads(false, 3, n)),
            9
        );
        // mod_up (inexact): 23 targets of a batched pair of digits at 2^16, one group.
        assert_eq!(
            targets_per_block(23, 2 << 16, convert_min_threads(false, 9, 1 << 16)),
            23
        );
    }

    /// The tensor-core conversions' dynamic shared memory stays under the 48 KiB a launch may
    /// take without opting in, for the most targets a block (`MAX_TPB`) and sources (16).
    #[test]
    fn mma_shared_memory_fits_without_opt_in() {
        assert!(mma_shared_bytes(MAX_TPB, 16) <= 48 * 1024);
        assert_eq!(mma_shared_bytes(0, 5), 2 * 256 + 64);
        assert_eq!(CONVERT_MMA.len() * 4, 16);
    }
}
