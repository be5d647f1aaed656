//! The NTT over a regular batch of limbs, one launch a pass for the whole batch: limb
//! `x < count` at `base + x·n` words (in place), of the modulus of slot `period[x % P]`
//! (`P = period.len() ≤ MAX_PERIOD`), the limb index `x = y + Y·z` from the block's grid row
//! `y < Y` and layer `z`. The entries `ntt_fwd_strided_r8_S` / `ntt_inv_strided_r8_S` of ntt.cu
//! run the same `ntt_pass_r8` code as the list passes ([`super::forward_list`],
//! [`super::inverse_list`]), so the words are the same; a list takes at most `MAX_LIST` limbs a
//! launch, a batch any number. The batched RNS blind rotation transforms tens of thousands of
//! limbs a step so (`backend::impl_rns_blind_rotate`).

use super::{
    Ctx, Limb, Load, config_r8, forward_list, inverse_list, mostly_f64, passes, plain_kernel,
};
use crate::error::{Error, Result};
use crate::kernels::launch;
use cudarc::driver::DeviceRepr;

/// `STRIDED_MAX_PERIOD` of ntt.cu: the longest slot period a batch takes.
pub(crate) const MAX_PERIOD: usize = 64;
/// Most blocks along the grid's y (and z) dimension.
const MAX_GRID_Y: u32 = 65535;

/// Mirrors `struct StridedBatch` of ntt.cu.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(super) struct StridedBatch {
    pub(super) base: u64,
    pub(super) count: u32,
    pub(super) period: u32,
    pub(super) slot: [u32; MAX_PERIOD],
}
// SAFETY: plain repr(C) fields (u64, 2 u32, a u32 array) matching `struct StridedBatch` of
// ntt.cu.
unsafe impl DeviceRepr for StridedBatch {}

/// Mirrors `struct DigitLoad` of ntt.cu: where the first forward pass over a batch of digit
/// limbs reads the words it forms them from ([`forward_strided_digits`]).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct DigitLoad {
    t: u64,
    tab: u64,
    limbs: u32,
    pad: u32,
    digit: [u32; MAX_PERIOD],
}
// SAFETY: plain repr(C) fields (2 u64, 2 u32, a u32 array) matching `struct DigitLoad` of ntt.cu.
unsafe impl DeviceRepr for DigitLoad {}

/// The source of the digit limbs of [`forward_strided_digits`]: batch limb `x` is digit
/// `digit[x % P]` (`P` the batch's period) of sample-component `x / P`, formed from the
/// coefficient-form limbs of its group `G_j = [lo_j, hi_j)` (the table's) at
/// `t + 8·((x / P)·limbs + lo_j + i)·n` bytes (`rbr_digit_residue` of rbr_digit.cuh).
pub(crate) struct DigitSource<'a> {
    /// Device address of `T` (coefficient form, `limbs` limbs a sample-component).
    pub t: u64,
    /// Device address of the blind rotation's table (`kernels::rns_blind_rotate::tables`).
    pub tab: u64,
    /// Limbs of `T` a sample-component.
    pub limbs: u32,
    /// The digit of each limb of the period.
    pub digit: &'a [u32],
}

/// Mirrors `struct MonoLoad` of ntt.cu: where the first inverse pass over a batch of `T` limbs
/// reads the accumulators and exponents it forms them from ([`inverse_strided_mono`]).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct MonoLoad {
    src_delta: i64,
    a: u64,
    tab: u64,
    limbs: u32,
    pad: u32,
}
// SAFETY: plain repr(C) fields (i64, 2 u64, 2 u32) matching `struct MonoLoad` of ntt.cu.
unsafe impl DeviceRepr for MonoLoad {}

/// The source of the limbs of [`inverse_strided_mono`]: batch limb `x` (layout `[e][c][s]`,
/// `limbs` limbs a component) is `acc ⊙ (X^{a_e} − 1)` in NTT form, `e = x / (2·limbs)`
/// (`rbr_mono_factor` of rbr_table.cuh).
pub(crate) struct MonoSource {
    /// Device address of `acc` (the batch's layout).
    pub acc: u64,
    /// Device address of the exponents `a_e` (`u32` by sample).
    pub a: u64,
    /// Device address of the blind rotation's table (`kernels::rns_blind_rotate::tables`).
    pub tab: u64,
    /// Limbs a component (`L` of the table).
    pub limbs: u32,
}

/// What the first pass of a strided transform loads.
#[derive(Clone, Copy)]
enum First<'a> {
    /// The batch's own words.
    Plain,
    /// Digit limbs formed from `T` (forward).
    Digits(&'a DigitSource<'a>),
    /// `T` formed from `acc` (inverse).
    Mono(&'a MonoSource),
}

