//! Deterministic primality testing and the search for NTT-friendly primes (`q ≡ 1 mod 2N`).

use crate::error::{Error, Result};
use crate::modulus::{MAX_MODULUS_BITS, Modulus};

/// Deterministic Miller-Rabin for all 64-bit integers (bases: the first 12 primes).
pub fn is_prime(n: u64) -> bool {
    if n < 2 {
        return false;
    }
    const BASES: [u64; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];
    for &p in &BASES {
        if n.is_multiple_of(p) {
            return n == p;
        }
    }
    let mut d = n - 1;
    let mut s = 0;
    while d.is_multiple_of(2) {
        d /= 2;
        s += 1;
    }
    let mulmod = |a: u64, b: u64| ((a as u128 * b as u128) % n as u128) as u64;
    let powmod = |mut b: u64, mut e: u64| {
        let mut r = 1u64;
        while e > 0 {
            if e & 1 == 1 {
                r = mulmod(r, b);
            }
            b = mulmod(b, b);
            e >>= 1;
        }
        r
    };
    'outer: for &a in &BASES {
        let mut x = powmod(a, d);
        if x == 1 || x == n - 1 {
            continue;
        }
        for _ in 1..s {
            x = mulmod(x, x);
            if x == n - 1 {
                continue 'outer;
            }
        }
        return false;
    }
    true
}

/// The `count` largest primes `q ≡ 1 (mod two_n)` with exactly `bits` bits (`q < 2^bits`),
/// in decreasing order, skipping those in `exclude`.
pub fn ntt_primes(bits: u32, two_n: u64, count: usize, exclude: &[u64]) -> Result<Vec<u64>> {
    let err = Error::NotEnoughPrimes { count, bits, two_n };
    if !(2..=MAX_MODULUS_BITS).contains(&bits)
        || !two_n.is_power_of_two()
        || two_n >= (1u64 << bits)
    {
        return Err(err);
    }
    let mut out = Vec::with_capacity(count);
    let lower = 1u64 << (bits - 1);
    // Largest candidate below 2^bits that is 1 mod two_n.
    let mut c = (1u64 << bits) - two_n + 1;
    while out.len() < count {
        if c < lower {
            return Err(err);
        }
        if is_prime(c) && !exclude.contains(&c) {
            out.push(c);
        }
        c -= two_n;
    }
    Ok(out)
}

/// The prime `q ≡ 1 (mod two_n)` nearest to `target` (ties go below), `q < 2^61`, not in
/// `exclude`. Used for CKKS scaling primes that track the wanted scale.
pub fn ntt_prime_nearest(target: u64, two_n: u64, exclude: &[u64]) -> Result<u64> {
    let err = Error::NotEnoughPrimes {
        count: 1,
        bits: 64 - target.leading_zeros(),
        two_n,
    };
    if !two_n.is_power_of_two() || target >> MAX_MODULUS_BITS != 0 || target < two_n {
        return Err(err);
    }
    let ok = |c: u64| c > 1 && c >> MAX_MODULUS_BITS == 0 && is_prime(c) && !exclude.contains(&c);
    let base = target - (target - 1) % two_n; // largest value <= target that is 1 mod two_n
    let below = (0..1u64 << 20)
        .map_while(|k| base.checked_sub(k * two_n))
        .find(|&c| ok(c));
    let above = (1..1u64 << 20)
        .map_while(|k| base.checked_add(k * two_n))
        .find(|&c| ok(c));
    match (below, above) {
        (Some(b), Some(a)) => Ok(if target - b <= a - target { b } else { a }),
        (Some(b), None) => Ok(b),
        (None, Some(a)) => Ok(a),
        (None, None) => Err(err),
    }
}

/// A generator of the multiplicative group mod prime `q` (smallest one).
pub fn primitive_root(q: &Modulus) -> u64 {
    let qv = q.value();
    let mut factors = Vec::new();
    let mut m = qv - 1;
    let mut p = 2u64;
    while p * p <= m {
        if m.is_multiple_of(p) {
            factors.push(p);
            while m.is_multiple_of(p) {
                m /= p;
            }
        }
        p += 1;
    }
    if m > 1 {
        factors.push(m);
    }
    (2..qv)
        .find(|&g| factors.iter().all(|&f| q.pow(g, (qv - 1) / f) != 1))
        .expect("prime has a generator")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_primes() {
        assert!(is_prime(65537));
        assert!(is_prime(0x1fff_ffff_ffe0_0001));
        assert!(!is_prime(3215031751)); // strong pseudoprime to bases 2,3,5,7
        assert!(!is_prime(1));
    }

    #[test]
    fn ntt_primes_are_ntt_friendly() {
        let ps = ntt_primes(40, 1 << 16, 5, &[]).unwrap();
        assert_eq!(ps.len(), 5);
        for w in ps.windows(2) {
            assert!(w[0] > w[1]);
        }
        for &p in &ps {
            assert!(is_prime(p));
            assert_eq!(p % (1 << 16), 1);
            assert_eq!(64 - p.leading_zeros(), 40);
        }
    }

    #[test]
    fn nearest_prime_is_nearest() {
        let target = 1u64 << 40;
        let two_n = 1 << 14;
        let p = ntt_prime_nearest(target, two_n, &[]).unwrap();
        assert!(is_prime(p) && p % two_n == 1);
        let d = p.abs_diff(target);
        // No NTT-friendly prime strictly nearer.
        let mut c = target - (target - 1) % two_n;
        while c.abs_diff(target) < d || c > target {
            if c.abs_diff(target) < d {
                assert!(!is_prime(c));
            }
            c -= two_n;
            if target - c > d {
                break;
            }
        }
        let mut c = target - (target - 1) % two_n + two_n;
        while c - target < d {
            assert!(!is_prime(c));
            c += two_n;
        }
    }

    #[test]
    fn generator() {
        let q = Modulus::new(65537).unwrap();
        assert_eq!(primitive_root(&q), 3);
    }
}
