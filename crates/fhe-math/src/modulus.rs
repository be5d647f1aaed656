//! Arithmetic modulo a word-sized prime `q < 2^61`.
//!
//! All operations take and return canonical residues in `[0, q)`. Products are reduced with
//! Barrett reduction of the full 128-bit product; multiplication by a constant known in advance
//! uses Shoup's method (`w' = floor(w * 2^64 / q)`), which the GPU kernels reproduce exactly.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// Largest supported modulus bit size (primes are below `2^MAX_MODULUS_BITS`).
pub const MAX_MODULUS_BITS: u32 = 61;

/// A modulus `q` with its Barrett constant `floor(2^128 / q)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "u64", into = "u64")]
pub struct Modulus {
    q: u64,
    /// `floor(2^128 / q)` as (high, low) 64-bit words.
    barrett_hi: u64,
    barrett_lo: u64,
}

impl TryFrom<u64> for Modulus {
    type Error = Error;
    fn try_from(q: u64) -> Result<Self> {
        Modulus::new(q)
    }
}

impl From<Modulus> for u64 {
    fn from(m: Modulus) -> u64 {
        m.q
    }
}

impl Modulus {
    /// Builds the modulus `q`, for `2 <= q < 2^61`.
    pub fn new(q: u64) -> Result<Self> {
        if q < 2 || q >> MAX_MODULUS_BITS != 0 {
            return Err(Error::InvalidModulus {
                modulus: q,
                reason: "must satisfy 2 <= q < 2^61",
            });
        }
        // floor(2^128 / q) = floor((2^128 - 1) / q) unless q divides 2^128 (q a power of two).
        let r = u128::MAX / q as u128 + u128::from(q.is_power_of_two());
        Ok(Modulus {
            q,
            barrett_hi: (r >> 64) as u64,
            barrett_lo: r as u64,
        })
    }

    /// The modulus value `q`.
    #[inline]
    pub fn value(&self) -> u64 {
        self.q
    }

    /// Barrett constant `floor(2^128 / q)` as `(high, low)` words (uploaded to the GPU).
    #[inline]
    pub fn barrett_constant(&self) -> (u64, u64) {
        (self.barrett_hi, self.barrett_lo)
    }

    /// Number of bits of `q`.
    pub fn bits(&self) -> u32 {
        64 - self.q.leading_zeros()
    }

    /// `(a + b) mod q` for canonical `a, b`.
    #[inline]
    pub fn add(&self, a: u64, b: u64) -> u64 {
        let s = a + b;
        if s >= self.q { s - self.q } else { s }
    }

    /// `(a - b) mod q` for canonical `a, b`.
    #[inline]
    pub fn sub(&self, a: u64, b: u64) -> u64 {
        if a >= b { a - b } else { a + self.q - b }
    }

    /// `-a mod q` for canonical `a`.
    #[inline]
    pub fn neg(&self, a: u64) -> u64 {
        if a == 0 { 0 } else { self.q - a }
    }

    /// `x mod q` for any 128-bit `x`, by Barrett reduction: `r = x - floor(x * m / 2^128) * q`.
    #[inline]
    pub fn reduce_u128(&self, x: u128) -> u64 {
        let x_lo = x as u64 as u128;
        let x_hi = (x >> 64) as u64 as u128;
        let m_lo = self.barrett_lo as u128;
        let m_hi = self.barrett_hi as u128;
        // floor(x * m / 2^128), dropping the lowest partial product's low word (error <= 2).
        let lo_lo = (x_lo * m_lo) >> 64;
        let mid1 = x_lo * m_hi;
        let mid2 = x_hi * m_lo;
        let mid = lo_lo + (mid1 & u64::MAX as u128) + (mid2 & u64::MAX as u128);
        let quot = x_hi * m_hi + (mid1 >> 64) + (mid2 >> 64) + (mid >> 64);
        let mut r = x.wrapping_sub(quot.wrapping_mul(self.q as u128)) as u64;
        while r >= self.q {
            r -= self.q;
        }
        r
    }

    /// `x mod q` for any 64-bit `x`.
    #[inline]
    pub fn reduce(&self, x: u64) -> u64 {
        self.reduce_u128(x as u128)
    }

    /// `x mod q` for a signed `x`.
    #[inline]
    pub fn reduce_i64(&self, x: i64) -> u64 {
        let r = self.reduce(x.unsigned_abs());
        if x < 0 { self.neg(r) } else { r }
    }

