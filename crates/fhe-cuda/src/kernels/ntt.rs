//! Launch wrappers of the transforms of `kernels/ntt.cu` (`ntt_pass.cuh`, `ntt_loads.cuh`):
//! forward and inverse negacyclic NTT over every limb of a limb set, hierarchical: one
//! shared-memory pass for n <= 2^11, two passes above (each pass is one launch over all limbs),
//! with the loading variants of the first pass (lifted and converted limbs of mod_up) and the
//! launch shapes every fused kernel riding on a pass shares. The fusions live with the concern
//! that owns their output: [`super::keyprod`] (the key product), [`super::moddown_finish`]
//! (mod_down's last step), [`super::rescale`] (CKKS rescale, BGV modulus switch) and
//! [`super::tensor`] (the tensor product and scaled sums formed on load).

use super::{Ctx, LimbSet, launch};
use crate::Tuning;
use crate::error::Result;
use cudarc::driver::{DeviceRepr, LaunchConfig};

/// `MAX_LIST` of ntt.cu.
const MAX_LIST: usize = 128;

/// Limbs of one launch, passed by value. Mirrors `struct LimbList` of ntt.cu.
#[repr(C)]
#[derive(Clone, Copy)]
struct LimbList {
    src: [u64; MAX_LIST],
    dst: [u64; MAX_LIST],
    slot: [u32; MAX_LIST],
}
// SAFETY: plain repr(C) arrays matching `struct LimbList` of ntt.cu.
unsafe impl DeviceRepr for LimbList {}

/// One limb to transform: read at `src`, written at `dst` (equal for in place), modulus of `slot`,
/// with what the forward NTT's first pass does to each word as it loads it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limb {
    pub src: u64,
    pub dst: u64,
    pub slot: u32,
    pub load: Load,
}

/// What the first forward pass makes of a limb's input words (see [`lift_on_load`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Load {
    /// The words at `src` are the limb's coefficients.
    Plain,
    /// `Lift(f)`: they are residues modulo slot `f`'s prime; the NTT transforms their centred
    /// lift to the limb's modulus.
    Lift(u32),
    /// `Convert(row)`: `src` is the first of a digit's `D` consecutive limbs holding
    /// `v_i = (x_i + h_in_i)·q̂_i^-1 mod q_i`; the NTT transforms the digit's fast basis
    /// conversion to the limb's modulus, `(Σ_i v_i·h_i mod q) - h_out`, from row `row` of
    /// `TableLayout::convert_rows` (`[D, h_out, h_0..]`).
    Convert(u32),
    /// `ConvertExact(row)`: as `Convert`, from an exact row (`TableLayout::mod_down_row0`,
    /// `BasisConverter::convert_exact`), by the kernels that have the exact path
    /// (`ntt_fwd_convert_exact_r8_S`, kept apart so the others keep their registers).
    ConvertExact(u32),
    /// `Tensor(c)`: component `c` of the tensor product `(a_0 b_0, a_0 b_1 + a_1 b_0, a_1 b_1)`
    /// mod the limb's prime, `a_0` at `src` and the other operands at the launch's
    /// [`super::tensor::TensorDeltas`]; only the first pass of [`super::tensor::inverse_tensor`] loads so.
    Tensor(u32),
    /// `AddScaled(c)`: `b + x·k mod q` for `x` at `src`, `b` at the launch's [`super::tensor::AddScaled`]
    /// delta `c` (0 or 1) and `k` its constant of the limb's slot; only the first pass of
    /// [`inverse_adding`] loads so.
    AddScaled(u32),
}

impl LimbSet {
    /// The limbs of the set, in place.
    pub(crate) fn limbs(&self) -> Vec<Limb> {
        self.limb_iter().collect()
    }

    /// The limbs of the set, in place, in the order of [`LimbSet::limbs`]: component by
    /// component, the `Q` slots then the special ones (no allocation).
    pub(crate) fn limb_iter(self) -> impl ExactSizeIterator<Item = Limb> {
        let per = self.q_cnt + self.p_cnt;
        let (n, spc, ptr) = (self.n as u64, self.spc as u64, self.ptr);
        (0..self.count()).map(move |idx| {
            let c = self.comp_lo + idx / per;
            let a = idx % per;
            let slot = if a < self.q_cnt {
                self.q_lo + a
            } else {
                self.p_lo + a - self.q_cnt
            };
            let p = ptr + 8 * ((c as u64 * spc + slot as u64) * n);
            Limb {
                src: p,
                dst: p,
                slot,
                load: Load::Plain,
            }
        })
    }
}

/// An empty launch list.
const EMPTY_LIST: LimbList = LimbList {
    src: [0; MAX_LIST],
    dst: [0; MAX_LIST],
    slot: [0; MAX_LIST],
};

