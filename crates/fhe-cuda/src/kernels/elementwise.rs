//! Launch wrappers of `kernels/elementwise.cu`.

use super::{Ctx, LimbSet, grid, launch};
use crate::error::{Error, Result};
use cudarc::driver::{DevicePtr, DeviceRepr};

/// `a <- a + b`.
pub const OP_ADD: u32 = 0;
/// `a <- a - b`.
pub const OP_SUB: u32 = 1;
/// `a <- a * b`.
pub const OP_MUL: u32 = 2;
/// `a <- b`.
pub const OP_COPY: u32 = 3;

/// Most per-limb scalars one launch takes (`MAX_SCALARS` in elementwise.cu).
pub const MAX_SCALARS: usize = 64;

/// Per-limb constants with Shoup companions, passed by value. Mirrors `struct Scalars`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Scalars {
    w: [u64; MAX_SCALARS],
    ws: [u64; MAX_SCALARS],
}
// SAFETY: plain repr(C) arrays matching `struct Scalars` of elementwise.cu.
unsafe impl DeviceRepr for Scalars {}

impl Scalars {
    /// Packs `(value, shoup)` pairs, at most [`MAX_SCALARS`].
    pub fn new(pairs: &[(u64, u64)]) -> Result<Self> {
        if pairs.len() > MAX_SCALARS {
            return Err(Error::Unsupported {
                what: format!("{} per-limb scalars (at most {MAX_SCALARS})", pairs.len()),
            });
        }
        let mut s = Scalars {
            w: [0; MAX_SCALARS],
            ws: [0; MAX_SCALARS],
        };
        for (i, &(w, ws)) in pairs.iter().enumerate() {
            s.w[i] = w;
            s.ws[i] = ws;
        }
        Ok(s)
    }
}

/// `elementwise_binary(LimbSet a, LimbSet b, const u64* slots, u32 op)`.
pub(crate) fn binary(cx: &Ctx, a: LimbSet, b: LimbSet, op: u32) -> Result<()> {
    if a.count() == 0 {
        return Ok(());
    }
    let f = cx.dev.function("elementwise", "elementwise_binary")?;
    let slots = cx.slots();
    launch!(cx.stream, f, grid(cx.n, a.count()), &a, &b, &slots, &op)
}

/// `elementwise_binary_new(LimbSet out, LimbSet a, LimbSet b, const u64* slots, u32 op)`:
/// `out = a ± b` (`OP_ADD` / `OP_SUB`).
pub(crate) fn binary_new(cx: &Ctx, out: LimbSet, a: LimbSet, b: LimbSet, op: u32) -> Result<()> {
    if out.count() == 0 {
        return Ok(());
    }
    launch_pair(cx, "elementwise_binary_new", out, a, b, op)
}

/// `elementwise_neg(LimbSet a, const u64* slots)`.
pub(crate) fn neg(cx: &Ctx, a: LimbSet) -> Result<()> {
    let f = cx.dev.function("elementwise", "elementwise_neg")?;
    let slots = cx.slots();
    launch!(cx.stream, f, grid(cx.n, a.count()), &a, &slots)
}

/// `elementwise_mul_acc(LimbSet acc, LimbSet a, LimbSet b, const u64* slots)`.
pub(crate) fn mul_acc(cx: &Ctx, acc: LimbSet, a: LimbSet, b: LimbSet) -> Result<()> {
    let f = cx.dev.function("elementwise", "elementwise_mul_acc")?;
    let slots = cx.slots();
    launch!(cx.stream, f, grid(cx.n, acc.count()), &acc, &a, &b, &slots)
}

/// `elementwise_mul_sum(LimbSet out, const u64* terms, u32 count, const u64* slots)`:
/// `out_c = Σ_t a_{t,c}·b_{t,0}` over the limbs of `out`; `terms` holds per term the words
/// (a base address, a's slots per component, b base address), copied to the device in one
/// upload freed in stream order after the launch.
pub(crate) fn mul_sum(cx: &Ctx, out: LimbSet, terms: &[u64]) -> Result<()> {
    if out.count() == 0 || terms.is_empty() {
        return Ok(());
    }
    let table = cx
        .stream
        .clone_htod(terms)
        .map_err(Error::driver("multiply-sum table upload"))?;
    let (ptr, _guard) = table.device_ptr(cx.stream);
    let count = (terms.len() / 3) as u32;
    let f = cx.dev.function("elementwise", "elementwise_mul_sum")?;
    let slots = cx.slots();
    launch!(
        cx.stream,
        f,
        grid(cx.n, out.count()),
        &out,
        &ptr,
        &count,
        &slots
    )
}

/// `elementwise_scalar(LimbSet a, Scalars sc, const u64* slots, u32 op)`.
pub(crate) fn scalar(cx: &Ctx, a: LimbSet, sc: &Scalars, op: u32) -> Result<()> {
    let f = cx.dev.function("elementwise", "elementwise_scalar")?;
    let slots = cx.slots();
    launch!(cx.stream, f, grid(cx.n, a.count()), &a, sc, &slots, &op)
}

/// `elementwise_affine(LimbSet out, LimbSet in, Scalars add, Scalars mul, const u64* slots)`:
/// `out <- (in + add_i)·mul_i` limb by limb (`in` with `out`'s limbs; `mul` with Shoup
/// companions, `add` values only).
pub(crate) fn affine(
    cx: &Ctx,
    out: LimbSet,
    input: LimbSet,
    add: &Scalars,
    mul: &Scalars,
) -> Result<()> {
    let f = cx.dev.function("elementwise", "elementwise_affine")?;
    let slots = cx.slots();
    launch!(
        cx.stream,
        f,
        grid(cx.n, out.count()),
        &out,
        &input,
        add,
        mul,
        &slots
    )
}

