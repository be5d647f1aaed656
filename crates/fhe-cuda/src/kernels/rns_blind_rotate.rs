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
/// Moduli below `2^F64_BITS` only (every limb of the gadget) let [`digits`] run: its
/// butterflies are the exact double-precision ones (`F64_MOD_BITS` of common.cuh).
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
}
// SAFETY: plain repr(C) u32 fields matching `struct RbrShape`.
unsafe impl DeviceRepr for Shape {}

/// The kernels' table (layout in rns_blind_rotate.cu): the digit constants of `gadget`, per
/// limb the powers `g^j` (`j < 2N`, `g = NTT(X)[0]`) and the exponents `exp[k]` with
/// `NTT(X)[k] = g^{exp[k]}`, then (`RBR_TW`) the limbs' forward and inverse twiddles and
/// `n^-1`, `n^-1·ψ^(-n/2)` as doubles for [`digits`]. `ntt_x`: the device's NTT of `X` at the
/// gadget's level.
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
    let tw = POW + l * two_n + l * n;
    let mut w = vec![0u64; tw + 2 * l * n + 2 * l];
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
    // Exact as doubles: every twiddle is below q < 2^53.
    let f = |v: u64| (v as f64).to_bits();
    for s in 0..l {
        let t = ring.ntt(s);
        for (k, (&a, &b)) in t
            .forward_twiddles()
            .iter()
            .zip(t.inverse_twiddles())
            .enumerate()
        {
            w[tw + s * n + k] = f(a);
            w[tw + (l + s) * n + k] = f(b);
        }
        w[tw + 2 * l * n + 2 * s] = f(t.n_inv());
        w[tw + 2 * l * n + 2 * s + 1] = f(t.inverse_final_twiddle());
    }
    Ok(w)
}

/// The dynamic shared memory of [`digits`]: the largest group's limbs and one target limb as
/// doubles, and one byte a coefficient (`β`).
fn digits_shared_bytes(gadget: &RnsGadget, n: usize) -> usize {
    let widest = (0..gadget.digits())
        .map(|j| gadget.group(j).len())
        .max()
        .unwrap_or(0);
    (widest + 1) * n * 8 + n
}

/// Whether [`digits`] runs for `gadget` on this device: every limb below `2^42` (its
/// double-precision butterflies), a ring of at least 16 coefficients, and its shared memory
/// within the device's opt-in limit `max_smem`.
pub(crate) fn digits_fit(ring: &RingContext, gadget: &RnsGadget, max_smem: usize) -> bool {
    let l = gadget.level() + 1;
    ring.n() >= 16
        && (0..l).all(|s| ring.modulus(s).value() < 1 << F64_BITS)
        && digits_shared_bytes(gadget, ring.n()) <= max_smem
}