/// Slots below this bound are ordered by [`chunks`] with a counting sort on the stack.
const COUNTING_SLOTS: usize = 256;

/// The launches of `limbs`: at most `MAX_LIST` limbs each, ordered by slot, so that limbs of
/// one prime (the components of a ciphertext, the digits of a raised polynomial) run side by
/// side and read that prime's twiddle table from L2 instead of DRAM. Limbs of one slot keep
/// their given order (a stable counting sort, written straight into the lists: this runs on
/// the host before every NTT launch, where the GPU may be waiting for it). The order of the
/// limbs does not change any result. Without `sort` ([`crate::Tuning::ntt_sort`]) the given
/// order is kept.
fn chunks(limbs: &[Limb], sort: bool) -> Vec<(LimbList, u32)> {
    let mut out: Vec<(LimbList, u32)> = (0..limbs.len().div_ceil(MAX_LIST))
        .map(|c| {
            (
                EMPTY_LIST,
                (limbs.len() - c * MAX_LIST).min(MAX_LIST) as u32,
            )
        })
        .collect();
    let mut put = |k: usize, x: &Limb| {
        let (list, i) = (&mut out[k / MAX_LIST].0, k % MAX_LIST);
        list.src[i] = x.src;
        list.dst[i] = x.dst;
        list.slot[i] = slot_word(x);
    };
    let sorted = limbs.is_sorted_by_key(|l| l.slot);
    if !sort || sorted {
        limbs.iter().enumerate().for_each(|(k, x)| put(k, x));
    } else if limbs.iter().all(|l| (l.slot as usize) < COUNTING_SLOTS) {
        // Position of each slot's first limb: a prefix sum of the counts.
        let mut next = [0u32; COUNTING_SLOTS];
        let mut top = 0;
        for l in limbs {
            next[l.slot as usize] += 1;
            top = top.max(l.slot as usize);
        }
        let mut sum = 0;
        for c in next[..=top].iter_mut() {
            (*c, sum) = (sum, sum + *c);
        }
        for x in limbs {
            let k = &mut next[x.slot as usize];
            put(*k as usize, x);
            *k += 1;
        }
    } else {
        let mut order: Vec<&Limb> = limbs.iter().collect();
        order.sort_by_key(|l| l.slot);
        order.iter().enumerate().for_each(|(k, x)| put(k, x));
    }
    out
}

/// `LIFT_SHIFT` of ntt.cu: a slot word's bits from here up (the load field) hold one plus a
/// lifted limb's source slot, `CONVERT_FLAG` and a converted limb's row, or `TENSOR_FLAG` and a
/// tensor-product limb's component.
const LIFT_SHIFT: u32 = 16;
/// The slot bits of a slot word (`LIFT_SLOT_MASK` of ntt.cu).
const LIFT_SLOT_MASK: u32 = (1 << LIFT_SHIFT) - 1;
/// `CONVERT_FLAG` of ntt.cu, in the load field.
const CONVERT_FLAG: u32 = 0x8000;
/// `TENSOR_FLAG` of ntt.cu, in the load field, with the component below it.
const TENSOR_FLAG: u32 = 0x4000;
/// `ADD_FLAG` of ntt.cu, in the load field, with the addend's delta index below it.
const ADD_FLAG: u32 = 0x2000;

/// A limb's slot word in a `LimbList`: its slot, and above `LIFT_SHIFT` one plus a lifted limb's
/// source slot, `CONVERT_FLAG` with a converted limb's row, or `TENSOR_FLAG` with a product
/// limb's component (slots are far below 2^14: a ring has at most a few hundred primes; rows
/// below `tables::CONVERT_MAX_ROWS`).
fn slot_word(l: &Limb) -> u32 {
    let field = match l.load {
        Load::Plain => 0,
        Load::Lift(f) => f + 1,
        Load::Convert(row) | Load::ConvertExact(row) => CONVERT_FLAG | row,
        Load::Tensor(c) => TENSOR_FLAG | c,
        Load::AddScaled(c) => ADD_FLAG | c,
    };
    debug_assert!(l.slot <= LIFT_SLOT_MASK && field <= LIFT_SLOT_MASK);
    debug_assert!(!matches!(l.load, Load::Lift(f) if f + 1 >= TENSOR_FLAG));
    debug_assert!(!matches!(l.load, Load::Tensor(c) if c > 2));
    debug_assert!(!matches!(l.load, Load::AddScaled(c) if c > 1));
    debug_assert!(!matches!(l.load, Load::Convert(r) | Load::ConvertExact(r) if r >= CONVERT_FLAG));
    l.slot | field << LIFT_SHIFT
}