/// `elementwise_tensor(LimbSet out, LimbSet a, LimbSet b, const u64* slots, u32 c01_from)`:
/// the tensor product with its first two components written only at slots from `c01_from`
/// (0: everywhere; the key product adds them below, `ntt::KeyProdArgs::prod_a`); the third at
/// every slot.
pub(crate) fn tensor_from(
    cx: &Ctx,
    out: LimbSet,
    a: LimbSet,
    b: LimbSet,
    c01_from: u32,
) -> Result<()> {
    launch_pair(cx, "elementwise_tensor", out, a, b, c01_from)
}

/// The tensor product over two pairs of operands in one launch: `out`'s first `a.count()`
/// limbs from `(a, b)`, the rest from `(a2, b2)` (`elementwise_tensor_pairs`).
pub(crate) fn tensor_pairs(
    cx: &Ctx,
    out: LimbSet,
    (a, b): (LimbSet, LimbSet),
    (a2, b2): (LimbSet, LimbSet),
) -> Result<()> {
    let split = a.count();
    if b.count() != split || a2.count() != b2.count() || out.count() != split + a2.count() {
        return Err(Error::Unsupported {
            what: "a tensor over two pairs whose limb counts do not add up".into(),
        });
    }
    let f = cx.dev.function("elementwise", "elementwise_tensor_pairs")?;
    let slots = cx.slots();
    launch!(
        cx.stream,
        f,
        grid(cx.n, out.count()),
        &out,
        &a,
        &b,
        &a2,
        &b2,
        &split,
        &slots
    )
}

/// Launches `kernel(LimbSet out, LimbSet a, LimbSet b, const u64* slots, u32 x)` over `out`'s
/// limbs.
fn launch_pair(
    cx: &Ctx,
    kernel: &'static str,
    out: LimbSet,
    a: LimbSet,
    b: LimbSet,
    x: u32,
) -> Result<()> {
    let f = cx.dev.function("elementwise", kernel)?;
    let slots = cx.slots();
    launch!(
        cx.stream,
        f,
        grid(cx.n, out.count()),
        &out,
        &a,
        &b,
        &slots,
        &x
    )
}

/// `elementwise_rescale_prepare(LimbSet t, u32 level, const u64* slots)`.
pub(crate) fn rescale_prepare(cx: &Ctx, t: LimbSet, level: u32) -> Result<()> {
    let f = cx
        .dev
        .function("elementwise", "elementwise_rescale_prepare")?;
    let slots = cx.slots();
    launch!(cx.stream, f, grid(cx.n, t.count()), &t, &level, &slots)
}

/// `elementwise_rescale_finish_mod_t(LimbSet a, LimbSet t, const u64* consts, Scalars tq,
/// const u64* slots)`: `tq` holds `t·q_l^-1` by limb position.
pub(crate) fn rescale_finish_mod_t(
    cx: &Ctx,
    a: LimbSet,
    t: LimbSet,
    level: usize,
    tq: &Scalars,
) -> Result<()> {
    let f = cx
        .dev
        .function("elementwise", "elementwise_rescale_finish_mod_t")?;
    let slots = cx.slots();
    let consts = cx.t(cx.layout.rescale[level]);
    launch!(
        cx.stream,
        f,
        grid(cx.n, a.count()),
        &a,
        &t,
        &consts,
        tq,
        &slots
    )
}

/// `elementwise_rescale_finish(LimbSet a, LimbSet t, const u64* consts, const u64* slots)`.
pub(crate) fn rescale_finish(cx: &Ctx, a: LimbSet, t: LimbSet, level: usize) -> Result<()> {
    let f = cx
        .dev
        .function("elementwise", "elementwise_rescale_finish")?;
    let slots = cx.slots();
    let consts = cx.t(cx.layout.rescale[level]);
    launch!(cx.stream, f, grid(cx.n, a.count()), &a, &t, &consts, &slots)
}

/// `elementwise_lift(LimbSet a, const u64* src, u32 wide, u64 centre_t, const u64* slots)`:
/// every limb of `a` (one component, `Q` slots) gets the signed integers at `src` reduced modulo
/// its prime; `src` holds `n` i128 as (low, high) word pairs when `wide`, else `n` i64 words,
/// or with `centre_t != 0` residues mod `t` read centred in `(-t/2, t/2]`.
pub(crate) fn lift(cx: &Ctx, a: LimbSet, src: u64, wide: bool, centre_t: u64) -> Result<()> {
    let f = cx.dev.function("elementwise", "elementwise_lift")?;
    let slots = cx.slots();
    let wide = wide as u32;
    launch!(
        cx.stream,
        f,
        grid(cx.n, a.count()),
        &a,
        &src,
        &wide,
        &centre_t,
        &slots
    )
}

/// `elementwise_centered_q0(LimbSet a, u64* out, const u64* slots)`: `out[k] = (x_k << 1) | flag_k`
/// for the `n` coefficients of `a`'s first component (`Q` slots from 0), `x_k` centred mod `q_0`,
/// `flag_k` whether it is congruent to every other limb. One launch, one thread per coefficient.
pub(crate) fn centered_q0(cx: &Ctx, a: LimbSet, out: u64) -> Result<()> {
    let f = cx.dev.function("elementwise", "elementwise_centered_q0")?;
    let slots = cx.slots();
    launch!(cx.stream, f, grid(cx.n, 1), &a, &out, &slots)
}
