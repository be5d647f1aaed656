//! Launch wrappers and host tables of `kernels/rns_blind_rotate.cu`: the kernels of the batched
//! RNS blind rotation (`CudaBackend`'s `RnsBlindRotateBackend`), around the ring's NTTs.

use super::{Ctx, launch};
use crate::error::{Error, Result};
use cudarc::driver::{DeviceRepr, LaunchConfig};
use fhe_math::backend::rns_blind_rotate::RnsGadget;
use fhe_math::poly::RnsPoly;
use fhe_math::ring::RingContext;
use std::collections::HashMap;

/// Most limbs (and digits) the kernels take (`RBR_MAXL`).
pub(crate) const MAX_LIMBS: usize = 8;
/// Word offset of the power table (`RBR_POW`).
const POW: usize = 320;

/// Mirrors `struct RbrShape` of rns_blind_rotate.cu.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shape {
    /// Ring degree.
    pub n: u32,
    /// Limbs `L` of the gadget's level.
    pub limbs: u32,
    /// Digits `D`.
    pub digits: u32,
    /// Digit limbs outside their groups, `Σ_j (L − |G_j|)`.
    pub dtot: u32,
    /// Samples in the batch.
    pub count: u32,
}
// SAFETY: plain repr(C) u32 fields matching `struct RbrShape`.
unsafe impl DeviceRepr for Shape {}

/// The kernels' table (layout in rns_blind_rotate.cu): the digit constants of `gadget`, and per
/// limb the powers `g^j` (`j < 2N`, `g = NTT(X)[0]`) and the exponents `exp[k]` with
/// `NTT(X)[k] = g^{exp[k]}`. `ntt_x`: the device's NTT of `X` at the gadget's level.
pub(crate) fn tables(ring: &RingContext, gadget: &RnsGadget, ntt_x: &RnsPoly) -> Result<Vec<u64>> {
    let l = gadget.level() + 1;
    let n = ring.n();
    let two_n = 2 * n;
    if l > MAX_LIMBS {
        return Err(Error::Unsupported {
            what: format!("RNS blind rotation over {l} limbs (at most {MAX_LIMBS})"),
        });
    }
    let shoup = |x: u64, q: u64| ((u128::from(x) << 64) / u128::from(q)) as u64;
    let mut w = vec![0u64; POW + l * two_n + l * n];
    let mut dprefix = 0;
    for j in 0..gadget.digits() {
        let grp = gadget.group(j);
        let qj = gadget.group_modulus(j);
        let half = qj / 2;
        let base = 64 + 8 * j;
        w[base..base + 7].copy_from_slice(&[
            grp.start as u64,
            grp.end as u64,
            qj as u64,
            (qj >> 64) as u64,
            half as u64,
            (half >> 64) as u64,
            dprefix as u64,
        ]);
        dprefix += l - grp.len();
        for i in grp.clone() {
            let q = ring.modulus(i);
            let wd = q.mul(gadget.inv_hat(i), gadget.crt_inv(i));
            let h = gadget.crt_hat(i);
            let own = gadget.inv_hat(i);
            w[8 * i..8 * i + 7].copy_from_slice(&[
                wd,
                shoup(wd, q.value()),
                h as u64,
                (h >> 64) as u64,
                own,
                shoup(own, q.value()),
                j as u64,
            ]);
            for k in (0..l).filter(|k| !grp.contains(k)) {
                let qk = ring.modulus(k).value();
                let hm = (h % u128::from(qk)) as u64;
                w[128 + 2 * (i * MAX_LIMBS + k)] = hm;
                w[128 + 2 * (i * MAX_LIMBS + k) + 1] = shoup(hm, qk);
            }
        }
        for k in (0..l).filter(|k| !grp.contains(k)) {
            w[256 + j * MAX_LIMBS + k] = (qj % u128::from(ring.modulus(k).value())) as u64;
        }
    }
    for s in 0..l {
        let q = ring.modulus(s);
        let x = ntt_x.limb(0, s);
        let mut log = HashMap::with_capacity(two_n);
        let mut p = 1u64;
        for e in 0..two_n {
            w[POW + s * two_n + e] = p;
            log.insert(p, e as u64);
            p = q.mul(p, x[0]);
        }
        for (k, v) in x.iter().enumerate() {
            w[POW + l * two_n + s * n + k] = *log.get(v).ok_or_else(|| Error::Unsupported {
                what: "an NTT whose evaluation points are not the odd powers of one root".into(),
            })?;
        }
    }
    Ok(w)
}