/// Whether the forward NTT of this ring lifts `Load::Lift` limbs as its first pass loads them:
/// two register-blocked passes (the first, run by the fused kernel, lifts; the last may then be
/// fused with the key product). mod_up uses it for digits of one prime, whose basis conversion
/// is that lift: no conversion kernel, and the raised limbs are never written in coefficient
/// form.
pub(crate) fn lift_on_load(cx: &Ctx) -> bool {
    let logn = cx.n.trailing_zeros();
    logn > ONE_PASS_MAX && fused_passes_available(logn)
}

/// Whether mod_up converts its digits of 2..=`tables::CONVERT_MAX_FROM` primes as the forward
/// NTT loads them (`Load::Convert`, with [`inverse_list_prescaled`] before): needs
/// [`lift_on_load`]. The conversion kernel
/// then does not run for those digits and the raised limbs are never written in coefficient
/// form; each raised word reads the digit's `D` words instead (from L2: a digit's limbs are
/// read by all its targets).
pub(crate) fn convert_on_load(cx: &Ctx) -> bool {
    lift_on_load(cx)
}

/// Largest log n done in one pass.
const ONE_PASS_MAX: u32 = 11;
/// One pass: stages on index bits `[l, l + s)`.
#[derive(Clone, Copy)]
pub(super) struct Pass {
    pub(super) s: u32,
    pub(super) l: u32,
}

pub(super) fn passes(logn: u32) -> [Pass; 2] {
    if logn <= ONE_PASS_MAX {
        [Pass { s: logn, l: 0 }, Pass { s: 0, l: 0 }]
    } else {
        let low = logn / 2;
        [
            Pass {
                s: logn - low,
                l: low,
            },
            Pass { s: low, l: 0 },
        ]
    }
}

/// log2 of the compaction of the double twiddle table's regions b = 0, 1, 2 (the n/2, n/4 and
/// n/8 twiddles of the three lowest stages) at log n, forward or inverse: 0 keeps a region
/// whole, c > 0 keeps every 2^c-th twiddle, compacted (`tables::f64_twiddles`). It applies the
/// rule `compacted_log<S>(b, kb)` of ntt.cu (2 - kb for b = 0, and for b = 1, 2 in passes of at
/// least 8 stages) to the radix-8 rounds of the pass over the low index bits
/// (`ntt_pass_r8_impl`'s windows), where a thread reads 2^(2 - kb) twiddles of stage b and forms
/// all but one (`twiddle_group`).
pub(crate) fn compaction(logn: u32, inverse: bool) -> [u32; 3] {
    let [p0, p1] = passes(logn);
    let s = if p1.s == 0 { p0.s } else { p1.s } as i32;
    let mut c = [0u32; 3];
    if !(3..=11).contains(&s) {
        return c;
    }
    for r in 0..(s + 2) / 3 {
        let (lo, b_lo, b_hi) = if inverse {
            let lo = if 3 * r < s - 3 { 3 * r } else { s - 3 };
            (lo, 3 * r, (3 * r + 3).min(s))
        } else {
            let lo = (s - 3 * (r + 1)).max(0);
            (lo, lo, s - 3 * r)
        };
        for b in b_lo..b_hi.min(if s >= 8 { 3 } else { 1 }) {
            c[b as usize] = (2 - (b - lo)) as u32;
        }
    }
    c
}

