//! The NTT over a regular batch of limbs, one launch a pass for the whole batch: limb
//! `x < count` at `base + x·n` words (in place), of the modulus of slot `period[x % P]`
//! (`P = period.len() ≤ MAX_PERIOD`), the limb index `x = y + Y·z` from the block's grid row
//! `y < Y` and layer `z`. The entries `ntt_fwd_strided_r8_S` / `ntt_inv_strided_r8_S` of ntt.cu
//! run the same `ntt_pass_r8` code as the list passes ([`super::forward_list`],
//! [`super::inverse_list`]), so the words are the same; a list takes at most `MAX_LIST` limbs a
//! launch, a batch any number. The batched RNS blind rotation transforms tens of thousands of
//! limbs a step so (`backend::impl_rns_blind_rotate`).

use super::{
    Ctx, Limb, Load, Passes, config_r8, forward_order, forward_passes, inverse_list, mostly_f64,
    passes, plain_kernel,
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

/// The strided forward passes, by S = 3..=11 (`ntt_fwd_strided_r8_S`).
pub(super) const R8_FWD_STRIDED: [&str; 9] = r8_names!("ntt_fwd_strided_r8_");
/// The strided inverse passes (`ntt_inv_strided_r8_S`).
pub(super) const R8_INV_STRIDED: [&str; 9] = r8_names!("ntt_inv_strided_r8_");

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
    strided(cx, base, count, period, Some(Passes::Both))
}

/// The first pass of [`forward_strided`] alone, where the transform takes two (nothing where it
/// takes one): a fused kernel runs the last pass (`rns_blind_rotate::mac_fused`).
pub(crate) fn forward_strided_first(
    cx: &Ctx,
    base: u64,
    count: usize,
    period: &[u32],
) -> Result<()> {
    strided(cx, base, count, period, Some(Passes::First))
}

/// Inverse NTT of the batch, in place (scaling by `n^-1` included); the batch as in
/// [`forward_strided`].
pub(crate) fn inverse_strided(cx: &Ctx, base: u64, count: usize, period: &[u32]) -> Result<()> {
    strided(cx, base, count, period, None)
}

/// The passes of the list transforms (`passes`, `config_r8` over the grid rows, the FP64 block
/// shape where most slots of the period take it), each one launch over the batch; the list
/// passes where a pass is not register-blocked or the kernels do not take the batch. `forward`:
/// the forward passes it selects; `None`: the whole inverse transform.
fn strided(
    cx: &Ctx,
    base: u64,
    count: usize,
    period: &[u32],
    forward: Option<Passes>,
) -> Result<()> {
    if count == 0 {
        return Ok(());
    }
    if period.is_empty() {
        return Err(Error::Unsupported {
            what: "a strided NTT batch without slots".into(),
        });
    }
    let logn = cx.n.trailing_zeros();
    let inverse = forward.is_none();
    let order = match forward {
        Some(which) => forward_order(logn, which),
        None => {
            let [p0, p1] = passes(logn);
            [p1, p0]
        }
    };
    let blocked = order
        .iter()
        .all(|p| p.s == 0 || plain_kernel(*p, inverse).is_some());
    let sb = match StridedBatch::new(base, count, period) {
        Some(sb) if blocked => sb,
        _ => {
            let limbs = listed(cx, base, count, period);
            return match forward {
                Some(which) => forward_passes(cx, &limbs, which),
                None => inverse_list(cx, &limbs),
            };
        }
    };
    let slots = cx.slots();
    let f64 = mostly_f64(cx, period.iter().copied());
    let (rows, layers) = sb.grid();
    for p in order {
        if p.s == 0 {
            continue;
        }
        let (log_c, mut cfg) = config_r8(cx.dev.tuning(), logn, p, rows, f64);
        cfg.grid_dim.2 = layers;
        let i = p.s as usize - 3;
        if inverse {
            let f = cx.dev.function("ntt", R8_INV_STRIDED[i])?;
            let twp = cx.t(cx.layout.ntt.inv_pair);
            let consts = cx.t(cx.layout.ntt.ntt_consts);
            launch!(
                cx.stream, f, cfg, &sb, &slots, &twp, &consts, &logn, &p.l, &log_c
            )?;
        } else {
            let f = cx.dev.function("ntt", R8_FWD_STRIDED[i])?;
            let twp = cx.t(cx.layout.ntt.fwd_pair);
            let last: u32 = (p.l == 0) as u32;
            launch!(
                cx.stream, f, cfg, &sb, &slots, &twp, &logn, &p.l, &log_c, &last
            )?;
        }
    }
    Ok(())
}
