//! [`RnsBlindRotateBackend`]: batched blind rotation in an RNS ring at a full modulus `Q`
//! (CKKS bootstrapping by blind rotation, HEAP), with RGSW keys in an RNS gadget.
//!
//! Unlike [`super::BlindRotateBackend`] (one NTT prime, f64 FFT), the accumulator here is an RLWE
//! ciphertext over all limbs `0..=level` of the ring, and every operation is exact modular
//! arithmetic: any correct implementation gives the same words.
//!
//! # The computation
//!
//! The **RNS gadget** ([`RnsGadget`]) groups the limbs into digits `G_j` of consecutive limbs,
//! `Q_j = Π_{i∈G_j} q_i`. Digit `j` of `x ∈ Z_Q` is the centred `d_j = [x·(Q/Q_j)^{-1}]_{Q_j}`
//! (in `(−Q_j/2, Q_j/2]`, lifted to every limb as an integer), so `x ≡ Σ_j d_j·(Q/Q_j) (mod Q)`.
//!
//! A **key** is RGSW encryptions of bits, three for each pair of coefficients (key
//! unrolling): for pair `p` (coefficients `2p`, `2p + 1`) the bits
//! `μ_{p,0} = s_{2p}·s_{2p+1}`, `μ_{p,1} = s_{2p}·(1 − s_{2p+1})`, `μ_{p,2} = (1 − s_{2p})·s_{2p+1}`.
//! For key `k`, component `c ∈ {0, 1}` and digit `j`, row `((p·3 + k)·2 + c)·digits + j` is a
//! 2-component polynomial (NTT form, at the gadget's level) whose phase is
//! `e + μ_{p,k}·(Q/Q_j)·s^c`.
//!
//! **Blind rotation** of `(a, b)` (`a_i, b ∈ [0, 2N)`, `n` even) with the test polynomial `v`
//! (2 components, coefficient form): `acc ← X^{−b}·v`, then for each pair `p`
//! `acc ← acc + Σ_k (X^{e_k} − 1)·Σ_{c,j} d_j(acc_c) ⊙ row(p, k, c, j)` with
//! `(e_0, e_1, e_2) = (a_{2p} + a_{2p+1}, a_{2p}, a_{2p+1}) mod 2N`: exactly one `μ_{p,k}` is 1
//! unless both bits are 0, so the phase is multiplied by `X^{a_{2p}s_{2p} + a_{2p+1}s_{2p+1}}`
//! — two CMuxes for one decomposition of `acc` (a pair with `a_{2p} = a_{2p+1} = 0` changes
//! nothing). The result, in coefficient form, is returned per sample.
//!
//! **Packing** ([`pack_lwes`], Chen–Dai–Kim–Song `PackLWEs`) merges `M = 2^ℓ` such
//! accumulators into one polynomial whose coefficient `j·N/M` is `M` times accumulator `j`'s
//! constant coefficient, level by level: with `P_1[r]` the accumulators, for `L = 2, 4, …, M`
//! and `r < M/L`, `P_L[r] = e + X^{N/L}·o + Switch_{L+1}(τ_{L+1}(e − X^{N/L}·o))` for
//! `e = P_{L/2}[r]`, `o = P_{L/2}[r + M/L]` (`τ_g: X ↦ X^g`; the switch goes back to `s` with the
//! gadget rows of `τ_g(s)`). [`RnsBlindRotateBackend::rns_blind_rotate_packed`] runs the blind
//! rotations and the packing in one call, so a device can keep the accumulators.

use super::RingBackend;
use crate::error::{Error, Result};
use crate::poly::{RnsPoly, Shape};
use crate::ring::RingContext;
use rayon::prelude::*;
use std::ops::Range;

/// The host tables of the RNS digit decomposition at one level of a ring (see the module doc).
#[derive(Clone, Debug)]
pub struct RnsGadget {
    groups: Vec<Range<usize>>,
    /// Per limb: `(Q/Q_j)^{-1} mod q_i` for the limb's group `j`.
    inv_hat: Vec<u64>,
    /// Per limb: `(Q_j/q_i)^{-1} mod q_i`.
    crt_inv: Vec<u64>,
    /// Per limb: `Q_j/q_i`.
    crt_hat: Vec<u128>,
    /// Per group: `Q_j`.
    q_group: Vec<u128>,
    /// `[j][i]`: the gadget value `Q/Q_j mod q_i`.
    gadget: Vec<Vec<u64>>,
    level: usize,
}