/// `(logC, config)` of a generic pass over `limbs` limbs.
fn config(t: &Tuning, logn: u32, p: Pass, limbs: u32) -> (u32, LaunchConfig) {
    // Sub-problems per block: fill `ntt_log_elems`, no more than there are, and (strided) no
    // more than the low bits allow (keeps a block's loads in consecutive words).
    let (log_elems, max_threads) = (t.ntt_log_elems, t.ntt_max_threads);
    let mut log_c = log_elems.saturating_sub(p.s).min(logn - p.s);
    if p.l > 0 {
        log_c = log_c.min(p.l);
    }
    let elems = 1u32 << (log_c + p.s);
    let threads = (elems / 4).clamp(1, max_threads);
    let cfg = LaunchConfig {
        grid_dim: (1u32 << (logn - p.s - log_c), limbs, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: elems * 8,
    };
    (log_c, cfg)
}

/// The kernel names `<prefix>3` ..= `<prefix>11` of a family instantiated for S = 3..=11
/// stages per pass.
macro_rules! r8_names {
    ($prefix:literal) => {
        [
            concat!($prefix, "3"),
            concat!($prefix, "4"),
            concat!($prefix, "5"),
            concat!($prefix, "6"),
            concat!($prefix, "7"),
            concat!($prefix, "8"),
            concat!($prefix, "9"),
            concat!($prefix, "10"),
            concat!($prefix, "11"),
        ]
    };
}
pub(super) use r8_names;

/// Register-blocked kernels (`ntt_pass_r8` of ntt.cu), by S = 3..=11.
const R8_FWD: [&str; 9] = r8_names!("ntt_fwd_r8_");
/// The same forward passes with lifted loads (`ntt_fwd_fused_r8_S`). Each fused kernel compiles
/// only the load and store paths of its launches (`FUSED_*` in ntt.cu; this one keeps the
/// converted loads too, for their register allocation).
const R8_FWD_FUSED: [&str; 9] = r8_names!("ntt_fwd_fused_r8_");
/// Their copy for first passes that convert digits on load (lifting the one-prime digits
/// beside them), held to fewer registers (`ntt_fwd_convert_r8_S`).
const R8_FWD_CONVERT: [&str; 9] = r8_names!("ntt_fwd_convert_r8_");
/// The converting copy with exact rows too (`ntt_fwd_convert_exact_r8_S`, mod_down's
/// `Load::ConvertExact`).
const R8_FWD_CONVERT_EXACT: [&str; 9] = r8_names!("ntt_fwd_convert_exact_r8_");
/// The exact converting copy that also subtracts the coefficient-form output
/// (`ntt_fwd_convert_coef_r8_S`, [`forward_finish_first_adding`]; kept apart so that the others'
/// exact conversions carry no such path).
const R8_FWD_CONVERT_COEF: [&str; 9] = r8_names!("ntt_fwd_convert_coef_r8_");
/// The rescale's passes (its fused load and store modes only), held to fewer registers
/// (`ntt_fwd_rescale_r8_S`).
const R8_FWD_RESCALE: [&str; 9] = r8_names!("ntt_fwd_rescale_r8_");
const R8_INV: [&str; 9] = r8_names!("ntt_inv_r8_");
/// The first inverse pass with tensor-product loads (`ntt_inv_tensor_r8_S`, [`inverse_tensor`]).
pub(super) const R8_INV_TENSOR: [&str; 9] = r8_names!("ntt_inv_tensor_r8_");
/// The first inverse pass with scaled-sum loads (`ntt_inv_add_r8_S`, [`inverse_adding`]).
pub(super) const R8_INV_ADD: [&str; 9] = r8_names!("ntt_inv_add_r8_");
/// The plain register-blocked kernel of pass `p`, or `None` for the shared-memory pass.
fn plain_kernel(p: Pass, inverse: bool) -> Option<&'static str> {
    let i = (p.s as usize).checked_sub(3).filter(|_| r8(p))?;
    Some(if inverse { R8_INV[i] } else { R8_FWD[i] })
}

/// Moduli below 2^NTT_F64_BITS run the NTT passes in exact double precision (`F64Arith` of
/// ntt.cu, whose `NTT_F64_BITS` has the same default).
pub(crate) const NTT_F64_BITS: u32 = 42;
/// Moduli from 2^NTT_F64_BITS up to 2^NTT_F64_WIDE_BITS (the integer schemes' 50-bit primes) run
/// them in double precision with more reductions (`F64WideArith` of ntt.cu, same default); the
/// launches choose the FP64 block shape for every limb below this bound.
pub(crate) const NTT_F64_WIDE_BITS: u32 = 50;
// The wide butterflies' bounds need q < 2^50 (ntt.cu refuses a larger define likewise).
const _: () = assert!(NTT_F64_BITS < NTT_F64_WIDE_BITS && NTT_F64_WIDE_BITS <= 50);

/// Whether most of `slots` run the FP64 butterflies (the block shape of their launch).
pub(super) fn mostly_f64(cx: &Ctx, slots: impl IntoIterator<Item = u32>) -> bool {
    let f = &cx.layout.ntt.f64_slots;
    let (mut yes, mut all) = (0usize, 0usize);
    for s in slots {
        all += 1;
        yes += usize::from(f.get(s as usize).copied().unwrap_or(false));
    }
    2 * yes > all
}

/// Whether the register-blocked pass handles `p` (3 to 11 stages; the generic passes take the
/// others).
fn r8(p: Pass) -> bool {
    (3..=11).contains(&p.s)
}

