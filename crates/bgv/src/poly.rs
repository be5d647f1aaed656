//! [`Polynomial`]: polynomials over `F_t` on the host, the input of the homomorphic polynomial
//! evaluator ([`crate::poly_eval`]): construction with checked coefficients, evaluation,
//! interpolation from values on points (Newton's divided differences) and the even/odd split.
//!
//! With batching (`t` a prime `≡ 1 mod 2N`) every slot is an element of `F_t`, so any function
//! `F_t -> F_t` is a polynomial of degree below `t`, and a function known only on a small
//! domain `{x_0, …, x_n}` is the unique polynomial of degree `≤ n` through those points; e.g.
//! `EQ(z) = 1 - z^(t-1)` on all of `F_t`, or the indicator of `z = 0` on `z ∈ [-(s-1), s-1]`
//! (degree `2s - 2`).

use crate::error::{Error, Result};

/// `a·b mod t`.
fn mul_mod(a: u64, b: u64, t: u64) -> u64 {
    ((a as u128 * b as u128) % t as u128) as u64
}

/// `a + b mod t` for `a, b < t`.
fn add_mod(a: u64, b: u64, t: u64) -> u64 {
    ((a as u128 + b as u128) % t as u128) as u64
}

/// `a - b mod t` for `a, b < t`.
fn sub_mod(a: u64, b: u64, t: u64) -> u64 {
    add_mod(a, t - b, t)
}

/// The inverse of `a` modulo `t` (extended Euclid), `None` when `gcd(a, t) != 1`.
fn inv_mod(a: u64, t: u64) -> Option<u64> {
    let (mut r0, mut r1) = (t as i128, (a % t) as i128);
    let (mut s0, mut s1) = (0i128, 1i128);
    while r1 != 0 {
        let q = r0 / r1;
        (r0, r1) = (r1, r0 - q * r1);
        (s0, s1) = (s1, s0 - q * s1);
    }
    (r0 == 1).then(|| s0.rem_euclid(t as i128) as u64)
}

/// A polynomial `p(x) = Σ_{i ≤ d} a_i x^i` over `Z_t`: coefficients in `[0, t)`, lowest degree
/// first, trailing zero coefficients removed (the zero polynomial keeps one coefficient `0`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Polynomial {
    coeffs: Vec<u64>,
    t: u64,
}

impl Polynomial {
    /// The polynomial with coefficients `coeffs` (`a_0` first) modulo `t`.
    ///
    /// Errors: no coefficient ([`Error::EmptyPolynomial`]), a coefficient not below `t`
    /// ([`Error::CoefficientOutOfRange`]), `t < 2` ([`Error::InvalidArgument`]).
    pub fn new(coeffs: Vec<u64>, t: u64) -> Result<Self> {
        if t < 2 {
            return Err(Error::InvalidArgument {
                op: "build a polynomial",
                reason: format!("the modulus t = {t} is below 2"),
            });
        }
        if coeffs.is_empty() {
            return Err(Error::EmptyPolynomial);
        }
        if let Some((index, &value)) = coeffs.iter().enumerate().find(|&(_, &c)| c >= t) {
            return Err(Error::CoefficientOutOfRange { index, value, t });
        }
        let mut coeffs = coeffs;
        while coeffs.len() > 1 && coeffs.last() == Some(&0) {
            coeffs.pop();
        }
        Ok(Polynomial { coeffs, t })
    }

    /// The polynomial with signed coefficients, each reduced modulo `t` (`t >= 2`).
    pub fn from_signed(coeffs: &[i64], t: u64) -> Result<Self> {
        let reduced = coeffs
            .iter()
            .map(|&c| (c as i128).rem_euclid(t as i128) as u64)
            .collect();
        Self::new(reduced, t)
    }

    /// The coefficients `a_0..a_d` in `[0, t)`.
    pub fn coeffs(&self) -> &[u64] {
        &self.coeffs
    }

    /// The degree `d` (0 for a constant, the zero polynomial included).
    pub fn degree(&self) -> usize {
        self.coeffs.len() - 1
    }

    /// The modulus `t`.
    pub fn modulus(&self) -> u64 {
        self.t
    }

    /// `p(x) mod t` by Horner's rule.
    pub fn eval(&self, x: u64) -> u64 {
        let t = self.t;
        let x = x % t;
        self.coeffs
            .iter()
            .rev()
            .fold(0, |acc, &a| add_mod(mul_mod(acc, x, t), a, t))
    }

