//! Launch wrappers and host tables of `kernels/rns_blind_rotate.cu`: the kernels of the batched
//! RNS blind rotation (`CudaBackend`'s `RnsBlindRotateBackend`), around the ring's NTTs.

use super::ntt::{self, r8_names};
use super::{Ctx, launch};
use crate::error::{Error, Result};
use cudarc::driver::{DeviceRepr, LaunchConfig};
use fhe_math::backend::rns_blind_rotate::{KEYS_PER_PAIR, RnsGadget};
use fhe_math::poly::RnsPoly;
use fhe_math::ring::RingContext;
use std::collections::HashMap;

/// Most limbs (and digits) the kernels take (`RBR_MAXL`).
pub(crate) const MAX_LIMBS: usize = 8;
/// Word offset of the power table (`RBR_POW`).
const POW: usize = 320;
/// The limbs' bound of the device's RNS blind rotation (`F64_MOD_BITS` of common.cuh): its
/// products and butterflies are the exact double-precision ones.
const F64_BITS: u32 = 42;

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
    /// Components decomposed a sample (`decompose`): 2 in the blind rotation, 1 in the packing.
    pub comps: u32,
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

/// The device's RNS blind rotation computes in exact double precision (`f64_mul_mod` of
/// common.cuh in `decompose` and `mac`): every limb of the gadget's level must be below `2^42`.
pub(crate) fn check_limbs(ring: &RingContext, gadget: &RnsGadget) -> Result<()> {
    match (0..=gadget.level()).find(|&s| ring.modulus(s).value() >= 1 << F64_BITS) {
        Some(s) => Err(Error::Unsupported {
            what: format!(
                "an RNS blind rotation over a limb of {} bits (limb {s}; the device computes \
                 below 2^{F64_BITS})",
                64 - ring.modulus(s).value().leading_zeros()
            ),
        }),
        None => Ok(()),
    }
}

/// The slots of one sample's digit limbs in `D`'s layout (`[dtot]` a component): digit `j`'s
/// limbs outside its group, in limb order, digit after digit (`dprefix_j` of the table is where
/// digit `j`'s start). `dtot` is the length.
pub(crate) fn digit_slots(gadget: &RnsGadget) -> Vec<u32> {
    let l = gadget.level() + 1;
    (0..gadget.digits())
        .flat_map(|j| {
            let g = gadget.group(j);
            (0..l).filter(move |k| !g.contains(k)).map(|k| k as u32)
        })
        .collect()
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
    let f = cx
        .dev
        .function("rns_blind_rotate", "rns_blind_rotate_init")?;
    let slots = cx.slots();
    let limbs = sh.count * 2 * sh.limbs;
    launch!(
        cx.stream,
        f,
        cfg(limbs, sh.n),
        &acc,
        &test,
        &test_spc,
        &b,
        &slots,
        &sh
    )
}

/// Coefficients a `decompose` thread takes (`RBR_DEC_COEFFS`).
const DEC_COEFFS: u32 = 4;

/// `rns_blind_rotate_decompose_G`: the digits of `T` (coefficient form, `sh.comps` components a
/// sample) outside their groups, one launch a digit `j` (`groups[j]`, the length of its group
/// of limbs, picks the entry).
pub(crate) fn decompose(
    cx: &Ctx,
    groups: &[usize],
    d: u64,
    t: u64,
    tab: u64,
    sh: Shape,
) -> Result<()> {
    const NAMES: [&str; MAX_LIMBS] = [
        "rns_blind_rotate_decompose_1",
        "rns_blind_rotate_decompose_2",
        "rns_blind_rotate_decompose_3",
        "rns_blind_rotate_decompose_4",
        "rns_blind_rotate_decompose_5",
        "rns_blind_rotate_decompose_6",
        "rns_blind_rotate_decompose_7",
        "rns_blind_rotate_decompose_8",
    ];
    let slots = cx.slots();
    let b = sh.n.min(256);
    let config = LaunchConfig {
        grid_dim: (sh.count * sh.comps, sh.n.div_ceil(b * DEC_COEFFS), 1),
        block_dim: (b, 1, 1),
        shared_mem_bytes: 0,
    };
    for (j, &g) in groups.iter().enumerate() {
        let name =
            g.checked_sub(1)
                .and_then(|i| NAMES.get(i))
                .ok_or_else(|| Error::Unsupported {
                    what: format!("an RNS digit of {g} limbs (1 to {MAX_LIMBS})"),
                })?;
        let f = cx.dev.function("rns_blind_rotate", name)?;
        let j = j as u32;
        launch!(cx.stream, f, config, &d, &t, &tab, &slots, &sh, &j)?;
    }
    Ok(())
}

