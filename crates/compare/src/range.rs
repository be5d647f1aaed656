//! Functions of single-slot values in a stated range `[-R, R]` (values computed
//! homomorphically, not split into digits): `sign`, `[x < 0]`, `x < y` and `ReLU`, each one
//! polynomial over the range evaluated through its even and odd parts in `w = x²`
//! (`2R < t`; values outside the range give unspecified results):
//!
//! - `sign(x) = x·h(w)`, `h` of degree `R - 1` ([`crate::digit_poly`]): `2 + ⌈log2(R-1)⌉` levels;
//! - `[x < 0] = e'(w) + x·h'(w)` with `e' = (1 - EQ)/2`, `h' = -h/2` (one Paterson–Stockmeyer):
//!   `max(1 + ⌈log2 R⌉, 2 + ⌈log2(R-1)⌉)` levels;
//! - `ReLU(x) = (x + |x|)/2 = x/2 + g(w)` with `g(z²) = |z|/2` of degree `R`: `1 + ⌈log2 R⌉`
//!   levels.

use crate::digit_poly::{DigitPolynomials, inv_mod};
use crate::error::{Error, Result};
use bgv::poly_eval::ceil_log2;
use bgv::{Ciphertext, Evaluator, Polynomial};
use fhe_math::backend::IntegerBackend;
use rlwe::RelinKey;

/// The polynomials of [`RangeFunctions`] for one bound `R` and plaintext modulus `t`.
#[derive(Clone, Debug)]
pub struct RangeFunctions {
    bound: u64,
    sign: Polynomial,
    lt_even: Polynomial,
    lt_odd: Polynomial,
    relu_even: Polynomial,
    half: u64,
}

/// `k·p` mod `t`.
fn scaled(p: &Polynomial, k: u64) -> Result<Polynomial> {
    let t = p.modulus();
    let c = p
        .coeffs()
        .iter()
        .map(|&a| (a as u128 * k as u128 % t as u128) as u64)
        .collect();
    Ok(Polynomial::new(c, t)?)
}

impl RangeFunctions {
    /// The functions for values in `[-R, R]` modulo the prime `t` (`1 ≤ R`, `2R < t`, else
    /// [`Error::InvalidArgument`]).
    pub fn new(bound: u64, t: u64) -> Result<Self> {
        if bound == 0 || 2 * bound >= t {
            return Err(Error::InvalidArgument {
                op: "build range functions",
                reason: format!("the range [-{bound}, {bound}] needs 1 ≤ R and 2R < t = {t}"),
            });
        }
        let d = DigitPolynomials::new(bound + 1, t)?;
        let half = inv_mod(2, t);
        let one = Polynomial::new(vec![1], t)?;
        // (1 - e)/2 and -h/2.
        let not_eq: Vec<u64> = (0..=d.eq().degree())
            .map(|i| {
                let a = d.eq().coeffs()[i];
                let b = one.coeffs().get(i).copied().unwrap_or(0);
                (b + t - a) % t
            })
            .collect();
        let lt_even = scaled(&Polynomial::new(not_eq, t)?, half)?;
        let lt_odd = scaled(d.sign(), t - half)?;
        let sq = |z: u64| (z as u128 * z as u128 % t as u128) as u64;
        let abs: Vec<(u64, u64)> = (0..=bound).map(|z| (sq(z), z)).collect();
        let relu_even = scaled(&Polynomial::interpolate(&abs, t)?, half)?;
        Ok(RangeFunctions {
            bound,
            sign: d.sign().clone(),
            lt_even,
            lt_odd,
            relu_even,
            half,
        })
    }

    /// The bound `R`.
    pub fn bound(&self) -> u64 {
        self.bound
    }

    /// Levels of [`RangeFunctions::sign`].
    pub fn sign_levels(&self) -> usize {
        2 + ceil_log2(self.sign.degree())
    }

    /// Levels of [`RangeFunctions::lt_zero`] and [`RangeFunctions::lt`].
    pub fn lt_levels(&self) -> usize {
        (1 + ceil_log2(self.lt_even.degree())).max(2 + ceil_log2(self.lt_odd.degree()))
    }

    /// Levels of [`RangeFunctions::relu`].
    pub fn relu_levels(&self) -> usize {
        1 + ceil_log2(self.relu_even.degree())
    }

    /// `sign(x) ∈ {-1, 0, 1}` slot-wise.
    pub fn sign<B: IntegerBackend>(
        &self,
        ev: &Evaluator<B>,
        x: &Ciphertext<B>,
        rlk: &RelinKey<B>,
    ) -> Result<Ciphertext<B>> {
        let w = ev.square_relin(x, rlk)?;
        let h = ev.evaluate_polynomial(&w, &self.sign, rlk)?;
        Ok(ev.mul_relin(x, &h, rlk)?)
    }

    /// `[x < 0]` slot-wise.
    pub fn lt_zero<B: IntegerBackend>(
        &self,
        ev: &Evaluator<B>,
        x: &Ciphertext<B>,
        rlk: &RelinKey<B>,
    ) -> Result<Ciphertext<B>> {
        let w = ev.square_relin(x, rlk)?;
        let polys = [self.lt_even.clone(), self.lt_odd.clone()];
        let mut out = ev.evaluate_polynomials(&w, &polys, rlk)?;
        let odd = out.pop().expect("two outputs");
        let even = out.pop().expect("two outputs");
        Ok(ev.add(&even, &ev.mul_relin(x, &odd, rlk)?)?)
    }

    /// `[x < y]` slot-wise for `x - y ∈ [-R, R]` (`lt_range`).
    #[doc(alias = "lt_range")]
    pub fn lt<B: IntegerBackend>(
        &self,
        ev: &Evaluator<B>,
        x: &Ciphertext<B>,
        y: &Ciphertext<B>,
        rlk: &RelinKey<B>,
    ) -> Result<Ciphertext<B>> {
        self.lt_zero(ev, &ev.sub(x, y)?, rlk)
    }

    /// `max(x, 0)` slot-wise.
    pub fn relu<B: IntegerBackend>(
        &self,
        ev: &Evaluator<B>,
        x: &Ciphertext<B>,
        rlk: &RelinKey<B>,
    ) -> Result<Ciphertext<B>> {
        let w = ev.square_relin(x, rlk)?;
        let g = ev.evaluate_polynomial(&w, &self.relu_even, rlk)?;
        Ok(ev.add(&g, &ev.mul_scalar(x, self.half as i64)?)?)
    }
}
