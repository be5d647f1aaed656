//! Launch wrappers of `kernels/ntt.cu`: forward and inverse negacyclic NTT over every limb of a
//! limb set, hierarchical: one shared-memory pass for n <= 2^11, two passes above (each pass is
//! one launch over all limbs).

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
    /// [`TensorDeltas`]; only the first pass of [`inverse_tensor`] loads so.
    Tensor(u32),
    /// `AddScaled(c)`: `b + x·k mod q` for `x` at `src`, `b` at the launch's [`AddScaled`]
    /// delta `c` (0 or 1) and `k` its constant of the limb's slot; only the first pass of
    /// [`inverse_adding`] loads so.
    AddScaled(u32),
}

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
struct Pass {
    s: u32,
    l: u32,
}

fn passes(logn: u32) -> [Pass; 2] {
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
const R8_INV_TENSOR: [&str; 9] = r8_names!("ntt_inv_tensor_r8_");
/// The first inverse pass with scaled-sum loads (`ntt_inv_add_r8_S`, [`inverse_adding`]).
const R8_INV_ADD: [&str; 9] = r8_names!("ntt_inv_add_r8_");
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
fn mostly_f64(cx: &Ctx, slots: impl IntoIterator<Item = u32>) -> bool {
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
fn config_r8(t: &Tuning, logn: u32, p: Pass, limbs: u32, f64: bool) -> (u32, LaunchConfig) {
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
enum Passes {
    Both,
    First,
    Last,
}

/// [`forward_list`], or only the first of two passes (the second is then run by
/// [`forward_key_product`] or [`forward_last_list`]), or only the last.
fn forward_passes(cx: &Ctx, limbs: &[Limb], which: Passes) -> Result<()> {
    forward_passes_adding(cx, limbs, which, 0)
}

/// [`forward_passes`] whose exact converted loads also subtract `P·c` (`coef_delta`, see
/// [`forward_finish_first_adding`]; 0 for none).
fn forward_passes_adding(cx: &Ctx, limbs: &[Limb], which: Passes, coef_delta: i64) -> Result<()> {
    let logn = cx.n.trailing_zeros();
    let slots = cx.slots();
    let (tw, tws) = (cx.t(cx.layout.ntt.fwd), cx.t(cx.layout.ntt.fwd_shoup));
    let twp = cx.t(cx.layout.ntt.fwd_pair);
    let f = cx.dev.function("ntt", "ntt_forward_pass")?;
    let [p0, p1] = passes(logn);
    let none = Pass { s: 0, l: 0 };
    let [p0, p1] = match (which, p1.s) {
        (Passes::Both, _) => [p0, p1],
        (Passes::First, 0) => [none, none],
        (Passes::First, _) => [p0, none],
        (Passes::Last, 0) => [p0, none],
        (Passes::Last, _) => [none, p1],
    };
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

/// `MAX_KP` of ntt.cu: slots per launch of the fused key product.
const MAX_KP: usize = 64;
/// `NO_DIGIT` of ntt.cu.
const NO_DIGIT: u32 = u32::MAX;

/// Slots of one fused key-product launch and the digit owning each (or `NO_DIGIT`). Mirrors
/// `struct KeyProdList` of ntt.cu.
#[repr(C)]
#[derive(Clone, Copy)]
struct KeyProdList {
    slot: [u32; MAX_KP],
    own: [u32; MAX_KP],
}
// SAFETY: plain repr(C) arrays of u32 matching `struct KeyProdList` of ntt.cu.
unsafe impl DeviceRepr for KeyProdList {}

/// The buffers of the fused key product (device addresses; slots per component). Mirrors
/// `struct KeyProdArgs` of ntt.cu.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct KeyProdArgs {
    /// The raised digits (`ext_spc` slots per digit).
    pub ext: u64,
    /// The key: `2·digits` components of `key_spc` slots.
    pub key: u64,
    /// The input component (NTT form): its limb of slot `s` at `input + 8·s·n`.
    pub input: u64,
    /// The 2-component accumulator (`acc_spc` slots per component), written.
    pub acc: u64,
    /// The automorphism's NTT-form index map (`u32` by coefficient), or 0 for none.
    pub map: u64,
    pub ext_spc: u32,
    pub key_spc: u32,
    pub acc_spc: u32,
    pub digits: u32,
    /// Multiply + relinearize (`CudaBackend::mul_relin_mod_t`): the product's operands, 0 for
    /// none.
    pub prod_a: u64,
    pub prod_b: u64,
    /// `P mod q` by slot (`tables::p_mod_q`).
    pub p_mod_q: u64,
    pub prod_a_spc: u32,
    pub prod_b_spc: u32,
    /// The rows of slots below this one add `P·(c_0, c_1)` of the product.
    pub prod_slots: u32,
    pub pad: u32,
}
// SAFETY: plain repr(C) fields (5 u64, 4 u32, 3 u64, 4 u32) matching `struct KeyProdArgs` of
// ntt.cu.
unsafe impl DeviceRepr for KeyProdArgs {}

/// The fused last forward pass with the key product (`ntt_keyprod_r8_S`), by S = 3..=11.
const R8_KEYPROD: [&str; 9] = r8_names!("ntt_keyprod_r8_");

/// The last pass and launch shape of the fused key product over `rows` slots, or `None` where
/// it does not apply: register-blocked passes not covering the ring, the tuning keeping it
/// unfused on this ring ([`Tuning::key_product_fused`]), or more shared memory than the default
/// 48 KiB (the pass's exchange buffer plus 256 bytes of 128-bit sums per thread; only rings of
/// 2^11 run one pass that large).
fn key_product_launch(
    t: &Tuning,
    logn: u32,
    rows: u32,
    f64: bool,
) -> Option<(Pass, u32, LaunchConfig)> {
    if !t.key_product_fused(1 << logn) || !fused_passes_available(logn) {
        return None;
    }
    let [p0, p1] = passes(logn);
    let last = if p1.s == 0 { p0 } else { p1 };
    let (log_c, mut cfg) = config_r8(t, logn, last, rows, f64);
    // The kernel's exchange buffer, rounded up to 16 bytes, then the sums.
    let words = ((1u32 << (log_c + last.s)) * 9 / 8 + 1) & !1;
    cfg.shared_mem_bytes = 8 * words + 256 * cfg.block_dim.0;
    (cfg.shared_mem_bytes <= 48 * 1024).then_some((last, log_c, cfg))
}

/// Whether [`forward_key_product`] applies to this ring.
pub(crate) fn key_product_fusable(cx: &Ctx) -> bool {
    let logn = cx.n.trailing_zeros();
    let t = cx.dev.tuning();
    key_product_launch(t, logn, 1, false).is_some()
        && key_product_launch(t, logn, 1, true).is_some()
}

/// mod_up's forward NTT of the converted digit limbs `limbs` fused with the key product of a
/// single key switch: runs the first pass of `limbs` (in place), then, per slot of `rows`
/// (`(slot, digit owning it)`), the last pass of every digit's limb with its outputs kept on
/// chip and `acc_c = Σ_j σ(ext_j)·key_{2j+c}` written (`ntt_keyprod_r8_S`; σ the automorphism
/// of `args.map`, if any). The same accumulator as [`forward_list`] followed by the key
/// product; the NTT-form digits are never stored and the digits' own limbs are read from the
/// input. Needs [`key_product_fusable`].
pub(crate) fn forward_key_product(
    cx: &Ctx,
    limbs: &[Limb],
    rows: &[(u32, Option<u32>)],
    args: KeyProdArgs,
) -> Result<()> {
    forward_passes(cx, limbs, Passes::First)?;
    key_product_rows(cx, rows, args)
}

/// The key-product launches of [`forward_key_product`] alone, over `rows` (the first pass of
/// the digits' limbs already enqueued): a caller may split the rows over several calls.
pub(crate) fn key_product_rows(
    cx: &Ctx,
    rows: &[(u32, Option<u32>)],
    args: KeyProdArgs,
) -> Result<()> {
    let logn = cx.n.trailing_zeros();
    let slots = cx.slots();
    let twp = cx.t(cx.layout.ntt.fwd_pair);
    for ch in rows.chunks(MAX_KP) {
        let f64 = mostly_f64(cx, ch.iter().map(|r| r.0));
        let (last, log_c, cfg) = key_product_launch(cx.dev.tuning(), logn, ch.len() as u32, f64)
            .ok_or_else(|| crate::error::Error::Unsupported {
                what: "the fused key product on this ring".into(),
            })?;
        let mut list = KeyProdList {
            slot: [0; MAX_KP],
            own: [NO_DIGIT; MAX_KP],
        };
        for (i, &(slot, own)) in ch.iter().enumerate() {
            list.slot[i] = slot;
            list.own[i] = own.unwrap_or(NO_DIGIT);
        }
        let f = cx.dev.function("ntt", R8_KEYPROD[last.s as usize - 3])?;
        launch!(cx.stream, f, cfg, &list, &args, &slots, &twp, &logn, &log_c)?;
    }
    Ok(())
}

/// Whether [`key_product_early`] takes the unfused launches for `rows` rows of which
/// `special` are the special primes' (the rest the rescale's top row), on a ring of degree `n`.
/// Measured on an H100 (gpu_perf, old and new binaries alternated twice in one call): the
/// unfused launches pay where the side stream's rows are the critical path of the key switch
/// and the fused launch has few warps: n = 2^15 with two special primes (BGV/BFV PHANTOM_INT:
/// relinearize and rotate 5–7% faster) or three (CKKS CAT: 2–5%). With one special prime
/// (CAT_COMPAT) the side stream is not the critical path (1–2% slower), at n = 2^13 the extra
/// launches cost more than they save (BGV N13: 3–25% slower), and at n = 2^16 the fused launch
/// has warps enough (PHANTOM_N16 1–1.5% slower, N16_L24_D3 with the rescale 2.5%). Measured
/// again on an H200 with the later key switch (nineteenth session, three alternations):
/// PHANTOM_N16's three special rows without the rescale now gain (rotate 456.8 → 453.6 µs,
/// multiply + relinearize 481.6 → 478.4), with its rescale row they do not (499.5 → 500.1), and
/// N16_L24_D3's seven rows are even without the rescale and 2% slower with it.
fn early_unfused_pays(n: usize, rows: usize, special: usize) -> bool {
    (n == 1 << 15 && special >= 2 && rows <= 4) || (n == 1 << 16 && special == 3 && rows == 3)
}

/// The rows `mod_down` starts from (the special primes', and the top one with the rescale;
/// `set` is the accumulator's one-component set over exactly those `rows`), launched on the
/// side stream ([`crate::side`]): [`key_product_rows_unfused`] on rings of two passes where
/// [`early_unfused_pays`], else [`key_product_rows`].
pub(crate) fn key_product_early(
    cx: &Ctx,
    rows: &[(u32, Option<u32>)],
    set: LimbSet,
    args: KeyProdArgs,
) -> Result<()> {
    let pays = early_unfused_pays(cx.n as usize, rows.len(), set.p_cnt as usize);
    if two_passes(cx) && pays {
        key_product_rows_unfused(cx, rows, set, args)
    } else {
        key_product_rows(cx, rows, args)
    }
}

/// [`key_product_rows`] as separate launches, for a few rows: the last forward pass of every
/// digit's limb of those rows in place in `args.ext` (a digit's own limb, which the fused
/// kernel reads from `args.input`, is copied there, already in NTT form), then the elementwise
/// product `acc_c = Σ_j σ(ext_j)·key_{2j+c}` over `set`. The same accumulator words. The fused
/// kernel gives each thread 8 words of one row and loops over the digits, so a launch of two
/// or three rows runs a few warps an SM, latency-bound; here the pass runs over digits × rows
/// limbs and the product one thread per word. Needs [`two_passes`].
fn key_product_rows_unfused(
    cx: &Ctx,
    rows: &[(u32, Option<u32>)],
    set: LimbSet,
    args: KeyProdArgs,
) -> Result<()> {
    let n = cx.n as u64;
    let mut limbs = Vec::with_capacity(rows.len() * args.digits as usize);
    for &(slot, own) in rows {
        for j in 0..args.digits {
            let at = args.ext + 8 * (j as u64 * args.ext_spc as u64 + slot as u64) * n;
            if own == Some(j) {
                super::copy_words(cx, args.input + 8 * slot as u64 * n, at, n as usize)?;
            } else {
                limbs.push(Limb {
                    src: at,
                    dst: at,
                    slot,
                    load: Load::Plain,
                });
            }
        }
    }
    forward_last_list(cx, &limbs)?;
    super::keyswitch::key_product(
        cx,
        set,
        args.ext,
        args.ext_spc,
        args.key,
        args.key_spc,
        args.digits,
        args.map,
        true,
    )
}

/// What the fused mod_down step writes (`FINISH_*` of ntt.cu).
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

/// The arguments of `ntt_finish_r8_S`. Mirrors `struct FinishArgs` of ntt.cu.
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
// SAFETY: repr(C) fields matching `struct FinishArgs` of ntt.cu: four LimbSets, three u64, four
// u32 (`Finish` is repr(u32)) and `Scalars` (= `SlotPairs`).
unsafe impl DeviceRepr for FinishArgs {}

/// The fused mod_down step (`ntt_finish_r8_S`), by S = 3..=11.
const R8_FINISH: [&str; 9] = r8_names!("ntt_finish_r8_");

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

/// `RESCALE_LOAD` / `RESCALE_STORE` of ntt.cu.
const RESCALE_LOAD: u32 = 1;
const RESCALE_STORE: u32 = 2;

/// The fused-mode arguments of the forward register-blocked passes. Mirrors `struct FusedArgs`
/// of ntt.cu.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct FusedArgs {
    rconsts: u64,
    level: u32,
    use_t: u32,
    /// The conversion rows (`TableLayout::convert_rows`) of `Load::Convert` limbs.
    conv_rows: u64,
    /// The rescale's store reads the old words at `out + src_delta` words (0: in place).
    src_delta: i64,
    tq_w: [u64; MAX_FUSED_SLOTS],
    tq_ws: [u64; MAX_FUSED_SLOTS],
    /// Exact converted limbs subtract `P·c`, `c` the word at `dst + coef_delta` (0: none; see
    /// [`forward_finish_first_adding`]).
    coef_delta: i64,
    /// [`TensorDeltas::delta`] of the tensor-product loads.
    tensor_delta: [[i64; 3]; 2],
    /// [`TensorDeltas::split`].
    tensor_split: u32,
    tensor_pad: u32,
    /// [`AddScaled::delta`] of the scaled-sum loads.
    add_delta: [i64; 2],
    /// [`AddScaled::consts`].
    add_consts: u64,
    /// The loading inverse passes also store the words they form at `src + load_copy_delta`
    /// words (0: no copy; [`inverse_tensor`]'s `copy_delta`).
    load_copy_delta: i64,
}
// SAFETY: plain repr(C) fields (u64, 2 u32, u64, i64, 2 arrays of u64, i64, an i64 array, 2 u32,
// an i64 array, u64, i64) matching `struct FusedArgs` of ntt.cu.
unsafe impl DeviceRepr for FusedArgs {}

/// `MAX_FUSED_SLOTS` of ntt.cu.
const MAX_FUSED_SLOTS: usize = 64;

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
type FusedLimb = (u64, u64, u64, u32);

/// Whether the register-blocked passes handle every pass of this ring (the fused modes need
/// them).
fn fused_passes_available(logn: u32) -> bool {
    let [p0, p1] = passes(logn);
    r8(p0) && (p1.s == 0 || r8(p1))
}

/// Runs the forward NTT of `limbs` with the fused `mode` on the pass(es) it applies to: the
/// first pass reads `src` (`RESCALE_LOAD` there), the last writes `dst` (`*_STORE` there);
/// with two passes the first writes `tmp` and the second reads it. (The rescale's copy of the
/// fused kernel, `ntt_fwd_rescale_r8_S`, held to fewer registers: its only caller is
/// [`forward_rescale`].)
fn forward_fused(
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

/// Inverse NTT of each limb (`src` to `dst`), scaling by n^-1 included.
pub(crate) fn inverse_list(cx: &Ctx, limbs: &[Limb]) -> Result<()> {
    inverse_list_with(cx, limbs, cx.t(cx.layout.ntt.ntt_consts), 0, 0, None)
}

/// Whether [`inverse_tensor`] can run on this ring (its first inverse pass is register-blocked).
pub(crate) fn tensor_on_load(cx: &Ctx) -> bool {
    first_inverse_blocked(cx)
}

/// Whether the first pass of this ring's inverse NTT is register-blocked (the loading copies
/// of it, [`inverse_tensor`] and [`inverse_adding`], exist only so).
fn first_inverse_blocked(cx: &Ctx) -> bool {
    let [p0, p1] = passes(cx.n.trailing_zeros());
    let first = if p1.s == 0 { p0 } else { p1 };
    plain_kernel(first, true).is_some()
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
fn inverse_list_with(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::xorshift;

    /// The operands' deltas point from `a_0`'s limb of a slot at `a_1`'s, `b_0`'s and `b_1`'s limb
    /// of that slot, whichever buffer lies lower.
    #[test]
    fn tensor_operand_deltas_reach_each_operand() {
        let set = |ptr: u64, spc: u32| LimbSet {
            ptr,
            n: 1 << 12,
            spc,
            comp_lo: 0,
            comps: 2,
            q_lo: 0,
            q_cnt: 3,
            p_lo: 0,
            p_cnt: 0,
        };
        for (pa, pb) in [(1u64 << 40, (1u64 << 40) + (1 << 30)), (1 << 41, 1 << 40)] {
            let (a, b) = (set(pa, 5), set(pb, 7));
            let d = TensorDeltas::operands(&a, &b);
            let at = |base: u64, words: i64| base.wrapping_add_signed(8 * words);
            let limb =
                |l: &LimbSet, c: u64, s: u64| l.ptr + 8 * (c * l.spc as u64 + s) * l.n as u64;
            for s in 0..3 {
                let a0 = limb(&a, 0, s);
                assert_eq!(at(a0, d[0]), limb(&a, 1, s));
                assert_eq!(at(a0, d[1]), limb(&b, 0, s));
                assert_eq!(at(a0, d[2]), limb(&b, 1, s));
            }
        }
    }

    /// `chunks` lists every limb once, ordered by slot and stable within a slot (as a stable
    /// sort would), in lists of at most `MAX_LIST`, with each list's count; the counting sort,
    /// the already-sorted path and the fallback for large slots alike.
    #[test]
    fn chunks_is_a_stable_sort_by_slot() {
        let mut rng = xorshift(7);
        for (len, slots) in [
            (0usize, 4u64),
            (1, 1),
            (5, 3),
            (26, 14),
            (98, 16),
            (128, 30),
            (300, 40),
            (200, 600),
        ] {
            for presorted in [false, true] {
                let mut limbs: Vec<Limb> = (0..len)
                    .map(|i| Limb {
                        src: 1000 + i as u64,
                        dst: 5000 + i as u64,
                        slot: (rng() % slots) as u32,
                        load: if i % 3 == 0 {
                            Load::Lift(2)
                        } else {
                            Load::Plain
                        },
                    })
                    .collect();
                if presorted {
                    limbs.sort_by_key(|l| l.slot);
                }
                let mut want = limbs.clone();
                want.sort_by_key(|l| l.slot);
                let got = chunks(&limbs, true);
                assert_eq!(got.len(), len.div_ceil(MAX_LIST));
                let mut k = 0;
                for (list, count) in &got {
                    assert_eq!(*count as usize, (len - k).min(MAX_LIST));
                    for i in 0..*count as usize {
                        let w = &want[k];
                        assert_eq!(
                            (list.src[i], list.dst[i]),
                            (w.src, w.dst),
                            "len {len} at {k}"
                        );
                        assert_eq!(list.slot[i], slot_word(w));
                        k += 1;
                    }
                }
                assert_eq!(k, len);
            }
        }
    }

    /// The launches' mirrors of ntt.cu's FP64 bounds ([`NTT_F64_BITS`], [`NTT_F64_WIDE_BITS`])
    /// equal the kernel source's defaults, so block shapes follow the butterflies that run.
    #[test]
    fn f64_bounds_mirror_the_kernel_defaults() {
        let src = crate::kernels::source("ntt").expect("ntt source");
        for (name, value) in [
            ("NTT_F64_BITS", NTT_F64_BITS),
            ("NTT_F64_WIDE_BITS", NTT_F64_WIDE_BITS),
            // The tables' (twiddle, double) pairs (tables.rs, `runs_in_f64`).
            ("TABLE_F64_BITS", NTT_F64_WIDE_BITS),
        ] {
            let line = format!("#define {name} {value}\n");
            assert!(src.contains(&line), "ntt.cu lacks `{}`", line.trim());
        }
    }

    /// The side stream's rows run unfused exactly where the H100 A/B measured a gain (the
    /// rings of the presets, `early_unfused_pays`): `(n, rows, special primes)`, rows counting
    /// the rescale's or modulus switch's top row.
    #[test]
    fn early_rows_unfused_where_measured_faster() {
        let faster = [
            (1 << 15, 2, 2), // BGV/BFV PHANTOM_INT relinearize, rotate
            (1 << 15, 3, 2), // BGV PHANTOM_INT with the fused modulus switch
            (1 << 15, 3, 3), // CKKS CAT relinearize, rotate
            (1 << 15, 4, 3), // CKKS CAT with the rescale
            (1 << 16, 3, 3), // PHANTOM_N16 relinearize, rotate (H200, nineteenth session)
        ];
        let slower = [
            (1 << 15, 1, 1), // CAT_COMPAT
            (1 << 15, 2, 1), // CAT_COMPAT with the rescale
            (1 << 13, 2, 2), // N13 sets
            (1 << 13, 3, 2),
            (1 << 16, 4, 3), // PHANTOM_N16 with the rescale
            (1 << 16, 7, 7), // N16_L24_D3 (even)
            (1 << 16, 8, 7), // N16_L24_D3 with the rescale
        ];
        for (n, rows, special) in faster {
            assert!(early_unfused_pays(n, rows, special), "{n} {rows} {special}");
        }
        for (n, rows, special) in slower {
            assert!(
                !early_unfused_pays(n, rows, special),
                "{n} {rows} {special}"
            );
        }
    }

    /// A CPU model of `F64Arith::mul` and `F64Arith::reduce` of ntt.cu, step for step (Rust's
    /// `f64` operations and `mul_add` are correctly rounded IEEE operations, as the kernel's
    /// intrinsics are).
    mod f64_model {
        pub const MAGIC: f64 = 6755399441055744.0;
        pub fn mul(w: f64, y: f64, q: f64, qinv: f64) -> f64 {
            let hi = w * y;
            let lo = w.mul_add(y, -hi);
            let quot = hi.mul_add(qinv, MAGIC) - MAGIC;
            (-quot).mul_add(q, hi) + lo
        }
        pub fn reduce(x: f64, q: f64, qinv: f64) -> f64 {
            let quot = x.mul_add(qinv, MAGIC) - MAGIC;
            (-quot).mul_add(q, x)
        }
    }

    /// The error bounds the FP64 butterflies rely on (ntt.cu): for w < q < 2^42 and
    /// |y| < 2^46, `mul` gives an integer congruent to w·y with |.| < 0.52q, and `reduce` an
    /// integer congruent to x with |.| < 0.51q; checked against exact i128 arithmetic at the
    /// edges (q just below 2^42, |y| up to 2^46 - 1, w = q - 1) and on random values.
    #[test]
    fn f64_butterfly_arithmetic_is_exact_within_its_bounds() {
        let mut rnd = xorshift(0x9e37_79b9_7f4a_7c15u64);
        let lim = 1i64 << 46;
        for q in [
            (1u64 << 42) - 11,
            (1 << 40) + 15,
            1_099_511_922_689,
            786_433,
            65_537,
            3,
        ] {
            let (qf, qinv) = (q as f64, 1.0 / q as f64);
            let mut ws = vec![q - 1, 1, 0, q / 2];
            let mut ys = vec![lim - 1, -(lim - 1), 10 * q as i64, -(10 * q as i64), 0, 1];
            for _ in 0..4000 {
                ws.push(rnd() % q);
                ys.push((rnd() % (2 * lim as u64 - 1)) as i64 - (lim - 1));
            }
            for (i, &y) in ys.iter().enumerate() {
                let w = ws[i % ws.len()];
                let r = f64_model::mul(w as f64, y as f64, qf, qinv);
                assert_eq!(r.fract(), 0.0, "q {q} w {w} y {y}");
                assert!(r.abs() < 0.52 * qf, "q {q} w {w} y {y}: {r}");
                let diff = (w as i128) * (y as i128) - r as i128;
                assert_eq!(diff.rem_euclid(q as i128), 0, "q {q} w {w} y {y}");
                let x = f64_model::reduce(y as f64, qf, qinv);
                assert!(x.abs() < 0.51 * qf, "q {q} x {y}: {x}");
                assert_eq!(
                    (y as i128 - x as i128).rem_euclid(q as i128),
                    0,
                    "q {q} x {y}"
                );
            }
        }
    }

    /// One trial's conversion inputs for `d` sources: `v_i` below `bound(i)`, the row `h` and
    /// `h_out` below `q`; at the edge every value is its bound less one.
    fn conversion_trial(
        rnd: &mut impl FnMut() -> u64,
        d: usize,
        q: u64,
        bound: impl Fn(usize) -> u64,
        edge: bool,
    ) -> (Vec<u64>, Vec<u64>, u64) {
        let mut below = |b: u64| if edge { b - 1 } else { rnd() % b };
        let v = (0..d).map(|i| below(bound(i))).collect();
        let h = (0..d).map(|_| below(q)).collect();
        (v, h, below(q))
    }

    /// `x`, an FP64 conversion sum, is an integer below 2^46 (where `f64_canonical` is exact;
    /// 2^52 for a wide target, whose forward round reduces it first) congruent mod `q` to the
    /// integer path's word `(Σ v_i·h_i mod q) - h_out`.
    fn assert_is_the_integer_word(x: f64, v: &[u64], h: &[u64], h_out: u64, q: u64) {
        let limit_bits = if q < 1 << NTT_F64_BITS { 46 } else { 52 };
        assert_eq!(x.fract(), 0.0);
        assert!(x.abs() < (1u64 << limit_bits) as f64);
        let exact: u128 = v.iter().zip(h).map(|(&a, &b)| a as u128 * b as u128).sum();
        let want = (exact % q as u128) as i128 - h_out as i128;
        assert_eq!(
            (x as i128 - want).rem_euclid(q as i128),
            0,
            "q {q} d {}",
            v.len()
        );
    }

    /// 3000 FP64 conversion sums `x = Σ_i mul(v_i, h_i) - h_out` for every target `q` and
    /// source count `d` (source i below `sources[i % 4]`, the first trial at the edges):
    /// every term below `term_bound·q`, `|x| < (term_bound·d + 1)·q`, and `x` the integer path's
    /// word ([`assert_is_the_integer_word`]).
    fn check_f64_conversion_sums(
        seed: u64,
        sources: [u64; 4],
        targets: &[u64],
        counts: std::ops::RangeInclusive<usize>,
        term_bound: f64,
    ) {
        let mut rnd = xorshift(seed);
        for &q in targets {
            let (qf, qinv) = (q as f64, 1.0 / q as f64);
            for d in counts.clone() {
                for trial in 0..3000 {
                    let (v, h, h_out) =
                        conversion_trial(&mut rnd, d, q, |i| sources[i % 4], trial == 0);
                    let x = (0..d).fold(-(h_out as f64), |acc, i| {
                        let term = f64_model::mul(h[i] as f64, v[i] as f64, qf, qinv);
                        assert!(term.abs() < term_bound * qf, "q {q} d {d}: term {term}");
                        acc + term
                    });
                    assert!(
                        x.abs() < (term_bound * d as f64 + 1.0) * qf,
                        "q {q} d {d}: {x}"
                    );
                    assert_is_the_integer_word(x, &v, &h, h_out, q);
                }
            }
        }
    }

    /// The FP64 conversion sums (`convert_words_f64` of ntt.cu for D <= 4 sources, the
    /// unrolled `keyswitch_convert_f<D>` for D <= 16): for a target q < 2^42 and sources below
    /// 2^46, Σ_i mul(v_i, h_i) - h_out is an integer congruent to the integer path's word
    /// (Σ v_i·h_i mod q) - h_out, with |.| < (0.52·D + 1)·q: below 3.08q for D <= 4 (inside
    /// the forward pass's input range of 4q) and below 9.4q < 2^46 for D <= 16 (where
    /// `f64_canonical` is exact); at the edges (v_i = q_i - 1 for sources just below 2^46,
    /// h_i = q - 1) and on random values.
    #[test]
    fn f64_converted_words_match_the_integer_sums() {
        let sources = [
            (1 << 46) - 27,
            (1 << 46) - 57,
            (1 << 40) + 15,
            1_099_511_922_689,
        ];
        let targets = [(1 << 42) - 11, (1 << 40) + 15, 786_433, 65_537];
        check_f64_conversion_sums(0x6a09_e667_f3bc_c908, sources, &targets, 2..=16, 0.52);
    }

    /// The wide FP64 conversion sums (`convert_words_f64` with `F64WideArith`, D <= 4): for a
    /// target 2^42 <= q < 2^50 and sources below 2^50 (CONVERT_F64_WIDE_SOURCES), every term is
    /// below 0.75q and Σ_i mul(v_i, h_i) - h_out below (0.75·D + 1)·q <= 4q, an integer
    /// congruent to the integer path's word; at the edges (v_i = q_i - 1 for sources just below
    /// 2^50, h_i = q - 1) and on random values.
    #[test]
    fn f64_wide_converted_words_match_the_integer_sums() {
        let sources = [
            (1 << 50) - 27,
            (1 << 50) - 55,
            (1 << 49) + 69,
            (1 << 45) + 15,
        ];
        let targets = [(1 << 50) - 111, (1 << 49) + 145, (1 << 42) + 15];
        check_f64_conversion_sums(0x510e_527f_ade6_82d1, sources, &targets, 2..=4, 0.75);
    }

    /// The split first source of the unrolled conversion's FP64 sums (`target_f64` of
    /// keyswitch.cu, `CONVERT_F64_SPLIT`): a v_0 below 2^61 enters as
    /// mul(a, 2^30·h_0 mod q) + mul(b, h_0) with v_0 = a·2^30 + b, so with D - 1 narrow sources
    /// the sum less h_out has D + 1 terms, stays below (0.52·(D + 1) + 1)·q < 9.9q < 2^46 for
    /// D <= 16, and is congruent to the integer path's word; at the edges (v_0 = 2^61 - 2 and
    /// narrow sources just below 2^46, h = q - 1) and on random values.
    #[test]
    fn f64_converted_words_with_a_wide_first_source_match_the_integer_sums() {
        let mut rnd = xorshift(0xbb67_ae85_84ca_a73bu64);
        let (wide, narrow) = ((1u64 << 61) - 1, (1u64 << 46) - 27);
        for q in [(1u64 << 42) - 11, (1 << 40) + 15, 786_433] {
            let (qf, qinv) = (q as f64, 1.0 / q as f64);
            for d in 1..=16usize {
                for trial in 0..3000 {
                    let bound = |i| if i == 0 { wide } else { narrow };
                    let (v, h, h_out) = conversion_trial(&mut rnd, d, q, bound, trial == 0);
                    let h0_hi = ((h[0] as u128) << 30) % q as u128;
                    let (a, b) = (v[0] >> 30, v[0] & ((1 << 30) - 1));
                    let split = f64_model::mul(h0_hi as f64, a as f64, qf, qinv)
                        + f64_model::mul(h[0] as f64, b as f64, qf, qinv);
                    let x = (1..d).fold(split - h_out as f64, |acc, i| {
                        acc + f64_model::mul(h[i] as f64, v[i] as f64, qf, qinv)
                    });
                    assert!(
                        x.abs() < (0.52 * (d + 1) as f64 + 1.0) * qf,
                        "q {q} d {d}: {x}"
                    );
                    assert_is_the_integer_word(x, &v, &h, h_out, q);
                }
            }
        }
    }

    /// The wide FP64 butterflies (`F64Arith<true>` of ntt.cu, 2^42 <= q < 2^50), round by
    /// round: a forward round reduces its 8 values and runs three stages of `x ± mul(y, w)`, an
    /// inverse round reduces and runs three stages of `(reduce(u + v), mul(u - v, w))`. Every
    /// multiplicand must stay below 2^51 (the quotient trick's range) and every value be an
    /// integer below 2^52 congruent to the exact butterfly's; the stage bounds of ntt.cu
    /// (forward 1.14q, 1.93q, 2.91q; inverse 0.76q, 0.88q, 0.94q) are checked. Moduli just
    /// below 2^50 and 2^49 and above 2^42; inputs at the edges of the previous round's range
    /// (forward |x| up to 2.91q, inverse 0.94q), twiddles q - 1 and random.
    #[test]
    fn f64_wide_rounds_stay_in_range() {
        let mut rnd = xorshift(0x3c6e_f372_fe94_f82bu64);
        let stage_fwd = [1.14, 1.93, 2.91];
        let stage_inv = [0.76, 0.88, 0.94];
        for q in [
            (1u64 << 50) - 27,
            (1 << 50) - 1,
            (1 << 49) + 69,
            (1 << 42) + 15,
        ] {
            let (qf, qinv) = (q as f64, 1.0 / q as f64);
            let qi = q as i128;
            let in_range = |v: f64| v.fract() == 0.0 && v.abs() < (1u64 << 52) as f64;
            for trial in 0..20_000 {
                for inverse in [false, true] {
                    let lim = if inverse { 0.94 } else { 2.91 };
                    let edge = trial < 4;
                    let x0: Vec<f64> = (0..8)
                        .map(|k| {
                            let m = (lim * qf) as i64;
                            let v = if edge {
                                m - (k as i64 & 1)
                            } else {
                                (rnd() % (2 * m as u64)) as i64 - m
                            };
                            if edge && trial % 2 == 1 {
                                -v as f64
                            } else {
                                v as f64
                            }
                        })
                        .collect();
                    let mut x: Vec<f64> =
                        x0.iter().map(|&v| f64_model::reduce(v, qf, qinv)).collect();
                    let mut exact: Vec<i128> = x0.iter().map(|&v| v as i128).collect();
                    for (k, v) in x.iter().enumerate() {
                        assert!(v.abs() < 0.51 * qf, "q {q} reduce {}: {v}", x0[k]);
                    }
                    for (stage, kb) in [2usize, 1, 0].into_iter().enumerate() {
                        for j in 0..8 {
                            if j & (1 << kb) != 0 {
                                continue;
                            }
                            let (a, b) = (j, j | (1 << kb));
                            let w = if edge { q - 1 } else { rnd() % q };
                            let (wf, wi) = (w as f64, w as i128);
                            if inverse {
                                let (u, v) = (x[a], x[b]);
                                assert!((u - v).abs() < (1u64 << 51) as f64, "q {q}");
                                x[a] = f64_model::reduce(u + v, qf, qinv);
                                x[b] = f64_model::mul(wf, u - v, qf, qinv);
                                let (eu, ev) = (exact[a], exact[b]);
                                exact[a] = eu + ev;
                                exact[b] = (eu - ev) * wi;
                            } else {
                                let (u, y) = (x[a], x[b]);
                                assert!(y.abs() < (1u64 << 51) as f64, "q {q}");
                                let m = f64_model::mul(wf, y, qf, qinv);
                                x[a] = u + m;
                                x[b] = u - m;
                                let (eu, ey) = (exact[a], exact[b] * wi % qi);
                                exact[a] = eu + ey;
                                exact[b] = eu - ey;
                            }
                        }
                        let bound = if inverse {
                            stage_inv[stage]
                        } else {
                            stage_fwd[stage]
                        };
                        for k in 0..8 {
                            assert!(in_range(x[k]), "q {q}: {}", x[k]);
                            assert!(
                                x[k].abs() < bound * qf,
                                "q {q} stage {stage}: {}",
                                x[k] / qf
                            );
                            exact[k] = exact[k].rem_euclid(qi);
                            assert_eq!((x[k] as i128 - exact[k]).rem_euclid(qi), 0, "q {q}");
                        }
                    }
                }
            }
        }
    }

    /// The lifted loads of ntt.cu against the definition of mod_up's one-prime conversion (the
    /// centred value `c = y` for `y <= (q_f - 1)/2`, else `y - q_f`, taken modulo `q_t`): the
    /// reducing form gives `c mod q_t` exactly, and the reduction-free form (integer path, used
    /// where `q_f < 2·q_t`) a word below `2·q_t` congruent to it. Also the slot word's encoding.
    #[test]
    fn lifted_loads_match_the_centred_lift() {
        let primes = |bits| fhe_math::primes::ntt_primes(bits, 1 << 16, 2, &[]).unwrap();
        let mut all: Vec<u64> = [30, 40, 50, 55, 56, 60]
            .into_iter()
            .flat_map(primes)
            .collect();
        all.push(65_537);
        let mut rnd = xorshift(0x2545_f491_4f6c_dd1du64);
        let (mut lazy_pairs, mut checked) = (0, 0);
        for &qf in &all {
            let half = qf >> 1;
            let mut ys = vec![0, 1, half - 1, half, half + 1, qf - 1];
            ys.extend((0..200).map(|_| rnd() % qf));
            for &qt in &all {
                let lazy = qf < 2 * qt;
                lazy_pairs += usize::from(lazy);
                for &y in &ys {
                    let c = if y <= half {
                        y as i128
                    } else {
                        y as i128 - qf as i128
                    };
                    let want = c.rem_euclid(qt as i128) as u64;
                    // ((y + half) mod q_f) mod q_t - (half mod q_t), as the kernel's mod_add,
                    // reduce_u64 and mod_sub compute it.
                    let (a, h) = ((y + half) % qf % qt, half % qt);
                    let got = if a >= h { a - h } else { a + qt - h };
                    assert_eq!(got, want, "q_f {qf} q_t {qt} y {y}");
                    if lazy {
                        let v = if y > half { y + (2 * qt - qf) } else { y };
                        assert!(v < 2 * qt, "q_f {qf} q_t {qt} y {y}: {v}");
                        assert_eq!(v % qt, want, "q_f {qf} q_t {qt} y {y}");
                    }
                    checked += 1;
                }
            }
        }
        assert!(lazy_pairs > 0 && checked > 10_000);
        let l = Limb {
            src: 0,
            dst: 0,
            slot: 17,
            load: Load::Lift(3),
        };
        assert_eq!(slot_word(&l) & LIFT_SLOT_MASK, 17);
        assert_eq!(slot_word(&l) >> LIFT_SHIFT, 4);
        assert_eq!(
            slot_word(&Limb {
                load: Load::Plain,
                ..l
            }),
            17
        );
        let c = slot_word(&Limb {
            load: Load::Convert(0x7ffe),
            ..l
        });
        assert_eq!(c & LIFT_SLOT_MASK, 17);
        assert_eq!(c >> LIFT_SHIFT, CONVERT_FLAG | 0x7ffe);
        for comp in 0..3 {
            let t = slot_word(&Limb {
                load: Load::Tensor(comp),
                ..l
            });
            assert_eq!(t & LIFT_SLOT_MASK, 17);
            assert_eq!(t >> LIFT_SHIFT, TENSOR_FLAG | comp);
            // Neither a converted nor (for any slot a ring has) a lifted limb's field.
            assert_eq!((t >> LIFT_SHIFT) & CONVERT_FLAG, 0);
        }
    }

    /// The slot word's fields mirror ntt.cu's defines, which the kernels decode.
    #[test]
    fn slot_word_fields_mirror_the_kernel_defines() {
        let src = crate::kernels::source("ntt").expect("ntt source");
        for line in [
            format!("#define LIFT_SHIFT {LIFT_SHIFT}\n"),
            format!("#define LIFT_SLOT_MASK {LIFT_SLOT_MASK:#x}u\n"),
            format!("#define CONVERT_FLAG {CONVERT_FLAG:#x}u\n"),
            format!("#define TENSOR_FLAG {TENSOR_FLAG:#x}u\n"),
        ] {
            assert!(src.contains(&line), "ntt.cu lacks `{}`", line.trim());
        }
    }

    #[test]
    fn kernel_name_tables_cover_every_pass_size() {
        assert_eq!(R8_FWD[0], "ntt_fwd_r8_3");
        assert_eq!(R8_KEYPROD[5], "ntt_keyprod_r8_8");
        assert_eq!(R8_FINISH[8], "ntt_finish_r8_11");
        assert_eq!(R8_FWD_RESCALE[5], "ntt_fwd_rescale_r8_8");
        assert_eq!(R8_FWD_CONVERT[5], "ntt_fwd_convert_r8_8");
        assert_eq!(R8_FWD_CONVERT_EXACT[5], "ntt_fwd_convert_exact_r8_8");
        assert_eq!(R8_FWD_CONVERT_COEF[5], "ntt_fwd_convert_coef_r8_8");
        for (i, name) in R8_INV.iter().enumerate() {
            assert_eq!(*name, format!("ntt_inv_r8_{}", i + 3));
        }
        for (i, name) in R8_INV_TENSOR.iter().enumerate() {
            assert_eq!(*name, format!("ntt_inv_tensor_r8_{}", i + 3));
        }
        for (i, name) in R8_INV_ADD.iter().enumerate() {
            assert_eq!(*name, format!("ntt_inv_add_r8_{}", i + 3));
        }
    }

    /// The fused key product's launch shape: every ring of 2^12..=2^17 (two passes) gets one,
    /// its block holds one run of 8 elements per thread (the layout `exchange_outputs`
    /// assumes) and its shared memory stays within the default 48 KiB; a one-pass 2^11 ring
    /// would need more and falls back to the separate kernels.
    #[test]
    fn key_product_launch_fits_shared_memory() {
        for logn in 12..=17 {
            for f64 in [false, true] {
                let (last, log_c, cfg) =
                    key_product_launch(&Tuning::MEASURED, logn, 32, f64).expect("fusable");
                assert_eq!(
                    last.l, 0,
                    "logn {logn}: the last pass is the non-strided one"
                );
                assert_eq!(cfg.block_dim.0 * 8, 1 << (log_c + last.s), "logn {logn}");
                assert_eq!(cfg.grid_dim.0 << (log_c + last.s), 1 << logn, "logn {logn}");
                assert!(cfg.shared_mem_bytes <= 48 * 1024, "logn {logn}");
            }
        }
        assert!(key_product_launch(&Tuning::MEASURED, 11, 32, false).is_none());
    }
}