/// The buffers of one [`mac_fused`] step (a pair of LWE coefficients). Mirrors
/// `struct RbrMacArgs` of rbr_mac.cuh.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct MacArgs {
    /// Accumulators (NTT form), `[e][2][L][n]`.
    pub acc: u64,
    /// The next step's `T = acc'` (written when `write_t` is 1), laid out as `acc`.
    pub t: u64,
    /// Digit limbs `[e][2][dtot][n]`, their first forward pass run ([`ntt::forward_strided_first`]).
    pub d: u64,
    /// The pair's `3·2·D` row addresses (row `(k·2 + c)·D + j`).
    pub rows: u64,
    /// The exponents `a_{2p}`, one a sample.
    pub a0: u64,
    /// The exponents `a_{2p+1}`.
    pub a1: u64,
    /// The table.
    pub tab: u64,
    /// Slots per component of the rows.
    pub row_spc: u32,
    /// 1: write `T`; 0 on the last step.
    pub write_t: u32,
}
// SAFETY: plain repr(C) fields (7 u64, 2 u32) matching `struct RbrMacArgs` of rbr_mac.cuh.
unsafe impl DeviceRepr for MacArgs {}

/// The fused multiply-accumulate entries (`ntt_rbr_mac_r8_S` of rbr_mac.cuh, in the `ntt`
/// module), by the stages S = 3..=11 of the last forward pass.
const R8_RBR_MAC: [&str; 9] = r8_names!("ntt_rbr_mac_r8_");
/// Threads of a fused multiply-accumulate block (`__launch_bounds__` of rbr_mac.cuh).
const MAC_THREADS: u32 = 128;

/// `acc += Σ_{c,j} digit_{c,j} ⊙ Σ_k (X^{e_k} − 1)·row(k, c, j)` for a pair of LWE
/// coefficients and the next step's `T = acc'`, the last forward NTT pass of the digit limbs
/// fused in (`ntt_rbr_mac_r8_S`): one block a sample, limb and run of `8·MAC_THREADS` outputs,
/// the samples fastest so that running blocks share the rows.
pub(crate) fn mac_fused(cx: &Ctx, m: &MacArgs, sh: Shape) -> Result<()> {
    let logn = cx.n.trailing_zeros();
    let [p0, p1] = ntt::passes(logn);
    let last = if p1.s == 0 { p0 } else { p1 };
    let log_t = MAC_THREADS.trailing_zeros();
    // Blocks of MAC_THREADS threads, 8 outputs each: C = 2^log_c runs of 2^S.
    let log_c = (log_t + 3)
        .checked_sub(last.s)
        .filter(|&c| c + last.s <= logn && ntt::fused_passes_available(logn))
        .ok_or_else(|| Error::Unsupported {
            what: format!("the fused blind-rotation step on a ring of 2^{logn}"),
        })?;
    let runs = 1u32 << (logn - log_c - last.s);
    let e_words = 1u32 << (log_c + last.s);
    let cfg = LaunchConfig {
        grid_dim: (sh.count, sh.limbs * runs, 1),
        block_dim: (MAC_THREADS, 1, 1),
        // The pass's exchange buffer, then the factors X^{e_k} − 1 of the block's outputs.
        shared_mem_bytes: 8 * (e_words + e_words / 8 + KEYS_PER_PAIR as u32 * e_words),
    };
    let f = cx.dev.function("ntt", R8_RBR_MAC[last.s as usize - 3])?;
    let slots = cx.slots();
    let twp = cx.t(cx.layout.ntt.fwd_pair);
    launch!(cx.stream, f, cfg, m, &sh, &slots, &twp, &logn, &log_c)
}

/// One level of the packing on the device (`len = 2^level` inputs a result).
pub(crate) struct PackLevel {
    /// Results of the level (`m / len`); input `r + half` pairs with `r`.
    pub half: u32,
    /// `N / len`: the monomial of the odd half.
    pub shift: u32,
    /// Device address of the level's gather (`u32[n]`, [`automorphism_gathers`]).
    pub perm: u64,
    /// Device address of the level's `D` key-row addresses.
    pub rows: u64,
    /// Slots per component of the key rows.
    pub row_spc: u32,
}

