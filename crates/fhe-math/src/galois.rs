//! Galois automorphisms `σ_g: a(X) ↦ a(X^g)` of `Z_q[X]/(X^n + 1)`, for odd `g` mod `2n`.
//!
//! Rotations by `k` slots use `g = generator^k mod 2n` (generator 5 for CKKS, 3 for BGV/BFV
//! rows); conjugation (CKKS) or the row swap (BGV/BFV) uses `g = 2n - 1`. In NTT form (the
//! bit-reversed layout of [`crate::NttTable::forward`]) an automorphism is a permutation of the
//! slots, given by [`automorphism_ntt_map`].

use crate::modulus::Modulus;
use crate::ntt::bit_reverse;

/// Galois element of a rotation by `step`: `generator^(step mod n/2) mod 2n`.
///
/// Negative steps wrap around (`step = -1` is a rotation by `n/2 - 1`). `n` is the ring degree
/// (a power of two); `generator` is 5 for CKKS, 3 for BGV/BFV rows.
pub fn galois_element(generator: u64, step: i64, n: usize) -> u64 {
    let two_n = 2 * n as u64;
    let half = (n as i64 / 2).max(1);
    let mut e = step.rem_euclid(half) as u64;
    let mut base = generator % two_n.max(1);
    let mut acc = 1 % two_n.max(1);
    // 2n <= 2^63 would be needed for overflow-free products; degrees are at most 2^17.
    while e > 0 {
        if e & 1 == 1 {
            acc = ((acc as u128 * base as u128) % two_n as u128) as u64;
        }
        base = ((base as u128 * base as u128) % two_n as u128) as u64;
        e >>= 1;
    }
    acc
}

/// Galois element of conjugation (CKKS) or the row swap (BGV/BFV): `2n - 1`, i.e. `X ↦ X^-1`.
pub fn galois_element_conjugate(n: usize) -> u64 {
    (2 * n as u64).saturating_sub(1)
}

/// Applies `σ_g` in coefficient form: `out(X) = input(X^g) mod (X^n + 1, q)`.
///
/// Coefficient `i` goes to index `i·g mod 2n`, negated when that index is `>= n` (then reduced
/// by `n`). `g` must be odd; `input` and `out` must have the same length `n` (a power of two)
/// and hold canonical residues mod `q`.
pub fn automorphism_coeff(input: &[u64], g: u64, q: &Modulus, out: &mut [u64]) {
    let n = input.len();
    debug_assert_eq!(out.len(), n, "automorphism output length must be n");
    debug_assert!(g & 1 == 1, "Galois element must be odd");
    debug_assert!(n.is_power_of_two());
    let two_n_mask = 2 * n - 1;
    let g = (g as usize) & two_n_mask;
    let mut idx = 0usize; // i·g mod 2n
    for &c in input {
        if idx < n {
            out[idx] = c;
        } else {
            out[idx - n] = q.neg(c);
        }
        idx = (idx + g) & two_n_mask;
    }
}

/// Index map of `σ_g` in NTT form: `forward(σ_g(a))[i] = forward(a)[map[i]]` for all `i`.
///
/// Slot `i` holds `a(ψ^(2·brv(i)+1))`, so `map[i] = brv(((g·(2·brv(i)+1) mod 2n) - 1) / 2)`,
/// with `brv` the `log2 n`-bit reversal. `n` must be a power of two and `g` odd.
pub fn automorphism_ntt_map(n: usize, g: u64) -> Vec<u32> {
    debug_assert!(n.is_power_of_two());
    debug_assert!(g & 1 == 1, "Galois element must be odd");
    let log_n = n.trailing_zeros();
    let two_n_mask = 2 * n as u64 - 1;
    let g = g & two_n_mask;
    (0..n)
        .map(|i| {
            let e = (g * (2 * bit_reverse(i, log_n) as u64 + 1)) & two_n_mask;
            bit_reverse(((e - 1) / 2) as usize, log_n) as u32
        })
        .collect()
}