impl RnsGadget {
    /// The gadget over limbs `0..=level` of `ring`, digits of `digit_limbs` limbs (the last
    /// may hold fewer). Errors: `level` above the ring's top, `digit_limbs == 0`, or a digit
    /// modulus of 126 bits or more.
    pub fn new(ring: &RingContext, level: usize, digit_limbs: usize) -> Result<Self> {
        if level > ring.max_level() || digit_limbs == 0 {
            return Err(Error::Unsupported {
                what: format!(
                    "RNS gadget at level {level} with {digit_limbs} limbs a digit (ring top level {})",
                    ring.max_level()
                ),
            });
        }
        let limbs = level + 1;
        let groups: Vec<Range<usize>> = (0..limbs)
            .step_by(digit_limbs)
            .map(|a| a..(a + digit_limbs).min(limbs))
            .collect();
        let q = |i: usize| ring.modulus(i);
        let mut inv_hat = vec![0; limbs];
        let mut crt_inv = vec![0; limbs];
        let mut crt_hat = vec![0u128; limbs];
        let mut q_group = Vec::new();
        let mut gadget = Vec::new();
        for g in &groups {
            let bits: u32 = g.clone().map(|i| 64 - q(i).value().leading_zeros()).sum();
            if bits >= 126 {
                return Err(Error::Unsupported {
                    what: format!("an RNS gadget digit of {bits} bits (at most 125)"),
                });
            }
            let qj: u128 = g.clone().map(|i| q(i).value() as u128).product();
            q_group.push(qj);
            let mut row = vec![0u64; limbs];
            for i in g.clone() {
                let qi = q(i);
                // Q/Q_j mod q_i: the product of the limbs outside the group.
                let hat = (0..limbs)
                    .filter(|k| !g.contains(k))
                    .fold(1u64, |acc, k| qi.mul(acc, qi.reduce(q(k).value())));
                row[i] = hat;
                inv_hat[i] = qi.inv(hat)?;
                let inner = g
                    .clone()
                    .filter(|&k| k != i)
                    .fold(1u64, |acc, k| qi.mul(acc, qi.reduce(q(k).value())));
                crt_inv[i] = qi.inv(inner)?;
                crt_hat[i] = qj / qi.value() as u128;
            }
            gadget.push(row);
        }
        Ok(RnsGadget {
            groups,
            inv_hat,
            crt_inv,
            crt_hat,
            q_group,
            gadget,
            level,
        })
    }

    /// Number of digits.
    pub fn digits(&self) -> usize {
        self.groups.len()
    }

    /// The limbs of digit `j`.
    pub fn group(&self, j: usize) -> Range<usize> {
        self.groups[j].clone()
    }

    /// The digit a limb belongs to.
    pub fn group_of(&self, limb: usize) -> usize {
        self.groups
            .iter()
            .position(|g| g.contains(&limb))
            .unwrap_or(self.groups.len())
    }

    /// The level the gadget decomposes at.
    pub fn level(&self) -> usize {
        self.level
    }

    /// The residues of the gadget value `Q/Q_j`, one per limb `0..=level`.
    pub fn value(&self, j: usize) -> &[u64] {
        &self.gadget[j]
    }

    /// `Q_j`.
    pub fn group_modulus(&self, j: usize) -> u128 {
        self.q_group[j]
    }

    /// `(Q/Q_j)^{-1} mod q_i` for limb `i` of group `j`.
    pub fn inv_hat(&self, limb: usize) -> u64 {
        self.inv_hat[limb]
    }

    /// `(Q_j/q_i)^{-1} mod q_i` for limb `i` of group `j`.
    pub fn crt_inv(&self, limb: usize) -> u64 {
        self.crt_inv[limb]
    }

    /// `Q_j/q_i` for limb `i` of group `j`.
    pub fn crt_hat(&self, limb: usize) -> u128 {
        self.crt_hat[limb]
    }

    /// Digit `j` of component `c` of `x` (coefficient form): centred integers
    /// `[x·(Q/Q_j)^{-1}]_{Q_j}`, one per coefficient.
    pub fn digit(&self, ring: &RingContext, x: &RnsPoly, c: usize, j: usize) -> Vec<i128> {
        let qj = self.q_group[j];
        let mut acc = vec![0u128; ring.n()];
        for i in self.groups[j].clone() {
            let qi = ring.modulus(i);
            let (ih, ci, h) = (self.inv_hat[i], self.crt_inv[i], self.crt_hat[i]);
            for (a, &v) in acc.iter_mut().zip(x.limb(c, i)) {
                let t = qi.mul(qi.mul(v, ih), ci);
                // Both terms are below Q_j: one conditional subtraction reduces the sum.
                let s = *a + t as u128 * h;
                *a = if s >= qj { s - qj } else { s };
            }
        }
        acc.into_iter()
            .map(|v| {
                if v > qj / 2 {
                    v as i128 - qj as i128
                } else {
                    v as i128
                }
            })
            .collect()
    }
}

/// A batch of blind-rotation inputs: `count` samples of dimension `n`, already switched to
/// `2N` (`a` row-major, `a[e·n + i]`; `b[e]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RnsRotationBatch {
    /// The LWE dimension.
    pub dimension: usize,
    /// The masks, `count·dimension` exponents in `[0, 2N)`.
    pub a: Vec<u64>,
    /// The bodies, `count` exponents in `[0, 2N)`.
    pub b: Vec<u64>,
}