/// `(logC, config)` of a register-blocked pass over `limbs` limbs: 8 elements per thread;
/// `f64`: the limbs mostly run the FP64 butterflies ([`mostly_f64`]), which take the block shape
/// [`Tuning::r8_shape_f64`], the others [`Tuning::r8_shape_int`].
pub(super) fn config_r8(
    t: &Tuning,
    logn: u32,
    p: Pass,
    limbs: u32,
    f64: bool,
) -> (u32, LaunchConfig) {
    let shape = if f64 { t.r8_shape_f64 } else { t.r8_shape_int };
    let (log_threads, log_c_strided) = (shape.0.clamp(3, 9), shape.1.clamp(0, 6));
    let lt = p.s - 3;
    let subs = logn - p.s; // log of the sub-problems per limb
    let log_c = if p.l > 0 {
        log_c_strided.min(p.l).min(subs).min(10 - lt)
    } else {
        log_threads.saturating_sub(lt).min(subs)
    };
    let sz = 1u32 << p.s;
    let words = |c: u32| {
        if p.l > 0 {
            sz * (c + 1)
        } else {
            c * sz + c * sz / 8
        }
    };
    // Within the default 48 KiB of dynamic shared memory.
    let mut log_c = log_c;
    while log_c > 0 && words(1 << log_c) * 8 > 48 * 1024 {
        log_c -= 1;
    }
    let (c, words) = (1u32 << log_c, words(1 << log_c));
    let cfg = LaunchConfig {
        grid_dim: (1u32 << (subs - log_c), limbs, 1),
        block_dim: (c << lt, 1, 1),
        shared_mem_bytes: words * 8,
    };
    (log_c, cfg)
}

/// Forward NTT of every limb of `ls`, in place.
pub(crate) fn forward(cx: &Ctx, ls: LimbSet) -> Result<()> {
    forward_list(cx, &ls.limbs())
}

/// Inverse NTT of every limb of `ls`, in place (scaling by n^-1 included).
pub(crate) fn inverse(cx: &Ctx, ls: LimbSet) -> Result<()> {
    inverse_list(cx, &ls.limbs())
}

/// Forward NTT of each limb (`src` to `dst`).
pub(crate) fn forward_list(cx: &Ctx, limbs: &[Limb]) -> Result<()> {
    forward_passes(cx, limbs, Passes::Both)
}

/// The second of the two forward passes of each limb, in place, for limbs whose first pass
/// ran in [`forward_key_product`] (`src` and `dst` the same words). Needs [`two_passes`].
pub(crate) fn forward_last_list(cx: &Ctx, limbs: &[Limb]) -> Result<()> {
    if !two_passes(cx) {
        return Err(crate::error::Error::Unsupported {
            what: "a last forward pass alone on a ring of one pass".into(),
        });
    }
    forward_passes(cx, limbs, Passes::Last)
}

/// Whether this ring's forward NTT runs as two passes (a first, then a last).
pub(crate) fn two_passes(cx: &Ctx) -> bool {
    passes(cx.n.trailing_zeros())[1].s != 0
}

/// Which passes [`forward_passes`] runs. `First` then `Last` is `Both`: on a ring of one pass,
/// `First` runs nothing (its one pass is the last).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Passes {
    Both,
    First,
    Last,
}

/// The forward passes `which` selects at `log n`, in order (`s = 0`: none): a ring of one pass
/// has no first pass apart from its last.
pub(super) fn forward_order(logn: u32, which: Passes) -> [Pass; 2] {
    let [p0, p1] = passes(logn);
    let none = Pass { s: 0, l: 0 };
    match (which, p1.s) {
        (Passes::Both, _) => [p0, p1],
        (Passes::First, 0) => [none, none],
        (Passes::First, _) => [p0, none],
        (Passes::Last, 0) => [p0, none],
        (Passes::Last, _) => [none, p1],
    }
}

/// [`forward_list`], or only the first of two passes (the second is then run by
/// [`forward_key_product`] or [`forward_last_list`]), or only the last.
pub(super) fn forward_passes(cx: &Ctx, limbs: &[Limb], which: Passes) -> Result<()> {
    forward_passes_adding(cx, limbs, which, 0)
}