/// `rns_blind_rotate_digits`: `D` in NTT form from `T` in NTT form, one block a (sample,
/// component, digit) through shared memory (the inverse NTTs of the group's limbs, the exact
/// decomposition, the forward NTTs of the limbs outside the group). Needs [`digits_fit`].
pub(crate) fn digits(
    cx: &Ctx,
    d: u64,
    t: u64,
    tab: u64,
    gadget: &RnsGadget,
    sh: Shape,
) -> Result<()> {
    use cudarc::driver::sys::CUfunction_attribute_enum;
    let f = cx
        .dev
        .function("rns_blind_rotate", "rns_blind_rotate_digits")?;
    let smem = digits_shared_bytes(gadget, sh.n as usize) as u32;
    f.set_attribute(
        CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        smem as i32,
    )
    .map_err(Error::driver("kernel attribute"))?;
    // The loops are strided: any whole number of warps gives the same words.
    let cfg = LaunchConfig {
        grid_dim: (sh.count * 2 * sh.digits, 1, 1),
        block_dim: ((sh.n / 4).clamp(32, 1024), 1, 1),
        shared_mem_bytes: smem,
    };
    let slots = cx.slots();
    launch!(cx.stream, f, cfg, &d, &t, &tab, &slots, &sh)
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

/// `rns_blind_rotate_mono`: `T = acc ⊙ (X^{a_e} − 1)` (NTT form).
pub(crate) fn mono(cx: &Ctx, t: u64, acc: u64, a: u64, tab: u64, sh: Shape) -> Result<()> {
    let f = cx
        .dev
        .function("rns_blind_rotate", "rns_blind_rotate_mono")?;
    let slots = cx.slots();
    let limbs = sh.count * 2 * sh.limbs;
    launch!(
        cx.stream,
        f,
        cfg(limbs, sh.n),
        &t,
        &acc,
        &a,
        &tab,
        &slots,
        &sh
    )
}

/// `rns_blind_rotate_decompose`: the digits of `T` (coefficient form) outside their groups.
pub(crate) fn decompose(cx: &Ctx, d: u64, t: u64, tab: u64, sh: Shape) -> Result<()> {
    let f = cx
        .dev
        .function("rns_blind_rotate", "rns_blind_rotate_decompose")?;
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
    let f = cx
        .dev
        .function("rns_blind_rotate", "rns_blind_rotate_mac")?;
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
        let mut acc = vec![0u64; cnt * 2 * l * n];
        let mut t = vec![0u64; cnt * 2 * l * n];
        let mut d = vec![0u64; cnt * 2 * dtot * n];
        // init, forward NTT
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
            ring.ntt(s).forward(&mut acc[x * n..(x + 1) * n]);
        }
        let dim = batch.dimension;
        let a = |e: usize, i: usize| batch.a[e * dim + i];
        for x in 0..cnt * 2 * l {
            let (e, s) = (x / (2 * l), x % l);
            for k in 0..n {
                t[x * n + k] = mod_mul(acc[x * n + k], factor(s, k, a(e, 0)), q(s));
            }
        }
        for i in 0..dim {
            for x in 0..cnt * 2 * l {
                ring.ntt(x % l).inverse(&mut t[x * n..(x + 1) * n]);
            }
            for x in 0..cnt * 2 * dg {
                let (e, c, j) = (x / (2 * dg), (x % (2 * dg)) / dg, x % dg);
                let grp = &tab[64 + 8 * j..72 + 8 * j];
                let (lo, hi) = (grp[0] as usize, grp[1] as usize);
                let qj = u128::from(grp[2]) | (u128::from(grp[3]) << 64);
                let half = u128::from(grp[4]) | (u128::from(grp[5]) << 64);
                for k in 0..n {
                    let mut y = [0u64; MAX_LIMBS];
                    let (mut sum, mut beta) = (0u128, 0u64);
                    for ii in lo..hi {
                        let li = &tab[8 * ii..8 * ii + 8];
                        let v = t[(((e * 2 + c) * l) + ii) * n + k];
                        y[ii - lo] = shoup_mul(v, li[0], li[1], q(ii));
                        sum += u128::from(y[ii - lo])
                            * (u128::from(li[2]) | (u128::from(li[3]) << 64));
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
                        d[((e * 2 + c) * dtot + grp[6] as usize + p) * n + k] = r;
                    }
                }
            }
            // The strided NTT's period (the device's slots of D's limbs) is this layout.
            let period = digit_slots(g);
            assert_eq!(period.len(), dtot);
            for x in 0..cnt * 2 * dtot {
                assert_eq!(period[x % dtot] as usize, d_slot(x % dtot));
                ring.ntt(d_slot(x % dtot))
                    .forward(&mut d[x * n..(x + 1) * n]);
            }
            for x in 0..cnt * l {
                let (e, s) = (x / l, x % l);
                let li = &tab[8 * s..8 * s + 8];
                for k in 0..n {
                    let f = factor(s, k, a(e, i));
                    let idx = |c: usize| (((e * 2 + c) * l) + s) * n + k;
                    let cur = [acc[idx(0)], acc[idx(1)]];
                    let mut sum = [0u128; 2];
                    for c in 0..2 {
                        let tc = mod_mul(cur[c], f, q(s));
                        for j in 0..dg {
                            let dv = if j == li[6] as usize {
                                shoup_mul(tc, li[4], li[5], q(s))
                            } else {
                                let grp = &tab[64 + 8 * j..72 + 8 * j];
                                let (lo, hi) = (grp[0] as usize, grp[1] as usize);
                                let p = grp[6] as usize + if s < lo { s } else { s - (hi - lo) };
                                d[((e * 2 + c) * dtot + p) * n + k]
                            };
                            let row = &rows[(i * 2 + c) * dg + j];
                            for (co, sm) in sum.iter_mut().enumerate() {
                                *sm += u128::from(dv) * u128::from(row.limb(co, s)[k]);
                            }
                        }
                    }
                    for co in 0..2 {
                        let nv = (cur[co] + (sum[co] % u128::from(q(s))) as u64) % q(s);
                        acc[idx(co)] = nv;
                        if i + 1 < dim {
                            t[idx(co)] = mod_mul(nv, factor(s, k, a(e, i + 1)), q(s));
                        }
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

    /// `rbr_smem_forward`'s loops (radix-4 rounds from stage 0, the last stage alone at odd
    /// log n), exact integer arithmetic in place of the doubles.
    fn smem_forward(a: &mut [u64], tw: &[u64], q: u64) {
        let n = a.len();
        let logn = n.trailing_zeros() as usize;
        let mul = |x: u64, w: u64| mod_mul(x, w, q);
        let bf = |x: &mut u64, y: &mut u64, w: u64| {
            let (u, v) = (*x, mul(*y, w));
            (*x, *y) = ((u + v) % q, (u + q - v) % q);
        };
        let mut s = 0;
        while s + 2 <= logn {
            let (m, lt) = (1usize << s, logn - s - 2);
            let t = 1usize << lt;
            for qd in 0..n / 4 {
                let i = qd >> lt;
                let j = (i << (lt + 2)) + (qd & (t - 1));
                let [mut x0, mut x1, mut x2, mut x3] = [a[j], a[j + t], a[j + 2 * t], a[j + 3 * t]];
                bf(&mut x0, &mut x2, tw[m + i]);
                bf(&mut x1, &mut x3, tw[m + i]);
                bf(&mut x0, &mut x1, tw[2 * m + 2 * i]);
                bf(&mut x2, &mut x3, tw[2 * m + 2 * i + 1]);
                [a[j], a[j + t], a[j + 2 * t], a[j + 3 * t]] = [x0, x1, x2, x3];
            }
            s += 2;
        }
        if s < logn {
            let m = n / 2;
            for p in 0..m {
                let (mut x, mut y) = (a[2 * p], a[2 * p + 1]);
                bf(&mut x, &mut y, tw[m + p]);
                (a[2 * p], a[2 * p + 1]) = (x, y);
            }
        }
    }

    /// `rbr_smem_inverse`'s loops, exact integer arithmetic.
    fn smem_inverse(a: &mut [u64], itw: &[u64], c: [u64; 2], q: u64) {
        let n = a.len();
        let logn = n.trailing_zeros() as usize;
        let bf = |x: &mut u64, y: &mut u64, w: u64| {
            let (u, v) = (*x, *y);
            (*x, *y) = ((u + v) % q, mod_mul((u + q - v) % q, w, q));
        };
        let mut lt = 0;
        while lt + 2 <= logn {
            let (t, h) = (1usize << lt, n >> (lt + 1));
            for qd in 0..n / 4 {
                let g = qd >> lt;
                let e = (g << (lt + 2)) + (qd & (t - 1));
                let [mut x0, mut x1, mut x2, mut x3] = [a[e], a[e + t], a[e + 2 * t], a[e + 3 * t]];
                bf(&mut x0, &mut x1, itw[h + 2 * g]);
                bf(&mut x2, &mut x3, itw[h + 2 * g + 1]);
                if h == 2 {
                    let last = |u: u64, v: u64| {
                        (
                            mod_mul((u + v) % q, c[0], q),
                            mod_mul((u + q - v) % q, c[1], q),
                        )
                    };
                    (x0, x2) = last(x0, x2);
                    (x1, x3) = last(x1, x3);
                } else {
                    bf(&mut x0, &mut x2, itw[h / 2 + g]);
                    bf(&mut x1, &mut x3, itw[h / 2 + g]);
                }
                [a[e], a[e + t], a[e + 2 * t], a[e + 3 * t]] = [x0, x1, x2, x3];
            }
            lt += 2;
        }
        if lt < logn {
            let t = n / 2;
            for e in 0..t {
                let (u, v) = (a[e], a[e + t]);
                a[e] = mod_mul((u + v) % q, c[0], q);
                a[e + t] = mod_mul((u + q - v) % q, c[1], q);
            }
        }
    }

    /// The shared-memory transforms of `rns_blind_rotate_digits` (their stage order, index
    /// arithmetic and twiddle indices) are fhe-math's NTT, at odd and even log n.
    #[test]
    fn shared_memory_ntt_loops_match_the_reference() {
        let mut rnd = xorshift(0x7e57);
        for logn in 4..=13u32 {
            let n = 1usize << logn;
            let qs = ntt_primes(41, 2 * n as u64, 1, &[]).unwrap();
            let ps = ntt_primes(42, 2 * n as u64, 1, &qs).unwrap();
            let ring = RingContext::new(n, &qs, &ps, std::iter::once(0..1).collect()).unwrap();
            let t = ring.ntt(0);
            let q = qs[0];
            let a: Vec<u64> = (0..n).map(|_| rnd() % q).collect();
            let (mut want, mut got) = (a.clone(), a.clone());
            t.forward(&mut want);
            smem_forward(&mut got, t.forward_twiddles(), q);
            assert_eq!(got, want, "forward, log n = {logn}");
            t.inverse(&mut want);
            smem_inverse(
                &mut got,
                t.inverse_twiddles(),
                [t.n_inv(), t.inverse_final_twiddle()],
                q,
            );
            assert_eq!(got, a, "inverse, log n = {logn}");
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
            let dim = 3;
            let rows: Vec<RnsPoly> = (0..dim * 2 * g.digits())
                .map(|_| random(&mut rnd))
                .collect();
            let test = random(&mut rnd);
            let count = 3;
            let batch = RnsRotationBatch {
                dimension: dim,
                a: (0..count * dim)
                    .map(|i| if i == 4 { 0 } else { rnd() % (2 * n as u64) })
                    .collect(),
                b: (0..count).map(|_| rnd() % (2 * n as u64)).collect(),
            };
            let mut x = ring
                .zeros(Shape {
                    components: 1,
                    level: limbs - 1,
                    extended: false,
                })
                .unwrap();
            for s in 0..limbs {
                x.limb_mut(0, s)[1] = 1;
                ring.ntt(s).forward(x.limb_mut(0, s));
            }
            let tab = tables(&ring, &g, &x).unwrap();
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