    /// The unique polynomial of degree `< n` through the `n` points `(x_i, y_i)` modulo a prime
    /// `t`, by Newton's divided differences:
    /// `p(x) = Σ_j c_j Π_{i<j} (x - x_i)` with `c_j = [y_0, …, y_j]`, where
    /// `[y_i, …, y_j] = ([y_{i+1}, …, y_j] - [y_i, …, y_{j-1}]) / (x_j - x_i)`; then expanded to
    /// monomials by Horner on the Newton form (`O(n²)` operations mod `t`).
    ///
    /// Errors ([`Error::InvalidArgument`]): no point, a coordinate not below `t`, two equal
    /// `x_i`, or a difference `x_j - x_i` not invertible modulo `t` (`t` not prime).
    pub fn interpolate(points: &[(u64, u64)], t: u64) -> Result<Self> {
        let op = "interpolate a polynomial";
        let bad = |reason: String| Error::InvalidArgument { op, reason };
        if t < 2 {
            return Err(bad(format!("the modulus t = {t} is below 2")));
        }
        if points.is_empty() {
            return Err(bad("no points given".into()));
        }
        if let Some(&(x, y)) = points.iter().find(|&&(x, y)| x >= t || y >= t) {
            return Err(bad(format!(
                "the point ({x}, {y}) is not in [0, t)² for t = {t}"
            )));
        }
        let xs: Vec<u64> = points.iter().map(|p| p.0).collect();
        let mut c: Vec<u64> = points.iter().map(|p| p.1).collect();
        let n = xs.len();
        for j in 1..n {
            for i in (j..n).rev() {
                let dx = sub_mod(xs[i], xs[i - j], t);
                let inv = inv_mod(dx, t).ok_or_else(|| {
                    bad(format!(
                        "x = {} and x = {} differ by {dx}, not invertible modulo {t}",
                        xs[i],
                        xs[i - j]
                    ))
                })?;
                c[i] = mul_mod(sub_mod(c[i], c[i - 1], t), inv, t);
            }
        }
        // Horner on the Newton form: acc = c_j + (x - x_j)·acc, from j = n-1 down.
        let mut acc = vec![c[n - 1]];
        for j in (0..n - 1).rev() {
            // acc·(x - x_j) + c_j
            let mut next = vec![0u64; acc.len() + 1];
            for (i, &a) in acc.iter().enumerate() {
                next[i + 1] = add_mod(next[i + 1], a, t);
                next[i] = sub_mod(next[i], mul_mod(a, xs[j], t), t);
            }
            next[0] = add_mod(next[0], c[j], t);
            acc = next;
        }
        Self::new(acc, t)
    }

    /// The even/odd split `p(x) = e(x²) + x·o(x²)`: returns `(e, o)` (`e` from the even
    /// coefficients, `o` from the odd ones; `o = 0` for a constant `p`).
    pub fn even_odd(&self) -> (Polynomial, Polynomial) {
        let pick = |start: usize| -> Polynomial {
            let c: Vec<u64> = self.coeffs.iter().skip(start).step_by(2).copied().collect();
            let c = if c.is_empty() { vec![0] } else { c };
            Polynomial::new(c, self.t).expect("coefficients of a valid polynomial")
        };
        (pick(0), pick(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_and_evaluates() {
        let p = Polynomial::new(vec![1, 2, 0, 0], 17).unwrap();
        assert_eq!(p.degree(), 1);
        assert_eq!(p.eval(3), 7);
        assert_eq!(Polynomial::new(vec![0, 0], 17).unwrap().degree(), 0);
    }

    #[test]
    fn rejects_bad_input() {
        assert!(matches!(
            Polynomial::new(vec![], 17),
            Err(Error::EmptyPolynomial)
        ));
        assert!(matches!(
            Polynomial::new(vec![1, 17], 17),
            Err(Error::CoefficientOutOfRange { index: 1, .. })
        ));
        let dup = Polynomial::interpolate(&[(1, 2), (1, 3)], 17);
        assert!(matches!(dup, Err(Error::InvalidArgument { .. })));
        assert!(Polynomial::interpolate(&[], 17).is_err());
        assert!(Polynomial::interpolate(&[(17, 0)], 17).is_err());
    }

    #[test]
    fn interpolation_passes_through_points() {
        let t = 65537;
        let pts: Vec<(u64, u64)> = (0..20u64)
            .map(|i| (i * 7 + 3, (i * i * 31 + 5) % t))
            .collect();
        let p = Polynomial::interpolate(&pts, t).unwrap();
        assert!(p.degree() < pts.len());
        for &(x, y) in &pts {
            assert_eq!(p.eval(x), y);
        }
        // A polynomial is recovered from enough of its values.
        let q = Polynomial::new(vec![3, 0, 5, 65536, 9], t).unwrap();
        let pts: Vec<(u64, u64)> = (10..15u64).map(|x| (x, q.eval(x))).collect();
        assert_eq!(Polynomial::interpolate(&pts, t).unwrap(), q);
    }

    #[test]
    fn even_odd_split_recombines() {
        let t = 65537;
        let p = Polynomial::new(vec![1, 2, 3, 4, 5, 6, 7], t).unwrap();
        let (e, o) = p.even_odd();
        assert_eq!(e.coeffs(), &[1, 3, 5, 7]);
        assert_eq!(o.coeffs(), &[2, 4, 6]);
        for x in [0u64, 1, 2, 1000, 65536] {
            let x2 = mul_mod(x, x, t);
            assert_eq!(p.eval(x), add_mod(e.eval(x2), mul_mod(x, o.eval(x2), t), t));
        }
    }
}