impl RnsRotationBatch {
    /// Number of samples.
    pub fn len(&self) -> usize {
        self.b.len()
    }

    /// Whether the batch is empty.
    pub fn is_empty(&self) -> bool {
        self.b.is_empty()
    }
}

/// Keys of an unrolled blind-rotation step: one RGSW encryption for each of the three bits
/// `μ_{p,k}` of a pair of LWE coefficients (see the module doc).
pub const KEYS_PER_PAIR: usize = 3;

/// Checks a blind-rotation call (see [`RnsBlindRotateBackend::rns_blind_rotate`]): an even
/// dimension, key rows `(dimension/2)·3·2·digits`, every exponent below `2N`, the test polynomial of 2 components at the
/// gadget's level. Both backends run it first, so they reject the same inputs.
pub fn check_rns_blind_rotate_args<B: RingBackend>(
    be: &B,
    gadget: &RnsGadget,
    key: &[&B::Poly],
    test: &RnsPoly,
    batch: &RnsRotationBatch,
) -> Result<()> {
    let two_n = 2 * be.ring().n() as u64;
    let bad = |what: String| Err(Error::ShapeMismatch { what });
    if !batch.dimension.is_multiple_of(2) {
        return bad(format!(
            "RNS blind rotation: dimension {} is odd (the key covers pairs of coefficients)",
            batch.dimension
        ));
    }
    let rows = batch.dimension / 2 * KEYS_PER_PAIR * 2 * gadget.digits();
    if key.len() != rows {
        return bad(format!(
            "RNS blind rotation: {} key rows, expected {rows} (dimension {} / 2 × 3 keys × 2 × {} digits)",
            key.len(),
            batch.dimension,
            gadget.digits()
        ));
    }
    if batch.a.len() != batch.len() * batch.dimension {
        return bad(format!(
            "RNS blind rotation: {} mask exponents for {} samples of dimension {}",
            batch.a.len(),
            batch.len(),
            batch.dimension
        ));
    }
    if let Some(x) = batch.a.iter().chain(&batch.b).find(|&&x| x >= two_n) {
        return bad(format!(
            "RNS blind rotation: exponent {x} is not below 2N = {two_n}"
        ));
    }
    let want = Shape {
        components: 2,
        level: gadget.level(),
        extended: false,
    };
    if test.shape() != want || test.n() != be.ring().n() {
        return bad(format!(
            "RNS blind rotation: test polynomial of shape {:?}, expected {want:?}",
            test.shape()
        ));
    }
    for (r, row) in key.iter().enumerate() {
        if be.shape(row) != want {
            return bad(format!(
                "RNS blind rotation: key row {r} of shape {:?}, expected {want:?}",
                be.shape(row)
            ));
        }
    }
    Ok(())
}

/// The automorphism keys of a packing: for each Galois element `g = L + 1` a level of
/// [`pack_lwes`] needs, its gadget rows (`digits` of them; row `j` a 2-component polynomial,
/// NTT form, at the gadget's level, with phase `e_j + (Q/Q_j)·τ_g(s)` under `s`).
pub type PackKeys<'a, P> = [(usize, Vec<&'a P>)];

/// Batched blind rotation at the full modulus of an RNS ring (the module doc gives the
/// computation). The default body is the reference (host monomials and digits, the backend's
/// NTTs and pointwise products, one sample after another); a backend may override it with
/// fused device kernels and must give the same words. The reference runs the samples on the
/// rayon pool.
pub trait RnsBlindRotateBackend: RingBackend {
    /// Blind-rotates every sample of `batch` with the test polynomial `test` (2 components,
    /// coefficient form, at the gadget's level) through the RGSW rows `key` (row
    /// `((p·3 + k)·2 + c)·digits + j`, NTT form): the accumulators `X^{−b}·v·Π_i CMux_i`,
    /// coefficient form, one per sample.
    ///
    /// Errors: [`check_rns_blind_rotate_args`]; backend failures.
    fn rns_blind_rotate(
        &self,
        gadget: &RnsGadget,
        key: &[&Self::Poly],
        test: &RnsPoly,
        batch: &RnsRotationBatch,
    ) -> Result<Vec<RnsPoly>> {
        check_rns_blind_rotate_args(self, gadget, key, test, batch)?;
        (0..batch.len())
            .into_par_iter()
            .map(|e| {
                let a = &batch.a[e * batch.dimension..(e + 1) * batch.dimension];
                blind_rotate_one(self, gadget, key, test, a, batch.b[e])
            })
            .collect()
    }

