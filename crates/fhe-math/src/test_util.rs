//! Helpers shared by the unit tests of this crate.

/// `n` reproducible pseudo-random residues mod `q` (SplitMix64 from `seed`).
pub(crate) fn rand_poly(seed: u64, n: usize, q: u64) -> Vec<u64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) % q
        })
        .collect()
}

/// The ring of the backend tests: N = 2^10, q_0 of 60 bits and four 40-bit primes, one special
/// prime, two digits.
pub(crate) fn backend_ring() -> std::sync::Arc<crate::ring::RingContext> {
    use crate::primes::ntt_primes;
    let n = 1 << 10;
    let mut qs = ntt_primes(60, 2 * n as u64, 1, &[]).unwrap();
    qs.extend(ntt_primes(40, 2 * n as u64, 4, &qs).unwrap());
    let ps = ntt_primes(60, 2 * n as u64, 1, &qs).unwrap();
    crate::ring::RingContext::new(n, &qs, &ps, vec![0..3, 3..5]).unwrap()
}
