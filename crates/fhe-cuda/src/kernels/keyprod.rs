//! The key product fused with mod_up's last forward NTT pass (`ntt_keyprod_r8_S` of
//! `kernels/keyprod.cuh`, compiled in the `ntt` module): it fuses the last forward pass of the
//! raised digits with `acc_c = Σ_j σ(ext_j)·key_{2j+c}` (the output this module owns), so the
//! NTT-form digits are never stored; and the same rows as separate launches where that measured
//! faster ([`key_product_early`]).

use super::ntt::{
    Limb, Load, Pass, Passes, config_r8, forward_last_list, forward_passes, fused_passes_available,
    mostly_f64, passes, r8_names, two_passes,
};
use super::{Ctx, LimbSet, launch};
use crate::Tuning;
use crate::error::Result;
use cudarc::driver::{DeviceRepr, LaunchConfig};

/// `MAX_KP` of keyprod.cuh: slots per launch of the fused key product.
const MAX_KP: usize = 64;
/// `NO_DIGIT` of keyprod.cuh.
const NO_DIGIT: u32 = u32::MAX;

/// Slots of one fused key-product launch and the digit owning each (or `NO_DIGIT`). Mirrors
/// `struct KeyProdList` of keyprod.cuh.
#[repr(C)]
#[derive(Clone, Copy)]
struct KeyProdList {
    slot: [u32; MAX_KP],
    own: [u32; MAX_KP],
}
// SAFETY: plain repr(C) arrays of u32 matching `struct KeyProdList` of keyprod.cuh.
unsafe impl DeviceRepr for KeyProdList {}

/// The buffers of the fused key product (device addresses; slots per component). Mirrors
/// `struct KeyProdArgs` of keyprod.cuh.
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
// keyprod.cuh.
unsafe impl DeviceRepr for KeyProdArgs {}

/// The fused last forward pass with the key product (`ntt_keyprod_r8_S`), by S = 3..=11.
pub(super) const R8_KEYPROD: [&str; 9] = r8_names!("ntt_keyprod_r8_");

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

/// The rows `mod_down` starts from (the special primes', and the top one with the rescale;
/// `set` is the accumulator's one-component set over exactly those `rows`), launched on the
/// side stream ([`crate::side`]): [`key_product_rows_unfused`] on rings of two passes where
/// [`Tuning::early_unfused`], else [`key_product_rows`].
pub(crate) fn key_product_early(
    cx: &Ctx,
    rows: &[(u32, Option<u32>)],
    set: LimbSet,
    args: KeyProdArgs,
) -> Result<()> {
    let pays = cx
        .dev
        .tuning()
        .early_unfused(cx.n as usize, rows.len(), set.p_cnt as usize);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The side stream's rows run unfused exactly where the H100 A/B measured a gain (the
    /// rings of the presets, `Tuning::early_unfused`): `(n, rows, special primes)`, rows counting
    /// the rescale's or modulus switch's top row.
    #[test]
    fn early_rows_unfused_where_measured_faster() {
        let faster = [
            (1 << 15, 2, 2), // BGV/BFV PHANTOM_INT relinearize, rotate
            (1 << 15, 3, 2), // BGV PHANTOM_INT with the fused modulus switch
            (1 << 15, 3, 3), // CKKS CAT relinearize, rotate
            (1 << 15, 4, 3), // CKKS CAT with the rescale
            (1 << 16, 3, 3), // PHANTOM_N16 relinearize, rotate (H200)
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
            assert!(
                Tuning::MEASURED.early_unfused(n, rows, special),
                "{n} {rows} {special}"
            );
        }
        for (n, rows, special) in slower {
            assert!(
                !Tuning::MEASURED.early_unfused(n, rows, special),
                "{n} {rows} {special}"
            );
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