/// [`forward_passes`] whose exact converted loads also subtract `P·c` (`coef_delta`, see
/// [`forward_finish_first_adding`]; 0 for none).
pub(super) fn forward_passes_adding(
    cx: &Ctx,
    limbs: &[Limb],
    which: Passes,
    coef_delta: i64,
) -> Result<()> {
    let logn = cx.n.trailing_zeros();
    let slots = cx.slots();
    let (tw, tws) = (cx.t(cx.layout.ntt.fwd), cx.t(cx.layout.ntt.fwd_shoup));
    let twp = cx.t(cx.layout.ntt.fwd_pair);
    let f = cx.dev.function("ntt", "ntt_forward_pass")?;
    let [p0, p1] = forward_order(logn, which);
    let exact = limbs
        .iter()
        .any(|l| matches!(l.load, Load::ConvertExact(_)));
    let ch = chunks(limbs, cx.dev.tuning().ntt_sort(limbs.len()));
    for (mut list, count) in ch {
        let mut lifted = list.slot[..count as usize]
            .iter()
            .any(|&w| w >> LIFT_SHIFT != 0);
        for p in [p0, p1] {
            if p.s == 0 {
                continue;
            }
            let last: u32 = (p.l == 0) as u32;
            if let Some(name) = plain_kernel(p, false) {
                let f64 = mostly_f64(
                    cx,
                    list.slot[..count as usize]
                        .iter()
                        .map(|&w| w & LIFT_SLOT_MASK),
                );
                let (log_c, cfg) = config_r8(cx.dev.tuning(), logn, p, count, f64);
                if lifted {
                    // The first pass lifts or converts as it loads (the fused kernel, no fused
                    // mode; its register-capped copy where a limb converts); the slot words then
                    // lose their load bits for the second.
                    let converts = list.slot[..count as usize]
                        .iter()
                        .any(|&w| (w >> LIFT_SHIFT) & CONVERT_FLAG != 0);
                    let names = match (converts, exact) {
                        _ if coef_delta != 0 => &R8_FWD_CONVERT_COEF,
                        (_, true) => &R8_FWD_CONVERT_EXACT,
                        (true, false) => &R8_FWD_CONVERT,
                        (false, false) => &R8_FWD_FUSED,
                    };
                    let f8 = cx.dev.function("ntt", names[p.s as usize - 3])?;
                    let mode = 0u32;
                    let fa = FusedArgs {
                        conv_rows: cx.t(cx.layout.convert_rows),
                        coef_delta,
                        ..FusedArgs::default()
                    };
                    launch!(
                        cx.stream, f8, cfg, &list, &slots, &twp, &logn, &p.l, &log_c, &last, &mode,
                        &fa
                    )?;
                    for w in &mut list.slot[..count as usize] {
                        *w &= LIFT_SLOT_MASK;
                    }
                    lifted = false;
                } else {
                    let f8 = cx.dev.function("ntt", name)?;
                    launch!(
                        cx.stream, f8, cfg, &list, &slots, &twp, &logn, &p.l, &log_c, &last
                    )?;
                }
            } else if lifted {
                return Err(crate::error::Error::Unsupported {
                    what: "lifted limbs without the register-blocked NTT (see lift_on_load)".into(),
                });
            } else {
                let (log_c, cfg) = config(cx.dev.tuning(), logn, p, count);
                launch!(
                    cx.stream, f, cfg, &list, &slots, &tw, &tws, &logn, &p.s, &p.l, &log_c, &last
                )?;
            }
            list.src = list.dst;
        }
    }
    Ok(())
}

/// `RESCALE_LOAD` / `RESCALE_STORE` of ntt.cu.
pub(super) const RESCALE_LOAD: u32 = 1;
pub(super) const RESCALE_STORE: u32 = 2;

/// The fused-mode arguments of the forward register-blocked passes. Mirrors `struct FusedArgs`
/// of ntt.cu.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(super) struct FusedArgs {
    pub(super) rconsts: u64,
    pub(super) level: u32,
    pub(super) use_t: u32,
    /// The conversion rows (`TableLayout::convert_rows`) of `Load::Convert` limbs.
    pub(super) conv_rows: u64,
    /// The rescale's store reads the old words at `out + src_delta` words (0: in place).
    pub(super) src_delta: i64,
    pub(super) tq_w: [u64; MAX_FUSED_SLOTS],
    pub(super) tq_ws: [u64; MAX_FUSED_SLOTS],
    /// Exact converted limbs subtract `P·c`, `c` the word at `dst + coef_delta` (0: none; see
    /// [`forward_finish_first_adding`]).
    pub(super) coef_delta: i64,
    /// [`super::tensor::TensorDeltas::delta`] of the tensor-product loads.
    pub(super) tensor_delta: [[i64; 3]; 2],
    /// [`TensorDeltas::split`].
    pub(super) tensor_split: u32,
    pub(super) tensor_pad: u32,
    /// [`AddScaled::delta`] of the scaled-sum loads.
    pub(super) add_delta: [i64; 2],
    /// [`AddScaled::consts`].
    pub(super) add_consts: u64,
    /// The loading inverse passes also store the words they form at `src + load_copy_delta`
    /// words (0: no copy; [`inverse_tensor`]'s `copy_delta`).
    pub(super) load_copy_delta: i64,
}
// SAFETY: plain repr(C) fields (u64, 2 u32, u64, i64, 2 arrays of u64, i64, an i64 array, 2 u32,
// an i64 array, u64, i64) matching `struct FusedArgs` of ntt.cu.
unsafe impl DeviceRepr for FusedArgs {}

/// `MAX_FUSED_SLOTS` of ntt.cu.
pub(super) const MAX_FUSED_SLOTS: usize = 64;

impl Default for FusedArgs {
    fn default() -> Self {
        FusedArgs {
            rconsts: 0,
            level: 0,
            use_t: 0,
            conv_rows: 0,
            src_delta: 0,
            tq_w: [0; MAX_FUSED_SLOTS],
            tq_ws: [0; MAX_FUSED_SLOTS],
            coef_delta: 0,
            tensor_delta: [[0; 3]; 2],
            tensor_split: 0,
            tensor_pad: 0,
            add_delta: [0; 2],
            add_consts: 0,
            load_copy_delta: 0,
        }
    }
}

