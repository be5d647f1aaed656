//! The RNS gadget of the ring keys (no special prime; [`RnsGadget`] lives in `fhe-math` beside
//! the blind-rotation trait) and the gadget product over a backend.
//!
//! Digits are the groups `G_j` of `digit_limbs` consecutive limbs of `Q = Q_BR`, `Q_j = Π_{i∈G_j}
//! q_i`. The digit of `x` is the centred `d_j = [x·(Q/Q_j)^{-1}]_{Q_j}` (its base extension to the
//! other limbs is exact: it is lifted as an integer), and `x ≡ Σ_j d_j·(Q/Q_j) (mod Q)`. A key
//! row `j` encrypting `μ` is an RLWE encryption of zero under `s` plus `μ·(Q/Q_j)` in one
//! component; `Σ_j d_j·row_j` then has phase `x·μ + Σ_j d_j·e_j`.

use crate::error::Result;
use crate::host::residue_i128;
use fhe_math::backend::RingBackend;
pub use fhe_math::backend::rns_blind_rotate::{RnsGadget, gadget_product_acc};
use fhe_math::poly::{RnsPoly, Shape};
use fhe_math::ring::RingContext;
use fhe_math::sampler::{Domain, Seed};

/// A set of key rows, one 2-component RLWE ciphertext (NTT form, at the gadget's level) per
/// digit: row `j` has phase `e_j + μ·(Q/Q_j)·s^c` for the component `c` it decomposes.
pub struct GadgetRows<B: RingBackend> {
    /// The rows.
    pub rows: Vec<B::Poly>,
}

impl<B: RingBackend> GadgetRows<B> {
    /// The rows by reference, in digit order.
    pub fn refs(&self) -> Vec<&B::Poly> {
        self.rows.iter().collect()
    }
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
