//! The modular reduction of the way back: `sin(2π z)` for `z ∈ [−K, K]`.
//!
//! With `y = z / K ∈ [−1, 1]`, the Chebyshev interpolant of `cos(2π(K·y − ¼)/2^r)` followed by
//! `r` double-angle steps `c → 2c² − 1` gives `cos(2π(z − ¼)) = sin(2π z)`: for a phase
//! `z = φ/q + integer` with `φ ∈ {0, q/4}` (a bit's encoding) it is exactly `0` or `1` up to
//! the approximation error and the noise (each double angle multiplies an error by at most 4).

use ckks::{Evaluator, Polynomial};
use fhe_math::backend::KeySwitchBackend;
use fhe_math::fft::Complex64;
use rlwe::{Ciphertext, RelinKey};

use super::error::Result;
use super::params::SwitchParameters;

/// The Chebyshev interpolant of `cos(2π(K·y − ¼)/2^r)` on `[−1, 1]`.
pub fn cosine_polynomial(p: &SwitchParameters) -> Result<Polynomial> {
    let k = p.sine_k;
    let r = (1u64 << p.sine_double_angle) as f64;
    let f = move |y: f64| (std::f64::consts::TAU * (k * y - 0.25) / r).cos();
    Ok(Polynomial::interpolate_chebyshev(
        f,
        -1.0,
        1.0,
        p.sine_degree,
    )?)
}

/// The same computation in `f64`: `sin(2π z)` as the homomorphic evaluation approximates it.
pub fn sine_plain(p: &SwitchParameters, poly: &Polynomial, z: f64) -> f64 {
    let mut c = poly.eval(z / p.sine_k);
    for _ in 0..p.sine_double_angle {
        c = 2.0 * c * c - 1.0;
    }
    c
}

/// `sin(2π K y)` slot-wise for a ciphertext of `y` on its ladder scale.
pub fn sine<B: KeySwitchBackend>(
    eval: &Evaluator<B>,
    p: &SwitchParameters,
    poly: &Polynomial,
    y: &Ciphertext<B>,
    rlk: &RelinKey<B>,
) -> Result<Ciphertext<B>> {
    let mut c = eval.evaluate_polynomial(y, poly, rlk)?;
    for _ in 0..p.sine_double_angle {
        let sq = eval.mul_relin_rescale(&c, &c, rlk)?;
        let d = eval.mul_int(&sq, 2)?;
        c = eval.sub_const(&d, Complex64::new(1.0, 0.0))?;
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheme_switch::params::{SWITCH_CLASSIC, SWITCH_TEST_INSECURE};

    /// The plaintext approximation error over the whole interval, for both sets.
    #[test]
    fn sine_approximation_error() {
        for p in [SWITCH_TEST_INSECURE, SWITCH_CLASSIC] {
            let poly = cosine_polynomial(&p).unwrap();
            let steps = 20_000;
            let mut worst = 0f64;
            for i in 0..=steps {
                let z = p.sine_k * (2.0 * i as f64 / steps as f64 - 1.0);
                let want = (std::f64::consts::TAU * z).sin();
                worst = worst.max((sine_plain(&p, &poly, z) - want).abs());
            }
            assert!(worst < 1e-7, "{}: max error {worst:e}", p.name);
        }
    }
}