    /// [`RnsBlindRotateBackend::rns_blind_rotate`] of a batch of `2^ℓ ≤ N` samples, then
    /// [`pack_lwes`] of the accumulators in batch order with `pack`: the packed polynomial,
    /// coefficient form. A backend may keep the accumulators on its device between the two;
    /// the words are the same.
    ///
    /// Errors: [`check_rns_blind_rotate_args`], [`pack_lwes`]'s, backend failures.
    fn rns_blind_rotate_packed(
        &self,
        gadget: &RnsGadget,
        key: &[&Self::Poly],
        test: &RnsPoly,
        batch: &RnsRotationBatch,
        pack: &PackKeys<'_, Self::Poly>,
    ) -> Result<RnsPoly> {
        check_pack_args(self, gadget, batch.len(), pack)?;
        let accs = self.rns_blind_rotate(gadget, key, test, batch)?;
        pack_lwes(self, gadget, accs, pack)
    }
}

/// Checks the inputs of [`pack_lwes_from`]: [`check_pack_levels`] for their count, and every
/// input of the ring's degree with 2 components at the gadget's level, not extended.
pub fn check_pack_inputs<B: RingBackend>(
    be: &B,
    gadget: &RnsGadget,
    accs: &[RnsPoly],
    first: usize,
    pack: &PackKeys<'_, B::Poly>,
) -> Result<()> {
    check_pack_levels(be, gadget, first, accs.len(), pack)?;
    let want = Shape {
        components: 2,
        level: gadget.level(),
        extended: false,
    };
    match accs
        .iter()
        .position(|p| p.shape() != want || p.n() != be.ring().n())
    {
        Some(i) => Err(Error::ShapeMismatch {
            what: format!(
                "packing: input {i} of shape {:?} and degree {}, expected {want:?} and {}",
                accs[i].shape(),
                accs[i].n(),
                be.ring().n()
            ),
        }),
        None => Ok(()),
    }
}

/// The rows of Galois element `g` in `pack`, or a shape error naming it.
pub fn pack_rows<'a, 'b, P>(pack: &'b PackKeys<'a, P>, g: usize) -> Result<&'b [&'a P]> {
    pack.iter()
        .find(|(h, _)| *h == g)
        .map(|(_, rows)| rows.as_slice())
        .ok_or_else(|| Error::ShapeMismatch {
            what: format!("packing: no automorphism key for the Galois element {g}"),
        })
}

/// Checks a packing of `count` polynomials: `count` a power of two up to `N`, and for every
/// level `L = 2, 4, …, count` the key of `L + 1` with `digits` rows of the gadget's shape.
pub fn check_pack_args<B: RingBackend>(
    be: &B,
    gadget: &RnsGadget,
    count: usize,
    pack: &PackKeys<'_, B::Poly>,
) -> Result<()> {
    check_pack_levels(be, gadget, 1, count, pack)
}

/// Checks the levels `L = 2·first, 4·first, …, first·count` of a packing (see
/// [`pack_lwes_from`]): `first` and `count` powers of two, `first·count ≤ N`, and for every
/// level the key of `L + 1` with `digits` rows of the gadget's shape.
pub fn check_pack_levels<B: RingBackend>(
    be: &B,
    gadget: &RnsGadget,
    first: usize,
    count: usize,
    pack: &PackKeys<'_, B::Poly>,
) -> Result<()> {
    let n = be.ring().n();
    if !count.is_power_of_two() || !first.is_power_of_two() || first.saturating_mul(count) > n {
        return Err(Error::ShapeMismatch {
            what: format!(
                "packing: {count} polynomials of {first} packed inputs each, not powers of two up to N = {n} in all"
            ),
        });
    }
    let want = Shape {
        components: 2,
        level: gadget.level(),
        extended: false,
    };
    let mut len = 2 * first;
    while len <= first * count {
        let rows = pack_rows(pack, len + 1)?;
        if rows.len() != gadget.digits() || rows.iter().any(|r| be.shape(r) != want) {
            return Err(Error::ShapeMismatch {
                what: format!(
                    "packing: the key of {} has {} rows, expected {} of shape {want:?}",
                    len + 1,
                    rows.len(),
                    gadget.digits()
                ),
            });
        }
        len *= 2;
    }
    Ok(())
}

/// The digits `d_j(x_c)` of component `c` of the host polynomial `x` (coefficient form, at the
/// gadget's level), lifted exactly and transformed: one NTT-form polynomial a digit.
pub fn gadget_digits_ntt<B: RingBackend>(
    be: &B,
    gadget: &RnsGadget,
    x: &RnsPoly,
    c: usize,
) -> Result<Vec<B::Poly>> {
    let ring = be.ring().clone();
    (0..gadget.digits())
        .map(|j| {
            let mut dp = be.upload_lifted(&gadget.digit(&ring, x, c, j), gadget.level())?;
            be.ntt(&mut dp)?;
            Ok(dp)
        })
        .collect()
}

