//! Checks and helpers shared by every scheme's parameter validation: the digit partition of
//! hybrid key switching, `P` covering every digit, the 128-bit bound on `log2 QP` (exact near
//! the bound), and the FNV-1a fingerprint.

use fhe_math::security::max_log_qp_128;
use num_bigint::BigUint;
use std::ops::Range;

/// FNV-1a 64-bit offset basis (the start value of [`fnv1a`]).
pub const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a (64-bit) over `bytes`, continuing from `h`. For mismatch detection, not security.
pub fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(PRIME);
    }
    h
}

/// `Σ log2 q` over `primes`.
pub fn log2_product(primes: &[u64]) -> f64 {
    primes.iter().map(|&q| (q as f64).log2()).sum()
}

fn product(primes: &[u64]) -> BigUint {
    primes.iter().fold(BigUint::from(1u8), |acc, &q| acc * q)
}

/// Splits `q_count` ciphertext primes into `dnum` consecutive digits of `⌈q_count/dnum⌉` primes
/// (the last may be shorter); an error message when `dnum` is out of range or does not give
/// exactly `dnum` digits.
pub fn digit_partition(q_count: usize, dnum: usize) -> Result<Vec<Range<usize>>, String> {
    if !(1..=q_count).contains(&dnum) {
        return Err(format!(
            "dnum = {dnum} is outside 1..=levels + 1 ({q_count})"
        ));
    }
    let alpha = q_count.div_ceil(dnum);
    let digits: Vec<Range<usize>> = (0..q_count)
        .step_by(alpha)
        .map(|s| s..(s + alpha).min(q_count))
        .collect();
    if digits.len() != dnum {
        return Err(format!(
            "dnum = {dnum} does not partition {q_count} primes: digits of ceil({q_count}/{dnum}) = {alpha} primes give {} digits",
            digits.len()
        ));
    }
    Ok(digits)
}

/// Checks (exactly) that the special modulus `P` is at least every digit's product.
pub fn check_special_covers_digits(
    moduli_q: &[u64],
    moduli_p: &[u64],
    digits: &[Range<usize>],
) -> Result<(), String> {
    let p = product(moduli_p);
    match digits.iter().find(|d| product(&moduli_q[(*d).clone()]) > p) {
        Some(d) => Err(format!(
            "log2 P = {:.3} is below the largest digit's log2 = {:.3}; add special primes or raise dnum",
            log2_product(moduli_p),
            log2_product(&moduli_q[d.clone()])
        )),
        None => Ok(()),
    }
}

/// `Some((log2 QP, bound))` when `Q·P ≥ 2^bound` for the 128-bit bound at `log_n` (checked
/// exactly on the integer product; also when no bound is known for `log_n`, with bound 0).
pub fn exceeds_security_bound(
    log_n: u32,
    moduli_q: &[u64],
    moduli_p: &[u64],
) -> Option<(f64, f64)> {
    let log2_qp = log2_product(moduli_q) + log2_product(moduli_p);
    let Some(bound) = max_log_qp_128(log_n) else {
        return Some((log2_qp, 0.0));
    };
    let bits = (product(moduli_q) * product(moduli_p)).bits() as f64;
    (bits > bound).then_some((log2_qp, bound))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions() {
        assert_eq!(
            digit_partition(17, 6).unwrap(),
            vec![0..3, 3..6, 6..9, 9..12, 12..15, 15..17]
        );
        assert!(digit_partition(10, 6).is_err());
        assert!(digit_partition(3, 0).is_err());
        assert!(digit_partition(3, 4).is_err());
    }

    #[test]
    fn special_modulus_must_cover_digits() {
        assert!(
            check_special_covers_digits(&[1 << 40, 1 << 40], &[1 << 59], &[0..1, 1..2]).is_ok()
        );
        assert!(
            check_special_covers_digits(
                &[1 << 40, 1 << 40],
                &[1 << 59],
                &[Range { start: 0, end: 2 }]
            )
            .is_err()
        );
    }

    #[test]
    fn bound_is_exact() {
        // 2^13: bound 218 bits. 3 primes just below 2^60 plus one below 2^38: 218 bits -> fits.
        let q = [(1u64 << 60) - 1, (1 << 60) - 1, (1 << 60) - 1];
        assert!(exceeds_security_bound(13, &q, &[(1 << 38) - 1]).is_none());
        assert!(exceeds_security_bound(13, &q, &[(1 << 38) + 1]).is_some());
    }
}
