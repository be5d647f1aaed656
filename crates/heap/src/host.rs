//! Host-side coefficient-form operations of the blind rotation and the packing: negacyclic
//! monomial products, automorphisms, and the lift of centred integers into RNS limbs. They are
//! exact permutations and sign changes, `O(N)` per limb; the NTT-heavy work stays on the
//! backend.

use fhe_math::backend::rns_blind_rotate::move_coefficients;
pub use fhe_math::backend::rns_blind_rotate::{add_assign, mul_monomial, sub_assign};
use fhe_math::poly::RnsPoly;
use fhe_math::ring::RingContext;

/// `out_c = τ_g(p_c)`, `τ_g: X ↦ X^g` (`g` odd), coefficient form.
pub fn automorphism(ring: &RingContext, p: &RnsPoly, g: usize) -> RnsPoly {
    move_coefficients(ring, p, |i| i * g)
}

/// Limb `s` of the integer `v` (`|v| < 2^127`): `v mod q_s` in `[0, q_s)`.
pub fn residue_i128(q: u64, v: i128) -> u64 {
    v.rem_euclid(q as i128) as u64
}