/// `acc += Σ_j d_j(x_c) ⊙ rows_j` (NTT form): [`gadget_digits_ntt`] multiplied by the rows
/// (one per digit).
pub fn gadget_product_acc<B: RingBackend>(
    be: &B,
    gadget: &RnsGadget,
    x: &RnsPoly,
    c: usize,
    rows: &[&B::Poly],
    acc: &mut B::Poly,
) -> Result<()> {
    for (row, dp) in rows.iter().zip(gadget_digits_ntt(be, gadget, x, c)?) {
        be.mul_plain_acc(acc, row, &dp)?;
    }
    Ok(())
}

/// `(x_0, 0) + Σ_j d_j(x_1) ⊙ rows_j`: component 1 of `x` (2 components, coefficient form, at
/// the gadget's level) switched by gadget rows; coefficient form, on the host.
pub fn switch_component_one<B: RingBackend>(
    be: &B,
    gadget: &RnsGadget,
    x: &RnsPoly,
    rows: &[&B::Poly],
) -> Result<RnsPoly> {
    let ring = be.ring().clone();
    let mut prod = be.zeros(Shape {
        components: 2,
        level: gadget.level(),
        extended: false,
    })?;
    gadget_product_acc(be, gadget, x, 1, rows, &mut prod)?;
    be.intt(&mut prod)?;
    let mut out = be.download(&prod)?;
    let mut x0 = x.clone();
    for s in x0.active_slots() {
        x0.limb_mut(1, s).iter_mut().for_each(|w| *w = 0);
    }
    add_assign(&ring, &mut out, &x0);
    Ok(out)
}

/// `Switch_g(τ_g(x))`: the automorphism `X ↦ X^g` of `x` (coefficient form) switched back to
/// `s` with the rows of `τ_g(s)`.
pub fn automorphism_switch<B: RingBackend>(
    be: &B,
    gadget: &RnsGadget,
    x: &RnsPoly,
    g: usize,
    rows: &[&B::Poly],
) -> Result<RnsPoly> {
    let t = move_coefficients(be.ring(), x, |i| i * g);
    switch_component_one(be, gadget, &t, rows)
}

/// `PackLWEs` of `accs` (coefficient form, 2 components at the gadget's level, `2^ℓ ≤ N` of
/// them) level by level as the module doc states, the pairs of a level on the rayon pool: the
/// packed polynomial, coefficient form. It is [`pack_lwes_from`] with `first = 1`.
///
/// Errors: [`check_pack_args`], backend failures.
pub fn pack_lwes<B: RingBackend>(
    be: &B,
    gadget: &RnsGadget,
    accs: Vec<RnsPoly>,
    pack: &PackKeys<'_, B::Poly>,
) -> Result<RnsPoly> {
    check_pack_args(be, gadget, accs.len(), pack)?;
    merge_levels(be, gadget, accs, 1, pack)
}

/// `PackLWEs` continued from level `2·first`: `parts[r]` (`r < g`, `g` a power of two) is the
/// pack `P_first[r]` of the `first` accumulators `r, r + g, r + 2g, …` of a batch of
/// `M = first·g` (the samples congruent to `r` mod `g`, packed in that order by [`pack_lwes`]
/// or [`RnsBlindRotateBackend::rns_blind_rotate_packed`]); the levels `L = 2·first, …, M` merge
/// them as [`pack_lwes`] merges its levels, so the result is [`pack_lwes`] of the whole batch,
/// word for word. Each part's packing can run where its accumulators are (one device each).
///
/// Errors: [`check_pack_inputs`], backend failures.
pub fn pack_lwes_from<B: RingBackend>(
    be: &B,
    gadget: &RnsGadget,
    parts: Vec<RnsPoly>,
    first: usize,
    pack: &PackKeys<'_, B::Poly>,
) -> Result<RnsPoly> {
    check_pack_inputs(be, gadget, &parts, first, pack)?;
    merge_levels(be, gadget, parts, first, pack)
}

/// The levels `L = 2·first, …, first·p.len()` of `PackLWEs` over `p` (arguments checked):
/// `P_L[r] = e + X^{N/L}·o + Switch_{L+1}(τ_{L+1}(e − X^{N/L}·o))`.
fn merge_levels<B: RingBackend>(
    be: &B,
    gadget: &RnsGadget,
    mut p: Vec<RnsPoly>,
    first: usize,
    pack: &PackKeys<'_, B::Poly>,
) -> Result<RnsPoly> {
    let ring = be.ring().clone();
    let m = p.len();
    let mut len = 2;
    while len <= m {
        let level = len * first;
        let rows = pack_rows(pack, level + 1)?;
        let half = m / len;
        p = (0..half)
            .into_par_iter()
            .map(|r| {
                let xo = mul_monomial(&ring, &p[r + half], ring.n() / level);
                let mut sum = p[r].clone();
                add_assign(&ring, &mut sum, &xo);
                let mut diff = p[r].clone();
                sub_assign(&ring, &mut diff, &xo);
                let t = automorphism_switch(be, gadget, &diff, level + 1, rows)?;
                add_assign(&ring, &mut sum, &t);
                Ok(sum)
            })
            .collect::<Result<Vec<_>>>()?;
        len *= 2;
    }
    Ok(p.pop().expect("one polynomial left"))
}

