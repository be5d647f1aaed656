//! Launch wrapper of `kernels/lincomb.cu`: the fused linear combination of buffers with
//! per-limb coefficients (`RingBackend::linear_combination`).

use super::{Ctx, LimbSet, launch};
use crate::error::{Error, Result};
use cudarc::driver::{DevicePtr, LaunchConfig};

/// Outputs one thread accumulates (`LINCOMB_TILE` in lincomb.cu).
const TILE: usize = 4;

/// Most blocks along the grid's y and z dimensions.
const GRID_YZ_MAX: usize = 65_535;

/// `lincomb_apply(LimbSet shape, const u64* ptrs, const u64* coeffs, u32 k, u32 outputs,
/// const u64* slots)`: `out_j = Σ_i c_{j,i}·in_i` over the limbs of `shape` (its `ptr` unused),
/// for the buffers at device addresses `inputs` and `outputs`, all laid out like `shape`.
/// `coeffs` holds `outputs.len()·inputs.len()·a` canonical residues, `a` the limbs per
/// component of `shape`, laid out `[(j·k + i)·a + s']`. The addresses and the coefficients
/// cross to the device in one copy, freed in stream order after the launch.
pub(crate) fn apply(
    cx: &Ctx,
    shape: LimbSet,
    inputs: &[u64],
    outputs: &[u64],
    coeffs: &[u64],
) -> Result<()> {
    let (k, limbs) = (inputs.len(), shape.count() as usize);
    if outputs.is_empty() || limbs == 0 {
        return Ok(());
    }
    let per = (shape.q_cnt + shape.p_cnt) as usize;
    if k == 0 || coeffs.len() != outputs.len() * k * per {
        return Err(Error::Unsupported {
            what: format!(
                "a linear combination of {k} inputs into {} outputs with {} coefficients",
                outputs.len(),
                coeffs.len()
            ),
        });
    }
    let tiles = outputs.len().div_ceil(TILE);
    if limbs > GRID_YZ_MAX || tiles > GRID_YZ_MAX || k > u32::MAX as usize {
        return Err(Error::Unsupported {
            what: format!(
                "a linear combination over {limbs} limbs into {} outputs (at most \
                 {GRID_YZ_MAX} limbs and {} outputs in one launch)",
                outputs.len(),
                GRID_YZ_MAX * TILE
            ),
        });
    }
    let words: Vec<u64> = inputs
        .iter()
        .chain(outputs)
        .chain(coeffs)
        .copied()
        .collect();
    let table = cx
        .stream
        .clone_htod(&words)
        .map_err(Error::driver("linear combination upload"))?;
    let (ptrs, _guard) = table.device_ptr(cx.stream);
    let coeff_ptr = ptrs + 8 * (k + outputs.len()) as u64;
    let f = cx.dev.function("lincomb", "lincomb_apply")?;
    let slots = cx.slots();
    let (k, n_out) = (k as u32, outputs.len() as u32);
    let cfg = LaunchConfig {
        grid_dim: (
            shape.n.div_ceil(super::BLOCK).max(1),
            limbs as u32,
            tiles as u32,
        ),
        block_dim: (super::BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    launch!(
        cx.stream, f, cfg, &shape, &ptrs, &coeff_ptr, &k, &n_out, &slots
    )
}
