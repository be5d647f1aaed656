//! Launch wrappers of `kernels/automorphism.cu`.

use super::{Ctx, LimbSet, grid, launch};
use crate::error::Result;

/// `automorphism_apply(LimbSet out, LimbSet a, const u32* map)`.
pub(crate) fn apply(cx: &Ctx, out: LimbSet, a: LimbSet, map: u64) -> Result<()> {
    if out.count() == 0 {
        return Ok(());
    }
    let f = cx.dev.function("automorphism", "automorphism_apply")?;
    launch!(cx.stream, f, grid(cx.n, out.count()), &out, &a, &map)
}