/// The reference blind rotation of one sample (`a`, `b`), arguments checked: per pair of
/// coefficients one decomposition of `acc`, three key products, each multiplied by its
/// `X^{e_k} − 1`.
fn blind_rotate_one<B: RingBackend>(
    be: &B,
    gadget: &RnsGadget,
    key: &[&B::Poly],
    test: &RnsPoly,
    a: &[u64],
    b: u64,
) -> Result<RnsPoly> {
    let ring = be.ring().clone();
    let two_n = 2 * ring.n() as u64;
    let digits = gadget.digits();
    let shape = Shape {
        components: 2,
        level: gadget.level(),
        extended: false,
    };
    let mut acc = mul_monomial(&ring, test, ((two_n - b) % two_n) as usize);
    for (p, pair) in a.chunks_exact(2).enumerate() {
        let exps = [(pair[0] + pair[1]) % two_n, pair[0], pair[1]];
        if exps.iter().all(|&e| e == 0) {
            continue;
        }
        let ds = [
            gadget_digits_ntt(be, gadget, &acc, 0)?,
            gadget_digits_ntt(be, gadget, &acc, 1)?,
        ];
        for (k, &e) in exps.iter().enumerate() {
            if e == 0 {
                continue;
            }
            let mut prod = be.zeros(shape)?;
            for (c, dc) in ds.iter().enumerate() {
                let first = ((p * KEYS_PER_PAIR + k) * 2 + c) * digits;
                for (row, dp) in key[first..first + digits].iter().zip(dc) {
                    be.mul_plain_acc(&mut prod, row, dp)?;
                }
            }
            be.intt(&mut prod)?;
            let prod = be.download(&prod)?;
            add_assign(&ring, &mut acc, &mul_monomial(&ring, &prod, e as usize));
            sub_assign(&ring, &mut acc, &prod);
        }
    }
    Ok(acc)
}

/// `X^k · p` for every component and active limb (coefficient form), `k ∈ [0, 2N)`,
/// `X^N = −1`.
pub fn mul_monomial(ring: &RingContext, p: &RnsPoly, k: usize) -> RnsPoly {
    move_coefficients(ring, p, |i| i + k)
}

/// Moves coefficient `i` of every component and active limb to `X^{to(i)}`, reduced with
/// `X^N = −1` (`to` injective mod `N` up to sign, as for monomials and automorphisms).
pub fn move_coefficients(ring: &RingContext, p: &RnsPoly, to: impl Fn(usize) -> usize) -> RnsPoly {
    let n = ring.n();
    let mut out = p.clone();
    for c in 0..p.components() {
        for s in p.active_slots() {
            let q = ring.modulus(s);
            let src = p.limb(c, s);
            let dst = out.limb_mut(c, s);
            for (i, &v) in src.iter().enumerate() {
                let j = to(i) % (2 * n);
                if j < n {
                    dst[j] = v;
                } else {
                    dst[j - n] = q.neg(v);
                }
            }
        }
    }
    out
}

/// `a += b` over `a`'s components and active limbs (coefficient or NTT form alike).
pub fn add_assign(ring: &RingContext, a: &mut RnsPoly, b: &RnsPoly) {
    combine(ring, a, b, false);
}

/// `a −= b` over `a`'s components and active limbs.
pub fn sub_assign(ring: &RingContext, a: &mut RnsPoly, b: &RnsPoly) {
    combine(ring, a, b, true);
}