    /// `a * b mod q` for canonical `a, b` (Barrett on the 128-bit product).
    #[inline]
    pub fn mul(&self, a: u64, b: u64) -> u64 {
        self.reduce_u128(a as u128 * b as u128)
    }

    /// Shoup constant of `w`: `floor(w * 2^64 / q)`, for [`Modulus::mul_shoup`].
    #[inline]
    pub fn shoup(&self, w: u64) -> u64 {
        (((w as u128) << 64) / self.q as u128) as u64
    }

    /// `a * w mod q` given `w_shoup = shoup(w)`: `r = a*w - floor(a*w_shoup / 2^64) * q`, then one
    /// conditional subtraction. Exact for any `a < 2^64` and canonical `w`.
    #[inline]
    pub fn mul_shoup(&self, a: u64, w: u64, w_shoup: u64) -> u64 {
        let quot = ((a as u128 * w_shoup as u128) >> 64) as u64;
        let r = a.wrapping_mul(w).wrapping_sub(quot.wrapping_mul(self.q));
        if r >= self.q { r - self.q } else { r }
    }

    /// `a^e mod q` by square-and-multiply.
    pub fn pow(&self, a: u64, mut e: u64) -> u64 {
        let mut base = self.reduce(a);
        let mut acc = 1 % self.q;
        while e > 0 {
            if e & 1 == 1 {
                acc = self.mul(acc, base);
            }
            base = self.mul(base, base);
            e >>= 1;
        }
        acc
    }

    /// `a^-1 mod q`, by the extended Euclidean algorithm (works for any modulus, prime or not).
    pub fn inv(&self, a: u64) -> Result<u64> {
        let a = self.reduce(a);
        let (mut r0, mut r1) = (self.q as i128, a as i128);
        let (mut t0, mut t1) = (0i128, 1i128);
        while r1 != 0 {
            let k = r0 / r1;
            (r0, r1) = (r1, r0 - k * r1);
            (t0, t1) = (t1, t0 - k * t1);
        }
        if r0 != 1 {
            return Err(Error::NotInvertible {
                value: a,
                modulus: self.q,
            });
        }
        Ok(t0.rem_euclid(self.q as i128) as u64)
    }

    /// Centred lift of a residue: the integer in `(-q/2, q/2]` congruent to `a`.
    #[inline]
    pub fn center(&self, a: u64) -> i64 {
        if a > self.q / 2 {
            a as i64 - self.q as i64
        } else {
            a as i64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const Q: u64 = 0x1fff_ffff_ffe0_0001; // 61-bit prime, 1 mod 2^21

    proptest! {
        #[test]
        fn mul_matches_u128(a in 0..Q, b in 0..Q) {
            let m = Modulus::new(Q).unwrap();
            prop_assert_eq!(m.mul(a, b), ((a as u128 * b as u128) % Q as u128) as u64);
        }

        #[test]
        fn reduce_u128_matches(x in any::<u128>(), q in 2u64..(1u64 << 61)) {
            let m = Modulus::new(q).unwrap();
            prop_assert_eq!(m.reduce_u128(x), (x % q as u128) as u64);
        }

        #[test]
        fn shoup_matches(a in any::<u64>(), w in 0..Q) {
            let m = Modulus::new(Q).unwrap();
            prop_assert_eq!(m.mul_shoup(a, w, m.shoup(w)), ((a as u128 * w as u128) % Q as u128) as u64);
        }

        #[test]
        fn inverse_is_inverse(a in 1..Q) {
            let m = Modulus::new(Q).unwrap();
            prop_assert_eq!(m.mul(a, m.inv(a).unwrap()), 1);
        }

        #[test]
        fn add_sub_neg(a in 0..Q, b in 0..Q) {
            let m = Modulus::new(Q).unwrap();
            prop_assert_eq!(m.sub(m.add(a, b), b), a);
            prop_assert_eq!(m.add(a, m.neg(a)), 0);
        }
    }

    #[test]
    fn rejects_bad_moduli() {
        assert!(Modulus::new(0).is_err());
        assert!(Modulus::new(1).is_err());
        assert!(Modulus::new(1 << 61).is_err());
        assert!(Modulus::new(6).unwrap().inv(3).is_err());
    }

    #[test]
    fn pow_fermat() {
        let m = Modulus::new(Q).unwrap();
        assert_eq!(m.pow(12345, Q - 1), 1);
    }
}