/// For the packing's levels `1..=levels`, the gathers of `τ_g`, `g = 2^level + 1`, in NTT form:
/// `perm[level − 1][k]` is the point whose exponent is `g·exp[k] mod 2N` (`exp` of the table
/// `words`, the same for every limb: an NTT whose points are `ψ^{exp[k]}` in one order for
/// all primes).
pub(crate) fn automorphism_gathers(
    words: &[u64],
    l: usize,
    n: usize,
    levels: usize,
) -> Result<Vec<u32>> {
    let two_n = 2 * n;
    let exp = |s: usize| &words[POW + l * two_n + s * n..POW + l * two_n + (s + 1) * n];
    if (1..l).any(|s| exp(s) != exp(0)) {
        return Err(Error::Unsupported {
            what: "a packing over limbs whose NTTs order the evaluation points differently".into(),
        });
    }
    let mut at = vec![u32::MAX; two_n];
    for (k, &e) in exp(0).iter().enumerate() {
        at[e as usize] = k as u32;
    }
    let mut out = Vec::with_capacity(levels * n);
    for lv in 1..=levels {
        let g = (1usize << lv) + 1;
        for &e in exp(0) {
            let k = at[(g * e as usize) % two_n];
            if k == u32::MAX {
                return Err(Error::Unsupported {
                    what: "an NTT whose evaluation points are not the odd powers of one root"
                        .into(),
                });
            }
            out.push(k);
        }
    }
    Ok(out)
}

/// `rns_pack_diff`: `T0, T1` (and the copy `T1c`) `= τ_g(e − X^{N/len}·o)` for the level's pairs.
pub(crate) fn pack_diff(
    cx: &Ctx,
    t: [u64; 3],
    p: u64,
    lv: &PackLevel,
    tab: u64,
    sh: Shape,
) -> Result<()> {
    let f = cx.dev.function("rns_blind_rotate", "rns_pack_diff")?;
    let slots = cx.slots();
    let [t0, t1, t1c] = t;
    launch!(
        cx.stream,
        f,
        cfg(lv.half * sh.limbs, sh.n),
        &t0,
        &t1,
        &t1c,
        &p,
        &lv.half,
        &lv.shift,
        &lv.perm,
        &tab,
        &slots,
        &sh
    )
}

/// `rns_pack_mac`: `P[r] ← e + X^{N/len}·o + (T0, 0) + Σ_j d_j ⊙ key_j`.
pub(crate) fn pack_mac(
    cx: &Ctx,
    p: u64,
    t: [u64; 3],
    lv: &PackLevel,
    tab: u64,
    sh: Shape,
) -> Result<()> {
    let f = cx.dev.function("rns_blind_rotate", "rns_pack_mac")?;
    let slots = cx.slots();
    let [t0, t1, d] = t;
    launch!(
        cx.stream,
        f,
        cfg(lv.half * sh.limbs, sh.n),
        &p,
        &t0,
        &t1,
        &d,
        &lv.rows,
        &lv.row_spc,
        &lv.half,
        &lv.shift,
        &tab,
        &slots,
        &sh
    )
}

