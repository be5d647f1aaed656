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

/// Threads per block of the unrolled conversion kernels (`FHE_CONVERT_BLOCK` overrides it for
/// tuning runs: 32..=256, a power of two; the kernels for 10 or more sources are compiled for
/// blocks of at most 256).
fn convert_block() -> u32 {
    static B: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *B.get_or_init(|| {
        std::env::var("FHE_CONVERT_BLOCK")
            .ok()
            .and_then(|v| v.parse::<u32>().ok())
            .filter(|b| b.is_power_of_two() && (32..=256).contains(b))
            .unwrap_or(CONVERT_BLOCK)
    })
}

/// Default of [`convert_block`].
const CONVERT_BLOCK: u32 = 256;

/// `MAX_TPB` of keyswitch.cu: targets per block of the unrolled conversions, at most.
const MAX_TPB: u32 = 32;

/// Threads a conversion launch over `n` coefficients should have at least: the targets are
/// split into as few groups per block as keep this many. Each group forms the sources' `v_i`
/// (and for an exact conversion the overflow) again, which costs least where the sources are
/// few: exact conversions (mod_down) from at most [`FEW_SOURCES`] primes keep at least
/// [`FEW_SOURCES_THREADS_PER_COEFF`]`·n` threads, the others [`CONVERT_MIN_THREADS`].
/// `FHE_CONVERT_MIN_THREADS` overrides the latter and `FHE_CONVERT_MIN_THREADS_EXACT` the
/// former (tuning runs).
fn convert_min_threads(exact: bool, from_cnt: usize, n: u32) -> u32 {
    static T: std::sync::OnceLock<[Option<u32>; 2]> = std::sync::OnceLock::new();
    let [all, few] = *T.get_or_init(|| {
        let get = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u32>().ok());
        [
            get("FHE_CONVERT_MIN_THREADS"),
            get("FHE_CONVERT_MIN_THREADS_EXACT"),
        ]
    });
    let all = all.unwrap_or(CONVERT_MIN_THREADS);
    if exact && from_cnt <= FEW_SOURCES {
        few.unwrap_or(all.max(FEW_SOURCES_THREADS_PER_COEFF.saturating_mul(n)))
    } else {
        all
    }
}

/// Sources of an exact conversion that count as few for [`convert_min_threads`].
const FEW_SOURCES: usize = 4;

/// Threads per coefficient of an exact conversion from few sources, at least (two target
/// groups for mod_down's two components). On the H200 (gpu_perf event µs, alternated twice):
/// at PHANTOM_N16 (3 special primes to 27 targets) mul_relin_rescale 541.1 / 538.0 with 2^17
/// threads (one group), 531.2 / 531.2 with 2^18 (two), 538 with 2^19, 548 with 2^20; at CAT
/// (N = 2^15, 3 special primes) two groups is the old default and four lost 1–2%; at
/// N16_L24_D3 (7 special primes, not few) two groups lost 1%.
const FEW_SOURCES_THREADS_PER_COEFF: u32 = 4;

/// Default of [`convert_min_threads`]. On the H200 at N16_L24_D3 (gpu_perf, mul_relin_rescale):
/// 2^16 453 µs, 2^18 458, 2^19 478, 2^20 511; later, alternated twice, 2^17 444–445 against
/// 2^16 447–449 (mod_up's last, single digit then takes two groups). One group of all targets
/// wins where the coefficients fill the device.
const CONVERT_MIN_THREADS: u32 = 1 << 17;

/// Targets per block of an unrolled conversion of `to_cnt` targets over `threads` threads
/// (coefficients times batched conversions): the fewest groups that respect [`MAX_TPB`] and
/// `min_threads` ([`convert_min_threads`]), balanced.
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
            && b.h_out.checked_sub(a.h_out) == Some(d);
        same.then_some(d as u64)
    }
}
// SAFETY: plain repr(C) u64 fields matching `struct ConvStrides` of keyswitch.cu.
unsafe impl cudarc::driver::DeviceRepr for ConvStrides {}

/// The conversion kernel for `from_cnt` sources: the unrolled one when there is one (unless
/// `FHE_CONVERT_UNROLLED=0`, for A/B timing runs), else the generic `keyswitch_convert`.
fn convert_kernel(from_cnt: usize) -> &'static str {
    let on = switch_on!("FHE_CONVERT_UNROLLED");
    match from_cnt
        .checked_sub(1)
        .and_then(|i| CONVERT_UNROLLED.get(i))
    {
        Some(name) if on => name,
        _ => "keyswitch_convert",
    }
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
    let name = convert_kernel(conv.from_cnt);
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
    let (block, tpb) = if unrolled {
        (
            convert_block(),
            targets_per_block(
                to_cnt,
                n.saturating_mul(batch.0.max(1)),
                convert_min_threads(conv.q_mod_p.is_some(), conv.from_cnt, n),
            ),
        )
    } else {
        (super::BLOCK, TARGETS_PER_BLOCK)
    };
    let cfg = LaunchConfig {
        grid_dim: (n.div_ceil(block), to_cnt.div_ceil(tpb), batch.0.max(1)),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    };
    let RescaleTop {
        w: top_w,
        level,
        t_table: tq,
    } = rescale_top.unwrap_or_default();
    let pinv = rescale_top.map_or(0, |r| cx.t(cx.layout.p_inv[r.level]));
    let level = level as u32;
    launch!(
        cx.stream,
        f,
        cfg,
        &input,
        &n,
        &from_slot0,
        &from_cnt,
        &qhi,
        &qhis,
        &h,
        &ts,
        &to_cnt,
        &h_in,
        &h_out,
        &qmodp,
        &out,
        &slots,
        &cp_src,
        &cp_dst,
        &cp_cnt,
        &top_w,
        &level,
        &pinv,
        &tq,
        &batch.1,
        &tpb
    )?;
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
}