/// Applies `σ_g` in NTT form with a map from [`automorphism_ntt_map`]: `out[i] = input[map[i]]`.
///
/// `input`, `map` and `out` must have the same length `n`.
pub fn automorphism_ntt(input: &[u64], map: &[u32], out: &mut [u64]) {
    debug_assert_eq!(input.len(), map.len(), "automorphism map length must be n");
    debug_assert_eq!(out.len(), map.len(), "automorphism output length must be n");
    for (o, &m) in out.iter_mut().zip(map) {
        *o = input[m as usize];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ntt::NttTable;
    use crate::primes::ntt_primes;
    use proptest::prelude::*;

    use crate::test_util::rand_poly;

    fn modulus(n: usize, bits: u32) -> Modulus {
        Modulus::new(ntt_primes(bits, 2 * n as u64, 1, &[]).unwrap()[0]).unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]

        #[test]
        fn composition(
            seed in any::<u64>(),
            log_n in 1u32..=8,
            gi in any::<u64>(),
            hi in any::<u64>(),
        ) {
            let n = 1usize << log_n;
            let two_n = 2 * n as u64;
            let (g, h) = ((gi % two_n) | 1, (hi % two_n) | 1);
            let q = modulus(n, 40);
            let a = rand_poly(seed, n, q.value());
            let mut ah = vec![0; n];
            let mut agh = vec![0; n];
            automorphism_coeff(&a, h, &q, &mut ah);
            automorphism_coeff(&ah, g, &q, &mut agh);
            let mut direct = vec![0; n];
            automorphism_coeff(&a, (g * h) % two_n, &q, &mut direct);
            prop_assert_eq!(agh, direct);
        }

        #[test]
        fn ntt_map_matches_coeff(
            seed in any::<u64>(),
            log_n in 1u32..=10,
            gi in any::<u64>(),
            bits in prop::sample::select(vec![40u32, 60]),
        ) {
            let n = 1usize << log_n;
            let g = (gi % (2 * n as u64)) | 1;
            let q = modulus(n, bits);
            let t = NttTable::new(q, n).unwrap();
            let a = rand_poly(seed, n, q.value());
            let mut sa = vec![0; n];
            automorphism_coeff(&a, g, &q, &mut sa);
            t.forward(&mut sa);
            let mut fa = a.clone();
            t.forward(&mut fa);
            let map = automorphism_ntt_map(n, g);
            let mut out = vec![0; n];
            automorphism_ntt(&fa, &map, &mut out);
            prop_assert_eq!(out, sa);
        }
    }

    #[test]
    fn galois_elements() {
        for log_n in 2..=12u32 {
            let n = 1usize << log_n;
            let two_n = 2 * n as u64;
            let half = n as i64 / 2;
            // Order of 5 mod 2n is n/2: distinct for 0 <= k < n/2, and 1 at k = n/2.
            let mut seen = std::collections::HashSet::new();
            for k in 0..half {
                assert!(seen.insert(galois_element(5, k, n)));
            }
            assert_eq!(galois_element(5, half, n), 1);
            assert_eq!(galois_element(5, 0, n), 1);
            assert_eq!(galois_element(5, 1, n), 5 % two_n);
            // Negative steps wrap: g(k) * g(-k) = 1 mod 2n.
            for k in [1i64, 3, 7] {
                let p = galois_element(5, k, n) * galois_element(5, -k, n) % two_n;
                assert_eq!(p, 1);
                assert_eq!(
                    galois_element(5, -k, n),
                    galois_element(5, half - k % half, n)
                );
            }
            // Conjugation is an involution, and not a power of 5.
            let c = galois_element_conjugate(n);
            assert_eq!(c * c % two_n, 1);
            assert!(!seen.contains(&c));
            // 3 also generates a subgroup of order n/2 for n >= 4.
            assert_eq!(galois_element(3, half, n), 1);
        }
    }

    #[test]
    fn conjugation_involution_on_polys() {
        let n = 64;
        let q = modulus(n, 60);
        let a = rand_poly(7, n, q.value());
        let c = galois_element_conjugate(n);
        let mut b = vec![0; n];
        let mut back = vec![0; n];
        automorphism_coeff(&a, c, &q, &mut b);
        automorphism_coeff(&b, c, &q, &mut back);
        assert_eq!(back, a);
        let map = automorphism_ntt_map(n, c);
        let map2: Vec<u32> = (0..n).map(|i| map[map[i] as usize]).collect();
        assert_eq!(map2, (0..n as u32).collect::<Vec<_>>());
    }
}