/// A host model of the kernels (the same table words and index arithmetic as
/// rns_blind_rotate.cu, the CPU NTT in place of the device's) against fhe-math's reference.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::xorshift;
    use fhe_math::backend::rns_blind_rotate::{RnsBlindRotateBackend, RnsRotationBatch};
    use fhe_math::cpu::CpuBackend;
    use fhe_math::poly::Shape;
    use fhe_math::primes::ntt_primes;
    use std::sync::Arc;

    fn mod_mul(a: u64, b: u64, q: u64) -> u64 {
        (u128::from(a) * u128::from(b) % u128::from(q)) as u64
    }

    fn shoup_mul(a: u64, w: u64, ws: u64, q: u64) -> u64 {
        let quot = ((u128::from(a) * u128::from(ws)) >> 64) as u64;
        let r = a.wrapping_mul(w).wrapping_sub(quot.wrapping_mul(q));
        if r >= q { r - q } else { r }
    }

    /// `decompose` and the forward NTTs of the model: the digits `D [e][c][dtot][k]` (NTT form)
    /// of `t` (`[e][c][s][k]`, coefficient form, `comps` components a sample).
    fn model_digits(
        ring: &RingContext,
        g: &RnsGadget,
        tab: &[u64],
        t: &[u64],
        comps: usize,
        cnt: usize,
    ) -> Vec<u64> {
        let (n, l, dg) = (ring.n(), g.level() + 1, g.digits());
        let dtot: usize = (0..dg).map(|j| l - g.group(j).len()).sum();
        let q = |s: usize| ring.modulus(s).value();
        let d_slot = |x: usize| -> usize {
            let mut p = x;
            for j in 0..dg {
                let grp = g.group(j);
                let outside: Vec<usize> = (0..l).filter(|k| !grp.contains(k)).collect();
                if p < outside.len() {
                    return outside[p];
                }
                p -= outside.len();
            }
            unreachable!()
        };
        let mut d = vec![0u64; cnt * comps * dtot * n];
        for x in 0..cnt * comps * dg {
            let (e, c, j) = (x / (comps * dg), (x % (comps * dg)) / dg, x % dg);
            let grp = &tab[64 + 8 * j..72 + 8 * j];
            let (lo, hi) = (grp[0] as usize, grp[1] as usize);
            let qj = u128::from(grp[2]) | (u128::from(grp[3]) << 64);
            let half = u128::from(grp[4]) | (u128::from(grp[5]) << 64);
            for k in 0..n {
                let mut y = [0u64; MAX_LIMBS];
                let (mut sum, mut beta) = (0u128, 0u64);
                for ii in lo..hi {
                    let li = &tab[8 * ii..8 * ii + 8];
                    let v = t[(((e * comps + c) * l) + ii) * n + k];
                    y[ii - lo] = shoup_mul(v, li[0], li[1], q(ii));
                    sum += u128::from(y[ii - lo]) * (u128::from(li[2]) | (u128::from(li[3]) << 64));
                    while sum >= qj {
                        sum -= qj;
                        beta += 1;
                    }
                }
                if sum > half {
                    beta += 1;
                }
                for (p, s) in (0..l).filter(|s| !(lo..hi).contains(s)).enumerate() {
                    let mut r = 0u64;
                    for ii in lo..hi {
                        let h = &tab[128 + 2 * (ii * MAX_LIMBS + s)..];
                        r = (r + shoup_mul(y[ii - lo], h[0], h[1], q(s))) % q(s);
                    }
                    let qjs = tab[256 + j * MAX_LIMBS + s];
                    for _ in 0..beta {
                        r = (r + q(s) - qjs) % q(s);
                    }
                    d[((e * comps + c) * dtot + grp[6] as usize + p) * n + k] = r;
                }
            }
        }
        // The strided NTT's period (the device's slots of D's limbs) is this layout.
        let period = digit_slots(g);
        assert_eq!(period.len(), dtot);
        for x in 0..cnt * comps * dtot {
            assert_eq!(period[x % dtot] as usize, d_slot(x % dtot));
            ring.ntt(d_slot(x % dtot))
                .forward(&mut d[x * n..(x + 1) * n]);
        }
        d
    }

    /// The model of one batch: acc and T `[e][c][s][k]`, D `[e][c][dtot][k]`.
    #[allow(clippy::too_many_arguments)]
    fn model(
        ring: &RingContext,
        g: &RnsGadget,
        tab: &[u64],
        rows: &[RnsPoly],
        test: &RnsPoly,
        batch: &RnsRotationBatch,
    ) -> Vec<RnsPoly> {
        let (n, l, dg) = (ring.n(), g.level() + 1, g.digits());
        let two_n = 2 * n;
        let dtot: usize = (0..dg).map(|j| l - g.group(j).len()).sum();
        let cnt = batch.len();
        let q = |s: usize| ring.modulus(s).value();
        let factor = |s: usize, k: usize, a: u64| {
            let e = (a * tab[POW + l * two_n + s * n + k]) as usize & (two_n - 1);
            (tab[POW + s * two_n + e] + q(s) - 1) % q(s)
        };
        let mut acc = vec![0u64; cnt * 2 * l * n];
        // init (T = acc, coefficient form), forward NTT
        for x in 0..cnt * 2 * l {
            let (e, c, s) = (x / (2 * l), (x % (2 * l)) / l, x % l);
            let tt = (two_n as u64 - batch.b[e]) as usize & (two_n - 1);
            for k in 0..n {
                let m = (k + two_n - tt) & (two_n - 1);
                let src = test.limb(c, s);
                acc[x * n + k] = if m < n {
                    src[m]
                } else {
                    (q(s) - src[m - n]) % q(s)
                };
            }
        }
        let mut t = acc.clone();
        for x in 0..cnt * 2 * l {
            ring.ntt(x % l).forward(&mut acc[x * n..(x + 1) * n]);
        }
        let dim = batch.dimension;
        let a = |e: usize, i: usize| batch.a[e * dim + i];
        let pairs = dim / 2;
        for p in 0..pairs {
            if p > 0 {
                for x in 0..cnt * 2 * l {
                    ring.ntt(x % l).inverse(&mut t[x * n..(x + 1) * n]);
                }
            }
            let d = model_digits(ring, g, tab, &t, 2, cnt);
            for x in 0..cnt * l {
                let (e, s) = (x / l, x % l);
                let li = &tab[8 * s..8 * s + 8];
                let (a0, a1) = (a(e, 2 * p), a(e, 2 * p + 1));
                let exps = [(a0 + a1) % two_n as u64, a0, a1];
                for k in 0..n {
                    let f = exps.map(|ex| factor(s, k, ex));
                    let idx = |c: usize| (((e * 2 + c) * l) + s) * n + k;
                    let cur = [acc[idx(0)], acc[idx(1)]];
                    let mut sum = [0u128; 2];
                    for c in 0..2 {
                        for j in 0..dg {
                            let dv = if j == li[6] as usize {
                                shoup_mul(cur[c], li[4], li[5], q(s))
                            } else {
                                let grp = &tab[64 + 8 * j..72 + 8 * j];
                                let (lo, hi) = (grp[0] as usize, grp[1] as usize);
                                let pos = grp[6] as usize + if s < lo { s } else { s - (hi - lo) };
                                d[((e * 2 + c) * dtot + pos) * n + k]
                            };
                            for (co, sm) in sum.iter_mut().enumerate() {
                                let comb = (0..KEYS_PER_PAIR).fold(0u64, |acc, kk| {
                                    let row = &rows[((p * KEYS_PER_PAIR + kk) * 2 + c) * dg + j];
                                    (acc + mod_mul(f[kk], row.limb(co, s)[k], q(s))) % q(s)
                                });
                                *sm += u128::from(dv) * u128::from(comb);
                            }
                        }
                    }
                    for co in 0..2 {
                        let nv = (cur[co] + (sum[co] % u128::from(q(s))) as u64) % q(s);
                        acc[idx(co)] = nv;
                        t[idx(co)] = nv;
                    }
                }
            }
        }
        (0..cnt)
            .map(|e| {
                let mut p = ring
                    .zeros(Shape {
                        components: 2,
                        level: g.level(),
                        extended: false,
                    })
                    .unwrap();
                for c in 0..2 {
                    for s in 0..l {
                        let off = ((e * 2 + c) * l + s) * n;
                        let mut v = acc[off..off + n].to_vec();
                        ring.ntt(s).inverse(&mut v);
                        p.limb_mut(c, s).copy_from_slice(&v);
                    }
                }
                p
            })
            .collect()
    }

    /// The packing's gathers: `NTT(τ_g(x))[k] = NTT(x)[perm[k]]` for `g = 2^level + 1`, with
    /// the table built from the NTT of `X` as the backend builds it.
    #[test]
    fn automorphism_gathers_are_the_automorphisms_in_ntt_form() {
        use fhe_math::backend::rns_blind_rotate::move_coefficients;
        let n = 64;
        let qs = ntt_primes(36, 2 * n as u64, 4, &[]).unwrap();
        let ps = ntt_primes(37, 2 * n as u64, 1, &qs).unwrap();
        let ring = RingContext::new(n, &qs, &ps, std::iter::once(0..4).collect()).unwrap();
        let g = RnsGadget::new(&ring, 3, 2).unwrap();
        let shape = Shape {
            components: 1,
            level: 3,
            extended: false,
        };
        let mut x = ring.zeros(shape).unwrap();
        for s in 0..4 {
            x.limb_mut(0, s)[1] = 1;
            ring.ntt(s).forward(x.limb_mut(0, s));
        }
        let words = tables(&ring, &g, &x).unwrap();
        let levels = 6;
        let perm = automorphism_gathers(&words, 4, n, levels).unwrap();
        let mut rnd = xorshift(0x9a7e);
        let mut p = ring.zeros(shape).unwrap();
        for s in 0..4 {
            let q = ring.modulus(s).value();
            p.limb_mut(0, s).iter_mut().for_each(|w| *w = rnd() % q);
        }
        for lv in 1..=levels {
            let gl = (1usize << lv) + 1;
            let t = move_coefficients(&ring, &p, |i| i * gl);
            for s in 0..4 {
                let (mut a, mut b) = (p.limb(0, s).to_vec(), t.limb(0, s).to_vec());
                ring.ntt(s).forward(&mut a);
                ring.ntt(s).forward(&mut b);
                let gathered: Vec<u64> =
                    (0..n).map(|k| a[perm[(lv - 1) * n + k] as usize]).collect();
                assert_eq!(gathered, b, "level {lv}, limb {s}");
            }
        }
    }

    /// `rbr_decompose_group`'s β in double precision (Rust's `mul_add` is the correctly
    /// rounded FMA of `__fma_rn`): `None` where the kernel takes the exact path instead.
    fn beta_f64(y: &[u64], q: &[u64]) -> Option<u64> {
        let f = y
            .iter()
            .zip(q)
            .fold(0.5f64, |f, (&y, &q)| (y as f64).mul_add(1.0 / q as f64, f));
        let fb = f.floor();
        let margin = 2f64.powi(-40);
        (f - fb >= margin && fb + 1.0 - f >= margin).then_some(fb as u64)
    }

    /// β of the exact sum: Σ y_i·(Q/q_i) reduced by Q, plus one above Q/2 (the reference's).
    fn beta_exact(y: &[u64], q: &[u64]) -> u64 {
        let big: u128 = q.iter().map(|&x| u128::from(x)).product();
        let (mut sum, mut beta) = (0u128, 0u64);
        for (&yi, &qi) in y.iter().zip(q) {
            sum += u128::from(yi) * (big / u128::from(qi));
            while sum >= big {
                sum -= big;
                beta += 1;
            }
        }
        beta + u64::from(sum > big / 2)
    }

    /// The double-precision β equals the exact one wherever the kernel takes it: random
    /// residues, and residues placed as near a rounding boundary (F = k + 1/2) as the primes
    /// allow, for groups of 1 to 3 primes of 35 to 41 bits.
    #[test]
    fn double_precision_beta_is_exact_outside_its_margin() {
        let mut rnd = xorshift(0xbe7a);
        let mut fast = 0;
        for g in 1..=3usize {
            for bits in [35, 41] {
                let q = ntt_primes(bits, 1 << 14, g, &[]).unwrap();
                for trial in 0..4000 {
                    let mut y: Vec<u64> = q.iter().map(|&qi| rnd() % qi).collect();
                    if trial % 2 == 1 {
                        // Put F = Σ y_i/q_i next to k + 1/2 through the last residue.
                        let rest: f64 = y[..g - 1]
                            .iter()
                            .zip(&q)
                            .map(|(&a, &b)| a as f64 / b as f64)
                            .sum();
                        let k = (rest + 0.5).floor() as f64;
                        let target = (k + 0.5 - rest).rem_euclid(1.0);
                        let last = q[g - 1];
                        y[g - 1] = ((target * last as f64).round() as u64 + (trial as u64 % 3))
                            .min(last - 1);
                    }
                    if let Some(b) = beta_f64(&y, &q) {
                        fast += 1;
                        assert_eq!(b, beta_exact(&y, &q), "y {y:?} q {q:?}");
                    }
                }
            }
        }
        // Every random trial is decided in doubles; the near-boundary ones at 41 bits, within
        // 2^-42 of the boundary, go to the exact path.
        assert!(
            (12_000..24_000).contains(&fast),
            "the double-precision path decided {fast} of 24000"
        );
    }

    /// The packing as the device runs it (`rns_pack_diff`, the inverse NTTs, `decompose`, the
    /// forward NTTs, `rns_pack_mac`: the same layouts, gathers and table words, exact integer
    /// arithmetic for the doubles) on accumulators `accs` (coefficient form) with one key
    /// (`D` rows) a level: the packed polynomial, coefficient form.
    fn model_pack(
        ring: &RingContext,
        g: &RnsGadget,
        tab: &[u64],
        keys: &[Vec<RnsPoly>],
        accs: &[RnsPoly],
    ) -> RnsPoly {
        let (n, l, dg) = (ring.n(), g.level() + 1, g.digits());
        let two_n = 2 * n;
        let dtot: usize = (0..dg).map(|j| l - g.group(j).len()).sum();
        let m = accs.len();
        let levels = m.trailing_zeros() as usize;
        let q = |s: usize| ring.modulus(s).value();
        let mono = |s: usize, k: usize, a: u64| {
            tab[POW + s * two_n + ((a * tab[POW + l * two_n + s * n + k]) as usize & (two_n - 1))]
        };
        let perm = automorphism_gathers(tab, l, n, levels).unwrap();
        let ln = l * n;
        let mut p = vec![0u64; m * 2 * ln];
        for (e, a) in accs.iter().enumerate() {
            for c in 0..2 {
                for s in 0..l {
                    let at = e * 2 * ln + c * ln + s * n;
                    p[at..at + n].copy_from_slice(a.limb(c, s));
                    ring.ntt(s).forward(&mut p[at..at + n]);
                }
            }
        }
        for lv in 1..=levels {
            let (len, half) = (1usize << lv, m >> lv);
            let shift = (n / len) as u64;
            let gather = &perm[(lv - 1) * n..lv * n];
            let (mut t0, mut t1) = (vec![0u64; half * ln], vec![0u64; half * ln]);
            for r in 0..half {
                for s in 0..l {
                    for k in 0..n {
                        let kk = gather[k] as usize;
                        let f = mono(s, kk, shift);
                        let at = |e: usize, c: usize| p[e * 2 * ln + c * ln + s * n + kk];
                        let diff =
                            |c: usize| (at(r, c) + q(s) - mod_mul(at(r + half, c), f, q(s))) % q(s);
                        t0[r * ln + s * n + k] = diff(0);
                        t1[r * ln + s * n + k] = diff(1);
                    }
                }
            }
            let mut t1c = t1.clone();
            for x in 0..half * l {
                ring.ntt(x % l).inverse(&mut t1c[x * n..(x + 1) * n]);
            }
            let d = model_digits(ring, g, tab, &t1c, 1, half);
            let key = &keys[lv - 1];
            for r in 0..half {
                for s in 0..l {
                    let li = &tab[8 * s..8 * s + 8];
                    for k in 0..n {
                        let f = mono(s, k, shift);
                        let ie = r * 2 * ln + s * n + k;
                        let io = (r + half) * 2 * ln + s * n + k;
                        let it = r * ln + s * n + k;
                        let mut sum = [
                            (p[ie] + mod_mul(p[io], f, q(s)) + t0[it]) % q(s),
                            (p[ie + ln] + mod_mul(p[io + ln], f, q(s))) % q(s),
                        ];
                        for (j, row) in key.iter().enumerate() {
                            let dv = if j == li[6] as usize {
                                shoup_mul(t1[it], li[4], li[5], q(s))
                            } else {
                                let grp = &tab[64 + 8 * j..72 + 8 * j];
                                let (lo, hi) = (grp[0] as usize, grp[1] as usize);
                                let pos = grp[6] as usize + if s < lo { s } else { s - (hi - lo) };
                                d[(r * dtot + pos) * n + k]
                            };
                            for (c, sm) in sum.iter_mut().enumerate() {
                                *sm = (*sm + mod_mul(dv, row.limb(c, s)[k], q(s))) % q(s);
                            }
                        }
                        p[ie] = sum[0];
                        p[ie + ln] = sum[1];
                    }
                }
            }
        }
        let mut out = ring
            .zeros(Shape {
                components: 2,
                level: g.level(),
                extended: false,
            })
            .unwrap();
        for c in 0..2 {
            for s in 0..l {
                let mut v = p[c * ln + s * n..c * ln + (s + 1) * n].to_vec();
                ring.ntt(s).inverse(&mut v);
                out.limb_mut(c, s).copy_from_slice(&v);
            }
        }
        out
    }

    /// The kernels' table of `g` from the host's NTT of `X` (the device's gives the same words).
    fn host_tables(ring: &RingContext, g: &RnsGadget) -> Vec<u64> {
        let limbs = g.level() + 1;
        let mut x = ring
            .zeros(Shape {
                components: 1,
                level: g.level(),
                extended: false,
            })
            .unwrap();
        for s in 0..limbs {
            x.limb_mut(0, s)[1] = 1;
            ring.ntt(s).forward(x.limb_mut(0, s));
        }
        tables(ring, g, &x).unwrap()
    }

    /// The device's packing (modelled by `model_pack`) gives the words of fhe-math's
    /// `pack_lwes` (coefficient form, host automorphisms), for 1 to 16 inputs at 6 limbs in
    /// digits of 2 and 5 limbs in digits of 2 (the last shorter), random accumulators and keys.
    #[test]
    fn packing_model_matches_the_reference() {
        use fhe_math::backend::rns_blind_rotate::pack_lwes;
        let n = 32;
        for (limbs, digit_limbs, m) in [(6, 2, 16usize), (5, 2, 8), (6, 3, 1), (4, 1, 2)] {
            let qs = ntt_primes(36, 2 * n as u64, limbs, &[]).unwrap();
            let ps = ntt_primes(37, 2 * n as u64, 1, &qs).unwrap();
            let ring = RingContext::new(n, &qs, &ps, std::iter::once(0..limbs).collect()).unwrap();
            let be = CpuBackend::new(Arc::clone(&ring));
            let g = RnsGadget::new(&ring, limbs - 1, digit_limbs).unwrap();
            let mut rnd = xorshift(0x9ac4 + limbs as u64 + m as u64);
            let shape = Shape {
                components: 2,
                level: limbs - 1,
                extended: false,
            };
            let mut random = || {
                let mut p = ring.zeros(shape).unwrap();
                for c in 0..2 {
                    for s in 0..limbs {
                        let q = ring.modulus(s).value();
                        p.limb_mut(c, s).iter_mut().for_each(|w| *w = rnd() % q);
                    }
                }
                p
            };
            let levels = m.trailing_zeros() as usize;
            let keys: Vec<Vec<RnsPoly>> = (0..levels)
                .map(|_| (0..g.digits()).map(|_| random()).collect())
                .collect();
            let accs: Vec<RnsPoly> = (0..m).map(|_| random()).collect();
            let tab = host_tables(&ring, &g);
            let got = model_pack(&ring, &g, &tab, &keys, &accs);
            let pack: Vec<(usize, Vec<&RnsPoly>)> = keys
                .iter()
                .enumerate()
                .map(|(i, k)| ((1usize << (i + 1)) + 1, k.iter().collect()))
                .collect();
            let want = pack_lwes(&be, &g, accs.clone(), &pack).unwrap();
            assert!(
                got.raw() == want.raw(),
                "{limbs} limbs, digits of {digit_limbs}, {m} inputs"
            );
        }
    }

    /// Rings of 5 limbs (the last digit shorter) and 6 limbs in digits of 1, 2 and 3 limbs,
    /// random rows, test polynomial and exponents (zeros among them): the model's words are the
    /// reference's.
    #[test]
    fn kernel_model_matches_the_reference() {
        let n = 32;
        for (limbs, digit_limbs) in [(5, 2), (6, 3), (4, 1)] {
            let qs = ntt_primes(36, 2 * n as u64, limbs, &[]).unwrap();
            let ps = ntt_primes(37, 2 * n as u64, 1, &qs).unwrap();
            let ring = RingContext::new(n, &qs, &ps, std::iter::once(0..limbs).collect()).unwrap();
            let be = CpuBackend::new(Arc::clone(&ring));
            let g = RnsGadget::new(&ring, limbs - 1, digit_limbs).unwrap();
            let mut rnd = xorshift(0x5eed + limbs as u64);
            let shape = Shape {
                components: 2,
                level: limbs - 1,
                extended: false,
            };
            let random = |rnd: &mut dyn FnMut() -> u64| {
                let mut p = ring.zeros(shape).unwrap();
                for c in 0..2 {
                    for s in 0..limbs {
                        let q = ring.modulus(s).value();
                        p.limb_mut(c, s).iter_mut().for_each(|w| *w = rnd() % q);
                    }
                }
                p
            };
            let dim = 6;
            let rows: Vec<RnsPoly> = (0..dim / 2 * KEYS_PER_PAIR * 2 * g.digits())
                .map(|_| random(&mut rnd))
                .collect();
            let test = random(&mut rnd);
            let count = 3;
            let batch = RnsRotationBatch {
                dimension: dim,
                a: (0..count * dim)
                    .map(|i| match i {
                        // one pair of zeros (a no-op), one zero beside a non-zero exponent
                        2 | 3 | 7 => 0,
                        // a pair summing to 2N
                        12 => 2 * n as u64 - 5,
                        13 => 5,
                        _ => rnd() % (2 * n as u64),
                    })
                    .collect(),
                b: (0..count).map(|_| rnd() % (2 * n as u64)).collect(),
            };
            let tab = host_tables(&ring, &g);
            let got = model(&ring, &g, &tab, &rows, &test, &batch);
            let row_refs: Vec<&RnsPoly> = rows.iter().collect();
            let want = be.rns_blind_rotate(&g, &row_refs, &test, &batch).unwrap();
            for (e, (a, b)) in got.iter().zip(&want).enumerate() {
                assert!(
                    a.raw() == b.raw(),
                    "{limbs} limbs, digits of {digit_limbs}: sample {e}"
                );
            }
        }
    }
}
