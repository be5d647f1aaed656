//! Launch wrappers of `kernels/ntt.cu`: forward and inverse negacyclic NTT over every limb of a
//! limb set, hierarchical: one shared-memory pass for n <= 2^11, two passes above (each pass is
//! one launch over all limbs).

use super::{Ctx, LimbSet, launch};
use crate::error::Result;
use cudarc::driver::LaunchConfig;

/// Largest log n done in one pass.
const ONE_PASS_MAX: u32 = 11;
/// Elements per block (shared memory: 8 bytes each), as a power of two.
const LOG_ELEMS: u32 = 12;
/// Threads per block, at most.
const MAX_THREADS: u32 = 512;

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

/// `(logC, config)` of a pass over `limbs` limbs.
fn config(logn: u32, p: Pass, limbs: u32) -> (u32, LaunchConfig) {
    // Sub-problems per block: fill LOG_ELEMS, no more than there are, and (strided) no more than
    // the low bits allow (keeps a block's loads in consecutive words).
    let mut log_c = LOG_ELEMS.saturating_sub(p.s).min(logn - p.s);
    if p.l > 0 {
        log_c = log_c.min(p.l);
    }
    let elems = 1u32 << (log_c + p.s);
    let threads = (elems / 4).clamp(1, MAX_THREADS);
    let cfg = LaunchConfig {
        grid_dim: (1u32 << (logn - p.s - log_c), limbs, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: elems * 8,
    };
    (log_c, cfg)
}

/// Forward NTT of every limb of `ls`, in place.
pub(crate) fn forward(cx: &Ctx, ls: LimbSet) -> Result<()> {
    let limbs = ls.count();
    if limbs == 0 {
        return Ok(());
    }
    let logn = cx.n.trailing_zeros();
    let slots = cx.slots();
    let (tw, tws) = (cx.t(cx.layout.fwd), cx.t(cx.layout.fwd_shoup));
    let f = cx.dev.function("ntt", "ntt_forward_pass")?;
    let ps = passes(logn);
    for p in ps.iter() {
        if p.s == 0 {
            continue;
        }
        let last: u32 = (p.l == 0) as u32;
        let (log_c, cfg) = config(logn, *p, limbs);
        launch!(
            cx.stream, f, cfg, &ls, &slots, &tw, &tws, &logn, &p.s, &p.l, &log_c, &last
        )?;
    }
    Ok(())
}

/// Inverse NTT of every limb of `ls`, in place (scaling by n^-1 included).
pub(crate) fn inverse(cx: &Ctx, ls: LimbSet) -> Result<()> {
    let limbs = ls.count();
    if limbs == 0 {
        return Ok(());
    }
    let logn = cx.n.trailing_zeros();
    let slots = cx.slots();
    let (tw, tws, consts) = (
        cx.t(cx.layout.inv),
        cx.t(cx.layout.inv_shoup),
        cx.t(cx.layout.ntt_consts),
    );
    let f = cx.dev.function("ntt", "ntt_inverse_pass")?;
    let ps = passes(logn);
    for p in ps.iter().rev() {
        if p.s == 0 {
            continue;
        }
        let (log_c, cfg) = config(logn, *p, limbs);
        launch!(
            cx.stream, f, cfg, &ls, &slots, &tw, &tws, &consts, &logn, &p.s, &p.l, &log_c
        )?;
    }
    Ok(())
}
