//! The RNS gadget of the ring keys (no special prime) and the gadget product over a backend.
//!
//! Digits are the groups `G_j` of `digit_limbs` consecutive limbs of `Q = Q_BR`, `Q_j = Π_{i∈G_j}
//! q_i`. The digit of `x` is the centred `d_j = [x·(Q/Q_j)^{-1}]_{Q_j}` (its base extension to the
//! other limbs is exact: it is lifted as an integer), and `x ≡ Σ_j d_j·(Q/Q_j) (mod Q)`. A key
//! row `j` encrypting `μ` is an RLWE encryption of zero under `s` plus `μ·(Q/Q_j)` in one
//! component; `Σ_j d_j·row_j` then has phase `x·μ + Σ_j d_j·e_j`.

use crate::error::Result;
use crate::host::residue_i128;
use fhe_math::backend::RingBackend;
use fhe_math::poly::{RnsPoly, Shape};
use fhe_math::ring::RingContext;
use fhe_math::sampler::{Domain, Seed};
use std::ops::Range;

/// The host tables of the RNS digit decomposition at the top level of a ring.
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
    /// may hold fewer). Every digit must fit in 126 bits.
    pub fn new(ring: &RingContext, level: usize, digit_limbs: usize) -> Result<Self> {
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
            let qj: u128 = g.clone().map(|i| q(i).value() as u128).product();
            q_group.push(qj);
            let mut row = vec![0u64; limbs];
            for i in 0..limbs {
                if !g.contains(&i) {
                    continue;
                }
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

    /// The level the gadget decomposes at.
    pub fn level(&self) -> usize {
        self.level
    }

    /// The residues of the gadget value `Q/Q_j`, one per limb `0..=level`.
    pub fn value(&self, j: usize) -> &[u64] {
        &self.gadget[j]
    }

    /// Digit `j` of component `c` of `x` (coefficient form): centred integers
    /// `[x·(Q/Q_j)^{-1}]_{Q_j}`, one per coefficient.
    pub fn digit(&self, ring: &RingContext, x: &RnsPoly, c: usize, j: usize) -> Vec<i128> {
        let qj = self.q_group[j];
        let n = ring.n();
        let mut acc = vec![0u128; n];
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

/// A set of key rows, one 2-component RLWE ciphertext (NTT form, at the gadget's level) per
/// digit: row `j` has phase `e_j + μ·(Q/Q_j)·s^c` for the component `c` it decomposes.
pub struct GadgetRows<B: RingBackend> {
    /// The rows.
    pub rows: Vec<B::Poly>,
}

/// What a key row adds to the encryption of zero.
pub enum RowMessage<'a, B: RingBackend> {
    /// The constant `μ ∈ {0, 1}` (RGSW rows of a selector bit).
    Bit(bool),
    /// A polynomial (NTT form, at the gadget's level): `τ(s)`, `s'`.
    Poly(&'a B::Poly),
}

/// The key rows `row_j = Enc_s(0) + μ·(Q/Q_j)·e_c` (`e_0 = (1, 0)`, `e_1 = (0, 1)`), with `a`
/// and the error from `seed`, streams `poly_index + j`. `s_ntt`: the secret at the gadget's
/// level, NTT form, one component.
pub fn encrypt_rows<B: RingBackend>(
    be: &B,
    gadget: &RnsGadget,
    s_ntt: &B::Poly,
    message: RowMessage<'_, B>,
    component: usize,
    seed: &Seed,
    poly_index: u32,
) -> Result<GadgetRows<B>> {
    let shape = Shape {
        components: 1,
        level: gadget.level(),
        extended: false,
    };
    let mut rows = Vec::with_capacity(gadget.digits());
    for j in 0..gadget.digits() {
        let idx = poly_index + j as u32;
        let a = be.sample_uniform(seed, Domain::KeySwitchA, idx, shape)?;
        let mut b = be.duplicate(&a)?;
        be.mul_plain_assign(&mut b, s_ntt)?;
        be.neg_assign(&mut b)?;
        let mut e = be.sample_gaussian(seed, Domain::Error, idx, shape)?;
        be.ntt(&mut e)?;
        be.add_assign(&mut b, &e)?;
        let mut row = be.zeros(Shape {
            components: 2,
            ..shape
        })?;
        be.copy_component(&b, 0, &mut row, 0)?;
        be.copy_component(&a, 0, &mut row, 1)?;
        match message {
            RowMessage::Bit(false) => {}
            RowMessage::Bit(true) => be.add_scalar_assign(&mut row, component, gadget.value(j))?,
            RowMessage::Poly(m) => {
                let mut t = be.duplicate(m)?;
                be.mul_scalar_assign(&mut t, gadget.value(j))?;
                be.add_component_assign(&mut row, component, &t)?;
                be.zeroize(&mut t);
            }
        }
        rows.push(row);
    }
    Ok(GadgetRows { rows })
}

/// `acc += Σ_j d_j(x_c) ⊙ row_j` (NTT form): the digits of component `c` of the host
/// polynomial `x` (coefficient form, at the gadget's level) lifted exactly, transformed and
/// multiplied by the rows.
pub fn gadget_product_acc<B: RingBackend>(
    be: &B,
    gadget: &RnsGadget,
    x: &RnsPoly,
    c: usize,
    rows: &GadgetRows<B>,
    acc: &mut B::Poly,
) -> Result<()> {
    let ring = be.ring().clone();
    for (j, row) in rows.rows.iter().enumerate() {
        let d = gadget.digit(&ring, x, c, j);
        let mut dp = be.upload_lifted(&d, gadget.level())?;
        be.ntt(&mut dp)?;
        be.mul_plain_acc(acc, row, &dp)?;
    }
    Ok(())
}

/// A zero 2-component buffer at `level` (the accumulator of gadget products).
pub fn zero_pair<B: RingBackend>(be: &B, level: usize) -> Result<B::Poly> {
    Ok(be.zeros(Shape {
        components: 2,
        level,
        extended: false,
    })?)
}

/// The host copy (coefficient form) of a device accumulator in NTT form.
pub fn to_host_coeff<B: RingBackend>(be: &B, mut acc: B::Poly) -> Result<RnsPoly> {
    be.intt(&mut acc)?;
    Ok(be.download(&acc)?)
}

/// The RNS limbs `0..=level` of centred integers, one component, coefficient form.
pub fn lift_host(
    ring: &RingContext,
    v: &[i128],
    level: usize,
    components: usize,
) -> Result<RnsPoly> {
    let mut p = ring.zeros(Shape {
        components,
        level,
        extended: false,
    })?;
    for s in 0..=level {
        let q = ring.modulus(s).value();
        for (w, &x) in p.limb_mut(0, s).iter_mut().zip(v) {
            *w = residue_i128(q, x);
        }
    }
    Ok(p)
}
