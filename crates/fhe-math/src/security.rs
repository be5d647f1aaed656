//! Security bounds for RLWE parameters.
//!
//! The bound is the largest `log2(QP)` (the full key-switching modulus: ciphertext primes times
//! special primes) for which an RLWE instance with ring degree `N`, a **uniform ternary** secret
//! and error standard deviation 3.19 reaches 128-bit **classical** security.
//!
//! Sources:
//! - `N ≤ 2^15`: the HomomorphicEncryption.org security standard (Albrecht et al.,
//!   "Homomorphic Encryption Security Standard", November 2018), table 1, uniform ternary
//!   secrets, 128-bit classical: 27, 54, 109, 218, 438, 881 bits for `N = 2^10 .. 2^15`.
//! - `N = 2^16, 2^17`: OpenFHE's `HEStd_128_classic` table for ternary secrets
//!   (`src/core/lib/lattice/stdlatticeparms.cpp`): 1772 bits at `2^16`, 3544 bits at `2^17`.
//!   These extrapolate the standard's methodology; the stricter 2024 guidelines (Bossuat et
//!   al.) give slightly lower values and are **not** what is used here.

/// Smallest supported `log2 N`.
pub const MIN_LOG_N: u32 = 10;
/// Largest supported `log2 N`.
pub const MAX_LOG_N: u32 = 17;

/// The largest `log2(QP)` that is 128-bit classically secure at `N = 2^log_n` with a uniform
/// ternary secret, or `None` when `log_n` is outside `10..=17` (no tabulated bound).
///
/// See the [module documentation](self) for the sources of each value.
pub fn max_log_qp_128(log_n: u32) -> Option<f64> {
    let bound = match log_n {
        10 => 27.0,
        11 => 54.0,
        12 => 109.0,
        13 => 218.0,
        14 => 438.0,
        15 => 881.0,
        16 => 1772.0,
        17 => 3544.0,
        _ => return None,
    };
    Some(bound)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_values() {
        assert_eq!(max_log_qp_128(10), Some(27.0));
        assert_eq!(max_log_qp_128(11), Some(54.0));
        assert_eq!(max_log_qp_128(12), Some(109.0));
        assert_eq!(max_log_qp_128(13), Some(218.0));
        assert_eq!(max_log_qp_128(14), Some(438.0));
        assert_eq!(max_log_qp_128(15), Some(881.0));
        assert_eq!(max_log_qp_128(16), Some(1772.0));
        assert_eq!(max_log_qp_128(17), Some(3544.0));
    }

    #[test]
    fn out_of_range_is_none() {
        assert_eq!(max_log_qp_128(0), None);
        assert_eq!(max_log_qp_128(9), None);
        assert_eq!(max_log_qp_128(18), None);
        assert_eq!(max_log_qp_128(u32::MAX), None);
    }

    #[test]
    fn bounds_increase_with_n() {
        let v: Vec<f64> = (MIN_LOG_N..=MAX_LOG_N)
            .map(|k| max_log_qp_128(k).unwrap())
            .collect();
        assert!(v.windows(2).all(|w| w[1] > w[0]));
    }
}
