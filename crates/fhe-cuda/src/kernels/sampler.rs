//! Launch wrappers of `kernels/sampler.cu`.

use super::{Ctx, LimbSet, grid, launch};
use crate::error::Result;
use cudarc::driver::DeviceRepr;
use fhe_math::sampler::{Domain, Seed};

/// The ChaCha20 key words of a seed, passed by value. Mirrors `struct ChachaKey`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ChachaKey([u32; 8]);
// SAFETY: plain repr(C) array matching `struct ChachaKey` of sampler.cu.
unsafe impl DeviceRepr for ChachaKey {}

impl ChachaKey {
    fn new(seed: &Seed) -> Self {
        let mut k = [0u32; 8];
        for (i, w) in k.iter_mut().enumerate() {
            *w = u32::from_le_bytes([
                seed.0[4 * i],
                seed.0[4 * i + 1],
                seed.0[4 * i + 2],
                seed.0[4 * i + 3],
            ]);
        }
        ChachaKey(k)
    }
}

/// `sampler_uniform(LimbSet out, ChachaKey key, u32 tag, u32 poly_index, const u64* slots)`.
pub(crate) fn uniform(
    cx: &Ctx,
    out: LimbSet,
    seed: &Seed,
    domain: Domain,
    poly_index: u32,
) -> Result<()> {
    if out.count() == 0 {
        return Ok(());
    }
    let f = cx.dev.function("sampler", "sampler_uniform")?;
    let key = ChachaKey::new(seed);
    let tag = domain.tag() as u32;
    let slots = cx.slots();
    launch!(
        cx.stream,
        f,
        grid(cx.n / 4, out.count()),
        &out,
        &key,
        &tag,
        &poly_index,
        &slots
    )
}

/// `sampler_small(LimbSet out, ChachaKey key, u32 tag, u32 poly_index, u32 kind, cdt, slots)`;
/// `kind` 0 = ternary, 1 = Gaussian.
pub(crate) fn small(
    cx: &Ctx,
    out: LimbSet,
    seed: &Seed,
    domain: Domain,
    poly_index: u32,
    kind: u32,
) -> Result<()> {
    if out.count() == 0 {
        return Ok(());
    }
    let f = cx.dev.function("sampler", "sampler_small")?;
    let key = ChachaKey::new(seed);
    let tag = domain.tag() as u32;
    let cdt = cx.t(cx.layout.cdt);
    let slots = cx.slots();
    launch!(
        cx.stream,
        f,
        grid(cx.n / 8, out.comps),
        &out,
        &key,
        &tag,
        &poly_index,
        &kind,
        &cdt,
        &slots
    )
}