fn combine(ring: &RingContext, a: &mut RnsPoly, b: &RnsPoly, subtract: bool) {
    for c in 0..a.components() {
        for s in a.active_slots() {
            let q = ring.modulus(s);
            let src = b.limb(c, s);
            let dst = &mut a.limb_mut(c, s)[..];
            for (x, &y) in dst.iter_mut().zip(src.iter()) {
                *x = if subtract { q.sub(*x, y) } else { q.add(*x, y) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::CpuBackend;

    /// A small ring of 4 limbs of 30 bits (N = 16), gadget of 2 digits of 2 limbs.
    /// Accumulators and key rows of the test ring: two components over its four primes.
    const ACC_SHAPE: Shape = Shape {
        components: 2,
        level: 3,
        extended: false,
    };

    fn setup() -> (CpuBackend, RnsGadget) {
        let qs = crate::primes::ntt_primes(30, 32, 4, &[]).unwrap();
        let ps = crate::primes::ntt_primes(31, 32, 1, &qs).unwrap();
        let ring = RingContext::new(16, &qs, &ps, vec![0..2, 2..4]).unwrap();
        let g = RnsGadget::new(&ring, 3, 2).unwrap();
        (CpuBackend::new(ring), g)
    }

    #[test]
    fn digits_recompose_to_the_input() {
        let (be, g) = setup();
        let ring = be.ring().clone();
        let mut x = ring
            .zeros(Shape {
                components: 1,
                level: 3,
                extended: false,
            })
            .unwrap();
        for s in 0..4 {
            let q = ring.modulus(s);
            for (k, w) in x.limb_mut(0, s).iter_mut().enumerate() {
                *w = q.reduce((k as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 3);
            }
        }
        let ds: Vec<Vec<i128>> = (0..g.digits()).map(|j| g.digit(&ring, &x, 0, j)).collect();
        for s in 0..4 {
            let q = ring.modulus(s);
            for (k, &want) in x.limb(0, s).iter().enumerate() {
                let v = ds.iter().enumerate().fold(0u64, |acc, (j, d)| {
                    let d = d[k].rem_euclid(q.value() as i128) as u64;
                    q.add(acc, q.mul(d, g.value(j)[s]))
                });
                assert_eq!(v, want, "limb {s} coefficient {k}");
            }
        }
        for (j, d) in ds.iter().enumerate() {
            let half = (g.group_modulus(j) / 2) as i128;
            assert!(d.iter().all(|&v| -half <= v && v <= half));
        }
    }

    /// With noiseless trivial RGSW rows of bits `μ_i` (`μ_i·(Q/Q_j)` in component `c`, nothing
    /// else) every CMux is exact: the accumulator is `X^{−b + Σ a_i μ_i}·v`, word for word.
    #[test]
    fn trivial_keys_rotate_exactly() {
        let (be, g) = setup();
        let ring = be.ring().clone();
        let shape = ACC_SHAPE;
        let dim = 6;
        let bits = [true, false, true, true, false, false];
        // μ_{p,k} for pair p and key k (module doc).
        let mu = |p: usize, k: usize| {
            let (x, y) = (bits[2 * p], bits[2 * p + 1]);
            [x && y, x && !y, !x && y][k]
        };
        let rows: Vec<_> = (0..dim / 2 * KEYS_PER_PAIR * 2 * g.digits())
            .map(|r| {
                let (pk, c, j) = (r / (2 * g.digits()), (r / g.digits()) % 2, r % g.digits());
                let mut row = be.zeros(shape).unwrap();
                if mu(pk / KEYS_PER_PAIR, pk % KEYS_PER_PAIR) {
                    be.add_scalar_assign(&mut row, c, g.value(j)).unwrap();
                }
                row
            })
            .collect();
        let key: Vec<&_> = rows.iter().collect();
        let mut test = ring.zeros(shape).unwrap();
        for c in 0..2 {
            for s in 0..4 {
                let q = ring.modulus(s);
                for (k, w) in test.limb_mut(c, s).iter_mut().enumerate() {
                    *w = q.reduce((k as u64 * 7 + c as u64 * 3 + 1) << 28);
                }
            }
        }
        let batch = RnsRotationBatch {
            dimension: dim,
            a: vec![3, 0, 31, 17, 9, 1, 2, 3, 4, 5, 0, 0, 0, 9, 12, 0, 8, 30],
            b: vec![7, 30, 0],
        };
        let got = be.rns_blind_rotate(&g, &key, &test, &batch).unwrap();
        for (e, acc) in got.iter().enumerate() {
            let a = &batch.a[e * dim..(e + 1) * dim];
            let shift: u64 = a.iter().zip(bits).filter(|(_, b)| *b).map(|(x, _)| x).sum();
            let want = mul_monomial(&ring, &test, ((shift + 64 - batch.b[e]) % 32) as usize);
            assert!(acc.raw() == want.raw(), "sample {e}");
        }
    }

    #[test]
    fn bad_arguments_are_refused() {
        let (be, g) = setup();
        let ring = be.ring().clone();
        let shape = ACC_SHAPE;
        let row = be.zeros(shape).unwrap();
        let test = ring.zeros(shape).unwrap();
        let key: Vec<&_> = (0..12).map(|_| &row).collect();
        let ok = RnsRotationBatch {
            dimension: 2,
            a: vec![3, 1],
            b: vec![5],
        };
        assert!(be.rns_blind_rotate(&g, &key, &test, &ok).is_ok());
        let far = RnsRotationBatch {
            b: vec![32],
            ..ok.clone()
        };
        assert!(be.rns_blind_rotate(&g, &key, &test, &far).is_err());
        assert!(be.rns_blind_rotate(&g, &key[..11], &test, &ok).is_err());
        let odd = RnsRotationBatch {
            dimension: 1,
            a: vec![3],
            b: vec![5],
        };
        assert!(be.rns_blind_rotate(&g, &key[..6], &test, &odd).is_err());
        let short = RnsRotationBatch {
            a: vec![],
            ..ok.clone()
        };
        assert!(be.rns_blind_rotate(&g, &key, &test, &short).is_err());
    }

    /// A packed call needs a power-of-two batch up to N and, for each level, the key of
    /// `2^ℓ + 1` with one row a digit of the gadget's shape; one sample needs no key.
    #[test]
    fn bad_packing_arguments_are_refused() {
        let (be, g) = setup();
        let ring = be.ring().clone();
        let row = be.zeros(ACC_SHAPE).unwrap();
        let small = be
            .zeros(Shape {
                components: 2,
                level: 2,
                extended: false,
            })
            .unwrap();
        let test = ring.zeros(ACC_SHAPE).unwrap();
        let key: Vec<&_> = (0..12).map(|_| &row).collect();
        let batch = |count: usize| RnsRotationBatch {
            dimension: 2,
            a: vec![3; 2 * count],
            b: vec![5; count],
        };
        let rows = || vec![&row, &row];
        let full: Vec<(usize, Vec<&RnsPoly>)> = vec![(3, rows()), (5, rows())];
        assert!(
            be.rns_blind_rotate_packed(&g, &key, &test, &batch(4), &full)
                .is_ok()
        );
        assert!(
            be.rns_blind_rotate_packed(&g, &key, &test, &batch(1), &[])
                .is_ok()
        );
        for count in [0, 3, 32] {
            assert!(
                be.rns_blind_rotate_packed(&g, &key, &test, &batch(count), &full)
                    .is_err(),
                "{count} samples"
            );
        }
        let missing = vec![(3, rows())];
        assert!(
            be.rns_blind_rotate_packed(&g, &key, &test, &batch(4), &missing)
                .is_err()
        );
        let one_row = vec![(3, vec![&row]), (5, rows())];
        assert!(
            be.rns_blind_rotate_packed(&g, &key, &test, &batch(4), &one_row)
                .is_err()
        );
        let wrong_shape = vec![(3, rows()), (5, vec![&row, &small])];
        assert!(
            be.rns_blind_rotate_packed(&g, &key, &test, &batch(4), &wrong_shape)
                .is_err()
        );
    }

    /// `pack_lwes_from` of the packs of the strided parts (samples `≡ r mod g`) gives
    /// `pack_lwes`'s words of the whole batch, for `g = 1, 2, 4`; and it refuses inputs of
    /// another count, shape or degree.
    #[test]
    fn packing_in_strided_parts_is_pack_lwes() {
        let (be, g) = setup();
        let ring = be.ring().clone();
        let mut rnd = 0x9e37_79b9_u64;
        let mut random = |shape: Shape| {
            let mut p = ring.zeros(shape).unwrap();
            for c in 0..shape.components {
                for s in 0..=shape.level {
                    let q = ring.modulus(s).value();
                    for w in p.limb_mut(c, s) {
                        rnd ^= rnd << 13;
                        rnd ^= rnd >> 7;
                        rnd ^= rnd << 17;
                        *w = rnd % q;
                    }
                }
            }
            p
        };
        let accs: Vec<RnsPoly> = (0..8).map(|_| random(ACC_SHAPE)).collect();
        let rows: Vec<_> = (0..2)
            .map(|_| be.upload(&random(ACC_SHAPE)).unwrap())
            .collect();
        let pack: Vec<(usize, Vec<&RnsPoly>)> = [3, 5, 9]
            .into_iter()
            .map(|gal| (gal, rows.iter().collect()))
            .collect();
        let want = pack_lwes(&be, &g, accs.clone(), &pack).unwrap();
        for parts in [1, 2, 4] {
            let packs: Vec<RnsPoly> = (0..parts)
                .map(|r| {
                    let mine = accs.iter().skip(r).step_by(parts).cloned().collect();
                    pack_lwes(&be, &g, mine, &pack).unwrap()
                })
                .collect();
            let got = pack_lwes_from(&be, &g, packs, 8 / parts, &pack).unwrap();
            assert!(got.raw() == want.raw(), "{parts} parts");
        }
        let packs = || accs[..4].to_vec();
        assert!(pack_lwes_from(&be, &g, packs()[..3].to_vec(), 2, &pack).is_err());
        assert!(pack_lwes_from(&be, &g, packs(), 3, &pack).is_err());
        assert!(pack_lwes_from(&be, &g, packs(), 16, &pack).is_err());
        let mut short = packs();
        short[2] = random(Shape {
            components: 2,
            level: 2,
            extended: false,
        });
        assert!(pack_lwes_from(&be, &g, short, 2, &pack).is_err());
        let mut one = packs();
        one[1] = random(Shape {
            components: 1,
            ..ACC_SHAPE
        });
        assert!(pack_lwes_from(&be, &g, one, 2, &pack).is_err());
    }
}
