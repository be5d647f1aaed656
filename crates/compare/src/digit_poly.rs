//! The digit functions as polynomials over `F_t`, interpolated only on the differences two
//! digits can have.
//!
//! For digits `x, y ∈ [0, s)` the difference `z = x - y` lies in `[-(s-1), s-1]`. On that set
//! - `EQ(z) = [z = 0]` is even: `EQ(z) = e(w)` with `w = z²` and `e` of degree `s - 1`
//!   through the `s` points `(z², [z = 0])`, `z = 0..s-1`;
//! - `sign(z)` is odd: `sign(z) = z·h(w)` with `h` of degree `s - 2` through `(z², z^{-1})`,
//!   `z = 1..s-1`;
//! - `LT(z) = [z < 0] = (1 - EQ(z) - sign(z)) / 2`.
//!
//! The squares `z²` are distinct modulo a prime `t > 2(s-1)` (`z² ≡ z'²` forces `z' = ±z`), so
//! the interpolation is well defined; both `e` and `h` are evaluated on `w` by one
//! Paterson–Stockmeyer sharing the baby steps ([`bgv::Evaluator::evaluate_polynomials`]).

use crate::error::{Error, Result};
use bgv::Polynomial;

/// `a^e mod t`.
pub(crate) fn pow_mod(a: u64, mut e: u64, t: u64) -> u64 {
    let (mut acc, mut b) = (1u128, a as u128 % t as u128);
    while e > 0 {
        if e & 1 == 1 {
            acc = acc * b % t as u128;
        }
        b = b * b % t as u128;
        e >>= 1;
    }
    acc as u64
}

/// `a^{-1} mod t` for a prime `t` and `a ≢ 0`.
pub(crate) fn inv_mod(a: u64, t: u64) -> u64 {
    pow_mod(a, t - 2, t)
}

/// The even part `e(w)` of `[z = 0]` and the odd part `h(w)` of `sign(z)` on
/// `z ∈ [-(r-1), r-1]` (module documentation), for a domain radius `r ≥ 2`.
#[derive(Clone, Debug)]
pub struct DigitPolynomials {
    eq: Polynomial,
    sign: Polynomial,
    radius: u64,
}

impl DigitPolynomials {
    /// The polynomials for differences in `[-(r-1), r-1]` modulo the prime `t`
    /// (`2 ≤ r`, `2(r-1) < t`, else [`Error::InvalidArgument`]).
    pub fn new(r: u64, t: u64) -> Result<Self> {
        let op = "interpolate the digit functions";
        if r < 2 || 2 * (r - 1) >= t {
            return Err(Error::InvalidArgument {
                op,
                reason: format!(
                    "differences in [-{0}, {0}] are not distinct mod t = {t}",
                    r - 1
                ),
            });
        }
        let sq = |z: u64| (z as u128 * z as u128 % t as u128) as u64;
        let eq_points: Vec<(u64, u64)> = (0..r).map(|z| (sq(z), u64::from(z == 0))).collect();
        let sign_points: Vec<(u64, u64)> = (1..r).map(|z| (sq(z), inv_mod(z, t))).collect();
        Ok(DigitPolynomials {
            eq: Polynomial::interpolate(&eq_points, t)?,
            sign: Polynomial::interpolate(&sign_points, t)?,
            radius: r,
        })
    }

    /// `e(w)`: `EQ(z) = e(z²)`, degree `r - 1`.
    pub fn eq(&self) -> &Polynomial {
        &self.eq
    }

    /// `h(w)`: `sign(z) = z·h(z²)`, degree `r - 2`.
    pub fn sign(&self) -> &Polynomial {
        &self.sign
    }

    /// The radius `r`: differences lie in `[-(r-1), r-1]`.
    pub fn radius(&self) -> u64 {
        self.radius
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polynomials_match_the_functions_on_the_differences() {
        let t = 65537;
        for r in [2u64, 3, 4, 16, 256] {
            let p = DigitPolynomials::new(r, t).unwrap();
            assert_eq!(p.eq().degree() as u64, r - 1);
            for z in -(r as i64 - 1)..=(r as i64 - 1) {
                let zm = z.rem_euclid(t as i64) as u64;
                let w = (zm as u128 * zm as u128 % t as u128) as u64;
                assert_eq!(p.eq().eval(w), u64::from(z == 0), "r {r} z {z}");
                let sign = (zm as u128 * p.sign().eval(w) as u128 % t as u128) as u64;
                let want = match z.signum() {
                    1 => 1,
                    -1 => t - 1,
                    _ => 0,
                };
                assert_eq!(sign, want, "r {r} z {z}");
            }
        }
        assert!(DigitPolynomials::new(1, t).is_err());
        assert!(DigitPolynomials::new(40000, t).is_err());
    }
}