/// Grid over `limbs` limbs (x) and the coefficients (y).
fn cfg(limbs: u32, n: u32) -> LaunchConfig {
    let b = n.min(256);
    LaunchConfig {
        grid_dim: (limbs, n / b, 1),
        block_dim: (b, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// `rns_blind_rotate_init`: `acc[e] = X^{−b_e}·test` (coefficient form).
pub(crate) fn init(cx: &Ctx, acc: u64, test: u64, test_spc: u32, b: u64, sh: Shape) -> Result<()> {
    let f = cx.dev.function("rns_blind_rotate", "rns_blind_rotate_init")?;
    let slots = cx.slots();
    let limbs = sh.count * 2 * sh.limbs;
    launch!(cx.stream, f, cfg(limbs, sh.n), &acc, &test, &test_spc, &b, &slots, &sh)
}

/// `rns_blind_rotate_mono`: `T = acc ⊙ (X^{a_e} − 1)` (NTT form).
pub(crate) fn mono(cx: &Ctx, t: u64, acc: u64, a: u64, tab: u64, sh: Shape) -> Result<()> {
    let f = cx.dev.function("rns_blind_rotate", "rns_blind_rotate_mono")?;
    let slots = cx.slots();
    let limbs = sh.count * 2 * sh.limbs;
    launch!(cx.stream, f, cfg(limbs, sh.n), &t, &acc, &a, &tab, &slots, &sh)
}

/// `rns_blind_rotate_decompose`: the digits of `T` (coefficient form) outside their groups.
pub(crate) fn decompose(cx: &Ctx, d: u64, t: u64, tab: u64, sh: Shape) -> Result<()> {
    let f = cx.dev.function("rns_blind_rotate", "rns_blind_rotate_decompose")?;
    let slots = cx.slots();
    let limbs = sh.count * 2 * sh.digits;
    launch!(cx.stream, f, cfg(limbs, sh.n), &d, &t, &tab, &slots, &sh)
}

/// The buffers of one [`mac`] step.
pub(crate) struct MacArgs {
    /// Accumulators (NTT form).
    pub acc: u64,
    /// The next step's `T` (written when `a_next` is not 0).
    pub t: u64,
    /// Digit limbs (NTT form).
    pub d: u64,
    /// The step's `2·D` row addresses.
    pub rows: u64,
    /// Slots per component of the rows.
    pub row_spc: u32,
    /// The step's exponents.
    pub a: u64,
    /// The next step's exponents, or 0.
    pub a_next: u64,
    /// The table.
    pub tab: u64,
}

/// `rns_blind_rotate_mac`: `acc += Σ D ⊙ rows`, and the next step's `T`.
pub(crate) fn mac(cx: &Ctx, m: &MacArgs, sh: Shape) -> Result<()> {
    let f = cx.dev.function("rns_blind_rotate", "rns_blind_rotate_mac")?;
    let slots = cx.slots();
    let limbs = sh.count * sh.limbs;
    launch!(
        cx.stream,
        f,
        cfg(limbs, sh.n),
        &m.acc,
        &m.t,
        &m.d,
        &m.rows,
        &m.row_spc,
        &m.a,
        &m.a_next,
        &m.tab,
        &slots,
        &sh
    )
}