/// The strided forward passes, by S = 3..=11 (`ntt_fwd_strided_r8_S`).
pub(super) const R8_FWD_STRIDED: [&str; 9] = r8_names!("ntt_fwd_strided_r8_");
/// The strided inverse passes (`ntt_inv_strided_r8_S`).
pub(super) const R8_INV_STRIDED: [&str; 9] = r8_names!("ntt_inv_strided_r8_");
/// The strided first forward passes forming digit limbs on load (`ntt_fwd_strided_digit_r8_S`).
const R8_FWD_STRIDED_DIGIT: [&str; 9] = r8_names!("ntt_fwd_strided_digit_r8_");
/// The strided first inverse passes forming `T` on load (`ntt_inv_strided_mono_r8_S`).
const R8_INV_STRIDED_MONO: [&str; 9] = r8_names!("ntt_inv_strided_mono_r8_");

impl StridedBatch {
    /// The batch of `count` limbs at `base` with slots `period`, or `None` where the kernels
    /// cannot take it (a period longer than [`MAX_PERIOD`], more limbs than the grid holds).
    pub(super) fn new(base: u64, count: usize, period: &[u32]) -> Option<Self> {
        let count = u32::try_from(count).ok()?;
        if period.is_empty() || period.len() > MAX_PERIOD || count.div_ceil(MAX_GRID_Y) > MAX_GRID_Y
        {
            return None;
        }
        let mut slot = [0; MAX_PERIOD];
        slot[..period.len()].copy_from_slice(period);
        Some(StridedBatch {
            base,
            count,
            period: period.len() as u32,
            slot,
        })
    }

    /// `(Y, Z)`: grid rows and layers covering the limbs (`Y·Z ≥ count`, `Y ≤ 65535`), the
    /// fewest layers and then the fewest rows (fewer than `Z` blocks a column left idle).
    pub(super) fn grid(&self) -> (u32, u32) {
        let z = self.count.div_ceil(MAX_GRID_Y).max(1);
        (self.count.div_ceil(z).max(1), z)
    }

    /// The address and slot of the limb of grid row `y` and layer `z` in a grid of `rows` rows,
    /// or `None` past the last limb: `strided_limb` of ntt.cu (the host model of its tests).
    #[cfg(test)]
    pub(super) fn limb(&self, logn: u32, y: u32, rows: u32, z: u32) -> Option<(u64, u32)> {
        let x = y + rows * z;
        (x < self.count).then(|| {
            (
                self.base + 8 * ((x as u64) << logn),
                self.slot[(x % self.period) as usize],
            )
        })
    }
}

/// The batch as an explicit list (the list passes; for batches the kernels do not take).
fn listed(cx: &Ctx, base: u64, count: usize, period: &[u32]) -> Vec<Limb> {
    (0..count)
        .map(|x| {
            let p = base + 8 * (x * cx.n as usize) as u64;
            Limb {
                src: p,
                dst: p,
                slot: period[x % period.len()],
                load: Load::Plain,
            }
        })
        .collect()
}

/// Forward NTT of the batch, in place: limb `x < count` at `base + 8·x·n` bytes, of slot
/// `period[x % period.len()]`.
pub(crate) fn forward_strided(cx: &Ctx, base: u64, count: usize, period: &[u32]) -> Result<()> {
    strided(cx, base, count, period, false, First::Plain).map(|_| ())
}

/// Inverse NTT of the batch, in place (scaling by `n^-1` included); the batch as in
/// [`forward_strided`].
pub(crate) fn inverse_strided(cx: &Ctx, base: u64, count: usize, period: &[u32]) -> Result<()> {
    strided(cx, base, count, period, true, First::Plain).map(|_| ())
}

/// Forward NTT of the batch of digit limbs (as [`forward_strided`]) whose first pass forms
/// each limb's words from `src` as it loads them (the exact RNS digit of the batched blind
/// rotation, `rns_blind_rotate_decompose`'s words, never written in coefficient form).
/// `Ok(false)` when the kernels do not take the batch: nothing ran, and the digits must be
/// written first and transformed with [`forward_strided`].
pub(crate) fn forward_strided_digits(
    cx: &Ctx,
    base: u64,
    count: usize,
    period: &[u32],
    src: &DigitSource,
) -> Result<bool> {
    if src.digit.len() != period.len() {
        return Err(Error::Unsupported {
            what: "a digit batch whose digits do not match its period".into(),
        });
    }
    strided(cx, base, count, period, false, First::Digits(src))
}

/// Whether the strided kernels take a batch of `count` limbs with this period whole, with the
/// fused first passes ([`forward_strided_digits`], [`inverse_strided_mono`]).
pub(crate) fn strided_fused(cx: &Ctx, count: usize, period: &[u32]) -> bool {
    let [p0, p1] = passes(cx.n.trailing_zeros());
    let blocked = [p0, p1].iter().all(|p| {
        p.s == 0 || (plain_kernel(*p, false).is_some() && plain_kernel(*p, true).is_some())
    });
    blocked && StridedBatch::new(0, count, period).is_some()
}

