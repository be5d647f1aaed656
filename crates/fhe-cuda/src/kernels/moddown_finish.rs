//! mod_down's last forward NTT pass fused with its last step (`ntt_finish_r8_S` of
//! `kernels/moddown_finish.cuh`, compiled in the `ntt` module): the pass over the converted
//! limbs keeps its outputs in registers and writes mod_down's output (plain, with the rescale,
//! or with a rotation's automorphism), which this module owns.

use super::ntt::{
    Limb, Load, Passes, config_r8, forward_passes, forward_passes_adding, fused_passes_available,
    mostly_f64, passes, r8_names,
};
use super::{Ctx, LimbSet, launch};
use crate::error::Result;
use cudarc::driver::DeviceRepr;

/// What the fused mod_down step writes (`FINISH_*` of moddown_finish.cuh).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum Finish {
    /// `out += mod_down_term(acc, z)` (`keyswitch_mod_down_finish`).
    Plain = 0,
    /// `out = mod_down_rescale_value(out, acc, z)` (`keyswitch_mod_down_rescale_finish`).
    Rescale = 1,
    /// `out = σ(c_0) (component 0) + mod_down_term(acc, z)` (`keyswitch_mod_down_finish_rot`).
    Rot = 2,
}

/// The arguments of `ntt_finish_r8_S`. Mirrors `struct FinishArgs` of moddown_finish.cuh.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct FinishArgs {
    /// The 2-component output at its level.
    pub out: LimbSet,
    /// The accumulator, over the same limbs.
    pub acc: LimbSet,
    /// The converted P part over the same limbs, coefficient form; transformed in place by
    /// the first pass.
    pub conv: LimbSet,
    /// `Rot`: the one-component set of `c_0` over out's slots.
    pub src: LimbSet,
    /// `Rot`: the automorphism's index map.
    pub map: u64,
    /// `P^-1` and the rescale constants, `(value, shoup)` pairs by slot (device addresses).
    pub pinv: u64,
    pub rs: u64,
    pub level: u32,
    pub mode: Finish,
    pub use_t: u32,
    /// out's limbs of slots below this one are taken as zero (the key product added the
    /// product's `c_0`, `c_1` there: `KeyProdArgs::prod_slots`).
    pub prod_slots: u32,
    /// `t·P^-1` by slot when `use_t` (BGV).
    pub tp: super::elementwise::Scalars,
}
// SAFETY: repr(C) fields matching `struct FinishArgs` of moddown_finish.cuh: four LimbSets, three u64, four
// u32 (`Finish` is repr(u32)) and `Scalars` (= `SlotPairs`).
unsafe impl DeviceRepr for FinishArgs {}

/// The fused mod_down step (`ntt_finish_r8_S`), by S = 3..=11.
pub(super) const R8_FINISH: [&str; 9] = r8_names!("ntt_finish_r8_");

/// mod_down's forward NTT of the converted limbs `args.conv` fused with its last step
/// (`ntt_finish_r8_S`, see [`Finish`]): the first pass runs in place, the last keeps its
/// outputs in registers and writes `args.out`. The same residues as [`forward`] followed by
/// the finish kernel. With `lifted`, the first pass transforms those limbs (the limbs of
/// `args.conv`, read lifted from elsewhere) instead of `args.conv` in place. Returns `false`,
/// enqueuing nothing, where it does not apply (register-blocked passes off or not covering the
/// ring).
pub(crate) fn forward_finish(cx: &Ctx, args: &FinishArgs, lifted: Option<&[Limb]>) -> Result<bool> {
    if !finish_fusable(cx) {
        return Ok(false);
    }
    forward_finish_first(cx, args.conv, lifted)?;
    forward_finish_last(cx, args)?;
    Ok(true)
}

/// Whether [`forward_finish`] applies on this ring (register-blocked passes covering it).
pub(crate) fn finish_fusable(cx: &Ctx) -> bool {
    fused_passes_available(cx.n.trailing_zeros())
}

/// The first part of [`forward_finish`] (needs [`finish_fusable`]): the first forward pass of
/// the limbs of `conv` in place, or of `lifted` (lifted or converted loads, written to those
/// limbs); on a ring of one pass, nothing. Its stream may differ from the last part's where the
/// caller orders them.
pub(crate) fn forward_finish_first(cx: &Ctx, conv: LimbSet, lifted: Option<&[Limb]>) -> Result<()> {
    match lifted {
        Some(l) => forward_passes(cx, l, Passes::First),
        None => forward_passes(cx, &conv.limbs(), Passes::First),
    }
}

/// [`forward_finish_first`] of mod_down's converted limbs `lifted` (all `Load::ConvertExact`,
/// or all `Load::Lift` from the one special prime) for an output whose two components are
/// still in coefficient form: each converted word `conv` becomes `conv - P·c` (the exact rows
/// hold `P mod q`; a lifted limb reduces its source prime), `c` the output's word at
/// `coef_delta` words from the converted limb's (both buffers laid out alike). mod_down's
/// finish, with every output slot taken as zero ([`FinishArgs::prod_slots`]), then yields
/// `NTT(c) + (acc - NTT(conv))·P^-1`: the output's NTT is never run.
pub(crate) fn forward_finish_first_adding(
    cx: &Ctx,
    lifted: &[Limb],
    coef_delta: i64,
) -> Result<()> {
    // On a ring of one pass the first pass would run nothing.
    if coef_delta == 0
        || passes(cx.n.trailing_zeros())[1].s == 0
        || !lifted
            .iter()
            .all(|l| matches!(l.load, Load::ConvertExact(_) | Load::Lift(_)))
    {
        return Err(crate::error::Error::Unsupported {
            what: "a coefficient-form mod_down output without exact converted or lifted loads"
                .into(),
        });
    }
    forward_passes_adding(cx, lifted, Passes::First, coef_delta)
}

/// The last part of [`forward_finish`] (needs [`finish_fusable`], after
/// [`forward_finish_first`]): the last pass fused with mod_down's last step.
pub(crate) fn forward_finish_last(cx: &Ctx, args: &FinishArgs) -> Result<()> {
    let logn = cx.n.trailing_zeros();
    let [p0, p1] = passes(logn);
    let last = if p1.s == 0 { p0 } else { p1 };
    let f64 = mostly_f64(cx, args.conv.limbs().iter().map(|l| l.slot));
    let (log_c, cfg) = config_r8(cx.dev.tuning(), logn, last, args.conv.count(), f64);
    let f = cx.dev.function("ntt", R8_FINISH[last.s as usize - 3])?;
    let (slots, twp) = (cx.slots(), cx.t(cx.layout.ntt.fwd_pair));
    launch!(cx.stream, f, cfg, args, &slots, &twp, &logn, &log_c)
}