/// One limb of a fused forward NTT: `(src, tmp, dst, slot)` (see [`forward_fused`]).
pub(super) type FusedLimb = (u64, u64, u64, u32);

/// Whether the register-blocked passes handle every pass of this ring (the fused modes need
/// them).
pub(super) fn fused_passes_available(logn: u32) -> bool {
    let [p0, p1] = passes(logn);
    r8(p0) && (p1.s == 0 || r8(p1))
}

/// Runs the forward NTT of `limbs` with the fused `mode` on the pass(es) it applies to: the
/// first pass reads `src` (`RESCALE_LOAD` there), the last writes `dst` (`*_STORE` there);
/// with two passes the first writes `tmp` and the second reads it. (The rescale's copy of the
/// fused kernel, `ntt_fwd_rescale_r8_S`, held to fewer registers: its only caller is
/// [`forward_rescale`].)
pub(super) fn forward_fused(
    cx: &Ctx,
    limbs: &[FusedLimb],
    load_mode: u32,
    store_mode: u32,
    fa: FusedArgs,
) -> Result<()> {
    let logn = cx.n.trailing_zeros();
    let [p0, p1] = passes(logn);
    let slots = cx.slots();
    let twp = cx.t(cx.layout.ntt.fwd_pair);
    for ch in limbs.chunks(MAX_LIST) {
        let list_of = |f: &dyn Fn(&FusedLimb) -> (u64, u64)| -> LimbList {
            let v: Vec<Limb> = ch
                .iter()
                .map(|x| {
                    let (src, dst) = f(x);
                    Limb {
                        src,
                        dst,
                        slot: x.3,
                        load: Load::Plain,
                    }
                })
                .collect();
            chunks(&v, cx.dev.tuning().ntt_sort(v.len()))
                .into_iter()
                .next()
                .map(|c| c.0)
                .expect("a non-empty chunk")
        };
        let count = ch.len() as u32;
        let f64 = mostly_f64(cx, ch.iter().map(|x| x.3));
        let steps: Vec<(Pass, LimbList, u32)> = if p1.s == 0 {
            vec![(p0, list_of(&|x| (x.0, x.2)), load_mode | store_mode)]
        } else {
            vec![
                (p0, list_of(&|x| (x.0, x.1)), load_mode),
                (p1, list_of(&|x| (x.1, x.2)), store_mode),
            ]
        };
        for (p, list, mode) in steps {
            let last: u32 = (p.l == 0) as u32;
            let f8 = cx.dev.function("ntt", R8_FWD_RESCALE[p.s as usize - 3])?;
            let (log_c, cfg) = config_r8(cx.dev.tuning(), logn, p, count, f64);
            launch!(
                cx.stream, f8, cfg, &list, &slots, &twp, &logn, &p.l, &log_c, &last, &mode, &fa
            )?;
        }
    }
    Ok(())
}

/// Inverse NTT of each limb (`src` to `dst`), scaling by n^-1 included.
pub(crate) fn inverse_list(cx: &Ctx, limbs: &[Limb]) -> Result<()> {
    inverse_list_with(cx, limbs, cx.t(cx.layout.ntt.ntt_consts), 0, 0, None)
}

/// Whether the first pass of this ring's inverse NTT is register-blocked (the loading copies
/// of it, [`inverse_tensor`] and [`inverse_adding`], exist only so).
pub(super) fn first_inverse_blocked(cx: &Ctx) -> bool {
    let [p0, p1] = passes(cx.n.trailing_zeros());
    let first = if p1.s == 0 { p0 } else { p1 };
    plain_kernel(first, true).is_some()
}

/// [`inverse_list`] with other final constants (`[c, shoup, c', shoup]` by slot at device
/// address `consts`, the layout of the ring's `n^-1, n^-1·ψ^(-n/2)` table): for constants
/// scaled by `k`, the output is `k·INTT(x)`.
pub(crate) fn inverse_list_consts(cx: &Ctx, limbs: &[Limb], consts: u64) -> Result<()> {
    inverse_list_with(cx, limbs, consts, 0, 0, None)
}