/// Inverse NTT of the batch (as [`inverse_strided`]) whose first pass forms each limb of `T` as
/// it loads `acc` ([`MonoSource`]): `T = acc ⊙ (X^{a_e} − 1)`, the words of
/// `rns_blind_rotate_mono`, never written in NTT form. `Ok(false)` when the kernels do not take
/// the batch ([`strided_fused`]): nothing ran.
pub(crate) fn inverse_strided_mono(
    cx: &Ctx,
    base: u64,
    count: usize,
    period: &[u32],
    src: &MonoSource,
) -> Result<bool> {
    strided(cx, base, count, period, true, First::Mono(src))
}

/// The passes of the list transforms (`passes`, `config_r8` over the grid rows, the FP64 block
/// shape where most slots of the period take it), each one launch over the batch; the list
/// passes where a pass is not register-blocked or the kernels do not take the batch. With a
/// fused `first` (digits forward, mono inverse) the first pass forms its limbs on load, and
/// where that cannot run nothing runs: `Ok(false)`.
fn strided(
    cx: &Ctx,
    base: u64,
    count: usize,
    period: &[u32],
    inverse: bool,
    first: First,
) -> Result<bool> {
    if count == 0 {
        return Ok(true);
    }
    if period.is_empty() {
        return Err(Error::Unsupported {
            what: "a strided NTT batch without slots".into(),
        });
    }
    let logn = cx.n.trailing_zeros();
    let [p0, p1] = passes(logn);
    let order = if inverse { [p1, p0] } else { [p0, p1] };
    let blocked = order
        .iter()
        .all(|p| p.s == 0 || plain_kernel(*p, inverse).is_some());
    let sb = match StridedBatch::new(base, count, period) {
        Some(sb) if blocked => sb,
        _ if !matches!(first, First::Plain) => return Ok(false),
        _ => {
            let limbs = listed(cx, base, count, period);
            if inverse {
                inverse_list(cx, &limbs)?;
            } else {
                forward_list(cx, &limbs)?;
            }
            return Ok(true);
        }
    };
    let slots = cx.slots();
    let f64 = mostly_f64(cx, period.iter().copied());
    let (rows, layers) = sb.grid();
    let mut pending = first;
    for p in order {
        if p.s == 0 {
            continue;
        }
        // The fused load is the first pass's that runs.
        let first = std::mem::replace(&mut pending, First::Plain);
        let (log_c, mut cfg) = config_r8(cx.dev.tuning(), logn, p, rows, f64);
        cfg.grid_dim.2 = layers;
        let i = p.s as usize - 3;
        if inverse {
            let twp = cx.t(cx.layout.ntt.inv_pair);
            let consts = cx.t(cx.layout.ntt.ntt_consts);
            if let First::Mono(m) = first {
                // The first inverse pass is the one over the low bits (L = 0), the kernel's case.
                let f = cx.dev.function("ntt", R8_INV_STRIDED_MONO[i])?;
                let ml = MonoLoad {
                    src_delta: (m.acc as i64 - base as i64) / 8,
                    a: m.a,
                    tab: m.tab,
                    limbs: m.limbs,
                    pad: 0,
                };
                launch!(
                    cx.stream, f, cfg, &sb, &slots, &twp, &consts, &logn, &p.l, &log_c, &ml
                )?;
            } else {
                let f = cx.dev.function("ntt", R8_INV_STRIDED[i])?;
                launch!(
                    cx.stream, f, cfg, &sb, &slots, &twp, &consts, &logn, &p.l, &log_c
                )?;
            }
        } else {
            let twp = cx.t(cx.layout.ntt.fwd_pair);
            let last: u32 = (p.l == 0) as u32;
            match first {
                First::Digits(d) => {
                    let f = cx.dev.function("ntt", R8_FWD_STRIDED_DIGIT[i])?;
                    let mut dl = DigitLoad {
                        t: d.t,
                        tab: d.tab,
                        limbs: d.limbs,
                        pad: 0,
                        digit: [0; MAX_PERIOD],
                    };
                    dl.digit[..d.digit.len()].copy_from_slice(d.digit);
                    launch!(
                        cx.stream, f, cfg, &sb, &slots, &twp, &logn, &p.l, &log_c, &last, &dl
                    )?;
                }
                _ => {
                    let f = cx.dev.function("ntt", R8_FWD_STRIDED[i])?;
                    launch!(
                        cx.stream, f, cfg, &sb, &slots, &twp, &logn, &p.l, &log_c, &last
                    )?;
                }
            }
        }
    }
    Ok(true)
}
