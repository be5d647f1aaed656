//! Host-side coefficient-form operations of the blind rotation and the packing: negacyclic
//! monomial products, automorphisms, and the lift of centred integers into RNS limbs. They are
//! exact permutations and sign changes, `O(N)` per limb; the NTT-heavy work stays on the
//! backend.

use fhe_math::poly::RnsPoly;
use fhe_math::ring::RingContext;

/// `out_c = X^k · p_c` for every component and active limb (coefficient form), `k ∈ [0, 2N)`:
/// `X^N = −1`.
pub fn mul_monomial(ring: &RingContext, p: &RnsPoly, k: usize) -> RnsPoly {
    move_coefficients(ring, p, |i| i + k)
}

/// `out_c = τ_g(p_c)`, `τ_g: X ↦ X^g` (`g` odd), coefficient form.
pub fn automorphism(ring: &RingContext, p: &RnsPoly, g: usize) -> RnsPoly {
    move_coefficients(ring, p, |i| i * g)
}

/// Moves coefficient `i` of every component and active limb to `X^{to(i)}`, reduced with
/// `X^N = −1` (`to` injective mod `N` up to sign, as for monomials and automorphisms).
fn move_coefficients(ring: &RingContext, p: &RnsPoly, to: impl Fn(usize) -> usize) -> RnsPoly {
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
            let src = b.limb(c, s).to_vec();
            for (x, y) in a.limb_mut(c, s).iter_mut().zip(src) {
                *x = if subtract { q.sub(*x, y) } else { q.add(*x, y) };
            }
        }
    }
}

/// Limb `s` of the integer `v` (`|v| < 2^127`): `v mod q_s` in `[0, q_s)`.
pub fn residue_i128(q: u64, v: i128) -> u64 {
    v.rem_euclid(q as i128) as u64
}