/// [`inverse_list_consts`] (`None`: the plain constants) that also copies each limb's input
/// words to `copy_delta` words past its `src` (the out-of-place rescale's dropped limb): by the
/// first pass as it loads them where that is register-blocked, else by a device copy first.
pub(crate) fn inverse_list_copying(
    cx: &Ctx,
    limbs: &[Limb],
    consts: Option<u64>,
    copy_delta: i64,
) -> Result<()> {
    let consts = consts.unwrap_or_else(|| cx.t(cx.layout.ntt.ntt_consts));
    let [p0, p1] = passes(cx.n.trailing_zeros());
    let first = if p1.s == 0 { p0 } else { p1 };
    if plain_kernel(first, true).is_none() {
        for l in limbs {
            let to = l.src.wrapping_add_signed(8 * copy_delta);
            super::copy_words(cx, l.src, to, cx.n as usize)?;
        }
        return inverse_list_with(cx, limbs, consts, 0, 0, None);
    }
    inverse_list_with(cx, limbs, consts, 0, copy_delta, None)
}

/// mod_up's inverse NTT at `level` for digits converted on load ([`convert_on_load`]): the
/// limbs of the digits with a conversion row come out as `v = (x + h_in)·q̂^-1 mod q` (the
/// constants of `TableLayout::mod_up_prescale`), the others as [`inverse_list`] writes them.
pub(crate) fn inverse_list_prescaled(cx: &Ctx, limbs: &[Limb], level: usize) -> Result<()> {
    let p = cx.layout.mod_up_prescale[level];
    inverse_list_with(cx, limbs, cx.t(p.consts), cx.t(p.offs), 0, None)
}

/// mod_down's inverse NTT of the special limbs for converted loads
/// (`TableLayout::mod_down_row0`): the constants and offsets of `tables::mod_down_prescale`
/// uploaded at `consts` (4 words by slot) and `offs` (one word by slot). Needs
/// [`convert_on_load`].
pub(crate) fn inverse_list_prescaled_at(
    cx: &Ctx,
    limbs: &[Limb],
    consts: u64,
    offs: u64,
) -> Result<()> {
    inverse_list_with(cx, limbs, consts, offs, 0, None)
}

/// [`inverse_list`] with the last stage's constants at `consts` (`[c0, shoup, c2, shoup]` by
/// slot) and, unless 0, an offset by slot at `offs` added to the outputs (register-blocked
/// passes only; the others ignore it, so the callers of a nonzero `offs` check
/// [`convert_on_load`]).
/// `copy_delta` (words, 0 for none) goes to the register-blocked first pass (see
/// [`inverse_list_copying`]). With `loading` the first pass is that family's loading kernel
/// with those arguments ([`inverse_tensor`], [`inverse_adding`]).
pub(super) fn inverse_list_with(
    cx: &Ctx,
    limbs: &[Limb],
    consts: u64,
    offs: u64,
    copy_delta: i64,
    loading: Option<(&[&'static str; 9], &FusedArgs)>,
) -> Result<()> {
    let logn = cx.n.trailing_zeros();
    let slots = cx.slots();
    let (tw, tws) = (cx.t(cx.layout.ntt.inv), cx.t(cx.layout.ntt.inv_shoup));
    let twp = cx.t(cx.layout.ntt.inv_pair);
    let f = cx.dev.function("ntt", "ntt_inverse_pass")?;
    let [p0, p1] = passes(logn);
    for (mut list, count) in chunks(limbs, cx.dev.tuning().ntt_sort(limbs.len())) {
        // The first pass copies (or forms its loads), the second not.
        let mut copy = copy_delta;
        let mut loading = loading;
        for p in [p1, p0] {
            if p.s == 0 {
                continue;
            }
            if let Some(name) = plain_kernel(p, true) {
                let f64 = mostly_f64(
                    cx,
                    list.slot[..count as usize]
                        .iter()
                        .map(|w| w & LIFT_SLOT_MASK),
                );
                let (log_c, cfg) = config_r8(cx.dev.tuning(), logn, p, count, f64);
                if let Some((names, fa)) = loading.take() {
                    let f8 = cx.dev.function("ntt", names[p.s as usize - 3])?;
                    launch!(
                        cx.stream, f8, cfg, &list, &slots, &twp, &consts, &logn, &p.l, &log_c, fa
                    )?;
                    // The plain second pass takes bare slots.
                    for w in &mut list.slot[..count as usize] {
                        *w &= LIFT_SLOT_MASK;
                    }
                } else {
                    let f8 = cx.dev.function("ntt", name)?;
                    launch!(
                        cx.stream, f8, cfg, &list, &slots, &twp, &consts, &offs, &logn, &p.l,
                        &log_c, &copy
                    )?;
                }
                copy = 0;
            } else {
                let (log_c, cfg) = config(cx.dev.tuning(), logn, p, count);
                launch!(
                    cx.stream, f, cfg, &list, &slots, &tw, &tws, &consts, &logn, &p.s, &p.l, &log_c
                )?;
            }
            list.src = list.dst;
        }
    }
    Ok(())
}

mod strided;
pub(crate) use strided::{forward_strided, forward_strided_first, inverse_strided};

#[cfg(test)]
mod tests;
