//! Deterministic inputs for tests, examples and benchmarks (SplitMix64; not for secrets).

/// A SplitMix64 stream.
#[derive(Clone, Debug)]
pub struct SplitMix(u64);

impl SplitMix {
    /// A stream from `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A value in `[0, bound)` (`bound > 0`; negligible bias for small bounds).
    pub fn below(&mut self, bound: u64) -> u64 {
        ((self.next_u64() as u128 * bound as u128) >> 64) as u64
    }
}

/// `count` values in `[0, bound)` from `seed`.
pub fn random_values(seed: u64, count: usize, bound: u64) -> Vec<u64> {
    let mut r = SplitMix::new(seed);
    (0..count).map(|_| r.below(bound)).collect()
}

/// The seed of 32 bytes equal to `b` (fixed seeds make test keys and encryptions
/// reproducible, so two backends can be compared bit for bit).
pub fn seed(b: u8) -> fhe_math::sampler::Seed {
    fhe_math::sampler::Seed([b; 32])
}

/// Secret, public and relinearization keys from the fixed seeds 1 (secret), 2 and 3 (public
/// key), 4 and 5 (relinearization key): the keys every BGV/BFV test and benchmark shares.
pub struct SeededKeys<B: fhe_math::backend::Backend> {
    /// The secret key.
    pub sk: rlwe::SecretKey<B>,
    /// The public key.
    pub pk: rlwe::PublicKey<B>,
    /// The relinearization key.
    pub rlk: rlwe::RelinKey<B>,
}

impl<B: fhe_math::backend::Backend> SeededKeys<B> {
    /// The keys of `kg` (a context's key generator, so BGV's error factor applies).
    pub fn new(kg: &rlwe::KeyGenerator<'_, B>) -> rlwe::Result<Self> {
        let sk = kg.secret_key_from_seed(seed(1))?;
        let pk = kg.public_key_with_seeds(&sk, seed(2), &seed(3))?;
        let rlk = kg.relin_key_with_seeds(&sk, seed(4), &seed(5))?;
        Ok(SeededKeys { sk, pk, rlk })
    }
}
