//! EvalMod's polynomials, computed on the host: the scaled cosine and the arcsine's cubic
//! correction ([`super`] describes the pipeline).

use super::BootstrapConfig;
use crate::error::Result;
use crate::poly_eval::Polynomial;
use std::f64::consts::TAU;

/// The Chebyshev interpolant on `[−1, 1]` of degree `degree` of
/// `y ↦ cos(2π(K·y − ¼)/2^r)`: after `r` double angles, `cos(2π(x − ¼)) = sin(2πx)` for
/// `x = K·y`.
pub fn scaled_cosine(k: f64, double_angle: usize, degree: usize) -> Result<Polynomial> {
    let div = 2f64.powi(double_angle as i32);
    Polynomial::interpolate_chebyshev(|y| (TAU * (k * y - 0.25) / div).cos(), -1.0, 1.0, degree)
}

/// `σ ↦ (σ + σ³/6)/(2π)`: the first two terms of `arcsin(σ)/(2π)`, so that
/// `x ≈ arcsin(sin 2πx)/(2π)` for small `x`.
pub fn arcsine_cubic() -> Result<Polynomial> {
    Polynomial::power(vec![0.0, 1.0 / TAU, 0.0, 1.0 / (6.0 * TAU)])
}

/// EvalMod on the host for `x` (with `y = x/K`), as the ciphertext computes it (up to
/// rounding): the cosine polynomial, the double angles, the arcsine when configured. The
/// result approximates `sin(2πx)` (`x − round(x)` with the arcsine).
pub fn eval_mod_host(config: &BootstrapConfig, x: f64) -> Result<f64> {
    let p = scaled_cosine(config.k, config.double_angle, config.cos_degree)?;
    let mut c = p.eval(x / config.k);
    for _ in 0..config.double_angle {
        c = 2.0 * c * c - 1.0;
    }
    if config.arcsine {
        c = arcsine_cubic()?.eval(c);
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bootstrap::{BOOT_N12_CONFIG, BOOT_N16_CONFIG};

    /// Near every integer `I` of `[−K+1, K−1]`, EvalMod's host value is `sin(2π(x − I))`
    /// (the reduction) to 2^-35, and with the arcsine it is `x − I` to within the next
    /// arcsine term (`3σ⁵/40/(2π)`, 2^-28.1 at `|x − I| = 2^-7`).
    #[test]
    fn approximation_reduces_modulo_one() {
        for base in [BOOT_N12_CONFIG, BOOT_N16_CONFIG] {
            let cfg = BootstrapConfig {
                arcsine: false,
                ..base
            };
            let mut worst = 0f64;
            let mut worst_arcsine = 0f64;
            let kmax = cfg.k as i64 - 1;
            for i in -kmax..=kmax {
                for j in -64..=64 {
                    let t = j as f64 / 64.0 * 2f64.powi(-7);
                    let x = i as f64 + t;
                    worst = worst.max((eval_mod_host(&cfg, x).unwrap() - (TAU * t).sin()).abs());
                    let a = BootstrapConfig {
                        arcsine: true,
                        ..cfg
                    };
                    worst_arcsine = worst_arcsine.max((eval_mod_host(&a, x).unwrap() - t).abs());
                }
            }
            println!(
                "EvalMod host error (degree {}, {} double angles): {:.1} bits (sine), {:.1} bits \
                 (arcsine)",
                cfg.cos_degree,
                cfg.double_angle,
                -worst.log2(),
                -worst_arcsine.log2()
            );
            assert!(worst < 2f64.powi(-35), "{worst:e}");
            assert!(worst_arcsine < 2f64.powi(-27), "{worst_arcsine:e}");
        }
    }
}
