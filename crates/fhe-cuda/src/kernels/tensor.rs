//! Inverse NTTs whose first pass forms its input as it loads (`ntt_inv_tensor_r8_S` and
//! `ntt_inv_add_r8_S` of `kernels/tensor.cuh`, compiled in the `ntt` module): the tensor product
//! of two ciphertexts (so the product is never written in NTT form) and mod_down's rescaled top
//! limb `out + acc·P^-1`. The outputs are the inverse transforms; these wrappers own them.

use super::ntt::{
    FusedArgs, Limb, R8_INV_ADD, R8_INV_TENSOR, first_inverse_blocked, inverse_list_with,
    two_passes,
};
use super::{Ctx, LimbSet};
use crate::error::Result;

/// Where [`inverse_adding`] finds the addends of its `Load::AddScaled(c)` limbs and their
/// multiplier: `b` at `delta[c]` words from the limb's `src`, `k` as `(value, shoup)` pairs by
/// slot at device address `consts`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AddScaled {
    pub delta: [i64; 2],
    pub consts: u64,
}

/// Where [`inverse_tensor`] finds a limb's operands `a_1`, `b_0`, `b_1`, in words from its `src`
/// (`a_0`): `[part][operand]`, part 1 for the slots from `split` up (BFV's B limbs, which live
/// in another buffer than the Q limbs).
#[derive(Clone, Copy, Debug)]
pub(crate) struct TensorDeltas {
    pub delta: [[i64; 3]; 2],
    pub split: u32,
}

impl TensorDeltas {
    /// One part's `[a_1, b_0, b_1]` deltas for the operands whose first components' limbs are
    /// the sets `a` and `b` (a buffer's components are `spc·n` words apart; a limb of slot s
    /// sits at the same slot offset in both).
    pub(crate) fn operands(a: &LimbSet, b: &LimbSet) -> [i64; 3] {
        let plane = |l: &LimbSet| l.spc as i64 * l.n as i64;
        let ab = super::word_offset(a.ptr, b.ptr);
        [plane(a), ab, ab + plane(b)]
    }
}

/// Whether [`inverse_tensor`] can run on this ring (its first inverse pass is register-blocked).
pub(crate) fn tensor_on_load(cx: &Ctx) -> bool {
    first_inverse_blocked(cx)
}

/// Whether [`inverse_adding`] can run on this ring (else mod_down forms its rescaled top limb
/// with `keyswitch_mod_down_top`). mod_down with the rescale forms that limb, `out + acc·P^-1`,
/// as its inverse NTT loads it, which saves a latency-bound launch on the side stream's chain
/// (PERF.md: `ks_mod_down_rescale` 3–10% faster on the H100).
pub(crate) fn add_on_load(cx: &Ctx) -> bool {
    first_inverse_blocked(cx)
}

/// Inverse NTT of tensor-product limbs (`Load::Tensor`, needs [`tensor_on_load`]): the first
/// pass forms each limb's component of the product as it loads (`ntt_inv_tensor_r8_S`), so the
/// product need not be written in NTT form; the outputs go to the limbs' `dst`. With
/// `prescaled_at` (a level), the last pass's constants and offsets are mod_up's prescaled ones
/// ([`inverse_list_prescaled`]), which needs a second pass ([`two_passes`]). With `copy_delta`
/// (words, 0 for none) the first pass also stores the product words it forms at
/// `src + copy_delta`.
pub(crate) fn inverse_tensor(
    cx: &Ctx,
    limbs: &[Limb],
    at: TensorDeltas,
    prescaled_at: Option<usize>,
    copy_delta: i64,
) -> Result<()> {
    if !tensor_on_load(cx) {
        return Err(crate::error::Error::Unsupported {
            what: "tensor-product loads where the first inverse pass is not register-blocked"
                .into(),
        });
    }
    let fa = FusedArgs {
        tensor_delta: at.delta,
        tensor_split: at.split,
        load_copy_delta: copy_delta,
        ..FusedArgs::default()
    };
    let (consts, offs) = match prescaled_at {
        // The tensor pass takes no offsets: they must go to a plain last pass.
        Some(_) if !two_passes(cx) => {
            return Err(crate::error::Error::Unsupported {
                what: "prescaled tensor-product loads on a ring of one NTT pass".into(),
            });
        }
        Some(level) => {
            let p = cx.layout.mod_up_prescale[level];
            (cx.t(p.consts), cx.t(p.offs))
        }
        None => (cx.t(cx.layout.ntt.ntt_consts), 0),
    };
    inverse_list_with(cx, limbs, consts, offs, 0, Some((&R8_INV_TENSOR, &fa)))
}

/// Inverse NTT whose `Load::AddScaled` limbs transform `b + x·k` (needs [`add_on_load`]): the
/// first pass forms it as it loads (`ntt_inv_add_r8_S`), the other limbs load plainly; the last
/// stage's constants at `consts` as for [`inverse_list_consts`].
pub(crate) fn inverse_adding(cx: &Ctx, limbs: &[Limb], consts: u64, add: AddScaled) -> Result<()> {
    if !first_inverse_blocked(cx) {
        return Err(crate::error::Error::Unsupported {
            what: "scaled-sum loads where the first inverse pass is not register-blocked".into(),
        });
    }
    let fa = FusedArgs {
        add_delta: add.delta,
        add_consts: add.consts,
        ..FusedArgs::default()
    };
    inverse_list_with(cx, limbs, consts, 0, 0, Some((&R8_INV_ADD, &fa)))
}
