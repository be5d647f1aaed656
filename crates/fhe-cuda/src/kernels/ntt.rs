//! Launch wrappers of `kernels/ntt.cu`: forward and inverse negacyclic NTT over every limb of a
//! limb set (global-memory stages for spans of a tile or more, then one shared-memory launch).

use super::{Ctx, LimbSet, grid, launch};
use crate::error::Result;
use cudarc::driver::LaunchConfig;

/// Coefficients per shared-memory tile (16 KiB of u64).
const TILE: u32 = 2048;

fn tile_config(n: u32, limbs: u32) -> (u32, LaunchConfig) {
    let tile = n.min(TILE);
    let cfg = LaunchConfig {
        grid_dim: (n / tile, limbs, 1),
        block_dim: ((tile / 2).max(1), 1, 1),
        shared_mem_bytes: tile * 8,
    };
    (tile, cfg)
}

/// Forward NTT of every limb of `ls`, in place.
pub(crate) fn forward(cx: &Ctx, ls: LimbSet) -> Result<()> {
    let limbs = ls.count();
    if limbs == 0 {
        return Ok(());
    }
    let n = cx.n;
    let slots = cx.slots();
    let (tw, tws) = (cx.t(cx.layout.fwd), cx.t(cx.layout.fwd_shoup));
    let (tile, cfg) = tile_config(n, limbs);
    let stage = cx.dev.function("ntt", "ntt_forward_stage")?;
    let (mut m, mut t) = (1u32, n / 2);
    while t >= tile {
        launch!(
            cx.stream,
            stage,
            grid(n / 2, limbs),
            &ls,
            &slots,
            &tw,
            &tws,
            &m,
            &t
        )?;
        m *= 2;
        t /= 2;
    }
    let tail = cx.dev.function("ntt", "ntt_forward_tail")?;
    launch!(cx.stream, tail, cfg, &ls, &slots, &tw, &tws, &tile)
}

/// Inverse NTT of every limb of `ls`, in place (scaling by n^-1 included).
pub(crate) fn inverse(cx: &Ctx, ls: LimbSet) -> Result<()> {
    let limbs = ls.count();
    if limbs == 0 {
        return Ok(());
    }
    let n = cx.n;
    let slots = cx.slots();
    let (tw, tws, consts) = (
        cx.t(cx.layout.inv),
        cx.t(cx.layout.inv_shoup),
        cx.t(cx.layout.ntt_consts),
    );
    let (tile, cfg) = tile_config(n, limbs);
    let head = cx.dev.function("ntt", "ntt_inverse_head")?;
    launch!(cx.stream, head, cfg, &ls, &slots, &tw, &tws, &consts, &tile)?;
    let stage = cx.dev.function("ntt", "ntt_inverse_stage")?;
    let mut t = tile;
    while t < n {
        let h = n / (2 * t);
        launch!(
            cx.stream,
            stage,
            grid(n / 2, limbs),
            &ls,
            &slots,
            &tw,
            &tws,
            &consts,
            &h,
            &t
        )?;
        t *= 2;
    }
    Ok(())
}
